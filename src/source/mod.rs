//! The consuming side, shared by both engines and `verify`: classifying what a poll returned,
//! source gaps, and lag; `ends`: finding partition ends; `start`: where reading starts. Assigning
//! and leaving the group are `kafka::consumer`'s (re-exported here), which `topics` uses too.

use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, KafkaResult, RDKafkaErrorCode};
use rdkafka::message::BorrowedMessage;
use rdkafka::TopicPartitionList;

use crate::options::RunOptions;

mod ends;
mod start;
pub(crate) use crate::kafka::consumer::{
    assign, assign_with_leaders, close, group_generation, member_id, watermarks,
};
pub(crate) use ends::{end_check, EndCheck, Ends};
pub(crate) use start::{committed_positions, group_positions, Start};

/// What one consumer poll means for a loop (the engines' and verify's readers alike).
pub(crate) enum Polled<'a> {
    Record(BorrowedMessage<'a>),
    /// Nothing new.
    Idle,
    /// This partition reached its end.
    End(i32),
    /// A read position lies outside the log (retention, a recreated topic).
    Gap(RDKafkaErrorCode),
    /// Reading cannot go on: the reason, without the cluster's name.
    Fatal(String),
    /// librdkafka retries these (a broker restarting, a network blip).
    Transient(KafkaError),
}

pub(crate) fn classify(polled: Option<KafkaResult<BorrowedMessage<'_>>>) -> Polled<'_> {
    use RDKafkaErrorCode as C;
    match polled {
        Some(Ok(m)) => Polled::Record(m),
        None => Polled::Idle,
        Some(Err(KafkaError::PartitionEOF(p))) => Polled::End(p),
        Some(Err(KafkaError::MessageConsumption(
            code @ (C::OffsetOutOfRange | C::AutoOffsetReset),
        ))) => Polled::Gap(code),
        Some(Err(KafkaError::MessageConsumption(
            code @ (C::UnknownTopicOrPartition
            | C::UnknownTopic
            | C::TopicAuthorizationFailed
            | C::GroupAuthorizationFailed),
        ))) => Polled::Fatal(code.to_string()),
        Some(Err(KafkaError::MessageConsumptionFatal(code))) => {
            Polled::Fatal(format!("fatal consumer error: {code}"))
        }
        Some(Err(e)) => Polled::Transient(e),
    }
}

/// [`classify`] for a reader that assigns its partitions and never joins nor commits (verify's):
/// librdkafka still looks up its throwaway group's coordinator, and a broker whose ACLs give
/// the principal nothing on that group says GROUP_AUTHORIZATION_FAILED, which fetching does
/// not need.
pub(crate) fn classify_groupless(polled: Option<KafkaResult<BorrowedMessage<'_>>>) -> Polled<'_> {
    match polled {
        Some(Err(KafkaError::MessageConsumption(RDKafkaErrorCode::GroupAuthorizationFailed))) => {
            Polled::Idle
        }
        polled => classify(polled),
    }
}

/// Prints transient source errors at most every 30 s.
#[derive(Default)]
pub(crate) struct Warner(Option<Instant>);

impl Warner {
    pub(crate) fn warn(&mut self, source: &str, e: &KafkaError) {
        if self.0.is_none_or(|t| t.elapsed() > Duration::from_secs(30)) {
            crate::progress::say(&format!(
                "kreplicate: warning: source cluster '{source}': {e}"
            ));
            self.0 = Some(Instant::now());
        }
    }
}

/// Names the partitions whose start position is outside the source log.
pub(crate) fn gap_message<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    starts: Vec<(String, i32, i64)>,
    opts: &RunOptions,
) -> String {
    let mut gaps = Vec::new();
    for (topic, partition, committed) in starts {
        if let Ok((low, high)) = consumer.fetch_watermarks(&topic, partition, opts.timeout) {
            if committed < low || committed > high {
                gaps.push(format!(
                    "{topic}[{partition}] committed position {committed} is outside the source log (offsets {low} to {high})"
                ));
            }
        }
    }
    let what = if gaps.is_empty() {
        "a committed position is outside the source log".to_string()
    } else {
        gaps.join("; ")
    };
    format!(
        "source gap: {what}: records were deleted (retention) or the topic was recreated; nothing was skipped. Rerun with --on-gap earliest or --on-gap latest to skip the gap"
    )
}

/// Each partition's (low, high) watermarks from a Fetch response, never from ListOffsets
/// LATEST (tansu answers a recent batch's start there): the partitions are assigned at
/// `start` and polled until each answered or `timeout` passed; records read on the way are
/// dropped. A start at `Offset::End` is resolved by ListOffsets, which on tansu only moves the
/// fetch a batch or so back. A partition that did not answer in time, or that the reader may
/// not read, is missing from the map.
pub(crate) fn fetched_bounds<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    start: &TopicPartitionList,
    timeout: Duration,
) -> KafkaResult<std::collections::HashMap<(String, i32), (i64, i64)>> {
    use rdkafka::message::Message;
    assign(consumer, start)?;
    let mut pending: Vec<(String, i32)> = start
        .elements()
        .iter()
        .map(|e| (e.topic().to_string(), e.partition()))
        .collect();
    let mut out = std::collections::HashMap::new();
    let deadline = Instant::now() + timeout;
    let mut looked = Instant::now();
    while !pending.is_empty() && Instant::now() < deadline {
        match classify_groupless(consumer.poll(Duration::from_millis(100))) {
            Polled::Record(m) => {
                // Keep the poll cheap: only the partition that answered is looked at.
                let key = (m.topic().to_string(), m.partition());
                if let Some(b) = cached_watermarks(consumer, &key.0, key.1) {
                    pending.retain(|k| *k != key);
                    out.insert(key, b);
                }
                continue;
            }
            // A partition this principal may not read (at-least-once needs no Read on the
            // target) or that is gone: no fetch will answer it, and the error does not say
            // which partition it is. What is known so far is all there is.
            Polled::Fatal(e) => {
                log::info!("stopped reading partition bounds: {e}");
                break;
            }
            _ => {}
        }
        // A partition-EOF names only the partition: check every one still pending, at most
        // every 10 ms (each look finds its topic in librdkafka's list: on each of 2,000 ends,
        // that was seconds).
        if looked.elapsed() < Duration::from_millis(10) {
            continue;
        }
        looked = Instant::now();
        pending.retain(|(t, p)| match cached_watermarks(consumer, t, *p) {
            Some(b) => {
                out.insert((t.clone(), *p), b);
                false
            }
            None => true,
        });
    }
    Ok(out)
}

pub(crate) use crate::kafka::consumer::cached_watermarks;
