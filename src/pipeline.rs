//! The consume → produce → verify → commit loop, in one place.
//!
//! One blocking thread drives both clients: it polls the source consumer, hands each record
//! to the target producer with its source offset as the delivery opaque, and serves the
//! producer's delivery reports, which feed a [`PartitionTracker`] per source partition.
//! Rebalance callbacks run on this same thread (inside `consumer.poll`), so a revoke can
//! flush, verify and commit without any cross-thread rendezvous.
//!
//! `exactly-once` has its own loop (transactions) in [`crate::transactional`]; the pieces
//! both loops need (reading to the end, classifying consumer errors, copying a record, the
//! summary) live here.

use std::collections::{BTreeMap, HashMap};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, KafkaResult, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::types::RDKafkaRespErr;
use rdkafka::util::IntoOpaque;
use rdkafka::{Offset, TopicPartitionList};

use crate::cli::{GapPolicy, Guarantee, StartPosition};
use crate::config::RunOptions;
use crate::error::{Error, Result};
use crate::kafka;
use crate::offsets::{NextOffset, PartitionTracker};
use crate::topics::{self, Route};

// Source offsets travel as the delivery opaque (`usize`).
const _: () = assert!(usize::BITS == 64, "kreplicate needs a 64-bit target");

/// Live counters, readable from other threads (progress display, the demo).
#[derive(Debug)]
pub struct Progress {
    /// Records acknowledged by the target.
    pub records: AtomicU64,
    /// Key + value bytes acknowledged by the target.
    pub bytes: AtomicU64,
    /// Source partitions assigned to this process.
    pub assigned: AtomicU64,
    /// Of those, partitions with a committed position.
    pub committed: AtomicU64,
    /// Records between the read positions and the partition ends; -1 until known.
    pub lag: AtomicI64,
    /// What the run waits for before it can copy (e.g. a group's assignment), if anything.
    pub waiting: Mutex<Option<String>>,
}

impl Progress {
    pub fn set_waiting(&self, what: Option<String>) {
        *self.waiting.lock().unwrap_or_else(|e| e.into_inner()) = what;
    }

    pub fn waiting(&self) -> Option<String> {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            records: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            assigned: AtomicU64::new(0),
            committed: AtomicU64::new(0),
            lag: AtomicI64::new(-1),
            waiting: Mutex::new(None),
        }
    }
}

/// What a run did, for the human line on stderr and the `--json` object.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    pub guarantee: &'static str,
    /// Records acknowledged by the target in this run (committed, under exactly-once).
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

    pub(crate) fn new(
        opts: &RunOptions,
        started: Instant,
        stopped: bool,
        failure: Option<String>,
        progress: &Progress,
        positions: BTreeMap<(String, i32), Option<i64>>,
    ) -> Self {
        let status = match (&failure, stopped) {
            (Some(_), _) => "failed",
            (None, true) => "stopped",
            (None, false) => "ok",
        };
        Summary {
            guarantee: opts.guarantee.as_str(),
            records: progress.records.load(Ordering::Relaxed),
            bytes: progress.bytes.load(Ordering::Relaxed),
            seconds: started.elapsed().as_secs_f64(),
            status,
            error: failure,
            partitions: positions
                .into_iter()
                .map(|((topic, partition), committed)| PartitionSummary {
                    target_topic: opts.target_topic(&topic),
                    topic,
                    partition,
                    committed,
                })
                .collect(),
        }
    }
}

/// A run that passed every check and is ready to copy.
pub struct Replicator(Engine);

enum Engine {
    Acked(Acked),
    Transactional(crate::transactional::Exactly),
}

impl Replicator {
    /// Validates properties, checks both clusters and the topics (creating missing target
    /// topics when asked) and builds the clients. Any error is a usage error: nothing was
    /// consumed, produced or committed.
    pub fn prepare(opts: &RunOptions, progress: Arc<Progress>) -> Result<Self> {
        let consumer_cfg = kafka::consumer_config(opts)?;
        let producer_cfg = kafka::producer_config(opts)?;
        let routes = topics::check(opts)?;
        let engine = match opts.guarantee {
            Guarantee::ExactlyOnce => Engine::Transactional(crate::transactional::Exactly::new(
                opts,
                routes,
                progress,
                consumer_cfg,
                producer_cfg,
            )?),
            _ => Engine::Acked(Acked::new(
                opts,
                routes,
                progress,
                consumer_cfg,
                producer_cfg,
            )?),
        };
        Ok(Replicator(engine))
    }

