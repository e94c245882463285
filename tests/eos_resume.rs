//! Where exactly-once resumes (issue 18): a failed read of the source group's positions
//! fails the run, and a recreated source topic resumes after the last record of ours.

use rdkafka::producer::Producer;
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};

use crate::common;
use crate::common::kr;

/// The positions index topic the copies write on the target.
const INDEX_TOPIC: &str = "__kreplicate.index";

/// Regression (issue 18, item 2): the group's positions could not be read (OffsetFetch
/// refused), and exactly-once took that for "no positions": with `--start latest` it
/// committed a new "latest" over the old decision (the records in between were never
/// copied). Now the run fails with exit 1, as at-least-once does, writing and committing
/// nothing.
#[test]
fn issue_18_exactly_once_fails_when_the_group_positions_cannot_be_read() {
    let (a, _b, ab, bb) = common::mock_pair("t", 2, &kr::records(100, 2, "m"));
    a.cluster().unwrap().request_errors(
        RDKafkaApiKey::OffsetFetch,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED],
    );
    let args = kr::caught_up_args(&ab, &bb, "t", "g", "exactly-once", &["--start", "latest"]);
    let run = kr::run(&args);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("cannot read the group's committed positions on the source"),
        "{}",
        run.stderr
    );
    assert_eq!(run.json()["records"], 0, "{}", run.stdout);
    assert_eq!(
        common::committed(&ab, "g", "t", 2),
        vec![-1, -1],
        "no --start latest decision committed over the unread positions"
    );
    assert!(common::read_all(&bb, "t").is_empty(), "nothing written");
}

