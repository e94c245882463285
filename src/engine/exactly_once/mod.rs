//! The `exactly-once` engine: the target is its own checkpoint.
//!
//! Every copied record carries its origin in one header, `kreplicate.origin` =
//! `<source cluster>/<source topic>/<partition>/<offset>` (see [`crate::origin`]). Each target partition has one writer: a
//! transactional producer whose `transactional.id` belongs to a fixed set of source partitions
//! (a static shard `i/n`), so a restart fences its zombie. After `init_transactions` (which
//! closes any transaction the zombie left open), kreplicate reads the tail of each target
//! partition the way a `read_committed` reader sees it and resumes the source just after the
//! origin of the last record of ours found there (in target order). Resume and readers see the same records on any broker,
//! so no record is skipped or shown twice. Positions are also committed to the source group
//! after each transaction, for lag monitoring only.

mod commit;
mod deliveries;
mod discovery;
mod resume;
mod tail;

pub(crate) use tail::checkpoints;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{BorrowedMessage, Message};
use rdkafka::producer::{BaseProducer, Producer};
use rdkafka::{Offset, TopicPartitionList};

use self::deliveries::{Deliveries, Refusal};
use super::shared::turns::{poll_in_turn, Turns};
use super::shared::{clock::Clock, clock::Pace, follow::Followed, index};
use crate::error::{Error, Failure, Result};
use crate::kafka;
use crate::offsets::NextOffset;
use crate::options::RunOptions;
use crate::origin::Stamp;
use crate::report::{Copied, Counters, PartitionEnd, Summary};
use crate::source::{self, classify, Ends, Polled, Warner};
use crate::target::{self, NotSent};
use crate::topics;
use crate::trail::Entry;

type TargetProducer = BaseProducer<Deliveries>;

/// How long one poll of the source waits for a record.
const POLL: Duration = Duration::from_millis(100);

/// One owned source partition.
#[derive(Debug)]
struct Part {
    target: String,
    /// Position covered by committed transactions.
    committed: Option<NextOffset>,
    /// Position after the last record sent in the open transaction.
    sent: Option<NextOffset>,
    /// Records of committed transactions, and of the open one.
    copied: Copied,
    pending: Copied,
    /// A partition of a topic this run saw deleted and then created again: what the target
    /// holds and the group's position are the old topic's, so it starts at its beginning and
    /// resumes only from this run's commits (issue 31).
    fresh: bool,
}

/// The open transaction.
#[derive(Debug, Default)]
struct Txn {
    open: bool,
    records: u64,
    bytes: u64,
    started: Option<Instant>,
    /// Positions index entries were sent, after every copy was delivered.
    entries: bool,
}

pub(super) struct ExactlyOnce {
    opts: RunOptions,
    counters: Arc<Counters>,
    /// The producer's log lines as they happen, even during a blocking commit (declared
    /// before the producer: dropped first).
    _logs: kafka::LogPump,
    /// Shared with the loop, which holds records read ahead under a rate limit.
    consumer: Arc<BaseConsumer>,
    producer: TargetProducer,
    parts: BTreeMap<(String, i32), Part>,
    ends: Ends,
    txn: Txn,
    failure: Failure,
    aborts_in_a_row: u32,
    transactional_id: String,
    scratch: Scratch,
    /// The topics being copied (`--refresh-topics` changes them), the partitions of deleted
    /// ones, for the summary, and the names of the deleted ones.
    followed: Followed,
    released: BTreeMap<(String, i32), PartitionEnd>,
    deleted: BTreeSet<String>,
    stamp: Stamp,
    /// `--start`, for the partitions that existed when the run began.
    start: source::Start,
    /// Write positions index entries in each transaction; the trails last written.
    index: index::Writing,
    indexed: BTreeMap<(String, i32), Entry>,
    /// Rewinds so far: records read ahead before one are read again after it.
    rewinds: u64,
}