    /// Copies until `stop` is set, a failure happens, or (with `--until-caught-up`) every
    /// assigned partition is caught up; then flushes, verifies and commits.
    pub fn run(self, stop: &AtomicBool) -> Summary {
        match self.0 {
            Engine::Acked(e) => e.run(stop),
            Engine::Transactional(e) => e.run(stop),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Pieces shared by both loops
// ---------------------------------------------------------------------------------------

/// Wait step for delivery reports and for leaving the group. rust-rdkafka's
/// `BaseProducer::poll(t)` keeps polling until `t` has passed even after reports arrived
/// (spinning through its last millisecond), and its `flush` and the consumer's drop wait in
/// 100 ms steps: about 0.2 s lost at the end of every run, and a busy thread whenever the
/// producer queue is full. Sleeping a step, then serving what arrived, does neither.
const STEP: Duration = Duration::from_millis(1);

/// Waits one step for delivery reports, then serves every one that arrived (`poll` with a
/// zero timeout serves a single batch of reports).
pub(crate) fn await_reports<C: ProducerContext>(producer: &BaseProducer<C>) {
    std::thread::sleep(STEP);
    loop {
        let before = producer.in_flight_count();
        producer.poll(Duration::ZERO);
        if producer.in_flight_count() >= before {
            return;
        }
    }
}

/// Waits until every record sent was acknowledged (or failed) and its report served.
pub(crate) fn flush<C: ProducerContext>(
    producer: &BaseProducer<C>,
    timeout: Duration,
) -> KafkaResult<()> {
    let deadline = Instant::now() + timeout;
    loop {
        // A non-blocking flush also sends lingering batches at once.
        match producer.flush(Duration::ZERO) {
            Err(KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut))
                if Instant::now() < deadline =>
            {
                await_reports(producer)
            }
            done => return done,
        }
    }
}

/// Leaves the group (serving the final revoke) before the consumer is dropped.
pub(crate) fn close<C: ConsumerContext>(consumer: &BaseConsumer<C>, timeout: Duration) {
    if consumer.close_queue().is_err() {
        return;
    }
    let deadline = Instant::now() + timeout;
    while !consumer.closed() && Instant::now() < deadline {
        // Records still prefetched are not ours to copy any more.
        let _ = consumer.poll(Duration::ZERO);
        std::thread::sleep(STEP);
    }
}

/// Assigns source partitions, reading each from scratch: librdkafka keeps an application
/// pause across assignments, so a partition [`Ends::check`] paused at its end would never be
/// fetched again after a lost assignment or an aborted transaction moved it back.
pub(crate) fn assign<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    tpl: &TopicPartitionList,
) -> KafkaResult<()> {
    consumer.assign(tpl)?;
    consumer.resume(tpl)
}

/// Connects the producer and caches the target topics' metadata before the first record.
/// Left to the first send, librdkafka 2.12 sent its first metadata request to the bootstrap
/// connection it was retiring and produced nothing for ~0.5 s while the queue filled.
pub(crate) fn warm_up<C: ProducerContext>(
    producer: &BaseProducer<C>,
    routes: &[Route],
    timeout: Duration,
) -> Result<()> {
    let only = match routes {
        [one] => Some(one.target.as_str()),
        _ => None,
    };
    producer
        .client()
        .fetch_metadata(only, timeout)
        .map(drop)
        .map_err(|e| Error::usage(format!("cannot reach the target cluster: {e}")))
}

/// What one consumer poll means for a loop.
pub(crate) enum Polled<'a> {
    Record(BorrowedMessage<'a>),
    /// Nothing new, or a partition reached its end.
    Idle,
    /// A committed position lies outside the source log.
    Gap,
    /// The run cannot go on.
    Fatal(String),
    /// librdkafka retries these (a broker restarting, a network blip).
    Transient(KafkaError),
}

pub(crate) fn classify<'a>(
    polled: Option<KafkaResult<BorrowedMessage<'a>>>,
    source: &str,
) -> Polled<'a> {
    use RDKafkaErrorCode as C;
    match polled {
        Some(Ok(m)) => Polled::Record(m),
        None | Some(Err(KafkaError::PartitionEOF(_))) => Polled::Idle,
        Some(Err(KafkaError::MessageConsumption(C::OffsetOutOfRange | C::AutoOffsetReset))) => {
            Polled::Gap
        }
        Some(Err(KafkaError::MessageConsumption(
            code @ (C::UnknownTopicOrPartition
            | C::UnknownTopic
            | C::TopicAuthorizationFailed
            | C::GroupAuthorizationFailed),
        ))) => Polled::Fatal(format!("source cluster '{source}': {code}")),
        Some(Err(KafkaError::MessageConsumptionFatal(code))) => Polled::Fatal(format!(
            "source cluster '{source}': fatal consumer error: {code}"
        )),
        Some(Err(e)) => Polled::Transient(e),
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

/// The target record for a source record: same partition, key, value (null or not),
/// headers and timestamp.
pub(crate) fn copy_record<'a, D: IntoOpaque>(
    msg: &'a BorrowedMessage<'_>,
    target: &'a str,
    headers: Option<OwnedHeaders>,
    opaque: D,
) -> BaseRecord<'a, [u8], [u8], D> {
    let mut record = BaseRecord::with_opaque_to(target, opaque).partition(msg.partition());
    if let Some(k) = msg.key() {
        record = record.key(k);
    }
    if let Some(v) = msg.payload() {
        record = record.payload(v);
    }
    if let Some(ts) = msg.timestamp().to_millis() {
        record = record.timestamp(ts);
    }
    if let Some(h) = headers {
        record = record.headers(h);
    }
    record
}

