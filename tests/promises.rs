//! Issue 17: promises of the docs (docs/guide.md) that no test checked end to end. Apache
//! Kafka (shared clusters, names of their own) where the broker's behaviour matters;
//! librdkafka's mock cluster where a protocol error is injected.

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
