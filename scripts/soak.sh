#!/usr/bin/env bash
# A nemesis soak (not part of CI): two three-node Kafka clusters, a writer that never stops
# (per-partition sequence numbers), a continuous kreplicate run, and one fault at a time drawn
# from the seed, while a read_committed checker reads the target for the whole soak.
#
#   scripts/soak.sh [--minutes M] [--seed S] [--guarantee at-least-once|exactly-once] [--kinds K,K]
#
# --kinds draws only the fault kinds listed (the numbers in the case below), for a soak focused
# on some faults: e.g. --kinds 9,10,11,12 for the compound ones.
#
# Faults: kill -9 of kreplicate (then a restart), SIGSTOP of kreplicate for 5-20 s then SIGCONT,
# kill -9 of one broker node of either cluster and its restart, a rolling restart of either
# cluster; through a proxy between kreplicate and one node of the target (every target node
# advertises a proxy, `soak proxy`): a one-way hold (requests held, answers flow) or a two-way
# hold for 5-20 s, latency of 200-2000 ms for 10-30 s, a link that flaps (cut, down, up, every
# 1-4 s) for 10-30 s; under at-least-once, member churn: a second run joins the group for 10-30
# s, under the classic or the KIP-848 protocol, then stops (SIGTERM, exit 0 expected).
# Compound faults (issue 41), each landing while records are held in flight (the run's metrics
# say how many, logged as `evidence:`): a one-way hold longer than the runs' --delivery-timeout
# (30 s; the run must fail, exit 1, or under exactly-once abort and go on); kill -9 during a
# one-way hold; under at-least-once,
# SIGSTOP past the group's session (50 s; 45 s is Kafka's default; past the delivery timeout
# too, so a run with a record still queued fails, exit 1) and a revoke during a
# one-way hold (a churn member joins while the run's flush cannot finish).
# After each fault a run that exited is recorded and started again. At the end: the
# writer stops, the continuous run gets SIGTERM (exit 0 expected), one --until-caught-up run
# copies the rest, and every record is checked (missing, duplicates, order).
# History in target/soak/<time>-<guarantee>-<seed>/: timeline.log (every fault and exit),
# run-N.stderr and run-N.exit for every kreplicate run, the writer's and checkers' JSON, the seed.
# The verdict also bounds at-least-once duplicates by what the runs had copied past their last
# commit (sampled every second from their metrics, plus a second's worth of copying each),
# checks at-least-once's order on each record's last copy (a delivery failure's gap is filled
# after later records; the live checker counts such gaps without failing), and under
# exactly-once requires aborted transactions when a hold outlasted the delivery timeout
# (read_committed checkers see none of them), or an abort that could not end (the held node was
# the transaction coordinator: the run exits 1, its records never committed). Prints one verdict line; exit 0 when it says PASS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

minutes=30 seed=$((RANDOM * 32768 + RANDOM)) guarantee=at-least-once kinds=""
while (($#)); do
    case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --guarantee) guarantee="$2"; shift 2 ;;
    --kinds) kinds="$2"; shift 2 ;;
    *) echo "usage: scripts/soak.sh [--minutes M] [--seed S] [--guarantee G] [--kinds K,K]" >&2; exit 2 ;;
    esac
done
case "$guarantee" in at-least-once | exactly-once) ;; *) echo "soak: --guarantee at-least-once or exactly-once" >&2; exit 2 ;; esac
if [ -n "$kinds" ] && [ "$guarantee" = exactly-once ] && [[ ",$kinds," != *,[0-79],* && ",$kinds," != *,11,* ]]; then
    echo "soak: --kinds $kinds has only faults that need a group (8, 10, 12); exactly-once has none" >&2
    exit 2
fi

RANDOM=$seed # the nemesis' draws; the writer takes the seed too
hist="$PWD/target/soak/$(date -u +%Y%m%dT%H%M%S)-$guarantee-$seed"
mkdir -p "$hist"
echo "$seed" >"$hist/seed"
export KREPLICATE_KAFKA_HOME="$hist/kafka" KREPLICATE_KAFKA_JVM_OPTS=-XX:TieredStopAtLevel=1
export KAFKA_HEAP_OPTS="-Xmx384m -Xms384m" KREPLICATE_KAFKA_START_TIMEOUT=180
t0=$SECONDS
log() { echo "T+$((SECONDS - t0))s $*" | tee -a "$hist/timeline.log" >&2; }

