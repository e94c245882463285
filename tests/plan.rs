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
