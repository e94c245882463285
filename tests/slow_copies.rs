//! Slow and steady copies (issue 18): a rate-limited copy still commits every
//! `--commit-interval` (or `--txn-max-time`) and stays healthy, and a SIGKILL re-copies no more
//! than about one commit interval of a live stream.

use std::time::{Duration, Instant};

use crate::common::{self, Tansu};
use crate::kr::{self, FAST_GROUP};

/// Waits (bounded) until `done` holds, polling every 100 ms; the time it took.
fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    start.elapsed()
}

/// A copy at 20 records a second: the first position shows on the source group within about
/// one `--commit-interval` (at-least-once) or `--txn-max-time` (exactly-once) of the first
/// record on the target, and `/healthz` answers 200 all along. Periodic work ran every 256
/// records: the first commit came after 13 s, and `/healthz` said 503 after
/// `--delivery-timeout`.
fn slow_copy_commits_in_time(guarantee: &str) {
    let a = Tansu::start(&format!("slow-a-{guarantee}"));
    let b = Tansu::start(&format!("slow-b-{guarantee}"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic(ab, "t", 2);
    common::create_topic(bb, "t", 2);
    common::produce(ab, "t", &kr::records(400, 2, "slow"));
    let addr = format!("127.0.0.1:{}", common::free_port());
    let mut args = vec![
        "--from",
        ab,
        "--to",
        bb,
        "--topics",
        "t",
        "--group",
        "g-slow",
        "--guarantee",
        guarantee,
        "--max-records-per-sec",
        "20",
        "--commit-interval",
        "1s",
        "--txn-max-time",
        "1s",
        "--delivery-timeout",
        "3s",
        "--metrics-addr",
        &addr,
    ];
    args.extend_from_slice(&FAST_GROUP);
    let child = kr::spawn(&args);
    wait_until(
        "a first record on the target",
        Duration::from_secs(60),
        || !common::read_all(bb, "t").is_empty(),
    );
    let took = wait_until(
        "a position on the source group",
        Duration::from_secs(30),
        || {
            common::committed(ab, "g-slow", "t", 2)
                .iter()
                .any(|&c| c > 0)
        },
    );
    eprintln!("{guarantee}: first position committed {took:?} after the first record copied");
    assert!(
        took <= Duration::from_secs(3),
        "{guarantee}: the first commit came {took:?} after the first record, with 1 s intervals"
    );
    // For 6 s (longer than --delivery-timeout): /healthz, and how often the committed
    // positions move (once a second; at 20 records/s, 256 records took 13 s).
    let url = format!("http://{addr}/healthz");
    let mut unhealthy = Vec::new();
    let mut positions = vec![common::committed(ab, "g-slow", "t", 2)];
    let polls = Instant::now();
    while polls.elapsed() < Duration::from_secs(6) {
        let (status, body) = common::http_get(&url).expect("/healthz");
        if status != 200 {
            unhealthy.push(body);
        }
        let now = common::committed(ab, "g-slow", "t", 2);
        if positions.last() != Some(&now) {
            positions.push(now);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    kr::signal(&child, "INT");
    let run = kr::wait(child, Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
    eprintln!("{guarantee}: committed positions seen in 6 s: {positions:?}");
    assert!(
        unhealthy.is_empty(),
        "{guarantee}: /healthz said {unhealthy:?}"
    );
    let last = positions.last().map_or(0, |p| p.iter().sum::<i64>());
    assert!(last < 400, "still copying while polled: {positions:?}");
    assert!(
        positions.len() >= 5,
        "{guarantee}: the committed positions moved {} times in 6 s with 1 s intervals: {positions:?}",
        positions.len() - 1
    );
}

#[test]
fn issue_18_a_rate_limited_at_least_once_copy_commits_every_interval() {
    slow_copy_commits_in_time("at-least-once");
}

#[test]
fn issue_18_a_rate_limited_exactly_once_copy_commits_within_txn_max_time() {
    slow_copy_commits_in_time("exactly-once");
}
