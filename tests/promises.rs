//! Issues 17, 31 and 41 (item 12): promises of the docs (docs/guide.md) that no test checked
//! end to end. Apache Kafka (shared clusters, names of their own) where the broker's behaviour
//! matters; librdkafka's mock cluster where a protocol error is injected.

use std::time::Duration;

use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};
use rdkafka::ClientConfig;

use crate::common::kr;
use crate::common::{self, Kafka};

/// Writes `batches` to `topic`, each in a transaction that commits (true) or aborts (false).
fn transactions(bootstrap: &str, topic: &str, batches: &[(&str, bool)]) {
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("transactional.id", common::unique("source-txn"))
        .create()
        .expect("transactional producer");
    let t = Duration::from_secs(30);
    p.init_transactions(t).expect("init_transactions");
    for (tag, commit) in batches {
        p.begin_transaction().expect("begin");
        for i in 0..10 {
            let (key, value) = (format!("{tag}-{i}"), format!("v-{tag}-{i}"));
            p.send(BaseRecord::to(topic).partition(0).key(&key).payload(&value))
                .expect("send");
        }
        p.flush(t).expect("flush");
        if *commit {
            p.commit_transaction(t).expect("commit");
        } else {
            p.abort_transaction(t).expect("abort");
        }
    }
}

/// The source consumer reads with read_committed: an aborted transaction on the source is
/// never copied, under any guarantee.
#[test]
fn issue_17_aborted_source_transactions_are_not_copied() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("txn-src");
    common::create_topic(&a.bootstrap, &topic, 1);
    transactions(
        &a.bootstrap,
        &topic,
        &[("one", true), ("aborted", false), ("two", true)],
    );
    for guarantee in ["none", "at-least-once", "exactly-once"] {
        let target = format!("{topic}-{guarantee}");
        let group = common::unique("g");
        let run = kr::run(&kr::caught_up_args(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            &group,
            guarantee,
            &["--rename", &target, "--create-topics"],
        ));
        assert_eq!(run.code, 0, "{guarantee}: {run:?}");
        assert_eq!(run.json()["records"], 20, "{guarantee}: {}", run.stdout);
        let keys: Vec<String> = common::read_all(&b.bootstrap, &target)
            .iter()
            .map(|g| String::from_utf8(g.key.clone().unwrap()).unwrap())
            .collect();
        let want: Vec<String> = ["one", "two"]
            .iter()
            .flat_map(|t| (0..10).map(move |i| format!("{t}-{i}")))
            .collect();
        assert_eq!(keys, want, "{guarantee}");
    }
}

/// Five transactions aborted in a row with none committed end an exactly-once run: exit 1,
/// the last error named, nothing on the target for read_committed readers.
#[test]
fn issue_17_five_aborts_in_a_row_end_the_run() {
    let (_a, b, ab, bb) = common::mock_pair("t", 1, &kr::records(50, 1, "x"));
    // Every produce request fails with an abortable error: each transaction aborts.
    b.cluster().unwrap().request_errors(
        RDKafkaApiKey::Produce,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_UNKNOWN; 1000],
    );
    let run = kr::wait(
        kr::spawn(&kr::caught_up_args(
            &ab,
            &bb,
            "t",
            "g",
            "exactly-once",
            &["--delivery-timeout", "5s"],
        )),
        Duration::from_secs(120),
    );
    assert_eq!(run.code, 1, "{run:?}");
    let last = run.stderr.trim().lines().last().unwrap_or_default();
    assert!(
        last.contains("5 transactions in a row were aborted as 'g.shard-1-of-1'"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stderr.matches("aborting the open transaction").count(),
        5
    );
    assert_eq!(run.json()["records"], 0);
    assert_eq!(common::committed(&ab, "g", "t", 1), vec![-1]);
}

/// `--rename` mapping two source topics to one target name is refused before anything is
/// read or written: one line, exit 2.
#[test]
fn issue_17_a_rename_mapping_two_topics_to_one_is_refused() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (t1, t2) = (common::unique("two-a"), common::unique("two-b"));
    let target = common::unique("one");
    for t in [&t1, &t2] {
        common::create_topic(&a.bootstrap, t, 1);
        common::produce(&a.bootstrap, t, &kr::records(5, 1, t));
    }
    let topics = format!("{t1},{t2}");
    let group = common::unique("g");
    let run = kr::run(&kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topics,
        &group,
        "at-least-once",
        &["--rename", &target, "--create-topics"],
    ));
    assert_eq!(run.code, 2, "{run:?}");
    let errors: Vec<&str> = run.stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(
        errors[0].contains(&format!("--rename '{target}'"))
            && errors[0].contains("2 topics into one"),
        "{}",
        errors[0]
    );
    assert!(!kr::topics(&b.bootstrap).contains(&target));
    assert_eq!(common::committed(&a.bootstrap, &group, &t1, 1), vec![-1]);
}

/// Under `none` a delivery failure still ends the run with exit 1 (its position may already
/// be committed: that is the guarantee's price).
#[test]
fn issue_17_a_delivery_failure_under_none_exits_1() {
    let (_a, b, ab, bb) = common::mock_pair("t", 1, &kr::records(200, 1, "n"));
    b.cluster().unwrap().request_errors(
        RDKafkaApiKey::Produce,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE; 100],
    );
    let run = kr::run(&kr::caught_up_args(&ab, &bb, "t", "g", "none", &[]));
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.json()["status"], "failed");
    assert!(
        run.stderr.contains("delivery failed: t[0] offset "),
        "{}",
        run.stderr
    );
}

