#!/usr/bin/env bash
# Instructions per record, counted (issues 20, 32): valgrind's callgrind counts every
# instruction of the copier's process, every librdkafka thread included, whatever else the
# machine runs. Times on a shared machine spread by 15 % and more; these counts by well under 1 %.
# The kernel's work (sockets, page cache) is not counted: the same for every copier.
#
# Starts two single-node Apache Kafka clusters (scripts/kafka.sh, or uses FROM and TO), loads
# a topic of N records and one of one record per partition, and copies each under callgrind
# with every mode: the small copy is the fixed cost (start, checks, topic creation, end), so
#     per record = (instructions of the N-record copy - of the small one) / (N - partitions).
# Modes, as in bench/run.sh:
#   ceiling        examples/raw_copy.rs (the raw copy, the same client defaults and codec)
#   none, at-least-once, exactly-once   kreplicate --guarantee ..., --shard 1/1 --until-caught-up
#   MODE+bare      the same with --no-origin-header
#   MODE+before    the same with the binary KR_BEFORE (a build of another commit)
# Under valgrind a full producer queue drains in minutes, not seconds: every copier gets a
# delivery timeout of 240 s (the most kreplicate allows). Every run's callgrind file is kept in OUT_DIR (callgrind_annotate --inclusive=yes FILE shows
# where the instructions go); the table goes to stdout, OUT_DIR/instructions.json beside it.
#
# Usage: bench/instructions.sh [--records N] [--size B] [--partitions P] [--modes "..."]
#                              [--out-dir DIR] [--no-build]
# Env (same names): RECORDS [200000] SIZE [1024] KEY_SIZE [16] HEADERS [1] PARTITIONS [8]
#   MODES ["ceiling at-least-once at-least-once+bare exactly-once"] OUT_DIR
#   [target/instructions/<time>] NO_BUILD; FROM, TO: bootstrap lists of running clusters (else
#   two are started and stopped); KR_BEFORE; CODEC: the target's compression for every copier
#   [zstd, kreplicate's default]; KR_EXTRA: more kreplicate arguments.
# Exit: 0 every copy counted, 1 otherwise, 2 bad usage.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

RECORDS="${RECORDS:-200000}"
SIZE="${SIZE:-1024}"
KEY_SIZE="${KEY_SIZE:-16}"
HEADERS="${HEADERS:-1}"
PARTITIONS="${PARTITIONS:-8}"
MODES="${MODES:-ceiling at-least-once at-least-once+bare exactly-once}"
OUT_DIR="${OUT_DIR:-$REPO/target/instructions/$(date +%Y%m%d-%H%M%S)}"
NO_BUILD="${NO_BUILD:-0}"
CODEC="${CODEC:-zstd}"
KR_EXTRA="${KR_EXTRA:-}"
KR_BEFORE="${KR_BEFORE:-}"
FROM="${FROM:-}"
TO="${TO:-}"

while (($#)); do
    case "$1" in
        --records) RECORDS="$2"; shift 2 ;;
        --size) SIZE="$2"; shift 2 ;;
        --partitions) PARTITIONS="$2"; shift 2 ;;
        --modes) MODES="$2"; shift 2 ;;
        --out-dir) OUT_DIR="$2"; shift 2 ;;
        --no-build) NO_BUILD=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "instructions: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
for v in RECORDS SIZE KEY_SIZE HEADERS PARTITIONS; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "instructions: $v must be a number, got '${!v}'" >&2; exit 2; }
done
((PARTITIONS >= 1 && RECORDS > PARTITIONS)) || { echo "instructions: need PARTITIONS >= 1 and RECORDS > PARTITIONS" >&2; exit 2; }
read -r -a MODE_LIST <<<"$MODES"
for m in "${MODE_LIST[@]}"; do
    case "$m" in
        ceiling) ;;
        none | none+* | at-least-once | at-least-once+* | exactly-once | exactly-once+*)
            for f in $(tr '+' ' ' <<<"${m#*+}"); do
                [ "$f" = "${m%%+*}" ] || [ "$f" = bare ] || [ "$f" = before ] ||
                    { echo "instructions: unknown mode '$m' (suffixes: +bare +before)" >&2; exit 2; }
            done ;;
        *) echo "instructions: unknown mode '$m'" >&2; exit 2 ;;
    esac
done

log() { printf 'instructions: %s\n' "$*" >&2; }
die() { printf 'instructions: ERROR: %s\n' "$*" >&2; exit 1; }

command -v valgrind >/dev/null || die "valgrind is needed (apt-get install valgrind)"
command -v python3 >/dev/null || die "python3 is needed for the table"
if [ "$NO_BUILD" != 1 ]; then
    log "building (cargo build --release --bin kreplicate --examples)"
    cargo build --release --bin kreplicate --examples >&2 || die "build failed"
fi
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
KR="$TARGET_DIR/release/kreplicate"
LOAD="$TARGET_DIR/release/examples/load"
RAW="$TARGET_DIR/release/examples/raw_copy"
for b in "$KR" "$LOAD" "$RAW"; do [ -x "$b" ] || die "missing $b (build first)"; done
[[ " $MODES " != *+before* ]] || [ -x "$KR_BEFORE" ] || die "the +before modes need KR_BEFORE, a kreplicate binary"
mkdir -p "$OUT_DIR"