/// Whether a partition has been read to its end.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum EndCheck {
    Done,
    NotYet,
    /// The start lies outside the log and the policy is to fail.
    Gap,
    /// The start lies outside the log: move there and keep reading.
    Reset(Offset),
}

/// `position` is the consumer's (Invalid until something was read), `start` where reading
/// began, `low..high` the log as the last fetch saw it. A partition is done when the position
/// reaches the high watermark of a fetch made after the run started: fetch high watermarks
/// are right on every broker we know, unlike ListOffsets on tansu.
pub(crate) fn end_check(
    position: Offset,
    start: Offset,
    low: i64,
    high: i64,
    on_gap: GapPolicy,
) -> EndCheck {
    let pos = match (position, start) {
        (Offset::Offset(n), _) | (_, Offset::Offset(n)) => n,
        (_, Offset::Beginning) => low,
        _ => high,
    };
    // Nothing read yet and the start lies outside the log: a source gap. Not every broker
    // answers such a fetch with an error (tansu returns nothing), so it is caught here too.
    if position == Offset::Invalid && (pos > high || pos < low) {
        return match on_gap {
            GapPolicy::Fail => EndCheck::Gap,
            GapPolicy::Earliest => EndCheck::Reset(Offset::Beginning),
            GapPolicy::Latest => EndCheck::Reset(Offset::End),
        };
    }
    if pos >= high {
        EndCheck::Done
    } else {
        EndCheck::NotYet
    }
}

/// Per source partition: where reading started, and whether it reached the end.
#[derive(Debug, Default)]
pub(crate) struct Ends {
    parts: BTreeMap<(String, i32), (Offset, bool)>,
}

impl Ends {
    pub(crate) fn insert(&mut self, topic: &str, partition: i32, start: Offset) {
        self.parts
            .insert((topic.to_string(), partition), (start, false));
    }

    pub(crate) fn remove(&mut self, topic: &str, partition: i32) {
        self.parts.remove(&(topic.to_string(), partition));
    }

    /// Where reading started, for partitions that started at a known offset.
    pub(crate) fn starts(&self) -> Vec<(String, i32, i64)> {
        self.parts
            .iter()
            .filter_map(|((t, p), (start, _))| match start {
                Offset::Offset(n) => Some((t.clone(), *p, *n)),
                _ => None,
            })
            .collect()
    }

