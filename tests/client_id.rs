//! Issue 35, item 8: every client says it is kreplicate (`client.id`), so broker logs, quotas
//! and group tools show who it is; librdkafka's default is `rdkafka`.

use crate::common::kr;
use crate::common::{self, Kafka};

#[test]
fn issue_35_the_copys_group_member_is_named_kreplicate() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("client-id");
    common::create_topic(ab, &topic, 1);
    common::produce(ab, &topic, &kr::records(3, 1, "ci"));
    let group = common::unique("g-client-id");
    let mut args = kr::caught_up_args(ab, bb, &topic, &group, "at-least-once", &[]);
    // Continuous: the member stays in the group while Kafka's own tool describes it.
    args.retain(|a| *a != "--until-caught-up");
    args.extend(["--create-topics", "--commit-interval", "100ms"]);
    let mut run = Some(kr::spawn(&args));
    kr::wait_for_committed(ab, &group, &topic, &[3], &mut run);
    let members = common::kafka_tool(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        &[
            "--bootstrap-server",
            ab,
            "--describe",
            "--group",
            &group,
            "--members",
        ],
    );
    kr::stop(&mut run);
    let ids: Vec<&str> = members
        .lines()
        .filter(|l| l.starts_with(group.as_str()))
        .filter_map(|l| l.split_whitespace().nth(3))
        .collect();
    assert_eq!(ids, ["kreplicate"], "{members}");
}
