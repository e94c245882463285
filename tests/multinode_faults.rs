//! Faults that land on a live copy of a live writer's records, each where the test says and
//! proven there (issue 30): on three-node clusters, the leader of a copied partition killed -9
//! and brought back, under both guarantees; the target's transaction coordinator killed -9
//! while an EndTxn is on its way (gated on librdkafka's `debug=eos` line of the state change
//! it makes as it sends one, with the coordinator's answers delayed by a proxy so that none
//! can arrive first), once for a commit and once for an abort; and a single-node target
//! killed -9 and restarted on its log under a live exactly-once run. No run exits; nothing is
//! missing; exactly-once is exact for a read_committed reader; at-least-once duplicates are
//! bounded by what was written while the node was down. A target that loses two of its three
//! nodes is the exception: both runs exit 1 after `--delivery-timeout`, naming the partitions.
//! Each test prints its evidence (`evidence:` lines on stderr).

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::kr::{self, FAST_GROUP};
use crate::common::{self, Cluster, Kafka};
use crate::multinode::{assert_restarts_said_once, create_rf3, LiveWriter};

pub(crate) const PARTS: i32 = 3;

/// A killed node is fenced and its leaderships move after `broker.session.timeout.ms` (9 s by
/// default), and its restart waits as long for its old registration to expire: 4 s here keeps
/// each test near a minute. A commit whose coordinator died waits that long, plus an election.
pub(crate) const QUICK_FAILOVER: [&str; 4] = [
    "--set",
    "broker.session.timeout.ms=4000",
    "--set",
    "broker.heartbeat.interval.ms=1000",
];

