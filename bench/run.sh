#!/usr/bin/env bash
# kreplicate throughput benchmark beside MirrorMaker 2 (issues 5, 20).
#
# Starts two Apache Kafka KRaft clusters with scripts/kafka.sh (source A, target B; the broker's
# default group.initial.rebalance.delay.ms of 3 s, as users' brokers have), loads a source topic
# per record size and partition count, then measures, alternating within one run (so the ratios
# hold on a shared machine):
#   ceiling        examples/raw_copy.rs: a minimal consume -> produce copy, same librdkafka and
#                  client defaults as kreplicate, no offsets, no verification
#   mm2            MirrorMaker 2 as shipped: dedicated mode (org.apache.kafka.connect.mirror.MirrorMaker),
#                  IdentityReplicationPolicy, tasks.max = partitions, its defaults otherwise
#                  (checkpoints and heartbeats on, Connect's producer and consumer defaults); it
#                  never exits: done when the target's end offsets hold every record, then stopped
#   mm2+tuned      the same with its target producer at 1 MB batches, linger.ms 5, 5 requests in
#                  flight, idempotent, zstd (kreplicate's codec); larger fetches and polls (10,000
#                  records); checkpoints, heartbeats and ACL sync off. The cluster aliases are
#                  fixed (A, B), so B.producer.* and A.consumer.* reach the worker's producer and
#                  the task's consumer; the report prints the properties and the values MM2
#                  logged for its producer and consumer. MM2's internal topics are deleted after
#                  every MM2 run and kreplicate's groups after every kreplicate run, so every MM2
#                  run starts as the first did, on a source that holds no foreign groups
#   none           kreplicate --guarantee none
#   at-least-once  kreplicate --guarantee at-least-once
#   exactly-once   kreplicate --guarantee exactly-once
#   MODE+shard     the same with --shard 1/1: static assignment, no consumer-group join
#   MODE+bare      the same with --no-origin-header: the cost of the origin header (issue 11)
#   MODE+classic   the same with -X group.protocol=classic (the group join Kafka 4 replaced:
#                  without it a run joins with KIP-848's consumer protocol where offered)
#   MODE+before    the same with the binary KR_BEFORE (a build of another commit): a change's
#                  before and after, alternating in one run
# Every run: wall time from process start until the last record is readable on B, records/s,
# MB/s, CPU seconds of the copier's process (utime+stime; the brokers' apart), peak RSS (GNU time
# %M, or VmHWM for MM2). Every copied topic is read back and compared with the source partition by
# partition (count + digest of key, value, headers, timestamp): a broken run is marked FAILED and
# left out of the medians. Prints tables and writes bench/results/latest.json and, from it,
# bench/results/latest.svg (throughput and CPU per GB by mode and tool, bench/chart.py).
#
# --steady (issue 32): the steady state, not the start. Backlogs of MB_PER_RUN [2000] MB (at most
# 3,000,000 records), SIZES "100 1024 10240" x PARTITIONS "8 64", a warm-up round (0) then ROUNDS
# [5]; every copier, MM2 included, is started by one external sampler (examples/sample.rs) that
# reads the target's end offsets and the CPU time of the copier and of both brokers from /proc
# every 200 ms: throughput and CPU per GB over the window between 20 % and 80 % of the records,
# start-up (first record on the target, first commit of the copier's group on the source) apart.
# bench/steady_report.py prints per-round ratios (to the raw copy, to MM2, exactly-once to
# at-least-once), their median and range, and writes the JSON; bench/chart.py its chart.
#
# --live (issue 32): a writer (examples/live.rs) at RATE records/s [48000: 50 MB/s of 1 KiB] for
# LIVE_SECONDS [120] into a fresh source topic while the copier runs continuously (modes
# ceiling (examples/raw_copy.rs --follow), at-least-once, exactly-once+txn100ms, +txn1s, +txn2s (--txn-max-time), mm2, mm2+tuned); a
# read_committed reader of the target takes every record's time from its timestamp to its
# arrival (p50, p99, max); the sampler gives the copier's and brokers' CPU per GB at that rate.
# The writer starts once the copier created the target topic; a warm-up round 0 is left out.
# bench/live_report.py writes
# bench/results/live.json.
#
# Usage: bench/run.sh [--records N] [--sizes "BYTES..."] [--partitions "N..."] [--rounds N]
#                     [--modes "ceiling mm2 mm2+tuned none at-least-once ..."] [--out FILE]
#                     [--no-build] [--keep] [--steady | --live]
# Env (same names): RECORDS SIZES (or SIZE) KEY_SIZE HEADERS PARTITIONS ROUNDS MODES OUT NO_BUILD
#                   KEEP
#   SIZES            value sizes in bytes, e.g. "100 1024 10240" [400]; PARTITIONS e.g. "1 8 64"
#                    [8]: every size x partitions pair gets its own topic and all modes
#   RECORDS          records per pair [MB_PER_RUN MB / value size, at most 2,000,000]
#   MB_PER_RUN       backlog size when RECORDS is not set [200]
#   KR_EXTRA         extra kreplicate arguments for every kreplicate run
#   KR_BEFORE        the kreplicate binary the +before modes run
#   EOS_EXTRA        extra arguments for the exactly-once modes only
#   CEILING_ARGS     extra raw_copy arguments (-C consumer / -P producer properties); raw_copy's
#                    own defaults mirror kreplicate's client defaults in src/kafka/: keep in sync
#   MM2_HEAP         MirrorMaker 2's JVM heap flags [-Xms256m -Xmx2g, as connect-mirror-maker.sh]
#   MM2_PROPS        extra mm2.properties lines for both MM2 modes (e.g. "B.producer.linger.ms=20")
#   BROKER_SET       extra server.properties lines for both clusters (space-separated key=value)
#   KAFKA_HEAP_OPTS  the brokers' heap flags [-Xmx512m -Xms512m]
#   HOLD_MEMORY      1 [default]: on a VM that hands freed memory back to its host (free page
#                    reporting), keep it for the run and touch WARM_MB [MemAvailable - 3 GiB] once
#                    (below, "the VM's memory"); 0: leave the machine as it is
# Exit: 0 all runs verified, 1 otherwise, 2 bad usage.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

