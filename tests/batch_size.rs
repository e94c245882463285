//! Issue 18, item 6: a target topic whose max.message.bytes is below the producer's batch size
//! refused whole batches although each record fit (librdkafka does not split a refused batch),
//! and exactly-once called a 400-byte record too large. The producer's batches stay within the
//! smallest target limit.

use std::time::Duration;

use crate::common::kr::{self, ORIGIN};
use crate::common::{self, Kafka, Rec};

const RECORDS: usize = 3000;
const PARTITIONS: i32 = 3;
const LIMIT: &str = "2000";

fn backlog() -> Vec<Rec> {
    (0..RECORDS)
        .map(|i| Rec {
            partition: i as i32 % PARTITIONS,
            key: Some(format!("k{i}").into_bytes()),
            value: Some(vec![b'a' + (i % 26) as u8; 400]),
            headers: vec![("seq".into(), Some(i.to_string().into_bytes()))],
            timestamp: Some(kr::recent() + i as i64),
        })
        .collect()
}

/// The source's records, partition by partition, without the origin header on the target.
fn records(bootstrap: &str, topic: &str) -> Vec<Rec> {
    common::read_all(bootstrap, topic)
        .iter()
        .map(|g| {
            let mut r = g.to_rec();
            r.headers.retain(|(k, _)| k != ORIGIN);
            r
        })
        .collect()
}

/// Copies `source` to `targets` under each guarantee and checks every record arrived:
/// exactly once under exactly-once; at least once under at-least-once. The runs' sessions are
/// 10 s, not the suite's 2 s: on a loaded machine a 2 s session expired at the end of the copy
/// and its last commit was refused (UnknownMemberId, exit 1 as the contract says: seen in a
/// fresh-clone CI run of issue 41), which is not what this test is about.
fn copy_both(a: &str, b: &str, source: &str, targets: [&str; 2], extra: &[&str]) {
    let want = records(a, source);
    assert_eq!(want.len(), RECORDS);
    let mut failed = Vec::new();
    for (guarantee, target) in ["at-least-once", "exactly-once"].into_iter().zip(targets) {
        let once = guarantee == "exactly-once";
        let group = common::unique("g-batch");
        let rename = target.replacen(source, "{topic}", 1);
        let mut args = kr::caught_up_args(a, b, source, &group, guarantee, extra);
        // The last occurrence of a property wins: after caught_up_args' 2 s session.
        args.extend(["--rename", &rename, "-X", "session.timeout.ms=10000"]);
        args.extend(["-X", "heartbeat.interval.ms=1000"]);
        let run = kr::run(&args);
        let json = run.json();
        let copied = json["records"].as_u64().unwrap_or(0) as usize;
        let counted = if once {
            copied == RECORDS
        } else {
            copied >= RECORDS
        };
        if run.code != 0 || !counted || json["unstamped"] != 0 {
            failed.push(format!(
                "{guarantee}: exit {}, {copied} records, {} unstamped: {}: {}",
                run.code, json["unstamped"], json["error"], run.stderr
            ));
            continue;
        }
        eprintln!("{guarantee}: {copied} records in {}s", json["seconds"]);
        let limit = common::topic_configs(b, target)
            .get("max.message.bytes")
            .cloned();
        assert_eq!(limit.as_deref(), Some(LIMIT), "{guarantee}");
        let mut got = records(b, target);
        if !once {
            // Copies again keep their order: the first copy of each record stands for it.
            let mut seen = std::collections::HashSet::new();
            got.retain(|r| seen.insert((r.partition, r.key.clone())));
        }
        if got != want {
            failed.push(format!(
                "{guarantee}: {} of {} records, or different",
                got.len(),
                want.len()
            ));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

fn produce_backlog(a: &str, topic: &str) {
    // Within the source topic's own limit where it has one.
    common::produce_with(
        a,
        topic,
        &backlog(),
        &[("batch.size", "1500")],
        Duration::from_secs(60),
    )
    .unwrap_or_else(|e| panic!("produce to {topic}: {e}"));
}

#[test]
fn issue_18_a_small_target_max_message_bytes_keeps_batches_within_it() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let source = common::unique("small");
    common::create_topic(ab, &source, PARTITIONS);
    produce_backlog(ab, &source);
    let targets = [format!("{source}.alo"), format!("{source}.eos")];
    for t in &targets {
        common::create_topic_with(bb, t, PARTITIONS, &[("max.message.bytes", LIMIT)]);
    }
    copy_both(ab, bb, &source, [&targets[0], &targets[1]], &[]);
}

#[test]
fn issue_18_a_small_max_message_bytes_copied_by_create_topics_keeps_batches_within_it() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let source = common::unique("small-src");
    common::create_topic_with(ab, &source, PARTITIONS, &[("max.message.bytes", LIMIT)]);
    produce_backlog(ab, &source);
    let targets = [format!("{source}.alo"), format!("{source}.eos")];
    copy_both(
        ab,
        bb,
        &source,
        [&targets[0], &targets[1]],
        &["--create-topics"],
    );
}

/// A running producer's limits are fixed: a target topic found later with a smaller limit is
/// warned about (the next run fits it), and what fits is copied.
#[test]
fn issue_18_a_topic_found_later_with_a_smaller_limit_is_warned_about() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let prefix = common::unique("later");
    let (first, small) = (format!("{prefix}.first"), format!("{prefix}.small"));
    common::create_topic(ab, &first, 1);
    common::produce(ab, &first, &kr::records(10, 1, "f"));
    let regex = format!("^{prefix}\\..*");
    let group = common::unique("g-later");
    let args = kr::Args::copy(ab, bb)
        .topics(&regex)
        .with(&["--create-topics", "--refresh-topics", "1s"])
        .group(&group)
        .with(&["--json"])
        .fast_group()
        .build();
    let mut child = Some(kr::spawn(&args));
    kr::wait_for_records(bb, &first, 10, Duration::from_secs(60), &mut child);
    common::create_topic_with(ab, &small, 1, &[("max.message.bytes", LIMIT)]);
    common::produce(ab, &small, &kr::records(5, 1, "s"));
    kr::wait_for_records(bb, &small, 5, Duration::from_secs(60), &mut child);
    let run = kr::stop(&mut child);
    assert!(
        run.stderr
            .contains("a new target topic's max.message.bytes (2000) is below what this run's producer may batch"),
        "{}",
        run.stderr
    );
}
