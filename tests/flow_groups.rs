//! Issue 35, item 7 and the flow in client.id: a named flow (`--flow NAME`) has a default
//! group of its own, takes the route's group's positions the first time, and names itself to
//! the brokers (`client.id`) and in `kreplicate_run_info`.

use crate::common::kr;
use crate::common::{self, Kafka};

#[test]
fn issue_35_a_named_flow_has_a_default_group_of_its_own() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("flowg");
    common::create_topic(ab, &topic, 1);
    common::produce(ab, &topic, &kr::records(10, 1, "fg1"));
    // A rename of this test's own makes route groups no other test uses.
    let rename = format!("{{topic}}.{}", common::unique("r"));
    let route_group = format!("kreplicate.{}.{rename}", common::cluster_id(bb));
    // Before flows had groups of their own: the route's default group holds the positions.
    let mut first = vec![
        "--from",
        ab,
        "--to",
        bb,
        "--topics",
        &topic,
        "--rename",
        &rename,
        "--create-topics",
        "--until-caught-up",
        "--json",
    ];
    first.extend_from_slice(&kr::FAST_GROUP);
    let run = kr::run(&first);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["group"], route_group.as_str(), "{run:?}");
    assert_eq!(run.json()["records"], 10, "{run:?}");

    common::produce(ab, &topic, &kr::records(5, 1, "fg2"));
    let flow = common::unique("orders-dr");
    let file = common::scratch_dir().join(format!("{}.yaml", common::unique("flows")));
    std::fs::write(
        &file,
        format!(
            "clusters:\n  east:\n    bootstrap: {ab}\n  west:\n    bootstrap: {bb}\nflows:\n  {flow}:\n    from: east\n    to: west\n    topics: {topic}\n    rename: \"{rename}\"\n"
        ),
    )
    .unwrap();
    let file = file.to_string_lossy().into_owned();
    let metrics = common::scratch_dir().join(format!("{}.prom", common::unique("flow-metrics")));
    let metrics = metrics.to_string_lossy().into_owned();
    let mut args = vec![
        "--config",
        &file,
        "--flow",
        &flow,
        "--json",
        "--commit-interval",
        "100ms",
        "--metrics-file",
        &metrics,
    ];
    args.extend_from_slice(&kr::FAST_GROUP);
    let flow_group = format!("{route_group}.{flow}");
    let mut run = Some(kr::spawn(&args));
    kr::wait_for_committed(ab, &flow_group, &topic, &[15], &mut run);
    // The flow's member names its flow to the brokers.
    let members = common::kafka_tool(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        &[
            "--bootstrap-server",
            ab,
            "--describe",
            "--group",
            &flow_group,
            "--members",
        ],
    );
    let done = kr::stop(&mut run);
    let ids: Vec<&str> = members
        .lines()
        .filter(|l| l.starts_with(flow_group.as_str()))
        .filter_map(|l| l.split_whitespace().nth(3))
        .collect();
    assert_eq!(ids, [format!("kreplicate.{flow}")], "{members}");
    let json = done.json();
    assert_eq!(json["group"], flow_group.as_str(), "{json}");
    // Only the 5 new records: the route group's positions carried over, and it said so.
    assert_eq!(json["records"], 5, "{json}\n{}", done.stderr);
    assert!(
        done.stderr.contains(&format!(
            "group '{flow_group}' has no positions yet: starting from those of '{route_group}', the route's default group before each named flow had its own, for 1 partition (committed to '{flow_group}' first)"
        )),
        "{}",
        done.stderr
    );
    let text = std::fs::read_to_string(&metrics).unwrap();
    let info = text
        .lines()
        .find(|l| l.starts_with("kreplicate_run_info{"))
        .unwrap_or_else(|| panic!("no run_info in\n{text}"));
    assert!(
        info.contains(&format!("flow=\"{flow}\""))
            && info.contains(&format!("group=\"{flow_group}\"")),
        "{info}"
    );
    // The route's group is left as it was (another flow or an older version may use it).
    assert_eq!(common::committed(ab, &route_group, &topic, 1), [10]);
}