/// A committed position that fell out of the source log (records deleted, as retention does):
/// the run fails with exit 1 naming the gap; `--on-gap latest` skips to the end on purpose and
/// copies what is written from then on. Regression: the skip was not committed, so the next
/// `--on-gap latest` run (a cron job) found the gap again and skipped past the records written
/// in between.
#[test]
fn issue_17_a_retention_gap_fails_and_on_gap_latest_skips_it_once() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("gap");
    let group = common::unique("g");
    common::create_topic(&a.bootstrap, &topic, 1);
    common::produce(&a.bootstrap, &topic, &kr::records(100, 1, "old"));
    common::commit(&a.bootstrap, &group, &topic, &[(0, 10)]);
    common::delete_records(&a.bootstrap, &topic, 0, 60);
    let args = |extra: &[&'static str]| {
        let mut v = vec!["--create-topics"];
        v.extend_from_slice(extra);
        kr::caught_up_args(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            &group,
            "at-least-once",
            &v,
        )
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
    };
    let run = |v: Vec<String>| kr::run(&v.iter().map(String::as_str).collect::<Vec<_>>());
    let failed = run(args(&[]));
    assert_eq!(failed.code, 1, "{failed:?}");
    let error = failed.json()["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        error.contains(&format!(
            "{topic}[0] committed position 10 is outside the source log (offsets 60 to 100)"
        )),
        "{error}"
    );
    assert_eq!(common::committed(&a.bootstrap, &group, &topic, 1), vec![10]);

    let skipped = run(args(&["--on-gap", "latest"]));
    assert_eq!(skipped.code, 0, "{skipped:?}");
    assert_eq!(skipped.json()["records"], 0, "{}", skipped.stdout);
    assert_eq!(
        common::committed(&a.bootstrap, &group, &topic, 1),
        vec![100]
    );
    common::produce(&a.bootstrap, &topic, &kr::records(7, 1, "new"));
    let next = run(args(&["--on-gap", "latest"]));
    assert_eq!(next.code, 0, "{next:?}");
    assert_eq!(next.json()["records"], 7);
    assert_eq!(common::read_all(&b.bootstrap, &topic).len(), 7);
}

/// Found on Apache Kafka: a cluster just started (or a coordinator failing over) answers
/// OffsetFetch with NOT_COORDINATOR for a moment, and librdkafka hands that back as it is; a
/// run started then failed at once reading the group's positions. It now asks again within
/// `--timeout`, under each guarantee.
#[test]
fn issue_17_a_group_coordinator_still_loading_is_waited_for() {
    for guarantee in ["at-least-once", "exactly-once"] {
        let (_a, _b, ab, bb) = common::mock_pair("t", 2, &kr::records(40, 2, "c"));
        _a.cluster().unwrap().request_errors(
            RDKafkaApiKey::OffsetFetch,
            &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_NOT_COORDINATOR; 3],
        );
        let run = kr::run(&kr::caught_up_args(
            &ab,
            &bb,
            "t",
            "g",
            guarantee,
            &["--shard", "1/1"],
        ));
        assert_eq!(run.code, 0, "{guarantee}: {run:?}");
        assert_eq!(run.json()["records"], 40, "{guarantee}");
    }
}

/// Regression (issue 30, a CI failure of the killed-leader test): on a loaded three-node
/// cluster a run's read of the group's committed positions came back from librdkafka as a
/// local timeout (its request to a slow coordinator timed out) 3 s into a 30 s `--timeout`,
/// and the run exited 1: `cannot read the group's committed positions on the source: Meta data
/// fetch error: OperationTimedOut`. Here the source answers the first OffsetFetch after 4 s and
/// the client gives a request 1.6 s (`socket.timeout.ms`): the run asks again, within
/// `--timeout`, under each guarantee, joined to the group or not.
#[test]
fn issue_30_a_group_position_read_timed_out_early_is_asked_again() {
    for (guarantee, extra) in [
        ("at-least-once", &[][..]),
        ("at-least-once", &["--shard", "1/1"][..]),
        ("exactly-once", &[][..]),
    ] {
        let (a, _b, ab, bb) = common::mock_pair("t", 2, &kr::records(40, 2, "c"));
        a.answer_next(
            1,
            RDKafkaApiKey::OffsetFetch,
            RDKafkaRespErr::RD_KAFKA_RESP_ERR_NO_ERROR,
            Duration::from_secs(4),
        )
        .unwrap();
        let mut args = vec!["-X", "socket.timeout.ms=1600", "-vv"];
        args.extend_from_slice(extra);
        let run = kr::run(&kr::caught_up_args(&ab, &bb, "t", "g", guarantee, &args));
        assert_eq!(run.code, 0, "{guarantee} {extra:?}: {run:?}");
        assert_eq!(run.json()["records"], 40, "{guarantee} {extra:?}");
        // The fault landed: the client timed the first request out, and the run asked again.
        let again = "reading the group's committed positions: Meta data fetch error: OperationTimedOut (Local: Timed out); asking again";
        assert!(
            run.stderr.contains(again),
            "{guarantee} {extra:?}: {}",
            run.stderr
        );
    }
}

