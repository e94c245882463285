//! Records the target refuses: the first failed delivery of a transaction, and which errors
//! mean the target will refuse that record for good.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use rdkafka::client::ClientContext;
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::message::{Headers, Message};
use rdkafka::producer::{DeliveryResult, ProducerContext};
use rdkafka::statistics::Statistics;

use crate::engine::shared::index::NOT_A_COPY;
use crate::partmap::PartitionMap;
use crate::report::Counters;
use crate::target;

use crate::trail::Trail;

/// Transactions aborted one after the other, with none committed between them, after which
/// the run fails with the last error instead of retrying again.
pub const MAX_ABORTS_IN_A_ROW: u32 = 5;

/// A source record the target refused.
#[derive(Clone, Debug)]
pub(super) struct Refusal {
    /// Source topic (empty until known), target topic, partition, source offset.
    pub(super) source: String,
    pub(super) target: String,
    pub(super) partition: i32,
    pub(super) offset: i64,
    pub(super) code: Option<RDKafkaErrorCode>,
    pub(super) error: String,
}

/// A refused record's error; one the origin header made too large says so, and how to fix it
/// (the header is exactly-once's checkpoint: it cannot be left out).
pub(super) fn describe(e: &rdkafka::error::KafkaError, origin: usize) -> String {
    if !crate::target::too_large(e) || origin == 0 {
        return e.to_string();
    }
    let header = crate::origin::ORIGIN_HEADER.len() + origin;
    format!("{e}: the record with its kreplicate.origin header ({header} bytes, exactly-once's checkpoint) exceeds the size limit; raise the target topic's max.message.bytes and the producer's message.max.bytes (--to-property) by at least that much")
}

/// Producer context: keeps the first failed delivery of the open transaction, which names the
/// record the target refused (the delivery opaque is its source offset, [`NOT_A_COPY`] for
/// index entries), and the trail of delivered copies per target partition since the last
/// rewind, for the positions index.
pub(super) struct Deliveries {
    first: Mutex<Option<Refusal>>,
    trails: Mutex<PartitionMap<Trail>>,
    counters: Arc<Counters>,
}

impl Deliveries {
    pub(super) fn new(counters: Arc<Counters>) -> Self {
        Deliveries {
            first: Mutex::new(None),
            trails: Mutex::new(PartitionMap::default()),
            counters,
        }
    }

    pub(super) fn take(&self) -> Option<Refusal> {
        self.first.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    pub(super) fn trail(&self, target: &str, partition: i32) -> Option<Trail> {
        let trails = self.trails.lock().unwrap_or_else(|e| e.into_inner());
        trails.get(target, partition).copied()
    }

    /// After a rewind the copies start again at new target offsets.
    pub(super) fn forget_trails(&self) {
        self.trails
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

impl ClientContext for Deliveries {
    fn stats(&self, stats: Statistics) {
        target::count_retries(&stats, &self.counters);
    }
}

impl target::Counted for Deliveries {
    fn counters(&self) -> &Counters {
        &self.counters
    }
}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, source_offset: usize) {
        let topic = target::reported(self, result);
        let (e, m) = match result {
            Ok(m) if source_offset != NOT_A_COPY => {
                let mut trails = self.trails.lock().unwrap_or_else(|e| e.into_inner());
                let (partition, t, source) = (m.partition(), m.offset(), source_offset as i64);
                let first = || Trail {
                    t0: t,
                    t,
                    m: source,
                };
                if let Some(trail) = trails.get_or_insert_with(topic, partition, first) {
                    *trail = Trail::after(Some(*trail), t, source);
                }
                return;
            }
            Ok(_) => return,
            Err((e, m)) => (e, m),
        };
        let code = e.rdkafka_error_code();
        // Purged by an abort: a consequence, not a cause.
        if matches!(
            code,
            Some(RDKafkaErrorCode::PurgeQueue | RDKafkaErrorCode::PurgeInflight)
        ) {
            return;
        }
        self.counters
            .delivery_errors
            .fetch_add(1, Ordering::Relaxed);
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            // The broker's own refusal of a batch over the topic's max.message.bytes.
            let origin = m
                .headers()
                .and_then(|h| h.iter().find(|h| h.key == crate::origin::ORIGIN_HEADER))
                .and_then(|h| h.value)
                .map_or(0, <[u8]>::len);
            *first = Some(Refusal {
                source: String::new(),
                target: m.topic().to_string(),
                partition: m.partition(),
                offset: source_offset as i64,
                code,
                error: describe(e, origin),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::shared::refused_for_good;

    #[test]
    fn issue_13_size_policy_and_authorisation_errors_are_refusals_for_good() {
        use RDKafkaErrorCode as C;
        for code in [
            C::MessageSizeTooLarge,
            C::MessageBatchTooLarge,
            C::PolicyViolation,
            C::TopicAuthorizationFailed,
            C::TransactionalIdAuthorizationFailed,
        ] {
            assert!(refused_for_good(code), "{code:?}");
        }
        // Transient or unknown: a retry may pass (bounded by MAX_ABORTS_IN_A_ROW).
        for code in [
            C::Unknown,
            C::NotEnoughReplicas,
            C::RequestTimedOut,
            C::NotLeaderForPartition,
            C::MessageTimedOut,
            C::State,
        ] {
            assert!(!refused_for_good(code), "{code:?}");
        }
    }
}
