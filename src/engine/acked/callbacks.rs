//! The at-least-once producer's callback: delivery reports feed the trackers (the consumer's,
//! rebalances, are in `rebalance`).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rdkafka::client::ClientContext;
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, DeliveryResult, ProducerContext};
use rdkafka::statistics::Statistics;

use super::state::Shared;
use crate::engine::shared::{self, index::NOT_A_COPY};
use crate::target;
use crate::trail::Trail;

/// Producer context: turns delivery reports into tracker updates.
pub(super) struct Deliveries {
    pub(super) shared: Arc<Shared>,
}

impl ClientContext for Deliveries {
    fn stats(&self, stats: Statistics) {
        target::count_retries(&stats, &self.shared.counters);
    }
}

impl target::Counted for Deliveries {
    fn counters(&self) -> &crate::report::Counters {
        &self.shared.counters
    }
}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, source_offset: usize) {
        let topic = target::reported(self, result);
        if source_offset == NOT_A_COPY {
            // The one rule for a refused entry (`index::Writing`); an entry lost otherwise
            // (a timeout) only widens a later lookup.
            if let Err((e, _)) = result {
                if e.rdkafka_error_code().is_some_and(shared::refused_for_good) {
                    self.shared.index.refused(&e.to_string());
                }
            }
            return;
        }
        let offset = source_offset as i64;
        let (msg, err) = match result {
            Ok(m) => (m, None),
            Err((e, m)) => (m, Some(e)),
        };
        let partition = msg.partition();
        let mut st = self.shared.lock();
        let Some(part) = st.parts.get_mut(topic, partition) else {
            // Revoked although this record was in flight (the flush failed, so the run is
            // ending): the last commit never covered it.
            return;
        };
        let res = match err {
            None => {
                let n = target::record_bytes(msg);
                self.shared.counters.records.fetch_add(1, Ordering::Relaxed);
                self.shared.counters.bytes.fetch_add(n, Ordering::Relaxed);
                part.copied.add(offset, n, msg.timestamp().to_millis());
                part.trail = Some(Trail::after(part.trail, msg.offset(), offset));
                part.tracker.acked(offset)
            }
            Some(e) => {
                self.shared
                    .counters
                    .delivery_errors
                    .fetch_add(1, Ordering::Relaxed);
                part.tracker.failed(offset, e.to_string())
            }
        };
        if let Some(e) = err {
            let source_of = self.shared.source_of();
            let source = source_of.get(topic).map_or(topic, |s| &**s);
            st.failure.fail(format!(
                "delivery failed: {source}[{partition}] offset {offset} → {topic}: {}",
                target::delivery_error(e)
            ));
        } else if res.is_err() {
            st.failure.fail(format!(
                "internal error: delivery report for {topic}[{partition}] offset {offset}, which was not in flight"
            ));
        }
    }
}

pub(super) type TargetProducer = BaseProducer<Deliveries>;
