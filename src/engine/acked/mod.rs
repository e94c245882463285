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
mod commit;
mod discovery;
mod index;
mod rebalance;
mod state;
mod waiting;
mod whole;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rdkafka::consumer::Consumer;
use rdkafka::message::{BorrowedMessage, Message};
use rdkafka::producer::Producer;

use self::callbacks::{Deliveries, TargetProducer};
use self::rebalance::{Protocol, Rebalancer, SourceConsumer};
use self::state::{Shared, State};
use self::whole::Whole;
use super::shared::turns::{poll_in_turn, Turns};
use super::shared::{self, clock::Clock, clock::Pace, follow::Followed};
use crate::error::Result;
use crate::kafka;
use crate::offsets::NextOffset;
use crate::options::RunOptions;
use crate::origin::Stamp;
use crate::report::{Counters, PartitionEnd, Summary};
use crate::source::{self, classify, Polled, Warner};
use crate::target::{self, NotSent};
use crate::topics;

/// Records copied between two rounds of positions index entries (besides every commit).
const INDEX_EVERY: u32 = 4096;

/// How long one poll of the source waits for a record.
const POLL: Duration = Duration::from_millis(100);

/// The `none` and `at-least-once` engine.
pub(super) struct Acked {
    opts: RunOptions,
    /// The topics being copied (`--refresh-topics` changes them).
    followed: Followed,
    shared: Arc<Shared>,
    producer: Arc<TargetProducer>,
    /// Shared with the loop, which holds records read ahead under a rate limit.
    consumer: Arc<SourceConsumer>,
    /// The origin stamped on every record (none with `--no-origin-header`), and the buffer
    /// its value is written through for each record.
    stamp: Option<Stamp>,
    origin: RefCell<String>,
    /// The source and target topic of the last record copied.
    last_route: RefCell<Option<(Box<str>, Arc<str>)>>,
    /// Partitions already warned about a record copied without its origin header.
    unstamped: RefCell<BTreeSet<(String, i32)>>,
    /// The loop's own clocks: the last commit, records since the last index entries, the
    /// last note about joining the group.
    last_commit: Instant,
    since_index: u32,
    last_join_note: Instant,
    /// Since when this process has held no partitions, and whether that was explained (see
    /// `explain_wait`).
    empty_since: Option<Instant>,
    wait_explained: bool,
    /// With `--until-caught-up` in a group: every partition of the copied topics, not only
    /// this member's share, must reach its end.
    whole: Option<Whole>,
}

