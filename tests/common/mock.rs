//! Setups of librdkafka's mock cluster (`kreplicate::mock`), for tests that inject protocol
//! errors or need partitions on different brokers.

use super::client::produce;
use super::records::Rec;

/// A mock source cluster whose `topic` has two partitions on different brokers: `topic[0]`
/// and group `group`'s coordinator on broker 1, `topic[1]` on broker 2, with `records`
/// records spread over both. Taking broker 2 down stalls `topic[1]` alone.
pub fn mock_split_source(
    topic: &str,
    group: &str,
    records: &[Rec],
) -> (kreplicate::mock::MockKafka, String) {
    use rdkafka::mocking::MockCoordinator;
    let mock = kreplicate::mock::MockKafka::start(2).expect("mock cluster");
    mock.create_topic(topic, 2).expect("mock topic");
    let cluster = mock.cluster().expect("mock handle");
    cluster.partition_leader(topic, 0, Some(1)).expect("leader");
    cluster.partition_leader(topic, 1, Some(2)).expect("leader");
    cluster
        .coordinator(MockCoordinator::Group(group.into()), 1)
        .expect("coordinator");
    drop(cluster);
    let bootstrap = mock.bootstrap().expect("bootstrap");
    produce(&bootstrap, topic, records);
    (mock, bootstrap)
}

/// Two one-broker mock clusters, source and target, each with `topic` of `partitions`
/// partitions, and `records` on the source: `(source, target, source bootstrap, target
/// bootstrap)`.
pub fn mock_pair(
    topic: &str,
    partitions: i32,
    records: &[Rec],
) -> (
    kreplicate::mock::MockKafka,
    kreplicate::mock::MockKafka,
    String,
    String,
) {
    let start = || {
        let m = kreplicate::mock::MockKafka::start(1).expect("mock cluster");
        m.create_topic(topic, partitions).expect("mock topic");
        let bootstrap = m.bootstrap().expect("bootstrap");
        (m, bootstrap)
    };
    let ((a, ab), (b, bb)) = (start(), start());
    produce(&ab, topic, records);
    (a, b, ab, bb)
}