    /// Checks every partition; pauses those that are done (the run copies what existed when
    /// it started) and moves those past a gap the user chose to skip. `Ok(true)` when all are
    /// done, `Err` with a message on a source gap.
    pub(crate) fn check<C: ConsumerContext>(
        &mut self,
        consumer: &BaseConsumer<C>,
        opts: &RunOptions,
    ) -> std::result::Result<bool, String> {
        let Ok(positions) = consumer.position() else {
            return Ok(false);
        };
        let mut all = true;
        let mut newly = TopicPartitionList::new();
        for e in positions.elements() {
            let Some((start, done)) = self.parts.get_mut(&(e.topic().to_string(), e.partition()))
            else {
                continue;
            };
            if *done {
                continue;
            }
            let Some((low, high)) = cached_watermarks(consumer, e.topic(), e.partition()) else {
                all = false;
                continue;
            };
            match end_check(e.offset(), *start, low, high, opts.on_gap) {
                EndCheck::Done => {
                    *done = true;
                    let _ = newly.add_partition(e.topic(), e.partition());
                }
                EndCheck::NotYet => all = false,
                EndCheck::Gap => return Err(gap_message(consumer, self.starts(), opts)),
                EndCheck::Reset(to) => {
                    all = false;
                    *start = to;
                    if let Err(err) = consumer.seek(e.topic(), e.partition(), to, opts.timeout) {
                        return Err(format!(
                            "cannot skip the gap in {}[{}]: {err}",
                            e.topic(),
                            e.partition()
                        ));
                    }
                }
            }
        }
        if newly.count() > 0 {
            let _ = consumer.pause(&newly);
        }
        Ok(all)
    }
}