/// Buffers reused for every record, so that copying one allocates nothing of ours.
#[derive(Default)]
struct Scratch {
    key: (String, i32),
    origin: String,
}

impl ExactlyOnce {
    pub(super) fn new(
        opts: &RunOptions,
        routes: super::Routes,
        stamp: Option<Stamp>,
        index: bool,
        counters: Arc<Counters>,
        clients: super::Clients,
    ) -> Result<Self> {
        let super::Routes { routes, start } = routes;
        // Exactly-once owns a static shard: it joins no group, so `clients.protocol` is none.
        let super::Clients {
            consumer: consumer_cfg,
            producer: producer_cfg,
            ..
        } = clients;
        let stamp = stamp.ok_or_else(|| {
            Error::usage("exactly-once needs the origin header: drop --no-origin-header")
        })?;
        let shard = opts.shard.unwrap_or_default();
        let parts: BTreeMap<(String, i32), Part> = topics::owned(&shard, &routes)?
            .into_iter()
            .map(|(r, p)| {
                let owned = Part {
                    target: r.target.clone(),
                    committed: None,
                    copied: Copied::default(),
                    pending: Copied::default(),
                    sent: None,
                    fresh: false,
                };
                ((r.source.clone(), p), owned)
            })
            .collect();
        let consumer: Arc<BaseConsumer> = consumer_cfg
            .create()
            .map(Arc::new)
            .map_err(|e| kafka::creation_error("source", e))?;
        let producer: TargetProducer = producer_cfg
            .create_with_context(Deliveries::new(counters.clone()))
            .map_err(|e| kafka::creation_error("target", e))?;
        let logs = kafka::LogPump::start(producer.client());
        target::warm_up(&producer, &routes, opts.timeout)?;
        counters
            .assigned
            .store(parts.len() as u64, Ordering::Relaxed);
        Ok(ExactlyOnce {
            opts: opts.clone(),
            counters,
            _logs: logs,
            consumer,
            producer,
            parts,
            ends: Ends::default(),
            txn: Txn::default(),
            failure: Failure::default(),
            aborts_in_a_row: 0,
            transactional_id: shard.transactional_id(&opts.group),
            scratch: Scratch::default(),
            start,
            followed: Followed::new(routes),
            released: BTreeMap::new(),
            deleted: BTreeSet::new(),
            stamp,
            index: index::Writing::new(index),
            indexed: BTreeMap::new(),
            rewinds: 0,
        })
    }

    pub(super) fn run(mut self, stop: &AtomicBool) -> Summary {
        let started = Instant::now();
        if let Err(e) = self.start() {
            self.failure.fail_with(e);
        } else {
            // Its partitions are its own from the start (no group hands them out).
            self.counters.holding.store(true, Ordering::Relaxed);
            self.copy(stop);
            self.counters.finishing(stop.load(Ordering::SeqCst));
            // An aborted last transaction rewinds: a run that must catch up copies again.
            let mut settled = true;
            while !self.failure.is_set() && self.txn.open {
                settled = self.commit_txn();
                if settled || !self.opts.until_caught_up || stop.load(Ordering::SeqCst) {
                    break;
                }
                self.copy(stop);
            }
            if settled && !self.failure.is_set() {
                self.counters.note_success();
                self.pass_reached();
            }
            self.abort_on_exit();
        }
        // End offsets from the last fetches, before leaving forgets them.
        let positions = self.positions();
        self.counters
            .publish(positions.clone(), self.producer.in_flight_count() as usize);
        source::close(&self.consumer, self.opts.timeout);
        Summary::new(
            &self.opts,
            started,
            stop.load(Ordering::SeqCst),
            self.failure.get().cloned(),
            &self.counters,
            positions,
        )
    }

