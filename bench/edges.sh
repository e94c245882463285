#!/usr/bin/env bash
# What many partitions cost outside the copy (issue 43): `verify` of a layout, and reruns
# that find nothing to copy (their start checks, resume, end checks and commit).
#
# Starts two Apache Kafka KRaft clusters with scripts/kafka.sh, writes RECORDS records of SIZE
# bytes into TOPICS topics of PARTITIONS partitions (examples/load.rs), copies them once with
# kreplicate at-least-once (--create-topics), and FILLS - 1 times more under other groups (a
# target holding several copies), then ROUNDS times, alternating the builds, runs each of TASKS
# (`verify`; `exactly-once` and `at-least-once`: an `--until-caught-up` rerun of the first
# copy's group) with this build and, with KR_BEFORE, with another one. Prints one line per run
# (wall, CPU user+sys, peak RSS, exit) and a median per build and task, and writes both to OUT.
#
# Env: LAYOUT [400x5] RECORDS [20000] SIZE [100] FILLS [1] ROUNDS [3]
#      TASKS ["verify exactly-once"] KR_BEFORE NO_BUILD OUT [bench/results/edges.json]
#      KAFKA_HEAP_OPTS [-Xmx2g -Xms2g]
# Exit: 0 every run exited 0, 1 otherwise, 2 bad usage.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
LAYOUT="${LAYOUT:-400x5}" RECORDS="${RECORDS:-20000}" SIZE="${SIZE:-100}" ROUNDS="${ROUNDS:-3}"
FILLS="${FILLS:-1}" TASKS="${TASKS:-verify exactly-once}"
OUT="${OUT:-$REPO/bench/results/edges.json}"
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx2g -Xms2g}"
case "${1:-}" in -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; "") ;; *) echo "bench: no arguments (see --help)" >&2; exit 2 ;; esac
[[ "$LAYOUT" =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] || { echo "bench: LAYOUT takes TOPICSxPARTITIONS, got '$LAYOUT'" >&2; exit 2; }
TOPICS="${BASH_REMATCH[1]}" PARTITIONS="${BASH_REMATCH[2]}"
for v in RECORDS SIZE FILLS ROUNDS; do [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v must be a positive number" >&2; exit 2; }; done
[ -z "${KR_BEFORE:-}" ] || [ -x "$KR_BEFORE" ] || { echo "bench: KR_BEFORE is not an executable" >&2; exit 2; }

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: ERROR: %s\n' "$*" >&2; exit 1; }

bash "$REPO/scripts/kafka.sh" libs >/dev/null 2>&1 || bash "$REPO/scripts/install-deps.sh" >&2
[ "${NO_BUILD:-0}" = 1 ] || cargo build --release --bin kreplicate --example load >&2 || die "build failed"
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
KR="$TARGET_DIR/release/kreplicate" LOAD="$TARGET_DIR/release/examples/load"
for b in "$KR" "$LOAD"; do [ -x "$b" ] || die "missing $b (build first)"; done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kreplicate-edges.XXXXXX")"
export KREPLICATE_KAFKA_HOME="$WORK/kafka" KREPLICATE_KAFKA_START_TIMEOUT=300
STATUS=1
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    for n in edges-a edges-b; do bash "$REPO/scripts/kafka.sh" stop "$n" >/dev/null 2>&1 || true; done
    if [ "$STATUS" = 0 ]; then rm -rf "$WORK"; else log "logs kept in $WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bootstrap() { bash "$REPO/scripts/kafka.sh" start "$1" 0 | sed -n 's/.*bootstrap=\([^ ]*\).*/\1/p'; }
SRC="$(bootstrap edges-a)" DST="$(bootstrap edges-b)"
[ -n "$SRC" ] && [ -n "$DST" ] || die "a cluster did not start"
log "source A on $SRC, target B on $DST; $RECORDS records of $SIZE B into $TOPICS x $PARTITIONS"
"$LOAD" produce --bootstrap "$SRC" --topic e --topic-count "$TOPICS" --partitions "$PARTITIONS" \
    --records "$RECORDS" --size "$SIZE" >/dev/null || die "load failed"
SEL='^e'
[ "$TOPICS" = 1 ] || SEL='^e-'
"$KR" --from "$SRC" --to "$DST" --topics "$SEL" --create-topics --until-caught-up --quiet \
    >/dev/null 2>"$WORK/copy.err" || die "the first copy failed: $(tail -1 "$WORK/copy.err")"
for ((fill = 2; fill <= FILLS; fill++)); do
    "$KR" --from "$SRC" --to "$DST" --topics "$SEL" --group "edges-fill-$fill" --until-caught-up \
        --quiet >/dev/null 2>"$WORK/copy.err" || die "copy $fill failed: $(tail -1 "$WORK/copy.err")"
done

builds=("after=$KR")
[ -z "${KR_BEFORE:-}" ] || builds+=("before=$KR_BEFORE")
failed=0
: >"$WORK/runs.tsv"
for ((round = 1; round <= ROUNDS; round++)); do
    for task in $TASKS; do
        # Alternate which build goes first from round to round.
        order=("${builds[@]}")
        ((round % 2 == 1)) || mapfile -t order < <(printf '%s\n' "${builds[@]}" | tac)
        for b in "${order[@]}"; do
            name="${b%%=*}" bin="${b#*=}"
            case "$task" in
                verify) args=(verify --from "$SRC" --to "$DST" --topics "$SEL") ;;
                exactly-once | at-least-once) args=(--from "$SRC" --to "$DST" --topics "$SEL" --guarantee "$task" --until-caught-up --quiet) ;;
                *) die "TASKS: unknown task '$task' (verify, exactly-once, at-least-once)" ;;
            esac
            start=$(date +%s%N)
            rc=0
            /usr/bin/time -f '%M %U %S' -o "$WORK/time" "$bin" "${args[@]}" >/dev/null 2>"$WORK/$name-$task-$round.err" || rc=$?
            wall=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
            read -r rss user sys < <(grep -E '^[0-9]+ ' "$WORK/time")
            cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
            [ "$rc" = 0 ] || failed=1
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$task" "$name" "$round" "$wall" "$cpu" "$((rss / 1024))" "$rc" | tee -a "$WORK/runs.tsv"
        done
    done