cargo build -q --bin kreplicate --example soak
# The soak's own copies: a build during the soak does not change what it runs.
mkdir -p "$hist/bin"
cp target/debug/kreplicate target/debug/examples/soak "$hist/bin/"
kr=$hist/bin/kreplicate soak=$hist/bin/soak libs=$(scripts/kafka.sh libs)
a=soak-a b=soak-b topic=events
declare -A faults=() pids=()
cleanup() {
    touch "$hist/stop.writer" "$hist/stop.checker"
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    scripts/kafka.sh kill "$a" 2>/dev/null || true
    scripts/kafka.sh kill "$b" 2>/dev/null || true
}
trap cleanup EXIT

log "seed $seed, $guarantee, $minutes minutes: starting two three-node clusters"
# The target's nodes advertise proxy ports: kreplicate reaches each node through `soak proxy`.
read -r -a pports < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
scripts/kafka.sh start "$a" 0 --nodes 3 >"$hist/a.line" &
scripts/kafka.sh start "$b" 0 --nodes 3 --advertise-port "$(IFS=,; echo "${pports[*]}")" >"$hist/b.line"
wait
boot() { sed 's/.*bootstrap=\([^ ]*\).*/\1/' "$hist/$1.line"; }
A=$(boot a) Breal=$(boot b)
B=$(printf '127.0.0.1:%s,' "${pports[@]}") B=${B%,}
# The checkers read the target past the proxies, on its nodes' own INTERNAL listeners.
Bint=$(for i in 1 2 3; do sed -n 's/^listeners=.*INTERNAL:\/\/\([^,]*\).*/\1/p' "$KREPLICATE_KAFKA_HOME/$b/n$i/server.properties"; done | paste -sd,)
: >"$hist/proxy.ctl"
"$soak" proxy --listen "$(IFS=,; echo "${pports[*]}")" --upstream "$(echo "$Breal" | sed 's/127\.0\.0\.1://g')" \
    --control "$hist/proxy.ctl" >"$hist/proxy.out" 2>"$hist/proxy.err" &
pids[proxy]=$!
log "source $A, target $B (proxies of $Breal; checkers on $Bint)"

"$soak" write --bootstrap "$A" --topic "$topic" --seed "$seed" --status "$hist/writer.json" \
    --stop "$hist/stop.writer" >"$hist/writer.out" 2>"$hist/writer.err" &
pids[writer]=$!
"$soak" check --bootstrap "$Bint" --topic "$topic" --guarantee "$guarantee" \
    --status "$hist/checker.json" --stop "$hist/stop.checker" >"$hist/checker.out" 2>"$hist/checker.err" &
pids[checker]=$!

run_n=0 run_pid="" exits_unexpected=0 peak_rss=0 churn_n=0 held_missed=0 abort_failures=0
metrics="127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
delivery_timeout=30
args=(--from "$A" --to "$B" --topics "$topic" --group soak --guarantee "$guarantee" --create-topics
    --replication-factor 3 --commit-interval 2s --delivery-timeout "${delivery_timeout}s"
    --metrics-addr "$metrics")
