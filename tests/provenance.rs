//! Issue 11: every copied record names its origin (source cluster, topic, partition, offset)
//! under every guarantee; exactly-once targets written with the older header keep resuming;
//! records that came from the target are not copied back (active-active converges).

use crate::common::kr::{self, ORIGIN};
use crate::common::{self, unique, Got, Kafka, Rec};

/// The shared clusters, and a source topic name of the test's own.
fn shared(name: &str) -> (Kafka, Kafka, String) {
    (Kafka::shared("a"), Kafka::shared("b"), unique(name))
}

/// The last origin header of a target record (the one the last copy added).
fn origin(g: &Got) -> Option<String> {
    g.headers
        .iter()
        .rev()
        .find(|(k, _)| k == ORIGIN)
        .and_then(|(_, v)| {
            v.as_deref()
                .map(|v| String::from_utf8_lossy(v).into_owned())
        })
}

#[test]
fn issue_11_every_guarantee_stamps_source_cluster_topic_partition_offset() {
    let (a, b, t) = shared("prov");
    let (ab, bb, t) = (a.bootstrap.as_str(), b.bootstrap.as_str(), t.as_str());
    let id = common::cluster_id(ab);
    common::create_topic(ab, t, 2);
    common::produce(ab, t, &kr::records(40, 2, "p"));
    for (i, guarantee) in ["none", "at-least-once", "exactly-once"].iter().enumerate() {
        let target = format!("{t}.{i}");
        common::create_topic(bb, &target, 2);
        let group = format!("{t}.g{i}");
        let rename = ["--rename", target.as_str()];
        let run = kr::run(&kr::caught_up_args(ab, bb, t, &group, guarantee, &rename));
        assert_eq!(run.code, 0, "{guarantee}: {}", run.stderr);
        let src = common::read_all(ab, t);
        let dst = common::read_all(bb, &target);
        assert_eq!(dst.len(), src.len(), "{guarantee}: records copied");
        for p in 0..2 {
            let s: Vec<&Got> = src.iter().filter(|g| g.partition == p).collect();
            let d: Vec<&Got> = dst.iter().filter(|g| g.partition == p).collect();
            for (s, d) in s.iter().zip(&d) {
                assert_eq!(
                    origin(d).as_deref(),
                    Some(format!("{id}/{t}/{p}/{}", s.offset).as_str()),
                    "{guarantee}: origin of {target}[{p}] offset {}",
                    d.offset
                );
                assert_eq!(kr::comparable(d), s.to_rec(), "{guarantee}: record");
            }
        }
        // verify ignores the header.
        let v = kr::run(&[
            "verify", "--from", ab, "--to", bb, "--topics", t, "--rename", &target,
        ]);
        assert_eq!(v.code, 0, "{guarantee}: verify: {}", v.stderr);
    }
}

#[test]
fn issue_11_no_origin_header_copies_headers_byte_for_byte() {
    let (a, b, t) = shared("noh");
    let (ab, bb, t) = (a.bootstrap.as_str(), b.bootstrap.as_str(), t.as_str());
    let (g, g2) = (format!("{t}.g"), format!("{t}.g2"));
    common::create_topic(ab, t, 1);
    common::create_topic(bb, t, 1);
    common::produce(ab, t, &kr::records(20, 1, "n"));
    let flag = ["--no-origin-header"];
    let run = kr::run(&kr::caught_up_args(ab, bb, t, &g, "at-least-once", &flag));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let src: Vec<Rec> = common::read_all(ab, t).iter().map(Got::to_rec).collect();
    let dst: Vec<Rec> = common::read_all(bb, t).iter().map(Got::to_rec).collect();
    assert_eq!(dst, src, "headers must be exactly the source's");
    // exactly-once resumes from the header: the combination is refused, nothing copied.
    let run = kr::run(&kr::caught_up_args(ab, bb, t, &g2, "exactly-once", &flag));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--no-origin-header"), "{}", run.stderr);
    assert_eq!(common::read_all(bb, t).len(), 20);
}

