//! The at-least-once consumer's rebalance callback: decides start positions on assign, and
//! flushes, verifies and commits before a revoke lets go. What differs between the two group
//! protocols (eager and incremental) is in [`Protocol`]; the rest is the same for both.
//!
//! The callback runs on the loop's thread, inside `consumer.poll`: it takes the shared state's
//! lock only between its calls into librdkafka (the lock rule is on [`Shared::state`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext};
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{Offset, TopicPartitionList};

use super::callbacks::TargetProducer;
use super::state::{commit_list, mark_committed, Part, Shared, State};
use crate::engine::shared;
use crate::error::{Error, Result};
use crate::offsets::NextOffset;
use crate::options::{Guarantee, StartPosition};
use crate::source;
use crate::target;

pub(super) type SourceConsumer = BaseConsumer<Rebalancer>;

/// The group protocol the source consumer joined with, as `kafka::choose_group_protocol`
/// decided it (librdkafka's own answer, `rebalance_protocol`, says NONE until its first
/// heartbeat went out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Protocol {
    /// The classic protocol (also `--shard`, which joins no group): each rebalance revokes the
    /// whole assignment and assigns a new one.
    Eager,
    /// KIP-848's consumer protocol (librdkafka calls it cooperative): a rebalance adds and
    /// takes partitions, the others stay.
    Incremental,
}

impl Protocol {
    pub(super) fn of(chosen: Option<&str>) -> Self {
        match chosen {
            Some("consumer") => Protocol::Incremental,
            _ => Protocol::Eager,
        }
    }

    /// Whether an assignment of `tpl` ends the wait for partitions. KIP-848 may hand out an
    /// empty share first (partitions other members still own are revoked from them before
    /// they come): only partitions end the wait.
    fn ends_the_wait(self, tpl: &TopicPartitionList) -> bool {
        self == Protocol::Eager || tpl.count() > 0
    }

    /// Takes `assignment` on: KIP-848 adds it to what the consumer holds; the classic
    /// protocol replaces that.
    fn take_on(self, consumer: &SourceConsumer, assignment: &TopicPartitionList) -> Result<()> {
        match self {
            Protocol::Eager => shared::assign(consumer, assignment),
            Protocol::Incremental => consumer
                .incremental_assign(assignment)
                .and_then(|()| consumer.resume(assignment))
                .map_err(|e| Error::failed(format!("cannot assign source partitions: {e}"))),
        }
    }

    /// Whether the consumer keeps partitions besides the revoked `tpl`: KIP-848 takes only
    /// these away; an eager revoke takes everything.
    fn keeps_others(self, consumer: &SourceConsumer, tpl: &TopicPartitionList) -> bool {
        self == Protocol::Incremental
            && consumer.assignment().is_ok_and(|a| a.count() > tpl.count())
    }

    /// Answers an assignment the run will not copy from (it failed, or it leaves the group):
    /// librdkafka waits for the call in the protocol's own form, and a group that waits for
    /// it never lets the consumer close (issue 41: a plain `assign` under KIP-848 is
    /// refused). While the consumer leaves, librdkafka treats the call as letting go.
    fn answer(self, consumer: &SourceConsumer, tpl: &TopicPartitionList) {
        if consumer.closed() {
            return;
        }
        let _ = match self {
            Protocol::Eager => consumer.assign(tpl),
            Protocol::Incremental => consumer.incremental_assign(tpl),
        };
    }

    /// Lets the revoked `tpl` go. Neither this nor `answer` asks once the group has ended:
    /// librdkafka would never answer.
    fn let_go(self, consumer: &SourceConsumer, tpl: &TopicPartitionList) {
        if consumer.closed() {
            return;
        }
        let _ = match self {
            Protocol::Eager => consumer.unassign(),
            Protocol::Incremental => consumer.incremental_unassign(tpl),
        };
    }
}