/// Regression (issue 18, item 3): exactly-once resumed after the largest origin offset in the
/// target's tail. A source topic deleted and recreated (recovered once with `--on-gap
/// earliest`) starts again at offset 0, so the next run resumed after the old topic's
/// highest offset and lost the new topic's records in between. It now resumes after the
/// last record of ours in target order: the target holds the old topic's records, then the
/// new topic's, each once.
#[test]
fn issue_18_exactly_once_resumes_a_recreated_topic_after_its_last_copied_record() {
    let (a, b) = (common::Kafka::shared("a"), common::Kafka::shared("b"));
    let n = common::unique("recreate");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic(ab, t, 2);
    common::create_topic(bb, t, 2);
    let old = kr::records(600, 2, "old");
    common::produce(ab, t, &old);
    let eos = |extra: &[&'static str]| {
        let mut v = kr::caught_up_args(ab, bb, t, g, "exactly-once", &[]);
        v.extend_from_slice(extra);
        kr::run(&v)
    };
    let run = eos(&[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["records"], 600);

    // Recreated with fewer records than the old topic had: the positions the target shows
    // (300 per partition) are past its end.
    common::delete_topic(ab, t);
    common::create_topic(ab, t, 2);
    let mut new = kr::records(1600, 2, "new");
    let later = new.split_off(200);
    common::produce(ab, t, &new);
    let run = eos(&["--on-gap", "earliest"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["records"], 200, "the new topic's records, once");

    // The new topic grows past where the old one ended; an ordinary run copies what came
    // since, from the new topic's offset 100 per partition on (not from 300).
    common::produce(ab, t, &later);
    let run = eos(&[]);
    assert_eq!(run.code, 0, "{run:?}");
    let dst = common::read_all(bb, t);
    for p in 0..2 {
        let want: Vec<common::Rec> = old
            .iter()
            .chain(&new)
            .chain(&later)
            .filter(|r| r.partition == p)
            .cloned()
            .collect();
        let got = kr::partition(&dst, p);
        assert_eq!(
            got.len(),
            want.len(),
            "t[{p}]: 300 old records, then 800 of the new topic, each once"
        );
        assert!(
            got == want,
            "t[{p}] is not the old topic then the new one, in order"
        );
    }
    assert_eq!(run.json()["records"], 1400, "{}", run.stdout);
}

/// Regression (issue 18): under exactly-once, a positions index the target refuses (here: not
/// authorised, from some point of the run on) aborted every transaction and ended the run as
/// a refused record at offset -1 of the index topic. Now the run warns once and goes on
/// without the index, as at-least-once does.
#[test]
fn issue_18_exactly_once_goes_on_without_an_index_the_target_refuses() {
    let (_a, b, ab, bb) = common::mock_pair("t", 2, &kr::records(200, 2, "before"));
    let child = kr::spawn(&[
        "--from",
        &ab,
        "--to",
        &bb,
        "--topics",
        "t",
        "--group",
        "g",
        "--guarantee",
        "exactly-once",
        "--txn-max-records",
        "50",
    ]);
    // Transactions with index entries committed: the source group shows their positions.
    let start = std::time::Instant::now();
    common::wait_until("a commit", std::time::Duration::from_secs(60), || {
        common::committed(&ab, "g", "t", 2) == vec![100, 100]
    });
    b.cluster()
        .unwrap()
        .topic_error(
            INDEX_TOPIC,
            RDKafkaRespErr::RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
        )
        .unwrap();
    common::produce(&ab, "t", &kr::records(200, 2, "after"));
    while common::committed(&ab, "g", "t", 2) != vec![200, 200] {
        if start.elapsed() > std::time::Duration::from_secs(40) {
            kr::signal(&child, "INT");
            let run = kr::wait(child, std::time::Duration::from_secs(60));
            panic!(
                "stopped copying: {:?} {run:?}",
                common::committed(&ab, "g", "t", 2)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    kr::signal(&child, "INT");
    let run = kr::wait(child, std::time::Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
    let warned = run
        .stderr
        .matches("the target refused an entry of the positions index")
        .count();
    assert_eq!(warned, 1, "{}", run.stderr);
    // The mock writes no transaction markers: an aborted transaction's copies stay visible,
    // so compare with duplicates dropped.
    kr::assert_complete(&ab, &bb, "t", "t", 2);
}

/// Regression (issue 18): a transaction commit that timed out was reported as fenced, with
/// "nothing of it is visible"; on Kafka the commit may still complete. The run says what is
/// known instead, and exits 1.
#[test]
fn issue_18_exactly_once_a_commit_that_times_out_has_an_unknown_outcome() {
    let (_a, b, ab, bb) = common::mock_pair("t", 2, &kr::records(100, 2, "m"));
    // The commit waits --delivery-timeout + 5 s; the coordinator answers after 20 s.
    b.answer_next(
        1,
        RDKafkaApiKey::EndTxn,
        RDKafkaRespErr::RD_KAFKA_RESP_ERR_NO_ERROR,
        std::time::Duration::from_secs(20),
    )
    .unwrap();
    let args = kr::caught_up_args(
        &ab,
        &bb,
        "t",
        "g",
        "exactly-once",
        &["--delivery-timeout", "1s"],
    );
    let run = kr::run(&args);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("timed out")
            && run.stderr.contains("the transaction's outcome is unknown")
            && run
                .stderr
                .contains("the next run resumes from what the target shows")
            && !run.stderr.contains("nothing of it is visible"),
        "{}",
        run.stderr
    );
}

/// Regression (issue 18): `/healthz` answered 503 during a long exactly-once start (here the
/// target's coordinator answers InitProducerId after 4 s, longer than `--delivery-timeout`):
/// nothing moves while the run fences and reads the target's tail, and that is no stall. It
/// now says "starting" (200) until the start steps are over, then "ok" as the copy moves.
#[test]
fn issue_18_healthz_is_healthy_during_a_long_exactly_once_start() {
    let (_a, b, ab, bb) = common::mock_pair("t", 2, &kr::records(100, 2, "m"));
    b.answer_next(
        1,
        RDKafkaApiKey::InitProducerId,
        RDKafkaRespErr::RD_KAFKA_RESP_ERR_NO_ERROR,
        std::time::Duration::from_secs(4),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{}", common::free_port());
    let args = kr::caught_up_args(
        &ab,
        &bb,
        "t",
        "g",
        "exactly-once",
        &[
            "--delivery-timeout",
            "1s",
            "--txn-max-time",
            "200ms",
            "--metrics-addr",
            &addr,
        ],
    );
    let mut child = kr::spawn(&args);
    let url = format!("http://{addr}/healthz");
    let mut answers: Vec<(u16, String)> = Vec::new();
    while child.try_wait().expect("wait").is_none() {
        // Refused before the server listens and after the run ended.
        if let Ok((status, body)) = common::http_get(&url) {
            if answers.last() != Some(&(status, body.clone())) {
                answers.push((status, body));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let run = kr::wait(child, std::time::Duration::from_secs(10));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["records"], 100);
    assert!(
        answers.iter().any(|(_, body)| body == "starting\n"),
        "{answers:?}"
    );
    assert!(answers.iter().all(|(s, _)| *s == 200), "{answers:?}");
}

/// Issue 17: a read_committed reader sees nothing past the first record of an open
/// transaction. Another producer writing the target partition transactionally (here one left
/// open) hid the records a run of ours committed after that record, and the next run resumed
/// before them and copied them again. Now a start waits, within --timeout, until no record of
/// ours is hidden; past it, the run fails with exit 1 and writes nothing.
#[test]
fn issue_17_a_restart_behind_another_writers_open_transaction_copies_nothing_twice() {
    let (a, b) = (common::Kafka::shared("a"), common::Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let t = &common::unique("held");
    let g = &common::unique("g-held");
    common::create_topic(ab, t, 1);
    common::create_topic(bb, t, 1);
    let eos =
        |extra: &[&'static str]| kr::run(&kr::caught_up_args(ab, bb, t, g, "exactly-once", extra));
    common::produce(ab, t, &kr::records(20, 1, "one"));
    assert_eq!(eos(&[]).code, 0);
    // Opened after the first run's records: the second run's start sees nothing of its own
    // behind it, and does not wait.
    let other = common::open_transaction(bb, t, 0);
    common::produce(ab, t, &kr::records(20, 1, "two"));
    let run = eos(&[]);
    assert_eq!(
        (run.code, &run.json()["records"]),
        (0, &20.into()),
        "{run:?}"
    );
    assert!(!run.stderr.contains("waiting"), "{}", run.stderr);

    common::produce(ab, t, &kr::records(10, 1, "three"));
    let run = eos(&["--timeout", "5s"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "copies of {t}[0] on target {t}[0] lie past an open transaction"
        )),
        "{}",
        run.stderr
    );
    let written = || {
        common::read_all_with(
            bb,
            t,
            &[("isolation.level", "read_uncommitted")],
            common::DEFAULT_TIMEOUT,
        )
        .len()
    };
    assert_eq!(written(), 41, "nothing written by the run that gave up");

    // The transaction ends while the next run waits: it resumes after the second run's
    // records.
    let ends = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(5));
        other
            .abort_transaction(common::DEFAULT_TIMEOUT)
            .expect("abort");
    });
    let run = eos(&[]);
    ends.join().expect("abort thread");
    assert_eq!(
        (run.code, &run.json()["records"]),
        (0, &10.into()),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains(&format!("waiting for a transaction open on target {t}[0]")),
        "{}",
        run.stderr
    );
    assert_eq!(kr::assert_complete(ab, bb, t, t, 1), 0);
}

/// Issue 35: a target that refuses the transaction timeout at InitProducerId, its limit not
/// read before the start (librdkafka's mock answers no DescribeConfigs): exit 2 naming the
/// numbers and the broker's setting. It said "lower those" (--txn-max-time, --delivery-timeout),
/// no fix for a limit of 30 s or less, the margin kreplicate adds.
#[test]
fn issue_35_a_refused_transaction_timeout_unread_before_the_start_names_the_fix() {
    let (_a, b, ab, bb) = common::mock_pair("t", 1, &kr::records(10, 1, "m"));
    b.answer_next(
        1,
        RDKafkaApiKey::InitProducerId,
        RDKafkaRespErr::RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT,
        std::time::Duration::ZERO,
    )
    .unwrap();
    let args = kr::caught_up_args(&ab, &bb, "t", "g", "exactly-once", &[]);
    let run = kr::run(&args);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("raise the broker's setting to at least 152000 ms")
            && run
                .stderr
                .contains("helps only where the broker's limit is above 30 s")
            && !run.stderr.contains("lower those"),
        "{}",
        run.stderr
    );
}

/// Issue 41, item 3: exactly-once resumes after the newest record of ours the target holds,
/// also when the target was trimmed (DeleteRecords; retention does the same on a quiet
/// partition) and the source group's positions are gone. The tail read started before the log
/// start, its reader jumped to the end without an error, and the run took the target for
/// empty: it copied the 2,901 trimmed records again and the 99 kept ones twice.
#[test]
fn issue_41_exactly_once_resumes_after_a_trimmed_target_copy() {
    let (a, b) = (common::Kafka::shared("a"), common::Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let t = &common::unique("trimmed");
    common::create_topic(ab, t, 1);
    common::create_topic(bb, t, 1);
    common::produce(ab, t, &kr::records(3_000, 1, "before"));
    let eos = |group: &str| {
        let run = kr::run(&kr::caught_up_args(ab, bb, t, group, "exactly-once", &[]));
        assert_eq!(run.code, 0, "{run:?}");
        run.json()["records"].as_u64().expect("records")
    };
    assert_eq!(eos(&common::unique("g-first")), 3_000);
    // The transaction markers take offsets: the last 99 records are the last 99 read.
    let kept = common::read_all(bb, t);
    let from = kept[kept.len() - 99].offset;
    common::delete_records(bb, t, 0, from);
    common::produce(ab, t, &kr::records(500, 1, "after"));
    // A group of its own: the first run's positions expired.
    let copied = eos(&common::unique("g-second"));
    let target = common::read_all(bb, t);
    let distinct: std::collections::HashSet<String> = target
        .iter()
        .map(|g| format!("{:?}", kr::comparable(g)))
        .collect();
    eprintln!(
        "evidence: the target trimmed below offset {from}; the second run copied {copied}; the target holds {} ({} distinct)",
        target.len(),
        distinct.len()
    );
    assert_eq!(
        (copied, target.len(), distinct.len()),
        (500, 599, 599),
        "the trimmed copy was copied again"
    );
}

/// Issue 43: the resume reads the tails of every target topic with one reader (one reader per
/// topic took 40 s for 400 topics). A rerun under a new group (no positions to fall back on)
/// resumes each of several target topics where its copies end: one empty partition, one topic
/// behind another, and every record once.
#[test]
fn issue_43_one_read_of_many_target_topics_resumes_each_where_its_copies_end() {
    let (a, b) = (common::Kafka::shared("a"), common::Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let n = common::unique("tails");
    let topics: Vec<String> = (0..3).map(|i| format!("{n}.t{i}")).collect();
    for (i, t) in topics.iter().enumerate() {
        common::create_topic(ab, t, 2);
        // t2's partition 1 stays empty on both sides.
        let spread = if i == 2 { 1 } else { 2 };
        common::produce(ab, t, &kr::records(100 * (i + 1), spread, "first"));
    }
    let regex = format!("^{}\\.t", regex_escape(&n));
    let run = |group: &str| {
        kr::run(&kr::caught_up_args(
            ab,
            bb,
            &regex,
            group,
            "exactly-once",
            &["--create-topics", "-v"],
        ))
    };
    let first = run(&format!("{n}.g1"));
    assert_eq!(first.code, 0, "{first:?}");
    assert_eq!(first.json()["records"], 600, "{}", first.stdout);
    for t in &topics {
        common::produce(ab, t, &kr::records(50, 2, "second"));
    }
    let second = run(&format!("{n}.g2"));
    assert_eq!(second.code, 0, "{second:?}");
    assert!(
        second
            .stderr
            .contains("the target holds positions for 5 of 6 partitions"),
        "{}",
        second.stderr
    );
    assert_eq!(second.json()["records"], 150, "{}", second.stdout);
    for t in &topics {
        assert_eq!(kr::assert_complete(ab, bb, t, t, 2), 0, "{t}: duplicates");
    }
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c.is_ascii_alphanumeric() {
            true => vec![c],
            false => vec!['\\', c],
        })
        .collect()
}
