#!/usr/bin/env bash
# kreplicate throughput benchmark (issue 5).
#
# Starts two tansu brokers on free loopback ports (source A, target B), loads a source topic,
# then measures, alternating within one run (so the ratios hold on a shared machine):
#   ceiling        examples/raw_copy.rs: a minimal consume -> produce copy, same librdkafka and
#                  client defaults as kreplicate, no offsets, no verification
#   none           kreplicate --guarantee none
#   at-least-once  kreplicate --guarantee at-least-once
#   exactly-once   kreplicate --guarantee exactly-once
#   none+shard, at-least-once+shard
#                  the same with --shard 1/1: static assignment, no consumer-group join
#   MODE+bare      the same with --no-origin-header (e.g. at-least-once+shard+bare): the cost
#                  of the origin header every copy adds (issue 11)
# Every run is whole-process wall time and peak RSS (GNU time %M), and every copied topic is read
# back and compared with the source partition by partition (count + digest of key, value,
# headers, timestamp): a broken run is marked FAILED and left out of the medians.
# Prints a table and writes bench/results/latest.json.
#
# Usage: bench/run.sh [--records N] [--size BYTES] [--partitions N] [--rounds N] [--big]
#                     [--modes "ceiling none at-least-once exactly-once ..."] [--out FILE]
#                     [--no-build] [--keep]
# Env (same names): RECORDS SIZE KEY_SIZE HEADERS PARTITIONS ROUNDS MODES BIG OUT NO_BUILD KEEP
#   BIG=1            2,700,000 x 400 B (>= 1 GB backlog) and check peak RSS <= RSS_LIMIT_MIB
#   RSS_LIMIT_MIB    kreplicate peak RSS bound checked with BIG=1 [256]
#   FRESH_TARGET=0   keep one target broker for the whole run (default: a fresh target broker
#                    per copy, so B's memory does not grow with every copy)
#   KR_EXTRA         extra kreplicate arguments for every kreplicate run
#   EOS_EXTRA        extra arguments for the exactly-once mode only
#   CEILING_ARGS     extra raw_copy arguments (-C consumer / -P producer properties); raw_copy's
#                    own defaults mirror kreplicate's client defaults in src/kafka.rs: keep in sync
#   KREPLICATE_TANSU tansu binary [.cache/tansu/tansu]
# Exit: 0 all runs verified (and RSS within bound with BIG=1), 1 otherwise.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

BIG="${BIG:-0}"
ROUNDS="${ROUNDS:-3}"
SIZE="${SIZE:-400}"
KEY_SIZE="${KEY_SIZE:-16}"
HEADERS="${HEADERS:-1}"
PARTITIONS="${PARTITIONS:-8}"
MODES="${MODES:-ceiling none at-least-once exactly-once none+shard at-least-once+shard}"
OUT="${OUT:-$REPO/bench/results/latest.json}"
NO_BUILD="${NO_BUILD:-0}"
KEEP="${KEEP:-0}"
FRESH_TARGET="${FRESH_TARGET:-1}"
RSS_LIMIT_MIB="${RSS_LIMIT_MIB:-256}"
KR_EXTRA="${KR_EXTRA:-}"
EOS_EXTRA="${EOS_EXTRA:-}"
CEILING_ARGS="${CEILING_ARGS:-}"
TANSU="${KREPLICATE_TANSU:-$REPO/.cache/tansu/tansu}"

while (($#)); do
    case "$1" in
        --records) RECORDS="$2"; shift 2 ;;
        --size) SIZE="$2"; shift 2 ;;
        --key-size) KEY_SIZE="$2"; shift 2 ;;
        --headers) HEADERS="$2"; shift 2 ;;
        --partitions) PARTITIONS="$2"; shift 2 ;;
        --rounds) ROUNDS="$2"; shift 2 ;;
        --modes) MODES="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --big) BIG=1; shift ;;
        --no-build) NO_BUILD=1; shift ;;
        --keep) KEEP=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ "$BIG" = 1 ]; then RECORDS="${RECORDS:-2700000}"; else RECORDS="${RECORDS:-1500000}"; fi
for v in RECORDS SIZE KEY_SIZE HEADERS PARTITIONS ROUNDS; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "bench: $v must be a number, got '${!v}'" >&2; exit 2; }
done
((ROUNDS >= 1 && PARTITIONS >= 1 && KEY_SIZE >= 8)) || { echo "bench: need ROUNDS>=1 PARTITIONS>=1 KEY_SIZE>=8" >&2; exit 2; }

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: ERROR: %s\n' "$*" >&2; exit 1; }

