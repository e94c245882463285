#!/usr/bin/env bash
# The target producer's codec (issue 35): what a copy of a compressed topic costs on the
# target's disk and in CPU with compression.type none, lz4 and zstd.
#
# Starts two Apache Kafka clusters with scripts/kafka.sh, loads a source topic with Kafka's own
# producer (ProducerPerformance, compression.type=zstd, its default batching) from a file of
# JSON order events (compressible, like most topics), then copies it with kreplicate
# --until-caught-up once per codec and round (the order alternates every round), each into a
# topic of its own. Per copy: the copier's CPU seconds (utime + stime), the target broker's CPU
# seconds meanwhile, the wall time, and the bytes of the target topic's log segments against
# the source's. Prints one tab-separated row per copy, then the medians per codec.
#
# Usage: bench/compression.sh   Env: RECORDS [400000] PARTITIONS [4] ROUNDS [3]
#   CODECS ["none lz4 zstd"] KR [target/release/kreplicate] NO_BUILD [0] KEEP [0]
# Exit: 0 every copy complete, 1 otherwise.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
RECORDS="${RECORDS:-400000}"
PARTITIONS="${PARTITIONS:-4}"
ROUNDS="${ROUNDS:-3}"
CODECS="${CODECS:-none lz4 zstd}"
KR="${KR:-$REPO/target/release/kreplicate}"
NO_BUILD="${NO_BUILD:-0}"
KEEP="${KEEP:-0}"

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: ERROR: %s\n' "$*" >&2; exit 1; }

[ "$NO_BUILD" = 1 ] || cargo build --release --bin kreplicate >&2 || die "build failed"
[ -x "$KR" ] || die "missing $KR"
LIBS="$(bash scripts/kafka.sh libs)" || die "no Kafka jars (scripts/install-deps.sh)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kreplicate-compression.XXXXXX")"
export KREPLICATE_KAFKA_HOME="$WORK/kafka"
export KREPLICATE_KAFKA_START_TIMEOUT="${KREPLICATE_KAFKA_START_TIMEOUT:-300}"
STATUS=1
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    for n in cmp-a cmp-b; do bash scripts/kafka.sh stop "$n" >/dev/null 2>&1 || true; done
    if [ "$STATUS" = 0 ] && [ "$KEEP" != 1 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}
trap cleanup EXIT

# start NAME VAR: VAR = bootstrap, VAR_PID, VAR_DIR.
start() {
    local line
    line="$(bash scripts/kafka.sh start "$1" 0)" || die "cluster $1 did not start"
    printf -v "$2" '%s' "$(sed -n 's/.*bootstrap=\([^ ]*\).*/\1/p' <<<"$line")"
    printf -v "${2}_PID" '%s' "$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' <<<"$line")"
    printf -v "${2}_DIR" '%s' "$(sed -n 's/.*dir=\([^ ]*\).*/\1/p' <<<"$line")"
}
start cmp-a SRC
start cmp-b DST
log "source $SRC, target $DST, work dir $WORK"

CLK_TCK="$(getconf CLK_TCK)"
cpu_seconds() {
    awk -v hz="$CLK_TCK" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$1/stat"
}
# segment_bytes DATA_DIR TOPIC: the bytes of the topic's log segments (all partitions).
segment_bytes() {
    find "$1/data" -path "$1/data/$2-*" -name '*.log' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'
}

# 20,000 distinct order events of 250-400 bytes; the producer picks one at random per record.
python3 - "$WORK/payloads.txt" <<'EOF'
import json, random, sys
rnd = random.Random(35)
regions = ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-southeast-1"]
states = ["CREATED", "PAID", "PACKED", "SHIPPED", "DELIVERED", "CANCELLED"]
with open(sys.argv[1], "w") as f:
    for i in range(20000):
        items = [{"sku": f"SKU-{rnd.randrange(100000):05d}", "qty": rnd.randrange(1, 5),
                  "price": round(rnd.uniform(1, 300), 2)} for _ in range(rnd.randrange(1, 4))]
        event = {"order_id": f"ord-{rnd.randrange(10**9):09d}", "customer": f"cust-{rnd.randrange(10**6):06d}",
                 "status": rnd.choice(states), "region": rnd.choice(regions), "currency": "EUR",
                 "created_at": f"2026-12-0{rnd.randrange(1, 4)}T{rnd.randrange(24):02d}:{rnd.randrange(60):02d}:{rnd.randrange(60):02d}.{rnd.randrange(1000):03d}Z",
                 "items": items, "channel": rnd.choice(["web", "app", "store"])}
        f.write(json.dumps(event) + "\n")
