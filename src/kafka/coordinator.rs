//! A group's coordinator, found before an admin request needs it.

use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::TopicPartitionList;

use crate::options::ClusterSpec;

/// How long a fresh cluster gets to create its `__consumer_offsets` (1.2 s on 3.9.1 in ZooKeeper
/// mode; a few seconds for three nodes under load).
const FIND_LIMIT: Duration = Duration::from_secs(10);

/// Waits, at most `timeout` (and [`FIND_LIMIT`]), until `group`'s coordinator on the cluster
/// of `spec` is up for a consumer, or refuses it. librdkafka's admin requests look for a
/// coordinator three times in about 0.4 s, then wait for a broker's state to change, which a
/// steady cluster never does: on a cluster that creates its `__consumer_offsets` on that first
/// look (a fresh one; 1.2 s on 3.9.1 in ZooKeeper mode) a DescribeConsumerGroups waited its
/// whole timeout and checked nothing. And such a request asked again after it timed out can
/// abort the process (librdkafka 2.12's coordinator request outlives it: librdkafka#4605,
/// #5397). A consumer's group looks again every second. Its positions of no partition are asked
/// for: librdkafka answers that without a request once the coordinator is up, so nothing is
/// read (nor a fault injected for the run's own OffsetFetch taken). A refusal (the group may
/// not be described) ends the wait when it comes as an error event; it does not always (a SASL
/// principal without the group's Describe on the target was refused every 0.5 s without one),
/// hence the limit. The permission check names the grant either way.
pub fn find_group_coordinator(spec: &ClusterSpec, group: &str, timeout: Duration) {
    let Ok(consumer) = super::reader_config(spec, group, &[]).create::<BaseConsumer>() else {
        return;
    };
    let deadline = Instant::now() + timeout.min(FIND_LIMIT);
    loop {
        let step = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(500));
        if consumer
            .committed_offsets(TopicPartitionList::new(), step)
            .is_ok()
            || matches!(consumer.poll(Duration::ZERO), Some(Err(_)))
            || Instant::now() >= deadline
        {
            return;
        }
    }
}
