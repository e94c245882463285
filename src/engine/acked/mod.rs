//! The `none` and `at-least-once` engine: one loop that polls the source, forwards records,
//! commits verified prefixes every `--commit-interval`, and flushes, verifies and commits at
//! the end.
//!
//! One blocking thread drives both clients: it polls the source consumer, hands each record
//! to the target producer with its source offset as the delivery opaque, and serves the
//! producer's delivery reports, which feed a [`crate::offsets::PartitionTracker`] per source partition.
//! Rebalance callbacks run on this same thread (inside `consumer.poll`), so a revoke can
//! flush, verify and commit without any cross-thread rendezvous.

mod callbacks;
mod discovery;
mod index;
mod state;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rdkafka::consumer::{CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, Message};
use rdkafka::producer::Producer;

use self::callbacks::{Deliveries, Rebalancer, SourceConsumer, TargetProducer};
use self::state::{commit_list, mark_committed, Shared, State};
use crate::error::Result;
use crate::kafka;
use crate::offsets::NextOffset;
use crate::options::{Guarantee, RunOptions};
use crate::origin::Stamp;
use crate::report::{Counters, PartitionEnd, Summary};
use crate::source::{self, classify, Polled, Warner};
use crate::target::{self, NotSent};
use crate::throttle::Throttle;
use crate::tick::Ticker;
use crate::topics::{self, Route};

/// Records copied between two rounds of positions index entries (besides every commit).
const INDEX_EVERY: u32 = 4096;

/// The `none` and `at-least-once` engine.
pub(super) struct Acked {
    opts: RunOptions,
    /// The topics being copied (`--refresh-topics` changes them).
    routes: Vec<Route>,
    /// New source topics not copied (target missing), warned about once.
    skipped: BTreeSet<String>,
    /// When a deleted source topic was last dropped.
    last_deleted: Option<Instant>,
    shared: Arc<Shared>,
    producer: Arc<TargetProducer>,
    consumer: SourceConsumer,
    /// The origin stamped on every record (none with `--no-origin-header`), and the buffer
    /// its value is written through for each record.
    stamp: Option<Stamp>,
    origin: RefCell<String>,
    /// Partitions already warned about a record copied without its origin header.
    unstamped: RefCell<BTreeSet<(String, i32)>>,
    /// Write positions index entries with each commit.
    index: bool,
}