done
echo "task	build	median wall s	median CPU s	median peak RSS MiB"
mkdir -p "$(dirname "$OUT")"
python3 - "$WORK/runs.tsv" "$OUT" "layout=$LAYOUT records=$RECORDS size=$SIZE fills=$FILLS rounds=$ROUNDS heap=$KAFKA_HEAP_OPTS; $(date -u +%FT%TZ)" <<'PY'
import json, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
runs = [{"task": r[0], "build": r[1], "round": int(r[2]), "wall_s": float(r[3]),
         "cpu_s": float(r[4]), "peak_rss_mib": int(r[5]), "exit": int(r[6])} for r in rows]
medians = []
for key in dict.fromkeys((r["task"], r["build"]) for r in runs):
    got = [r for r in runs if (r["task"], r["build"]) == key]
    med = lambda k: statistics.median(r[k] for r in got)
    medians.append({"task": key[0], "build": key[1], "median_wall_s": med("wall_s"),
                    "median_cpu_s": med("cpu_s"), "median_peak_rss_mib": med("peak_rss_mib")})
    print(f"{key[0]}\t{key[1]}\t{med('wall_s'):.2f}\t{med('cpu_s'):.2f}\t{med('peak_rss_mib'):.0f}")
json.dump({"settings": sys.argv[3], "runs": runs, "medians": medians}, open(sys.argv[2], "w"), indent=1)
print(f"wrote {sys.argv[2]}")
PY
[ "$failed" = 0 ] || die "a run exited non-zero (see $WORK)"
STATUS=0