# One line of the run's metrics: records in flight, the oldest one's age, copied past the last
# commit (per partition: the last copied offset + 1 minus the committed position, or what it
# copied in this run before its first commit), records
# copied, aborted transactions. Empty when the run does not answer.
sample() {
    curl -sf --max-time 2 "http://$metrics/metrics" 2>/dev/null | python3 -c '
import sys, collections
v = collections.defaultdict(dict)
for line in sys.stdin:
    if line.startswith("#") or not line.strip(): continue
    name_labels, value = line.rsplit(" ", 1)
    name, _, labels = name_labels.partition("{")
    v[name][labels] = float(value)
one = lambda n: sum(v[n].values())
# Without a committed position yet, all the partition copied in this run is past it.
committed, copied = v["kreplicate_committed_offset"], v["kreplicate_records_copied_total"]
past = sum(max(0.0, last + 1 - committed[l]) if l in committed else copied.get(l, 0.0)
           for l, last in v["kreplicate_last_copied_offset"].items())
print(int(one("kreplicate_records_in_flight")), round(one("kreplicate_oldest_unacknowledged_seconds"), 1),
      int(past), int(one("kreplicate_records_copied_total")), int(one("kreplicate_transactions_aborted_total")))' 2>/dev/null || true
}
# Every second: each run's highest past-commit count and copy rate, and its last abort count.
sampler() {
    local prev_copied=0 prev_run=0 line n in_flight oldest past copied aborted
    while [ ! -e "$hist/stop.sampler" ]; do
        line=$(sample)
        n=$(cat "$hist/run.current" 2>/dev/null || echo 0)
        if [ -n "$line" ] && ((n > 0)); then
            read -r in_flight oldest past copied aborted <<<"$line"
            ((n == prev_run)) || prev_copied=$copied
            python3 - "$hist/run-$n.bound" "$past" "$((copied - prev_copied))" "$aborted" <<'PY'
import json, sys
path, past, rate, aborted = sys.argv[1], int(sys.argv[2]), max(0, int(sys.argv[3])), int(sys.argv[4])
try: b = json.load(open(path))
except Exception: b = {"past_commit": 0, "rate": 0, "aborted": 0}
b = {"past_commit": max(b["past_commit"], past), "rate": max(b["rate"], rate), "aborted": max(b["aborted"], aborted)}
json.dump(b, open(path, "w"))
PY
            prev_copied=$copied prev_run=$n
        fi
        sleep 1
    done
}
# held_evidence: waits (at most 30 s) until a record has waited 1 s unacknowledged; logs it
held_evidence() {
    local line in_flight oldest
    for _ in $(seq 60); do
        line=$(sample)
        read -r in_flight oldest _ <<<"${line:-0 0 0}"
        if python3 -c "import sys; sys.exit(0 if float('$oldest') >= 1.0 else 1)"; then
            log "evidence: $1: $in_flight records in flight, the oldest waiting ${oldest}s"
            return 0
        fi
        sleep 0.5
    done
    log "evidence: $1: no record held in flight within 30 s (the fault did not land)"
    held_missed=$((held_missed + 1))
    return 1
}
# leader_of P: the target node that leads partition P of the topic now. A held fault holds a
# leader's requests: a node restarted earlier leads nothing until the preferred leaders are
# elected again (a kill -9 during a hold of such a node "did not land" in a 30-minute soak).
leader_of() {
    java -Xmx128m -XX:TieredStopAtLevel=1 -Dlog4j2.level=ERROR -cp "$libs/*" \
        org.apache.kafka.tools.TopicCommand --bootstrap-server "$Bint" --describe --topic "$topic" \
        2>/dev/null | sed -n "s/.*Partition: $1[[:space:]].*Leader: \([0-9]*\).*/\1/p"
}
# held_node: a node for a held fault, the leader of a partition drawn from the seed (the node of
# that number when the leader is not known)
held_node() {
    local p=$((RANDOM % 3)) l
    l=$(leader_of "$p") || l=""
    [[ "$l" =~ ^[123]$ ]] && i=$l || i=$((1 + p))
}
# copying: waits (at most 90 s) until the current run copied a record: a hold that lands while
# a restarted run still checks the clusters holds no record in flight (two faults "did not land"
# that way in a 30-minute soak)
copying() {
    local copied
    for _ in $(seq 90); do
        read -r _ _ _ copied _ <<<"$(sample)"
        ((${copied:-0} > 0)) && return 0
        sleep 1
    done
}
start_run() {
    run_n=$((run_n + 1))
    RUST_LOG=warn "$kr" "${args[@]}" "$@" >"$hist/run-$run_n.out" 2>"$hist/run-$run_n.stderr" &
    run_pid=$!
    echo "$run_n" >"$hist/run.current"
    pids[run]=$run_pid
    log "run $run_n started (pid $run_pid)"
}
rss() { # the run's peak RSS so far, kB
    local hwm
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$run_pid/status" 2>/dev/null || echo 0)
    ((${hwm:-0} <= peak_rss)) || peak_rss=$hwm
}
# end_run EXPECTED: reap the run, record its exit; an exit nobody caused is counted
end_run() {
    local code=0
    wait "$run_pid" || code=$?
    echo "$code" >"$hist/run-$run_n.exit"
    log "run $run_n exited $code${1:+ (expected: $1)}"
    [ -n "${1:-}" ] || exits_unexpected=$((exits_unexpected + 1))
}
check_run() { # a run that exited by itself is recorded and started again
    rss
    if ! kill -0 "$run_pid" 2>/dev/null; then
        end_run
        start_run
    fi
}
# A second member of the run's group under $proto (the run's arguments but its --metrics-addr,
# the last two); end_churn stops it with SIGTERM, exit 0 expected.
start_churn() {
    churn_n=$((churn_n + 1))
    RUST_LOG=warn "$kr" "${args[@]:0:${#args[@]}-2}" -X "group.protocol=$proto" \
        >"$hist/churn-$churn_n.out" 2>"$hist/churn-$churn_n.stderr" &
    cpid=$!
    pids[churn]=$cpid
}
end_churn() {
    local ccode=0
    kill -TERM "$cpid" 2>/dev/null || true
    wait "$cpid" || ccode=$?
    echo "$ccode" >"$hist/churn-$churn_n.exit"
    log "churn run $churn_n exited $ccode (expected: SIGTERM, 0)"
    [ "$ccode" = 0 ] || exits_unexpected=$((exits_unexpected + 1))
}
# Draws stay in this shell: bash reseeds RANDOM in a subshell, $(...) would leave the seed's path.
pick() {
    c=$a
    ((RANDOM % 2)) || c=$b
    i=$((1 + RANDOM % 3))
}

