//! Issue 11: the guide's cut-over recipe (docs/guide.md), run as written against two real brokers: the
//! applications' consumer group resumes on B exactly where it stopped on A; issue 18: and the
//! failback that follows brings it back to A without a lost record.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::Message;

use crate::common::kr::{self, FAST_GROUP};
use crate::common::{self, Kafka};

/// The commands of the guide's cut-over block (`nth` 0) or failback block (1), in order.
pub(crate) fn recipe(nth: usize) -> Vec<Vec<String>> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide.md"))
            .expect("docs/guide.md");
    let block = readme
        .split("### Cut-over")
        .nth(1)
        .and_then(|s| s.split("```sh").nth(1 + nth))
        .and_then(|s| s.split("```").next())
        .expect("a cut-over or failback block");
    block
        .lines()
        .filter(|l| l.starts_with("kreplicate "))
        .map(|l| l.split_whitespace().skip(1).map(String::from).collect())
        .collect()
}

/// Reads `n` records of `orders` as a member of `billing` and commits after them (or reads to
/// the end when `n` is None); returns the values read.
pub(crate) fn billing(bootstrap: &str, n: Option<usize>) -> Vec<Vec<u8>> {
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "billing")
        .set("session.timeout.ms", "2000")
        .set("heartbeat.interval.ms", "500")
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .set(
            "auto.offset.reset",
            if n.is_some() { "earliest" } else { "error" },
        )
        .set("max.poll.interval.ms", "10000")
        .create()
        .expect("consumer");
    c.subscribe(&["orders"]).expect("subscribe");
    let mut out = Vec::new();
    let mut eof = HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while n.is_none_or(|n| out.len() < n) && eof.len() < 2 {
        assert!(Instant::now() < deadline, "billing: stuck");
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                out.push(m.payload().unwrap_or_default().to_vec());
                c.store_offset_from_message(&m).ok();
                let _ = c.commit_message(&m, CommitMode::Sync);
            }
            Some(Err(KafkaError::PartitionEOF(p))) => {
                eof.insert(p);
            }
            Some(Err(e)) => panic!("billing: {e}"),
            None => {}
        }
    }
    out
}

pub(crate) fn values(tag: &str, n: i32) -> Vec<common::Rec> {
    (0..n)
        .map(|i| common::Rec::kv(i % 2, "k", &format!("{tag}-{i}")))
        .collect()
}

#[test]
fn issue_11_the_readme_cut_over_recipe_moves_a_group_exactly() {
    let (a, b) = Kafka::pair("cut-a", "cut-b");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let on_a = cut_over(ab, bb);
    // On B, billing reads exactly what it had not read on A.
    let on_b = billing(bb, None);
    let read: HashSet<Vec<u8>> = on_a.iter().chain(&on_b).cloned().collect();
    assert_eq!(read.len(), 600, "every record, on A or on B");
    assert_eq!(on_a.len() + on_b.len(), 600, "none twice");
}

#[test]
fn issue_18_the_readme_failback_brings_the_group_back_to_a_without_loss() {
    let (a, b) = Kafka::pair("back-a", "back-b");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let on_a = cut_over(ab, bb);
    // On B, billing reads part of what A's applications wrote (B's copies of A's records) and
    // the applications write on B; then back to A.
    let on_b = billing(bb, Some(200));
    common::produce(bb, "orders", &values("on-b", 200));
    let steps = recipe(1);
    assert_eq!(steps.len(), 2, "{steps:?}");
    run_steps(steps, ab, bb);
    // On A, billing reads what it had read on neither side: A's records it had not read on B
    // (not copied back: they are A's own) and B's new records.
    let back = billing(ab, None);
    let read: HashSet<Vec<u8>> = on_a.iter().chain(&on_b).chain(&back).cloned().collect();
    assert_eq!(read.len(), 800, "every record, on A, on B or on A again");
    assert_eq!(on_a.len() + on_b.len() + back.len(), 800, "none twice");
}

/// The cut-over recipe after a copy and a partial read on A: what billing read on A.
pub(crate) fn cut_over(ab: &str, bb: &str) -> Vec<Vec<u8>> {
    common::create_topic(ab, "orders", 2);
    common::create_topic(bb, "orders", 2);
    common::produce(ab, "orders", &values("early", 300));
    // Replication runs (its default group, as in the recipe); the application consumes part
    // of the data on A.
    let mut copy = vec![
        "--from",
        ab,
        "--to",
        bb,
        "--topics",
        "orders",
        "--until-caught-up",
    ];
    copy.extend(FAST_GROUP);
    let run = kr::run(&copy);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let on_a = billing(ab, Some(170));
    common::produce(ab, "orders", &values("late", 300));

    let steps = recipe(0);
    assert_eq!(steps.len(), 4, "{steps:?}");
    run_steps(steps, ab, bb);
    on_a
}

/// Runs recipe steps with A and B standing for the clusters.
pub(crate) fn run_steps(steps: Vec<Vec<String>>, ab: &str, bb: &str) {
    for step in steps {
        let mut args: Vec<&str> = step
            .iter()
            .map(|s| match s.as_str() {
                "A" => ab,
                "B" => bb,
                s => s,
            })
            .collect();
        if args[0].starts_with("--") {
            // The copy joins its group: short sessions move a partition on in seconds (tests only).
            args.extend(FAST_GROUP);
        }
        let run = kr::run(&args);
        eprintln!("kreplicate {}:\n{}", args.join(" "), run.stdout);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
}