STEADY="${STEADY:-0}"
LIVE_MODE="${LIVE_MODE:-0}"
for a in "$@"; do
    [ "$a" != --steady ] || STEADY=1
    [ "$a" != --live ] || LIVE_MODE=1
done
if [ "$LIVE_MODE" = 1 ]; then
    # 50 MB/s of 1 KiB records for two minutes.
    SIZES="${SIZES:-${SIZE:-1024}}" PARTITIONS="${PARTITIONS:-8}" ROUNDS="${ROUNDS:-1}"
    RATE="${RATE:-48000}" LIVE_SECONDS="${LIVE_SECONDS:-120}"
    MODES="${MODES:-ceiling at-least-once exactly-once+txn100ms exactly-once+txn1s exactly-once+txn2s mm2 mm2+tuned}"
    OUT="${OUT:-$REPO/bench/results/live.json}"
fi
if [ "$STEADY" = 1 ]; then
    ROUNDS="${ROUNDS:-5}" SIZES="${SIZES:-${SIZE:-100 1024 10240}}" PARTITIONS="${PARTITIONS:-8 64}"
    MB_PER_RUN="${MB_PER_RUN:-2000}" MAX_RECORDS=3000000
    MODES="${MODES:-ceiling mm2 mm2+tuned at-least-once at-least-once+bare exactly-once}"
    OUT="${OUT:-$REPO/bench/results/steady.json}"
fi
ROUNDS="${ROUNDS:-3}"
SIZES="${SIZES:-${SIZE:-400}}"
KEY_SIZE="${KEY_SIZE:-16}"
HEADERS="${HEADERS:-1}"
PARTITIONS="${PARTITIONS:-8}"
MB_PER_RUN="${MB_PER_RUN:-200}"
MAX_RECORDS="${MAX_RECORDS:-2000000}"
MODES="${MODES:-ceiling mm2 none at-least-once exactly-once none+shard at-least-once+shard}"
OUT="${OUT:-$REPO/bench/results/latest.json}"
NO_BUILD="${NO_BUILD:-0}"
KEEP="${KEEP:-0}"
KR_EXTRA="${KR_EXTRA:-}"
KR_BEFORE="${KR_BEFORE:-}"
EOS_EXTRA="${EOS_EXTRA:-}"
CEILING_ARGS="${CEILING_ARGS:-}"
MM2_HEAP="${MM2_HEAP:--Xms256m -Xmx2g}"
MM2_PROPS="${MM2_PROPS:-}"
BROKER_SET="${BROKER_SET:-}"
RECORDS="${RECORDS:-}"
HOLD_MEMORY="${HOLD_MEMORY:-1}"

while (($#)); do
    case "$1" in
        --records) RECORDS="$2"; shift 2 ;;
        --size | --sizes) SIZES="$2"; shift 2 ;;
        --key-size) KEY_SIZE="$2"; shift 2 ;;
        --headers) HEADERS="$2"; shift 2 ;;
        --partitions) PARTITIONS="$2"; shift 2 ;;
        --rounds) ROUNDS="$2"; shift 2 ;;
        --modes) MODES="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --no-build) NO_BUILD=1; shift ;;
        --keep) KEEP=1; shift ;;
        --steady | --live) shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ "$HOLD_MEMORY" =~ ^[01]$ ]] || { echo "bench: HOLD_MEMORY must be 0 or 1, got '$HOLD_MEMORY'" >&2; exit 2; }
for v in KEY_SIZE HEADERS ROUNDS MB_PER_RUN ${RECORDS:+RECORDS} ${WARM_MB:+WARM_MB}; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "bench: $v must be a number, got '${!v}'" >&2; exit 2; }
done
read -r -a SIZE_LIST <<<"$SIZES"
read -r -a PART_LIST <<<"$PARTITIONS"
read -r -a MODE_LIST <<<"$MODES"
for v in "${SIZE_LIST[@]}" "${PART_LIST[@]}"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "bench: SIZES and PARTITIONS take positive numbers, got '$v'" >&2; exit 2; }
done
((${#SIZE_LIST[@]} && ${#PART_LIST[@]} && ${#MODE_LIST[@]})) || { echo "bench: SIZES, PARTITIONS and MODES must not be empty" >&2; exit 2; }
((ROUNDS >= 1 && KEY_SIZE >= 8)) || { echo "bench: need ROUNDS>=1 KEY_SIZE>=8" >&2; exit 2; }
for m in "${MODE_LIST[@]}"; do
    case "$m" in
        ceiling | mm2 | mm2+tuned) ;;
        none* | at-least-once* | exactly-once*)
            rest="${m#*+}"; [ "$rest" != "$m" ] || rest=""
            for f in ${rest//+/ }; do
                case "$f" in shard | bare | classic | before | txn[0-9]*) ;; *) echo "bench: unknown mode '$m' (suffixes: +shard +bare +classic +before +txnDURATION)" >&2; exit 2 ;; esac
            done
            case "${m%%+*}" in none | at-least-once | exactly-once) ;; *) echo "bench: unknown mode '$m'" >&2; exit 2 ;; esac ;;
        *) echo "bench: unknown mode '$m'" >&2; exit 2 ;;
    esac
