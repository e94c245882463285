//! The consume → produce → verify → commit loop, in one place.
//!
//! One blocking thread drives both clients: it polls the source consumer, hands each record
//! to the target producer with its source offset as the delivery opaque, and serves the
//! producer's delivery reports, which feed a [`PartitionTracker`] per source partition.
//! Rebalance callbacks run on this same thread (inside `consumer.poll`), so a revoke can
//! flush, verify and commit without any cross-thread rendezvous.

use std::collections::{BTreeMap, HashMap};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{Offset, TopicPartitionList};

use crate::cli::{GapPolicy, Guarantee, StartPosition};
use crate::config::{RunOptions, TopicSelection};
use crate::error::{Error, Result};
use crate::kafka;
use crate::offsets::{NextOffset, PartitionTracker};

// Source offsets travel as the delivery opaque (`usize`).
const _: () = assert!(usize::BITS == 64, "kreplicate needs a 64-bit target");

/// Live counters, readable from other threads (progress display, the demo).
#[derive(Debug, Default)]
pub struct Progress {
    /// Records acknowledged by the target.
    pub records: AtomicU64,
    /// Key + value bytes acknowledged by the target.
    pub bytes: AtomicU64,
}

/// What a run did, for the human line on stderr and the `--json` object.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    pub guarantee: &'static str,
    /// Records acknowledged by the target in this run.
    pub records: u64,
    /// Key + value bytes of those records.
    pub bytes: u64,
    pub seconds: f64,
    /// `ok`, `failed`, or `stopped` (first signal: flushed, verified, committed).
    pub status: &'static str,
    pub error: Option<String>,
    pub partitions: Vec<PartitionSummary>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PartitionSummary {
    pub topic: String,
    pub partition: i32,
    pub target_topic: String,
    /// The committed source position (next offset to read) at exit, if any.
    pub committed: Option<i64>,
}

impl Summary {
    pub fn exit_code(&self) -> i32 {
        if self.error.is_some() {
            1
        } else {
            0
        }
    }
}

/// A source topic and where it goes.
#[derive(Debug, Clone)]
struct Route {
    source: String,
    target: String,
    partitions: i32,
}

#[derive(Debug)]
struct PartState {
    tracker: PartitionTracker,
    /// Where this assignment started reading.
    start: Offset,
    caught_up: bool,
}

/// Everything the loop, the delivery callback and the rebalance callback share.
#[derive(Debug, Default)]
struct State {
    /// Keyed by target topic (the delivery report names it), then partition.
    parts: HashMap<String, BTreeMap<i32, PartState>>,
    /// Committed positions of partitions this process no longer owns, for the summary.
    released: BTreeMap<(String, i32), i64>,
    /// The first failure that ends the run.
    failure: Option<String>,
    assigned_once: bool,
}

impl State {
    fn fail(&mut self, msg: String) {
        if self.failure.is_none() {
            self.failure = Some(msg);
        }
    }
}

struct Shared {
    state: Mutex<State>,
    progress: Arc<Progress>,
    /// Source topic → target topic.
    target_of: HashMap<String, String>,
    /// Target topic → source topic.
    source_of: HashMap<String, String>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere must not turn every later lock into another panic.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Producer context: turns delivery reports into tracker updates.
struct Deliveries {
    shared: Arc<Shared>,
}

impl ClientContext for Deliveries {}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, source_offset: usize) {
        let offset = source_offset as i64;
        let (msg, err) = match result {
            Ok(m) => (m, None),
            Err((e, m)) => (m, Some(e)),
        };
        let (topic, partition) = (msg.topic(), msg.partition());
        let mut st = self.shared.lock();
        let Some(part) = st.parts.get_mut(topic).and_then(|p| p.get_mut(&partition)) else {
            // The partition was lost in a rebalance: its new owner starts from the last
            // commit, which never covered this record.
            return;
        };
        let res = match err {
            None => {
                let n = msg.payload_len() + msg.key().map_or(0, <[u8]>::len);
                self.shared.progress.records.fetch_add(1, Ordering::Relaxed);
                self.shared
                    .progress
                    .bytes
                    .fetch_add(n as u64, Ordering::Relaxed);
                part.tracker.acked(offset)
            }
            Some(e) => part.tracker.failed(offset, e.to_string()),
        };
        if let Some(e) = err {
            let source = self
                .shared
                .source_of
                .get(topic)
                .map_or(topic, String::as_str);
            st.fail(format!(
                "delivery failed: {source}[{partition}] offset {offset} → {topic}: {e}"
            ));
        } else if res.is_err() {
            st.fail(format!(
                "internal error: delivery report for {topic}[{partition}] offset {offset}, which was not in flight"
            ));
        }
    }
}

