//! What both engines do alike, beneath their loops (as ripgrep's `search` and
//! `search_parallel` share what sits beneath them): the loop's clock and rate limit
//! ([`clock`]), following the source's topics ([`follow`]), the positions index's entries
//! ([`index`]), partitions in turn under a rate limit ([`turns`]), and the small decisions
//! below. Each loop stays in its engine: they differ where a shared loop would hide it
//! (delivery reports against transactions).

pub(super) mod clock;
pub(super) mod follow;
pub(super) mod index;
pub(super) mod turns;

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, ConsumerContext};
use rdkafka::error::RDKafkaErrorCode;
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

/// Errors the target gives again for the same record however often it is sent: too large,
/// against the topic's policy, not authorised, or malformed for the target. Retrying such a
/// record would abort and rewind forever; any other error may pass on a retry.
pub(in crate::engine) fn refused_for_good(code: RDKafkaErrorCode) -> bool {
    use RDKafkaErrorCode as C;
    matches!(
        code,
        C::MessageSizeTooLarge
            | C::InvalidMessageSize
            | C::MessageBatchTooLarge
            | C::InvalidRecord
            | C::InvalidTimestamp
            | C::UnsupportedForMessageFormat
            | C::PolicyViolation
            | C::TopicAuthorizationFailed
            | C::ClusterAuthorizationFailed
            | C::TransactionalIdAuthorizationFailed
    )
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

/// Assigns the source partitions, their topics' metadata read first
/// ([`source::assign_with_leaders`]).
pub(super) fn assign<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    tpl: &TopicPartitionList,
) -> Result<()> {
    source::assign_with_leaders(consumer, tpl)
        .map_err(|e| Error::failed(format!("cannot assign source partitions: {e}")))
}
