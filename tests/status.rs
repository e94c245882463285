//! Issue 35, item 16: `kreplicate status` shows from outside whether a copy runs (the source
//! group's live members, who and from where) and each partition's lag, per flow of the config
//! file, in a table and in JSON; after the run stops, no member and the committed positions.

use std::time::Duration;

use crate::common::kr;
use crate::common::{self, Kafka};

#[test]
fn issue_35_status_shows_a_running_copy_and_its_lag_then_its_positions() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("status");
    common::create_topic(ab, &topic, 2);
    common::produce(ab, &topic, &kr::records(200, 2, "st"));
    let flow = common::unique("orders-dr");
    let file = common::scratch_dir().join(format!("{}.yaml", common::unique("status")));
    std::fs::write(
        &file,
        format!(
            "clusters:\n  east:\n    bootstrap: {ab}\n  west:\n    bootstrap: {bb}\nflows:\n  {flow}:\n    from: east\n    to: west\n    topics: {topic}\n    create-topics: true\n"
        ),
    )
    .unwrap();
    let file = file.to_string_lossy().into_owned();
    let group = format!("kreplicate.{}.{flow}", common::cluster_id(bb));
    let mut args = vec![
        "--config",
        &file,
        "--flow",
        &flow,
        "--json",
        "--commit-interval",
        "100ms",
    ];
    args.extend_from_slice(&kr::FAST_GROUP);
    let writer = kr::Writer::start(ab, &topic, 2);
    let mut run = Some(kr::spawn(&args));
    kr::wait_for_committed(ab, &group, &topic, &[100, 100], &mut run);

    // Every flow of the file (here one), without --flow: a copy runs, with its lag.
    let status = |extra: &[&str]| {
        let mut v = vec!["status", "--config", &file];
        v.extend_from_slice(extra);
        kr::wait(kr::spawn(&v), Duration::from_secs(60))
    };
    let running = status(&["--json"]);
    let table = status(&[]);
    // plan of the same flow says that a copy runs already.
    let plan = kr::run(&["plan", "--config", &file, "--flow", &flow]);
    drop(writer);
    let done = kr::stop(&mut run);
    eprintln!(
        "status while copying:\n{}\n{}",
        running.stdout, table.stdout
    );
    assert_eq!(running.code, 0, "{running:?}");
    let json = running.json();
    let f = &json["flows"][0];
    assert_eq!(json["flows"].as_array().unwrap().len(), 1, "{json}");
    assert_eq!(f["flow"], flow.as_str(), "{json}");
    assert_eq!(f["group"], group.as_str(), "{json}");
    assert_eq!(f["running"], true, "{json}");
    let members = f["members"].as_array().unwrap();
    assert_eq!(members.len(), 1, "{json}");
    assert_eq!(
        members[0]["client_id"],
        format!("kreplicate.{flow}"),
        "{json}"
    );
    assert_eq!(members[0]["host"], "127.0.0.1", "{json}");
    let parts = f["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 2, "{json}");
    for p in parts {
        let (committed, end, lag) = (
            p["committed"].as_i64().unwrap(),
            p["end_offset"].as_i64().unwrap(),
            p["lag"].as_i64().unwrap(),
        );
        assert!(committed >= 100 && end >= committed, "{json}");
        assert_eq!(lag, end - committed, "{json}");
    }
    assert_eq!(table.code, 0, "{table:?}");
    assert!(
        table.stdout.contains(&format!(
            "flow '{flow}': copy from east to west with --guarantee at-least-once, group '{group}'"
        )) && table.stdout.contains(&format!(
            "a copy is running: 1 active member, kreplicate.{flow} on host 127.0.0.1"
        )) && table.stdout.contains("LAG"),
        "{}",
        table.stdout
    );

    assert_eq!(plan.code, 0, "{plan:?}");
    assert!(
        plan.stdout.contains(&format!(
            "warning: a copy is running: 1 active member, kreplicate.{flow} on host 127.0.0.1 (group '{group}'): a real run would join that group"
        )),
        "{}",
        plan.stdout
    );

    // Stopped: no member, and the positions the run committed.
    let after = status(&["--json"]);
    assert_eq!(after.code, 0, "{after:?}");
    let json = after.json();
    let f = &json["flows"][0];
    assert_eq!(f["running"], false, "{json}");
    assert!(f["members"].as_array().unwrap().is_empty(), "{json}");
    let committed: Vec<i64> = f["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["committed"].as_i64().unwrap())
        .collect();
    assert_eq!(
        committed,
        common::committed(ab, &group, &topic, 2),
        "{json}"
    );
    let positions: Vec<i64> = done.json()["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["committed"].as_i64().unwrap())
        .collect();
    assert_eq!(committed, positions, "{json}\n{}", done.stdout);
    let table = status(&[]);
    assert!(
        table
            .stdout
            .contains("no copy is running: the group has no active member"),
        "{}",
        table.stdout
    );

    // Bad input is 2, a broker out of reach 1.
    let bad = kr::run(&[
        "status", "--from", "nowhere", "--to", bb, "--topics", &topic,
    ]);
    assert_eq!(bad.code, 2, "{bad:?}");
    let closed = kr::closed_address();
    let down = kr::run(&[
        "status",
        "--from",
        &closed,
        "--to",
        bb,
        "--topics",
        &topic,
        "--timeout",
        "2s",
    ]);
    assert_eq!(down.code, 1, "{down:?}");
}

/// Exactly-once keeps its position on the target (the newest origin a read_committed reader
/// sees): `status` reads it as the run's resume does, and counts the lag from there.
#[test]
fn issue_35_status_of_exactly_once_reads_the_position_the_target_holds() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("status-eos");
    let group = common::unique("status-eos");
    common::create_topic(ab, &topic, 2);
    common::produce(ab, &topic, &kr::records(20, 2, "se"));
    let copy = kr::caught_up_args(ab, bb, &topic, &group, "exactly-once", &["--create-topics"]);
    let run = kr::run(&copy);
    assert_eq!(run.code, 0, "{run:?}");
    common::produce(ab, &topic, &kr::records(6, 2, "se2"));
    let status = kr::run(&[
        "status",
        "--from",
        ab,
        "--to",
        bb,
        "--topics",
        &topic,
        "--group",
        &group,
        "--guarantee",
        "exactly-once",
        "--json",
    ]);
    assert_eq!(status.code, 0, "{status:?}");
    let json = status.json();
    let f = &json["flows"][0];
    assert_eq!(f["running"], false, "{json}");
    for p in f["partitions"].as_array().unwrap() {
        assert_eq!(p["target_position"], 10, "{json}");
        assert_eq!(p["end_offset"], 13, "{json}");
        assert_eq!(p["lag"], 3, "{json}");
    }
    assert_eq!(f["lag"], 6, "{json}");
}