/// The guide's promise that exactly-once sets `transaction.timeout.ms` above the sum of
/// `--txn-max-time` and `--delivery-timeout`, checked on the broker: its transaction
/// coordinator describes the run's transactional id with that timeout (librdkafka's default,
/// 60 s, would be below).
#[test]
fn issue_17_exactly_once_transactions_time_out_above_their_bounds() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("txn-timeout");
    common::create_topic(&a.bootstrap, &topic, 1);
    common::create_topic(&b.bootstrap, &topic, 1);
    common::produce(&a.bootstrap, &topic, &kr::records(20, 1, "tt"));
    let group = common::unique("g");
    let run = kr::run(&kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        "exactly-once",
        &["--txn-max-time", "40s", "--delivery-timeout", "50s"],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    let described = common::kafka_tool(
        "org.apache.kafka.tools.TransactionsCommand",
        &[
            "--bootstrap-server",
            &b.bootstrap,
            "describe",
            "--transactional-id",
            &format!("{group}.shard-1-of-1"),
        ],
    );
    // A header line and one row, in columns: find TransactionTimeoutMs by its header.
    let mut lines = described.lines();
    let column = lines.next().and_then(|h| {
        h.split_whitespace()
            .position(|c| c == "TransactionTimeoutMs")
    });
    let row = lines.next().unwrap_or_default();
    let timeout: u64 = column
        .and_then(|i| row.split_whitespace().nth(i))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no TransactionTimeoutMs in: {described}"));
    assert_eq!(timeout, 40_000 + 50_000 + 30_000, "{described}");
}

/// Issue 31: records of every odd shape travel byte for byte under both guarantees: an empty
/// key beside a null one, an empty value beside a tombstone, an empty header value beside a
/// null one, repeated headers, and bytes that are not UTF-8 in keys, values and header values.
#[test]
fn issue_31_odd_records_are_copied_byte_for_byte() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("odd");
    common::create_topic(&a.bootstrap, &topic, 2);
    let not_utf8 = vec![0xff, 0x00, 0xfe, 0x80];
    let mut records = vec![];
    for p in 0..2 {
        let rec = |key: Option<Vec<u8>>, value: Option<Vec<u8>>, headers| common::Rec {
            partition: p,
            key,
            value,
            headers,
            timestamp: Some(kr::recent()),
        };
        records.extend([
            rec(Some(vec![]), Some(b"empty key".to_vec()), vec![]),
            rec(None, Some(b"null key".to_vec()), vec![]),
            rec(Some(b"k".to_vec()), Some(vec![]), vec![]),
            rec(Some(b"k".to_vec()), None, vec![]),
            rec(
                Some(not_utf8.clone()),
                Some(not_utf8.clone()),
                vec![
                    ("empty".into(), Some(vec![])),
                    ("null".into(), None),
                    ("bytes".into(), Some(not_utf8.clone())),
                    ("bytes".into(), Some(vec![0x00])),
                ],
            ),
        ]);
    }
    common::produce(&a.bootstrap, &topic, &records);
    for guarantee in ["at-least-once", "exactly-once"] {
        let group = common::unique("odd-g");
        let rename = format!("{guarantee}.{{topic}}");
        let args = kr::caught_up_args(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            &group,
            guarantee,
            &["--rename", &rename, "--create-topics"],
        );
        let run = kr::run(&args);
        assert_eq!(run.code, 0, "{run:?}");
        let target = format!("{guarantee}.{topic}");
        let dups = kr::assert_complete(&a.bootstrap, &b.bootstrap, &topic, &target, 2);
        assert_eq!(dups, 0, "{guarantee}");
    }
}

/// Issue 31: `--txn-max-bytes` ends a transaction once its records' bytes reach the bound:
/// 400 records of 1 KB with a 50 KB bound take at least 8 transactions where the other bounds
/// (a minute, a million records) would allow one.
#[test]
fn issue_31_txn_max_bytes_bounds_each_transaction() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("txn-bytes");
    common::create_topic(&a.bootstrap, &topic, 1);
    let value = "x".repeat(1000);
    let records: Vec<common::Rec> = (0..400)
        .map(|i| common::Rec::kv(0, &format!("k{i:03}"), &value))
        .collect();
    common::produce(&a.bootstrap, &topic, &records);
    let dir = common::scratch_dir();
    let file = dir.join("metrics.prom");
    let file_arg = file.to_string_lossy().to_string();
    let group = common::unique("txn-bytes-g");
    let args = kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        "exactly-once",
        &[
            "--create-topics",
            "--txn-max-bytes",
            "50KB",
            "--txn-max-time",
            "1m",
            "--txn-max-records",
            "1000000",
            "--metrics-file",
            &file_arg,
        ],
    );
    let run = kr::run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    let text = std::fs::read_to_string(&file).expect("the metrics file");
    let committed = common::scraped(&text, "kreplicate_transactions_committed_total")[0].1;
    assert!(
        (8.0..=10.0).contains(&committed),
        "400 KB in transactions of at most 50 KB: {committed} transactions"
    );
    kr::assert_complete(&a.bootstrap, &b.bootstrap, &topic, &topic, 1);
}

