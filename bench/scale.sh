#!/usr/bin/env bash
# Partition-scale benchmark (issue 43): the same bytes over few and many partitions.
#
# Starts two Apache Kafka KRaft clusters with scripts/kafka.sh (source A, target B), and for each
# layout TOPICSxPARTITIONS writes RECORDS records of SIZE bytes into TOPICS topics of PARTITIONS
# partitions each (examples/load.rs --topic-count: record i into topic i mod TOPICS), then copies
# them with each mode in turn, alternating within a round so the ratios hold on a shared machine:
#   ceiling        examples/raw_copy.rs --topic-count: one consumer assigned every partition, one
#                  producer, kreplicate's client defaults and codec, target topics created first
#   none, at-least-once, exactly-once
#                  kreplicate --topics '^BASE-' --create-topics --until-caught-up (a group join)
#   MODE+before    a kreplicate mode run by KR_BEFORE (a build of another commit): a change's
#                  before and after, alternating in one run
#   mm2+tuned      MirrorMaker 2 (bench/run.sh's tuned settings, tasks.max MM2_TASKS [4], copies named
#                  A<round>.topic), stopped once B holds every record
# Every run: wall time (process start until it exits, or for MM2 until B holds every record),
# time to the first record on B (a reader polling the end of the layout's first partition on
# B beside it, topic creation included),
# the copier's CPU (user+sys) and peak RSS, the brokers' CPU. Every copy is read back and compared
# with the source partition by partition (count and digest of key, value, headers, timestamp):
# a broken copy is marked FAILED. bench/scale_report.py prints ratios per round (to the raw copy,
# exactly-once to at-least-once) and writes OUT.
#
# Env: LAYOUTS ["4x10 400x5 4x500"] RECORDS [100000] SIZE [512] ROUNDS [1]
#      MODES ["ceiling at-least-once exactly-once mm2+tuned"] OUT [bench/results/scale.json]
#      NO_BUILD KEEP KR_BEFORE MM2_TASKS MM2_TIMEOUT [900] KAFKA_HEAP_OPTS [-Xmx2g -Xms2g]
#      TARGET_NODES [1]: B's nodes (every topic on B with one replica, spread over them)
# Each broker may hold about as many partitions as its open-file limit (ulimit -n) allows: a
# layout's copies on B are deleted after every run, and 10,000 partitions need TARGET_NODES=3
# here (one node of B ran out of files at 20,000).
# Exit: 0 every copy verified, 1 otherwise, 2 bad usage.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
LAYOUTS="${LAYOUTS:-4x10 400x5 4x500}"
RECORDS="${RECORDS:-100000}"
SIZE="${SIZE:-512}"
ROUNDS="${ROUNDS:-1}"
MODES="${MODES:-ceiling at-least-once exactly-once mm2+tuned}"
OUT="${OUT:-$REPO/bench/results/scale.json}"
MM2_TASKS="${MM2_TASKS:-4}"
TARGET_NODES="${TARGET_NODES:-1}"
# Thousands of partitions on one broker: more heap than the 512 MB of the other benchmarks.
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx2g -Xms2g}"
case "${1:-}" in -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; "") ;; *) echo "bench: no arguments (see --help)" >&2; exit 2 ;; esac
for l in $LAYOUTS; do [[ "$l" =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "bench: LAYOUTS takes TOPICSxPARTITIONS, got '$l'" >&2; exit 2; }; done
for v in RECORDS SIZE ROUNDS MM2_TASKS TARGET_NODES; do [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v must be a positive number" >&2; exit 2; }; done
for m in $MODES; do case "$m" in ceiling | none | at-least-once | exactly-once | mm2+tuned) ;; none+before | at-least-once+before | exactly-once+before) [ -x "${KR_BEFORE:-}" ] || { echo "bench: $m needs KR_BEFORE, a kreplicate binary" >&2; exit 2; } ;; *) echo "bench: unknown mode '$m'" >&2; exit 2 ;; esac; done

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: ERROR: %s\n' "$*" >&2; exit 1; }