# The source topic exists once the writer wrote its first figures.
for _ in $(seq 120); do [ -f "$hist/writer.json" ] && break; sleep 1; done
start_run
sampler &
pids[sampler]=$!
deadline=$((SECONDS + minutes * 60))
while ((SECONDS < deadline)); do
    sleep $((10 + RANDOM % 20))
    check_run
    ((SECONDS < deadline)) || break
    # Member churn and a session need a group: exactly-once owns a static shard (a second run
    # would fence it).
    while :; do
        kind=$((RANDOM % 13))
        [ -z "$kinds" ] || [[ ",$kinds," == *",$kind,"* ]] || continue
        [ "$guarantee" = exactly-once ] && ((kind == 8 || kind == 10 || kind == 12)) && continue
        break
    done
    case $kind in
    0)
        rss
        kill -KILL "$run_pid"
        log "fault: kill -9 kreplicate run $run_n"
        faults[kill_kreplicate]=$((${faults[kill_kreplicate]:-0} + 1))
        end_run "killed"
        start_run
        ;;
    1)
        s=$((5 + RANDOM % 16))
        kill -STOP "$run_pid"
        log "fault: SIGSTOP kreplicate run $run_n for ${s}s"
        sleep "$s"
        kill -CONT "$run_pid"
        log "SIGCONT run $run_n"
        faults[stop_kreplicate]=$((${faults[stop_kreplicate]:-0} + 1))
        ;;
    2)
        pick
        s=$((3 + RANDOM % 13))
        log "fault: kill -9 $c node $i, restart after ${s}s"
        scripts/kafka.sh kill "$c" --node "$i"
        sleep "$s"
        if scripts/kafka.sh restart "$c" --node "$i" >>"$hist/timeline.log" 2>&1; then
            log "$c node $i back"
        else
            log "$c node $i did not restart (see above)"
        fi
        faults[kill_broker]=$((${faults[kill_broker]:-0} + 1))
        ;;
    3)
        pick
        log "fault: rolling restart of $c"
        if scripts/kafka.sh roll "$c" >>"$hist/timeline.log" 2>&1; then
            log "$c rolled"
        else
            log "$c: the roll failed (see above)"
        fi
        faults[roll]=$((${faults[roll]:-0} + 1))
        ;;
    4 | 5)
        i=$((1 + RANDOM % 3)) s=$((5 + RANDOM % 16)) mode=hold_requests
        ((kind == 4)) || mode=hold
        echo "$i $mode" >"$hist/proxy.ctl"
        log "fault: $mode between kreplicate and target node $i for ${s}s"
        sleep "$s"
        : >"$hist/proxy.ctl"
        log "target node $i's link forwards again"
        faults[$mode]=$((${faults[$mode]:-0} + 1))
        ;;
    6 | 7)
        i=$((1 + RANDOM % 3)) s=$((10 + RANDOM % 21)) mode=latency ms=$((200 + RANDOM % 1801))
        ((kind == 6)) || { mode=flap ms=$((1000 + RANDOM % 3001)); }
        echo "$i $mode $ms" >"$hist/proxy.ctl"
        log "fault: $mode ${ms}ms between kreplicate and target node $i for ${s}s"
        sleep "$s"
        : >"$hist/proxy.ctl"
        log "target node $i's link forwards again"
        faults[$mode]=$((${faults[$mode]:-0} + 1))
        ;;
    8)
        s=$((10 + RANDOM % 21)) proto=consumer
        ((RANDOM % 2)) || proto=classic
        start_churn
        log "fault: member churn: churn run $churn_n ($proto protocol, pid $cpid) joins for ${s}s"
        sleep "$s"
        end_churn
        faults[churn_$proto]=$((${faults[churn_$proto]:-0} + 1))
        ;;
    9)
        copying
        held_node
        echo "$i hold_requests" >"$hist/proxy.ctl"
        log "fault: hold_requests between kreplicate and target node $i past --delivery-timeout ${delivery_timeout}s"
        read -r _ _ _ _ aborted_before <<<"$(sample)"
        if held_evidence "hold past the delivery timeout"; then
            # The run fails once a held record's delivery times out: records sent meanwhile end
            # within a second timeout, then the commit and the close (74 s in a 30-minute soak).
            for _ in $(seq $((2 * delivery_timeout + 40))); do kill -0 "$run_pid" 2>/dev/null || break; sleep 1; done
        fi
        : >"$hist/proxy.ctl"
        log "target node $i's link forwards again"
        read -r _ _ _ _ aborted <<<"$(sample)"
        if kill -0 "$run_pid" 2>/dev/null && [ "$guarantee" = exactly-once ] &&
            ((${aborted:-0} > ${aborted_before:-0})); then
            # Exactly-once aborts the transaction whose records timed out and goes on.
            log "run $run_n aborted $((aborted - ${aborted_before:-0})) transactions and goes on"
        elif kill -0 "$run_pid" 2>/dev/null; then
            log "run $run_n still runs after a hold past its delivery timeout"
            exits_unexpected=$((exits_unexpected + 1))
        else
            end_run "a delivery failure, 1"
            [ "$(cat "$hist/run-$run_n.exit")" = 1 ] || exits_unexpected=$((exits_unexpected + 1))
            # Exactly-once tried to abort, and the abort could not end: the held node was the
            # transaction coordinator.
            if [ "$guarantee" = exactly-once ] && grep -q "aborting a transaction as .* failed" "$hist/run-$run_n.stderr"; then
                abort_failures=$((abort_failures + 1))
            fi
            start_run
        fi
        faults[hold_past_timeout]=$((${faults[hold_past_timeout]:-0} + 1))
        ;;
    10)
        log "evidence: SIGSTOP past the session: $(sample | cut -d' ' -f1) records in flight"
        kill -STOP "$run_pid"
        log "fault: SIGSTOP kreplicate run $run_n for 50s (past the group's 45 s session)"
        sleep 50
        kill -CONT "$run_pid"
        log "SIGCONT run $run_n"
        # 50 s is past --delivery-timeout too: a record still queued then times out, and the
        # run fails (exit 1) once what it sent meanwhile ended; one whose records were all
        # answered before the stop goes on.
        for _ in $(seq $((2 * delivery_timeout + 40))); do kill -0 "$run_pid" 2>/dev/null || break; sleep 1; done
        if ! kill -0 "$run_pid" 2>/dev/null; then
            end_run "a delivery failure after a stop past --delivery-timeout, 1"
            [ "$(cat "$hist/run-$run_n.exit")" = 1 ] || exits_unexpected=$((exits_unexpected + 1))
            start_run
        fi
        faults[stop_past_session]=$((${faults[stop_past_session]:-0} + 1))
        ;;
    11)
        copying
        held_node
        echo "$i hold_requests" >"$hist/proxy.ctl"
        log "fault: kill -9 kreplicate run $run_n during a hold_requests of target node $i"
        held_evidence "kill -9 during a hold" || true
        rss
        kill -KILL "$run_pid"
        end_run "killed"
        : >"$hist/proxy.ctl"
        log "target node $i's link forwards again"
        start_run
        faults[kill_during_hold]=$((${faults[kill_during_hold]:-0} + 1))
        ;;
    12)
        proto=consumer
        ((RANDOM % 2)) || proto=classic
        copying
        held_node
        echo "$i hold_requests" >"$hist/proxy.ctl"
        log "fault: a revoke during a hold_requests of target node $i ($proto churn member)"
        held_evidence "revoke during a hold" || true
        start_churn
        sleep 15
        : >"$hist/proxy.ctl"
        log "target node $i's link forwards again"
        sleep 5
        end_churn
        faults[revoke_during_hold]=$((${faults[revoke_during_hold]:-0} + 1))
        ;;
    esac
    check_run
