//! The at-least-once clients' callbacks: delivery reports feed the trackers; rebalances decide
//! start positions on assign, and flush, verify and commit before a revoke lets go.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, DeliveryResult, ProducerContext};
use rdkafka::statistics::Statistics;
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{Offset, TopicPartitionList};

use super::state::{commit_list, mark_committed, Part, Shared};
use crate::engine::shared::{self, index::NOT_A_COPY};
use crate::error::Error;
use crate::offsets::NextOffset;
use crate::options::{Guarantee, StartPosition};
use crate::source;
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
pub(super) type SourceConsumer = BaseConsumer<Rebalancer>;

/// Consumer context: decides start positions on assign, and commits the verified prefix
/// of revoked partitions before letting them go.
pub(super) struct Rebalancer {
    pub(super) shared: Arc<Shared>,
    pub(super) producer: Arc<TargetProducer>,
    pub(super) guarantee: Guarantee,
    pub(super) start: source::Start,
    pub(super) timeout: Duration,
    pub(super) flush_timeout: Duration,
    /// KIP-848's consumer protocol adds and takes partitions (librdkafka's incremental
    /// assign); the classic one replaces the whole assignment. librdkafka's own answer
    /// (`rebalance_protocol`) says NONE until its first heartbeat went out.
    pub(super) incremental: bool,
}

impl ClientContext for Rebalancer {}

impl ConsumerContext for Rebalancer {
    fn rebalance(
        &self,
        consumer: &BaseConsumer<Self>,
        err: RDKafkaRespErr,
        tpl: &mut TopicPartitionList,
    ) {
        match err {
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS => self.assign(consumer, tpl),
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS => self.revoke(consumer, tpl),
            other => {
                self.shared
                    .lock()
                    .failure
                    .fail(format!("consumer group rebalance failed: {other:?}"));
                let _ = consumer.unassign();
            }
        }
    }
}

impl Rebalancer {
    pub(super) fn assign(&self, consumer: &SourceConsumer, tpl: &TopicPartitionList) {
        let committed = match source::committed_positions(consumer, tpl, self.timeout) {
            Ok(c) => c,
            Err(e) => {
                self.shared.lock().failure.fail(format!(
                    "cannot read the group's committed positions on the source: {e}"
                ));
                let _ = consumer.assign(tpl);
                return;
            }
        };
        let mut assignment = TopicPartitionList::new();
        // Partitions that start at `--start latest`, resolved to an offset: committed below, so
        // that the next run starts there too instead of at a later "latest" (issue 13).
        let mut decided = TopicPartitionList::new();
        for elem in committed.elements() {
            let (topic, partition) = (elem.topic(), elem.partition());
            if elem.offset() != Offset::Invalid {
                continue;
            }
            match self.start.resolve(consumer, topic, partition, self.timeout) {
                Ok((at, true)) => {
                    let _ = decided.add_partition_offset(topic, partition, at);
                }
                Ok((_, false)) => {}
                Err(e) => {
                    self.shared.lock().failure.fail_with(e);
                    let _ = consumer.assign(tpl);
                    return;
                }
            }
        }
        self.shared
            .counters
            .rebalances
            .fetch_add(1, Ordering::Relaxed);
        let mut st = self.shared.lock();
        // KIP-848 may hand out an empty share first (partitions other members still own are
        // revoked from them before they come): only partitions end the wait.
        if !self.incremental || tpl.count() > 0 {
            st.assigned_once = true;
            st.waiting_since = None;
            self.shared.counters.set_waiting(None);
        }
        for elem in committed.elements() {
            let (topic, partition) = (elem.topic(), elem.partition());
            let decided_at = decided.find_partition(topic, partition).map(|e| e.offset());
            let start = match (elem.offset(), decided_at) {
                (Offset::Offset(n), _) => Offset::Offset(n),
                (_, Some(at)) => at,
                _ => match self.start.of(topic, partition) {
                    StartPosition::Earliest => Offset::Beginning,
                    StartPosition::Latest => Offset::End,
                },
            };
            if let Err(e) = shared::add_start(&mut assignment, topic, partition, start) {
                st.failure.fail_with(e);
            }
            let Some(target) = self.shared.target_of().get(topic).cloned() else {
                continue;
            };
            // As the summary counts them (see `Acked::positions`): `none` leaves commits to
            // auto-commit.
            let held = matches!(start, Offset::Offset(_)) && self.guarantee != Guarantee::None;
            let part = Part {
                held,
                ..Part::default()
            };
            st.parts.insert(&target, partition, part);
            st.ends.insert(topic, partition, start);
        }
        st.publish(&self.shared.counters);
        log::info!("assigned {} source partitions", assignment.count());
        drop(st);
        drop(committed);
        // KIP-848 (librdkafka calls it cooperative) adds to the assignment; the classic
        // protocol replaces it.
        let assigned = if self.incremental {
            consumer
                .incremental_assign(&assignment)
                .and_then(|()| consumer.resume(&assignment))
                .map_err(|e| Error::failed(format!("cannot assign source partitions: {e}")))
        } else {
            shared::assign(consumer, &assignment)
        };
        if let Err(e) = assigned {
            self.shared.lock().failure.fail_with(e);
            return;
        }
        self.shared.assigned.store(true, Ordering::Relaxed);
        // Nothing before these positions is to be copied, under any guarantee: committing
        // them moves no record past the contract, and makes the decision last.
        if decided.count() > 0 {
            match consumer.commit(&decided, CommitMode::Sync) {
                Ok(()) => mark_committed(&self.shared, &decided),
                Err(e) => self.shared.lock().failure.fail(format!(
                    "cannot commit the --start latest positions to the source group: {e}"
                )),
            }
        }
    }

