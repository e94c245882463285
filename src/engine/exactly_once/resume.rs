//! Where exactly-once resumes: the tail of each target partition as a `read_committed` reader
//! sees it (read in `tail`), and the source group's positions as a lower bound.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Headers, Message};
use rdkafka::producer::Producer;
use rdkafka::{Offset, TopicPartitionList};

use super::tail::{checkpoints, Retried};
use super::ExactlyOnce;
use crate::engine::shared;
use crate::error::{Error, Result};
use crate::kafka;
use crate::offsets::NextOffset;
use crate::origin::{offset_from, ORIGIN_HEADER};
use crate::report::Copied;
use crate::source::{self, classify, Ends, Polled};

/// How often a start waiting for a transaction open on the target looks again.
const SETTLE_STEP: Duration = Duration::from_millis(200);

/// Which owned partitions a rewind reads the target's tail of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reread {
    /// Every one: at start, and after an abort. A target that shows aborted records to
    /// read_committed readers (librdkafka's mock cluster writes no markers) holds those copies
    /// for every reader, and resuming after them copies nothing twice there.
    Every,
    /// Those without a known position: after the topics change, right after a commit, when a
    /// known position is exact. Reading every one made each new topic (`--refresh-topics`)
    /// read the tail of every partition again: seconds at 2,000 (issue 43).
    Unknown,
}

impl ExactlyOnce {
    /// Fences any zombie, finds where the target stands, and assigns the source there. These
    /// steps (fencing, the group's positions, per target topic a wait for open transactions and
    /// one tail read, widened a few times, and the assignment) each take up to --timeout, and
    /// nothing moves meanwhile: /healthz says "starting" until the copy first moves, within
    /// their bound (issue 18).
    pub(super) fn start(&mut self) -> Result<()> {
        let targets: BTreeSet<&str> = self.parts.values().map(|o| o.target.as_str()).collect();
        let steps = 3 + 4 * targets.len() as u32;
        drop(targets);
        self.counters
            .starting(Instant::now() + self.opts.timeout.saturating_mul(steps));
        let started = self.fence_and_rewind();
        if started.is_err() {
            self.counters.not_starting();
        }
        started
    }

    fn fence_and_rewind(&mut self) -> Result<()> {
        self.producer
            .init_transactions(self.opts.timeout)
            .map_err(|e| {
                let asked = (self.opts.txn_max_time, self.opts.delivery_timeout);
                start_failed(&self.transactional_id, &e, asked)
            })?;
        self.rewind(Reread::Every)
    }