/// Consumer context: decides start positions on assign, and commits the verified prefix
/// of revoked partitions before letting them go.
pub(super) struct Rebalancer {
    pub(super) shared: Arc<Shared>,
    pub(super) producer: Arc<TargetProducer>,
    pub(super) guarantee: Guarantee,
    pub(super) start: source::Start,
    pub(super) timeout: Duration,
    pub(super) flush_timeout: Duration,
    pub(super) protocol: Protocol,
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

/// Where assigned partitions start: the group's committed positions, and the partitions that
/// start at `--start latest`, resolved to an offset.
struct Starts {
    committed: TopicPartitionList,
    decided: TopicPartitionList,
}

impl Rebalancer {
    pub(super) fn assign(&self, consumer: &SourceConsumer, tpl: &TopicPartitionList) {
        // Leaving the group, the coordinator answers no position reads: a revoke just before
        // the end had a KIP-848 run read them for its empty assignment for --timeout (30 s)
        // at exit (issue 41).
        if self.shared.closing.load(Ordering::SeqCst) {
            self.protocol.answer(consumer, tpl);
            return;
        }
        let starts = match self.starts(consumer, tpl) {
            Ok(s) => s,
            Err(e) => {
                self.shared.lock().failure.fail_with(e);
                self.protocol.answer(consumer, tpl);
                return;
            }
        };
        self.shared
            .counters
            .rebalances
            .fetch_add(1, Ordering::Relaxed);
        let mut st = self.shared.lock();
        if self.protocol.ends_the_wait(tpl) {
            st.assigned_once = true;
            st.waiting_since = None;
            self.shared.counters.set_waiting(None);
            self.shared.counters.holding.store(true, Ordering::Relaxed);
        }
        let assignment = self.note_assigned(&mut st, &starts);
        st.publish(&self.shared.counters);
        log::info!("assigned {} source partitions", assignment.count());
        drop(st);
        let Starts { committed, decided } = starts;
        drop(committed);
        if let Err(e) = self.protocol.take_on(consumer, &assignment) {
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

    /// Reads the group's committed positions of `tpl`, and resolves `--start latest` for the
    /// partitions without one (round trips to the source: called without the lock).
    fn starts(&self, consumer: &SourceConsumer, tpl: &TopicPartitionList) -> Result<Starts> {
        // KIP-848 follows every revoke with an assignment of nothing new: no round trip.
        if tpl.count() == 0 {
            return Ok(Starts {
                committed: TopicPartitionList::new(),
                decided: TopicPartitionList::new(),
            });
        }
        let committed = source::committed_positions(consumer, tpl, self.timeout).map_err(|e| {
            Error::failed(format!(
                "cannot read the group's committed positions on the source: {e}"
            ))
        })?;
        // Committed by `assign` so that the next run starts there too instead of at a later
        // "latest" (issue 13).
        let mut decided = TopicPartitionList::new();
        for elem in committed.elements() {
            let (topic, partition) = (elem.topic(), elem.partition());
            if elem.offset() != Offset::Invalid {
                continue;
            }
            if let (at, true) = self
                .start
                .resolve(consumer, topic, partition, self.timeout)?
            {
                let _ = decided.add_partition_offset(topic, partition, at);
            }
        }
        Ok(Starts { committed, decided })
    }

    /// Notes each assigned partition and where it starts (under the lock); returns the
    /// assignment with those positions.
    fn note_assigned(&self, st: &mut State, starts: &Starts) -> TopicPartitionList {
        let mut assignment = TopicPartitionList::new();
        for elem in starts.committed.elements() {
            let (topic, partition) = (elem.topic(), elem.partition());
            let decided_at = starts
                .decided
                .find_partition(topic, partition)
                .map(|e| e.offset());
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
        assignment
    }

    pub(super) fn revoke(&self, consumer: &SourceConsumer, tpl: &TopicPartitionList) {
        let lost = consumer.assignment_lost();
        // Leaving the group, after the final flush and commit: nothing is left to settle, and
        // everything goes. Nothing is asked of the group either: under KIP-848 librdkafka may
        // end the group while this runs, and drops a request then without answering it (a run
        // hung for ever at exit in `rd_kafka_assignment`, issue 41).
        let closing = self.shared.closing.load(Ordering::SeqCst);
        log::info!(
            "{} source partitions revoked{}",
            tpl.count(),
            if lost { " (assignment lost)" } else { "" }
        );
        let revoked: Vec<(String, i32)> = tpl
            .elements()
            .iter()
            .map(|e| (e.topic().to_string(), e.partition()))
            .collect();
        if !closing {
            self.settle(consumer, &revoked, lost);
        }
        let kept = !closing && self.protocol.keeps_others(consumer, tpl);
        let mut st = self.shared.lock();
        // Until the next assignment arrives (eager rebalance, or a rejoin after a lost
        // assignment) nothing is assigned: --until-caught-up must not read that as "every
        // assigned partition done".
        if !kept {
            st.assigned_once = false;
            st.answered = None;
            st.waiting_since = Some(Instant::now());
            self.shared.counters.holding.store(false, Ordering::Relaxed);
        }
        self.release(&mut st, revoked, lost);
        st.publish(&self.shared.counters);
        drop(st);
        self.protocol.let_go(consumer, tpl);
    }

    /// Flushes and verifies, then commits the revoked partitions' verified prefix (not after a
    /// lost assignment). Flushing serves delivery reports: called without the lock.
    fn settle(&self, consumer: &SourceConsumer, revoked: &[(String, i32)], lost: bool) {
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
        if !lost && self.guarantee != Guarantee::None {
            let list = commit_list(&self.shared, Some(revoked), true);
            // A failed commit here only means the next owner copies some records again.
            if list.count() > 0 && consumer.commit(&list, CommitMode::Sync).is_ok() {
                mark_committed(&self.shared, &list);
            }
        }
    }

    /// Forgets the revoked partitions, keeping what they copied and committed for the
    /// summary (under the lock).
    fn release(&self, st: &mut State, revoked: Vec<(String, i32)>, lost: bool) {
        for (source, partition) in revoked {
            st.ends.remove(&source, partition);
            if let Some(r) = st.revoked.as_mut() {
                r.push((source.clone(), partition));
            }
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
    }
}