done

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: ERROR: %s\n' "$*" >&2; exit 1; }

# --- dependencies ----------------------------------------------------------------------------
if ! LIBS="$(bash "$REPO/scripts/kafka.sh" libs 2>/dev/null)"; then
    log "Kafka jars missing: running scripts/install-deps.sh"
    bash "$REPO/scripts/install-deps.sh" >&2
    LIBS="$(bash "$REPO/scripts/kafka.sh" libs)" || die "no Kafka jars (scripts/install-deps.sh)"
fi
if ! /usr/bin/time -f %M true >/dev/null 2>&1; then
    log "installing Debian package 'time' (GNU time, for peak RSS)"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    if ! { $SUDO apt-get update -qq >&2 &&
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends time >&2; }; then
        die "apt-get install time failed"
    fi
fi
command -v python3 >/dev/null || die "python3 is needed for the report (scripts/install-deps.sh installs it)"
command -v java >/dev/null || die "java is needed for Kafka and MirrorMaker 2 (scripts/install-deps.sh installs it)"

if [ "$NO_BUILD" != 1 ]; then
    log "building (cargo build --release --bin kreplicate --examples)"
    cargo build --release --bin kreplicate --examples >&2 || die "build failed"
fi
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
KR="$TARGET_DIR/release/kreplicate"
LOAD="$TARGET_DIR/release/examples/load"
RAW="$TARGET_DIR/release/examples/raw_copy"
SAMPLE="$TARGET_DIR/release/examples/sample"
LIVE="$TARGET_DIR/release/examples/live"
for b in "$KR" "$LOAD" "$RAW" "$SAMPLE" "$LIVE"; do [ -x "$b" ] || die "missing $b (build first)"; done
[[ " $MODES " != *+before* ]] || [ -x "$KR_BEFORE" ] || die "the +before modes need KR_BEFORE, a kreplicate binary" 2

# --- brokers ---------------------------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kreplicate-bench.XXXXXX")"
export KREPLICATE_KAFKA_HOME="$WORK/kafka"
# A JVM start on a busy machine can take minutes.
export KREPLICATE_KAFKA_START_TIMEOUT="${KREPLICATE_KAFKA_START_TIMEOUT:-300}"
STATUS=1
MM2_PID=""

# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    [ -z "${PAGE_REPORTING_WAS:-}" ] || echo "$PAGE_REPORTING_WAS" >"$PAGE_REPORTING" 2>/dev/null || true
    [ -z "$MM2_PID" ] || { kill "$MM2_PID" 2>/dev/null || true; wait "$MM2_PID" 2>/dev/null || true; }
    for n in bench-a bench-b; do bash "$REPO/scripts/kafka.sh" stop "$n" >/dev/null 2>&1 || true; done
    if [ "$STATUS" = 0 ] && [ "$KEEP" != 1 ]; then
        rm -rf "$WORK"
    else
        log "logs kept in $WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the VM's memory ---------------------------------------------------------------------------
# A VM with free page reporting (virtio-balloon) hands the memory its kernel frees back to the
# host within seconds, and the next write into it faults it in again: 2.4 s of kernel CPU per GB
# on this kind of machine against 0.2-0.4 s (bench/page_reporting.sh measures it with dd). The
# broker that writes (the target's, appending the copy) pays it whenever the pages it takes were
# handed back since, so runs of any tool slowed to half speed from one minute to the next. For
# the run, reporting is turned off (page_reporting_order above the largest order; restored at
# exit) and WARM_MB is touched once, so every run writes into memory the guest already holds, as
# a machine of its own does.
PAGE_REPORTING="/sys/module/page_reporting/parameters/page_reporting_order"
PAGE_REPORTING_WAS=""
MEMORY_NOTE="page reporting: left as it is (HOLD_MEMORY=0)"
if [ "$HOLD_MEMORY" = 1 ]; then
    if [ ! -e "$PAGE_REPORTING" ]; then
        MEMORY_NOTE="page reporting: none on this machine"
    elif ! PAGE_REPORTING_WAS="$(cat "$PAGE_REPORTING")" || ! { echo 11 >"$PAGE_REPORTING"; } 2>/dev/null; then
        PAGE_REPORTING_WAS=""
        MEMORY_NOTE="page reporting: on (could not write $PAGE_REPORTING: not root?); slow runs may be the machine's"
        log "WARNING: $MEMORY_NOTE"
    else
        # Less than 3 GiB available: nothing touched.
        WARM_MB="${WARM_MB:-$(awk '/^MemAvailable:/ { n = int($2 / 1024) - 3072; print (n > 0 ? n : 0) }' /proc/meminfo)}"
        MEMORY_NOTE="page reporting: off for the run (page_reporting_order 11, was $PAGE_REPORTING_WAS); $WARM_MB MB touched first"
        log "$MEMORY_NOTE"
        # tmpfs: pages written and freed without a disk write.
        warm="$(mktemp /dev/shm/kreplicate-bench-warm.XXXXXX)"
        dd if=/dev/zero of="$warm" bs=1M count="$WARM_MB" status=none || log "WARNING: touching $WARM_MB MB failed"
        rm -f "$warm"
    fi
fi