type Target = BaseProducer<Deliveries>;
type Source = BaseConsumer<Rebalancer>;

/// Consumer context: decides start positions on assign, and commits the verified prefix
/// of revoked partitions before letting them go.
struct Rebalancer {
    shared: Arc<Shared>,
    producer: Arc<Target>,
    guarantee: Guarantee,
    start: StartPosition,
    timeout: Duration,
    flush_timeout: Duration,
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
                    .fail(format!("consumer group rebalance failed: {other:?}"));
                let _ = consumer.unassign();
            }
        }
    }
}

impl Rebalancer {
    fn assign(&self, consumer: &Source, tpl: &TopicPartitionList) {
        let committed = match consumer.committed_offsets(tpl.clone(), self.timeout) {
            Ok(c) => c,
            Err(e) => {
                self.shared.lock().fail(format!(
                    "cannot read the group's committed positions on the source: {e}"
                ));
                let _ = consumer.assign(tpl);
                return;
            }
        };
        let mut assignment = TopicPartitionList::new();
        let mut st = self.shared.lock();
        st.assigned_once = true;
        for elem in committed.elements() {
            let start = match elem.offset() {
                Offset::Offset(n) => Offset::Offset(n),
                _ => match self.start {
                    StartPosition::Earliest => Offset::Beginning,
                    StartPosition::Latest => Offset::End,
                },
            };
            if assignment
                .add_partition_offset(elem.topic(), elem.partition(), start)
                .is_err()
            {
                st.fail(format!(
                    "cannot assign {}[{}]",
                    elem.topic(),
                    elem.partition()
                ));
            }
            let Some(target) = self.shared.target_of.get(elem.topic()) else {
                continue;
            };
            st.parts.entry(target.clone()).or_default().insert(
                elem.partition(),
                PartState {
                    tracker: PartitionTracker::new(),
                    start,
                    caught_up: false,
                },
            );
        }
        drop(st);
        drop(committed);
        if let Err(e) = consumer.assign(&assignment) {
            self.shared
                .lock()
                .fail(format!("cannot assign source partitions: {e}"));
        }
    }

