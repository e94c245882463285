#!/usr/bin/env bash
# kreplicate rate-limit benchmark (issue 12): does --max-bytes-per-sec hold over a long run?
#
# Starts two tansu brokers on free loopback ports, loads a source topic with more than LIMIT x
# SECONDS of keys and values, runs `kreplicate --max-bytes-per-sec LIMIT --until-caught-up
# --shard 1/1` (no group join, so the run is all copy), and prints the limit, the measured
# average (key + value bytes / the run's seconds, from its --json summary), the deviation, and
# the time the run spent throttled. The copy is checked with `kreplicate verify`.
#
# Usage: bench/throttle.sh [--limit 20MB] [--seconds 35] [--size 400] [--partitions 8]
#                          [--guarantee at-least-once] [--no-build]
# Env (same names): LIMIT SECONDS_WANTED SIZE PARTITIONS GUARANTEE NO_BUILD TOLERANCE (percent, 5)
# Exit: 0 when the average is within TOLERANCE % of the limit and verify passed, 1 otherwise.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

LIMIT="${LIMIT:-20MB}"
SECONDS_WANTED="${SECONDS_WANTED:-35}"
SIZE="${SIZE:-400}"
KEY_SIZE=16
PARTITIONS="${PARTITIONS:-8}"
GUARANTEE="${GUARANTEE:-at-least-once}"
NO_BUILD="${NO_BUILD:-0}"
TOLERANCE="${TOLERANCE:-5}"
TANSU="${KREPLICATE_TANSU:-$REPO/.cache/tansu/tansu}"

while (($#)); do
    case "$1" in
        --limit) LIMIT="$2"; shift 2 ;;
        --seconds) SECONDS_WANTED="$2"; shift 2 ;;
        --size) SIZE="$2"; shift 2 ;;
        --partitions) PARTITIONS="$2"; shift 2 ;;
        --guarantee) GUARANTEE="$2"; shift 2 ;;
        --no-build) NO_BUILD=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: ERROR: %s\n' "$*" >&2; exit 1; }

[ -x "$TANSU" ] || bash "$REPO/scripts/install-deps.sh" >&2
[ -x "$TANSU" ] || die "no tansu at $TANSU"
if [ "$NO_BUILD" != 1 ]; then
    log "building (cargo build --release --bin kreplicate --example load)"
    cargo build --release --bin kreplicate --example load >&2 || die "build failed"
fi
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
KR="$TARGET_DIR/release/kreplicate"
LOAD="$TARGET_DIR/release/examples/load"

# The limit in bytes per second, as kreplicate reads it (KB/MB/GB are powers of 1000).
LIMIT_BYTES="$(python3 - "$LIMIT" <<'EOF'
import re, sys
m = re.fullmatch(r"(\d+)\s*(B|KB|MB|GB|KiB|MiB|GiB)?", sys.argv[1].strip())
if not m:
    sys.exit("bench: --limit must look like 20MB")
mult = {None: 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
print(int(m.group(1)) * mult[m.group(2)])
EOF
)"
# Enough records for SECONDS_WANTED at the limit, plus 5 %.
RECORDS=$(( LIMIT_BYTES * SECONDS_WANTED * 105 / 100 / (SIZE + KEY_SIZE) ))

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kreplicate-throttle.XXXXXX")"
PIDS=()
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_broker NAME: starts tansu on a free port and prints the port.
start_broker() {
    local name="$1" port url logf pid deadline
    port="$(free_port)"
    url="tcp://127.0.0.1:$port"
    logf="$WORK/tansu-$name.log"
    NO_COLOR=1 "$TANSU" broker --listener-url "$url" --advertised-listener-url "$url" \
        --storage-engine "memory://$name/" --cluster-id "$name" </dev/null >"$logf" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    deadline=$((SECONDS + 10))
    until grep -q 'ready in' "$logf" 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        kill -0 "$pid" 2>/dev/null || die "tansu $name exited; see $logf"
        ((SECONDS < deadline)) || die "tansu $name not ready; see $logf"
        sleep 0.05
    done
    BROKER_PORT="$port"
}

start_broker throttle-a; SRC="127.0.0.1:$BROKER_PORT"
start_broker throttle-b; DST="127.0.0.1:$BROKER_PORT"
TOPIC="throttle.src"
log "loading $RECORDS records x $SIZE B values + $KEY_SIZE B keys over $PARTITIONS partitions on $SRC"
"$LOAD" produce --bootstrap "$SRC" --topic "$TOPIC" --partitions "$PARTITIONS" \
    --records "$RECORDS" --size "$SIZE" --key-size "$KEY_SIZE" --headers 1 >"$WORK/load.json" \
    || die "load failed"

log "copying to $DST with --max-bytes-per-sec $LIMIT ($GUARANTEE)"
"$KR" --from "$SRC" --to "$DST" --topics "$TOPIC" --guarantee "$GUARANTEE" --shard 1/1 \
    --create-topics --until-caught-up --json --quiet --max-bytes-per-sec "$LIMIT" \
    >"$WORK/run.json" || die "kreplicate failed: $(cat "$WORK/run.json")"
"$KR" verify --from "$SRC" --to "$DST" --topics "$TOPIC" >"$WORK/verify.txt" 2>&1 \
    || die "verify found differences: $(cat "$WORK/verify.txt")"

python3 - "$WORK/run.json" "$LIMIT" "$LIMIT_BYTES" "$TOLERANCE" "$RECORDS" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))
limit, limit_bytes, tolerance, records = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
rate = run["bytes"] / run["seconds"]
dev = (rate - limit_bytes) / limit_bytes * 100
print(f"limit              {limit} ({limit_bytes / 1e6:.2f} MB/s)")
print(f"records copied     {run['records']} of {records}")
print(f"bytes copied       {run['bytes'] / 1e6:.1f} MB (keys + values)")
print(f"run time           {run['seconds']:.2f} s (whole run: start-up and final commit included)")
print(f"time throttled     {run['throttled_seconds']:.2f} s")
print(f"measured average   {rate / 1e6:.2f} MB/s")
print(f"deviation          {dev:+.2f} % (tolerance +/-{tolerance:g} %)")
print("verify             exact copy")
sys.exit(0 if abs(dev) <= tolerance and run["records"] == records else 1)
EOF