bash "$REPO/scripts/kafka.sh" libs >/dev/null 2>&1 || bash "$REPO/scripts/install-deps.sh" >&2
/usr/bin/time -f %M true >/dev/null 2>&1 || die "GNU time is missing (scripts/install-deps.sh installs it)"
[ "${NO_BUILD:-0}" = 1 ] || cargo build --release --bin kreplicate --examples >&2 || die "build failed"
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
KR="$TARGET_DIR/release/kreplicate" LOAD="$TARGET_DIR/release/examples/load" RAW="$TARGET_DIR/release/examples/raw_copy"
for b in "$KR" "$LOAD" "$RAW"; do [ -x "$b" ] || die "missing $b (build first)"; done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kreplicate-scale.XXXXXX")"
export KREPLICATE_KAFKA_HOME="$WORK/kafka" KREPLICATE_KAFKA_START_TIMEOUT=300
STATUS=1 MM2_PID=""
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    [ -z "$MM2_PID" ] || { kill "$MM2_PID" 2>/dev/null || true; wait "$MM2_PID" 2>/dev/null || true; }
    for n in scale-a scale-b; do bash "$REPO/scripts/kafka.sh" stop "$n" >/dev/null 2>&1 || true; done
    if [ "$STATUS" = 0 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$WORK"; else log "logs kept in $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_cluster() { # NAME VAR NODES: the bootstrap into VAR, the brokers' pids (a comma list) into VAR_PID
    local line
    line="$(bash "$REPO/scripts/kafka.sh" start "$1" 0 --nodes "$3" --set group.initial.rebalance.delay.ms=3000 --set file.delete.delay.ms=1000 \
        --set default.replication.factor=1 --set min.insync.replicas=1)" || die "cluster $1 did not start"
    printf -v "$2" '%s' "$(sed -n 's/.*bootstrap=\([^ ]*\).*/\1/p' <<<"$line")"
    printf -v "${2}_PID" '%s' "$(sed -n 's/.*pid=\([0-9,]*\).*/\1/p' <<<"$line")"
}
start_cluster scale-a SRC 1
start_cluster scale-b DST "$TARGET_NODES"
log "source A on $SRC, target B on $DST; work dir $WORK"

CLK_TCK="$(getconf CLK_TCK)"
cpu_seconds() { # PID[,PID...]: their CPU seconds (user+sys), summed
    local p t=0
    for p in ${1//,/ }; do
        t="$(awk -v hz="$CLK_TCK" -v t="$t" '{ sub(/^.*\) /, ""); t += ($12 + $13) / hz } END { printf "%.2f", t }' "/proc/$p/stat" 2>/dev/null || echo "$t")"
    done
    echo "$t"
}
now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

# delete_topics BOOTSTRAP BASE COUNT SUFFIX: deletes the layout's topics and waits until they are gone.
delete_topics() {
    local names deadline
    names="$(for ((i = 0; i < $3; i++)); do if (($3 == 1)); then echo "$2$4"; else printf '%s-%05d%s\n' "$2" "$i" "$4"; fi; done)"
    # shellcheck disable=SC2086
    "$LOAD" delete --bootstrap "$1" $names >/dev/null 2>&1 || true
    deadline=$((SECONDS + 300))
    while "$LOAD" topics --bootstrap "$1" 2>/dev/null | cut -f1 | grep -qxF -f <(echo "$names"); do
        ((SECONDS < deadline)) || die "topics $2-*$4 still on $1 after 300 s"
        sleep 1
    done
    # And until the broker removed their logs: each holds a file open until then, and 10,000
    # deleted beside 10,000 new ran the broker out of open files (ulimit -n 20,000).
    local data
    for data in "$KREPLICATE_KAFKA_HOME"/scale-[ab]/data "$KREPLICATE_KAFKA_HOME"/scale-[ab]/n*/data; do
        [ -d "$data" ] || continue
        while find "$data" -maxdepth 1 -name '*-delete' | grep -q .; do
            ((SECONDS < deadline)) || die "deleted logs still in $data after 300 s"
            sleep 1
        done
    done
}

mm2_start() { # ID BASE ALIAS: MirrorMaker 2 with bench/run.sh's tuned settings, in the background
    local dir="$WORK/$1.mm2" a="$3"
    mkdir -p "$dir"
    # The source's alias names the copies (ALIAS.topic): a round's copies never take the names of
    # the last round's deleted ones (with the same names, MM2's producers met
    # OutOfOrderSequence on the new topics and never finished).
    cat >"$dir/mm2.properties" <<EOF
clusters = $a, B
$a.bootstrap.servers = $SRC
B.bootstrap.servers = $DST
$a->B.enabled = true
B->$a.enabled = false
$a->B.topics = ${2}.*
tasks.max = $MM2_TASKS
plugin.discovery = service_load
B.plugin.discovery = service_load
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
config.storage.replication.factor = 1
B.scheduled.rebalance.max.delay.ms = 0
refresh.topics.interval.seconds = 5
B.producer.batch.size = 1048576
B.producer.linger.ms = 5
B.producer.max.in.flight.requests.per.connection = 5
B.producer.enable.idempotence = true
B.producer.acks = all
B.producer.buffer.memory = 268435456
B.producer.compression.type = zstd
$a.consumer.max.poll.records = 10000
$a.consumer.max.partition.fetch.bytes = 4194304
$a.consumer.fetch.max.bytes = 52428800
emit.checkpoints.enabled = false
emit.heartbeats.enabled = false
sync.topic.acls.enabled = false
EOF
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
    java -Xms256m -Xmx2g -XX:+UseG1GC -Djava.awt.headless=true -Dlog4j2.configurationFile="$dir/log4j2.properties" \
        -cp "$(bash "$REPO/scripts/kafka.sh" libs --mirror)/*" org.apache.kafka.connect.mirror.MirrorMaker "$dir/mm2.properties" \
        >"$dir/stdout.log" 2>&1 </dev/null &
    MM2_PID=$!
}

mm2_clean() { # MirrorMaker 2's internal topics on both sides: the next run resumes nothing
    local c topics
    for c in "$SRC" "$DST"; do
        topics="$("$LOAD" topics --bootstrap "$c" 2>/dev/null | cut -f1 | grep -E '^mm2-|\.internal$|^heartbeats$' || true)"
        # shellcheck disable=SC2086
        [ -z "$topics" ] || "$LOAD" delete --bootstrap "$c" $topics >/dev/null 2>&1 || true
    done
}

ROWS="$WORK/rows.tsv"
: >"$ROWS"
FAILED=0
# run_mode LAYOUT TOPICS PARTITIONS BASE MODE ROUND
run_mode() {
    local layout="$1" t="$2" p="$3" base="$4" mode="$5" round="$6"
    local slug="${mode//+/-}"
    local id="$layout.$slug.r$round" suffix group="" rc=0 t0 t1 tf a0 a1 b0 b1 rss=0 user=0 sys=0 status note=""
    suffix=".$slug.r$round"
    # The copies' names: BASE-00000SUFFIX.., MirrorMaker 2's ALIAS.BASE-00000..
    local copies="$base" alias="A$round"
    [[ "$mode" != mm2* ]] || { suffix="" copies="$alias.$base"; }
    local sel="$base"
    ((t == 1)) || sel="^$base-.*"
    log "$layout ($((t * p)) partitions), round $round: $mode"
    a0="$(cpu_seconds "$SRC_PID")" b0="$(cpu_seconds "$DST_PID")"
    t0="$(now)"
    # The first record on B: a reader beside the copier polling the end of the layout's first
    # partition (every partition's copy starts at once; polling all 2,000 every 100 ms loaded
    # the target broker enough to slow the copy by half, and a query of hundreds failed while
    # any of them had no leader yet).
    local first="$copies$suffix"
    ((t == 1)) || first="$copies-00000$suffix"
    "$LOAD" wait --bootstrap "$DST" --topic "$first" --partition 0 --records 1 --timeout 900 \
        >/dev/null 2>"$WORK/$id.first.err" && now >"$WORK/$id.first" &
    local first_pid=$!
    set +e
    case "$mode" in
        mm2*)
            mm2_start "$id" "$base" "$alias"
            "$LOAD" wait --bootstrap "$DST" --topic "$copies" --topic-count "$t" --records "$RECORDS" --timeout "${MM2_TIMEOUT:-900}" \
                >"$WORK/$id.out" 2>"$WORK/$id.err" || rc=1
            user="$(cpu_seconds "$MM2_PID")"
            rss="$(awk '/^VmHWM:/ { print $2 }' "/proc/$MM2_PID/status" 2>/dev/null || echo 0)"
            kill -0 "$MM2_PID" 2>/dev/null || { rc=1; echo "MirrorMaker exited early" >>"$WORK/$id.err"; }
            kill "$MM2_PID" 2>/dev/null
            wait "$MM2_PID" 2>/dev/null
            MM2_PID=""
            ;;
        ceiling)
            /usr/bin/time -f '%M %U %S' -o "$WORK/$id.time" "$RAW" --from "$SRC" --to "$DST" --topic "$base" --topic-count "$t" \
                --target "{topic}$suffix" -P compression.type=zstd >"$WORK/$id.out" 2>"$WORK/$id.err"
            rc=$?
            ;;
        *)
            group="scale-$slug-r$round-$$"
            local kr="$KR"
            [[ "$mode" != *+before ]] || kr="$KR_BEFORE"
            /usr/bin/time -f '%M %U %S' -o "$WORK/$id.time" "$kr" --from "$SRC" --to "$DST" --topics "$sel" --guarantee "${mode%+before}" \
                --until-caught-up --create-topics --group "$group" --rename "{topic}$suffix" --json >"$WORK/$id.out" 2>"$WORK/$id.err"
            rc=$?
            ;;
    esac
    t1="$(now)"
    set -e
    [ ! -s "$WORK/$id.time" ] || read -r rss user sys < <(tail -n 1 "$WORK/$id.time")
    a1="$(cpu_seconds "$SRC_PID")" b1="$(cpu_seconds "$DST_PID")"
    # A copy that ended put its first record there: the reader's next poll sees it.
    for _ in $(seq 100); do kill -0 "$first_pid" 2>/dev/null || break; sleep 0.1; done
    kill "$first_pid" 2>/dev/null || true
    wait "$first_pid" 2>/dev/null || true
    tf=""
    [ ! -s "$WORK/$id.first" ] || tf="$(secs "$t0" "$(cat "$WORK/$id.first")")"
    if [ "$rc" != 0 ]; then
        status=FAILED note="exit $rc: $(grep -v '^\s*$' "$WORK/$id.err" | tail -n 2 | tr '\n\t' '  ' | cut -c1-300)"
    else
        local vargs=()
        [ "$mode" = ceiling ] || [[ "$mode" == mm2* ]] || vargs=(--ignore-header kreplicate.origin)
        if "$LOAD" count --bootstrap "$DST" --topic "$copies" --topic-count "$t" --suffix "$suffix" "${vargs[@]}" \
            >"$WORK/$id.count.json" 2>"$WORK/$id.count.err"; then
            note="$(python3 - "$WORK/$base.source.json" "$WORK/$id.count.json" <<'EOF'
