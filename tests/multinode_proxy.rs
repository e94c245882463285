//! Faults between kreplicate and one broker of a three-node target while the runs go on
//! (issue 30), through the proxy every node advertises (`Cluster::behind_proxies`): latency of
//! 200 ms then 2 s, a link that flaps (cut and held 1 s, open 1 s, six times), and a one-way
//! hold (requests held 5 s, answers flow). Two runs side by side, at-least-once and
//! exactly-once, over a live writer. No run exits; within each run, every target partition is
//! the source partition in order with no record twice: what a cut connection re-sends, the
//! idempotent producer's broker must drop. Each fault prints its evidence.

use std::time::{Duration, Instant};

use crate::common::kr;
use crate::common::{self, Cluster, Kafka};
use crate::multinode::LiveWriter;
use crate::multinode_faults::{Live, PARTS};

/// Overrides `FAST_GROUP` (the later `-X` wins).
const SLOW_SESSIONS: [&str; 4] = [
    "-X",
    "session.timeout.ms=30000",
    "-X",
    "heartbeat.interval.ms=3000",
];

/// The longest a record in flight has waited for its acknowledgement, over `runs`.
fn oldest(runs: &[Live]) -> f64 {
    runs.iter()
        .map(|r| r.metric("kreplicate_oldest_unacknowledged_seconds"))
        .fold(0.0, f64::max)
}

fn in_flight(runs: &[Live]) -> Vec<f64> {
    runs.iter().map(Live::in_flight).collect()
}

/// Every run copies more than it had.
fn go_on(runs: &mut [Live], what: &str) {
    let before: Vec<f64> = runs.iter().map(Live::copied).collect();
    for (r, b) in runs.iter_mut().zip(before) {
        r.wait_copied(b, what, Duration::from_secs(60));
    }
}

/// Waits until a record in flight has waited `secs`: the fault holds records back.
fn held_back(runs: &mut [Live], secs: f64, what: &str) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let o = oldest(runs);
        if o >= secs {
            return o;
        }
        for r in runs.iter_mut() {
            r.still_running(what);
        }
        assert!(
            Instant::now() < deadline,
            "{what}: no record waited {secs} s (oldest {o} s)"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn issue_30_latency_a_flapping_link_and_a_one_way_hold_to_one_target_node_under_both_guarantees() {
    let a = Kafka::shared("a");
    let topic = common::unique("px");
    let (b, proxies) = Cluster::behind_proxies("px", 3, &[]);
    let oracle = b.internal();
    common::create_topic(&a.bootstrap, &topic, PARTS);
    let writer = LiveWriter::start_on(&a.bootstrap, &topic);
    let mut runs = [
        // 30 s group sessions: with the tests' 2 s ones a loaded machine missed heartbeats to
        // the source's coordinator and the group rebalanced mid-test (its re-reads are
        // duplicates the contract allows, but not what this test is about).
        Live::copy(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            "at-least-once",
            "warn",
            &SLOW_SESSIONS,
        ),
        Live::copy(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            "exactly-once",
            "warn",
            &[],
        ),
    ];
    for r in runs.iter_mut() {
        r.wait_copied(0.0, "its start", Duration::from_secs(90));
    }
    let node = b.leader(&runs[0].target, 0);
    let led: Vec<String> = runs
        .iter()
        .flat_map(|r| (0..PARTS).map(move |p| (r.target.clone(), p)))
        .filter(|(t, p)| b.leader(t, *p) == node)
        .map(|(t, p)| format!("{t}[{p}]"))
        .collect();
    let proxy = &proxies[node - 1];
    eprintln!("the faults are between the runs and node {node}, leader of {led:?}");

    for ms in [200, 2000] {
        proxy.latency(Duration::from_millis(ms));
        let waited = held_back(&mut runs, ms as f64 / 1000.0 * 0.9, "latency");
        eprintln!(
            "evidence: latency {ms} ms to node {node}: a record in flight waited {waited:.2} s, in flight {:?}",
            in_flight(&runs)
        );
        go_on(&mut runs, "latency");
    }
    proxy.latency(Duration::ZERO);

    let accepted = proxy.accepted();
    for flap in 1..=6 {
        let at_cut = in_flight(&runs);
        proxy.hold();
        proxy.cut();
        // The flap's own rhythm (the fault), not a wait for a condition.
        std::thread::sleep(Duration::from_secs(1));
        proxy.resume();
        std::thread::sleep(Duration::from_secs(1));
        eprintln!("evidence: flap {flap}: node {node}'s link cut with {at_cut:?} in flight");
    }
    go_on(&mut runs, "the flaps");
    eprintln!(
        "evidence: the runs reconnected to node {node} {} times across the flaps",
        proxy.accepted() - accepted
    );
    assert!(
        proxy.accepted() > accepted,
        "no reconnect through the flaps"
    );

    let at_hold = in_flight(&runs);
    proxy.hold_requests();
    let waited = held_back(&mut runs, 3.0, "the one-way hold");
    eprintln!(
        "evidence: requests to node {node} held (answers flow) with {at_hold:?} in flight: a record waited {waited:.2} s"
    );
    held_back(&mut runs, 5.0, "the one-way hold");
    proxy.resume();
    go_on(&mut runs, "the one-way hold");

    let total = writer.finish();
    for r in runs.iter_mut() {
        // A group rebalance (2 s sessions on a loaded machine) may re-read what was not yet
        // committed under at-least-once: that is no re-send of the producer's.
        let rebalances = r.metric("kreplicate_rebalances_total");
        r.finish(&oracle, total);
        // In order within the one run: nothing to repair by a rerun.
        let dups = kr::assert_complete(&a.bootstrap, &oracle, &topic, &r.target, PARTS);
        eprintln!(
            "{}: {total} records written, {dups} duplicates, {rebalances} assignments",
            r.guarantee
        );
        for l in r.stderr().lines().filter(|l| {
            ["warning", "lost", "rebalanc", "assign", "revok"]
                .iter()
                .any(|w| l.contains(w))
        }) {
            eprintln!("{}: {l}", r.guarantee);
        }
        if r.guarantee == "exactly-once" || rebalances <= 1.0 {
            assert_eq!(
                dups,
                0,
                "{}: a re-send the broker should have dropped: {}",
                r.guarantee,
                r.stderr()
            );
        }
    }
}
