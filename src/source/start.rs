//! Where reading a source partition starts: the group's committed positions (asked again
//! while its coordinator loads or moves), and `--start` for partitions that hold none.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaResult, RDKafkaErrorCode};
use rdkafka::{Offset, TopicPartitionList};

use crate::error::{Error, Result};
use crate::options::StartPosition;

/// The group's committed positions for `tpl`, asked again while the group's coordinator is
/// loading or moving (a cluster just started, a coordinator failing over: NOT_COORDINATOR and
/// the like, which librdkafka hands back as they are; or its node restarting, a lost
/// connection; or a request to a slow coordinator timed out by the client, `socket.timeout.ms`,
/// before `timeout`), until `timeout` has passed.
pub(crate) fn committed_positions<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    tpl: &TopicPartitionList,
    timeout: Duration,
) -> KafkaResult<TopicPartitionList> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match consumer.committed_offsets(tpl.clone(), left) {
            Err(e)
                if Instant::now() < deadline
                    && matches!(
                        e.rdkafka_error_code(),
                        Some(
                            RDKafkaErrorCode::NotCoordinator
                                | RDKafkaErrorCode::CoordinatorNotAvailable
                                | RDKafkaErrorCode::CoordinatorLoadInProgress
                                | RDKafkaErrorCode::BrokerTransportFailure
                                | RDKafkaErrorCode::RequestTimedOut
                                | RDKafkaErrorCode::OperationTimedOut
                        )
                    ) =>
            {
                log::debug!("reading the group's committed positions: {e}; asking again");
                std::thread::sleep(Duration::from_millis(100));
            }
            done => return done,
        }
    }
}

/// The group's committed positions for `tpl` ([`committed_positions`]), as (topic, partition)
/// → offset where one is committed; the error names the group.
pub(crate) fn group_positions<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    tpl: &TopicPartitionList,
    group: &str,
    timeout: Duration,
) -> Result<HashMap<(String, i32), i64>> {
    let got = committed_positions(consumer, tpl, timeout).map_err(|e| {
        Error::failed(format!(
            "cannot read the group's committed positions on the source (group '{group}'): {e}"
        ))
    })?;
    let out = got
        .elements()
        .iter()
        .filter_map(|e| match e.offset() {
            Offset::Offset(n) => Some(((e.topic().to_string(), e.partition()), n)),
            _ => None,
        })
        .collect();
    // A list from committed() must go before its consumer (docs/brokers.md).
    drop(got);
    Ok(out)
}

/// `--start` and the partitions it is for: those that existed when the run began.
#[derive(Clone, Debug)]
pub(crate) struct Start {
    position: StartPosition,
    at_start: BTreeMap<String, i32>,
}

impl Start {
    /// `partitions`: each source topic's partition count when the run began.
    pub(crate) fn new<'a>(
        position: StartPosition,
        partitions: impl IntoIterator<Item = (&'a str, i32)>,
    ) -> Start {
        let at_start = partitions
            .into_iter()
            .map(|(t, n)| (t.to_string(), n))
            .collect();
        Start { position, at_start }
    }

    /// Where a partition that holds no position starts: `--start` for a partition that
    /// existed when the run began; one that appeared since (a grown or a new source topic)
    /// at its beginning, so the records written to it before the run noticed it are copied
    /// too.
    pub(crate) fn of(&self, topic: &str, partition: i32) -> StartPosition {
        match self.at_start.get(topic) {
            Some(&n) if partition < n => self.position,
            _ => StartPosition::Earliest,
        }
    }

    /// Where a partition that holds no position starts, decided now: its beginning, or for
    /// `latest` its end resolved to an offset. True when resolved: both engines commit that
    /// offset to the group at once, so that the next run starts there too instead of at a
    /// later "latest", past the records written in between (issue 13).
    pub(crate) fn resolve<C: ConsumerContext>(
        &self,
        consumer: &BaseConsumer<C>,
        topic: &str,
        partition: i32,
        timeout: Duration,
    ) -> Result<(Offset, bool)> {
        match self.of(topic, partition) {
            StartPosition::Earliest => Ok((Offset::Beginning, false)),
            StartPosition::Latest => {
                let (_, high) = consumer
                    .fetch_watermarks(topic, partition, timeout)
                    .map_err(|e| {
                        Error::failed(format!(
                            "cannot find the end of {topic}[{partition}] for --start latest: {e}"
                        ))
                    })?;
                Ok((Offset::Offset(high), true))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_18_start_latest_is_for_the_partitions_of_the_start_only() {
        let start = Start::new(StartPosition::Latest, [("orders", 2)]);
        assert_eq!(start.of("orders", 0), StartPosition::Latest);
        assert_eq!(start.of("orders", 1), StartPosition::Latest);
        // Grown since, or a topic found by discovery: from the beginning.
        assert_eq!(start.of("orders", 2), StartPosition::Earliest);
        assert_eq!(start.of("billing", 0), StartPosition::Earliest);
        let start = Start::new(StartPosition::Earliest, [("orders", 1)]);
        assert_eq!(start.of("orders", 0), StartPosition::Earliest);
    }
}