import json, sys
key = lambda p: (p["topic"], p["partition"])
src = {key(p): p for p in json.load(open(sys.argv[1]))["partitions"]}
dst = {key(p): p for p in json.load(open(sys.argv[2]))["partitions"]}
bad = [f"{k}: {dst.get(k, {}).get('records')}/{s['records']} records" if dst.get(k, {}).get("records") != s["records"]
       else f"{k}: content differs" for k, s in src.items() if dst.get(k) != s]
print("" if not bad else f"{len(bad)} partitions differ: " + ", ".join(bad[:3]))
EOF
)"
        else
            note="count failed: $(tail -c 200 "$WORK/$id.count.err" | tr '\n' ' ')"
        fi
        if [ -z "$note" ]; then status=ok; else status=FAILED; fi
    fi
    [ "$status" = ok ] || FAILED=1
    local brokers
    brokers="$(awk -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" 'BEGIN { printf "%.2f\t%.2f", a1 - a0, b1 - b0 }')"
    log "  $status: $(secs "$t0" "$t1") s wall, first record ${tf:-?} s, CPU $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') s, peak RSS $((rss / 1024)) MiB, brokers A+B CPU ${brokers/$'\t'/+} s${note:+; $note}"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$layout" "$t" "$p" "$mode" "$round" "$(secs "$t0" "$t1")" "$tf" \
        "$rss" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$brokers" "$status" "$note" >>"$ROWS"
    # B keeps only what the next run needs.
    delete_topics "$DST" "$copies" "$t" "$suffix"
    [[ "$mode" != mm2* ]] || mm2_clean
    [ -z "$group" ] || "$LOAD" delete-groups --bootstrap "$SRC" "$group" >/dev/null 2>&1 || true
}

for layout in $LAYOUTS; do
    t="${layout%x*}" p="${layout#*x}" base="s$layout"
    log "$layout: $RECORDS records of $SIZE B into $t topics of $p partitions"
    "$LOAD" produce --bootstrap "$SRC" --topic "$base" --topic-count "$t" --partitions "$p" --records "$RECORDS" --size "$SIZE" >/dev/null \
        || die "loading $layout failed"
    "$LOAD" count --bootstrap "$SRC" --topic "$base" --topic-count "$t" >"$WORK/$base.source.json" || die "counting $layout failed"
    for ((round = 1; round <= ROUNDS; round++)); do
        for mode in $MODES; do run_mode "$layout" "$t" "$p" "$base" "$mode" "$round"; done
    done
    delete_topics "$SRC" "$base" "$t" ""
done

mkdir -p "$(dirname "$OUT")"
python3 "$REPO/bench/scale_report.py" "$ROWS" "$OUT" "records=$RECORDS size=$SIZE rounds=$ROUNDS mm2_tasks=$MM2_TASKS target_nodes=$TARGET_NODES heap=$KAFKA_HEAP_OPTS"
[ "$FAILED" = 0 ] && STATUS=0
exit "$FAILED"