/// Issue 31: `-q` prints nothing on success, and still warns of a target slow to acknowledge
/// (librdkafka's mock answering after 0.7 s, past half of a 1 s delivery timeout).
#[test]
fn issue_31_quiet_is_silent_on_success_and_still_warns_of_a_stall() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("quiet");
    common::create_topic(&a.bootstrap, &topic, 1);
    // A topic the run creates is one line even with -q (a write to the target): not here.
    common::create_topic(&b.bootstrap, &topic, 1);
    common::produce(&a.bootstrap, &topic, &kr::records(100, 1, "q"));
    let group = common::unique("quiet-g");
    let mut args = kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        "at-least-once",
        &["-q"],
    );
    args.retain(|a| *a != "--json");
    let run = kr::run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stderr, "", "-q on success");
    assert_eq!(run.stdout, "", "-q on success");

    let (_ma, mb, ab, bb) = common::mock_pair("t", 1, &kr::records(20, 1, "slow"));
    let mock = mb.cluster().unwrap();
    mock.broker_round_trip_time(1, Duration::from_millis(700))
        .unwrap();
    let mut args = kr::caught_up_args(
        &ab,
        &bb,
        "t",
        "g",
        "at-least-once",
        &["-q", "--delivery-timeout", "1s"],
    );
    args.retain(|a| *a != "--json");
    let run = kr::run(&args);
    // Each answer comes after 0.7 s, past half the delivery timeout and (mostly) within it:
    // the run may end either way, and warns in both.
    assert!(run.code == 0 || run.code == 1, "{run:?}");
    assert!(
        run.stderr
            .contains("kreplicate: warning: target has not acknowledged"),
        "the stall warning with -q: {}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("records  "),
        "no progress line with -q: {}",
        run.stderr
    );
}

/// Issue 31: two processes owning the same shard copy the same partitions: duplicates,
/// never a loss.
#[test]
fn issue_31_two_processes_owning_one_shard_duplicate_but_lose_nothing() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("one-shard");
    common::create_topic(&a.bootstrap, &topic, 4);
    common::create_topic(&b.bootstrap, &topic, 4);
    common::produce(&a.bootstrap, &topic, &kr::records(4000, 4, "s"));
    let group = common::unique("one-shard-g");
    let args = kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        "at-least-once",
        &["--shard", "1/1", "--to-property", "batch.num.messages=50"],
    );
    let (first, second) = (kr::spawn(&args), kr::spawn(&args));
    let (first, second) = (
        kr::wait(first, Duration::from_secs(60)),
        kr::wait(second, Duration::from_secs(60)),
    );
    assert_eq!((first.code, second.code), (0, 0), "{first:?}\n{second:?}");
    let dups = kr::assert_complete(&a.bootstrap, &b.bootstrap, &topic, &topic, 4);
    eprintln!("two owners of one shard: {dups} duplicates of 4000 records");
    assert_eq!(
        common::committed(&a.bootstrap, &group, &topic, 4),
        vec![1000; 4]
    );
}

/// Issue 31: what a caught-up at-least-once run leaves in its metrics file: one rebalance (its
/// group's assignment), lag 0 records and 0 seconds, a last commit during the run.
#[test]
fn issue_31_metrics_of_a_finished_run_say_rebalances_lag_and_last_commit() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("metrics-end");
    common::create_topic(&a.bootstrap, &topic, 2);
    common::produce(&a.bootstrap, &topic, &kr::records(500, 2, "m"));
    let dir = common::scratch_dir();
    let file = dir.join("metrics.prom");
    let file_arg = file.to_string_lossy().to_string();
    let group = common::unique("metrics-end-g");
    let args = kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        "at-least-once",
        &["--create-topics", "--metrics-file", &file_arg],
    );
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let run = kr::run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    let after = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let text = std::fs::read_to_string(&file).expect("the metrics file");
    let one = |name: &str| -> f64 {
        let s = common::scraped(&text, name);
        assert!(!s.is_empty(), "{name} in {text}");
        s[0].1
    };
    assert_eq!(one("kreplicate_rebalances_total"), 1.0, "{text}");
    let last_commit = one("kreplicate_last_commit_timestamp_seconds");
    assert!(
        (before..=after).contains(&last_commit),
        "last commit {last_commit} within the run [{before}, {after}]"
    );
    for name in ["kreplicate_lag_records", "kreplicate_lag_seconds"] {
        let samples = common::scraped(&text, name);
        assert_eq!(samples.len(), 2, "{name} per partition: {text}");
        assert!(samples.iter().all(|s| s.1 == 0.0), "{name}: {samples:?}");
    }
}

