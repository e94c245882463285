//! Faults on the target: injected produce errors, a broker going down, a slow broker (mock
//! cluster), and the seed's scenario: a frozen target broker (Apache Kafka, `kill -STOP`), and
//! a target cut off by a TCP fault proxy.
//! In every case the committed source positions are checked against what the target holds,
//! and a rerun completes the copy.

use std::time::{Duration, Instant};

use kreplicate::mock::MockKafka;
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};

use crate::common::kr::{self, FAST_GROUP};
use crate::common::{self, Kafka};

const TOPIC: &str = "t";
const PARTS: i32 = 2;

fn mock_pair(records: usize) -> (MockKafka, MockKafka, String, String) {
    let (a, b, ab, bb) = common::mock_pair(TOPIC, PARTS, &kr::records(records, PARTS, "m"));
    (a, b, ab, bb)
}

fn copy_args<'a>(ab: &'a str, bb: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "--from",
        ab,
        "--to",
        bb,
        "--topics",
        TOPIC,
        "--group",
        "g",
        "--commit-interval",
        "100ms",
        // Small batches: many produce requests, so faults land in the middle of the copy.
        "--to-property",
        "batch.num.messages=20",
    ];
    // librdkafka's mock keeps a closed run's member until its session times out: a rerun
    // would wait 45 s to join.
    v.extend_from_slice(&FAST_GROUP);
    v.extend_from_slice(extra);
    v
}

/// After a failed run: committed positions are covered by the target; then a clean rerun
/// completes the copy.
fn check_then_rerun(ab: &str, bb: &str) {
    let committed = kr::assert_committed_is_covered(ab, bb, "g", TOPIC, TOPIC, PARTS);
    let rerun = kr::run(&copy_args(ab, bb, &["--until-caught-up"]));
    assert_eq!(rerun.code, 0, "rerun after {committed:?}: {rerun:?}");
    kr::assert_complete(ab, bb, TOPIC, TOPIC, PARTS);
    let end = common::read_all(ab, TOPIC).len() as i64 / PARTS as i64;
    assert_eq!(
        common::committed(ab, "g", TOPIC, PARTS),
        vec![end; PARTS as usize]
    );
}

#[test]
fn mock_produce_errors_stop_the_run_and_commit_only_acknowledged_records() {
    let (_a, b, ab, bb) = mock_pair(600);
    let mut errors = vec![RDKafkaRespErr::RD_KAFKA_RESP_ERR_NO_ERROR; 4];
    errors.push(RDKafkaRespErr::RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
    b.cluster()
        .unwrap()
        .request_errors(RDKafkaApiKey::Produce, &errors);

    let run = kr::run(&copy_args(&ab, &bb, &["--until-caught-up", "--json"]));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("delivery failed: t[") && run.stderr.contains(" offset "),
        "the error names topic, partition and offset: {}",
        run.stderr
    );
    assert_eq!(run.json()["status"], "failed");
    let committed = common::committed(&ab, "g", TOPIC, PARTS);
    assert!(assert_no_commit_past_failures(&run.stderr, &committed) > 0);

    b.cluster()
        .unwrap()
        .clear_request_errors(RDKafkaApiKey::Produce);
    check_then_rerun(&ab, &bb);
}

#[test]
fn mock_target_broker_down_fails_within_the_delivery_timeout() {
    let (_a, b, ab, bb) = mock_pair(600);
    let mock = b.cluster().unwrap();
    mock.broker_round_trip_time(1, Duration::from_millis(50))
        .unwrap();
    let addr = format!("127.0.0.1:{}", common::free_port());
    let child = kr::spawn(&copy_args(
        &ab,
        &bb,
        &["--delivery-timeout", "3s", "--metrics-addr", &addr],
    ));
    // Down once the copy runs (not during the checks before it, which --timeout bounds).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text =
            common::http_get(&format!("http://{addr}/metrics")).map_or(String::new(), |r| r.1);
        if common::scraped(&text, "kreplicate_assigned_partitions")
            .first()
            .is_some_and(|s| s.1 > 0.0)
        {
            break;
        }
        assert!(Instant::now() < deadline, "the copy never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    mock.broker_down(1).unwrap();
    let run = kr::wait(child, Duration::from_secs(60));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "bounded: {:?}",
        started.elapsed()
    );
    assert!(run.stderr.contains("t["), "{}", run.stderr);
    mock.broker_up(1).unwrap();
    mock.broker_round_trip_time(1, Duration::ZERO).unwrap();
    check_then_rerun(&ab, &bb);
}

#[test]
fn mock_slow_target_times_out_records_without_committing_past_them() {
    let (_a, b, ab, bb) = mock_pair(600);
    let mock = b.cluster().unwrap();
    mock.broker_round_trip_time(1, Duration::from_millis(400))
        .unwrap();
    let run = kr::run(&copy_args(
        &ab,
        &bb,
        &["--until-caught-up", "--delivery-timeout", "1s"],
    ));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("t["), "{}", run.stderr);
    mock.broker_round_trip_time(1, Duration::ZERO).unwrap();
    check_then_rerun(&ab, &bb);
}