    /// Every partition this run owned: what committed transactions copied, where it stands,
    /// its end.
    fn positions(&self) -> BTreeMap<(String, i32), PartitionEnd> {
        let mut positions = self.released.clone();
        for ((t, p), o) in &self.parts {
            let committed = o.committed.map(NextOffset::get);
            let end = PartitionEnd {
                committed,
                position: committed.or_else(|| self.ends.start(t, *p)),
                copied: o.copied,
                end_offset: source::cached_watermarks(&self.consumer, t, *p).map(|w| w.1),
                released: false,
                behind_transaction: self.ends.behind_transaction(t, *p),
            };
            positions.insert((t.clone(), *p), end);
        }
        positions
    }

    /// Polls, copies what the poll returned inside the open transaction, then does the
    /// periodic work that is due.
    fn copy(&mut self, stop: &AtomicBool) {
        let mut clock = Clock::new(&self.opts);
        let mut pace = Pace::new(&self.opts);
        let mut warner = Warner::default();
        let consumer = self.consumer.clone();
        let mut turns = pace.limited().then(Turns::default);
        let mut rewinds = self.rewinds;
        while !stop.load(Ordering::Relaxed) && !self.failure.is_set() {
            let polled = match turns.as_mut() {
                None => classify(consumer.poll(POLL)),
                Some(turns) => {
                    if rewinds != self.rewinds {
                        turns.clear();
                        rewinds = self.rewinds;
                    }
                    poll_in_turn(&consumer, turns, POLL, |_| {})
                }
            };
            // Periodic work is due at every poll without a record.
            let mut tick = true;
            match polled {
                Polled::Record(msg) => {
                    let sent = forward(
                        &self.producer,
                        &mut self.parts,
                        &mut self.txn,
                        &mut self.scratch,
                        (&msg, &self.stamp, &self.counters),
                        stop,
                    );
                    let bytes = target::record_bytes(&msg);
                    drop(msg);
                    // Inside the open transaction: its age and size bounds still apply.
                    pace.after(bytes, &self.producer, stop, &self.counters);
                    if let Err((e, refused)) = sent {
                        self.abort_and_rewind(&e, refused.map(|r| *r));
                    }
                    tick = clock.record(&self.producer);
                }
                Polled::Idle | Polled::End(_) => {
                    clock.idle(&self.producer);
                    if self.caught_up() {
                        return;
                    }
                }
                Polled::Gap(_) => self.fail_gap(),
                Polled::Fatal(msg) => {
                    // A deleted source topic reads as an unknown topic: with discovery on,
                    // look first, and stop copying only that topic.
                    if self.explained(&msg) {
                        clock.refreshed();
                    }
                }
                Polled::Transient(e) => warner.warn(&self.opts.from.name, &e),
            }
            if self.transaction_full(tick) {
                self.commit_txn();
            }
            if tick && clock.should_publish() {
                self.publish();
            }
            if tick && !self.failure.is_set() && clock.should_refresh() {
                self.refresh_topics();
            }
        }
    }

    /// The open transaction reached `--txn-max-records` or `--txn-max-bytes`, or (checked
    /// when periodic work is `due`) `--txn-max-time`.
    fn transaction_full(&self, due: bool) -> bool {
        let txn = &self.txn;
        let full = txn.records >= self.opts.txn_max_records
            || txn.bytes >= self.opts.txn_max_bytes
            || (due
                && txn
                    .started
                    .is_some_and(|t| t.elapsed() >= self.opts.txn_max_time));
        txn.open && full && !self.failure.is_set()
    }

    /// Partitions read to their end, nothing of theirs in a transaction: the source group's
    /// position (lag monitoring only) moves past what follows their last record, a
    /// transaction marker, as at-least-once's does (`PartitionTracker::passed`).
    fn pass_reached(&mut self) {
        let mut tpl = TopicPartitionList::new();
        for (t, p, at) in self.ends.reached() {
            let Some(o) = self.parts.get_mut(&(t.clone(), p)) else {
                continue;
            };
            if o.sent.is_none() && o.committed.is_none_or(|c| c.get() < at) {
                o.committed = Some(NextOffset::at(at));
                let _ = tpl.add_partition_offset(&t, p, Offset::Offset(at));
            }
        }
        if tpl.count() > 0 {
            let _ = self.consumer.commit(&tpl, CommitMode::Sync);
        }
    }