STARTED=()
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    for n in "${STARTED[@]}"; do bash "$REPO/scripts/kafka.sh" stop "$n" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ -z "$FROM" ] || [ -z "$TO" ]; then
    export KREPLICATE_KAFKA_HOME="$OUT_DIR/kafka"
    export KREPLICATE_KAFKA_START_TIMEOUT="${KREPLICATE_KAFKA_START_TIMEOUT:-300}"
    for n in instr-a instr-b; do
        line="$(bash "$REPO/scripts/kafka.sh" start "$n" 0)" || die "cluster $n did not start"
        STARTED+=("$n")
        b="$(sed -n 's/.*bootstrap=\([^ ]*\).*/\1/p' <<<"$line")"
        if [ "$n" = instr-a ]; then FROM="$b"; else TO="$b"; fi
    done
fi
log "source $FROM, target $TO; callgrind files in $OUT_DIR"

STAMP="$$-$(date +%s)"
BIG="instr.s$SIZE.p$PARTITIONS.n$RECORDS.$STAMP"
SMALL="instr.s$SIZE.p$PARTITIONS.n$PARTITIONS.$STAMP"
for t in "$BIG:$RECORDS" "$SMALL:$PARTITIONS"; do
    "$LOAD" produce --bootstrap "$FROM" --topic "${t%%:*}" --partitions "$PARTITIONS" --records "${t##*:}" \
        --size "$SIZE" --key-size "$KEY_SIZE" --headers "$HEADERS" >/dev/null || die "load failed"
done

ROWS="$OUT_DIR/rows.tsv"
: >"$ROWS"
# count MODE TOPIC N: one copy under callgrind; appends MODE N INSTRUCTIONS to ROWS.
count() {
    local mode="$1" topic="$2" n="$3" slug="${1//+/-}" file cmd
    local target="$topic.$slug" guarantee="${1%%+*}"
    file="$OUT_DIR/callgrind.$slug.n$n"
    if [ "$mode" = ceiling ]; then
        cmd=("$RAW" --from "$FROM" --to "$TO" --topic "$topic" --target "$target" -P "compression.type=$CODEC"
             -P message.timeout.ms=240000)
    else
        local kr="$KR"
        [[ "$mode" != *+before* ]] || kr="$KR_BEFORE"
        cmd=("$kr" --from "$FROM" --to "$TO" --topics "$topic" --guarantee "$guarantee" --shard 1/1
             --until-caught-up --create-topics --group "instr-$slug-$n-$STAMP" --rename "{topic}.$slug"
             --json --to-property "compression.type=$CODEC" --delivery-timeout 240s)
        [[ "$mode" != *+bare* ]] || cmd+=(--no-origin-header)
        # shellcheck disable=SC2206
        [ -z "$KR_EXTRA" ] || cmd+=($KR_EXTRA)
    fi
    log "$mode, $n records"
    valgrind --tool=callgrind --callgrind-out-file="$file" "${cmd[@]}" >"$file.out" 2>"$file.err" ||
        die "$mode over $n records failed: $(tail -n 3 "$file.err" | tr '\n' ' ')"
    "$LOAD" wait --bootstrap "$TO" --topic "$target" --records "$n" --timeout 60 >/dev/null ||
        die "$mode over $n records: the target does not hold them"
    "$LOAD" delete --bootstrap "$TO" "$target" >/dev/null 2>&1 || true
    printf '%s\t%s\t%s\n' "$mode" "$n" "$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$file" | head -n 1)" >>"$ROWS"
}
for mode in "${MODE_LIST[@]}"; do
    count "$mode" "$SMALL" "$PARTITIONS"
    count "$mode" "$BIG" "$RECORDS"
done
"$LOAD" delete --bootstrap "$FROM" "$BIG" "$SMALL" >/dev/null 2>&1 || true

python3 - "$ROWS" "$OUT_DIR/instructions.json" "$SIZE" "$KEY_SIZE" "$HEADERS" "$PARTITIONS" "$CODEC" <<'EOF'
import json, sys
rows, out, size, key, headers, parts, codec = sys.argv[1:]
runs = {}
for line in open(rows):
    mode, n, instr = line.rstrip("\n").split("\t")
    runs.setdefault(mode, {})[int(n)] = int(instr)
table = []
for mode, r in runs.items():
    (small, fixed), (big, total) = sorted(r.items())
    table.append({"mode": mode, "records": big, "instructions": total, "fixed_records": small,
                  "fixed_instructions": fixed, "per_record": (total - fixed) / (big - small)})
base = next((t["per_record"] for t in table if t["mode"] == "ceiling"), None)
print(f"{size} B values, {key} B keys, {headers} header(s), {parts} partitions, target codec {codec}")
print("| copier | records | million instructions | fixed (million) | per record | / raw copy |")
print("|---|---|---|---|---|---|")
for t in table:
    ratio = f"{t['per_record'] / base:.2f}" if base else ""
    t["over_ceiling"] = t["per_record"] / base if base else None
    print(f"| {t['mode']} | {t['records']:,} | {t['instructions'] / 1e6:,.1f} | {t['fixed_instructions'] / 1e6:,.1f} | {t['per_record']:,.0f} | {ratio} |")
json.dump({"size": int(size), "key_size": int(key), "headers": int(headers), "partitions": int(parts),
           "codec": codec, "runs": table}, open(out, "w"), indent=1)
EOF
