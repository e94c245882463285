//! Issue 18, items 10 and 11: a run's positions belong to its route. The default group names
//! the target cluster (its id, not how `--to` is spelled) and the rename; positions past the
//! source's start on an empty target are refused; the old default group still resumes. On
//! Apache Kafka, whose cluster ids are the real thing.

use crate::common::kr;
use crate::common::{self, Kafka};

fn copy(a: &str, b: &str, extra: &[&str]) -> kr::Run {
    let args = kr::Args::copy(a, b).topics("events").caught_up();
    kr::run(&args.with(extra).fast_group().build())
}

fn plan(a: &str, b: &str, extra: &[&str]) -> kr::Run {
    kr::run(&kr::Args::plan(a, b).topics("events").with(extra).build())
}

fn source(name: &str) -> Kafka {
    let a = Kafka::start(name);
    common::create_topic(&a.bootstrap, "events", 2);
    common::produce(&a.bootstrap, "events", &kr::records(200, 2, "ev"));
    a
}

#[test]
fn issue_18_a_renamed_copy_does_not_reuse_another_copys_positions() {
    let a = source("pos-a");
    let b = Kafka::start("pos-b");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let first = copy(ab, bb, &["--create-topics"]);
    assert_eq!(first.code, 0, "{first:?}");
    assert_eq!(first.json()["records"], 200, "{first:?}");

    // The same source copied again under another name: a group of its own, a full copy.
    let renamed = copy(ab, bb, &["--rename", "backup.{topic}", "--create-topics"]);
    assert_eq!(renamed.code, 0, "{renamed:?}");
    assert_eq!(renamed.json()["records"], 200, "{renamed:?}");
    let id = common::cluster_id(bb);
    assert_eq!(
        first.json()["group"],
        format!("kreplicate.{id}"),
        "{first:?}"
    );
    assert_eq!(
        renamed.json()["group"],
        format!("kreplicate.{id}.backup.{{topic}}")
    );
    kr::assert_complete(ab, bb, "events", "backup.events", 2);

    // A group named by hand that holds the first copy's positions: refused, nothing created.
    let mine = ["--group", "mine"];
    let seeded = copy(ab, bb, &mine);
    assert_eq!(seeded.json()["records"], 200, "{seeded:?}");
    let again = [
        &mine[..],
        &["--rename", "second.{topic}", "--create-topics"],
    ]
    .concat();
    let p = plan(ab, bb, &again);
    assert_eq!(p.code, 2, "{p:?}");
    assert!(p.stdout.contains("--trust-group-positions"), "{p:?}");
    let refused = copy(ab, bb, &again);
    assert_eq!(refused.code, 2, "{refused:?}");
    let line = refused.stderr.lines().last().unwrap_or_default();
    assert!(
        line.contains("group 'mine' holds positions past the source's start")
            && line.contains("second.events[0] at 100 (source events[0] starts at 0)")
            && line.contains("--trust-group-positions"),
        "{refused:?}"
    );
    assert!(!kr::topics(bb).contains(&"second.events".to_string()));
    // Told to start there, it does (and copies nothing).
    let trusted = [&again[..], &["--trust-group-positions"]].concat();
    let run = copy(ab, bb, &trusted);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["records"], 0, "{run:?}");
}

#[test]
fn issue_18_the_default_group_is_the_target_clusters_not_its_spelling() {
    let a = source("spell-a");
    let b = Kafka::start("spell-b");
    let ab = a.bootstrap.as_str();
    let numeric = b.bootstrap.clone();
    let named = format!("localhost:{}", b.port);
    let first = copy(ab, &numeric, &["--create-topics"]);
    assert_eq!(first.json()["records"], 200, "{first:?}");
    let second = copy(ab, &named, &[]);
    assert_eq!(second.code, 0, "{second:?}");
    assert_eq!(
        second.json()["records"],
        0,
        "the same target spelled another way: {second:?}"
    );
    let id = common::cluster_id(&numeric);
    assert_eq!(second.json()["group"], format!("kreplicate.{id}"));
    let listed = format!("{named},{numeric}");
    let third = copy(ab, &listed, &[]);
    assert_eq!(third.json()["records"], 0, "{third:?}");

    // A group with no positions on a target holding copies of this source: said at start and
    // by plan.
    let fresh = copy(ab, &numeric, &["--group", "fresh"]);
    assert_eq!(fresh.code, 0, "{fresh:?}");
    assert!(
        fresh.stderr.contains("group 'fresh' has no positions, but target topic 'events' already holds copies of this source"),
        "{fresh:?}"
    );
    let p = plan(ab, &numeric, &["--group", "fresh2"]);
    assert_eq!(p.code, 0, "{p:?}");
    assert!(p.stdout.contains("already holds copies"), "{p:?}");
}

#[test]
fn issue_18_the_old_default_group_still_resumes() {
    let a = source("old-a");
    let b = Kafka::start("old-b");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    // What an earlier version did: the default group named after --to as spelled.
    let legacy = format!("kreplicate.{}", bb.replace(':', "_"));
    let old = copy(ab, bb, &["--create-topics", "--group", &legacy]);
    assert_eq!(old.json()["records"], 200, "{old:?}");
    common::produce(ab, "events", &kr::records(10, 2, "more"));
    let new = copy(ab, bb, &[]);
    assert_eq!(new.code, 0, "{new:?}");
    assert_eq!(
        new.json()["records"],
        10,
        "resumed from the old group: {new:?}"
    );
    assert!(
        new.stderr
            .contains(&format!("starting from those of '{legacy}'")),
        "{new:?}"
    );
    let group = format!("kreplicate.{}", common::cluster_id(bb));
    assert_eq!(
        common::committed(ab, &group, "events", 2),
        vec![105, 105],
        "{new:?}"
    );
    kr::assert_complete(ab, bb, "events", "events", 2);
}