# --- dependencies ----------------------------------------------------------------------------
if [ ! -x "$TANSU" ]; then
    log "tansu missing: running scripts/install-deps.sh"
    bash "$REPO/scripts/install-deps.sh" >&2
fi
[ -x "$TANSU" ] || die "no tansu at $TANSU"
if ! /usr/bin/time -f %M true >/dev/null 2>&1; then
    log "installing Debian package 'time' (GNU time, for peak RSS)"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    if ! { $SUDO apt-get update -qq >&2 &&
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends time >&2; }; then
        die "apt-get install time failed"
    fi
fi
command -v python3 >/dev/null || die "python3 is needed for the report (scripts/install-deps.sh installs it)"

if [ "$NO_BUILD" != 1 ]; then
    log "building (cargo build --release --bin kreplicate --examples)"
    cargo build --release --bin kreplicate --examples >&2 || die "build failed"
fi
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
KR="$TARGET_DIR/release/kreplicate"
LOAD="$TARGET_DIR/release/examples/load"
RAW="$TARGET_DIR/release/examples/raw_copy"
for b in "$KR" "$LOAD" "$RAW"; do [ -x "$b" ] || die "missing $b (build first)"; done

# --- brokers ---------------------------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kreplicate-bench.XXXXXX")"
BROKER_PIDS=()
STATUS=1

# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    local pid
    for pid in "${BROKER_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${BROKER_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [ "$STATUS" = 0 ] && [ "$KEEP" != 1 ]; then
        rm -rf "$WORK"
    else
        log "logs kept in $WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_broker NAME VAR: starts tansu, stores "pid port" in VAR_PID / VAR_PORT.
start_broker() {
    local name="$1" var="$2" attempt port url logf pid
    for attempt in 1 2 3 4 5; do
        port="$(free_port)"
        url="tcp://127.0.0.1:$port"
        logf="$WORK/tansu-$name-$port.log"
        env -u CLUSTER_ID -u LISTENER_URL -u ADVERTISED_LISTENER_URL -u STORAGE_ENGINE \
            -u SCHEMA_REGISTRY -u OTEL_EXPORTER_OTLP_ENDPOINT NO_COLOR=1 \
            "$TANSU" broker --listener-url "$url" --advertised-listener-url "$url" \
            --storage-engine "memory://$name/" --cluster-id "$name" </dev/null >"$logf" 2>&1 &
        pid=$!
        BROKER_PIDS+=("$pid")
        # Watchdog: if this script dies without running its trap (SIGKILL), the broker goes too.
        ( while kill -0 $$ 2>/dev/null && kill -0 "$pid" 2>/dev/null; do sleep 1; done
          kill "$pid" 2>/dev/null || true ) </dev/null >/dev/null 2>&1 &
        local deadline=$((SECONDS + 10))
        while :; do
            if grep -q -e AddrInUse -e 'Address in use' "$logf" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null; then
                kill "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
                break
            fi
            if grep -q 'ready in' "$logf" 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                printf -v "${var}_PID" '%s' "$pid"
                printf -v "${var}_PORT" '%s' "$port"
                return 0
            fi
            ((SECONDS < deadline)) || die "tansu $name not ready on port $port; see $logf"
            sleep 0.05
        done
        log "tansu $name: port $port unusable (attempt $attempt), retrying"
    done
    die "tansu $name: no free port after 5 attempts"
}

# cpu_seconds PID: user+system CPU time of a live process, in seconds.
CLK_TCK="$(getconf CLK_TCK)"
cpu_seconds() {
    awk -v hz="$CLK_TCK" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}