#[test]
fn issue_11_exactly_once_resumes_after_headers_of_the_older_format() {
    let (a, b, t) = shared("old");
    let (ab, bb, t) = (a.bootstrap.as_str(), b.bootstrap.as_str(), t.as_str());
    let g = format!("{t}.g");
    let id = common::cluster_id(ab);
    common::create_topic(ab, t, 2);
    common::create_topic(bb, t, 2);
    common::produce(ab, t, &kr::records(60, 2, "o"));
    // A target as an exactly-once run before issue 11 left it: the first 10 records of each
    // partition, each with `<topic>/<partition>/<offset>`.
    let src = common::read_all(ab, t);
    let old: Vec<Rec> = src
        .iter()
        .filter(|g| g.offset < 10)
        .map(|g| {
            let mut r = g.to_rec();
            let v = format!("{t}/{}/{}", g.partition, g.offset);
            r.headers.push((ORIGIN.into(), Some(v.into_bytes())));
            r
        })
        .collect();
    common::produce(bb, t, &old);
    let run = kr::run(&kr::caught_up_args(ab, bb, t, &g, "exactly-once", &[]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.json()["records"],
        40,
        "only what the old run had not copied"
    );
    let dst = common::read_all(bb, t);
    for p in 0..2 {
        assert_eq!(kr::partition(&dst, p), kr::partition(&src, p), "{t}[{p}]");
        let new = dst.iter().filter(|g| g.partition == p && g.offset >= 10);
        for g in new {
            assert_eq!(
                origin(g),
                Some(format!("{id}/{t}/{p}/{}", g.offset)),
                "new records carry the new format"
            );
        }
    }
}

#[test]
fn issue_11_active_active_runs_converge_and_count_skipped_records() {
    let (a, b, t) = shared("aa");
    let (ab, bb, t) = (a.bootstrap.as_str(), b.bootstrap.as_str(), t.as_str());
    let (to_b, to_a) = (format!("{t}.to-b"), format!("{t}.to-a"));
    common::create_topic(ab, t, 2);
    common::create_topic(bb, t, 2);
    common::produce(ab, t, &kr::records(50, 2, "from-a"));
    common::produce(bb, t, &kr::records(30, 2, "from-b"));
    let mut skipped = [0u64; 2];
    let mut copied = [0u64; 2];
    // Both directions at once, three rounds, with new records on both sides between rounds.
    for round in 0..3 {
        let ab_args = kr::caught_up_args(ab, bb, t, &to_b, "at-least-once", &[]);
        let ba_args = kr::caught_up_args(bb, ab, t, &to_a, "at-least-once", &[]);
        let (x, y) = (kr::spawn(&ab_args), kr::spawn(&ba_args));
        let limit = std::time::Duration::from_secs(120);
        for (i, run) in [kr::wait(x, limit), kr::wait(y, limit)].iter().enumerate() {
            assert_eq!(run.code, 0, "round {round}: {}", run.stderr);
            let j = run.json();
            let n = j["skipped"].as_u64().expect("skipped is a number");
            if n > 0 {
                let line = format!("skipped {n} that came from the target");
                assert!(run.stderr.contains(&line), "{}", run.stderr);
            }
            skipped[i] += n;
            copied[i] += j["records"].as_u64().expect("records");
        }
        if round == 0 {
            common::produce(ab, t, &kr::records(10, 2, "later-a"));
            common::produce(bb, t, &kr::records(10, 2, "later-b"));
        }
    }
    // Each side: its own 60 records plus the other's 40 or 60, once each.
    let (on_a, on_b) = (common::read_all(ab, t), common::read_all(bb, t));
    assert_eq!((on_a.len(), on_b.len()), (100, 100), "counts stop growing");
    for side in [&on_a, &on_b] {
        let mut seen = std::collections::HashSet::new();
        for g in side {
            assert!(
                seen.insert(format!("{:?}", kr::comparable(g))),
                "twice: {g:?}"
            );
        }
    }
    assert_eq!(copied, [60, 40], "A→B copied A's, B→A copied B's");
    assert_eq!(
        skipped.iter().sum::<u64>(),
        100,
        "every copy was seen once more and skipped"
    );
}