/// Records left to read in the assigned partitions, from the last fetch's high watermarks.
pub(crate) fn lag<C: ConsumerContext>(consumer: &BaseConsumer<C>) -> Option<i64> {
    let positions = consumer.position().ok()?;
    let (mut lag, mut known) = (0, false);
    for e in positions.elements() {
        let marks = cached_watermarks(consumer, e.topic(), e.partition());
        log::debug!(
            "{}[{}]: position {:?}, fetch watermarks {marks:?}",
            e.topic(),
            e.partition(),
            e.offset()
        );
        if let (Offset::Offset(pos), Some((_, high))) = (e.offset(), marks) {
            lag += (high - pos).max(0);
            known = true;
        }
    }
    known.then_some(lag)
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

/// librdkafka's cached watermarks for a partition, taken from the last Fetch response
/// (not ListOffsets). `None` until a fetch answered.
pub(crate) fn cached_watermarks<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    topic: &str,
    partition: i32,
) -> Option<(i64, i64)> {
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

// ---------------------------------------------------------------------------------------
// `none` and `at-least-once`
// ---------------------------------------------------------------------------------------

/// FNV-1a for the per-record topic lookups: topic names are short and not chosen by an
/// attacker, and SipHash cost more per record than the rest of the bookkeeping. Also fixed
/// across versions and platforms, which static shards rely on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

type TopicMap<V> = HashMap<String, V, std::hash::BuildHasherDefault<Fnv>>;

/// Everything the loop, the delivery callback and the rebalance callback share.
#[derive(Debug, Default)]
struct State {
    /// Keyed by target topic (the delivery report names it), then partition.
    parts: TopicMap<BTreeMap<i32, PartitionTracker>>,
    ends: Ends,
    /// Committed positions of partitions this process no longer owns, for the summary.
    released: BTreeMap<(String, i32), i64>,
    /// The first failure that ends the run.
    failure: Option<String>,
    assigned_once: bool,
    /// Since when the run has waited for the group to assign partitions (at start and after
    /// a revoke); `None` while it holds an assignment.
    waiting_since: Option<Instant>,
}

impl State {
    fn fail(&mut self, msg: String) {
        if self.failure.is_none() {
            self.failure = Some(msg);
        }
    }

    /// Publishes the assignment and commit counts for the progress display.
    fn publish(&self, progress: &Progress) {
        let (mut assigned, mut committed) = (0, 0);
        for t in self.parts.values().flat_map(BTreeMap::values) {
            assigned += 1;
            committed += u64::from(t.committed().is_some());
        }
        progress.assigned.store(assigned, Ordering::Relaxed);
        progress.committed.store(committed, Ordering::Relaxed);
    }
}

struct Shared {
    state: Mutex<State>,
    progress: Arc<Progress>,
    /// Source topic → target topic.
    target_of: TopicMap<String>,
    /// Target topic → source topic.
    source_of: TopicMap<String>,
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
        let Some(tracker) = st.parts.get_mut(topic).and_then(|p| p.get_mut(&partition)) else {
            // Revoked although this record was in flight (the flush failed, so the run is
            // ending): the last commit never covered it.
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
                tracker.acked(offset)
            }
            Some(e) => tracker.failed(offset, e.to_string()),
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
        // Partitions that start at `--start latest`, resolved to an offset: committed below, so
        // that the next run starts there too instead of at a later "latest" (issue 13).
        let mut decided = TopicPartitionList::new();
        for elem in committed.elements() {
            if elem.offset() == Offset::Invalid && self.start == StartPosition::Latest {
                let (topic, partition) = (elem.topic(), elem.partition());
                match consumer.fetch_watermarks(topic, partition, self.timeout) {
                    Ok((_, high)) => {
                        let _ =
                            decided.add_partition_offset(topic, partition, Offset::Offset(high));
                    }
                    Err(e) => {
                        self.shared.lock().fail(format!(
                            "cannot find the end of {topic}[{partition}] for --start latest: {e}"
                        ));
                        let _ = consumer.assign(tpl);
                        return;
                    }
                }
            }
        }
        let mut st = self.shared.lock();
        st.assigned_once = true;
        st.waiting_since = None;
        self.shared.progress.set_waiting(None);
        for elem in committed.elements() {
            let (topic, partition) = (elem.topic(), elem.partition());
            let decided_at = decided.find_partition(topic, partition).map(|e| e.offset());
            let start = match (elem.offset(), decided_at) {
                (Offset::Offset(n), _) => Offset::Offset(n),
                (_, Some(at)) => at,
                _ => match self.start {
                    StartPosition::Earliest => Offset::Beginning,
                    StartPosition::Latest => Offset::End,
                },
            };
            if assignment
                .add_partition_offset(topic, partition, start)
                .is_err()
            {
                st.fail(format!("cannot assign {topic}[{partition}]"));
            }
            let Some(target) = self.shared.target_of.get(topic) else {
                continue;
            };
            st.parts
                .entry(target.clone())
                .or_default()
                .insert(partition, PartitionTracker::new());
            st.ends.insert(topic, partition, start);
        }
        st.publish(&self.shared.progress);
        log::info!("assigned {} source partitions", assignment.count());
        drop(st);
        drop(committed);
        if let Err(e) = assign(consumer, &assignment) {
            self.shared
                .lock()
                .fail(format!("cannot assign source partitions: {e}"));
            return;
        }
        // Nothing before these positions is to be copied, under any guarantee: committing
        // them moves no record past the contract, and makes the decision last.
        if decided.count() > 0 {
            match consumer.commit(&decided, CommitMode::Sync) {
                Ok(()) => mark_committed(&self.shared, &decided),
                Err(e) => self.shared.lock().fail(format!(
                    "cannot commit the --start latest positions to the source group: {e}"
                )),
            }
        }
    }

    fn revoke(&self, consumer: &Source, tpl: &TopicPartitionList) {
        let lost = consumer.assignment_lost();
        log::info!(
            "{} source partitions revoked{}",
            tpl.count(),
            if lost { " (assignment lost)" } else { "" }
        );
        let healthy = self.shared.lock().failure.is_none();
        // Flush and verify before giving the partitions to another member, lost or not and
        // under any guarantee: a delivery report served after its tracker is gone would
        // reach the tracker of a later assignment of the same partition.
        if healthy {
            if let Err(e) = flush(&self.producer, self.flush_timeout) {
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
            // A failed commit here only means the next owner copies some records again.
            if list.count() > 0 && consumer.commit(&list, CommitMode::Sync).is_ok() {
                mark_committed(&self.shared, &list);
            }
        }
        let mut st = self.shared.lock();
        // Until the next assignment arrives (eager rebalance, or a rejoin after a lost
        // assignment) nothing is assigned: --until-caught-up must not read that as "every
        // assigned partition done".
        st.assigned_once = false;
        st.waiting_since = Some(Instant::now());
        for (source, partition) in revoked {
            st.ends.remove(&source, partition);
            let Some(target) = self.shared.target_of.get(&source) else {
                continue;
            };
            if let Some(t) = st.parts.get_mut(target).and_then(|p| p.remove(&partition)) {
                if let (false, Some(c)) = (lost, t.committed()) {
                    st.released.insert((source, partition), c.get());
                }
            }
        }
        st.publish(&self.shared.progress);
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
        for (&partition, t) in parts {
            if only.is_some_and(|o| !o.iter().any(|(s, p)| s == source && *p == partition)) {
                continue;
            }
            let pos = if all { t.verified() } else { t.to_commit() };
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
        if let Some(t) = st
            .parts
            .get_mut(target)
            .and_then(|p| p.get_mut(&e.partition()))
        {
            t.mark_committed(NextOffset::at(n));
        }
    }
    st.publish(&shared.progress);
}

/// The `none` and `at-least-once` engine.
struct Acked {
    opts: RunOptions,
    routes: Vec<Route>,
    /// `--shard`: these source partitions, assigned directly instead of through the group.
    shard: Option<Vec<(String, i32)>>,
    shared: Arc<Shared>,
    producer: Arc<Target>,
    consumer: Source,
}

impl Acked {
    fn new(
        opts: &RunOptions,
        routes: Vec<Route>,
        progress: Arc<Progress>,
        consumer_cfg: rdkafka::ClientConfig,
        producer_cfg: rdkafka::ClientConfig,
    ) -> Result<Self> {
        let shard = match opts.shard {
            Some(s) => Some(
                s.partitions(&routes)?
                    .into_iter()
                    .map(|(r, p)| (r.source.clone(), p))
                    .collect(),
            ),
            None => None,
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            progress,
            target_of: routes
                .iter()
                .map(|r| (r.source.clone(), r.target.clone()))
                .collect(),
            source_of: routes
                .iter()
                .map(|r| (r.target.clone(), r.source.clone()))
                .collect(),
        });
        let producer: Arc<Target> = Arc::new(
            producer_cfg
                .create_with_context(Deliveries {
                    shared: shared.clone(),
                })
                .map_err(|e| kafka::creation_error("target", e))?,
        );
        warm_up(&producer, &routes, opts.timeout)?;
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
        Ok(Acked {
            opts: opts.clone(),
            routes,
            shard,
            shared,
            producer,
            consumer,
        })
    }

    fn run(self, stop: &AtomicBool) -> Summary {
        let started = Instant::now();
        if let Some(owned) = &self.shard {
            // A static shard: no group membership, so no join to wait for and no
            // rebalances; positions are still read from and committed to the group.
            let mut tpl = TopicPartitionList::new();
            for (topic, partition) in owned {
                tpl.add_partition(topic, *partition);
            }
            self.consumer.context().assign(&self.consumer, &tpl);
            self.copy(stop);
        } else {
            let topics: Vec<&str> = self.routes.iter().map(|r| r.source.as_str()).collect();
            self.shared.lock().waiting_since = Some(Instant::now());
            if let Err(e) = self.consumer.subscribe(&topics) {
                self.shared
                    .lock()
                    .fail(format!("cannot subscribe to the source topics: {e}"));
            } else {
                self.copy(stop);
            }
        }
        let stopped = stop.load(Ordering::SeqCst);
        self.finish();
        let st = self.shared.lock();
        let mut positions: BTreeMap<(String, i32), Option<i64>> = st
            .released
            .iter()
            .map(|(k, v)| (k.clone(), Some(*v)))
            .collect();
        // A partition with nothing new to commit still holds the group's position read at
        // assignment (under `none`, auto-commit may have moved it since).
        let held: HashMap<(String, i32), i64> = match self.opts.guarantee {
            Guarantee::None => HashMap::new(),
            _ => st
                .ends
                .starts()
                .into_iter()
                .map(|(t, p, n)| ((t, p), n))
                .collect(),
        };
        for (target, parts) in &st.parts {
            let source = self
                .shared
                .source_of
                .get(target)
                .cloned()
                .unwrap_or_default();
            for (&p, t) in parts {
                let key = (source.clone(), p);
                let committed = t
                    .committed()
                    .map(NextOffset::get)
                    .or_else(|| held.get(&key).copied());
                positions.insert(key, committed);
            }
        }
        let summary = Summary::new(
            &self.opts,
            started,
            stopped,
            st.failure.clone(),
            &self.shared.progress,
            positions,
        );
        drop(st);
        // After the summary: leaving the group revokes (and forgets) the partitions.
        close(&self.consumer, self.opts.timeout);
        summary
    }

    fn copy(&self, stop: &AtomicBool) {
        let mut last_commit = Instant::now();
        let mut last_lag = Instant::now();
        let mut last_join_note = Instant::now();
        let mut warner = Warner::default();
        let mut since_poll = 0u32;
        while !stop.load(Ordering::Relaxed) {
            if self.shared.lock().failure.is_some() {
                return;
            }
            let polled = self.consumer.poll(Duration::from_millis(100));
            match classify(polled, &self.opts.from.name) {
                Polled::Record(msg) => {
                    self.forward(&msg);
                    since_poll += 1;
                    // Serve delivery reports and read the clock (commit interval, lag)
                    // every 256 records rather than per record.
                    if since_poll < 256 {
                        continue;
                    }
                    self.producer.poll(Duration::ZERO);
                    since_poll = 0;
                }
                Polled::Idle => {
                    self.producer.poll(Duration::ZERO);
                    if !self.joined(&mut last_join_note) {
                        return;
                    }
                    if self.opts.until_caught_up && self.caught_up() {
                        log::info!("caught up with every assigned partition");
                        return;
                    }
                }
                Polled::Gap => {
                    let starts = self.shared.lock().ends.starts();
                    let msg = gap_message(&self.consumer, starts, &self.opts);
                    self.shared.lock().fail(msg);
                    return;
                }
                Polled::Fatal(msg) => {
                    self.shared.lock().fail(msg);
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
                self.commit(CommitMode::Async);
                last_commit = Instant::now();
            }
            if last_lag.elapsed() >= Duration::from_secs(1) {
                if let Some(lag) = lag(&self.consumer) {
                    self.shared.progress.lag.store(lag, Ordering::Relaxed);
                }
                last_lag = Instant::now();
            }
        }
    }

    /// Registers one source record with its tracker and hands it to the producer.
    fn forward(&self, msg: &BorrowedMessage<'_>) {
        let Some(target) = self.shared.target_of.get(msg.topic()) else {
            return;
        };
        let (partition, offset) = (msg.partition(), msg.offset());
        {
            let mut st = self.shared.lock();
            let Some(t) = st.parts.get_mut(target).and_then(|p| p.get_mut(&partition)) else {
                // Fetched before a revoke took the partition away: not ours to copy.
                return;
            };
            if t.sent(offset).is_err() {
                st.fail(format!(
                    "internal error: {}[{partition}] offset {offset} read twice",
                    msg.topic()
                ));
                return;
            }
        }
        let headers = msg.headers().map(|h| h.detach());
        let mut record = copy_record(msg, target, headers, offset as usize);
        loop {
            match self.producer.send(record) {
                Ok(()) => return,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                    // Backpressure: the producer queue is full, wait for deliveries.
                    record = r;
                    await_reports(&self.producer);
                    if self.shared.lock().failure.is_some() {
                        return;
                    }
                }
                Err((e, _)) => {
                    let mut st = self.shared.lock();
                    if let Some(t) = st.parts.get_mut(target).and_then(|p| p.get_mut(&partition)) {
                        let _ = t.failed(offset, e.to_string());
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

    /// While the group has not assigned partitions: says so (progress display, and every 5 s at
    /// `-v`), and fails the run once `--join-timeout` passed. False when the run failed.
    fn joined(&self, last_note: &mut Instant) -> bool {
        let Some(since) = self.shared.lock().waiting_since else {
            return true;
        };
        let waited = since.elapsed();
        let group = &self.opts.group;
        if waited > self.opts.join_timeout {
            self.shared.lock().fail(format!(
                "consumer group '{group}' assigned no partitions within --join-timeout {:?}: its coordinator did not complete the join (a rebalance that does not end, or a stuck member); nothing was copied or committed meanwhile. Rerun, raise --join-timeout, or use --shard 1/1 to read without joining the group",
                self.opts.join_timeout
            ));
            return false;
        }
        self.shared
            .progress
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
                st.fail(msg);
                false
            }
        }
    }

    /// Flush, verify, commit.
    fn finish(&self) {
        log::info!("flushing, verifying and committing");
        // Serve reports already in, then wait (bounded) for the rest.
        self.producer.poll(Duration::ZERO);
        let flush_timeout = self.opts.delivery_timeout + Duration::from_secs(5);
        if let Err(e) = flush(&self.producer, flush_timeout) {
            let pending = self.producer.in_flight_count();
            self.shared.lock().fail(format!(
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
            let hint = match (e.rdkafka_error_code(), self.shard.is_some()) {
                (Some(C::UnknownMemberId | C::IllegalGeneration | C::RebalanceInProgress), false) => {
                    "; the group no longer counted this process as a member (its session expired or the group rebalanced), so the next run copies the records since the last commit again"
                }
                (Some(C::UnknownMemberId | C::IllegalGeneration), true) => {
                    "; a static shard commits without joining the group, which only works while the group has no members: give --shard runs a group of their own"
                }
                _ => "",
            };
            self.shared.lock().fail(format!(
                "commit to the source group '{}' failed: {e}{hint}",
                self.opts.group
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAIL: GapPolicy = GapPolicy::Fail;

    #[test]
    fn end_check_uses_the_position_when_something_was_read() {
        let pos = Offset::Offset(10);
        assert_eq!(
            end_check(pos, Offset::Beginning, 0, 10, FAIL),
            EndCheck::Done
        );
        assert_eq!(
            end_check(pos, Offset::Beginning, 0, 11, FAIL),
            EndCheck::NotYet
        );
        // Control records move the position past the last data record: still done.
        assert_eq!(
            end_check(Offset::Offset(12), Offset::Offset(3), 0, 12, FAIL),
            EndCheck::Done
        );
    }

    #[test]
    fn end_check_uses_the_start_when_nothing_was_read() {
        let none = Offset::Invalid;
        assert_eq!(
            end_check(none, Offset::Offset(5), 0, 5, FAIL),
            EndCheck::Done
        );
        assert_eq!(
            end_check(none, Offset::Offset(4), 0, 5, FAIL),
            EndCheck::NotYet
        );
        assert_eq!(
            end_check(none, Offset::Beginning, 3, 3, FAIL),
            EndCheck::Done,
            "empty log"
        );
        assert_eq!(
            end_check(none, Offset::Beginning, 0, 3, FAIL),
            EndCheck::NotYet
        );
        assert_eq!(end_check(none, Offset::End, 0, 3, FAIL), EndCheck::Done);
    }

    #[test]
    fn end_check_reports_gaps_by_policy() {
        let none = Offset::Invalid;
        // Committed 20 on a recreated topic that holds 3 records.
        assert_eq!(
            end_check(none, Offset::Offset(20), 0, 3, FAIL),
            EndCheck::Gap
        );
        // Committed 2 where retention removed everything below 5.
        assert_eq!(
            end_check(none, Offset::Offset(2), 5, 9, FAIL),
            EndCheck::Gap
        );
        assert_eq!(
            end_check(none, Offset::Offset(20), 0, 3, GapPolicy::Earliest),
            EndCheck::Reset(Offset::Beginning)
        );
        assert_eq!(
            end_check(none, Offset::Offset(20), 0, 3, GapPolicy::Latest),
            EndCheck::Reset(Offset::End)
        );
    }
}