/// Issue 31: under exactly-once a second SIGINT exits 130 at once (the first one's flush and
/// commit, waiting for a frozen target, cut short), says `interrupted`, and leaves the target consistent: a rerun then
/// completes an exact copy (nothing lost, nothing twice for read_committed readers).
#[test]
fn issue_31_a_second_signal_under_exactly_once_exits_130_and_a_rerun_is_exact() {
    // A target of its own, frozen so that the first signal's commit cannot finish.
    let (a, mut b) = Kafka::pair("eos-130-a", "eos-130-b");
    let topic = common::unique("eos-130");
    common::create_topic(&a.bootstrap, &topic, 2);
    common::create_topic(&b.bootstrap, &topic, 2);
    common::produce(&a.bootstrap, &topic, &kr::records(2000, 2, "pre"));
    let writer = kr::Writer::start(&a.bootstrap, &topic, 2);
    let group = common::unique("eos-130-g");
    let addr = format!("127.0.0.1:{}", common::free_port());
    let (ab, bb) = (a.bootstrap.clone(), b.bootstrap.clone());
    let mut args = kr::caught_up_args(
        &ab,
        &bb,
        &topic,
        &group,
        "exactly-once",
        &["--metrics-addr", &addr, "--txn-max-records", "100"],
    );
    args.retain(|a| *a != "--until-caught-up");
    let mut run = Some(kr::spawn(&args));
    kr::wait_or_kill(Duration::from_secs(60), &mut run, || {
        let n = kr::metric(&addr, "kreplicate_transactions_committed_total").unwrap_or(0.0);
        (n < 2.0).then(|| format!("{n} transactions committed"))
    });
    // The freeze must land with records in flight. One that lands in a commit's EndTxn, after
    // its records were acknowledged, holds the run there with none (it failed so in CI, once
    // copies got faster): then the target is thawed and the freeze aimed again.
    let in_flight = || kr::metric(&addr, "kreplicate_records_in_flight").unwrap_or(0.0);
    for aim in 1.. {
        kr::wait_or_kill(Duration::from_secs(30), &mut run, || {
            let n = in_flight();
            (n < 1.0).then(|| format!("{n} records in flight"))
        });
        b.freeze();
        // What the target acknowledged before the freeze arrives meanwhile.
        std::thread::sleep(Duration::from_millis(500));
        let n = in_flight();
        eprintln!("freeze {aim}: {n} records in flight to the frozen target");
        if n >= 1.0 {
            break;
        }
        assert!(aim < 10, "no freeze landed with records in flight");
        b.thaw();
    }
    let child = run.take().unwrap();
    kr::signal(&child, "INT");
    // The first stop now waits for the frozen target; the second signal cuts it short.
    std::thread::sleep(Duration::from_millis(300));
    let signalled = std::time::Instant::now();
    kr::signal(&child, "INT");
    let out = kr::wait(child, Duration::from_secs(30));
    let took = signalled.elapsed();
    drop(writer);
    b.thaw();
    assert_eq!(out.code, 130, "{out:?}");
    assert!(took < Duration::from_secs(5), "at once: {took:?}");
    assert_eq!(out.json()["status"], "interrupted", "{out:?}");
    assert_eq!(out.json()["error_kind"], "interrupted", "{out:?}");

    let mut rerun = args.clone();
    rerun.push("--until-caught-up");
    rerun.retain(|a| !a.starts_with("--metrics-addr") && *a != addr.as_str());
    let again = kr::run(&rerun);
    assert_eq!(again.code, 0, "{again:?}");
    let dups = kr::assert_complete(&a.bootstrap, &b.bootstrap, &topic, &topic, 2);
    assert_eq!(dups, 0, "no record twice for a read_committed reader");
}

