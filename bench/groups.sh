#!/usr/bin/env bash
# Group translation benchmark (issue 11).
#
# Starts two tansu brokers (source A, target B), loads RECORDS records over PARTITIONS
# partitions on A, copies them at-least-once, moves the copy's group back to the middle and
# copies again (so B holds RECORDS * 1.5 records with at-least-once duplicates), commits NGROUPS
# application groups at pseudo-random positions on A (NGROUPS * PARTITIONS group-partitions), and
# times `kreplicate groups --dry-run --json` translating all of them. Reports the time, the
# target records read per lookup (the bound the positions index keeps), and the index size.
# Writes bench/results/groups.json.
#
# Env: RECORDS [4000000] SIZE [100] PARTITIONS [10] NGROUPS [100] NO_BUILD KEEP
#      KREPLICATE_TANSU tansu binary [.cache/tansu/tansu]
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
RECORDS="${RECORDS:-4000000}"
SIZE="${SIZE:-100}"
PARTITIONS="${PARTITIONS:-10}"
NGROUPS="${NGROUPS:-100}"
OUT="${OUT:-$REPO/bench/results/groups.json}"
TANSU="${KREPLICATE_TANSU:-$REPO/.cache/tansu/tansu}"
log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: ERROR: %s\n' "$*" >&2; exit 1; }

[ -x "$TANSU" ] || bash "$REPO/scripts/install-deps.sh" >&2
[ "${NO_BUILD:-0}" = 1 ] || cargo build --release --bin kreplicate --examples >&2 || die "build failed"
KR="${CARGO_TARGET_DIR:-$REPO/target}/release/kreplicate"
LOAD="${CARGO_TARGET_DIR:-$REPO/target}/release/examples/load"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kreplicate-groups-bench.XXXXXX")"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ "${KEEP:-0}" = 1 ] && log "logs kept in $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

# start NAME: a tansu broker on a free port; prints its bootstrap address.
start() {
    local port url
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    url="tcp://127.0.0.1:$port"
    env -u CLUSTER_ID -u LISTENER_URL -u ADVERTISED_LISTENER_URL -u STORAGE_ENGINE NO_COLOR=1 \
        "$TANSU" broker --listener-url "$url" --advertised-listener-url "$url" \
        --storage-engine "memory://$1/" --cluster-id "$1" </dev/null >"$WORK/$1.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && { echo "127.0.0.1:$port"; return; }
        sleep 0.05
    done
    die "tansu $1 did not start"
}
A="$(start groups-a)"
B="$(start groups-b)"
PER=$((RECORDS / PARTITIONS))
COPY=(--from "$A" --to "$B" --topics bench --until-caught-up --create-topics --shard 1/1
      --group kreplicate.bench --json -q)

log "loading $RECORDS records x $SIZE B over $PARTITIONS partitions on A"
"$LOAD" produce --bootstrap "$A" --topic bench --partitions "$PARTITIONS" --records "$RECORDS" \
    --size "$SIZE" >/dev/null
log "copy 1 (at-least-once)"
"$KR" "${COPY[@]}" >"$WORK/copy1.json" || die "copy 1 failed"
log "moving the copy's group back to $((PER / 2)) and copying again (duplicates)"
"$LOAD" commit --bootstrap "$A" --topic bench --partitions "$PARTITIONS" \
    --group kreplicate.bench --position $((PER / 2))
"$KR" "${COPY[@]}" >"$WORK/copy2.json" || die "copy 2 failed"
"$LOAD" count --bootstrap "$B" --topic bench --no-digest >"$WORK/target.json"
"$LOAD" count --bootstrap "$B" --topic __kreplicate.index --no-digest >"$WORK/index.json"
log "committing $NGROUPS groups x $PARTITIONS partitions at pseudo-random positions on A"
"$LOAD" commit --bootstrap "$A" --topic bench --partitions "$PARTITIONS" --group app- \
    --groups "$NGROUPS" --max "$PER" --seed 11
log "translating"
t0="$(date +%s%N)"
"$KR" groups --from "$A" --to "$B" --topics bench --groups '^app-' --dry-run --json \
    >"$WORK/groups.json" || die "groups failed: $(cat "$WORK/groups.json")"
t1="$(date +%s%N)"
mkdir -p "$(dirname "$OUT")"
python3 - "$WORK" "$t0" "$t1" "$OUT" "$RECORDS" "$SIZE" "$PARTITIONS" "$NGROUPS" <<'PY'
import json, os, statistics, sys
work, t0, t1, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
records, size, partitions, groups = map(int, sys.argv[5:9])
g = json.load(open(f"{work}/groups.json"))
target = json.load(open(f"{work}/target.json"))["records"]
index = json.load(open(f"{work}/index.json"))["records"]
rows = g["partitions"]
read = sorted(r["records_read"] for r in rows)
secs = (t1 - t0) / 1e9
res = {
    "source_records": records, "value_bytes": size, "partitions": partitions,
    "target_records": target, "duplicates": target - records, "index_records": index,
    "group_partitions": len(rows),
    "translated": sum(r["status"] == "translated" for r in rows),
    "seconds": round(secs, 2),
    "ms_per_lookup": round(secs * 1000 / max(len(rows), 1), 2),
    "records_read_per_lookup": {"mean": round(statistics.mean(read), 1), "median": statistics.median(read),
                                "p99": read[int(len(read) * 0.99) - 1], "max": read[-1]},
    "records_per_partition_on_target": target // partitions,
    "nproc": os.cpu_count(),
}
json.dump(res, open(out, "w"), indent=2)
print(json.dumps(res, indent=2))
PY
