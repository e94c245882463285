#!/usr/bin/env bash
# A new topic's first record in a continuous copy (issue 43): how long after a record is written
# into a topic created while the copier runs is it readable on the target, with many partitions
# already being copied.
#
# Starts two Apache Kafka KRaft clusters with scripts/kafka.sh, writes RECORDS records of 100 B
# into TOPICS topics of PARTITIONS partitions (examples/load.rs), then per mode in MODES starts the
# copier continuously on every topic named 'e-…' with the same topic refresh (REFRESH seconds:
# kreplicate's --refresh-topics, MirrorMaker 2's refresh.topics.interval.seconds), waits until
# the target holds the existing records, and NEW times: sleeps a seeded random 0..REFRESH s,
# creates a source topic of one partition and writes one record into it (load produce), and
# measures from that write's return until the record is readable on the target (load wait,
# which polls every 100 ms). Modes: at-least-once, exactly-once (kreplicate --create-topics
# --rename MODE.{topic}), MODE+before (the same run by KR_BEFORE, a build of another commit)
# and mm2+tuned (bench/scale.sh's tuned settings, copies named MODE.topic by its alias). Prints one line per new topic and the median and maximum per mode,
# and writes them to OUT. The seed is printed; SEED replays it. A mode that does not copy the
# existing topics within COPY_TIMEOUT seconds gets one failed line and no new topic.
#
# Env: TOPICS [400] PARTITIONS [5] RECORDS [20000] NEW [5] REFRESH [10] SEED
#      MODES ["at-least-once exactly-once mm2+tuned"] COPY_TIMEOUT [600] KR_BEFORE NO_BUILD OUT [bench/results/new-topic.json] KAFKA_HEAP_OPTS [-Xmx2g -Xms2g]
# Exit: 0 every new topic arrived, 1 otherwise, 2 bad usage.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
TOPICS="${TOPICS:-400}" PARTITIONS="${PARTITIONS:-5}" RECORDS="${RECORDS:-20000}"
NEW="${NEW:-5}" REFRESH="${REFRESH:-10}" SEED="${SEED:-$RANDOM}" COPY_TIMEOUT="${COPY_TIMEOUT:-600}"
MODES="${MODES:-at-least-once exactly-once mm2+tuned}"
OUT="${OUT:-$REPO/bench/results/new-topic.json}"
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx2g -Xms2g}"
case "${1:-}" in -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; "") ;; *) echo "bench: no arguments (see --help)" >&2; exit 2 ;; esac
for v in TOPICS PARTITIONS RECORDS NEW REFRESH COPY_TIMEOUT; do [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v must be a positive number" >&2; exit 2; }; done
[[ "$SEED" =~ ^[0-9]+$ ]] || { echo "bench: SEED must be a number" >&2; exit 2; }
for m in $MODES; do case "$m" in at-least-once | exactly-once | mm2+tuned) ;; at-least-once+before | exactly-once+before) [ -x "${KR_BEFORE:-}" ] || { echo "bench: $m needs KR_BEFORE, a kreplicate binary" >&2; exit 2; } ;; *) echo "bench: unknown mode '$m'" >&2; exit 2 ;; esac; done

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: ERROR: %s\n' "$*" >&2; exit 1; }

bash "$REPO/scripts/kafka.sh" libs >/dev/null 2>&1 || bash "$REPO/scripts/install-deps.sh" >&2
[ "${NO_BUILD:-0}" = 1 ] || cargo build --release --bin kreplicate --example load >&2 || die "build failed"
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
KR="$TARGET_DIR/release/kreplicate" LOAD="$TARGET_DIR/release/examples/load"
for b in "$KR" "$LOAD"; do [ -x "$b" ] || die "missing $b (build first)"; done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kreplicate-new-topic.XXXXXX")"
export KREPLICATE_KAFKA_HOME="$WORK/kafka" KREPLICATE_KAFKA_START_TIMEOUT=300
STATUS=1 PID=""
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    [ -z "$PID" ] || { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }
    for n in newt-a newt-b; do bash "$REPO/scripts/kafka.sh" stop "$n" >/dev/null 2>&1 || true; done
    if [ "$STATUS" = 0 ]; then rm -rf "$WORK"; else log "logs kept in $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bootstrap() { bash "$REPO/scripts/kafka.sh" start "$1" 0 --set group.initial.rebalance.delay.ms=3000 | sed -n 's/.*bootstrap=\([^ ]*\).*/\1/p'; }
