//! Smoke tests of the test fixtures themselves, against real Apache Kafka clusters.

use std::time::{Duration, Instant};

use crate::common::{self, Kafka, Rec};

fn b(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

#[test]
fn harness_two_kafka_clusters_roundtrip() {
    let (mut a, b_) = Kafka::pair("harness-a", "harness-b");
    assert_ne!(a.bootstrap, b_.bootstrap);
    assert_ne!(a.pid(), b_.pid());

    common::create_topic(&a.bootstrap, "orders", 3);
    common::create_topic(&b_.bootstrap, "orders", 3);
    assert_eq!(common::partition_count(&a.bootstrap, "orders"), 3);

    // Within the brokers' 7-day retention, which deletes older records whatever their offsets.
    let base = crate::common::kr::recent();
    let recs = vec![
        // keys, values, headers (repeated key, null header value, empty header value)
        Rec {
            partition: 0,
            key: b("k0"),
            value: b("v0"),
            headers: vec![
                ("h1".into(), b("x")),
                ("h1".into(), b("y")),
                ("nullh".into(), None),
                ("emptyh".into(), Some(vec![])),
            ],
            timestamp: Some(base),
        },
        // null value (tombstone)
        Rec {
            partition: 0,
            key: b("k1"),
            value: None,
            headers: vec![],
            timestamp: Some(base + 1),
        },
        // empty value, distinct from null
        Rec {
            partition: 1,
            key: b("k2"),
            value: Some(vec![]),
            headers: vec![],
            timestamp: Some(base + 2),
        },
        // null key
        Rec {
            partition: 1,
            key: None,
            value: b("v3"),
            headers: vec![],
            timestamp: Some(base + 3),
        },
        // empty key and binary value
        Rec {
            partition: 2,
            key: Some(vec![]),
            value: Some(vec![0, 255, 1, 0]),
            headers: vec![("bin".into(), Some(vec![0, 1, 2]))],
            timestamp: Some(base + 4),
        },
        // timestamps need not be monotonic
        Rec {
            partition: 2,
            key: b("k5"),
            value: b("v5"),
            headers: vec![],
            timestamp: Some(base - 1000),
        },
        Rec {
            partition: 2,
            key: b("k6"),
            value: b("v6"),
            headers: vec![],
            timestamp: Some(base + 6),
        },
    ];
    let delivered = common::produce(&a.bootstrap, "orders", &recs);
    assert_eq!(
        delivered,
        vec![(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)],
        "delivery (partition, offset)"
    );

    let got = common::read_all(&a.bootstrap, "orders");
    assert_eq!(got.len(), recs.len(), "{got:#?}");
    for (g, (r, (p, o))) in got.iter().zip(recs.iter().zip(&delivered)) {
        assert_eq!(g.topic, "orders");
        assert_eq!((g.partition, g.offset), (*p, *o));
        assert_eq!(&g.to_rec(), r, "record at {p}/{o}");
    }

    // B is an independent cluster: same topic name, nothing in it.
    assert!(common::read_all(&b_.bootstrap, "orders").is_empty());
    common::produce(&b_.bootstrap, "orders", &[Rec::kv(1, "only-b", "x")]);
    let got_b = common::read_all(&b_.bootstrap, "orders");
    assert_eq!(got_b.len(), 1);
    assert_eq!((got_b[0].partition, got_b[0].offset), (1, 0));
    assert!(
        got_b[0].timestamp.is_some(),
        "client stamps CreateTime when none is given"
    );
    assert_eq!(common::read_all(&a.bootstrap, "orders").len(), recs.len());

    // Committed offsets: none for an unknown group.
    assert_eq!(
        common::committed(&a.bootstrap, "nobody", "orders", 3),
        vec![-1, -1, -1]
    );

    // freeze/thaw: a produce with a 3 s message timeout fails while frozen, succeeds after thaw.
    let pid = a.pid();
    a.freeze();
    assert!(a.is_frozen());
    let t0 = Instant::now();
    let r = common::produce_with(
        &a.bootstrap,
        "orders",
        &[Rec::kv(0, "frozen", "lost?")],
        &[("message.timeout.ms", "3000")],
        Duration::from_secs(15),
    );
    let took = t0.elapsed();
    assert!(r.is_err(), "produce to a frozen broker succeeded: {r:?}");
    assert!(
        took >= Duration::from_millis(2500) && took < Duration::from_secs(12),
        "took {took:?}"
    );
    eprintln!("frozen produce failed after {took:?}: {}", r.unwrap_err());
    a.thaw();
    assert_eq!(a.pid(), pid);
    let r = common::produce_with(
        &a.bootstrap,
        "orders",
        &[Rec::kv(0, "thawed", "ok")],
        &[("message.timeout.ms", "3000")],
        Duration::from_secs(15),
    );
    let r = r.expect("produce after thaw");
    assert_eq!(r[0].0, 0);

    // Data survived the freeze; the record whose delivery timed out may or may not have been
    // written (the request may sit in the socket until thaw), as on a real hung broker.
    let got = common::read_all(&a.bootstrap, "orders");
    let p0: Vec<_> = got.iter().filter(|g| g.partition == 0).collect();
    eprintln!(
        "partition 0 after thaw: {:?}",
        p0.iter()
            .map(|g| (
                g.offset,
                String::from_utf8_lossy(g.key.as_deref().unwrap_or_default()).into_owned()
            ))
            .collect::<Vec<_>>()
    );
    assert_eq!(p0[0].to_rec(), recs[0]);
    assert_eq!(p0.last().unwrap().key, b("thawed"));
    assert_eq!(p0.last().unwrap().offset, r[0].1);
}

/// What Apache Kafka does on DeleteTopics: the topic, its data and the groups' committed
/// offsets for it are gone; recreating it (here with fewer partitions) starts every partition
/// at offset 0.
#[test]
fn harness_kafka_delete_and_recreate_topic() {
    let a = Kafka::start("harness-del");
    common::create_topic(&a.bootstrap, "t", 3);
    let old: Vec<Rec> = (0..30)
        .map(|i| Rec::kv(i % 3, &format!("old{i}"), "v"))
        .collect();
    common::produce(&a.bootstrap, "t", &old);
    common::commit(&a.bootstrap, "g", "t", &[(0, 7), (1, 10), (2, 3)]);
    assert_eq!(common::committed(&a.bootstrap, "g", "t", 3), vec![7, 10, 3]);

    common::delete_topic(&a.bootstrap, "t");
    common::create_topic(&a.bootstrap, "t", 2);
    assert_eq!(common::partition_count(&a.bootstrap, "t"), 2);
    assert_eq!(common::committed(&a.bootstrap, "g", "t", 2), vec![-1, -1]);
    assert!(common::read_all(&a.bootstrap, "t").is_empty());

    let new: Vec<Rec> = (0..4)
        .map(|i| Rec::kv(i % 2, &format!("new{i}"), "v"))
        .collect();
    assert_eq!(
        common::produce(&a.bootstrap, "t", &new),
        vec![(0, 0), (1, 0), (0, 1), (1, 1)]
    );
    let got = common::read_all(&a.bootstrap, "t");
    let keys: Vec<(i32, i64, String)> = got
        .iter()
        .map(|g| {
            (
                g.partition,
                g.offset,
                String::from_utf8(g.key.clone().unwrap()).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        vec![
            (0, 0, "new0".to_string()),
            (0, 1, "new2".to_string()),
            (1, 0, "new1".to_string()),
            (1, 1, "new3".to_string())
        ]
    );
}

/// A crash: the broker killed with SIGKILL restarts on its log, on the same port, with every
/// acknowledged record and committed offset.
#[test]
fn harness_a_killed_broker_restarts_with_its_log() {
    let mut a = Kafka::start("harness-kill");
    common::create_topic(&a.bootstrap, "t", 2);
    let before: Vec<Rec> = (0..20)
        .map(|i| Rec::kv(i % 2, &format!("k{i}"), "v"))
        .collect();
    common::produce(&a.bootstrap, "t", &before);
    common::commit(&a.bootstrap, "g", "t", &[(0, 4), (1, 6)]);
    let (port, pid) = (a.port, a.pid());
    a.kill();
    let started = Instant::now();
    a.restart();
    eprintln!("restart after a kill took {:?}", started.elapsed());
    assert_eq!(a.port, port);
    assert_ne!(a.pid(), pid);
    let got = common::read_all(&a.bootstrap, "t");
    assert_eq!(got.len(), 20);
    assert_eq!(common::committed(&a.bootstrap, "g", "t", 2), vec![4, 6]);
    common::produce(&a.bootstrap, "t", &[Rec::kv(0, "after", "v")]);
    assert_eq!(common::read_all(&a.bootstrap, "t").len(), 21);
}

/// A commit from outside a group waits until a killed member's session ends: Kafka refuses it
/// (UnknownMemberId) while the group lists a member, which failed a CI run of
/// `translate::issue_11_groups_translate_exactly_over_foreign_records_and_duplicates`.
#[test]
fn harness_commit_waits_out_a_killed_members_session() {
    use crate::common::kr;
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let t = &common::unique("killed-member");
    common::create_topic(&a.bootstrap, t, 2);
    common::create_topic(&b.bootstrap, t, 2);
    common::produce(
        &a.bootstrap,
        t,
        &[Rec::kv(0, "k", "v"), Rec::kv(1, "k", "v")],
    );
    let g = &format!("{t}.g");
    // Not --until-caught-up: the copy must still be a member when it is killed.
    let mut args = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        t,
        "--group",
        g,
        "--commit-interval",
        "50ms",
    ];
    args.extend(kr::FAST_GROUP);
    let child = kr::spawn(&args);
    common::wait_until("the copy committing", Duration::from_secs(60), || {
        common::committed(&a.bootstrap, g, t, 2) == [1, 1]
    });
    kr::signal(&child, "KILL");
    let _ = kr::wait(child, Duration::from_secs(30));
    common::commit(&a.bootstrap, g, t, &[(0, 0), (1, 0)]);
    assert_eq!(common::committed(&a.bootstrap, g, t, 2), vec![0, 0]);
}
