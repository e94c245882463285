//! End to end through the built binary on Apache Kafka: a faithful copy. Tests that rely on the
//! default group (named after the target cluster) get clusters of their own; the others share.

use crate::common::kr::{self, FAST_GROUP};
use crate::common::{self, Kafka};

fn args<'a>(a: &'a Kafka, b: &'a Kafka, extra: &[&'a str]) -> Vec<&'a str> {
    kr::Args::copy(&a.bootstrap, &b.bootstrap)
        .fast_group()
        .with(extra)
        .build()
}

#[test]
fn faithful_copy_of_several_topics_until_caught_up_then_nothing() {
    let (a, b) = Kafka::pair("copy-a", "copy-b");
    let topics = [("orders", 3, 900), ("payments", 2, 301)];
    for (t, parts, n) in topics {
        common::create_topic(&a.bootstrap, t, parts);
        common::produce(&a.bootstrap, t, &kr::records(n, parts, t));
    }
    // One target topic exists with more partitions than needed, one is created by the run.
    common::create_topic(&b.bootstrap, "orders", 4);

    let run = kr::run(&args(
        &a,
        &b,
        &[
            "--topics",
            "orders,payments",
            "--until-caught-up",
            "--create-topics",
            "--json",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["records"], 1201, "{json}");
    assert_eq!(json["guarantee"], "at-least-once");
    assert_eq!(json["status"], "ok");
    assert!(json["bytes"].as_u64().unwrap() > 0);
    assert!(json["seconds"].as_f64().is_some());
    assert_eq!(json["partitions"].as_array().unwrap().len(), 5);

    for (t, parts, n) in topics {
        let src = common::read_all(&a.bootstrap, t);
        let dst = common::read_all(&b.bootstrap, t);
        assert_eq!(
            dst.len(),
            n,
            "{t}: every record, no duplicates on a clean run"
        );
        for p in 0..parts {
            assert_eq!(kr::partition(&dst, p), kr::partition(&src, p), "{t}[{p}]");
        }
        // The default group is named after the target cluster's id.
        let group = format!("kreplicate.{}", common::cluster_id(&b.bootstrap));
        let committed = common::committed(&a.bootstrap, &group, t, parts);
        for p in 0..parts {
            let end = src
                .iter()
                .filter(|g| g.partition == p)
                .map(|g| g.offset + 1)
                .max()
                .unwrap();
            assert_eq!(committed[p as usize], end, "{t}[{p}] committed position");
        }
    }

    // A second run finds nothing new.
    let again = kr::run(&args(
        &a,
        &b,
        &["--topics", "orders,payments", "--until-caught-up", "--json"],
    ));
    assert_eq!(again.code, 0, "{again:?}");
    let json = again.json();
    assert_eq!(json["records"], 0);
    // ... and reports the positions the group holds, unchanged.
    let positions = |v: &serde_json::Value| -> Vec<String> {
        v["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let f = |k: &str| p[k].to_string();
                [
                    f("topic"),
                    f("partition"),
                    f("target_topic"),
                    f("committed"),
                ]
                .join(" ")
            })
            .collect()
    };
    assert_eq!(positions(&json), positions(&run.json()), "{json}");
    // What this run copied: nothing, in every partition.
    assert!(
        json["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["records"] == 0 && p["first_offset"].is_null() && p["lag"] == 0),
        "{json}"
    );
    assert!(
        again
            .stderr
            .contains("committed positions for 5 of 5 partitions"),
        "{}",
        again.stderr
    );
    assert_eq!(common::read_all(&b.bootstrap, "orders").len(), 900);
}

#[test]
fn regex_selection_with_rename_skips_internal_topics() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("rx");
    let names = ["app.clicks", "app.views", "__app.internal", "other"];
    let [clicks, views, internal, other] = names.map(|t| match t.strip_prefix("__") {
        Some(t) => format!("__{n}.{t}"),
        None => format!("{n}.{t}"),
    });
    for t in [&clicks, &views, &internal, &other] {
        common::create_topic(&a.bootstrap, t, 2);
        common::produce(&a.bootstrap, t, &kr::records(40, 2, t));
    }
    let group = format!("{n}.g");
    let regex = format!("^.*{n}.app.*");
    let run = kr::run(&args(
        &a,
        &b,
        &[
            "--group",
            &group,
            "--topics",
            &regex,
            "--rename",
            "backup.{topic}",
            "--create-topics",
            "--until-caught-up",
            "--json",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["records"], 80);
    for t in [&clicks, &views] {
        let target = format!("backup.{t}");
        assert_eq!(common::partition_count(&b.bootstrap, &target), 2);
        kr::assert_complete(&a.bootstrap, &b.bootstrap, t, &target, 2);
    }
    let md_topics = crate::common::kr::topics(&b.bootstrap);
    assert!(
        !md_topics
            .iter()
            .any(|t| t.contains(internal.as_str()) || t.contains(other.as_str())),
        "internal and unmatched topics must not be copied: {md_topics:?}"
    );
}

#[test]
fn copy_within_one_cluster_under_a_new_name() {
    let a = Kafka::shared("a");
    let events = common::unique("events");
    let (copy, group) = (format!("{events}.copy"), format!("{events}.g"));
    common::create_topic(&a.bootstrap, &events, 2);
    common::produce(&a.bootstrap, &events, &kr::records(50, 2, "e"));
    let mut v = vec!["--from", a.bootstrap.as_str(), "--to", a.bootstrap.as_str()];
    v.extend_from_slice(&FAST_GROUP);
    v.extend_from_slice(&[
        "--group",
        &group,
        "--topics",
        &events,
        "--rename",
        &copy,
        "--create-topics",
        "--until-caught-up",
    ]);
    let run = kr::run(&v);
    assert_eq!(run.code, 0, "{run:?}");
    kr::assert_complete(&a.bootstrap, &a.bootstrap, &events, &copy, 2);
}

/// Issue 10: the JSON summary says per partition what this run copied (records, first and
/// last source offset) and what is left (end offset, lag), under both engines.
#[test]
fn issue_10_json_partitions_say_what_was_copied_and_what_is_left() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("json");
    for guarantee in ["at-least-once", "exactly-once"] {
        let (topic, group) = (format!("{n}.t-{guarantee}"), format!("{n}.g-{guarantee}"));
        common::create_topic(&a.bootstrap, &topic, 2);
        common::create_topic(&b.bootstrap, &topic, 2);
        let run = |n: usize, tag: &str| {
            common::produce(&a.bootstrap, &topic, &kr::records(n, 2, tag));
            let args =
                kr::caught_up_args(&a.bootstrap, &b.bootstrap, &topic, &group, guarantee, &[]);
            let run = kr::run(&args);
            assert_eq!(run.code, 0, "{guarantee}: {run:?}");
            run.json()
        };
        let first = run(30, "one");
        let second = run(10, "two");
        for (json, records, from, to) in [(first, 15, 0, 14), (second, 5, 15, 19)] {
            let parts = json["partitions"].as_array().unwrap();
            assert_eq!(parts.len(), 2, "{json}");
            for p in parts {
                assert_eq!(p["records"], records, "{guarantee}: {p}");
                assert_eq!(p["first_offset"], from, "{guarantee}: {p}");
                assert_eq!(p["last_offset"], to, "{guarantee}: {p}");
                assert_eq!(p["committed"], to + 1, "{guarantee}: {p}");
                assert_eq!(p["end_offset"], to + 1, "{guarantee}: {p}");
                assert_eq!(p["lag"], 0, "{guarantee}: {p}");
            }
        }
    }
}

/// Issue 17: the group join on a broker with its default `group.initial.rebalance.delay.ms`
/// (3 s, what users' brokers do; the other test clusters set 0). The copy finishes, and the
/// summary's time includes the wait.
#[test]
fn issue_17_the_default_initial_rebalance_delay_is_waited_for() {
    let a = Kafka::start_with(
        "delay-a",
        &["--set", "group.initial.rebalance.delay.ms=3000"],
    );
    let b = Kafka::shared("b");
    let topic = common::unique("delay");
    let group = common::unique("g");
    common::create_topic(&a.bootstrap, &topic, 2);
    common::produce(&a.bootstrap, &topic, &kr::records(100, 2, "d"));
    let run = kr::run(&kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        "at-least-once",
        &["--create-topics"],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["records"], 100, "{json}");
    let seconds = json["seconds"].as_f64().unwrap();
    assert!(
        seconds >= 3.0,
        "the join waited the broker's delay: {seconds}"
    );
    eprintln!("copy with the broker's 3 s initial rebalance delay took {seconds:.2} s");
    assert_eq!(
        kr::assert_complete(&a.bootstrap, &b.bootstrap, &topic, &topic, 2),
        0
    );
}