SRC="$(bootstrap newt-a)" DST="$(bootstrap newt-b)"
[ -n "$SRC" ] && [ -n "$DST" ] || die "a cluster did not start"
log "source A on $SRC, target B on $DST; $RECORDS records into $TOPICS x $PARTITIONS; seed $SEED"
"$LOAD" produce --bootstrap "$SRC" --topic e --topic-count "$TOPICS" --partitions "$PARTITIONS" \
    --records "$RECORDS" --size 100 >/dev/null || die "load failed"
RANDOM="$SEED"

mm2_start() { # DIR ALIAS: MirrorMaker 2 tuned as in bench/scale.sh, copying 'e-…' as ALIAS.e-…
    local dir="$1" a="$2"
    mkdir -p "$dir"
    cat >"$dir/mm2.properties" <<EOF
clusters = $a, B
$a.bootstrap.servers = $SRC
B.bootstrap.servers = $DST
$a->B.enabled = true
B->$a.enabled = false
$a->B.topics = e-.*
tasks.max = 4
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
refresh.topics.interval.seconds = $REFRESH
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
    PID=$!
}

: >"$WORK/rows.tsv"
failed=0 n=0
for mode in $MODES; do
    slug="${mode//+/-}"
    # Each mode's copies have names of their own: NAME.topic ('.' is in no source topic name).
    name="$(tr -d '-' <<<"$slug")"
    case "$mode" in
        mm2+tuned) mm2_start "$WORK/$slug" "$name" ;;
        *)
            kr="$KR"
            [[ "$mode" != *+before ]] || kr="$KR_BEFORE"
            "$kr" --from "$SRC" --to "$DST" --topics '^e-' --create-topics --rename "$name.{topic}" \
                --guarantee "${mode%+before}" --group "newt-$slug" --refresh-topics "${REFRESH}s" --quiet \
                >/dev/null 2>"$WORK/$slug.err" &
            PID=$!
            ;;
    esac
    copied=1
    "$LOAD" wait --bootstrap "$DST" --topic "$name.e" --topic-count "$TOPICS" --records "$RECORDS" \
        --timeout "$COPY_TIMEOUT" >/dev/null 2>&1 || copied=0
    if [ "$copied" = 0 ]; then
        log "$mode did not copy the existing topics in $COPY_TIMEOUT s: no new topic measured"
        printf '%s\t-\t0\t-1\n' "$mode" | tee -a "$WORK/rows.tsv"
        failed=1
    else
        log "$mode: the existing topics are copied"
    fi
    for ((i = 1; copied && i <= NEW; i++)); do
        n=$((n + 1))
        topic="$(printf 'e-new-%03d' "$n")"
        pause=$(awk -v r="$RANDOM" -v s="$REFRESH" 'BEGIN { printf "%.2f", r / 32768 * s }')
        sleep "$pause"
        "$LOAD" produce --bootstrap "$SRC" --topic "$topic" --partitions 1 --records 1 --size 100 \
            >/dev/null || die "could not write into $topic"
        t0=$(date +%s%N)
        rc=0
        "$LOAD" wait --bootstrap "$DST" --topic "$name.$topic" --records 1 --timeout $((REFRESH * 6 + 60)) \
            >/dev/null 2>&1 || rc=$?
        secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
        [ "$rc" = 0 ] || { failed=1; secs=-1; }
        printf '%s\t%s\t%s\t%s\n' "$mode" "$topic" "$pause" "$secs" | tee -a "$WORK/rows.tsv"
    done
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
done
mkdir -p "$(dirname "$OUT")"
python3 - "$WORK/rows.tsv" "$OUT" "topics=$TOPICS partitions=$PARTITIONS records=$RECORDS new=$NEW refresh=${REFRESH}s seed=$SEED; $(date -u +%FT%TZ)" <<'PY'
import json, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
runs = [{"mode": r[0], "topic": r[1], "slept_s": float(r[2]), "first_record_s": float(r[3])} for r in rows]
print("mode\tmedian s\tmax s\tmissed")
summary = []
for mode in dict.fromkeys(r["mode"] for r in runs):
    got = [r["first_record_s"] for r in runs if r["mode"] == mode]
    ok = [s for s in got if s >= 0]
    row = {"mode": mode, "median_s": round(statistics.median(ok), 2) if ok else None,
           "max_s": max(ok) if ok else None, "missed": len(got) - len(ok)}
    summary.append(row)
    print(f"{mode}\t{row['median_s']}\t{row['max_s']}\t{row['missed']}")
json.dump({"settings": sys.argv[3], "runs": runs, "summary": summary}, open(sys.argv[2], "w"), indent=1)
print(f"wrote {sys.argv[2]}")
PY
[ "$failed" = 0 ] || die "a mode did not copy the existing topics, or a new topic did not arrive (see $WORK)"
STATUS=0
