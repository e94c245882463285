//! A source topic that grows while a continuous run copies it (Apache Kafka: tansu has no
//! CreatePartitions). The first record of a new partition lands in the same target partition,
//! under at-least-once and exactly-once, with `--create-topics` (kreplicate adds the target's
//! partitions) and without (the target was grown by hand). Records written to a new partition
//! before the run noticed it are copied too, even under `--start latest`: `--start` is for the
//! partitions that existed when the run began. Shared clusters, names of their own.

use std::time::Duration;

use crate::common::kr;
use crate::common::{self, Kafka};

/// Waits until the group's committed positions on `a` reach `want` (the run's `--start latest`
/// decision is committed at once): records produced after that are after the decision.
fn wait_committed(a: &str, group: &str, topic: &str, want: &[i64]) {
    let what = format!("{group} committing {want:?} on {topic}");
    common::wait_until(&what, Duration::from_secs(60), || {
        common::committed(a, group, topic, want.len() as i32) == want
    });
}

fn grown_topic_is_followed(guarantee: &str, create_topics: bool) {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("grow");
    let group = common::unique("g-grow");
    common::create_topic(&a.bootstrap, &topic, 1);
    if !create_topics {
        common::create_topic(&b.bootstrap, &topic, 1);
    }
    // Before the run: left behind by --start latest.
    common::produce(&a.bootstrap, &topic, &kr::records(40, 1, "before"));

    let mut args = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--group",
        &group,
        "--guarantee",
        guarantee,
        "--start",
        "latest",
        "--refresh-topics",
        "1s",
        "--json",
    ];
    if create_topics {
        args.push("--create-topics");
    }
    args.extend_from_slice(&kr::FAST_GROUP);
    let mut child = Some(kr::spawn(&args));
    wait_committed(&a.bootstrap, &group, &topic, &[40]);

    let after = kr::records(30, 1, "after");
    common::produce(&a.bootstrap, &topic, &after);
    kr::wait_for_records(
        &b.bootstrap,
        &topic,
        30,
        Duration::from_secs(60),
        &mut child,
    );

    // The source grows; records land in the new partitions before the run can notice.
    if !create_topics {
        common::add_partitions(&b.bootstrap, &topic, 3);
    }
    common::add_partitions(&a.bootstrap, &topic, 3);
    let mut grown = kr::records(60, 3, "grown");
    grown.retain(|r| r.partition > 0);
    common::produce(&a.bootstrap, &topic, &grown);
    kr::wait_for_records(
        &b.bootstrap,
        &topic,
        70,
        Duration::from_secs(60),
        &mut child,
    );
    let run = kr::stop(&mut child);

    assert_eq!(common::partition_count(&b.bootstrap, &topic), 3);
    let src = common::read_all(&a.bootstrap, &topic);
    let dst = common::read_all(&b.bootstrap, &topic);
    assert_eq!(
        kr::partition(&dst, 0),
        kr::partition(&src, 0)[40..].to_vec(),
        "[0]: exactly the records after the --start latest decision\n{}",
        run.stderr
    );
    for p in 1..3 {
        assert_eq!(
            kr::partition(&dst, p),
            kr::partition(&src, p),
            "[{p}]: the new partition from its first record, in the same target partition\n{}",
            run.stderr
        );
        assert_eq!(kr::partition(&dst, p).len(), 20);
    }
    assert!(
        run.stderr.contains(&format!(
            "source topic '{topic}' grew to 3 partitions: copying them all"
        )),
        "{}",
        run.stderr
    );
    assert_eq!(run.json()["records"], 70, "{}", run.stdout);
}

#[test]
fn issue_18_a_grown_source_is_followed_with_create_topics_at_least_once() {
    grown_topic_is_followed("at-least-once", true);
}

#[test]
fn issue_18_a_grown_source_is_followed_with_create_topics_exactly_once() {
    grown_topic_is_followed("exactly-once", true);
}

#[test]
fn issue_18_a_target_grown_by_hand_is_followed_at_least_once() {
    grown_topic_is_followed("at-least-once", false);
}

#[test]
fn issue_18_a_target_grown_by_hand_is_followed_exactly_once() {
    grown_topic_is_followed("exactly-once", false);
}

