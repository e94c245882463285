//! What both engines do alike, beneath their loops (as ripgrep's `search` and
//! `search_parallel` share what sits beneath them): the loop's clock and rate limit
//! ([`clock`]), following the source's topics ([`follow`]), the positions index's entries
//! ([`index`]), and the small decisions below. Each loop stays in its engine: they differ
//! where a shared loop would hide it (delivery reports against transactions).

pub(super) mod clock;
pub(super) mod follow;
pub(super) mod index;

use std::collections::BTreeSet;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::{Offset, TopicPartitionList};

use crate::error::{Error, Result};
use crate::options::RunOptions;
use crate::source;

/// How long the end of a run, a revoke or a transaction's commit waits for the target's
/// acknowledgements: one delivery timeout (after which librdkafka reports every record in
/// flight as failed) and a margin for those reports to arrive.
pub(super) fn flush_timeout(opts: &RunOptions) -> Duration {
    opts.delivery_timeout + Duration::from_secs(5)
}

/// Adds one partition to an assignment, at `at`.
pub(super) fn add_start(
    tpl: &mut TopicPartitionList,
    topic: &str,
    partition: i32,
    at: Offset,
) -> Result<()> {
    tpl.add_partition_offset(topic, partition, at)
        .map_err(|e| Error::failed(format!("cannot assign {topic}[{partition}]: {e}")))
}

/// How long an assignment waits for its topics' metadata (then librdkafka finds the leaders
/// itself, later).
const LEADERS_WAIT: Duration = Duration::from_secs(5);

/// Assigns the source partitions ([`source::assign`]), their topics' metadata read first: a
/// consumer that assigns without a subscription (a shard, exactly-once) knows no leader yet,
/// and librdkafka 2.12 then queries each partition's start offset on a timer, about a second
/// later ("no current leader for partition: (re)starting offset query timer").
pub(super) fn assign<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    tpl: &TopicPartitionList,
) -> Result<()> {
    let topics: BTreeSet<String> = tpl
        .elements()
        .iter()
        .map(|e| e.topic().to_string())
        .collect();
    for topic in topics {
        // A failure here only leaves the leaders to librdkafka.
        let _ = consumer.fetch_metadata(Some(&topic), LEADERS_WAIT);
    }
    source::assign(consumer, tpl)
        .map_err(|e| Error::failed(format!("cannot assign source partitions: {e}")))
}