/// Issue 31: `-X group.protocol=consumer` against a source that does not offer KIP-848 (a
/// Kafka 4.1 broker told to serve only classic groups, as every broker before 4.0 does) is
/// bad input: one line naming the property, exit 2, nothing committed.
#[test]
fn issue_31_group_protocol_consumer_on_a_source_without_kip_848_exits_2() {
    let a = Kafka::start_with(
        "classic-only",
        &["--set", "group.coordinator.rebalance.protocols=classic"],
    );
    let b = Kafka::shared("b");
    let topic = common::unique("classic-only");
    common::create_topic(&a.bootstrap, &topic, 1);
    common::produce(&a.bootstrap, &topic, &kr::records(10, 1, "c"));
    let run = kr::run(&[
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--group",
        "g",
        "--create-topics",
        "--until-caught-up",
        "-X",
        "group.protocol=consumer",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    let lines: Vec<&str> = run.stderr.trim().lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", run.stderr);
    assert!(
        lines[0].contains("'group.protocol=consumer'") && lines[0].contains("does not offer"),
        "{}",
        lines[0]
    );
    assert!(
        !kr::topics(&b.bootstrap).contains(&topic),
        "no target topic created"
    );
    assert_eq!(common::committed(&a.bootstrap, "g", &topic, 1), vec![-1]);
}

/// The sum of `metric`'s samples a run serving `--metrics-addr addr` shows now (0 when absent),
/// or None when it does not answer.
fn metric_sum(addr: &str, metric: &str) -> Option<f64> {
    let text = common::http_get(&format!("http://{addr}/metrics")).ok()?.1;
    Some(
        common::scraped(&text, metric)
            .iter()
            .fold(0.0, |sum, s| sum + s.1),
    )
}

/// Issue 41 (item 12): `/healthz` answers 503 `stalled` once the loop itself stopped publishing
/// for longer than `--delivery-timeout`, and 200 `ok` again once it goes on (the guide's
/// "Metrics and health"). The loop is held for real: an exactly-once commit waits for the
/// target coordinator's EndTxn answer, which librdkafka's mock delays past the delivery timeout
/// (2 s) and within the commit's bound (the delivery timeout + 5 s), so the commit succeeds and
/// the run goes on to a complete copy.
#[test]
fn issue_41_healthz_says_stalled_while_the_loop_stops_publishing_and_ok_after() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    const DELAY: Duration = Duration::from_millis(4500);
    let (_a, b, ab, bb) = common::mock_pair("t", 2, &kr::records(100, 2, "one"));
    let addr = format!("127.0.0.1:{}", common::free_port());
    let args = kr::Args::copy(&ab, &bb)
        .topics("t")
        .group("g")
        .guarantee("exactly-once")
        .with(&[
            "--json",
            "--delivery-timeout",
            "2s",
            "--txn-max-time",
            "300ms",
        ])
        .with(&["--metrics-addr", &addr])
        .fast_group()
        .build();
    let mut run = kr::Watched::spawn(&args);
    let url = format!("http://{addr}/healthz");
    common::wait_until(
        "the first 100 records committed and /healthz ok",
        Duration::from_secs(60),
        || {
            metric_sum(&addr, "kreplicate_records_copied_total") == Some(100.0)
                && common::http_get(&url).is_ok_and(|(s, body)| s == 200 && body == "ok\n")
        },
    );

    // /healthz every 50 ms from now on: each change of its answer, and when.
    let base = Instant::now();
    let answers: Arc<Mutex<Vec<(Duration, u16, String)>>> = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let poller = {
        let (answers, done, url) = (answers.clone(), done.clone(), url.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let (status, body) = common::http_get(&url).unwrap_or((0, String::new()));
                let mut seen = answers.lock().unwrap();
                if seen
                    .last()
                    .is_none_or(|(_, s, b)| (*s, b) != (status, &body))
                {
                    seen.push((base.elapsed(), status, body));
                }
                drop(seen);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    // The run is idle (nothing open): the next EndTxn is the commit of the records written now.
    let injected = base.elapsed();
    b.answer_next(
        1,
        RDKafkaApiKey::EndTxn,
        RDKafkaRespErr::RD_KAFKA_RESP_ERR_NO_ERROR,
        DELAY,
    )
    .unwrap();
    common::produce(&ab, "t", &kr::records(50, 2, "two"));
    let written = base.elapsed();
    let stalled_then_ok = || {
        let seen = answers.lock().unwrap();
        let first_503 = seen.iter().position(|(_, s, _)| *s == 503);
        first_503.is_some_and(|i| {
            seen[i..]
                .iter()
                .any(|(_, s, body)| *s == 200 && body == "ok\n")
        })
    };
    common::wait_until(
        "/healthz 503 while the commit waits, then 200 again",
        Duration::from_secs(60),
        || metric_sum(&addr, "kreplicate_records_copied_total") == Some(150.0) && stalled_then_ok(),
    );
    let committed = base.elapsed();
    done.store(true, Ordering::Relaxed);
    poller.join().unwrap();
    let answers = answers.lock().unwrap().clone();
    let show = |(at, status, body): &(Duration, u16, String)| {
        format!("+{:.2}s {status} {:?}", at.as_secs_f64(), body.trim_end())
    };
    eprintln!(
        "evidence: EndTxn answered after {DELAY:?} (mock, injected at +{:.2}s; --delivery-timeout 2s, commit bound 7s); 50 records written at +{:.2}s",
        injected.as_secs_f64(),
        written.as_secs_f64()
    );
    for a in &answers {
        eprintln!("evidence: /healthz {}", show(a));
    }
    eprintln!(
        "evidence: 150 records committed as seen at +{:.2}s",
        committed.as_secs_f64()
    );
    assert_eq!(
        (answers[0].1, answers[0].2.as_str()),
        (200, "ok\n"),
        "ok before the fault: {answers:?}"
    );
    let first_503 = answers.iter().position(|(_, s, _)| *s == 503).unwrap();
    assert!(answers[first_503].2.starts_with("stalled"), "{answers:?}");
    assert!(answers[first_503].0 > injected, "{answers:?}");
    // The commit of the 50 records could not end before the delayed EndTxn answer.
    assert!(committed >= injected + DELAY, "{committed:?}");
    assert!(
        answers
            .iter()
            .all(|(_, s, body)| (*s == 200 && body == "ok\n")
                || (*s == 503 && body.starts_with("stalled"))),
        "only ok and stalled, and /healthz always answered: {answers:?}"
    );

    kr::signal(run.child.as_ref().unwrap(), "TERM");
    let out = run.wait(Duration::from_secs(60));
    assert_eq!(out.code, 0, "{out:?}");
    let json = out.json();
    assert_eq!(json["status"], "stopped", "{json}");
    assert_eq!(json["records"], 150, "{json}");
    let dups = kr::assert_complete(&ab, &bb, "t", "t", 2);
    assert_eq!(dups, 0, "no transaction aborted: {}", out.stderr);
    eprintln!(
        "evidence: SIGTERM: exit {}, status {}, records {}, the target a complete copy without duplicates",
        out.code, json["status"], json["records"]
    );
}

/// Issue 41 (item 12): scrapes never hold up the copy or its final commit (the guide's "Metrics
/// and health"). While an at-least-once copy of 60,000 records runs (at most 15,000 a second, so
/// that it lasts seconds and the loop publishes several times meanwhile), three misbehaving clients
/// stay connected to the metrics port (half a request line and nothing more, a full
/// `GET /metrics` whose answer is never read, a connection that sends nothing) and another
/// scrapes `/metrics` in a tight loop: the copy ends caught up with exit 0 and every record,
/// `/healthz` answers a fresh connection within a second all along, and the tight scraper got
/// many answers.
#[test]
fn issue_41_stuck_and_busy_scrapers_never_hold_up_the_copy() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    /// What the tight scraper saw, times from when the stuck clients were connected.
    #[derive(Debug, Default)]
    struct Seen {
        answered: u64,
        copied: u64,
        moved: Option<Duration>,
        complete: Option<Duration>,
        /// The first scrape without an answer: the scraper stops there.
        failed_at: Option<Duration>,
    }

    const N: usize = 60_000;
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("scraped");
    let group = common::unique("scraped-g");
    common::create_topic(&a.bootstrap, &topic, 3);
    common::create_topic(&b.bootstrap, &topic, 3);
    common::produce(&a.bootstrap, &topic, &kr::records(N, 3, "s"));
    let addr = format!("127.0.0.1:{}", common::free_port());
    let args = kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        "at-least-once",
        &["--metrics-addr", &addr, "--max-records-per-sec", "15000"],
    );
    let mut run = kr::Watched::spawn(&args);
    let exited = |run: &mut kr::Watched| {
        run.child
            .as_mut()
            .is_some_and(|c| c.try_wait().expect("try_wait").is_some())
    };
    // The clients that never finish, connected as soon as the server listens (the run then
    // still checks the clusters and joins its group: nothing is copied yet).
    let connect = || {
        let mut stream = None;
        common::wait_until(
            "the metrics port listening",
            Duration::from_secs(30),
            || {
                stream = TcpStream::connect(&addr).ok();
                stream.is_some()
            },
        );
        stream.unwrap()
    };
    let mut half = connect();
    half.write_all(b"GET /metr").unwrap();
    let mut unread = connect();
    unread
        .write_all(format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    let silent = connect();
    let attached = Instant::now();
    let copied_then = metric_sum(&addr, "kreplicate_records_copied_total").expect("/metrics");
    eprintln!(
        "evidence: three stuck clients connected (half a request line, an unread GET /metrics, nothing sent); records copied then: {copied_then}"
    );

    // A scraper in a tight loop, each scrape on a fresh connection.
    let done = Arc::new(AtomicBool::new(false));
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let scraper = {
        let (done, seen) = (done.clone(), seen.clone());
        let url = format!("http://{addr}/metrics");
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let answer = common::http_get(&url);
                let mut seen = seen.lock().unwrap();
                match answer {
                    Ok((200, text)) => {
                        seen.answered += 1;
                        let n: f64 = common::scraped(&text, "kreplicate_records_copied_total")
                            .iter()
                            .map(|s| s.1)
                            .sum();
                        seen.copied = seen.copied.max(n as u64);
                        if seen.copied > 0 && seen.moved.is_none() {
                            seen.moved = Some(attached.elapsed());
                        }
                        if seen.copied == N as u64 && seen.complete.is_none() {
                            seen.complete = Some(attached.elapsed());
                        }
                    }
                    _ => {
                        seen.failed_at = Some(attached.elapsed());
                        break;
                    }
                }
            }
        })
    };

    // /healthz on a fresh connection every 20 ms, each within a second, until the run ends.
    let agent = || {
        ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(1))
            .max_idle_connections(0)
            .build()
    };
    let url = format!("http://{addr}/healthz");
    let (mut checks, mut slowest, mut during_copy) = (0, Duration::ZERO, 0);
    let mut last = None;
    while !exited(&mut run) {
        let copied_before = seen.lock().unwrap().copied;
        let asked = Instant::now();
        let answer = agent().get(&url).call();
        let took = asked.elapsed();
        match answer {
            Ok(r) => {
                let (status, body) = (r.status(), r.into_string().unwrap_or_default());
                assert_eq!((status, body.as_str()), (200, "ok\n"), "/healthz");
                assert!(took < Duration::from_secs(1), "/healthz took {took:?}");
                checks += 1;
                slowest = slowest.max(took);
                if copied_before > 0 && copied_before < N as u64 {
                    during_copy += 1;
                }
            }
            Err(e) => {
                // Only at the end of the run: the server stops answering as the process exits.
                let ended = common::wait_until(
                    "the run's exit after /healthz went unanswered",
                    Duration::from_secs(3),
                    || exited(&mut run),
                );
                last = Some(format!(
                    "{e} at +{:.2}s, {ended:.1?} before the exit",
                    attached.elapsed().as_secs_f64()
                ));
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let ended = attached.elapsed();
    done.store(true, Ordering::Relaxed);
    scraper.join().unwrap();
    let out = run.wait(Duration::from_secs(60));
    // What the stuck clients hold by now: the unread one its whole answer, the others nothing.
    let got = |s: &mut TcpStream| {
        s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    };
    let (unread_got, half_got) = (got(&mut unread), got(&mut half));
    drop(silent);
    let seen = seen.lock().unwrap();
    let at =
        |d: Option<Duration>| d.map_or("never".into(), |d| format!("+{:.2}s", d.as_secs_f64()));
    eprintln!(
        "evidence: the copy moved at {} and was complete at {} as scraped; the run exited at +{:.2}s",
        at(seen.moved),
        at(seen.complete),
        ended.as_secs_f64()
    );
    eprintln!(
        "evidence: tight scraper: {} answers of /metrics, the first unanswered at {}; highest records copied it saw: {}",
        seen.answered,
        at(seen.failed_at),
        seen.copied
    );
    eprintln!(
        "evidence: /healthz: {checks} answers on fresh connections ({during_copy} while records were being copied), the slowest in {slowest:.1?}; the last: {}",
        last.as_deref().unwrap_or("answered")
    );
    eprintln!(
        "evidence: the unread client's socket held {} bytes ({:?}...), the half request's {} bytes",
        unread_got.len(),
        unread_got.lines().next().unwrap_or_default(),
        half_got.len()
    );
    assert_eq!(out.code, 0, "{out:?}");
    let json = out.json();
    assert_eq!(json["records"], N, "{json}");
    eprintln!(
        "evidence: the run: exit {}, status {}, records {}",
        out.code, json["status"], json["records"]
    );
    kr::assert_complete(&a.bootstrap, &b.bootstrap, &topic, &topic, 3);
    assert_eq!(copied_then, 0.0, "the stuck clients came before the copy");
    assert!(
        unread_got.starts_with("HTTP/1.1 200"),
        "the unread request was answered: {unread_got:?}"
    );
    assert!(
        seen.failed_at
            .is_none_or(|f| seen.complete.is_some_and(|c| f > c)),
        "/metrics went unanswered before the copy was complete: {seen:?}"
    );
    assert!(
        during_copy >= 3,
        "/healthz checked while the copy ran: {during_copy}"
    );
    assert!(
        seen.answered >= 50,
        "the tight scraper got {} answers",
        seen.answered
    );
}

/// Peak resident memory (VmHWM) of process `pid` in kB, while it runs.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Issue 41 (item 12): `verify`'s "memory stays flat while the sides agree" (the guide's
/// verify section): equal copies of one partition of 20,000 records of about 100 B and of one
/// of 2,000,000; the larger one's verify peaks within 16 MB of the smaller one's, where the 48 B
/// per record of a differing partition would add 93 MB. A memory bound with its baseline in the
/// same run. It failed before the readers bounded librdkafka's prefetch by records too: 36 MB
/// against 121 MB (up to 100,000 small records queued a side).
#[test]
fn issue_41_verify_memory_stays_flat_while_the_sides_agree() {
    use std::time::Instant;

    const MARGIN_KB: u64 = 16 * 1024;
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let mut peaks = Vec::new();
    for n in [20_000usize, 2_000_000] {
        let topic = common::unique(&format!("flat-{n}"));
        for k in [&a, &b] {
            common::create_topic(&k.bootstrap, &topic, 1);
        }
        // The same records on both sides, in chunks (each a producer of its own).
        let written = Instant::now();
        for first in (0..n).step_by(100_000) {
            let chunk: Vec<common::Rec> = (first..(first + 100_000).min(n))
                .map(|i| common::Rec {
                    partition: 0,
                    key: Some(format!("k{i:07}").into_bytes()),
                    value: Some(format!("{i:07}:{}", "v".repeat(92)).into_bytes()),
                    headers: Vec::new(),
                    timestamp: Some(kr::recent() + i as i64),
                })
                .collect();
            for k in [&a, &b] {
                common::produce(&k.bootstrap, &topic, &chunk);
            }
        }
        let written = written.elapsed();
        let mut child = kr::spawn(&[
            "verify",
            "--from",
            &a.bootstrap,
            "--to",
            &b.bootstrap,
            "--topics",
            &topic,
            "--json",
        ]);
        // VmHWM is the kernel's own peak: sampled until the process is gone, the last sample
        // misses at most the last 10 ms.
        let (pid, started) = (child.id(), Instant::now());
        let mut peak = 0;
        while child.try_wait().expect("try_wait").is_none() {
            peak = peak.max(peak_rss_kb(pid).unwrap_or(0));
            std::thread::sleep(Duration::from_millis(10));
        }
        let took = started.elapsed();
        let run = kr::wait(child, Duration::from_secs(10));
        assert_eq!(run.code, 0, "{run:?}");
        let json = run.json();
        assert_eq!(json["exact"], true, "{json}");
        assert_eq!(json["totals"]["source_count"], n, "{json}");
        assert_eq!(json["totals"]["target_count"], n, "{json}");
        eprintln!(
            "evidence: verify of two equal copies of {n} records ({} MB a side, written in {written:.1?}): exact in {took:.1?}, peak RSS {peak} kB",
            n * 108 / 1_000_000
        );
        assert!(peak > 0, "no VmHWM read of the verify process");
        peaks.push(peak);
        for k in [&a, &b] {
            common::delete_topic(&k.bootstrap, &topic);
        }
    }
    eprintln!(
        "evidence: peak RSS {} kB for 10x the records against {} kB: {:+} kB (bound +{MARGIN_KB} kB; 48 B x 1,980,000 records would be +92,813 kB)",
        peaks[1],
        peaks[0],
        peaks[1] as i64 - peaks[0] as i64
    );
    assert!(
        peaks[1] <= peaks[0] + MARGIN_KB,
        "verify's peak grew with the records: {} kB for 2,000,000, {} kB for 20,000",
        peaks[1],
        peaks[0]
    );
}
