//! Issue 12: a rate-limited run copies everything and commits correctly; the limit holds
//! as a lower bound on its duration (the rate itself is measured by bench/throttle.sh).

use std::time::{Duration, Instant};

use crate::common::kr;
use crate::common::{self, Kafka};

fn throttled_run(guarantee: &str, limit: &[&str], min_seconds: f64) {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("thr");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g-thr");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic(ab, t, 2);
    common::create_topic(bb, t, 2);
    common::produce(ab, t, &kr::records(600, 2, "thr"));
    let started = Instant::now();
    let run = kr::run(&kr::caught_up_args(ab, bb, t, g, guarantee, limit));
    let took = started.elapsed();
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["records"], 600, "{json}");
    let throttled = json["throttled_seconds"]
        .as_f64()
        .expect("throttled_seconds");
    assert!(throttled > 0.5, "{json}");
    assert!(
        took >= Duration::from_secs_f64(min_seconds),
        "the limit did not hold: {took:?}"
    );
    // An exact copy, kreplicate's origin headers aside, and no duplicate.
    assert_eq!(kr::assert_complete(ab, bb, t, t, 2), 0);
    let ends: Vec<i64> = (0..2)
        .map(|p| {
            common::read_all(ab, t)
                .iter()
                .filter(|g| g.partition == p)
                .map(|g| g.offset + 1)
                .max()
                .unwrap()
        })
        .collect();
    let committed = common::committed(ab, g, t, 2);
    assert_eq!(committed, ends, "committed positions after a throttled run");
    if guarantee == "at-least-once" {
        kr::assert_committed_is_covered(ab, bb, g, t, t, 2);
    }
}

#[test]
fn issue_12_a_record_limited_run_copies_everything_and_commits() {
    // 600 records at 300/s: at least (600 - a burst of 30) / 300 s.
    throttled_run("at-least-once", &["--max-records-per-sec", "300"], 1.9);
}

#[test]
fn issue_12_a_byte_limited_exactly_once_run_copies_everything_and_commits() {
    // kr::records(600) holds about 22 KB of keys and values: at 10 KB/s, two seconds.
    throttled_run("exactly-once", &["--max-bytes-per-sec", "10KB"], 1.9);
}
