//! Issue 18: active-active (A → B and B → A). A record first written to B and copied into A is
//! not copied back, but a group on A that has not read it must find it on B after failover:
//! translation counts it at its own place on B.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::Message;

use crate::common::kr;
use crate::common::{self, Kafka, Rec};

const PARTITIONS: i32 = 2;

/// Reads `topic` to its end as a member of `group`, from the group's committed positions
/// (never from a reset): the values read, per partition.
pub fn member_reads(bootstrap: &str, group: &str, topic: &str) -> BTreeMap<i32, Vec<String>> {
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("session.timeout.ms", "6000")
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .set("auto.offset.reset", "error")
        .create()
        .expect("consumer");
    c.subscribe(&[topic]).expect("subscribe");
    let mut out: BTreeMap<i32, Vec<String>> = BTreeMap::new();
    let mut eof = HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while eof.len() < PARTITIONS as usize {
        assert!(Instant::now() < deadline, "{group}: stuck");
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                let v = String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned();
                out.entry(m.partition()).or_default().push(v);
            }
            Some(Err(KafkaError::PartitionEOF(p))) => {
                eof.insert(p);
            }
            Some(Err(e)) => panic!("{group}: {e}"),
            None => {}
        }
    }
    out
}

/// Values of `topic` per partition, in offset order.
pub fn values(bootstrap: &str, topic: &str) -> BTreeMap<i32, Vec<String>> {
    let mut out: BTreeMap<i32, Vec<String>> = BTreeMap::new();
    for g in common::read_all(bootstrap, topic) {
        let v = String::from_utf8_lossy(g.value.as_deref().unwrap_or_default()).into_owned();
        out.entry(g.partition).or_default().push(v);
    }
    out
}

fn writes(tag: &str, n: usize) -> Vec<Rec> {
    (0..n)
        .map(|i| Rec::kv(i as i32 % PARTITIONS, "k", &format!("{tag}-{i}")))
        .collect()
}

#[test]
fn issue_18_active_active_failover_misses_no_record_from_either_side() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("aa-orders");
    common::create_topic(ab, &topic, PARTITIONS);
    common::create_topic(bb, &topic, PARTITIONS);
    let (to_b, to_a) = (common::unique("kr-ab"), common::unique("kr-ba"));
    let copy = |from: &str, to: &str, group: &str| {
        let run = kr::run(&kr::caught_up_args(
            from,
            to,
            &topic,
            group,
            "at-least-once",
            &[],
        ));
        assert_eq!(run.code, 0, "{from} -> {to}: {}", run.stderr);
    };
    // Interleaved writes on both sides, copied one way then the other: each side's new records
    // reach the other side after the other side's own.
    for round in 0..3 {
        common::produce(bb, &topic, &writes(&format!("B{round}"), 10));
        common::produce(ab, &topic, &writes(&format!("A{round}"), 8));
        if round % 2 == 0 {
            copy(ab, bb, &to_b);
            copy(bb, ab, &to_a);
        } else {
            copy(bb, ab, &to_a);
            copy(ab, bb, &to_b);
        }
    }
    copy(ab, bb, &to_b);
    let on_a = values(ab, &topic);
    // Groups on A at several positions of each partition, from none read to all read.
    let prefix = common::unique("aa-app");
    let mut groups = Vec::new();
    for k in 0..5usize {
        let group = format!("{prefix}-g{k}");
        let at: Vec<(i32, i64)> = (0..PARTITIONS)
            .map(|p| {
                (
                    p,
                    (on_a[&p].len() * k / 4) as i64 - i64::from(p) * (k % 2) as i64,
                )
            })
            .map(|(p, x)| (p, x.max(0)))
            .collect();
        common::commit(ab, &group, &topic, &at);
        groups.push((group, at));
    }
    let run = kr::run(&[
        "groups",
        "--from",
        ab,
        "--to",
        bb,
        "--topics",
        &topic,
        "--groups",
        &format!("^{prefix}-g"),
    ]);
    eprintln!("{}", run.stdout);
    assert_eq!(run.code, 0, "groups: {}", run.stderr);
    // Failover: each group's consumer on B reads every record of A it had not read.
    let mut missed = Vec::new();
    for (group, at) in &groups {
        let read = member_reads(bb, group, &topic);
        for &(p, x) in at {
            let got: HashSet<&String> = read.get(&p).into_iter().flatten().collect();
            let want = &on_a[&p][x as usize..];
            missed.extend(
                want.iter()
                    .filter(|v| !got.contains(v))
                    .map(|v| format!("{group} [{p}] from {x}: {v}")),
            );
        }
    }
    assert!(missed.is_empty(), "missed on B: {missed:#?}");
}
