#!/usr/bin/env bash
# Cut-over accuracy beside MirrorMaker 2 (issue 20).
#
# Starts two Apache Kafka KRaft clusters (scripts/kafka.sh; source A, target B), loads RECORDS
# records over PARTITIONS partitions on A (each key holds the record's unique id), then runs both
# replicators side by side, continuously, A -> B:
#   MirrorMaker 2  dedicated mode, IdentityReplicationPolicy (topic `cut` on B), checkpoints and
#                  sync.group.offsets.enabled, every INTERVAL seconds (emit.checkpoints,
#                  sync.group.offsets and refresh.groups intervals)
#   kreplicate     at-least-once into `cut.kr` on B, --sync-groups '^app-' every INTERVAL
# Once both copies hold the backlog, it commits NGROUPS consumer groups app-000.. on A at seeded
# pseudo-random positions (one in ten at 0, one in ten at the end; the seed is printed), then
# watches B until every group's positions on `cut` and `cut.kr` are set and steady: the time
# from the commit on A to each translated position on B. Both copiers are stopped; then, per
# group-partition and tool, the records a consumer started at the translated position on B would
# re-read (ids before the group's source position) and miss (ids from the source position on that
# it never sees) are counted by content: the ids in the keys, read from A and from B. Finally
# `kreplicate groups --dry-run --json` (the one-shot translation) is checked against what
# --sync-groups committed. Prints a table and writes bench/results/cutover.json.
#
# Env: RECORDS [200000] SIZE [100] PARTITIONS [8] NGROUPS [100] SEED [20] INTERVAL [5] (seconds;
#      MM2's defaults are 60 and 600 for group discovery, kreplicate's 30)
#      MM2_HEAP [-Xms256m -Xmx2g] NO_BUILD KEEP
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
RECORDS="${RECORDS:-200000}"
SIZE="${SIZE:-100}"
PARTITIONS="${PARTITIONS:-8}"
NGROUPS="${NGROUPS:-100}"
SEED="${SEED:-20}"
INTERVAL="${INTERVAL:-5}"
MM2_HEAP="${MM2_HEAP:--Xms256m -Xmx2g}"
OUT="${OUT:-$REPO/bench/results/cutover.json}"
for v in RECORDS SIZE PARTITIONS NGROUPS SEED INTERVAL; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "cutover: $v must be a positive number, got '${!v}'" >&2; exit 2; }
done
((RECORDS % PARTITIONS == 0)) || { echo "cutover: RECORDS must be a multiple of PARTITIONS" >&2; exit 2; }
log() { printf 'cutover: %s\n' "$*" >&2; }
die() { printf 'cutover: ERROR: %s\n' "$*" >&2; exit 1; }