    /// Sets every owned partition's position from what the target holds and (re)assigns the
    /// source consumer there. Used at start, after an aborted transaction and when the topics
    /// change.
    pub(super) fn rewind(&mut self, reread: Reread) -> Result<()> {
        self.rewinds += 1;
        self.producer.context().forget_trails();
        let found = self.scan_target(reread)?;
        let fallback = self.group_positions()?;
        let mut tpl = TopicPartitionList::new();
        // Committed to the group at once: `--start latest` resolved to offsets, where the next
        // run finds them while the target holds nothing of ours (issue 13); and what the
        // target holds where the group is behind it (a run killed between its transaction and
        // the group's commit), so the group's lag is right also when nothing is left to copy.
        let mut decided = TopicPartitionList::new();
        self.ends = Ends::default();
        for ((topic, partition), owned) in self.parts.iter_mut() {
            let key = (topic.clone(), *partition);
            // Kafka answers a commit before it writes the transaction's markers, and a
            // read_committed reader sees the transaction only after them: mid-run, the tail
            // may not show yet what this run's committed transactions hold.
            let (held, group) = if owned.fresh {
                (owned.committed, None)
            } else {
                (
                    found.get(&key).copied().max(owned.committed),
                    fallback.get(&key),
                )
            };
            let start = match (held, group) {
                (Some(pos), group) => {
                    if group.is_none_or(|&g| g < pos.get()) {
                        let at = Offset::Offset(pos.get());
                        let _ = decided.add_partition_offset(topic, *partition, at);
                    }
                    Offset::Offset(pos.get())
                }
                // Nothing of ours on the target yet: the group's position (committed only
                // after transactions) is a safe lower bound, then --start.
                (None, Some(&n)) => Offset::Offset(n),
                // A topic created again: from its beginning, whatever --start says.
                (None, None) if owned.fresh => Offset::Beginning,
                (None, None) => {
                    let timeout = self.opts.timeout;
                    let (at, resolved) =
                        self.start
                            .resolve(&self.consumer, topic, *partition, timeout)?;
                    if resolved {
                        let _ = decided.add_partition_offset(topic, *partition, at);
                    }
                    at
                }
            };
            owned.committed = held;
            owned.sent = None;
            owned.pending = Copied::default();
            shared::add_start(&mut tpl, topic, *partition, start)?;
            self.ends.insert(topic, *partition, start);
        }
        log::info!(
            "the target holds positions for {} of {} partitions",
            self.parts
                .values()
                .filter(|o| o.committed.is_some())
                .count(),
            self.parts.len()
        );
        self.publish_committed();
        let moved = kafka::consumer::reposition(&self.consumer, &tpl, self.opts.timeout)
            .map_err(|e| Error::failed(format!("cannot move the source partitions: {e}")))?;
        if moved {
            log::info!(
                "rewound {} in place",
                crate::table::count(tpl.count() as u64, "source partition")
            );
        } else {
            shared::assign(&self.consumer, &tpl)?;
        }
        if decided.count() > 0 {
            self.consumer
                .commit(&decided, CommitMode::Sync)
                .map_err(|e| {
                    Error::failed(format!(
                        "cannot commit the starting positions to the source group: {e}"
                    ))
                })?;
        }
        Ok(())
    }

    /// Publishes how many owned partitions have a position the target holds (committed
    /// transactions, this run's or an earlier one's).
    pub(super) fn publish_committed(&self) {
        let committed = self
            .parts
            .values()
            .filter(|o| o.committed.is_some())
            .count();
        self.counters
            .committed
            .store(committed as u64, Ordering::Relaxed);
    }

    /// The group's committed positions for the owned partitions (for lag monitoring; used
    /// only as a lower bound when the target holds nothing of ours). A failed read fails the
    /// run, as under at-least-once: taken for "no positions", `--start latest` would commit
    /// a new "latest" over the old decision and skip the records in between, and `earliest`
    /// would copy again what the group had covered (issue 18).
    pub(super) fn group_positions(&self) -> Result<HashMap<(String, i32), i64>> {
        let mut tpl = TopicPartitionList::new();
        for (t, p) in self.parts.keys() {
            tpl.add_partition(t, *p);
        }
        source::group_positions(&self.consumer, &tpl, &self.opts.group, self.opts.timeout)
    }