    /// With `--until-caught-up`: true once every owned partition reached its end.
    fn caught_up(&mut self) -> bool {
        if !self.opts.until_caught_up {
            return false;
        }
        let checked = self.ends.check(&self.consumer, &self.opts);
        for line in self.ends.news() {
            self.counters.notice(line);
        }
        match checked {
            Ok(true) => {
                log::info!("caught up with every owned partition");
                true
            }
            Ok(false) => false,
            Err(e) => {
                self.failure.fail_with(e);
                false
            }
        }
    }

    /// A new snapshot of the positions for the progress display and the metrics.
    fn publish(&self) {
        let in_flight = self.producer.in_flight_count() as usize;
        self.counters.publish(self.positions(), in_flight);
        if !self.txn.open && !self.failure.is_set() {
            // Nothing sent is left uncommitted.
            self.counters.note_covered();
        }
    }

    /// True when discovery explains the source's fatal error `msg` by a deleted topic; else
    /// the run fails.
    fn explained(&mut self, msg: &str) -> bool {
        if self.opts.refresh_topics.is_some() && self.refresh_topics() {
            return true;
        }
        let name = &self.opts.from.name;
        self.failure.fail(format!("source cluster '{name}': {msg}"));
        false
    }

    /// A read position outside the source log.
    fn fail_gap(&mut self) {
        let starts = self.ends.starts();
        let msg = source::gap_message(&self.consumer, starts, &self.opts);
        self.failure.fail(msg);
    }
}

/// Sends one record inside the open transaction (opening one if needed), with its origin.
fn forward(
    producer: &TargetProducer,
    parts: &mut BTreeMap<(String, i32), Part>,
    txn: &mut Txn,
    scratch: &mut Scratch,
    (msg, stamp, counters): (&BorrowedMessage<'_>, &Stamp, &Counters),
    stop: &AtomicBool,
) -> std::result::Result<(), (KafkaError, Option<Box<Refusal>>)> {
    scratch.key.0.clear();
    scratch.key.0.push_str(msg.topic());
    scratch.key.1 = msg.partition();
    let Some(owned) = parts.get_mut(&scratch.key) else {
        return Ok(());
    };
    if target::copied_back(msg, Some(stamp)) {
        counters.skipped.fetch_add(1, Ordering::Relaxed);
        // Covered by the open transaction's commit, if any; otherwise read again (and skipped
        // again) after a restart.
        if txn.open {
            owned.sent = Some(NextOffset::after(msg.offset()));
        }
        return Ok(());
    }
    if !txn.open {
        producer.begin_transaction().map_err(|e| (e, None))?;
        *txn = Txn {
            open: true,
            started: Some(Instant::now()),
            ..Txn::default()
        };
    }
    let headers = target::headers_for(msg, &scratch.key.0, Some(stamp), &mut scratch.origin);
    let record = target::copy_record(msg, &owned.target, headers, msg.offset() as usize);
    match target::send(producer, record, || stop.load(Ordering::Relaxed)) {
        Ok(()) => {}
        // Stopping: the transaction commits what was sent before this record.
        Err(NotSent::GaveUp) => return Ok(()),
        Err(NotSent::Refused(e)) => {
            let refused = Refusal {
                source: scratch.key.0.clone(),
                target: owned.target.clone(),
                partition: msg.partition(),
                offset: msg.offset(),
                code: e.rdkafka_error_code(),
                error: deliveries::describe(&e, scratch.origin.len()),
            };
            return Err((e, Some(Box::new(refused))));
        }
    }
    owned.sent = Some(NextOffset::after(msg.offset()));
    let bytes = target::record_bytes(msg);
    owned
        .pending
        .add(msg.offset(), bytes, msg.timestamp().to_millis());
    txn.records += 1;
    txn.bytes += bytes;
    Ok(())
}
