//! Issue 35, item 13: `plan` and the run say when the target topic already holds records
//! that are not copies from this source (their origin header says so); only a later `verify`
//! reported them (`extra`).

use crate::common::kr;
use crate::common::{self, Kafka};

#[test]
fn issue_35_plan_and_run_say_the_target_holds_foreign_records() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("foreign");
    common::create_topic(ab, &topic, 1);
    common::produce(ab, &topic, &kr::records(5, 1, "src"));
    // Another producer wrote to the target topic first.
    common::create_topic(bb, &topic, 1);
    common::produce(bb, &topic, &kr::records(3, 1, "local"));
    let group = common::unique("g-foreign");
    let said = format!(
        "target topic '{topic}' already holds records that are not copies of '{topic}' from this source (3 of the last 3 read)"
    );
    let plan = kr::run(&[
        "plan", "--from", ab, "--to", bb, "--topics", &topic, "--group", &group,
    ]);
    assert_eq!(plan.code, 0, "{plan:?}");
    assert!(
        plan.stdout.contains(&said) || plan.stderr.contains(&said),
        "{plan:?}"
    );
    let run = kr::run(&kr::caught_up_args(
        ab,
        bb,
        &topic,
        &group,
        "at-least-once",
        &[],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains(&said), "{}", run.stderr);
    // A second run: the tail now ends with our copies, the 3 others still among the last 16.
    common::produce(ab, &topic, &kr::records(2, 1, "src2"));
    let again = kr::run(&kr::caught_up_args(
        ab,
        bb,
        &topic,
        &group,
        "at-least-once",
        &[],
    ));
    assert_eq!(again.code, 0, "{again:?}");
    assert!(
        again.stderr.contains("(3 of the last 8 read)"),
        "{}",
        again.stderr
    );
}

/// Issue 43: with many topics, every target topic's tail is read. A partition's end names
/// its partition, not its topic, and the read took the first end of partition 0 for every
/// topic's: a target topic whose tail takes several fetches (16 records of 300 kB, 1 MB a
/// fetch) was cut short by the other topics' ends ("3 of the last 3 read"). Past the first
/// three topics, the rest are one line (their counts summed).
#[test]
fn issue_43_every_target_topic_of_many_is_read_for_foreign_records() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let prefix = common::unique("many-foreign");
    let topics: Vec<String> = (0..12).map(|i| format!("{prefix}-{i:02}")).collect();
    let large: Vec<common::Rec> = (0..16)
        .map(|i| common::Rec {
            partition: 0,
            key: Some(format!("large-{i}").into_bytes()),
            value: Some(vec![b'v'; 300_000]),
            headers: Vec::new(),
            timestamp: Some(kr::recent() + i),
        })
        .collect();
    for (i, t) in topics.iter().enumerate() {
        common::create_topic(ab, t, 1);
        common::produce(ab, t, &kr::records(2, 1, "src"));
        common::create_topic(bb, t, 1);
        match i {
            0 => common::produce(bb, t, &large),
            _ => common::produce(bb, t, &kr::records(3, 1, "local")),
        };
    }
    let selection = format!("^{prefix}-");
    let group = common::unique("g-many-foreign");
    let plan = kr::run(&[
        "plan", "--from", ab, "--to", bb, "--topics", &selection, "--group", &group,
    ]);
    assert_eq!(plan.code, 0, "{plan:?}");
    let said = format!("{}{}", plan.stdout, plan.stderr);
    // The first three topics have a line each, the other nine one line in all.
    let missed: Vec<&String> = topics[..3]
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            let n = if *i == 0 { 16 } else { 3 };
            !said.contains(&format!(
                "target topic '{t}' already holds records that are not copies of '{t}' from this source ({n} of the last {n} read)"
            ))
        })
        .map(|(_, t)| t)
        .collect();
    let rest = format!(
        "9 more target topics ('{}', '{}', '{}' and 6 more) already hold records that are not copies of their source topics from this source (27 of the last 27 read)",
        topics[3], topics[4], topics[5]
    );
    assert!(
        missed.is_empty() && said.contains(&rest),
        "no warning or a short one for {missed:?}, or not '{rest}': {plan:?}"
    );
}