done
touch "$hist/stop.sampler"

log "soak over: the writer stops, the run gets SIGTERM, a final run copies the rest"
touch "$hist/stop.writer"
writer_code=0
wait "${pids[writer]}" || writer_code=$?
log "writer exited $writer_code: $(cat "$hist/writer.out" 2>/dev/null)"
rss
kill -TERM "$run_pid"
end_run "SIGTERM, 0"
last_code=$(cat "$hist/run-$run_n.exit")
[ "$last_code" = 0 ] || exits_unexpected=$((exits_unexpected + 1))
run_n=$((run_n + 1))
code=0
RUST_LOG=warn "$kr" "${args[@]}" --until-caught-up >"$hist/run-$run_n.out" 2>"$hist/run-$run_n.stderr" || code=$?
echo "$code" >"$hist/run-$run_n.exit"
log "final --until-caught-up run $run_n exited $code"
[ "$code" = 0 ] || exits_unexpected=$((exits_unexpected + 1))

# The checker reads on until it saw the last record of every partition (or 120 s).
caught_up() {
    python3 -c '
import json, sys
w, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sys.exit(0 if all(h >= s - 1 for h, s in zip(c["highest"], w["sent"])) else 1)' "$hist/writer.json" "$hist/checker.json" 2>/dev/null
}
for _ in $(seq 120); do caught_up && break; sleep 1; done
touch "$hist/stop.checker"
checker_code=0
wait "${pids[checker]}" || checker_code=$?
log "checker exited $checker_code: $(cat "$hist/checker.out" 2>/dev/null)"
final_code=0
"$soak" final --source "$A" --target "$Bint" --topic "$topic" --guarantee "$guarantee" \
    >"$hist/final.json" 2>>"$hist/final.err" || final_code=$?