    pub(super) fn revoke(&self, consumer: &SourceConsumer, tpl: &TopicPartitionList) {
        let lost = consumer.assignment_lost();
        log::info!(
            "{} source partitions revoked{}",
            tpl.count(),
            if lost { " (assignment lost)" } else { "" }
        );
        let healthy = !self.shared.lock().failure.is_set();
        // Flush and verify before giving the partitions to another member, lost or not and
        // under any guarantee: a delivery report served after its tracker is gone would
        // reach the tracker of a later assignment of the same partition.
        if healthy {
            if let Err(e) = target::flush(&self.producer, self.flush_timeout) {
                self.shared.lock().failure.fail(format!(
                    "target did not acknowledge every record within {:?} during a rebalance: {e}",
                    self.flush_timeout
                ));
            }
        }
        let revoked: Vec<(String, i32)> = tpl
            .elements()
            .iter()
            .map(|e| (e.topic().to_string(), e.partition()))
            .collect();
        if !lost && self.guarantee != Guarantee::None {
            let list = commit_list(&self.shared, Some(&revoked), true);
            // A failed commit here only means the next owner copies some records again.
            if list.count() > 0 && consumer.commit(&list, CommitMode::Sync).is_ok() {
                mark_committed(&self.shared, &list);
            }
        }
        let mut st = self.shared.lock();
        // Until the next assignment arrives (eager rebalance, or a rejoin after a lost
        // assignment) nothing is assigned: --until-caught-up must not read that as "every
        // assigned partition done". KIP-848 takes only these partitions away.
        let kept = self.incremental && consumer.assignment().is_ok_and(|a| a.count() > tpl.count());
        if !kept {
            st.assigned_once = false;
            st.answered = None;
            st.waiting_since = Some(Instant::now());
        }
        for (source, partition) in revoked {
            st.ends.remove(&source, partition);
            let Some(target) = self.shared.target_of().get(&source).cloned() else {
                continue;
            };
            if let Some(part) = st.parts.remove(&target, partition) {
                let committed = part.tracker.committed().filter(|_| !lost);
                if committed.is_some() || part.copied.records > 0 {
                    let end = st.released.entry((source, partition)).or_default();
                    end.released = true;
                    end.copied.merge(&part.copied);
                    end.committed = committed.map(NextOffset::get).or(end.committed);
                }
            }
        }
        st.publish(&self.shared.counters);
        drop(st);
        if self.incremental {
            let _ = consumer.incremental_unassign(tpl);
        } else {
            let _ = consumer.unassign();
        }
    }
}
