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