EOF

java -cp "$LIBS/*" org.apache.kafka.tools.TopicCommand --bootstrap-server "$SRC" --create \
    --topic orders --partitions "$PARTITIONS" >/dev/null
java -cp "$LIBS/*" org.apache.kafka.tools.ProducerPerformance --topic orders \
    --num-records "$RECORDS" --throughput -1 --payload-file "$WORK/payloads.txt" \
    --producer-props "bootstrap.servers=$SRC" compression.type=zstd acks=all >"$WORK/load.txt" \
    || die "loading the source failed (see $WORK/load.txt)"
SRC_BYTES="$(segment_bytes "$SRC_DIR" orders)"
PAYLOAD_BYTES="$(awk -v n="$RECORDS" '{ s += length($0) } END { printf "%d", s / NR * n }' "$WORK/payloads.txt")"
log "source: $RECORDS records, ~$PAYLOAD_BYTES value bytes, $SRC_BYTES bytes of zstd log segments"

ROWS="$WORK/rows.tsv"
printf 'codec\tround\tseconds\tcopier_cpu_s\ttarget_broker_cpu_s\ttarget_bytes\tagainst_source\n' | tee "$ROWS"
ok=1
for round in $(seq 1 "$ROUNDS"); do
    list="$CODECS"
    ((round % 2)) || list="$(tr ' ' '\n' <<<"$CODECS" | tac | tr '\n' ' ')"
    for codec in $list; do
        topic="orders.$codec.r$round"
        b0="$(cpu_seconds "$DST_PID")"
        t0="$(date +%s%N)"
        if ! /usr/bin/time -f '%U %S' -o "$WORK/$topic.time" "$KR" --from "$SRC" --to "$DST" \
            --topics orders --rename "$topic" --group "cmp-$topic" --create-topics \
            --until-caught-up --json --to-property "compression.type=$codec" \
            >"$WORK/$topic.json" 2>"$WORK/$topic.err"; then
            log "copy $topic failed: $(tail -n 2 "$WORK/$topic.err")"
            ok=0
            continue
        fi
        t1="$(date +%s%N)"
        b1="$(cpu_seconds "$DST_PID")"
        read -r u s <"$WORK/$topic.time"
        copied="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["records"])' "$WORK/$topic.json")"
        [ "$copied" = "$RECORDS" ] || { log "copy $topic: $copied of $RECORDS records"; ok=0; }
        # Kafka writes a segment's bytes on append: what the log dir holds is what was sent.
        bytes="$(segment_bytes "$DST_DIR" "$topic")"
        printf '%s\t%s\t%.2f\t%.2f\t%.2f\t%s\t%.2f\n' "$codec" "$round" \
            "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')" \
            "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" \
            "$(awk -v a="$b0" -v b="$b1" 'BEGIN { print b - a }')" \
            "$bytes" "$(awk -v a="$bytes" -v b="$SRC_BYTES" 'BEGIN { print a / b }')" | tee -a "$ROWS"
    done
done

python3 - "$ROWS" "$PAYLOAD_BYTES" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
gb = int(sys.argv[2]) / 1e9
print("\ncodec\tmedian s\tcopier CPU s per GB\ttarget broker CPU s per GB\ttarget bytes\tagainst the zstd source")
for codec in dict.fromkeys(r["codec"] for r in rows):
    rs = [r for r in rows if r["codec"] == codec]
    med = lambda k: statistics.median(float(r[k]) for r in rs)
    print(f"{codec}\t{med('seconds'):.2f}\t{med('copier_cpu_s') / gb:.1f}\t"
          f"{med('target_broker_cpu_s') / gb:.1f}\t{int(med('target_bytes')):,}\t{med('against_source'):.2f}")
EOF
[ "$ok" = 1 ] && STATUS=0
exit $((1 - ok))