log "final check exited $final_code: $(cat "$hist/final.json")"

field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], "?"))' "$1" "$2" 2>/dev/null || echo "?"; }
fault_list=""
for k in "${!faults[@]}"; do fault_list+="${fault_list:+,}$k=${faults[$k]}"; done
errors=$(cat "$hist"/run-*.stderr | grep -c " ERROR " || true)
# At-least-once: duplicates within what the runs copied past their last commit; exactly-once:
# aborts when a hold outlasted the delivery timeout.
read -r dup_bound aborts < <(python3 -c '
import glob, json
bs = [json.load(open(p)) for p in glob.glob(__import__("sys").argv[1] + "/run-*.bound")]
print(sum(b["past_commit"] + b["rate"] for b in bs), sum(b["aborted"] for b in bs))' "$hist")
# Only a hold past the delivery timeout makes the run itself abort: records held for less are
# delivered after the hold, and a killed run's transaction is aborted by its successor's fencing
# (which its metrics do not count; a 10-minute soak with 6 such faults failed on it).
held=${faults[hold_past_timeout]:-0}
duplicates=$(field "$hist/final.json" duplicates)
verdict=PASS
((writer_code == 0 && checker_code == 0 && final_code == 0 && exits_unexpected == 0 && held_missed == 0)) || verdict=FAIL
[[ "$duplicates" =~ ^[0-9]+$ ]] || verdict=FAIL
[ "$guarantee" != at-least-once ] || ((${duplicates//[!0-9]/0} <= dup_bound)) || verdict=FAIL
[ "$guarantee" != exactly-once ] || ((held == 0 || aborts + abort_failures > 0)) || verdict=FAIL
line="soak: $verdict guarantee=$guarantee seed=$seed minutes=$minutes faults={${fault_list}}"
line+=" records=$(field "$hist/final.json" records) missing=$(field "$hist/final.json" missing)"
line+=" duplicates=$(field "$hist/final.json" duplicates) disorder=$(field "$hist/final.json" disorder)"
line+=" live_gaps=$(field "$hist/checker.json" gaps) live_duplicates=$(field "$hist/checker.json" duplicates)"
line+=" duplicate_bound=$dup_bound aborts=$aborts abort_failures=$abort_failures held_faults_missed=$held_missed"
line+=" runs=$run_n unexpected_exits=$exits_unexpected error_lines=$errors peak_rss_kb=$peak_rss history=$hist"
echo "$line" | tee "$hist/verdict"
[ "$verdict" = PASS ]