LIBS="$(bash "$REPO/scripts/kafka.sh" libs 2>/dev/null)" || {
    bash "$REPO/scripts/install-deps.sh" >&2
    LIBS="$(bash "$REPO/scripts/kafka.sh" libs)" || die "no Kafka jars"
}
[ "${NO_BUILD:-0}" = 1 ] || cargo build --release --bin kreplicate --examples >&2 || die "build failed"
KR="${CARGO_TARGET_DIR:-$REPO/target}/release/kreplicate"
LOAD="${CARGO_TARGET_DIR:-$REPO/target}/release/examples/load"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kreplicate-cutover.XXXXXX")"
export KREPLICATE_KAFKA_HOME="$WORK/kafka"
# A JVM start on a busy machine can take minutes.
export KREPLICATE_KAFKA_START_TIMEOUT="${KREPLICATE_KAFKA_START_TIMEOUT:-300}"
PIDS=()
STATUS=1
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    for n in cut-a cut-b; do bash "$REPO/scripts/kafka.sh" stop "$n" >/dev/null 2>&1 || true; done
    if [ "$STATUS" = 0 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$WORK"; else log "logs kept in $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_cluster() {
    bash "$REPO/scripts/kafka.sh" start "$1" 0 --set broker.session.timeout.ms=30000 \
        | sed -n 's/.*bootstrap=\([^ ]*\).*/\1/p'
}
A="$(start_cluster cut-a)"; [ -n "$A" ] || die "cluster A did not start"
B="$(start_cluster cut-b)"; [ -n "$B" ] || die "cluster B did not start"
log "A on $A, B on $B; work dir $WORK"
PER=$((RECORDS / PARTITIONS))

log "loading $RECORDS records x $SIZE B over $PARTITIONS partitions on A"
"$LOAD" produce --bootstrap "$A" --topic cut --partitions "$PARTITIONS" --records "$RECORDS" \
    --size "$SIZE" >/dev/null || die "load failed"

cat >"$WORK/mm2.properties" <<EOF
clusters = A, B
A.bootstrap.servers = $A
B.bootstrap.servers = $B
A->B.enabled = true
B->A.enabled = false
A->B.topics = cut
A->B.groups = app-.*
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
tasks.max = $PARTITIONS
emit.heartbeats.enabled = false
emit.checkpoints.enabled = true
sync.group.offsets.enabled = true
emit.checkpoints.interval.seconds = $INTERVAL
sync.group.offsets.interval.seconds = $INTERVAL
refresh.groups.interval.seconds = $INTERVAL
sync.topic.acls.enabled = false
plugin.discovery = service_load
B.plugin.discovery = service_load
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
config.storage.replication.factor = 1
offset.storage.partitions = 1
status.storage.partitions = 1
B.scheduled.rebalance.max.delay.ms = 0
EOF
cat >"$WORK/log4j2.properties" <<EOF
status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $WORK/mm2.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
EOF
log "starting MirrorMaker 2 and kreplicate (both continuous)"
# shellcheck disable=SC2086
java $MM2_HEAP -XX:+UseG1GC -Djava.awt.headless=true -Dlog4j2.configurationFile="$WORK/log4j2.properties" \
    -cp "$(bash "$REPO/scripts/kafka.sh" libs --mirror)/*" org.apache.kafka.connect.mirror.MirrorMaker "$WORK/mm2.properties" \
    >"$WORK/mm2.stdout" 2>&1 </dev/null &
MM2=$!
PIDS+=("$MM2")
"$KR" --from "$A" --to "$B" --topics cut --rename '{topic}.kr' --create-topics \
    --guarantee at-least-once --group kreplicate.cutover --sync-groups '^app-' \
    --sync-groups-interval "${INTERVAL}s" >"$WORK/kreplicate.out" 2>"$WORK/kreplicate.err" </dev/null &
KRP=$!
PIDS+=("$KRP")
for t in cut cut.kr; do
    "$LOAD" wait --bootstrap "$B" --topic "$t" --records "$RECORDS" --timeout 900 \
        || die "the copy into $t did not complete (logs in $WORK)"
done
kill -0 "$MM2" 2>/dev/null || die "MirrorMaker 2 exited (see $WORK/mm2.log)"
kill -0 "$KRP" 2>/dev/null || die "kreplicate exited: $(tail -n 3 "$WORK/kreplicate.err")"
log "both copies hold the backlog; committing $NGROUPS groups x $PARTITIONS partitions on A (seed $SEED)"
"$LOAD" commit --bootstrap "$A" --topic cut --partitions "$PARTITIONS" --group app- \
    --groups "$NGROUPS" --max "$PER" --seed "$SEED" --edges || die "commit failed"
log "watching B until every translated position is set and steady for $((3 * INTERVAL)) s"
"$LOAD" watch --bootstrap "$B" --topic cut --topic cut.kr --partitions "$PARTITIONS" --group app- \
    --groups "$NGROUPS" --stable $((3 * INTERVAL)) --timeout $((60 * INTERVAL + 300)) >"$WORK/watch.json" \
    || die "watch failed"
# Read the source positions back (what the groups on A committed).
"$LOAD" watch --bootstrap "$A" --topic cut --partitions "$PARTITIONS" --group app- \
    --groups "$NGROUPS" --stable 0 --timeout 60 >"$WORK/source-groups.json" || die "reading A's groups failed"
kill "$MM2" "$KRP" 2>/dev/null || true
wait "$MM2" 2>/dev/null || true
wait "$KRP" 2>/dev/null || true
PIDS=()
log "one-shot translation: kreplicate groups --dry-run --json"
"$KR" groups --from "$A" --to "$B" --topics cut --rename '{topic}.kr' --groups '^app-' --dry-run --json \
    >"$WORK/groups.json" 2>"$WORK/groups.err" || true
log "reading the ids back from A and B"
"$LOAD" dump --bootstrap "$A" --topic cut >"$WORK/a.json" || die "dump A failed"
"$LOAD" dump --bootstrap "$B" --topic cut >"$WORK/b-mm2.json" || die "dump B cut failed"
"$LOAD" dump --bootstrap "$B" --topic cut.kr >"$WORK/b-kr.json" || die "dump B cut.kr failed"
mkdir -p "$(dirname "$OUT")"
set +e
python3 "$REPO/bench/cutover_report.py" "$WORK" "$OUT" "$RECORDS" "$SIZE" "$PARTITIONS" "$NGROUPS" "$SEED" "$INTERVAL"
STATUS=$?
set -e
exit "$STATUS"