    /// Reads the tail of owned target partitions (`Reread`) as a read_committed reader sees
    /// it, once no transaction hides a copy of ours ([`Self::settle`]), and returns the resume
    /// position per source partition found there ([`checkpoints`]).
    pub(super) fn scan_target(&self, reread: Reread) -> Result<HashMap<(String, i32), NextOffset>> {
        type ByTarget<'a> = BTreeMap<&'a str, Vec<(&'a str, i32)>>;
        let (mut read, mut unknown): (ByTarget, ByTarget) = Default::default();
        // A topic created again: the target holds the old one's copies.
        for ((source, p), o) in self.parts.iter().filter(|(_, o)| !o.fresh) {
            let known = o.committed.is_some();
            if reread == Reread::Unknown && known {
                continue;
            }
            read.entry(&o.target).or_default().push((source, *p));
            // A position known already (settled at start, or committed since) is exact.
            let waits = unknown.entry(&o.target).or_default();
            if !known {
                waits.push((source, *p));
            }
        }
        let count: usize = read.values().map(Vec::len).sum();
        if count > 0 {
            log::info!(
                "reading the tails of {} to find where the copies end",
                crate::table::count(count as u64, "target partition")
            );
        }
        let read: Vec<(&str, Vec<(&str, i32)>)> = read.into_iter().collect();
        let unknown: Vec<(&str, Vec<(&str, i32)>)> = unknown.into_iter().collect();
        self.settle(&unknown)?;
        let group = format!("{}.resume", self.transactional_id);
        let reader = (&self.opts.to, group.as_str(), self.opts.timeout);
        checkpoints(reader, &self.stamp.source, &read)
    }

    /// Waits until no record of ours on `target` is hidden from read_committed readers. They see
    /// nothing past the first record of an open transaction (the last stable offset): another
    /// producer writing the same target partition transactionally, or markers Kafka has not
    /// written yet, can hide committed records of ours, and a tail read would then resume before
    /// them and copy them again. Nothing of ours is written meanwhile, so once the stable offset
    /// reaches the high watermark seen first, every record of ours is decided. Bounded by
    /// --timeout, after which the run fails (a rerun may pass once that transaction ended).
    fn settle(&self, targets: &[(&str, Vec<(&str, i32)>)]) -> Result<()> {
        if targets.iter().all(|(_, parts)| parts.is_empty()) {
            return Ok(());
        }
        let timeout = self.opts.timeout;
        let cannot = |e: KafkaError| Error::failed(format!("cannot read the target: {e}"));
        let group = format!("{}.resume", self.transactional_id);
        let stable: BaseConsumer = kafka::reader_config(&self.opts.to, &group, &[])
            .create()
            .map_err(cannot)?;
        let all: BaseConsumer = kafka::reader_config(&self.opts.to, &group, &[])
            .set("isolation.level", "read_uncommitted")
            .create()
            .map_err(cannot)?;
        let deadline = Instant::now() + timeout;
        for (target, parts) in targets {
            self.settle_topic(&stable, &all, target, parts, deadline)?;
        }
        source::close(&stable, timeout);
        source::close(&all, timeout);
        Ok(())
    }

    /// [`Self::settle`] for the partitions of one target topic.
    fn settle_topic(
        &self,
        stable: &BaseConsumer,
        all: &BaseConsumer,
        target: &str,
        parts: &[(&str, i32)],
        deadline: Instant,
    ) -> Result<()> {
        let timeout = self.opts.timeout;
        let cannot = |e: KafkaError| Error::failed(format!("cannot read the target {target}: {e}"));
        for &(source, p) in parts {
            let (_, high) = source::watermarks(all, target, p, timeout).map_err(cannot)?;
            let (_, mut end) = source::watermarks(stable, target, p, timeout).map_err(cannot)?;
            if end >= high || !self.ours_between(all, target, (source, p), end..high)? {
                continue;
            }
            crate::progress::say(&format!(
                "kreplicate: waiting for a transaction open on target {target}[{p}]: read_committed readers see up to offset {end} of {high}, and copies of {source}[{p}] lie past it (up to --timeout)"
            ));
            while end < high {
                if Instant::now() > deadline {
                    return Err(Error::failed(format!(
                        "copies of {source}[{p}] on target {target}[{p}] lie past an open transaction that did not end within --timeout ({timeout:?}): read_committed readers see up to offset {end} of {high}, so where to resume is not known. Rerun once that transaction ended (is another transactional producer writing {target}?)"
                    )));
                }
                std::thread::sleep(SETTLE_STEP);
                end = source::watermarks(stable, target, p, timeout)
                    .map_err(cannot)?
                    .1;
            }
        }
        Ok(())
    }

    /// True when a record copied from `source`[`p`] (by this cluster's copies) lies in
    /// `offsets` of `target`[`p`], read as written, decided or not.
    fn ours_between(
        &self,
        all: &BaseConsumer,
        target: &str,
        (source, p): (&str, i32),
        offsets: std::ops::Range<i64>,
    ) -> Result<bool> {
        let cannot = |e: KafkaError| Error::failed(format!("cannot read the target {target}: {e}"));
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(target, p, Offset::Offset(offsets.start))
            .map_err(cannot)?;
        all.assign(&tpl).map_err(cannot)?;
        let deadline = Instant::now() + self.opts.timeout;
        let mut retried = Retried::default();
        while Instant::now() < deadline {
            match classify(all.poll(Duration::from_millis(100))) {
                Polled::Record(m) if m.offset() < offsets.end => {
                    let ours = m.headers().is_some_and(|h| {
                        h.iter().any(|x| {
                            x.key == ORIGIN_HEADER
                                && x.value.is_some_and(|v| {
                                    offset_from(v, &self.stamp.source, source, p).is_some()
                                })
                        })
                    });
                    if ours {
                        return Ok(true);
                    }
                    if m.offset() + 1 >= offsets.end {
                        return Ok(false);
                    }
                }
                Polled::Record(_) | Polled::End(_) => return Ok(false),
                Polled::Idle => {}
                Polled::Transient(e) => retried.met(&format!("reading target {target}[{p}]"), e),
                Polled::Gap(code) => return Err(cannot(KafkaError::MessageConsumption(code))),
                Polled::Fatal(msg) => {
                    return Err(Error::failed(format!(
                        "cannot read the target {target}: {msg}"
                    )))
                }
            }
        }
        Err(Error::failed(format!(
            "reading target {target}[{p}] from offset {} took longer than {:?}{}",
            offsets.start,
            self.opts.timeout,
            retried.last()
        )))
    }
}

/// Why transactions could not start on the target. A broker whose transaction.max.timeout.ms
/// is below the transaction timeout this run asks for (`asked`: --txn-max-time and
/// --delivery-timeout) refuses every start the same way: bad input, exit 2, naming the fix.
/// The checks compare the limit before anything is written; this is the case where they could
/// not read it (issue 35): lowering the flags is no fix for a limit of 30 s or less, the
/// margin kreplicate adds, so the message does not offer it as one.
fn start_failed(id: &str, e: &KafkaError, asked: (Duration, Duration)) -> Error {
    let msg = format!("cannot start transactions on the target as '{id}': {e}");
    let code = match e {
        KafkaError::Transaction(t) => Some(t.code()),
        _ => e.rdkafka_error_code(),
    };
    if code == Some(RDKafkaErrorCode::InvalidTransactionTimeout) {
        let (txn_max_time, delivery_timeout) = asked;
        let total = kafka::transaction_timeout(txn_max_time, delivery_timeout).as_millis();
        let margin = kafka::TRANSACTION_MARGIN.as_secs();
        return Error::usage(format!("{msg}; the target's transaction.max.timeout.ms (not readable before the start) is below the transaction timeout this run asks for, {total} ms (--txn-max-time {txn_max_time:?} + --delivery-timeout {delivery_timeout:?} + {margin} s for the commit): raise the broker's setting to at least {total} ms; lowering --txn-max-time and --delivery-timeout helps only where the broker's limit is above {margin} s"));
    }
    Error::failed(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Exit;

    #[test]
    fn issue_21_a_refused_transaction_timeout_is_bad_input() {
        let asked = (Duration::from_secs(2), Duration::from_secs(120));
        let refused = start_failed(
            "g.shard-1-of-1",
            &KafkaError::Global(RDKafkaErrorCode::InvalidTransactionTimeout),
            asked,
        );
        assert_eq!(refused.exit(), Exit::Usage, "{refused}");
        assert!(refused.to_string().contains("--txn-max-time"), "{refused}");
        let other = start_failed(
            "g.shard-1-of-1",
            &KafkaError::Global(RDKafkaErrorCode::BrokerTransportFailure),
            asked,
        );
        assert_eq!(other.exit(), Exit::Failed, "{other}");
    }
}