    fn revoke(&self, consumer: &Source, tpl: &TopicPartitionList) {
        let lost = consumer.assignment_lost();
        let healthy = self.shared.lock().failure.is_none();
        if !lost && healthy && self.guarantee != Guarantee::None {
            // Flush and verify before giving the partitions to another member.
            if let Err(e) = self.producer.flush(self.flush_timeout) {
                self.shared.lock().fail(format!(
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
            if list.count() > 0 {
                // A failed commit here only means the next owner copies some records again.
                if consumer.commit(&list, CommitMode::Sync).is_ok() {
                    mark_committed(&self.shared, &list);
                }
            }
        }
        let mut st = self.shared.lock();
        for (source, partition) in revoked {
            let Some(target) = self.shared.target_of.get(&source) else {
                continue;
            };
            if let Some(ps) = st.parts.get_mut(target).and_then(|p| p.remove(&partition)) {
                if let (false, Some(c)) = (lost, ps.tracker.committed()) {
                    st.released.insert((source, partition), c.get());
                }
            }
        }
        drop(st);
        let _ = consumer.unassign();
    }
}

/// Positions to commit: the verified prefix of each (selected) partition; with `all`, also
/// those already committed (for the final synchronous commit).
fn commit_list(shared: &Shared, only: Option<&[(String, i32)]>, all: bool) -> TopicPartitionList {
    let st = shared.lock();
    let mut tpl = TopicPartitionList::new();
    for (target, parts) in &st.parts {
        let Some(source) = shared.source_of.get(target) else {
            continue;
        };
        for (&partition, ps) in parts {
            if only.is_some_and(|o| !o.iter().any(|(t, p)| t == source && *p == partition)) {
                continue;
            }
            let pos = if all {
                ps.tracker.verified()
            } else {
                ps.tracker.to_commit()
            };
            if let Some(pos) = pos {
                let _ = tpl.add_partition_offset(source, partition, Offset::Offset(pos.get()));
            }
        }
    }
    tpl
}

fn mark_committed(shared: &Shared, tpl: &TopicPartitionList) {
    let mut st = shared.lock();
    for e in tpl.elements() {
        let (Some(target), Offset::Offset(n)) = (shared.target_of.get(e.topic()), e.offset())
        else {
            continue;
        };
        if let Some(ps) = st
            .parts
            .get_mut(target)
            .and_then(|p| p.get_mut(&e.partition()))
        {
            ps.tracker.mark_committed(NextOffset::at(n));
        }
    }
}

/// A run that passed every check and is ready to copy.
pub struct Replicator {
    opts: RunOptions,
    routes: Vec<Route>,
    shared: Arc<Shared>,
    producer: Arc<Target>,
    consumer: Source,
}

impl Replicator {
    /// Checks everything that can be checked before copying: properties, both clusters,
    /// topics, partition counts, and that no topic is copied onto itself. Creates missing
    /// target topics when asked. Any error here is a usage error: nothing was consumed,
    /// produced or committed.
    pub fn prepare(opts: &RunOptions, progress: Arc<Progress>) -> Result<Self> {
        if opts.guarantee == Guarantee::ExactlyOnce {
            return Err(Error::usage(
                "--guarantee exactly-once is not available in this version",
            ));
        }
        let consumer_cfg = kafka::consumer_config(opts)?;
        let producer_cfg = kafka::producer_config(opts)?;

        // Plain clients first: metadata and admin, without joining the group.
        let source_meta: BaseConsumer = kafka::admin_config(&opts.from)
            .create()
            .map_err(|e| kafka::creation_error("source", e))?;
        let target_meta: BaseConsumer = kafka::admin_config(&opts.to)
            .create()
            .map_err(|e| kafka::creation_error("target", e))?;

        let source_topics = topic_partitions(&source_meta, opts.timeout).map_err(|e| {
            Error::usage(format!(
                "cannot reach the source cluster '{}' within {:?}: {e}; check --from",
                opts.from.name, opts.timeout
            ))
        })?;
        let routes = select(opts, &source_topics)?;

        let target_topics = topic_partitions(&target_meta, opts.timeout).map_err(|e| {
            Error::usage(format!(
                "cannot reach the target cluster '{}' within {:?}: {e}; check --to",
                opts.to.name, opts.timeout
            ))
        })?;
        let same_cluster = same_cluster(opts, &source_meta, &target_meta);
        for r in &routes {
            if same_cluster && r.source == r.target {
                return Err(Error::usage(format!(
                    "refusing to copy topic '{}' onto itself (same cluster, same name): use --rename",
                    r.source
                )));
            }
        }
        let mut missing = Vec::new();
        for r in &routes {
            match target_topics.get(&r.target) {
                Some(&n) if n < r.partitions => {
                    return Err(Error::usage(format!(
                        "target topic '{}' has {n} partitions, fewer than the {} of source topic '{}': add partitions to the target",
                        r.target, r.partitions, r.source
                    )))
                }
                Some(_) => {}
                None if opts.create_topics => missing.push(r),
                None => {
                    return Err(Error::usage(format!(
                        "target topic '{}' does not exist on '{}': create it with {} partitions, or pass --create-topics",
                        r.target, opts.to.name, r.partitions
                    )))
                }
            }
        }
        if !missing.is_empty() {
            create_topics(opts, &missing, &target_meta)?;
        }
        drop(source_meta);
        drop(target_meta);

        let target_of: HashMap<String, String> = routes
            .iter()
            .map(|r| (r.source.clone(), r.target.clone()))
            .collect();
        let source_of = routes
            .iter()
            .map(|r| (r.target.clone(), r.source.clone()))
            .collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            progress,
            target_of,
            source_of,
        });
        let producer: Arc<Target> = Arc::new(
            producer_cfg
                .create_with_context(Deliveries {
                    shared: shared.clone(),
                })
                .map_err(|e| kafka::creation_error("target", e))?,
        );
        let consumer: Source = consumer_cfg
            .create_with_context(Rebalancer {
                shared: shared.clone(),
                producer: producer.clone(),
                guarantee: opts.guarantee,
                start: opts.start,
                timeout: opts.timeout,
                flush_timeout: opts.delivery_timeout + Duration::from_secs(5),
            })
            .map_err(|e| kafka::creation_error("source", e))?;
        Ok(Replicator {
            opts: opts.clone(),
            routes,
            shared,
            producer,
            consumer,
        })
    }

    /// Source topics this run copies, with their targets.
    pub fn topics(&self) -> Vec<(String, String)> {
        self.routes
            .iter()
            .map(|r| (r.source.clone(), r.target.clone()))
            .collect()
    }

    /// Copies until `stop` is set, a failure happens, or (with `--until-caught-up`) every
    /// assigned partition is caught up; then flushes, verifies and commits.
    pub fn run(self, stop: &AtomicBool) -> Summary {
        let started = Instant::now();
        let topics: Vec<&str> = self.routes.iter().map(|r| r.source.as_str()).collect();
        if let Err(e) = self.consumer.subscribe(&topics) {
            self.shared
                .lock()
                .fail(format!("cannot subscribe to the source topics: {e}"));
        } else {
            self.copy(stop);
        }
        let stopped = stop.load(Ordering::SeqCst);
        self.finish();
        self.summary(started, stopped)
    }

    fn copy(&self, stop: &AtomicBool) {
        let mut last_commit = Instant::now();
        let mut last_warning: Option<Instant> = None;
        let mut since_poll = 0u32;
        while !stop.load(Ordering::Relaxed) {
            if self.shared.lock().failure.is_some() {
                return;
            }
            match self.consumer.poll(Duration::from_millis(100)) {
                Some(Ok(msg)) => {
                    self.forward(&msg);
                    since_poll += 1;
                    // Serve delivery reports regularly without a call per record.
                    if since_poll >= 256 {
                        self.producer.poll(Duration::ZERO);
                        since_poll = 0;
                    }
                    continue_commit(self, &mut last_commit);
                    continue;
                }
                Some(Err(KafkaError::PartitionEOF(_))) | None => {}
                Some(Err(KafkaError::MessageConsumption(
                    RDKafkaErrorCode::OffsetOutOfRange | RDKafkaErrorCode::AutoOffsetReset,
                ))) => {
                    let msg = self.describe_gap();
                    self.shared.lock().fail(msg);
                    return;
                }
                Some(Err(KafkaError::MessageConsumption(
                    code @ (RDKafkaErrorCode::UnknownTopicOrPartition
                    | RDKafkaErrorCode::UnknownTopic
                    | RDKafkaErrorCode::TopicAuthorizationFailed
                    | RDKafkaErrorCode::GroupAuthorizationFailed),
                ))) => {
                    self.shared
                        .lock()
                        .fail(format!("source cluster '{}': {code}", self.opts.from.name));
                    return;
                }
                Some(Err(KafkaError::MessageConsumptionFatal(code))) => {
                    self.shared.lock().fail(format!(
                        "source cluster '{}': fatal consumer error: {code}",
                        self.opts.from.name
                    ));
                    return;
                }
                Some(Err(e)) => {
                    // Transient (a broker restarting, a network blip): librdkafka retries.
                    if last_warning.is_none_or(|t| t.elapsed() > Duration::from_secs(30)) {
                        eprintln!(
                            "kreplicate: warning: source cluster '{}': {e}",
                            self.opts.from.name
                        );
                        last_warning = Some(Instant::now());
                    }
                }
            }
            self.producer.poll(Duration::ZERO);
            continue_commit(self, &mut last_commit);
            if self.opts.until_caught_up && self.caught_up() {
                return;
            }
        }

        fn continue_commit(r: &Replicator, last: &mut Instant) {
            if last.elapsed() >= r.opts.commit_interval {
                r.commit(CommitMode::Async);
                *last = Instant::now();
            }
        }
    }

    /// Hands one source record to the producer, keeping partition, key, value (null or
    /// not), headers and timestamp.
    fn forward(&self, msg: &rdkafka::message::BorrowedMessage<'_>) {
        let Some(target) = self.shared.target_of.get(msg.topic()) else {
            return;
        };
        let (partition, offset) = (msg.partition(), msg.offset());
        {
            let mut st = self.shared.lock();
            let Some(ps) = st.parts.get_mut(target).and_then(|p| p.get_mut(&partition)) else {
                // Fetched before a revoke took the partition away: not ours to copy.
                return;
            };
            if ps.tracker.sent(offset).is_err() {
                st.fail(format!(
                    "internal error: {}[{partition}] offset {offset} read twice",
                    msg.topic()
                ));
                return;
            }
        }
        let mut record: BaseRecord<'_, [u8], [u8], usize> =
            BaseRecord::with_opaque_to(target, offset as usize).partition(partition);
        if let Some(k) = msg.key() {
            record = record.key(k);
        }
        if let Some(v) = msg.payload() {
            record = record.payload(v);
        }
        if let Some(ts) = msg.timestamp().to_millis() {
            record = record.timestamp(ts);
        }
        if let Some(h) = msg.headers() {
            record = record.headers(h.detach());
        }
        loop {
            match self.producer.send(record) {
                Ok(()) => return,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                    // Backpressure: the producer queue is full, wait for deliveries.
                    record = r;
                    self.producer.poll(Duration::from_millis(50));
                    if self.shared.lock().failure.is_some() {
                        return;
                    }
                }
                Err((e, _)) => {
                    let mut st = self.shared.lock();
                    if let Some(ps) = st.parts.get_mut(target).and_then(|p| p.get_mut(&partition)) {
                        let _ = ps.tracker.failed(offset, e.to_string());
                    }
                    st.fail(format!(
                        "cannot produce {}[{partition}] offset {offset} to {target}: {e}",
                        msg.topic()
                    ));
                    return;
                }
            }
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

    /// True once every assigned partition has been read to the end: the position is at or
    /// past the high watermark of a fetch made after the run started. Fetch high watermarks
    /// are right on every broker we know, unlike ListOffsets on tansu.
    fn caught_up(&self) -> bool {
        let Ok(positions) = self.consumer.position() else {
            return false;
        };
        let mut st = self.shared.lock();
        if !st.assigned_once {
            return false;
        }
        let mut newly = TopicPartitionList::new();
        let mut all = true;
        let mut gap = false;
        let mut resets = Vec::new();
        for elem in positions.elements() {
            let Some(target) = self.shared.target_of.get(elem.topic()) else {
                continue;
            };
            let Some(ps) = st
                .parts
                .get_mut(target)
                .and_then(|p| p.get_mut(&elem.partition()))
            else {
                continue;
            };
            if ps.caught_up {
                continue;
            }
            let Some((low, high)) =
                cached_watermarks(&self.consumer, elem.topic(), elem.partition())
            else {
                all = false;
                continue;
            };
            let pos = match (elem.offset(), ps.start) {
                (Offset::Offset(n), _) => n,
                (_, Offset::Offset(n)) => n,
                (_, Offset::Beginning) => low,
                _ => high,
            };
            let outside = elem.offset() == Offset::Invalid && (pos > high || pos < low);
            // Nothing read yet and the start lies outside the log: a source gap. Not every
            // broker answers such a fetch with an error (tansu returns nothing), so it is
            // caught here as well as on the fetch error.
            let done = if outside {
                let reset = match self.opts.on_gap {
                    GapPolicy::Fail => None,
                    GapPolicy::Earliest => Some(Offset::Beginning),
                    GapPolicy::Latest => Some(Offset::End),
                };
                match reset {
                    None => gap = true,
                    Some(to) => {
                        ps.start = to;
                        resets.push((elem.topic().to_string(), elem.partition(), to));
                    }
                }
                false
            } else {
                pos >= high
            };
            if done {
                ps.caught_up = true;
                let _ = newly.add_partition(elem.topic(), elem.partition());
            } else {
                all = false;
            }
        }
        drop(st);
        drop(positions);
        for (topic, partition, to) in resets {
            if let Err(e) = self.consumer.seek(&topic, partition, to, self.opts.timeout) {
                self.shared
                    .lock()
                    .fail(format!("cannot skip the gap in {topic}[{partition}]: {e}"));
            }
        }
        if gap {
            let msg = self.describe_gap();
            self.shared.lock().fail(msg);
            return false;
        }
        if newly.count() > 0 {
            // Read no further than the end: the run copies what existed when it started.
            let _ = self.consumer.pause(&newly);
        }
        all
    }

    /// Names the partitions whose committed position is outside the source log.
    fn describe_gap(&self) -> String {
        let starts: Vec<(String, i32, i64)> = {
            let st = self.shared.lock();
            st.parts
                .iter()
                .flat_map(|(target, parts)| {
                    let source = self
                        .shared
                        .source_of
                        .get(target)
                        .cloned()
                        .unwrap_or_default();
                    parts.iter().filter_map(move |(&p, ps)| match ps.start {
                        Offset::Offset(n) => Some((source.clone(), p, n)),
                        _ => None,
                    })
                })
                .collect()
        };
        let mut gaps = Vec::new();
        for (topic, partition, committed) in starts {
            if let Ok((low, high)) =
                self.consumer
                    .fetch_watermarks(&topic, partition, self.opts.timeout)
            {
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

    /// Flush, verify, commit.
    fn finish(&self) {
        // Serve reports already in, then wait (bounded) for the rest.
        self.producer.poll(Duration::ZERO);
        let flush_timeout = self.opts.delivery_timeout + Duration::from_secs(5);
        if let Err(e) = self.producer.flush(flush_timeout) {
            let pending = self.producer.in_flight_count();
            self.shared.lock().fail(format!(
                "target cluster '{}' did not acknowledge {pending} records within {flush_timeout:?} ({e}); their source positions were not committed",
                self.opts.to.name
            ));
        }
        match self.opts.guarantee {
            Guarantee::None => {
                if let Err(e) = self.consumer.commit_consumer_state(CommitMode::Sync) {
                    if !matches!(e, KafkaError::ConsumerCommit(RDKafkaErrorCode::NoOffset)) {
                        self.shared
                            .lock()
                            .fail(format!("commit to the source group failed: {e}"));
                    }
                }
            }
            _ => {
                if let Some(e) = self.commit(CommitMode::Sync) {
                    self.shared.lock().fail(format!(
                        "commit of verified positions to the source group '{}' failed: {e}",
                        self.opts.group
                    ));
                }
            }
        }
    }

    fn summary(&self, started: Instant, stopped: bool) -> Summary {
        let st = self.shared.lock();
        let mut partitions: BTreeMap<(String, i32), Option<i64>> = st
            .released
            .iter()
            .map(|(k, v)| (k.clone(), Some(*v)))
            .collect();
        for (target, parts) in &st.parts {
            let source = self
                .shared
                .source_of
                .get(target)
                .cloned()
                .unwrap_or_default();
            for (&p, ps) in parts {
                partitions.insert(
                    (source.clone(), p),
                    ps.tracker.committed().map(NextOffset::get),
                );
            }
        }
        let status = match (&st.failure, stopped) {
            (Some(_), _) => "failed",
            (None, true) => "stopped",
            (None, false) => "ok",
        };
        Summary {
            guarantee: self.opts.guarantee.as_str(),
            records: self.shared.progress.records.load(Ordering::Relaxed),
            bytes: self.shared.progress.bytes.load(Ordering::Relaxed),
            seconds: started.elapsed().as_secs_f64(),
            status,
            error: st.failure.clone(),
            partitions: partitions
                .into_iter()
                .map(|((topic, partition), committed)| PartitionSummary {
                    target_topic: self.opts.target_topic(&topic),
                    topic,
                    partition,
                    committed,
                })
                .collect(),
        }
    }
}

/// Topic → partition count, for every topic of a cluster.
fn topic_partitions(
    client: &BaseConsumer,
    timeout: Duration,
) -> std::result::Result<HashMap<String, i32>, KafkaError> {
    let md = client.fetch_metadata(None, timeout)?;
    Ok(md
        .topics()
        .iter()
        .filter(|t| t.error().is_none() && !t.partitions().is_empty())
        .map(|t| (t.name().to_string(), t.partitions().len() as i32))
        .collect())
}

/// Resolves `--topics` against the source's topics and applies `--rename`.
fn select(opts: &RunOptions, source: &HashMap<String, i32>) -> Result<Vec<Route>> {
    let mut names: Vec<String> = match &opts.topics {
        TopicSelection::List(list) => {
            for t in list {
                if !source.contains_key(t) {
                    return Err(Error::usage(format!(
                        "source topic '{t}' does not exist on '{}': check --topics",
                        opts.from.name
                    )));
                }
            }
            list.clone()
        }
        TopicSelection::Regex(re) => source
            .keys()
            .filter(|t| !t.starts_with("__") && re.is_match(t))
            .cloned()
            .collect(),
    };
    names.sort();
    names.dedup();
    if names.is_empty() {
        return Err(Error::usage(format!(
            "no topic on '{}' matches --topics",
            opts.from.name
        )));
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut routes = Vec::new();
    for source_topic in names {
        let target = opts.target_topic(&source_topic);
        if let Some(other) = seen.insert(target.clone(), source_topic.clone()) {
            return Err(Error::usage(format!(
                "--rename '{}' maps both '{other}' and '{source_topic}' to '{target}'",
                opts.rename
            )));
        }
        routes.push(Route {
            partitions: source[&source_topic],
            source: source_topic,
            target,
        });
    }
    Ok(routes)
}

/// Same cluster when both report the same cluster id, or share a bootstrap address.
fn same_cluster(opts: &RunOptions, a: &BaseConsumer, b: &BaseConsumer) -> bool {
    let timeout = opts.timeout.min(Duration::from_secs(5));
    if let (Some(x), Some(y)) = (
        a.client().fetch_cluster_id(timeout),
        b.client().fetch_cluster_id(timeout),
    ) {
        return x == y;
    }
    let addrs = |s: &str| -> Vec<String> {
        s.split(',')
            .map(|a| a.trim().to_ascii_lowercase())
            .filter(|a| !a.is_empty())
            .collect()
    };
    let (x, y) = (addrs(&opts.from.bootstrap), addrs(&opts.to.bootstrap));
    x.iter().any(|a| y.contains(a))
}

fn create_topics(opts: &RunOptions, missing: &[&Route], target: &BaseConsumer) -> Result<()> {
    let admin: AdminClient<DefaultClientContext> = kafka::admin_config(&opts.to)
        .create()
        .map_err(|e| kafka::creation_error("target", e))?;
    let rf = opts.replication_factor.unwrap_or(-1);
    let new: Vec<NewTopic<'_>> = missing
        .iter()
        .map(|r| NewTopic::new(&r.target, r.partitions, TopicReplication::Fixed(rf)))
        .collect();
    let admin_opts = AdminOptions::new().operation_timeout(Some(opts.timeout));
    let results = block_on(admin.create_topics(&new, &admin_opts), opts.timeout)
        .ok_or_else(|| {
            Error::usage(format!(
                "creating target topics timed out after {:?}",
                opts.timeout
            ))
        })?
        .map_err(|e| Error::usage(format!("cannot create target topics: {e}")))?;
    for r in results {
        if let Err((topic, code)) = r {
            if code != RDKafkaErrorCode::TopicAlreadyExists {
                return Err(Error::usage(format!(
                    "cannot create target topic '{topic}': {code}"
                )));
            }
        }
    }
    // Wait until metadata shows every new topic with all its partitions.
    let deadline = Instant::now() + opts.timeout;
    loop {
        let ready = topic_partitions(target, opts.timeout)
            .map(|t| {
                missing
                    .iter()
                    .all(|r| t.get(&r.target).is_some_and(|&n| n >= r.partitions))
            })
            .unwrap_or(false);
        if ready {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(Error::usage(
                "created target topics did not show up in the target's metadata in time",
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs an admin future to completion on a private runtime, bounded by `timeout`.
fn block_on<F: std::future::Future>(fut: F, timeout: Duration) -> Option<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .ok()?;
    rt.block_on(async { tokio::time::timeout(timeout, fut).await.ok() })
}

/// librdkafka's cached watermarks for a partition, taken from the last Fetch response
/// (not ListOffsets). `None` until a fetch answered.
fn cached_watermarks(consumer: &Source, topic: &str, partition: i32) -> Option<(i64, i64)> {
    let topic = CString::new(topic).ok()?;
    let (mut low, mut high) = (-1i64, -1i64);
    // SAFETY: the client pointer is valid for the consumer's lifetime; the call only reads
    // librdkafka's partition state and writes the two integers.
    let err = unsafe {
        rdkafka_sys::rd_kafka_get_watermark_offsets(
            consumer.client().native_ptr(),
            topic.as_ptr(),
            partition,
            &mut low,
            &mut high,
        )
    };
    (err == rdkafka_sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR && high >= 0)
        .then_some((low.max(0), high))
}