impl Acked {
    pub(super) fn new(
        opts: &RunOptions,
        routes: super::Routes,
        stamp: Option<Stamp>,
        index: bool,
        counters: Arc<Counters>,
        clients: super::Clients,
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
            index: shared::index::Writing::new(index),
            closing: AtomicBool::new(false),
            source_of: RwLock::new(
                routes
                    .iter()
                    .map(|r| (r.target.clone(), r.source.as_str().into()))
                    .collect(),
            ),
        });
        let producer: Arc<TargetProducer> = Arc::new(
            clients
                .producer
                .create_with_context(Deliveries {
                    shared: shared.clone(),
                })
                .map_err(|e| kafka::creation_error("target", e))?,
        );
        let consumer: Arc<SourceConsumer> = clients
            .consumer
            .create_with_context(Rebalancer {
                shared: shared.clone(),
                producer: producer.clone(),
                guarantee: opts.guarantee,
                start,
                timeout: opts.timeout,
                flush_timeout: shared::flush_timeout(opts),
                protocol: Protocol::of(clients.protocol),
            })
            .map(Arc::new)
            .map_err(|e| kafka::creation_error("source", e))?;
        // After the consumer's creation: it looks for its group coordinator meanwhile.
        target::warm_up(&producer, &routes, opts.timeout)?;
        let whole = (opts.until_caught_up && opts.shard.is_none()).then(|| Whole::new(&routes));
        Ok(Acked {
            opts: opts.clone(),
            followed: Followed::new(routes),
            shared,
            producer,
            consumer,
            stamp,
            origin: RefCell::new(String::new()),
            last_route: RefCell::new(None),
            unstamped: RefCell::new(BTreeSet::new()),
            last_commit: Instant::now(),
            since_index: 0,
            last_join_note: Instant::now(),
            empty_since: None,
            wait_explained: false,
            whole,
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
        self.shared.closing.store(true, Ordering::SeqCst);
        source::close(&self.consumer, self.opts.timeout);
        summary
    }

    /// Every partition this run held: what it copied, where it stands, and its end.
    fn positions(&self) -> BTreeMap<(String, i32), PartitionEnd> {
        let st = self.shared.lock();
        let mut positions: BTreeMap<(String, i32), PartitionEnd> = st.released.clone();
        let source_of = self.shared.source_of();
        for (target, p, part) in st.parts.iter() {
            let source = source_of
                .get(target)
                .map(|s| s.to_string())
                .unwrap_or_default();
            let start = st.ends.start(&source, p);
            // A partition with nothing new to commit still holds the group's position
            // read at assignment (not under `none`: auto-commit may have moved it since).
            let committed = part.committed(start);
            let end_offset = source::cached_watermarks(&self.consumer, &source, p).map(|w| w.1);
            let behind_transaction = st.ends.behind_transaction(&source, p);
            let end = positions.entry((source, p)).or_default();
            end.copied.merge(&part.copied);
            end.committed = committed.or(end.committed);
            end.position = part.tracker.verified().map(NextOffset::get).or(start);
            end.end_offset = end_offset;
            end.released = false;
            end.behind_transaction = behind_transaction;
        }
        drop(st);
        drop(source_of);
        positions
    }

    /// Polls, copies what the poll returned, then does the periodic work that is due.
    fn copy(&mut self, stop: &AtomicBool) {
        let mut clock = Clock::new(&self.opts);
        let mut pace = Pace::new(&self.opts);
        let mut warner = Warner::default();
        (self.last_commit, self.last_join_note) = (Instant::now(), Instant::now());
        let consumer = self.consumer.clone();
        let mut turns = pace.limited().then(Turns::default);
        if turns.is_some() {
            self.shared.lock().revoked = Some(Vec::new());
        }
        while !stop.load(Ordering::Relaxed) && !self.failed() {
            let polled = match turns.as_mut() {
                None => classify(consumer.poll(POLL)),
                Some(turns) => poll_in_turn(&consumer, turns, POLL, |t| self.forget_revoked(t)),
            };
            // Before copying what the poll returned: an assignment made in it may hold a
            // grown topic's new partitions, their target partitions not checked yet.
            if self.shared.assigned.swap(false, Ordering::Relaxed)
                && !discovery::follow_assigned(
                    &self.consumer,
                    &self.opts,
                    &mut self.followed.routes,
                    &self.shared,
                )
            {
                return;
            }
            match polled {
                Polled::Record(msg) => {
                    self.forward(&msg, stop);
                    let bytes = target::record_bytes(&msg);
                    drop(msg);
                    pace.after(bytes, &self.producer, stop, &self.shared.counters);
                    self.since_index += 1;
                    if !clock.record(&self.producer) {
                        continue;
                    }
                    if self.should_index() {
                        self.write_index(stop);
                        self.since_index = 0;
                    }
                }
                Polled::Idle | Polled::End(_) => {
                    clock.idle(&self.producer);
                    if !self.joined() || self.caught_up() {
                        return;
                    }
                    self.held_none();
                }
                Polled::Gap(_) => return self.fail_gap(),
                Polled::Fatal(msg) => {
                    // A deleted source topic reads as an unknown topic: with discovery on,
                    // look first, and stop copying only that topic.
                    if !self.explained(&msg) {
                        return;
                    }
                    clock.refreshed();
                    continue;
                }
                Polled::Transient(e) => {
                    warner.warn(&self.opts.from.name, &e);
                    if !self.joined() {
                        return;
                    }
                }
            }
            if self.should_commit() {
                self.commit_interval(stop);
            }
            if clock.should_publish() {
                self.publish();
            }
            if clock.should_refresh() {
                self.refresh_topics();
            }
        }
    }

    /// Drops what was read ahead of partitions revoked since the last poll.
    fn forget_revoked<R, E>(&self, turns: &mut Turns<R, E>) {
        let gone = self.shared.lock().revoked.as_mut().map(std::mem::take);
        if let Some(gone) = gone.filter(|g| !g.is_empty()) {
            turns.forget(|topic, p| gone.iter().any(|(t, q)| t == topic && *q == p));
        }
    }

    fn failed(&self) -> bool {
        self.shared.lock().failure.is_set()
    }

    /// Index entries also every [`INDEX_EVERY`] records, so that a lookup reads at most that
    /// many records of a busy partition, whatever `--commit-interval` is.
    fn should_index(&self) -> bool {
        self.since_index >= INDEX_EVERY
    }

    /// A new snapshot of the positions for the progress display and the metrics.
    fn publish(&self) {
        let in_flight = self.producer.in_flight_count() as usize;
        self.shared.counters.publish(self.positions(), in_flight);
    }

    /// True when discovery explains the source's fatal error `msg` by a deleted topic; else
    /// the run fails.
    fn explained(&mut self, msg: &str) -> bool {
        if self.opts.refresh_topics.is_some() && self.refresh_topics() {
            return true;
        }
        let name = &self.opts.from.name;
        let failed = format!("source cluster '{name}': {msg}");
        self.shared.lock().failure.fail(failed);
        false
    }

    /// A read position outside the source log.
    fn fail_gap(&self) {
        let starts = self.shared.lock().ends.starts();
        let msg = source::gap_message(&self.consumer, starts, &self.opts);
        self.shared.lock().failure.fail(msg);
    }

    /// The target topic of source topic `source`: the last record's route first (a copy reads
    /// one topic after another), else the table's. Routes are only ever added, so a kept one
    /// stays right. A clone of the name, so that no lock is held while sending serves reports.
    fn target_of(&self, source: &str) -> Option<Arc<str>> {
        let mut last = self.last_route.borrow_mut();
        if let Some((s, t)) = &*last {
            if **s == *source {
                return Some(t.clone());
            }
        }
        let target = self.shared.target_of().get(source).cloned()?;
        *last = Some((source.into(), target.clone()));
        Some(target)
    }

    /// Registers one source record with its tracker and hands it to the producer.
    fn forward(&self, msg: &BorrowedMessage<'_>, stop: &AtomicBool) {
        let source = msg.topic();
        let Some(target) = self.target_of(source) else {
            return;
        };
        let target = &*target;
        let (partition, offset) = (msg.partition(), msg.offset());
        let skip = target::copied_back(msg, self.stamp.as_ref());
        {
            let mut st = self.shared.lock();
            let Some(part) = st.parts.get_mut(target, partition) else {
                // Fetched before a revoke took the partition away: not ours to copy.
                return;
            };
            if part.tracker.sent(offset).is_err() {
                st.failure.fail(format!(
                    "internal error: {source}[{partition}] offset {offset} read twice"
                ));
                return;
            }
            if skip {
                // Came from the target: done without copying, so the position moves past it.
                let _ = part.tracker.acked(offset);
                self.shared.counters.skipped.fetch_add(1, Ordering::Relaxed);
                drop(st);
                self.handed_over(msg);
                return;
            }
        }
        let stamp = self.stamp.as_ref();
        let headers = target::headers_for(msg, source, stamp, &mut self.origin.borrow_mut());
        let give_up = || stop.load(Ordering::Relaxed) || self.shared.lock().failure.is_set();
        let sent = target::send_copy(&self.producer, (msg, target, headers), offset, give_up);
        if let Ok(unstamped) = sent {
            self.handed_over(msg);
            if unstamped {
                self.unstamped(source, partition, offset);
            }
        }
        if let Err(NotSent::Refused(e)) = sent {
            let mut st = self.shared.lock();
            if let Some(part) = st.parts.get_mut(target, partition) {
                let _ = part.tracker.failed(offset, e.to_string());
            }
            st.failure.fail(format!(
                "cannot produce {source}[{partition}] offset {offset} to {target}: {e}"
            ));
        }
    }

    /// Under `none`, a record handed to the producer (or skipped) may be committed: its
    /// position is stored for librdkafka's auto-commit (at-least-once commits what the
    /// target acknowledged instead). A record read but never handed over stays uncommitted.
    fn handed_over(&self, msg: &BorrowedMessage<'_>) {
        if self.opts.guarantee == crate::options::Guarantee::None {
            // Fails only for a partition no longer assigned: not ours to commit.
            if let Err(e) = self.consumer.store_offset_from_message(msg) {
                log::debug!(
                    "not storing {}[{}] offset {}: {e}",
                    msg.topic(),
                    msg.partition(),
                    msg.offset()
                );
            }
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
}
