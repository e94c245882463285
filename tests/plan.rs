//! `kreplicate plan`: what a copy run with the same flags would do, writing nothing. Issue 35,
//! items 2 and 3: the default group (named after the target cluster's id and `--rename`) where
//! the run's surroundings see it: `plan` of a run that would refuse.

use crate::common::kr;
use crate::common::{self, Kafka};

#[test]
fn issue_35_plan_of_a_refused_run_shows_the_default_group_and_its_positions() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("dg");
    common::create_topic(ab, &topic, 1);
    common::produce(ab, &topic, &kr::records(5, 1, "dg"));
    // A rename of this test's own makes a default group no other test uses.
    let rename = format!("{{topic}}.{}", common::unique("r"));
    let group = format!("kreplicate.{}.{rename}", common::cluster_id(bb));
    common::commit(ab, &group, &topic, &[(0, 3)]);
    // The target topic is missing and --create-topics not given: a run would refuse.
    let plan = kr::run(&[
        "plan", "--from", ab, "--to", bb, "--topics", &topic, "--rename", &rename, "--json",
    ]);
    assert_eq!(plan.code, 2, "{plan:?}");
    let json = plan.json();
    assert!(
        json["refusal"]
            .as_str()
            .is_some_and(|r| r.contains("does not exist")),
        "{json}"
    );
    assert_eq!(json["group"], group.as_str(), "{json}");
    assert_eq!(json["topics"][0]["partitions"][0]["committed"], 3, "{json}");
}

/// Issue 41, item 11: every refusal a run makes at start, `plan` with the same flags makes
/// too: the same exit code and the same line. `plan` never made the run's group-protocol
/// choice, and said "a real run would start (exit 0)" of a static member under KIP-848.
#[test]
fn issue_41_plan_refuses_what_the_run_refuses_with_the_same_line() {
    const WAIT: [&str; 3] = ["--until-caught-up", "--timeout", "20s"];
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let n = common::unique("same");
    let (t, one, absent) = (format!("{n}.t"), format!("{n}.one"), format!("{n}.absent"));
    common::create_topic(ab, &t, 2);
    common::create_topic(bb, &t, 2);
    common::create_topic(ab, &one, 1);
    common::produce(ab, &t, &kr::records(10, 2, "same"));
    let g = format!("{n}.g");
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "a source topic that does not exist",
            vec!["--topics", &absent],
        ),
        (
            "a target topic missing without --create-topics",
            vec!["--topics", &one],
        ),
        (
            "a static member under KIP-848's protocol",
            vec![
                "--topics",
                &t,
                "--create-topics",
                "-X",
                "group.instance.id=x",
            ],
        ),
        (
            "a property the guarantee depends on",
            vec!["--topics", &t, "-X", "enable.auto.commit=true"],
        ),
        (
            "a misspelt property",
            vec!["--topics", &t, "-X", "fetch.wait.max.msec=5"],
        ),
        (
            "SASL credentials without a SASL protocol",
            vec!["--topics", &t, "--to-property", "sasl.username=u"],
        ),
    ];
    let mut differ = Vec::new();
    for (what, extra) in &cases {
        let run_args = kr::Args::copy(ab, bb)
            .group(&g)
            .with(extra)
            .with(&WAIT)
            .build();
        let plan_args = kr::Args::plan(ab, bb)
            .group(&g)
            .with(extra)
            .with(&WAIT)
            .build();
        let run = kr::run(&run_args);
        let plan = kr::run(&plan_args);
        let line = run
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("kreplicate: error: "))
            .unwrap_or_default();
        eprintln!(
            "evidence: {what}: run exit {}, plan exit {}: {line}",
            run.code, plan.code
        );
        assert_eq!(run.code, 2, "{what}: the run did not refuse: {run:?}");
        let said = plan.stderr.contains(&format!("kreplicate: error: {line}"))
            || plan
                .stdout
                .contains(&format!("a real run would refuse: {line} (exit 2)"));
        if plan.code != run.code || line.is_empty() || !said {
            differ.push(format!(
                "{what}: the run said '{line}' (exit {}); plan: {plan:?}",
                run.code
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