fn wait_for_a_commit(a: &str, topic: &str, parts: i32) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while common::committed(a, "g", topic, parts)
        .iter()
        .all(|&c| c <= 0)
    {
        assert!(Instant::now() < deadline, "no commit within 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A copy of 2,000 records and a live writer, running with a 5 s delivery timeout, once it
/// committed something: the moment the seed's fault lands.
fn seed_copy(a: &Kafka, b: &Kafka) -> (kr::Writer, std::process::Child) {
    common::create_topic(&a.bootstrap, TOPIC, 4);
    common::create_topic(&b.bootstrap, TOPIC, 4);
    common::produce(&a.bootstrap, TOPIC, &kr::records(2000, 4, "pre"));
    let writer = kr::Writer::start(&a.bootstrap, TOPIC, 4);
    let args = copy_args(&a.bootstrap, &b.bootstrap, &["--delivery-timeout", "5s"]);
    let child = kr::spawn(&args);
    wait_for_a_commit(&a.bootstrap, TOPIC, 4);
    (writer, child)
}

/// No committed position passes a record whose delivery failed (`delivery failed: t[p] offset
/// N` in `stderr`); returns how many failures were named.
fn assert_no_commit_past_failures(stderr: &str, committed: &[i64]) -> usize {
    let failed = regex::Regex::new(r"delivery failed: t\[(\d+)\] offset (\d+)").unwrap();
    let mut n = 0;
    for cap in failed.captures_iter(stderr) {
        let (p, offset): (usize, i64) = (cap[1].parse().unwrap(), cap[2].parse().unwrap());
        assert!(
            committed[p] <= offset,
            "t[{p}] committed {committed:?} past the failed offset {offset}"
        );
        n += 1;
    }
    n
}

fn seed_scenario(kill_replicator: bool) {
    let (a, mut b) = Kafka::pair("seed-a", "seed-b");
    let (writer, child) = seed_copy(&a, &b);
    b.freeze();
    let run = if kill_replicator {
        std::thread::sleep(Duration::from_secs(2));
        kr::signal(&child, "KILL");
        kr::wait(child, Duration::from_secs(10))
    } else {
        let run = kr::wait(child, Duration::from_secs(60));
        assert_eq!(run.code, 1, "a frozen target fails the run: {run:?}");
        assert!(run.stderr.contains("t["), "{}", run.stderr);
        run
    };
    drop(writer);
    // Checked before the thaw: a frozen broker applies on thaw the bytes already sent to it,
    // so afterwards the target would cover more than was acknowledged.
    let committed = common::committed(&a.bootstrap, "g", TOPIC, 4);
    assert!(committed.iter().any(|&c| c > 0), "{run:?}");
    let failures = assert_no_commit_past_failures(&run.stderr, &committed);
    if !kill_replicator {
        assert!(failures > 0, "{}", run.stderr);
    }
    b.thaw();
    let after = kr::assert_committed_is_covered(&a.bootstrap, &b.bootstrap, "g", TOPIC, TOPIC, 4);
    assert_eq!(
        after, committed,
        "nothing was committed after the run ended"
    );

    let args = copy_args(&a.bootstrap, &b.bootstrap, &["--until-caught-up"]);
    let rerun = kr::run(&args);
    assert_eq!(rerun.code, 0, "{rerun:?}");
    kr::assert_complete(&a.bootstrap, &b.bootstrap, TOPIC, TOPIC, 4);
}

#[test]
fn seed_frozen_target_then_replicator_killed_rerun_loses_nothing() {
    seed_scenario(true);
}

#[test]
fn seed_frozen_target_fails_the_run_and_rerun_loses_nothing() {
    seed_scenario(false);
}

/// The seed's scenario with the fault exactly where it is said to be: the target reached only
/// through a TCP proxy that stops forwarding mid-copy, then drops what it held, so the target
/// never receives a byte it did not acknowledge (a frozen broker would apply them on thaw).
/// The run fails within the delivery timeout; no committed position passes a failed record;
/// every committed position is covered by what the target really holds; a rerun completes.
#[test]
fn issue_17_seed_target_cut_off_by_a_proxy_commits_only_what_it_acknowledged() {
    let a = Kafka::start("seed-proxy-a");
    let (b, proxy) = Kafka::behind_proxy("seed-proxy-b");
    let (writer, child) = seed_copy(&a, &b);
    proxy.hold();
    let run = kr::wait(child, Duration::from_secs(60));
    proxy.cut();
    drop(writer);
    assert_eq!(
        run.code, 1,
        "a target that stops answering fails the run: {run:?}"
    );
    let committed = common::committed(&a.bootstrap, "g", TOPIC, 4);
    assert!(committed.iter().any(|&c| c > 0), "{run:?}");
    assert!(
        assert_no_commit_past_failures(&run.stderr, &committed) > 0,
        "{}",
        run.stderr
    );
    proxy.resume();
    let after = kr::assert_committed_is_covered(&a.bootstrap, &b.bootstrap, "g", TOPIC, TOPIC, 4);
    assert_eq!(after, committed);
    let args = copy_args(&a.bootstrap, &b.bootstrap, &["--until-caught-up"]);
    let rerun = kr::run(&args);
    assert_eq!(rerun.code, 0, "{rerun:?}");
    kr::assert_complete(&a.bootstrap, &b.bootstrap, TOPIC, TOPIC, 4);
}