/// A cron-style `--until-caught-up` run that starts after the source grew: without
/// `--create-topics` it refuses (exit 2, nothing copied); with it, it adds the partitions on
/// the target and copies the new ones from their first record, even under `--start latest`.
fn a_run_starting_after_growth_adds_partitions(guarantee: &str) {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("grown-between");
    let group = common::unique("g-grown-between");
    common::create_topic(&a.bootstrap, &topic, 1);
    common::produce(&a.bootstrap, &topic, &kr::records(10, 1, "first"));
    let run = |extra: &[&str]| {
        kr::run(&kr::caught_up_args(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            &group,
            guarantee,
            extra,
        ))
    };
    let first = run(&["--create-topics"]);
    assert_eq!(first.code, 0, "{first:?}");
    assert_eq!(first.json()["records"], 10, "{first:?}");

    // Between two runs the source grows, and records land in every partition.
    common::add_partitions(&a.bootstrap, &topic, 3);
    common::produce(&a.bootstrap, &topic, &kr::records(30, 3, "grown"));

    let refused = run(&[]);
    assert_eq!(refused.code, 2, "without --create-topics: {refused:?}");
    assert!(
        refused.stderr.contains(&format!(
            "target topic '{topic}' has 1 partition, fewer than the 3 of source topic '{topic}'"
        )) && refused.stderr.contains("--create-topics"),
        "{}",
        refused.stderr
    );
    assert_eq!(refused.json()["error_kind"], "usage", "{refused:?}");
    assert_eq!(common::partition_count(&b.bootstrap, &topic), 1);

    let mut plan_args = vec!["plan"];
    plan_args.extend(kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        guarantee,
        &["--create-topics"],
    ));
    let plan = kr::run(&plan_args);
    assert_eq!(plan.code, 0, "{plan:?}");
    assert_eq!(
        plan.json()["topics"][0]["action"],
        "add_partitions",
        "{plan:?}"
    );
    assert_eq!(
        common::partition_count(&b.bootstrap, &topic),
        1,
        "plan writes nothing"
    );

    let second = run(&["--create-topics", "--start", "latest"]);
    assert_eq!(second.code, 0, "{second:?}");
    assert_eq!(second.json()["records"], 30, "{second:?}");
    assert_eq!(common::partition_count(&b.bootstrap, &topic), 3);
    let src = common::read_all(&a.bootstrap, &topic);
    let dst = common::read_all(&b.bootstrap, &topic);
    for p in 0..3 {
        assert_eq!(
            kr::partition(&dst, p),
            kr::partition(&src, p),
            "[{p}]: every record, in the same partition\n{}",
            second.stderr
        );
    }
    assert_eq!(kr::partition(&dst, 1).len(), 10);
}

#[test]
fn issue_18_a_run_starting_after_growth_adds_partitions_at_least_once() {
    a_run_starting_after_growth_adds_partitions("at-least-once");
}

#[test]
fn issue_18_a_run_starting_after_growth_adds_partitions_exactly_once() {
    a_run_starting_after_growth_adds_partitions("exactly-once");
}

/// The consumer's own metadata refresh (here every second) sees the grown source long before
/// the run's `--refresh-topics` (an hour) does, and the group assigns the new partition: the
/// run checks the growth itself (adds the target partition with `--create-topics`) before
/// copying the new partition's records, into the same partition number.
#[test]
fn issue_18_a_rebalance_librdkafka_starts_for_a_grown_topic_is_followed() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("grow-self");
    let group = common::unique("g-grow-self");
    common::create_topic(&a.bootstrap, &topic, 1);
    common::produce(&a.bootstrap, &topic, &kr::records(10, 1, "before"));
    let mut args = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--group",
        &group,
        "--create-topics",
        "--refresh-topics",
        "1h",
        "--json",
        "-X",
        "topic.metadata.refresh.interval.ms=1000",
    ];
    args.extend_from_slice(&kr::FAST_GROUP);
    let mut child = Some(kr::spawn(&args));
    kr::wait_for_records(
        &b.bootstrap,
        &topic,
        10,
        Duration::from_secs(60),
        &mut child,
    );

    common::add_partitions(&a.bootstrap, &topic, 2);
    let mut grown = kr::records(20, 2, "grown");
    grown.retain(|r| r.partition == 1);
    common::produce(&a.bootstrap, &topic, &grown);
    kr::wait_for_records(
        &b.bootstrap,
        &topic,
        20,
        Duration::from_secs(60),
        &mut child,
    );
    let run = kr::stop(&mut child);

    assert_eq!(common::partition_count(&b.bootstrap, &topic), 2);
    let src = common::read_all(&a.bootstrap, &topic);
    let dst = common::read_all(&b.bootstrap, &topic);
    for p in 0..2 {
        assert_eq!(
            kr::partition(&dst, p),
            kr::partition(&src, p),
            "[{p}]\n{}",
            run.stderr
        );
    }
    assert!(
        run.stderr.contains(&format!(
            "source topic '{topic}' grew to 2 partitions: copying them all"
        )),
        "{}",
        run.stderr
    );
    assert_eq!(run.json()["records"], 20, "{}", run.stdout);
}