# start_cluster NAME VAR: stores the bootstrap in VAR and the broker's pid in VAR_PID.
start_cluster() {
    local line sets=(--set group.initial.rebalance.delay.ms=3000 --set broker.session.timeout.ms=30000
                     --set file.delete.delay.ms=1000) kv
    for kv in $BROKER_SET; do sets+=(--set "$kv"); done
    line="$(bash "$REPO/scripts/kafka.sh" start "$1" 0 "${sets[@]}")" || die "cluster $1 did not start"
    printf -v "$2" '%s' "$(sed -n 's/.*bootstrap=\([^ ]*\).*/\1/p' <<<"$line")"
    printf -v "${2}_PID" '%s' "$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' <<<"$line")"
}
# The two clusters start together (a JVM start is several seconds on a busy machine).
start_cluster bench-a SRC &
wait_a=$!
start_cluster bench-b DST
wait "$wait_a" || die "cluster bench-a did not start"
start_cluster bench-a SRC # already running: prints its line again
log "source A on $SRC (pid $SRC_PID), target B on $DST (pid $DST_PID); work dir $WORK"

# cpu_seconds PID: user+system CPU time of a live process, in seconds.
CLK_TCK="$(getconf CLK_TCK)"
cpu_seconds() {
    awk -v hz="$CLK_TCK" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# wait_gone TOPIC: until B's metadata no longer lists TOPIC (deletion is asynchronous).
wait_gone() {
    local deadline=$((SECONDS + 60))
    while "$LOAD" topics --bootstrap "$DST" 2>/dev/null | cut -f1 | grep -qxF "$1"; do
        ((SECONDS < deadline)) || die "topic $1 still on B after 60 s"
        sleep 0.5
    done
}

ROWS="$WORK/rows.tsv"
: >"$ROWS"
RUN_NO=0

# verify_copy TOPIC ID [count args...] -> prints "ok" or a reason
verify_copy() {
    local target="$1" id="$2"
    shift 2
    if ! "$LOAD" count --bootstrap "$DST" --topic "$target" --idle-timeout 60 "$@" >"$WORK/$id.count.json" 2>"$WORK/$id.count.err"; then
        echo "count failed: $(tail -c 300 "$WORK/$id.count.err" | tr '\n\t' '  ')"
        return
    fi
    python3 - "$SOURCE_JSON" "$WORK/$id.count.json" <<'EOF'
import json, sys
src = json.load(open(sys.argv[1])); dst = json.load(open(sys.argv[2]))
bad = []
sp = {p["partition"]: p for p in src["partitions"]}
dp = {p["partition"]: p for p in dst["partitions"]}
for p, s in sp.items():
    d = dp.get(p)
    if d is None:
        bad.append(f"p{p} missing")
    elif d["records"] != s["records"]:
        bad.append(f"p{p} {d['records']}/{s['records']} records")
    elif d["digest"] != s["digest"]:
        bad.append(f"p{p} content differs")
print("ok" if not bad else "target differs from source: " + ", ".join(bad[:4]))
EOF
}

# mm2_config ID MODE: writes MirrorMaker 2's properties for MODE (mm2: as shipped; mm2+tuned) and
# its log4j file into $WORK/ID.mm2, and sets MM2_CMD. The aliases are fixed (A, B): `B.producer.*`
# reaches the worker's producer and `A.consumer.*` the task's consumer; each run starts from
# nothing because mm2_clean deletes MM2's internal topics after it.
mm2_config() {
    local id="$1" mode="$2" dir="$WORK/$1.mm2"
    mkdir -p "$dir"
    {
        echo "clusters = A, B"
        echo "A.bootstrap.servers = $SRC"
        echo "B.bootstrap.servers = $DST"
        echo "A->B.enabled = true"
        echo "B->A.enabled = false"
        echo "A->B.topics = ${TOPIC//./\\.}"
        # kreplicate keeps topic names too.
        echo "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
        echo "tasks.max = $P"
        # Its own start-up advice: the default (hybrid_warn) scans the classpath by reflection,
        # about 20 s here, before it copies anything.
        echo "plugin.discovery = service_load"
        echo "B.plugin.discovery = service_load" # the worker's own scan reads the target's settings
        # One-node clusters: every internal topic with one replica.
        echo "replication.factor = 1"
        echo "checkpoints.topic.replication.factor = 1"
        echo "heartbeats.topic.replication.factor = 1"
        echo "offset-syncs.topic.replication.factor = 1"
        echo "offset.storage.replication.factor = 1"
        echo "status.storage.replication.factor = 1"
        echo "config.storage.replication.factor = 1"
        # One worker that starts and stops: no delay for a departed one's tasks.
        echo "B.scheduled.rebalance.max.delay.ms = 0"
        if [ "$mode" = mm2+tuned ]; then
            echo "B.producer.batch.size = 1048576"
            echo "B.producer.linger.ms = 5"
            echo "B.producer.max.in.flight.requests.per.connection = 5"
            echo "B.producer.enable.idempotence = true"
            echo "B.producer.acks = all"
            # One producer per task: 64 MB each, at most 1 GB in all (MM2's heap is 2 GB; 64
            # tasks at 64 MB ran out of it and their tasks died for good).
            echo "B.producer.buffer.memory = $((P > 16 ? 1073741824 / P : 67108864))"
            echo "B.producer.compression.type = zstd"
            echo "A.consumer.max.poll.records = 10000"
            echo "A.consumer.max.partition.fetch.bytes = 4194304"
            echo "A.consumer.fetch.max.bytes = 52428800"
            echo "emit.checkpoints.enabled = false"
            echo "emit.heartbeats.enabled = false"
            echo "sync.topic.acls.enabled = false"
        fi
        printf '%s\n' "$MM2_PROPS"
    } >"$dir/mm2.properties"
    cp "$dir/mm2.properties" "$WORK/mm2-properties.$mode"
    cat >"$dir/log4j2.properties" <<EOF
status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $dir/mm2.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
EOF
    # shellcheck disable=SC2206
    MM2_CMD=(java $MM2_HEAP -XX:+UseG1GC -Djava.awt.headless=true -Dlog4j2.configurationFile="$dir/log4j2.properties"
             -cp "$(bash "$REPO/scripts/kafka.sh" libs --mirror)/*" org.apache.kafka.connect.mirror.MirrorMaker "$dir/mm2.properties")
}

# mm2_effective ID MODE: the settings MM2 logged for the copy's producer and consumer (proof that
# the properties reached them), into $WORK/mm2-effective.MODE.
mm2_effective() {
    python3 - "$WORK/$1.mm2/mm2.log" >"$WORK/mm2-effective.$2" <<'EOF' || true
import re, sys
text = open(sys.argv[1], errors="replace").read()
keys = {"ProducerConfig": ["acks", "batch.size", "linger.ms", "max.in.flight.requests.per.connection",
                           "enable.idempotence", "compression.type", "buffer.memory"],
        "ConsumerConfig": ["max.poll.records", "max.partition.fetch.bytes", "fetch.max.bytes", "fetch.min.bytes"]}
for kind, want in keys.items():
    for block in re.findall(kind + r" values: *\n((?:\t.*\n)+)", text):
        vals = dict(re.findall(r"\t(\S+) = (.*)", block))
        cid = vals.get("client.id", "")
        # The copy's own clients: the source task's producer and its replication consumer.
        if "connector-producer-MirrorSourceConnector" in cid or "replication-consumer" in cid:
            print(kind + " " + cid + ": " + ", ".join(f"{k}={vals.get(k, '?')}" for k in want))
            break
EOF
}

# mm2_clean: deletes MirrorMaker 2's internal topics on both clusters (offsets, configs, status,
# checkpoints, heartbeats, offset syncs), so the next MM2 run resumes nothing.
mm2_clean() {
    local c t topics deadline
    for c in "$SRC" "$DST"; do
        topics="$("$LOAD" topics --bootstrap "$c" 2>/dev/null | cut -f1 | grep -E '^mm2-|\.internal$|^heartbeats$' || true)"
        [ -n "$topics" ] || continue
        # shellcheck disable=SC2086
        "$LOAD" delete --bootstrap "$c" $topics >/dev/null 2>&1 || true
        for t in $topics; do
            deadline=$((SECONDS + 60))
            while "$LOAD" topics --bootstrap "$c" 2>/dev/null | cut -f1 | grep -qxF "$t"; do
                ((SECONDS < deadline)) || die "MM2's topic $t still there after 60 s"
                sleep 0.5
            done
        done
    done
}

# mm2_run ID MODE: MirrorMaker 2 copies $TOPIC from A to B; sets MM2_SECS MM2_RSS_KB MM2_CPU
# MM2_RC. The clock and the CPU stop when B's end offsets hold every record.
mm2_run() {
    local id="$1" dir="$WORK/$1.mm2" t0 t1 rc=0
    mm2_config "$id" "$2"
    t0="$(date +%s%N)"
    "${MM2_CMD[@]}" >"$dir/stdout.log" 2>&1 </dev/null &
    MM2_PID=$!
    "$LOAD" wait --bootstrap "$DST" --topic "$TOPIC" --records "$RECORDS_NOW" --timeout "${MM2_TIMEOUT:-900}" \
        >"$WORK/$id.out" 2>"$WORK/$id.err" || rc=1
    t1="$(date +%s%N)"
    MM2_CPU="$(cpu_seconds "$MM2_PID")"
    MM2_RSS_KB="$(awk '/^VmHWM:/ { print $2 }' "/proc/$MM2_PID/status" 2>/dev/null || echo 0)"
    kill -0 "$MM2_PID" 2>/dev/null || { rc=1; echo "MirrorMaker exited early (see $dir)" >>"$WORK/$id.err"; }
    kill "$MM2_PID" 2>/dev/null || true
    wait "$MM2_PID" 2>/dev/null || true
    MM2_PID=""
    MM2_SECS="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
    MM2_RC=$rc
}

# run_mode MODE ROUND
run_mode() {
    local mode="$1" round="$2" id target group rc t0 t1 secs rss user sys status note cmd
    # MODE is a guarantee with optional suffixes (+shard +bare +classic +before), or ceiling, or
    # mm2, mm2+tuned.
    local guarantee="${mode%%+*}" slug="${mode//+/-}"
    group=""
    RUN_NO=$((RUN_NO + 1))
    id="s$SIZE.p$P.$slug.r$round"
    target="$TOPIC.$slug.r$round"
    log "size $SIZE B, $P partitions, round $round: $mode"
    local a0 a1 b0 b1
    a0="$(cpu_seconds "$SRC_PID")"; b0="$(cpu_seconds "$DST_PID")"
    if [[ "$mode" == mm2* ]] && [ "$STEADY" != 1 ]; then
        target="$TOPIC"
        mm2_run "$id" "$mode"
        rc=$MM2_RC secs=$MM2_SECS rss=$MM2_RSS_KB
        user="$MM2_CPU" sys=0
    else
        if [[ "$mode" == mm2* ]]; then
            target="$TOPIC"
            mm2_config "$id" "$mode"
            cmd=("${MM2_CMD[@]}")
        elif [ "$mode" = ceiling ]; then
            # kreplicate's default codec (src/kafka/, issue 35): the raw copy's librdkafka
            # would otherwise compress nothing.
            cmd=("$RAW" --from "$SRC" --to "$DST" --topic "$TOPIC" --target "$target" -P compression.type=zstd)
            # shellcheck disable=SC2206
            [ -z "$CEILING_ARGS" ] || cmd+=($CEILING_ARGS)
        else
            group="bench-$slug-r$round-$$-$RUN_NO"
            local kr="$KR"
            [[ "$mode" != *+before* ]] || kr="$KR_BEFORE"
            cmd=("$kr" --from "$SRC" --to "$DST" --topics "$TOPIC" --guarantee "$guarantee"
                 --until-caught-up --create-topics --group "$group" --rename "{topic}.$slug.r$round" --json)
            [[ "$mode" != *+shard* ]] || cmd+=(--shard 1/1)
            [[ "$mode" != *+bare* ]] || cmd+=(--no-origin-header)
            [[ "$mode" != *+classic* ]] || cmd+=(-X group.protocol=classic)
            # +txn100ms: --txn-max-time 100ms
            local f
            for f in ${mode//+/ }; do [[ "$f" != txn[0-9]* ]] || cmd+=(--txn-max-time "${f#txn}"); done
            # shellcheck disable=SC2206
            [ -z "$KR_EXTRA" ] || cmd+=($KR_EXTRA)
            # shellcheck disable=SC2206
            [ "$guarantee" != exactly-once ] || [ -z "$EOS_EXTRA" ] || cmd+=($EOS_EXTRA)
        fi
        t0="$(date +%s%N)"
        set +e
        if [ "$STEADY" = 1 ]; then
            # One sampler for every tool: it starts the copier (MM2: and stops it once B holds
            # every record) and watches B's end offsets and the CPU of the copier and brokers.
            local sargs=(--bootstrap "$DST" --topic "$target" --records "$RECORDS_NOW"
                         --bytes-per-record $((SIZE + KEY_SIZE)) --pid "$SRC_PID,$DST_PID"
                         --samples "$WORK/$id.samples.jsonl" --out "$WORK/$id.out" --err "$WORK/$id.err")
            # A MirrorMaker 2 task that failed never recovers: give up as the total mode does.
            [[ "$mode" != mm2* ]] || sargs+=(--stop --timeout "${MM2_TIMEOUT:-900}")
            [ -z "$group" ] || sargs+=(--source "$SRC" --group "$group" --source-topic "$TOPIC")
            "$SAMPLE" "${sargs[@]}" -- "${cmd[@]}" >"$WORK/$id.steady.json" 2>"$WORK/$id.sample.err"
            rc=$?
            [ "$rc" = 0 ] || tail -n 3 "$WORK/$id.sample.err" >>"$WORK/$id.err"
            read -r rss user < <(python3 -c 'import json,sys
try:
    j = json.load(open(sys.argv[1])); print(j["peak_rss_kib"], j["copier_cpu_s"])
except Exception:
    print(0, 0)' "$WORK/$id.steady.json") || true
            sys=0
        else
            /usr/bin/time -f '%M %U %S' -o "$WORK/$id.time" "${cmd[@]}" >"$WORK/$id.out" 2>"$WORK/$id.err"
            rc=$?
            read -r rss user sys < <(tail -n 1 "$WORK/$id.time") || true
        fi
        set -e
        t1="$(date +%s%N)"
        secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
    fi
    [[ "$mode" != mm2* ]] || mm2_effective "$id" "$mode"
    a1="$(cpu_seconds "$SRC_PID")"; b1="$(cpu_seconds "$DST_PID")"
    local brokers_cpu
    brokers_cpu="$(awk -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" 'BEGIN { printf "%.2f\t%.2f", a1 - a0, b1 - b0 }')"
    rss="${rss:-0}"; user="${user:-0}"; sys="${sys:-0}"
    note=""
    if [ "$rc" != 0 ]; then
        status=FAILED
        note="exit $rc: $(grep -v '^\s*$' "$WORK/$id.err" | grep -v 'Command exited' | tail -n 2 | tr '\n\t' '  ' | cut -c1-300)"
    else
        # Every kreplicate copy adds one header per record (kreplicate.origin): compare
        # without it.
        local vargs=()
        [ "$mode" = ceiling ] || [[ "$mode" == mm2* ]] || vargs=(--ignore-header kreplicate.origin)
        note="$(verify_copy "$target" "$id" "${vargs[@]}")"
        if [ "$note" = ok ]; then status=ok; note=""; else status=FAILED; fi
    fi
    # Keep B small: the copy is checked; MM2's next run needs the name free again.
    "$LOAD" delete --bootstrap "$DST" "$target" >/dev/null 2>&1 || true
    if [[ "$mode" == mm2* ]]; then
        wait_gone "$target"
        mm2_clean
    fi
    # The source holds no foreign groups for MM2's checkpoints to serve (issue 32).
    [ -z "$group" ] || "$LOAD" delete-groups --bootstrap "$SRC" "$group" >/dev/null 2>&1 || true
    # The copier's own figure (its --json summary): its whole run, checks included (issue 35).
    local inner=""
    inner="$(python3 -c 'import json,sys
try:
    print(round(float(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["seconds"]), 3))
except Exception:
    print("")' "$WORK/$id.out")"
    log "  $status: ${secs}s wall${inner:+ (${inner}s by its --json)}, peak RSS $((rss / 1024)) MiB, CPU user ${user}s sys ${sys}s, brokers A+B CPU $(tr '\t' '+' <<<"$brokers_cpu")s${note:+; $note}"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$SIZE" "$P" "$RECORDS_NOW" "$mode" "$round" "$secs" "$rss" "$user" "$sys" "$status" "$note" "$inner" "$brokers_cpu" >>"$ROWS"
    [ "$STEADY" != 1 ] || printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$SIZE" "$P" "$RECORDS_NOW" "$mode" "$round" "$status" "$note" "$WORK/$id.steady.json" >>"$WORK/steady.tsv"
}

# --- live: a writer at a set rate, end-to-end latency ---------------------------------------
# live_run MODE ROUND: a fresh source topic; the copier (continuous, started and stopped by the
# sampler once B holds every record), a read_committed reader on B timing every record from its
# timestamp to its arrival, then the writer at RATE records/s. Appends a row to $WORK/live.tsv.
live_run() {
    local mode="$1" round="$2" guarantee="${1%%+*}" slug="${1//+/-}" id cmd status=ok note="" f
    RUN_NO=$((RUN_NO + 1))
    TOPIC="live.$slug.r$round.$$"
    id="live.$slug.r$round"
    group=""
    log "live: $LIVE_RECORDS records at $RATE records/s, $P partitions, round $round: $mode"
    "$LOAD" produce --bootstrap "$SRC" --topic "$TOPIC" --partitions "$P" --records 0 >/dev/null || die "cannot create $TOPIC"
    if [[ "$mode" == mm2* ]]; then
        mm2_config "$id" "$mode"
        cmd=("${MM2_CMD[@]}")
    elif [ "$mode" = ceiling ]; then
        # The raw copy, following (issue 43): the latency the machine and librdkafka allow.
        cmd=("$RAW" --from "$SRC" --to "$DST" --topic "$TOPIC" --target "$TOPIC" --follow -P compression.type=zstd)
    else
        group="bench-live-$slug-r$round-$$"
        cmd=("$KR" --from "$SRC" --to "$DST" --topics "$TOPIC" --guarantee "$guarantee" --create-topics
             --group "$group" --json)
        for f in ${mode//+/ }; do [[ "$f" != txn[0-9]* ]] || cmd+=(--txn-max-time "${f#txn}"); done
        # shellcheck disable=SC2206
        [ -z "$KR_EXTRA" ] || cmd+=($KR_EXTRA)
    fi
    "$SAMPLE" --bootstrap "$DST" --topic "$TOPIC" --records "$LIVE_RECORDS" --bytes-per-record $((SIZE + 16)) \
        --pid "$SRC_PID,$DST_PID" --stop-file "$WORK/$id.stop" --samples "$WORK/$id.samples.jsonl" --out "$WORK/$id.out" \
        --err "$WORK/$id.err" -- "${cmd[@]}" >"$WORK/$id.steady.json" 2>"$WORK/$id.sample.err" &
    local sampler=$!
    "$LIVE" latency --bootstrap "$DST" --topic "$TOPIC" --records "$LIVE_RECORDS" >"$WORK/$id.latency.json" \
        2>"$WORK/$id.latency.err" &
    local reader=$!
    # The copier's start is not what this measures: the writer begins once the copier created
    # the target topic (kreplicate after its start checks, MM2 once its task runs), and
    # LIVE_SETTLE seconds more.
    local deadline=$((SECONDS + 600))
    until "$LOAD" topics --bootstrap "$DST" 2>/dev/null | cut -f1 | grep -qxF "$TOPIC"; do
        ((SECONDS < deadline)) || { status=FAILED; note="no target topic after 600 s"; break; }
        sleep 0.5
    done
    sleep "${LIVE_SETTLE:-2}"
    "$LIVE" write --bootstrap "$SRC" --topic "$TOPIC" --partitions "$P" --records "$LIVE_RECORDS" --rate "$RATE" \
        --size "$SIZE" >"$WORK/$id.write.json" 2>"$WORK/$id.write.err" || { status=FAILED; note="writer failed"; }
    wait "$reader" || { status=FAILED; note="${note:+$note; }latency reader failed: $(tail -c 200 "$WORK/$id.latency.err")"; }
    # The reader saw every record: the copier may stop (B's end offsets would also count an
    # exactly-once copy's commit markers).
    touch "$WORK/$id.stop"
    wait "$sampler" || { status=FAILED; note="${note:+$note; }sampler: $(tail -c 200 "$WORK/$id.sample.err")"; }
    [[ "$mode" != mm2* ]] || mm2_effective "$id" "$mode"
    log "  $status: $(cat "$WORK/$id.latency.json" 2>/dev/null)${note:+; $note}"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$round" "$status" "$note" "$WORK/$id.steady.json" \
        "$WORK/$id.latency.json" "$WORK/$id.write.json" >>"$WORK/live.tsv"
    "$LOAD" delete --bootstrap "$DST" "$TOPIC" >/dev/null 2>&1 || true
    "$LOAD" delete --bootstrap "$SRC" "$TOPIC" >/dev/null 2>&1 || true
    if [[ "$mode" == mm2* ]]; then wait_gone "$TOPIC"; mm2_clean; fi
    [ -z "$group" ] || "$LOAD" delete-groups --bootstrap "$SRC" "$group" >/dev/null 2>&1 || true
}

if [ "$LIVE_MODE" = 1 ]; then
    SIZE="${SIZE_LIST[0]}" P="${PART_LIST[0]}"
    LIVE_RECORDS=$((RATE * LIVE_SECONDS))
    : >"$WORK/live.tsv"
    # Round 0 warms up and is left out (the JIT; the first at-least-once start on fresh brokers
    # spent 27 s in its start checks in two smoke runs, not yet explained).
    for ((round = 0; round <= ROUNDS; round++)); do
        if ((round % 2)); then order=("${MODE_LIST[@]}"); else
            order=(); for ((i = ${#MODE_LIST[@]} - 1; i >= 0; i--)); do order+=("${MODE_LIST[$i]}"); done
        fi
        for mode in "${order[@]}"; do live_run "$mode" "$round"; done
    done
    set +e
    mkdir -p "$(dirname "$OUT")"
    BENCH_RATE="$RATE" BENCH_SIZE="$SIZE" BENCH_PARTITIONS="$P" BENCH_MM2_DIR="$WORK" \
        BENCH_MEMORY="$MEMORY_NOTE" python3 "$REPO/bench/live_report.py" "$WORK/live.tsv" "$OUT"
    STATUS=$?
    set -e
    exit "$STATUS"
fi

# --- per size and partition count: load, then the modes in alternating rounds ------------------
for SIZE in "${SIZE_LIST[@]}"; do
    if [ -n "$RECORDS" ]; then RECORDS_NOW="$RECORDS"; else
        RECORDS_NOW=$((MB_PER_RUN * 1000000 / (SIZE + KEY_SIZE)))
        ((RECORDS_NOW <= MAX_RECORDS)) || RECORDS_NOW=$MAX_RECORDS
    fi
    for P in "${PART_LIST[@]}"; do
        TOPIC="bench.s$SIZE.p$P"
        log "loading $RECORDS_NOW records x ${SIZE} B values (keys ${KEY_SIZE} B, $HEADERS header(s)) over $P partitions"
        "$LOAD" produce --bootstrap "$SRC" --topic "$TOPIC" --partitions "$P" \
            --records "$RECORDS_NOW" --size "$SIZE" --key-size "$KEY_SIZE" --headers "$HEADERS" >"$WORK/load.$TOPIC.json" \
            || die "load failed"
        SOURCE_JSON="$WORK/source.$TOPIC.json"
        "$LOAD" count --bootstrap "$SRC" --topic "$TOPIC" >"$SOURCE_JSON" || die "counting the source failed"
        python3 - "$SOURCE_JSON" "$RECORDS_NOW" <<'EOF' || die "source topic does not hold the loaded records"
import json, sys
got = json.load(open(sys.argv[1]))["records"]
if got != int(sys.argv[2]):
    sys.exit(f"source holds {got} records, expected {sys.argv[2]}")
EOF
        # --steady: round 0 warms up (the JIT of brokers and MM2, the page cache) and is left out.
        first_round=1
        [ "$STEADY" != 1 ] || first_round=0
        for ((round = first_round; round <= ROUNDS; round++)); do
            # Alternate the order (A B C, C B A, ...) so a slow drift of the machine cancels out.
            if ((round % 2)); then order=("${MODE_LIST[@]}"); else
                order=(); for ((i = ${#MODE_LIST[@]} - 1; i >= 0; i--)); do order+=("${MODE_LIST[$i]}"); done
            fi
            for mode in "${order[@]}"; do run_mode "$mode" "$round"; done
        done
        "$LOAD" delete --bootstrap "$SRC" "$TOPIC" >/dev/null 2>&1 || true
    done
done

# --- report ----------------------------------------------------------------------------------
LIBRDKAFKA="$("$KR" --version 2>/dev/null | sed -n 's/.*librdkafka \([^)]*\)).*/\1/p' | head -n 1)"
KAFKA_VERSION="$(basename "$(dirname "$LIBS")")"
JAVA_VERSION="$(java -version 2>&1 | head -n 1)"
mkdir -p "$(dirname "$OUT")"
set +e
BENCH_MODES="$MODES" BENCH_KEY_SIZE="$KEY_SIZE" BENCH_HEADERS="$HEADERS" BENCH_ROUNDS="$ROUNDS" \
BENCH_LIBRDKAFKA="$LIBRDKAFKA" BENCH_KAFKA="$KAFKA_VERSION" BENCH_JAVA="$JAVA_VERSION" \
BENCH_MM2_HEAP="$MM2_HEAP" BENCH_MM2_PROPS="$MM2_PROPS" BENCH_CEILING_ARGS="$CEILING_ARGS" \
BENCH_KR_EXTRA="$KR_EXTRA" BENCH_EOS_EXTRA="$EOS_EXTRA" BENCH_MM2_DIR="$WORK" BENCH_MEMORY="$MEMORY_NOTE" \
    python3 "$REPO/bench/report.py" "$ROWS" "${OUT%.json}.runs.json"
STATUS=$?
if [ "$STEADY" = 1 ]; then
    # Steady state: the sampler's windows, per-round ratios (the totals above include start-up).
    BENCH_KEY_SIZE="$KEY_SIZE" BENCH_ROUNDS="$ROUNDS" BENCH_MODES="$MODES" BENCH_MM2_DIR="$WORK" \
    BENCH_MEMORY="$MEMORY_NOTE" BENCH_LIBRDKAFKA="$LIBRDKAFKA" BENCH_KAFKA="$KAFKA_VERSION" BENCH_JAVA="$JAVA_VERSION" \
        python3 "$REPO/bench/steady_report.py" "$WORK/steady.tsv" "$OUT" || STATUS=1
    [ ! -f "$OUT" ] || python3 "$REPO/bench/chart.py" "$OUT" "${OUT%.json}.svg" || STATUS=1
else
    mv "${OUT%.json}.runs.json" "$OUT"
    if [ "$STATUS" = 0 ] || [ -f "$OUT" ]; then
        python3 "$REPO/bench/chart.py" "$OUT" "${OUT%.json}.svg" || STATUS=1
    fi
fi
set -e
exit "$STATUS"