/// A continuous run whose stderr is read as it is written, so a test can act on a line.
pub(crate) struct Live {
    pub guarantee: &'static str,
    pub group: String,
    pub target: String,
    pub addr: String,
    child: Option<Child>,
    lines: Arc<Mutex<Vec<(Instant, String)>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Live {
    /// `kreplicate` copying `topic` from `a` to `b` as `{topic}.{guarantee}` under
    /// `guarantee`, continuous, with `extra` flags and `RUST_LOG=rust_log`; the target topic
    /// gets the target's default replication factor (3 on a three-node cluster of kafka.sh).
    pub(crate) fn copy(
        a: &str,
        b: &str,
        topic: &str,
        guarantee: &'static str,
        rust_log: &str,
        extra: &[&str],
    ) -> Live {
        let addr = format!("127.0.0.1:{}", common::free_port());
        let group = common::unique(guarantee);
        let rename = format!("{{topic}}.{guarantee}");
        let mut args = vec![
            "--from",
            a,
            "--to",
            b,
            "--topics",
            topic,
            "--rename",
            &rename,
            "--group",
            &group,
            "--guarantee",
            guarantee,
            "--create-topics",
            "--commit-interval",
            "1s",
            "--metrics-addr",
            &addr,
            "--json",
        ];
        args.extend_from_slice(&FAST_GROUP);
        args.extend_from_slice(extra);
        eprintln!("running RUST_LOG={rust_log} kreplicate {}", args.join(" "));
        let mut child = kr::command(&args)
            .env("RUST_LOG", rust_log)
            .spawn()
            .expect("spawn kreplicate");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (l, stderr) = (lines.clone(), child.stderr.take().expect("stderr"));
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                l.lock().unwrap().push((Instant::now(), line));
            }
        });
        Live {
            guarantee,
            group,
            target: format!("{topic}.{guarantee}"),
            addr,
            child: Some(child),
            lines,
            reader: Some(reader),
        }
    }

    pub(crate) fn metric(&self, name: &str) -> f64 {
        kr::metric(&self.addr, name).unwrap_or(0.0)
    }

    pub(crate) fn copied(&self) -> f64 {
        self.metric("kreplicate_records_copied_total")
    }

    pub(crate) fn in_flight(&self) -> f64 {
        self.metric("kreplicate_records_in_flight")
    }

    /// Lines read so far.
    pub(crate) fn seen(&self) -> usize {
        self.lines.lock().unwrap().len()
    }

    /// The first line from number `from` on that contains `text`, and when it was read; fails
    /// after `limit`, or when the run exits first.
    pub(crate) fn wait_line(
        &mut self,
        from: usize,
        text: &str,
        limit: Duration,
    ) -> (Instant, String) {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(hit) = self.lines.lock().unwrap()[from..]
                .iter()
                .find(|(_, l)| l.contains(text))
                .cloned()
            {
                return hit;
            }
            self.still_running(&format!("the wait for {text:?}"));
            assert!(
                Instant::now() < deadline,
                "no line with {text:?} within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Lines from number `from` on that contain `text`.
    pub(crate) fn lines_with(&self, from: usize, text: &str) -> Vec<(Instant, String)> {
        self.lines.lock().unwrap()[from..]
            .iter()
            .filter(|(_, l)| l.contains(text))
            .cloned()
            .collect()
    }

    pub(crate) fn stderr(&self) -> String {
        let lines = self.lines.lock().unwrap();
        lines
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub(crate) fn still_running(&mut self, when: &str) {
        let run = self.child.as_mut().expect("the run");
        if let Some(status) = run.try_wait().expect("try_wait") {
            self.child = None;
            if let Some(r) = self.reader.take() {
                let _ = r.join();
            }
            panic!(
                "{} run exited ({status}) during {when}: {}",
                self.guarantee,
                self.stderr()
            );
        }
    }

    /// Waits until the run copied more than `than`.
    pub(crate) fn wait_copied(&mut self, than: f64, what: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.copied() <= than {
            self.still_running(what);
            if Instant::now() >= deadline {
                // What the run said is the evidence of where it stood (a CI failure left none).
                let stderr = self.stderr();
                let lines: Vec<&str> = stderr.lines().collect();
                panic!(
                    "{}: {what}: copied {} after {limit:?}, {} in flight; its last lines:\n{}",
                    self.guarantee,
                    self.copied(),
                    self.in_flight(),
                    lines[lines.len().saturating_sub(40)..].join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Once `oracle` (a target reader past any proxy) holds `total` records of the target,
    /// SIGTERM: the run exits 0, stopped. Its JSON.
    pub(crate) fn finish(&mut self, oracle: &str, total: u64) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let have = common::read_all(oracle, &self.target).len() as u64;
            if have >= total {
                break;
            }
            self.still_running("the wait for the last records");
            assert!(
                Instant::now() < deadline,
                "{} holds {have} of {total} records after 120 s: {}",
                self.target,
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
        let mut child = self.child.take().expect("the run");
        kr::signal(&child, "TERM");
        let mut stdout = child.stdout.take().expect("stdout");
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            assert!(Instant::now() < deadline, "no exit 60 s after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        };
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        assert_eq!(
            status.code(),
            Some(0),
            "{}: {}",
            self.guarantee,
            self.stderr()
        );
        let json: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
        assert_eq!(json["status"], "stopped", "{json}");
        if self.guarantee == "exactly-once" {
            eprintln!(
                "evidence: {}",
                common::assert_no_open_transaction(oracle, &self.target)
            );
        }
        json
    }
}

impl Live {
    /// Waits (at most `limit`) for the run to exit on its own: its exit code and stdout.
    pub(crate) fn exits(&mut self, limit: Duration) -> (Option<i32>, String) {
        let mut child = self.child.take().expect("the run");
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{} run did not exit within {limit:?}: {}",
                    self.guarantee,
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        let mut out = String::new();
        if let Some(mut stdout) = child.stdout.take() {
            let _ = stdout.read_to_string(&mut out);
        }
        (status.code(), out)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// SIGKILL `pid` at once (no script in between: the fault must land within a window).
fn kill9(pid: u32) {
    let ok = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -KILL {pid}");
}

/// Polls until every run has records in flight at once (sent, not yet acknowledged): the
/// moment a fault must land. Their figures then.
fn all_in_flight(runs: &mut [Live], limit: Duration) -> Vec<f64> {
    let deadline = Instant::now() + limit;
    loop {
        let now: Vec<f64> = runs.iter().map(Live::in_flight).collect();
        if now.iter().all(|n| *n > 0.0) {
            return now;
        }
        for r in runs.iter_mut() {
            r.still_running("the wait for records in flight");
        }
        assert!(
            Instant::now() < deadline,
            "never records in flight in every run at once: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Which partitions of `topics` node `node` leads.
fn led_by(c: &Cluster, node: usize, topics: &[&str]) -> Vec<String> {
    let mut led = Vec::new();
    for t in topics {
        for p in 0..PARTS {
            if c.leader(t, p) == node {
                led.push(format!("{t}[{p}]"));
            }
        }
    }
    led
}

/// One three-node cluster is source and target (`--rename`): the node that leads the copied
/// partition 0 on the target is killed -9 with records in flight in both runs, the runs go on
/// without it, it comes back on its log, the runs go on with it.
#[test]
fn issue_30_a_killed_leader_of_a_copied_partition_comes_back_under_both_guarantees() {
    let mut c = Cluster::start_with("kl", 3, &QUICK_FAILOVER);
    let topic = "orders";
    create_rf3(&c.bootstrap, topic);
    let writer = LiveWriter::start_on(&c.bootstrap, topic);
    let mut runs = [
        Live::copy(
            &c.bootstrap,
            &c.bootstrap,
            topic,
            "at-least-once",
            "warn",
            &[],
        ),
        Live::copy(
            &c.bootstrap,
            &c.bootstrap,
            topic,
            "exactly-once",
            "warn",
            &[],
        ),
    ];
    for r in runs.iter_mut() {
        r.wait_copied(0.0, "its start", Duration::from_secs(90));
    }
    let node = c.leader(&runs[0].target, 0);
    let led = led_by(&c, node, &[topic, &runs[0].target, &runs[1].target]);
    let node_addr = c.node_addr(node);

    let in_flight = all_in_flight(&mut runs, Duration::from_secs(30));
    let copied: Vec<f64> = runs.iter().map(Live::copied).collect();
    let (acked, killed) = (writer.acked(), Instant::now());
    kill9(c.pid(node));
    eprintln!(
        "evidence: node {node} ({node_addr}, leader of {led:?}) killed -9 with records in flight {in_flight:?} (at-least-once, exactly-once), copied {copied:?}"
    );
    // Both go on while it is down: its partitions get other leaders from the ISR.
    for (r, before) in runs.iter_mut().zip(&copied) {
        r.wait_copied(
            before + 100.0,
            "the node's absence",
            Duration::from_secs(60),
        );
        eprintln!(
            "evidence: {} copies on without node {node}: {} copied {:.1?} after the kill",
            r.guarantee,
            r.copied(),
            killed.elapsed()
        );
    }
    c.restart(node);
    c.settled();
    let written_down = writer.acked() - acked;
    eprintln!(
        "evidence: node {node} back in every ISR {:.1?} after the kill; {written_down} records written meanwhile",
        killed.elapsed()
    );
    let at: Vec<f64> = runs.iter().map(Live::copied).collect();
    for (r, before) in runs.iter_mut().zip(at) {
        r.wait_copied(before, "the node's return", Duration::from_secs(60));
    }
    let total = writer.finish();

    for r in runs.iter_mut() {
        r.finish(&c.bootstrap, total);
        let stderr = r.stderr();
        // The kill is said once, as a warning naming the node, and that it came back.
        let lost: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains(&format!("broker {node_addr} unreachable")))
            .collect();
        eprintln!("evidence: {} said: {lost:?}", r.guarantee);
        assert!(
            !lost.is_empty(),
            "{}: the lost node was never said: {stderr}",
            r.guarantee
        );
        assert_restarts_said_once(&stderr);
        let dups = kr::assert_complete(&c.bootstrap, &c.bootstrap, topic, &r.target, PARTS);
        eprintln!(
            "{}: {total} records written, {dups} duplicates",
            r.guarantee
        );
        if r.guarantee == "exactly-once" {
            assert_eq!(
                dups, 0,
                "exactly-once: duplicates for a read_committed reader"
            );
        } else {
            assert!(
                dups as u64 <= written_down,
                "{dups} duplicates, {written_down} written while the node was down"
            );
        }
    }
}

/// The EndTxn lines of a run from line `from` on, for the evidence.
fn endtxn_lines(run: &Live, from: usize) -> Vec<String> {
    run.lines_with(from, "librdkafka: ")
        .into_iter()
        .map(|(_, l)| l)
        .filter(|l| {
            ["EndTxn", "Transaction state change", "coordinator"]
                .iter()
                .any(|t| l.contains(t))
        })
        .take(16)
        .collect()
}

/// A three-node target behind proxies; the exactly-once run logs `debug=eos`. The node that
/// coordinates the run's transactions has its answers delayed 1.5 s by its proxy; the line
/// librdkafka logs as it sends an EndTxn (`-> CommittingTransaction`) is waited for, and the
/// node killed -9 and its connections cut (the late answer dropped) well within those 1.5 s:
/// the EndTxn is on its way when the coordinator dies, by construction. Then the same while an
/// abort is under way: the requests to another node are held until the open transaction's
/// records time out (`--delivery-timeout 20s`; a commit waits that plus 5 s, which the
/// coordinator's failover must fit in: 10 s was too short at a load of 30), and the kill is gated on
/// `-> AbortingTransaction`. The run goes on through both (the first node back in between,
/// the second left down); the copy is exact.
#[test]
fn issue_30_the_targets_transaction_coordinator_killed_during_an_end_txn_commit_then_abort() {
    let a = Kafka::shared("a");
    let topic = common::unique("coord");
    let (mut b, proxies) = Cluster::behind_proxies("coord", 3, &QUICK_FAILOVER);
    let mut oracle = b.internal();
    common::create_topic(&a.bootstrap, &topic, PARTS);
    let writer = LiveWriter::start_on(&a.bootstrap, &topic);
    let mut run = Live::copy(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        "exactly-once",
        "debug",
        &["--to-property", "debug=eos", "--delivery-timeout", "20s"],
    );
    run.wait_copied(0.0, "its start", Duration::from_secs(90));
    // kreplicate's producer identity: the group and the static shard (1/1).
    let tid = format!("{}.shard-1-of-1", run.group);
    let delay = Duration::from_millis(1500);

    for (phase, line) in [
        (
            "commit",
            "Transaction state change BeginCommit -> CommittingTransaction",
        ),
        (
            "abort",
            "Transaction state change BeginAbort -> AbortingTransaction",
        ),
    ] {
        let t = Instant::now();
        b.settled();
        eprintln!("{phase}: full ISRs after {:.1?}", t.elapsed());
        let coord = b.txn_coordinator(&tid);
        // librdkafka names the same node (`Transaction coordinator changed from X -> ADDR/N`).
        let said = run
            .lines_with(0, "Transaction coordinator changed from")
            .into_iter()
            .map(|(_, l)| l)
            .rfind(|l| !l.contains("-> (none)"))
            .unwrap_or_default();
        let said_node = said
            .rsplit("-> ")
            .next()
            .and_then(|to| to.split(&['/', ':'][..]).nth(2))
            .and_then(|n| n.parse::<usize>().ok());
        eprintln!("{phase}: coordinator node {coord}; librdkafka: {said}");
        assert_eq!(said_node, Some(coord), "{phase}: librdkafka's coordinator");
        let proxy = &proxies[coord - 1];
        proxy.delay_answers(delay);
        // For the abort: hold the requests to a node that leads a copied partition and does
        // not coordinate, until the open transaction's records time out.
        let held = (phase == "abort").then(|| {
            let node = (0..PARTS)
                .map(|p| b.leader(&run.target, p))
                .find(|n| *n != coord)
                .expect("a target partition led by another node than the coordinator");
            let before = run.copied();
            run.wait_copied(before, "records before the hold", Duration::from_secs(30));
            proxies[node - 1].hold_requests();
            eprintln!("{phase}: requests to node {node} held (answers flow)");
            node
        });
        let from = run.seen();
        let (seen_at, l) = run.wait_line(from, line, Duration::from_secs(60));
        let in_flight = run.in_flight();
        kill9(b.pid(coord));
        proxy.cut();
        let (landed, killed) = (seen_at.elapsed(), Instant::now());
        let (committed, aborted) = (
            run.metric("kreplicate_transactions_committed_total"),
            run.metric("kreplicate_transactions_aborted_total"),
        );
        eprintln!(
            "evidence: {phase}: coordinator node {coord} of {tid:?} killed -9 and its connections cut {landed:.1?} after the line (answers delayed {delay:?}):\n  {l}\n  records in flight {in_flight}, transactions committed {committed}, aborted {aborted}"
        );
        assert!(
            landed < delay,
            "the kill came {landed:?} after the line, past the answer's delay"
        );
        proxy.delay_answers(Duration::ZERO);
        if let Some(node) = held {
            proxies[node - 1].resume();
        }
        // The run goes on without the coordinator (its transaction log partition gets
        // another leader), then with it back.
        let before = run.copied();
        run.wait_copied(before, "the coordinator's absence", Duration::from_secs(90));
        eprintln!(
            "evidence: {phase}: the run copies on, {:.1?} after the kill; its EndTxn lines since:\n  {}",
            seen_at.elapsed(),
            endtxn_lines(&run, from).join("\n  ")
        );
        // The EndTxn had no answer yet when the coordinator died: its outcome line came
        // after the kill (with librdkafka's lines printed only when the client is polled, all
        // of them came at once, once the call had returned).
        let state = line.rsplit(' ').next().unwrap_or_default();
        let (after_at, after) = run
            .lines_with(from, &format!("change {state} -> "))
            .into_iter()
            .next()
            .expect("the EndTxn's outcome line");
        eprintln!(
            "evidence: {phase}: its outcome was read {:.1?} after the kill:\n  {after}",
            after_at.saturating_duration_since(killed)
        );
        assert!(
            after_at > killed,
            "{phase}: the EndTxn had ended before the kill: {after}"
        );
        if phase == "commit" {
            // Back before the next kill: two nodes left must hold min.insync.replicas (2).
            let t = Instant::now();
            b.restart(coord);
            eprintln!("{phase}: node {coord} restarted in {:.1?}", t.elapsed());
        } else {
            oracle = b.internal_except(coord);
            assert!(
                run.metric("kreplicate_transactions_aborted_total") > aborted,
                "no transaction was aborted"
            );
        }
    }
    // The copy ends on the two nodes left (min.insync.replicas 2).
    let total = writer.finish();
    run.finish(&oracle, total);
    // read_all reads read_committed, past the proxies.
    let dups = kr::assert_complete(&a.bootstrap, &oracle, &topic, &run.target, PARTS);
    eprintln!("exactly-once: {total} records written, {dups} duplicates");
    assert_eq!(
        dups, 0,
        "exactly-once: duplicates for a read_committed reader"
    );
}

/// A single-node target killed -9 with records in flight under a live exactly-once run, and
/// started again on its log (its transaction coordinator and every leader with it): the run
/// waits it out and goes on; the copy is exact.
#[test]
fn issue_30_a_target_broker_killed_and_restarted_on_its_log_under_a_live_exactly_once_run() {
    let a = Kafka::shared("a");
    let topic = common::unique("restart");
    let mut b = Kafka::start("restart-b");
    common::create_topic(&a.bootstrap, &topic, PARTS);
    let writer = LiveWriter::start_on(&a.bootstrap, &topic);
    let mut run = Live::copy(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        "exactly-once",
        "warn",
        &[],
    );
    run.wait_copied(0.0, "its start", Duration::from_secs(90));
    let in_flight = all_in_flight(std::slice::from_mut(&mut run), Duration::from_secs(30));
    let (copied, killed) = (run.copied(), Instant::now());
    b.kill();
    eprintln!(
        "evidence: the target broker killed -9 with {} records in flight, {copied} copied, {} transactions committed",
        in_flight[0],
        run.metric("kreplicate_transactions_committed_total")
    );
    b.restart();
    eprintln!(
        "evidence: the target broker is back on its log {:.1?} after the kill",
        killed.elapsed()
    );
    run.wait_copied(copied, "the broker's return", Duration::from_secs(90));
    eprintln!(
        "evidence: the run copies on: {} copied {:.1?} after the kill, {} transactions aborted",
        run.copied(),
        killed.elapsed(),
        run.metric("kreplicate_transactions_aborted_total")
    );
    let total = writer.finish();
    run.finish(&b.bootstrap, total);
    let dups = kr::assert_complete(&a.bootstrap, &b.bootstrap, &topic, &run.target, PARTS);
    eprintln!("exactly-once: {total} records written, {dups} duplicates");
    assert_eq!(
        dups, 0,
        "exactly-once: duplicates for a read_committed reader"
    );
}

/// A three-node target loses two nodes (killed -9, records in flight in both runs): no
/// partition can take a write acknowledged by `min.insync.replicas` 2, and no controller
/// quorum is left to elect leaders. That is a failure, not a restart to ride out: each run
/// exits 1 once `--delivery-timeout` has passed (not before), naming the partitions it could
/// not deliver to. Nothing was committed past what the target holds; once the nodes are back
/// a rerun completes the copy (exactly-once with no duplicate).
#[test]
fn issue_30_a_target_that_loses_a_majority_of_its_nodes_fails_the_run_naming_its_partitions() {
    let a = Kafka::shared("a");
    let topic = common::unique("majority");
    let mut b = Cluster::start_with("maj", 3, &QUICK_FAILOVER);
    common::create_topic(&a.bootstrap, &topic, PARTS);
    let writer = LiveWriter::start_on(&a.bootstrap, &topic);
    let timeout = Duration::from_secs(10);
    let dt = format!("{}s", timeout.as_secs());
    let mut runs = [
        Live::copy(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            "at-least-once",
            "warn",
            &["--delivery-timeout", &dt],
        ),
        Live::copy(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            "exactly-once",
            "warn",
            &["--delivery-timeout", &dt],
        ),
    ];
    for r in runs.iter_mut() {
        r.wait_copied(0.0, "its start", Duration::from_secs(90));
    }
    let in_flight = all_in_flight(&mut runs, Duration::from_secs(30));
    let copied: Vec<f64> = runs.iter().map(Live::copied).collect();
    let (killed, seen): (Instant, Vec<usize>) =
        (Instant::now(), runs.iter().map(Live::seen).collect());
    for node in [2, 3] {
        kill9(b.pid(node));
    }
    eprintln!(
        "evidence: nodes 2 and 3 of 3 killed -9 with records in flight {in_flight:?} (at-least-once, exactly-once), copied {copied:?}"
    );
    for (r, seen) in runs.iter_mut().zip(seen) {
        // The records sent until the first failure time out (2 × --delivery-timeout);
        // exactly-once's abort then asks the coordinator, which cannot answer, within
        // --timeout (30 s): it took 70 s in all, each try of the abort overshooting its
        // deadline by a whole --timeout (issue 41, item 6).
        let (code, stdout) = r.exits(Duration::from_secs(180));
        let after = killed.elapsed();
        let stderr = r.stderr();
        eprintln!(
            "evidence: {} exited {code:?} {after:.1?} after the kill; its last lines:\n  {}",
            r.guarantee,
            stderr
                .lines()
                .rev()
                .take(4)
                .collect::<Vec<_>>()
                .join("\n  ")
        );
        assert_eq!(code, Some(1), "{}: {stderr}", r.guarantee);
        assert!(
            after >= timeout,
            "{}: exited {after:?} after the kill, before --delivery-timeout {timeout:?}",
            r.guarantee
        );
        let bound = 2 * timeout + Duration::from_secs(30) + Duration::from_secs(10);
        assert!(
            after <= bound,
            "{}: exited {after:?} after the kill; 2 × --delivery-timeout + --timeout (and 10 s to spare) is {bound:?}",
            r.guarantee
        );
        // The failure names the target partitions that took no write.
        let named: Vec<String> = (0..PARTS)
            .map(|p| format!("{}[{p}]", r.target))
            .filter(|tp| stderr.contains(tp.as_str()))
            .collect();
        assert_eq!(
            named.len(),
            PARTS as usize,
            "{}: the failure names not every target partition: {stderr}",
            r.guarantee
        );
        // Not "acknowledges again": the records it waited for failed.
        assert!(
            r.lines_with(seen, "acknowledges again").is_empty(),
            "{}: {stderr}",
            r.guarantee
        );
        let json: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
        assert_eq!(json["status"], "failed", "{json}");
    }
    let total = writer.finish();
    b.restart(2);
    b.restart(3);
    b.settled();
    eprintln!(
        "evidence: nodes 2 and 3 back in every ISR {:.1?} after the kill",
        killed.elapsed()
    );
    let committed = kr::assert_committed_is_covered(
        &a.bootstrap,
        &b.bootstrap,
        &runs[0].group,
        &topic,
        &runs[0].target,
        PARTS,
    );
    eprintln!("evidence: at-least-once committed {committed:?}, each covered by the target");
    let ends = common::ends(&a.bootstrap, &topic, PARTS, "read_uncommitted");
    let past: i64 = ends.iter().zip(&committed).map(|(e, c)| e - c).sum();
    for r in &runs {
        let rename = format!("{{topic}}.{}", r.guarantee);
        let args = kr::caught_up_args(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            &r.group,
            r.guarantee,
            &["--rename", &rename],
        );
        let rerun = kr::run(&args);
        assert_eq!(rerun.code, 0, "{}: {}", r.guarantee, rerun.stderr);
        let dups = kr::assert_complete(&a.bootstrap, &b.bootstrap, &topic, &r.target, PARTS);
        eprintln!(
            "{}: {total} records written, {dups} duplicates after the rerun",
            r.guarantee
        );
        if r.guarantee == "exactly-once" {
            assert_eq!(
                dups, 0,
                "exactly-once: duplicates for a read_committed reader"
            );
        } else {
            assert!(
                dups as i64 <= past,
                "{dups} duplicates, {past} records past the committed positions"
            );
        }
    }
}