impl Acked {
    pub(super) fn new(
        opts: &RunOptions,
        routes: super::Routes,
        stamp: Option<Stamp>,
        index: bool,
        counters: Arc<Counters>,
        consumer_cfg: rdkafka::ClientConfig,
        producer_cfg: rdkafka::ClientConfig,
    ) -> Result<Self> {
        let super::Routes { routes, start } = routes;
        // `--shard`: its partitions are assigned directly instead of through the group; a
        // shard that owns none is a usage error at start.
        if let Some(s) = opts.shard {
            topics::owned(&s, &routes)?;
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            counters,
            target_of: RwLock::new(
                routes
                    .iter()
                    .map(|r| (r.source.clone(), r.target.as_str().into()))
                    .collect(),
            ),
            assigned: AtomicBool::new(false),
            source_of: RwLock::new(
                routes
                    .iter()
                    .map(|r| (r.target.clone(), r.source.as_str().into()))
                    .collect(),
            ),
        });
        let producer: Arc<TargetProducer> = Arc::new(
            producer_cfg
                .create_with_context(Deliveries {
                    shared: shared.clone(),
                })
                .map_err(|e| kafka::creation_error("target", e))?,
        );
        target::warm_up(&producer, &routes, opts.timeout)?;
        let consumer: SourceConsumer = consumer_cfg
            .create_with_context(Rebalancer {
                shared: shared.clone(),
                producer: producer.clone(),
                guarantee: opts.guarantee,
                start,
                timeout: opts.timeout,
                flush_timeout: opts.delivery_timeout + Duration::from_secs(5),
            })
            .map_err(|e| kafka::creation_error("source", e))?;
        Ok(Acked {
            opts: opts.clone(),
            routes,
            skipped: BTreeSet::new(),
            last_deleted: None,
            shared,
            producer,
            consumer,
            stamp,
            origin: RefCell::new(String::new()),
            unstamped: RefCell::new(BTreeSet::new()),
            index,
        })
    }

    pub(super) fn run(mut self, stop: &AtomicBool) -> Summary {
        let started = Instant::now();
        self.read_routes();
        self.copy(stop);
        let stopped = stop.load(Ordering::SeqCst);
        self.shared.counters.finishing(stopped);
        self.finish();
        let positions = self.positions();
        self.shared
            .counters
            .publish(positions.clone(), self.producer.in_flight_count() as usize);
        let failure = self.shared.lock().failure.get().cloned();
        if failure.is_none() {
            self.shared.counters.note_success();
        }
        let summary = Summary::new(
            &self.opts,
            started,
            stopped,
            failure,
            &self.shared.counters,
            positions,
        );
        // After the summary: leaving the group revokes (and forgets) the partitions.
        source::close(&self.consumer, self.opts.timeout);
        summary
    }

    /// Every partition this run held: what it copied, where it stands, and its end.
    fn positions(&self) -> BTreeMap<(String, i32), PartitionEnd> {
        let st = self.shared.lock();
        let mut positions: BTreeMap<(String, i32), PartitionEnd> = st.released.clone();
        let source_of = self.shared.source_of();
        for (target, parts) in &st.parts {
            let source = source_of
                .get(target)
                .map(|s| s.to_string())
                .unwrap_or_default();
            for (&p, part) in parts {
                let start = st.ends.start(&source, p);
                // A partition with nothing new to commit still holds the group's position
                // read at assignment (under `none`, auto-commit may have moved it since).
                let held = start.filter(|_| self.opts.guarantee != Guarantee::None);
                let committed = part.tracker.committed().map(NextOffset::get).or(held);
                let end_offset = source::cached_watermarks(&self.consumer, &source, p).map(|w| w.1);
                let end = positions.entry((source.clone(), p)).or_default();
                end.copied.merge(&part.copied);
                end.committed = committed.or(end.committed);
                end.position = part.tracker.verified().map(NextOffset::get).or(start);
                end.end_offset = end_offset;
            }
        }
        drop(st);
        drop(source_of);
        positions
    }

    fn copy(&mut self, stop: &AtomicBool) {
        let mut last_refresh = Instant::now();
        let mut last_commit = Instant::now();
        let mut last_publish = Instant::now();
        let mut last_join_note = Instant::now();
        let mut warner = Warner::default();
        let mut ticker = Ticker::new(Instant::now());
        let (bytes_limit, records_limit) =
            (self.opts.max_bytes_per_sec, self.opts.max_records_per_sec);
        let mut throttle = Throttle::new(bytes_limit, records_limit, Instant::now());
        let mut since_index = 0u32;
        while !stop.load(Ordering::Relaxed) {
            if self.shared.lock().failure.is_set() {
                return;
            }
            let polled = self.consumer.poll(Duration::from_millis(100));
            // Before copying what the poll returned: an assignment made in it may hold a
            // grown topic's new partitions, their target partitions not checked yet.
            if self.shared.assigned.swap(false, Ordering::Relaxed)
                && !discovery::follow_assigned(
                    &self.consumer,
                    &self.opts,
                    &mut self.routes,
                    &self.shared,
                )
            {
                return;
            }
            match classify(polled) {
                Polled::Record(msg) => {
                    self.forward(&msg, stop);
                    if throttle.is_limited() {
                        let wait = throttle.take(target::record_bytes(&msg), Instant::now());
                        drop(msg);
                        let waited = target::throttle_wait(&self.producer, wait, stop);
                        self.shared.counters.add_throttled(waited);
                    }
                    // Index entries also every 4096 records, so that a lookup reads at most
                    // that many records of a busy partition, whatever --commit-interval is.
                    since_index += 1;
                    // Periodic work (reports, commit interval, lag, discovery) every 256
                    // records or every few milliseconds, whichever comes first.
                    if !ticker.record(Instant::now()) {
                        continue;
                    }
                    target::serve_reports(&self.producer);
                    if since_index >= INDEX_EVERY {
                        self.write_index(stop);
                        since_index = 0;
                    }
                }
                Polled::Idle | Polled::End(_) => {
                    target::serve_reports(&self.producer);
                    ticker.done(Instant::now());
                    if !self.joined(&mut last_join_note) {
                        return;
                    }
                    if self.opts.until_caught_up && self.caught_up() {
                        log::info!("caught up with every assigned partition");
                        return;
                    }
                }
                Polled::Gap(_) => {
                    let starts = self.shared.lock().ends.starts();
                    let msg = source::gap_message(&self.consumer, starts, &self.opts);
                    self.shared.lock().failure.fail(msg);
                    return;
                }
                Polled::Fatal(msg) => {
                    // A deleted source topic reads as an unknown topic: with discovery on,
                    // look first, and stop copying only that topic.
                    if self.opts.refresh_topics.is_some() && self.refresh_topics() {
                        last_refresh = Instant::now();
                        continue;
                    }
                    let name = &self.opts.from.name;
                    self.shared
                        .lock()
                        .failure
                        .fail(format!("source cluster '{name}': {msg}"));
                    return;
                }
                Polled::Transient(e) => {
                    warner.warn(&self.opts.from.name, &e);
                    if !self.joined(&mut last_join_note) {
                        return;
                    }
                }
            }
            if last_commit.elapsed() >= self.opts.commit_interval {
                if self.commit(CommitMode::Async).is_none() && self.covered() {
                    self.shared.counters.note_covered();
                }
                self.write_index(stop);
                last_commit = Instant::now();
            }
            if last_publish.elapsed() >= Duration::from_secs(1) {
                let in_flight = self.producer.in_flight_count() as usize;
                self.shared.counters.publish(self.positions(), in_flight);
                last_publish = Instant::now();
            }
            if self
                .opts
                .refresh_topics
                .is_some_and(|every| last_refresh.elapsed() >= every)
            {
                self.refresh_topics();
                last_refresh = Instant::now();
            }
        }
    }

    /// Registers one source record with its tracker and hands it to the producer.
    fn forward(&self, msg: &BorrowedMessage<'_>, stop: &AtomicBool) {
        // A clone of the name, so that no lock is held while sending serves reports.
        let Some(target) = self.shared.target_of().get(msg.topic()).cloned() else {
            return;
        };
        let target = &*target;
        let (partition, offset) = (msg.partition(), msg.offset());
        let skip = target::copied_back(msg, self.stamp.as_ref());
        {
            let mut st = self.shared.lock();
            let Some(part) = st.parts.get_mut(target).and_then(|p| p.get_mut(&partition)) else {
                // Fetched before a revoke took the partition away: not ours to copy.
                return;
            };
            if part.tracker.sent(offset).is_err() {
                st.failure.fail(format!(
                    "internal error: {}[{partition}] offset {offset} read twice",
                    msg.topic()
                ));
                return;
            }
            if skip {
                // Came from the target: done without copying, so the position moves past it.
                let _ = part.tracker.acked(offset);
                self.shared.counters.skipped.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        let headers = target::headers_for(msg, self.stamp.as_ref(), &mut self.origin.borrow_mut());
        let give_up = || stop.load(Ordering::Relaxed) || self.shared.lock().failure.is_set();
        let sent = target::send_copy(&self.producer, (msg, target, headers), offset, give_up);
        if sent.as_ref().is_ok_and(|unstamped| *unstamped) {
            self.unstamped(msg.topic(), partition, offset);
        }
        if let Err(NotSent::Refused(e)) = sent {
            let mut st = self.shared.lock();
            if let Some(part) = st.parts.get_mut(target).and_then(|p| p.get_mut(&partition)) {
                let _ = part.tracker.failed(offset, e.to_string());
            }
            st.failure.fail(format!(
                "cannot produce {}[{partition}] offset {offset} to {target}: {e}",
                msg.topic()
            ));
        }
    }

    /// Counts a record sent without its origin header; warns once per partition.
    fn unstamped(&self, topic: &str, partition: i32, offset: i64) {
        let counters = &self.shared.counters;
        counters.unstamped.fetch_add(1, Ordering::Relaxed);
        if self
            .unstamped
            .borrow_mut()
            .insert((topic.to_string(), partition))
        {
            counters.notice(target::unstamped_notice(topic, partition, offset));
        }
    }

    /// Commits verified positions (at-least-once only: `none` relies on auto-commit).
    fn commit(&self, mode: CommitMode) -> Option<KafkaError> {
        if self.opts.guarantee == Guarantee::None {
            return None;
        }
        let all = matches!(mode, CommitMode::Sync);
        let tpl = commit_list(&self.shared, None, all);
        if tpl.count() == 0 {
            return None;
        }
        match self.consumer.commit(&tpl, mode) {
            Ok(()) => {
                mark_committed(&self.shared, &tpl);
                None
            }
            Err(e) => Some(e),
        }
    }

    /// True when the committed positions cover every record the target acknowledged (`none`
    /// leaves commits to auto-commit: always).
    fn covered(&self) -> bool {
        self.opts.guarantee == Guarantee::None
            || commit_list(&self.shared, None, false).count() == 0
    }

    /// While the group has not assigned partitions: says so (progress display, and every 5 s at
    /// `-v`), and fails the run once `--join-timeout` passed. False when the run failed.
    fn joined(&self, last_note: &mut Instant) -> bool {
        let Some(since) = self.shared.lock().waiting_since else {
            return true;
        };
        if self.routes.is_empty() {
            // Every source topic was deleted: nothing to join for until one appears.
            return true;
        }
        let waited = since.elapsed();
        let group = &self.opts.group;
        if waited > self.opts.join_timeout {
            self.shared.lock().failure.fail(format!(
                "consumer group '{group}' assigned no partitions within --join-timeout {:?}: its coordinator did not complete the join (a rebalance that does not end, or a stuck member); nothing was copied or committed meanwhile. Rerun, raise --join-timeout, or use --shard 1/1 to read without joining the group",
                self.opts.join_timeout
            ));
            return false;
        }
        self.shared
            .counters
            .set_waiting(Some(format!("joining group '{group}'")));
        if last_note.elapsed() >= Duration::from_secs(5) {
            log::info!(
                "waiting for group '{group}' to assign partitions: {:.0} s of --join-timeout {:?}",
                waited.as_secs_f64(),
                self.opts.join_timeout
            );
            *last_note = Instant::now();
        }
        true
    }

    /// True once the group assigned partitions and every one of them reached its end.
    fn caught_up(&self) -> bool {
        let mut st = self.shared.lock();
        if !st.assigned_once {
            return false;
        }
        match st.ends.check(&self.consumer, &self.opts) {
            Ok(done) => done,
            Err(msg) => {
                st.failure.fail(msg);
                false
            }
        }
    }

    /// Flush, verify, commit.
    fn finish(&self) {
        log::info!("flushing, verifying and committing");
        // Serve reports already in, then wait (bounded) for the rest.
        target::serve_reports(&self.producer);
        let flush_timeout = self.opts.delivery_timeout + Duration::from_secs(5);
        if let Err(e) = target::flush(&self.producer, flush_timeout) {
            let pending = self.producer.in_flight_count();
            self.shared.lock().failure.fail(format!(
                "target cluster '{}' did not acknowledge {pending} records within {flush_timeout:?} ({e}); their source positions were not committed",
                self.opts.to.name
            ));
        }
        let err = match self.opts.guarantee {
            Guarantee::None => match self.consumer.commit_consumer_state(CommitMode::Sync) {
                Err(KafkaError::ConsumerCommit(RDKafkaErrorCode::NoOffset)) | Ok(()) => None,
                Err(e) => Some(e),
            },
            _ => self.commit(CommitMode::Sync),
        };
        if let Some(e) = err {
            use RDKafkaErrorCode as C;
            let hint = match (e.rdkafka_error_code(), self.opts.shard.is_some()) {
                (Some(C::UnknownMemberId | C::IllegalGeneration | C::RebalanceInProgress), false) => {
                    "; the group no longer counted this process as a member (its session expired or the group rebalanced), so the next run copies the records since the last commit again"
                }
                (Some(C::UnknownMemberId | C::IllegalGeneration), true) => {
                    "; a static shard commits without joining the group, which only works while the group has no members: give --shard runs a group of their own"
                }
                _ => "",
            };
            self.shared.lock().failure.fail(format!(
                "commit to the source group '{}' failed: {e}{hint}",
                self.opts.group
            ));
        }
        // The last entries, so that a lookup right after this run reads none of its tail.
        self.write_index(&AtomicBool::new(false));
        let _ = target::flush(&self.producer, self.opts.timeout);
    }
}
