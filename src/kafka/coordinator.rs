//! A group's coordinator, found before an admin request needs it.

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};

use crate::options::ClusterSpec;

/// Waits, at most `timeout`, until `group`'s coordinator on the cluster of `spec` answers a
/// consumer. librdkafka's admin requests look for a coordinator three times in about 0.4 s,
/// then wait for a broker's state to change, which a steady cluster never does: on a cluster
/// that creates its `__consumer_offsets` on that first look (a fresh one; 1.2 s on 3.9.1 in
/// ZooKeeper mode) a DescribeConsumerGroups waited its whole timeout and checked nothing. And
/// such a request asked again after it timed out can abort the process (librdkafka 2.12's
/// coordinator request outlives it: librdkafka#4605, #5397). A consumer's group looks again
/// every second. Its answer does not matter (a group it may not describe is refused at once),
/// only that the coordinator is there for the requests that follow.
pub fn find_group_coordinator(spec: &ClusterSpec, group: &str, topic: &str, timeout: Duration) {
    let Ok(consumer) = super::reader_config(spec, group, &[]).create::<BaseConsumer>() else {
        return;
    };
    let mut tpl = TopicPartitionList::new();
    if tpl.add_partition_offset(topic, 0, Offset::Invalid).is_ok() {
        let _ = consumer.committed_offsets(tpl, timeout);
    }
}
