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

/// Issue 35: librdkafka hands the loop one fetched batch at a time, thousands of records of one
/// partition; under a rate limit every partition's copy moves, in turn. Before: for 10 s at
/// 400/s the run copied one partition's 4000 records while the other's lag stood still.
fn partitions_in_turn(guarantee: &str) {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("turns");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g-turns");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    backlog(ab, bb, t, 8000);
    let args = kr::Args::copy(ab, bb)
        .topics(t)
        .group(g)
        .guarantee(guarantee)
        .with(&["--max-records-per-sec", "400", "--json"])
        .fast_group()
        .build();
    let mut run = Some(kr::spawn(&args));
    // The target's ends once 1200 and once 2800 records are there (3 s and 7 s at 400/s;
    // a full read would come too late): librdkafka may fetch the second partition a few
    // seconds after the first, so what counts is that both move between the two.
    let mut ends = |n: i64| {
        let mut have = vec![0; 2];
        kr::wait_or_kill(Duration::from_secs(90), &mut run, || {
            have = common::ends(bb, t, 2, "read_uncommitted");
            (have.iter().sum::<i64>() < n).then(|| format!("{t} holds {have:?} records"))
        });
        have
    };
    let (first, then) = (ends(1200), ends(2800));
    let moved: Vec<i64> = then.iter().zip(&first).map(|(b, a)| b - a).collect();
    eprintln!("evidence: {guarantee} at 400 records/s, 8000 waiting in batches of one partition: the target's partitions held {first:?}, then {then:?}");
    let total: i64 = moved.iter().sum();
    assert!(
        moved.iter().all(|&n| n * 3 >= total),
        "partitions did not take turns: {first:?}, then {then:?}"
    );
    kr::stop(&mut run);
    let committed = common::committed(ab, g, t, 2);
    assert!(committed.iter().all(|&c| c > 0), "committed {committed:?}");
    if guarantee == "at-least-once" {
        kr::assert_committed_is_covered(ab, bb, g, t, t, 2);
    }
}

/// `n` records in `t` (2 partitions, on `a` and `b`) as producers leave a backlog: partition
/// 0's records in large batches, then partition 1's.
fn backlog(a: &str, b: &str, t: &str, n: usize) {
    common::create_topic(a, t, 2);
    common::create_topic(b, t, 2);
    let mut records = kr::records(n, 2, "turns");
    records.sort_by_key(|r| r.partition);
    let big = [("linger.ms", "200"), ("batch.size", "200000")];
    common::produce_with(a, t, &records, &big, Duration::from_secs(60)).expect("produce");
}

/// Issue 35: records read ahead of a partition that a rebalance takes away are dropped, so that
/// a member given the partition again (the classic protocol revokes every partition, then
/// assigns) reads it again from its committed position, and copies each record once.
#[test]
fn issue_35_a_rate_limited_member_that_gives_up_partitions_copies_what_it_holds_once() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("turns-rb");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    backlog(ab, bb, t, 6000);
    let args = kr::Args::copy(ab, bb)
        .topics(t)
        .group(g)
        .with(&["--max-records-per-sec", "1000", "--json", "-v"])
        .fast_group()
        .build();
    let mut first = Some(kr::spawn(&args));
    let mut held = Vec::new();
    kr::wait_or_kill(Duration::from_secs(90), &mut first, || {
        held = common::ends(bb, t, 2, "read_uncommitted");
        (held.iter().sum::<i64>() < 1000).then(|| format!("{t} holds {held:?} records"))
    });
    // Both partitions have records read ahead by now: a second member makes the group revoke.
    let mut second = Some(kr::spawn(&args));
    kr::wait_or_kill(Duration::from_secs(120), &mut first, || {
        let have = common::ends(bb, t, 2, "read_uncommitted");
        (have.iter().sum::<i64>() < 6000).then(|| format!("{t} holds {have:?} records"))
    });
    let (one, two) = (kr::stop(&mut first), kr::stop(&mut second));
    eprintln!("evidence: the target held {held:?} when the second member started; first member: {}; second member: {}",
        one.json()["records"], two.json()["records"]);
    assert!(one.stderr.contains("revoked"), "no revoke: {}", one.stderr);
    assert!(two.json()["records"].as_u64() > Some(0), "{two:?}");
    let duplicates = kr::assert_complete(ab, bb, t, t, 2);
    kr::assert_committed_is_covered(ab, bb, g, t, t, 2);
    eprintln!("evidence: {duplicates} duplicates");
}

#[test]
fn issue_35_a_rate_limited_run_copies_its_partitions_in_turn() {
    partitions_in_turn("at-least-once");
}

#[test]
fn issue_35_a_rate_limited_exactly_once_run_copies_its_partitions_in_turn() {
    partitions_in_turn("exactly-once");
}

/// Issue 41: `none` under a rate limit loses nothing on a clean stop. The records read ahead
/// for partitions to take turns were stored as consumed when polled and committed though never
/// sent: a stopped run and its rerun left 10,000 of 40,000 records out of the target.
#[test]
fn issue_41_none_with_a_rate_limit_loses_nothing_on_a_clean_stop() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("thr-none");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic(ab, t, 4);
    common::create_topic(bb, t, 4);
    common::produce(ab, t, &kr::records(40_000, 4, "thr-none"));
    let limited = kr::Args::copy(ab, bb)
        .topics(t)
        .group(g)
        .guarantee("none")
        .with(&["--max-records-per-sec", "2000", "--json"])
        .build();
    let child = kr::spawn(&limited);
    common::wait_until("2,000 records copied", Duration::from_secs(60), || {
        common::read_all(bb, t).len() >= 2_000
    });
    kr::signal(&child, "TERM");
    let stopped = kr::wait(child, Duration::from_secs(60));
    assert_eq!(stopped.code, 0, "{stopped:?}");
    let copied = stopped.json()["records"].as_u64().expect("records");
    let committed = common::committed(ab, g, t, 4);
    eprintln!(
        "evidence: stopped after copying {copied} records; the group's positions {committed:?}"
    );
    assert!(
        copied < 40_000,
        "the run was not stopped mid-copy: {copied}"
    );
    let rerun = kr::run(&kr::caught_up_args(ab, bb, t, g, "none", &[]));
    assert_eq!(rerun.code, 0, "{rerun:?}");
    let duplicates = kr::assert_complete(ab, bb, t, t, 4);
    eprintln!(
        "evidence: the rerun copied {}; {duplicates} duplicates",
        rerun.json()["records"]
    );
}