stop_broker() {
    local pid="$1"
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

A_PID="" A_PORT="" B_PORT=""
start_broker bench-a A
SRC="127.0.0.1:$A_PORT"
B_PID=""
fresh_target() {
    if [ -n "$B_PID" ]; then
        [ "$FRESH_TARGET" = 1 ] || return 0
        stop_broker "$B_PID"
    fi
    start_broker bench-b B
    DST="127.0.0.1:$B_PORT"
}
fresh_target
log "source A on $SRC, target B on $DST; work dir $WORK"

# --- load ------------------------------------------------------------------------------------
TOPIC="bench.src"
log "loading $RECORDS records x ${SIZE} B values (keys ${KEY_SIZE} B, $HEADERS header(s)) over $PARTITIONS partitions"
"$LOAD" produce --bootstrap "$SRC" --topic "$TOPIC" --partitions "$PARTITIONS" \
    --records "$RECORDS" --size "$SIZE" --key-size "$KEY_SIZE" --headers "$HEADERS" >"$WORK/load.json" \
    || die "load failed"
log "loaded: $(cat "$WORK/load.json")"
"$LOAD" count --bootstrap "$SRC" --topic "$TOPIC" >"$WORK/source.json" || die "counting the source failed"
python3 - "$WORK/source.json" "$RECORDS" <<'EOF' || die "source topic does not hold the loaded records"
import json, sys
got = json.load(open(sys.argv[1]))["records"]
if got != int(sys.argv[2]):
    sys.exit(f"source holds {got} records, expected {sys.argv[2]}")
EOF

# --- runs ------------------------------------------------------------------------------------
ROWS="$WORK/rows.tsv"
: >"$ROWS"

# verify_copy TOPIC ID [count args...] -> prints "ok" or a reason
verify_copy() {
    local target="$1" id="$2"
    shift 2
    if ! "$LOAD" count --bootstrap "$DST" --topic "$target" --idle-timeout 30 "$@" >"$WORK/$id.count.json" 2>"$WORK/$id.count.err"; then
        echo "count failed: $(tail -c 300 "$WORK/$id.count.err" | tr '\n\t' '  ')"
        return
    fi
    python3 - "$WORK/source.json" "$WORK/$id.count.json" <<'EOF'
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

# run_mode MODE ROUND
run_mode() {
    local mode="$1" round="$2" id target group rc t0 t1 secs rss user sys status note cmd
    # MODE is a guarantee, optionally with "+shard" (static assignment: --shard 1/1).
    local guarantee="${mode%%+*}" slug="${mode//+/-}"
    id="$slug.r$round"
    fresh_target
    target="$TOPIC.$slug.r$round"
    if [ "$mode" = ceiling ]; then
        cmd=("$RAW" --from "$SRC" --to "$DST" --topic "$TOPIC" --target "$target")
        # shellcheck disable=SC2206
        [ -z "$CEILING_ARGS" ] || cmd+=($CEILING_ARGS)
    else
        group="bench-$slug-r$round-$$"
        cmd=("$KR" --from "$SRC" --to "$DST" --topics "$TOPIC" --guarantee "$guarantee"
             --until-caught-up --create-topics --group "$group" --rename "{topic}.$slug.r$round" --json
             -X session.timeout.ms=2000 -X heartbeat.interval.ms=500)
        [[ "$mode" != *+shard* ]] || cmd+=(--shard 1/1)
        [[ "$mode" != *+bare* ]] || cmd+=(--no-origin-header)
        # shellcheck disable=SC2206
        [ -z "$KR_EXTRA" ] || cmd+=($KR_EXTRA)
        # shellcheck disable=SC2206
        [ "$guarantee" != exactly-once ] || [ -z "$EOS_EXTRA" ] || cmd+=($EOS_EXTRA)
    fi
    log "round $round: $mode"
    local a0 a1 b0 b1
    a0="$(cpu_seconds "$A_PID")"; b0="$(cpu_seconds "$B_PID")"
    t0="$(date +%s%N)"
    set +e
    /usr/bin/time -f '%M %U %S' -o "$WORK/$id.time" "${cmd[@]}" >"$WORK/$id.out" 2>"$WORK/$id.err"
    rc=$?
    set -e
    t1="$(date +%s%N)"
    a1="$(cpu_seconds "$A_PID")"; b1="$(cpu_seconds "$B_PID")"
    local brokers_cpu
    brokers_cpu="$(awk -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" 'BEGIN { printf "%.2f\t%.2f", a1 - a0, b1 - b0 }')"
    secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
    read -r rss user sys < <(tail -n 1 "$WORK/$id.time") || true
    rss="${rss:-0}"; user="${user:-0}"; sys="${sys:-0}"
    note=""
    if [ "$rc" != 0 ]; then
        status=FAILED
        note="exit $rc: $(grep -v '^\s*$' "$WORK/$id.err" | grep -v 'Command exited' | tail -n 2 | tr '\n\t' '  ' | cut -c1-300)"
    else
        # Every kreplicate copy adds one header per record (kreplicate.origin): compare
        # without it.
        local vargs=()
        [ "$mode" = ceiling ] || vargs=(--ignore-header kreplicate.origin)
        note="$(verify_copy "$target" "$id" "${vargs[@]}")"
        if [ "$note" = ok ]; then status=ok; note=""; else status=FAILED; fi
    fi
    # The copier's own figure (its --json summary): time from start of copying to the end.
    local inner=""
    inner="$(python3 -c 'import json,sys
try:
    print(round(float(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["seconds"]), 3))
except Exception:
    print("")' "$WORK/$id.out")"
    log "  $status: ${secs}s wall${inner:+ (${inner}s copying)}, peak RSS $((rss / 1024)) MiB, CPU user ${user}s sys ${sys}s, brokers A+B CPU $(tr '\t' '+' <<<"$brokers_cpu")s${note:+; $note}"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$round" "$secs" "$rss" "$user" "$sys" "$status" "$note" "$inner" "$brokers_cpu" >>"$ROWS"
}

read -r -a MODE_LIST <<<"$MODES"
for ((round = 1; round <= ROUNDS; round++)); do
    # Alternate the order (A B C, C B A, ...) so a slow drift of the machine cancels out.
    if ((round % 2)); then order=("${MODE_LIST[@]}"); else
        order=(); for ((i = ${#MODE_LIST[@]} - 1; i >= 0; i--)); do order+=("${MODE_LIST[$i]}"); done
    fi
    for mode in "${order[@]}"; do run_mode "$mode" "$round"; done
done

# --- report ----------------------------------------------------------------------------------
LIBRDKAFKA="$("$KR" --version 2>/dev/null | sed -n 's/.*librdkafka \([^)]*\)).*/\1/p' | head -n 1)"
TANSU_VERSION="$("$TANSU" --version 2>/dev/null | head -n 1 || true)"
mkdir -p "$(dirname "$OUT")"
set +e
python3 - "$ROWS" "$OUT" <<EOF
import json, os, platform, statistics, sys, time
rows_path, out_path = sys.argv[1], sys.argv[2]
records, size, key_size, headers = $RECORDS, $SIZE, $KEY_SIZE, $HEADERS
partitions, rounds, big, rss_limit = $PARTITIONS, $ROUNDS, $BIG == 1, $RSS_LIMIT_MIB
modes = "$MODES".split()
data_bytes = records * (size + key_size)

def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"

def mem_gib():
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 1048576, 1)

machine = {
    "nproc": os.cpu_count(),
    "cpu": cpu_model(),
    "mem_gib": mem_gib(),
    "kernel": platform.release(),
    "librdkafka": "$LIBRDKAFKA",
    "tansu": "$TANSU_VERSION",
    "loadavg_at_end": os.getloadavg()[0],
}

runs = []
for line in open(rows_path):
    mode, rnd, secs, rss, user, sys_, status, note, inner, cpu_a, cpu_b = line.rstrip("\n").split("\t")
    s = float(secs)
    runs.append({
        "mode": mode, "round": int(rnd), "status": status, "note": note,
        "seconds": s,
        "records_per_s": records / s,
        "mb_per_s": data_bytes / s / 1e6,
        "peak_rss_mib": round(int(rss) / 1024, 1),
        "cpu_user_s": float(user),
        "cpu_sys_s": float(sys_),
        "inner_seconds": float(inner) if inner else None,
        "broker_a_cpu_s": float(cpu_a),
        "broker_b_cpu_s": float(cpu_b),
    })

ok = lambda m: [r for r in runs if r["mode"] == m and r["status"] == "ok"]
ceil = ok("ceiling")
ceil_median = statistics.median(r["seconds"] for r in ceil) if ceil else None
for r in runs:
    if "seconds" in r and ceil_median:
        r["ratio_to_ceiling"] = ceil_median / r["seconds"]

summary = {}
for m in modes:
    rs = ok(m)
    if not rs:
        summary[m] = {"status": "no successful run"}
        continue
    med = statistics.median(r["seconds"] for r in rs)
    summary[m] = {
        "status": "ok",
        "runs": len(rs),
        "median_seconds": med,
        "records_per_s": records / med,
        "mb_per_s": data_bytes / med / 1e6,
        "ratio_to_ceiling": (ceil_median / med) if ceil_median else None,
        "max_peak_rss_mib": max(r["peak_rss_mib"] for r in rs),
        "median_cpu_s": statistics.median(r["cpu_user_s"] + r["cpu_sys_s"] for r in rs),
    }

failures = [r for r in runs if r["status"] == "FAILED"]
rss_over = [r for r in runs if big and not r["mode"].startswith("ceiling") and r.get("peak_rss_mib", 0) > rss_limit]

print()
print(f"kreplicate benchmark: {records:,} records x {size} B values ({key_size} B keys, {headers} header(s)),"
      f" {partitions} partitions, {data_bytes / 1e6:,.0f} MB key+value; tansu memory brokers on loopback")
hdr = (f"{'mode':<19} {'round':>5} {'seconds':>8} {'records/s':>11} {'MB/s':>7} {'ratio':>6} {'RSS MiB':>8}"
       f" {'CPU s':>6} {'brokers':>8}  status")
print(hdr)
print("-" * len(hdr))
for r in runs:
    ratio = f"{r['ratio_to_ceiling']:.2f}" if "ratio_to_ceiling" in r else "-"
    extra = f" ({r['note']})" if r["note"] else ""
    print(f"{r['mode']:<19} {r['round']:>5} {r['seconds']:>8.2f} {r['records_per_s']:>11,.0f} {r['mb_per_s']:>7.1f}"
          f" {ratio:>6} {r['peak_rss_mib']:>8.1f} {r['cpu_user_s'] + r['cpu_sys_s']:>6.1f}"
          f" {r['broker_a_cpu_s'] + r['broker_b_cpu_s']:>8.1f}  {r['status']}{extra}")
print()
for m, s in summary.items():
    if s["status"] != "ok":
        print(f"median {m:<19} {s['status']}")
        continue
    ratio = f"{s['ratio_to_ceiling']:.2f}" if s["ratio_to_ceiling"] else "-"
    print(f"median {m:<19} {s['median_seconds']:7.2f} s  {s['records_per_s']:>10,.0f} rec/s  {s['mb_per_s']:6.1f} MB/s"
          f"  ratio {ratio}  max RSS {s['max_peak_rss_mib']:.1f} MiB  CPU {s['median_cpu_s']:.1f} s  ({s['runs']} runs)")
print()
print(f"machine: {machine['nproc']} CPUs, {machine['cpu']}, {machine['mem_gib']} GiB, Linux {machine['kernel']},"
      f" librdkafka {machine['librdkafka']}, {machine['tansu']}, load avg {machine['loadavg_at_end']:.2f} at end")
print("seconds = whole-process wall time (start, metadata, topic creation, group join, copy, flush, commit);"
      " MB = 10^6 B of key+value;\nratio = throughput / ceiling median; RSS = peak (GNU time %M); CPU s = copier user+sys;"
      " brokers = CPU s of tansu A+B during the run")
if big:
    print(f"peak RSS check (BIG): kreplicate <= {rss_limit} MiB: " + ("PASS" if not rss_over else
          "FAIL: " + ", ".join(f"{r['mode']} r{r['round']} {r['peak_rss_mib']} MiB" for r in rss_over)))
if failures:
    print(f"FAILED runs: {len(failures)} (left out of the medians)")

result = {
    "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "params": {"records": records, "value_bytes": size, "key_bytes": key_size, "headers": headers,
               "partitions": partitions, "rounds": rounds, "big": big, "rss_limit_mib": rss_limit,
               "data_bytes": data_bytes, "fresh_target_per_run": "$FRESH_TARGET" == "1",
               "modes": modes, "ceiling_args": "$CEILING_ARGS",
               "kreplicate_extra": "$KR_EXTRA", "eos_extra": "$EOS_EXTRA"},
    "machine": machine,
    "ceiling_median_seconds": ceil_median,
    "runs": runs,
    "summary": summary,
    "ok": not failures and not rss_over,
}
tmp = out_path + ".tmp"
with open(tmp, "w") as f:
    json.dump(result, f, indent=2)
    f.write("\n")
os.replace(tmp, out_path)
print(f"results: {out_path}")
sys.exit(0 if result["ok"] else 1)
EOF
STATUS=$?
set -e
exit "$STATUS"
