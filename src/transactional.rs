//! `exactly-once`: the target is its own checkpoint.
//!
//! Every copied record carries its origin in one header, `kreplicate.origin` =
//! `<source topic>/<partition>/<offset>`. Each target partition has one writer: a
//! transactional producer whose `transactional.id` belongs to a fixed set of source partitions
//! (a static shard `i/n`), so a restart fences its zombie. After `init_transactions` (which
//! closes any transaction the zombie left open), kreplicate reads the tail of each target
//! partition the way a `read_committed` reader sees it and resumes the source just after the
//! newest origin offset found there. Resume and readers see the same records on any broker,
//! so no record is skipped or shown twice. Positions are also committed to the source group
//! after each transaction, for lag monitoring only.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::hash::Hasher;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, DeliveryResult, Producer, ProducerContext, PurgeConfig};
use rdkafka::{Offset, TopicPartitionList};

use crate::cli::StartPosition;
use crate::config::RunOptions;
use crate::error::{Error, Result};
use crate::kafka;
use crate::offsets::NextOffset;
use crate::pipeline::{
    assign, await_reports, cached_watermarks, classify, close, copy_record, flush, gap_message,
    lag, warm_up, Ends, Fnv, Polled, Progress, Summary, Warner,
};
use crate::topics::Route;

/// The header that records where a copied record came from.
pub const ORIGIN_HEADER: &str = "kreplicate.origin";

/// A static shard: this process owns the source partitions whose shard number is `index`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: u32,
    pub count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 1, count: 1 }
    }
}

impl Shard {
    /// `i/n` with 1 ≤ i ≤ n.
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| "expected i/n, e.g. 1/3".to_string())?;
        let (index, count): (u32, u32) = (
            i.trim()
                .parse()
                .map_err(|_| "expected i/n, e.g. 1/3".to_string())?,
            n.trim()
                .parse()
                .map_err(|_| "expected i/n, e.g. 1/3".to_string())?,
        );
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard {index}/{count}: i must be between 1 and n"));
        }
        Ok(Shard { index, count })
    }

    /// Whether this shard owns a source partition. Stable when partitions are added: a
    /// partition's shard depends only on its topic name and number.
    pub fn owns(&self, topic: &str, partition: i32) -> bool {
        let mut h = Fnv::default();
        h.write(topic.as_bytes());
        let slot = h.finish().wrapping_add(partition as u64) % u64::from(self.count);
        slot == u64::from(self.index - 1)
    }

    /// The source partitions of `routes` this shard owns; a usage error when it owns none.
    pub fn partitions<'r>(&self, routes: &'r [Route]) -> Result<Vec<(&'r Route, i32)>> {
        let owned: Vec<(&Route, i32)> = routes
            .iter()
            .flat_map(|r| (0..r.partitions).map(move |p| (r, p)))
            .filter(|(r, p)| self.owns(&r.source, *p))
            .collect();
        if owned.is_empty() {
            let total: i32 = routes.iter().map(|r| r.partitions).sum();
            return Err(Error::usage(format!(
                "--shard {}/{} owns none of the {total} source partitions: use fewer shards",
                self.index, self.count
            )));
        }
        Ok(owned)
    }

    /// The producer identity of this shard's writer.
    pub fn transactional_id(&self, group: &str) -> String {
        format!("{group}.shard-{}-of-{}", self.index, self.count)
    }
}

/// `topic/partition/offset`.
pub fn origin(topic: &str, partition: i32, offset: i64) -> String {
    let mut s = String::new();
    write_origin(&mut s, topic, partition, offset);
    s
}

/// [`origin`] into a reused buffer.
fn write_origin(buf: &mut String, topic: &str, partition: i32, offset: i64) {
    buf.clear();
    let _ = write!(buf, "{topic}/{partition}/{offset}");
}

/// The origin of a copied record, if the header parses.
pub fn parse_origin(value: &[u8]) -> Option<(&str, i32, i64)> {
    let s = std::str::from_utf8(value).ok()?;
    let mut it = s.rsplitn(3, '/');
    let offset = it.next()?.parse().ok()?;
    let partition = it.next()?.parse().ok()?;
    Some((it.next()?, partition, offset))
}

/// Where to resume a source partition, given the origin headers of the target records read
/// (in any order; records without one, or from another source partition, are foreign and
/// skipped): just after the newest origin offset. `None` when no record came from it.
pub fn resume_position<'a>(
    origins: impl IntoIterator<Item = Option<&'a [u8]>>,
    topic: &str,
    partition: i32,
) -> Option<NextOffset> {
    origins
        .into_iter()
        .flatten()
        .filter_map(parse_origin)
        .filter(|&(t, p, _)| t == topic && p == partition)
        .map(|(_, _, offset)| offset)
        .max()
        .map(NextOffset::after)
}

/// Transactions aborted one after the other, with none committed between them, after which
/// the run fails with the last error instead of retrying again.
pub const MAX_ABORTS_IN_A_ROW: u32 = 5;

/// A source record the target refused.
#[derive(Clone, Debug)]
struct Refusal {
    /// Source topic (empty until known), target topic, partition, source offset.
    source: String,
    target: String,
    partition: i32,
    offset: i64,
    code: Option<RDKafkaErrorCode>,
    error: String,
}

impl Refusal {
    fn same_record_and_error(&self, other: &Refusal) -> bool {
        (self.target.as_str(), self.partition, self.offset, self.code)
            == (
                other.target.as_str(),
                other.partition,
                other.offset,
                other.code,
            )
    }
}

/// Refusals seen in this run. A record refused again with the same error after a rewind will
/// be refused for good (too large, against the target's policy, not authorised): retrying it
/// would abort and rewind forever.
#[derive(Debug, Default)]
struct Refusals(Vec<Refusal>);

impl Refusals {
    /// Remembers `r`; true when the same record was refused with the same error before.
    fn seen_again(&mut self, r: &Refusal) -> bool {
        if self.0.iter().any(|old| old.same_record_and_error(r)) {
            return true;
        }
        if self.0.len() >= 64 {
            self.0.remove(0);
        }
        self.0.push(r.clone());
        false
    }
}

/// Producer context: keeps the first failed delivery of the open transaction, which names the
/// record the target refused (the delivery opaque is its source offset).
#[derive(Default)]
pub struct Reports(Mutex<Option<Refusal>>);

impl Reports {
    fn take(&self) -> Option<Refusal> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl ClientContext for Reports {}

impl ProducerContext for Reports {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, source_offset: usize) {
        let Err((e, m)) = result else { return };
        let code = e.rdkafka_error_code();
        // Purged by an abort: a consequence, not a cause.
        if matches!(
            code,
            Some(RDKafkaErrorCode::PurgeQueue | RDKafkaErrorCode::PurgeInflight)
        ) {
            return;
        }
        let mut first = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            *first = Some(Refusal {
                source: String::new(),
                target: m.topic().to_string(),
                partition: m.partition(),
                offset: source_offset as i64,
                code,
                error: e.to_string(),
            });
        }
    }
}

type TxnProducer = BaseProducer<Reports>;

/// One owned source partition.
#[derive(Debug)]
struct Owned {
    target: String,
    /// Position covered by committed transactions.
    committed: Option<NextOffset>,
    /// Position after the last record sent in the open transaction.
    sent: Option<NextOffset>,
}

/// The open transaction.
#[derive(Debug, Default)]
struct Txn {
    open: bool,
    records: u64,
    bytes: u64,
    started: Option<Instant>,
}

pub struct Exactly {
    opts: RunOptions,
    progress: Arc<Progress>,
    consumer: BaseConsumer,
    producer: TxnProducer,
    parts: BTreeMap<(String, i32), Owned>,
    ends: Ends,
    txn: Txn,
    failure: Option<String>,
    refusals: Refusals,
    aborts_in_a_row: u32,
    transactional_id: String,
    scratch: Scratch,
}

/// Buffers reused for every record, so that copying one allocates nothing of ours.
#[derive(Default)]
struct Scratch {
    key: (String, i32),
    origin: String,
}

impl Exactly {
    pub fn new(
        opts: &RunOptions,
        routes: Vec<Route>,
        progress: Arc<Progress>,
        consumer_cfg: ClientConfig,
        producer_cfg: ClientConfig,
    ) -> Result<Self> {
        let shard = opts.shard.unwrap_or_default();
        let parts: BTreeMap<(String, i32), Owned> = shard
            .partitions(&routes)?
            .into_iter()
            .map(|(r, p)| {
                let owned = Owned {
                    target: r.target.clone(),
                    committed: None,
                    sent: None,
                };
                ((r.source.clone(), p), owned)
            })
            .collect();
        let consumer: BaseConsumer = consumer_cfg
            .create()
            .map_err(|e| kafka::creation_error("source", e))?;
        let producer: TxnProducer = producer_cfg
            .create_with_context(Reports::default())
            .map_err(|e| kafka::creation_error("target", e))?;
        warm_up(&producer, &routes, opts.timeout)?;
        progress
            .assigned
            .store(parts.len() as u64, Ordering::Relaxed);
        Ok(Exactly {
            opts: opts.clone(),
            progress,
            consumer,
            producer,
            parts,
            ends: Ends::default(),
            txn: Txn::default(),
            failure: None,
            refusals: Refusals::default(),
            aborts_in_a_row: 0,
            transactional_id: shard.transactional_id(&opts.group),
            scratch: Scratch::default(),
        })
    }

    pub fn run(mut self, stop: &AtomicBool) -> Summary {
        let started = Instant::now();
        if let Err(msg) = self.start() {
            self.failure = Some(msg);
        } else {
            self.copy(stop);
            // An aborted last transaction rewinds: a run that must catch up copies again.
            while self.failure.is_none()
                && self.txn.open
                && !self.commit_txn()
                && self.opts.until_caught_up
                && !stop.load(Ordering::SeqCst)
            {
                self.copy(stop);
            }
        }
        close(&self.consumer, self.opts.timeout);
        let positions = self
            .parts
            .iter()
            .map(|(k, o)| (k.clone(), o.committed.map(NextOffset::get)))
            .collect();
        Summary::new(
            &self.opts,
            started,
            stop.load(Ordering::SeqCst),
            self.failure.take(),
            &self.progress,
            positions,
        )
    }

    /// Fences any zombie, finds where the target stands, and assigns the source there.
    fn start(&mut self) -> std::result::Result<(), String> {
        self.producer
            .init_transactions(self.opts.timeout)
            .map_err(|e| {
                format!(
                    "cannot start transactions on the target as '{}': {e}",
                    self.transactional_id
                )
            })?;
        self.rewind()
    }

    /// Sets every owned partition's position from what the target holds and (re)assigns the
    /// source consumer there. Used at start and after an aborted transaction.
    fn rewind(&mut self) -> std::result::Result<(), String> {
        let found = self.scan_target()?;
        log::info!(
            "the target holds positions for {} of {} partitions",
            found.len(),
            self.parts.len()
        );
        let fallback = self.group_positions();
        let mut tpl = TopicPartitionList::new();
        // `--start latest` resolved to offsets and committed to the group, where the next run
        // finds them while the target holds nothing of ours (issue 13).
        let mut decided = TopicPartitionList::new();
        self.ends = Ends::default();
        for ((topic, partition), owned) in self.parts.iter_mut() {
            let key = (topic.clone(), *partition);
            let start = match (found.get(&key), fallback.get(&key)) {
                (Some(pos), _) => Offset::Offset(pos.get()),
                // Nothing of ours on the target yet: the group's position (committed only
                // after transactions) is a safe lower bound, then --start.
                (None, Some(&n)) => Offset::Offset(n),
                (None, None) => match self.opts.start {
                    StartPosition::Earliest => Offset::Beginning,
                    StartPosition::Latest => {
                        let (_, high) = self
                            .consumer
                            .fetch_watermarks(topic, *partition, self.opts.timeout)
                            .map_err(|e| {
                                format!(
                                    "cannot find the end of {topic}[{partition}] for --start latest: {e}"
                                )
                            })?;
                        let _ =
                            decided.add_partition_offset(topic, *partition, Offset::Offset(high));
                        Offset::Offset(high)
                    }
                },
            };
            owned.committed = found.get(&key).copied();
            owned.sent = None;
            tpl.add_partition_offset(topic, *partition, start)
                .map_err(|e| format!("cannot assign {topic}[{partition}]: {e}"))?;
            self.ends.insert(topic, *partition, start);
        }
        assign(&self.consumer, &tpl)
            .map_err(|e| format!("cannot assign source partitions: {e}"))?;
        if decided.count() > 0 {
            self.consumer
                .commit(&decided, CommitMode::Sync)
                .map_err(|e| {
                    format!("cannot commit the --start latest positions to the source group: {e}")
                })?;
        }
        Ok(())
    }

    /// The group's committed positions for the owned partitions (for lag monitoring; used
    /// only as a lower bound when the target holds nothing of ours).
    fn group_positions(&self) -> HashMap<(String, i32), i64> {
        let mut tpl = TopicPartitionList::new();
        for (t, p) in self.parts.keys() {
            tpl.add_partition(t, *p);
        }
        let Ok(got) = self.consumer.committed_offsets(tpl, self.opts.timeout) else {
            return HashMap::new();
        };
        let out = got
            .elements()
            .iter()
            .filter_map(|e| match e.offset() {
                Offset::Offset(n) => Some(((e.topic().to_string(), e.partition()), n)),
                _ => None,
            })
            .collect();
        drop(got);
        out
    }

    /// Reads the tail of every owned target partition as a read_committed reader sees it and
    /// returns the resume position per source partition found there. Widens the tail until it
    /// finds an origin or covers the whole partition.
    fn scan_target(&self) -> std::result::Result<HashMap<(String, i32), NextOffset>, String> {
        let mut found = HashMap::new();
        // One reader per target topic: partition-EOF events name only the partition.
        let mut by_target: BTreeMap<&str, Vec<(&str, i32)>> = BTreeMap::new();
        for ((source, p), o) in &self.parts {
            by_target
                .entry(o.target.as_str())
                .or_default()
                .push((source, *p));
        }
        for (target, sources) in by_target {
            let mut todo: Vec<(&str, i32)> = sources;
            let mut tail = 1000i64;
            while !todo.is_empty() {
                let read = self.read_tail(target, &todo, tail)?;
                let mut next = Vec::new();
                for (source, p) in todo {
                    let (origins, covered_all) = read
                        .get(&p)
                        .ok_or_else(|| format!("no tail read for {target}[{p}]"))?;
                    match resume_position(origins.iter().map(|v| v.as_deref()), source, p) {
                        Some(pos) => {
                            found.insert((source.to_string(), p), pos);
                        }
                        // A tail of 2^40 records covers any partition there is.
                        None if *covered_all || tail >= 1 << 40 => {}
                        None => next.push((source, p)),
                    }
                }
                todo = next;
                tail = tail.saturating_mul(8);
            }
        }
        Ok(found)
    }

    /// Origin header values of the last `tail` records of some partitions of one target topic,
    /// and whether that reached the start of the partition.
    #[allow(clippy::type_complexity)]
    fn read_tail(
        &self,
        target: &str,
        parts: &[(&str, i32)],
        tail: i64,
    ) -> std::result::Result<HashMap<i32, (Vec<Option<Vec<u8>>>, bool)>, String> {
        let mut cfg = kafka::admin_config(&self.opts.to);
        let reader: BaseConsumer = cfg
            .set("group.id", format!("{}.resume", self.transactional_id))
            .set("enable.partition.eof", "true")
            .set("enable.auto.commit", "false")
            .set("isolation.level", "read_committed")
            // Empty partitions answer only after this wait.
            .set("fetch.wait.max.ms", "10")
            .create()
            .map_err(|e| format!("target reader: {e}"))?;
        // Metadata first: left to assign(), librdkafka 2.12's first metadata request went to
        // the bootstrap connection it was retiring, and the tail read waited ~0.45 s.
        reader
            .fetch_metadata(Some(target), self.opts.timeout)
            .map_err(|e| format!("cannot read the target {target}: {e}"))?;
        let mut tpl = TopicPartitionList::new();
        for (_, p) in parts {
            tpl.add_partition_offset(target, *p, Offset::OffsetTail(tail))
                .map_err(|e| e.to_string())?;
        }
        reader
            .assign(&tpl)
            .map_err(|e| format!("cannot read the target {target}: {e}"))?;
        let mut out: HashMap<i32, (Vec<Option<Vec<u8>>>, bool)> = parts
            .iter()
            .map(|(_, p)| (*p, (Vec::new(), false)))
            .collect();
        let mut first: HashMap<i32, i64> = HashMap::new();
        let mut at_end: HashMap<i32, bool> = parts.iter().map(|(_, p)| (*p, false)).collect();
        let deadline = Instant::now() + self.opts.timeout;
        while at_end.values().any(|e| !e) {
            if Instant::now() > deadline {
                return Err(format!(
                    "reading the tail of target topic {target} took longer than {:?}",
                    self.opts.timeout
                ));
            }
            match reader.poll(Duration::from_millis(100)) {
                Some(Ok(m)) => {
                    first.entry(m.partition()).or_insert(m.offset());
                    let origin = m.headers().and_then(|h| {
                        h.iter()
                            .filter(|x| x.key == ORIGIN_HEADER)
                            .last()
                            .and_then(|x| x.value.map(<[u8]>::to_vec))
                    });
                    if let Some(e) = out.get_mut(&m.partition()) {
                        e.0.push(origin);
                    }
                }
                Some(Err(KafkaError::PartitionEOF(p))) => {
                    at_end.insert(p, true);
                }
                Some(Err(e)) => return Err(format!("reading target topic {target}: {e}")),
                None => {}
            }
        }
        for (p, (_, covered)) in out.iter_mut() {
            if let Some((low, high)) = cached_watermarks(&reader, target, *p) {
                // Covered when the window started at the log start (or the log is empty).
                *covered = first.get(p).map_or(high - tail <= low, |&f| f <= low);
            }
        }
        drop(tpl);
        close(&reader, self.opts.timeout);
        Ok(out)
    }

    fn copy(&mut self, stop: &AtomicBool) {
        let mut last_lag = Instant::now();
        let mut warner = Warner::default();
        let mut since_poll = 0u32;
        let max_time = self.opts.txn_max_time;
        while !stop.load(Ordering::Relaxed) && self.failure.is_none() {
            let polled = self.consumer.poll(Duration::from_millis(100));
            // Read the clock (transaction age, lag) every 256 records, not per record.
            let mut clock = true;
            match classify(polled, &self.opts.from.name) {
                Polled::Record(msg) => {
                    let sent = forward(
                        &self.producer,
                        &mut self.parts,
                        &mut self.txn,
                        &mut self.scratch,
                        &msg,
                    );
                    drop(msg);
                    if let Err((e, refused)) = sent {
                        self.abort_and_rewind(&e, refused.map(|r| *r));
                    }
                    since_poll += 1;
                    // Serve delivery reports regularly without a call per record.
                    clock = since_poll >= 256;
                    if clock {
                        self.producer.poll(Duration::ZERO);
                        since_poll = 0;
                    }
                }
                Polled::Idle => {
                    self.producer.poll(Duration::ZERO);
                    if self.opts.until_caught_up {
                        match self.ends.check(&self.consumer, &self.opts) {
                            Ok(true) => {
                                log::info!("caught up with every owned partition");
                                return;
                            }
                            Ok(false) => {}
                            Err(msg) => self.failure = Some(msg),
                        }
                    }
                }
                Polled::Gap => {
                    self.failure =
                        Some(gap_message(&self.consumer, self.ends.starts(), &self.opts));
                }
                Polled::Fatal(msg) => self.failure = Some(msg),
                Polled::Transient(e) => warner.warn(&self.opts.from.name, &e),
            }
            let full = self.txn.records >= self.opts.txn_max_records
                || self.txn.bytes >= self.opts.txn_max_bytes
                || (clock && self.txn.started.is_some_and(|t| t.elapsed() >= max_time));
            if self.txn.open && full && self.failure.is_none() {
                self.commit_txn();
            }
            if clock && last_lag.elapsed() >= Duration::from_secs(1) {
                if let Some(lag) = lag(&self.consumer) {
                    self.progress.lag.store(lag, Ordering::Relaxed);
                }
                last_lag = Instant::now();
            }
        }
    }

    /// Commits the open transaction; on success, also commits positions to the source group
    /// (for lag monitoring). Abortable errors abort and rewind; others end the run. True when
    /// the transaction was committed.
    fn commit_txn(&mut self) -> bool {
        let timeout = self.opts.delivery_timeout + Duration::from_secs(5);
        // commit_transaction flushes first, in 100 ms steps: flush in short steps here so
        // that it finds nothing left to wait for. Errors surface from the commit itself.
        let _ = flush(&self.producer, timeout);
        match self.producer.commit_transaction(timeout) {
            Ok(()) => {
                log::debug!("committed a transaction of {} records", self.txn.records);
                self.progress
                    .records
                    .fetch_add(self.txn.records, Ordering::Relaxed);
                self.progress
                    .bytes
                    .fetch_add(self.txn.bytes, Ordering::Relaxed);
                self.txn = Txn::default();
                self.aborts_in_a_row = 0;
                let mut tpl = TopicPartitionList::new();
                for ((t, p), o) in self.parts.iter_mut() {
                    if let Some(sent) = o.sent.take() {
                        o.committed = Some(sent);
                        let _ = tpl.add_partition_offset(t, *p, Offset::Offset(sent.get()));
                    }
                }
                let committed = self
                    .parts
                    .values()
                    .filter(|o| o.committed.is_some())
                    .count();
                self.progress
                    .committed
                    .store(committed as u64, Ordering::Relaxed);
                if tpl.count() > 0 {
                    // Lag monitoring only: a failed commit here loses nothing.
                    let _ = self.consumer.commit(&tpl, CommitMode::Async);
                }
                true
            }
            Err(KafkaError::Transaction(e)) if e.txn_requires_abort() => {
                self.abort_and_rewind(&KafkaError::Transaction(e), None);
                false
            }
            Err(e) => {
                // tansu answers a fenced producer's commit with a timeout, Kafka with a
                // fatal PRODUCER_FENCED.
                let fenced = matches!(&e, KafkaError::Transaction(t) if t.is_fatal() || matches!(
                    t.code(),
                    RDKafkaErrorCode::OperationTimedOut
                        | RDKafkaErrorCode::ProducerFenced
                        | RDKafkaErrorCode::Fenced
                        | RDKafkaErrorCode::InvalidProducerEpoch
                ));
                let hint = if fenced {
                    "; another instance with the same identity (from --group and --shard) may have taken over"
                } else {
                    ""
                };
                self.failure = Some(format!(
                    "exactly-once: committing a transaction on the target as '{}' failed: {e}{hint}; nothing of it is visible to read_committed readers",
                    self.transactional_id
                ));
                false
            }
        }
    }

    /// An abortable error: abort the open transaction and continue from what the target shows,
    /// unless the target refused the same record before (it will again), or too many
    /// transactions in a row were aborted. `refused` is the record whose send failed, if any.
    fn abort_and_rewind(&mut self, cause: &KafkaError, refused: Option<Refusal>) {
        let id = &self.transactional_id;
        if matches!(cause, KafkaError::Transaction(e) if e.is_fatal()) {
            self.failure = Some(format!(
                "exactly-once: fatal producer error as '{id}': {cause}; another instance with the same identity may have taken over"
            ));
            return;
        }
        crate::progress::say(&format!(
            "kreplicate: warning: aborting the open transaction after: {cause}; continuing from what the target holds"
        ));
        if self.txn.open {
            // abort_transaction waits until every outstanding record's report was served, and
            // serves none itself (reports are events here): drop what was not sent yet, serve
            // the reports of what was, then abort.
            self.producer.purge(PurgeConfig::default().queue());
            let _ = flush(&self.producer, self.opts.delivery_timeout);
            if let Err(e) = self.producer.abort_transaction(self.opts.timeout) {
                self.failure = Some(format!(
                    "exactly-once: aborting a transaction as '{id}' failed: {e}"
                ));
                return;
            }
        }
        self.txn = Txn::default();
        // Every report of the aborted transaction was served: the first failure is its cause.
        if let Some(mut r) = self.producer.context().take().or(refused) {
            if r.source.is_empty() {
                r.source = self
                    .parts
                    .iter()
                    .find(|((_, p), o)| *p == r.partition && o.target == r.target)
                    .map_or_else(|| r.target.clone(), |((t, _), _)| t.clone());
            }
            if self.refusals.seen_again(&r) {
                self.failure = Some(format!(
                    "exactly-once: the target refused {}[{}] offset {} (-> {}) again after a rewind: {}; it will refuse it every time (record too large for the target, against its policy, or not authorised), so nothing from it on in that partition was committed. Fix the target (e.g. its message.max.bytes) and rerun",
                    r.source, r.partition, r.offset, r.target, r.error
                ));
                return;
            }
        }
        self.aborts_in_a_row += 1;
        if self.aborts_in_a_row >= MAX_ABORTS_IN_A_ROW {
            self.failure = Some(format!(
                "exactly-once: {MAX_ABORTS_IN_A_ROW} transactions in a row were aborted as '{id}' without one committed; the last after: {cause}"
            ));
            return;
        }
        if let Err(msg) = self.rewind() {
            self.failure = Some(msg);
        }
    }
}

/// Sends one record inside the open transaction (opening one if needed), with its origin.
fn forward(
    producer: &TxnProducer,
    parts: &mut BTreeMap<(String, i32), Owned>,
    txn: &mut Txn,
    scratch: &mut Scratch,
    msg: &BorrowedMessage<'_>,
) -> std::result::Result<(), (KafkaError, Option<Box<Refusal>>)> {
    scratch.key.0.clear();
    scratch.key.0.push_str(msg.topic());
    scratch.key.1 = msg.partition();
    let Some(owned) = parts.get_mut(&scratch.key) else {
        return Ok(());
    };
    if !txn.open {
        producer.begin_transaction().map_err(|e| (e, None))?;
        *txn = Txn {
            open: true,
            started: Some(Instant::now()),
            ..Txn::default()
        };
    }
    write_origin(
        &mut scratch.origin,
        &scratch.key.0,
        scratch.key.1,
        msg.offset(),
    );
    let headers = msg
        .headers()
        .map_or_else(|| OwnedHeaders::new_with_capacity(1), |h| h.detach())
        .insert(Header {
            key: ORIGIN_HEADER,
            value: Some(scratch.origin.as_bytes()),
        });
    let mut record = copy_record(msg, &owned.target, Some(headers), msg.offset() as usize);
    loop {
        match producer.send(record) {
            Ok(()) => break,
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                record = r;
                await_reports(producer);
            }
            Err((e, _)) => {
                let refused = Refusal {
                    source: scratch.key.0.clone(),
                    target: owned.target.clone(),
                    partition: msg.partition(),
                    offset: msg.offset(),
                    code: e.rdkafka_error_code(),
                    error: e.to_string(),
                };
                return Err((e, Some(Box::new(refused))));
            }
        }
    }
    owned.sent = Some(NextOffset::after(msg.offset()));
    txn.records += 1;
    txn.bytes += (msg.payload_len() + msg.key().map_or(0, <[u8]>::len)) as u64;
    Ok(())
}

/// The producer settings exactly-once depends on (applied after the user's).
pub(crate) fn configure(opts: &RunOptions, producer: &mut ClientConfig) -> Result<()> {
    let shard = opts.shard.unwrap_or_default();
    producer.set("transactional.id", shard.transactional_id(&opts.group));
    // Longer than any transaction: its time bound plus the commit's own wait.
    let timeout = opts.txn_max_time + opts.delivery_timeout + Duration::from_secs(30);
    if timeout > Duration::from_secs(900) {
        return Err(Error::usage(
            "--txn-max-time plus --delivery-timeout must stay under 870s (the broker's transaction.max.timeout.ms)",
        ));
    }
    producer.set("transaction.timeout.ms", timeout.as_millis().to_string());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(s: &str) -> Option<&[u8]> {
        Some(s.as_bytes())
    }

    #[test]
    fn origins_round_trip() {
        let v = origin("orders.eu/v2", 7, 12345);
        assert_eq!(parse_origin(v.as_bytes()), Some(("orders.eu/v2", 7, 12345)));
        assert_eq!(parse_origin(b"garbage"), None);
        assert_eq!(parse_origin(b"t/x/1"), None);
    }

    #[test]
    fn resume_on_an_empty_target_is_unknown() {
        assert_eq!(resume_position(Vec::<Option<&[u8]>>::new(), "t", 0), None);
    }

    #[test]
    fn resume_after_the_newest_origin() {
        let recs = vec![o("t/0/10"), o("t/0/11"), o("t/0/12")];
        assert_eq!(resume_position(recs, "t", 0), Some(NextOffset::at(13)));
    }

    #[test]
    fn foreign_records_are_skipped() {
        // Records without an origin, from another partition or topic, or unparsable.
        let recs = vec![
            o("t/0/4"),
            None,
            o("t/1/99"),
            o("u/0/50"),
            o("nonsense"),
            o("t/0/5"),
            None,
        ];
        assert_eq!(resume_position(recs, "t", 0), Some(NextOffset::at(6)));
        assert_eq!(resume_position(vec![None, o("u/0/1")], "t", 0), None);
    }

    #[test]
    fn partial_batches_and_sparse_offsets() {
        // A tail window that starts mid-batch, and source offsets with holes (compaction,
        // transaction markers): the newest origin decides.
        let recs = vec![o("t/2/1001"), o("t/2/1003"), o("t/2/1010")];
        assert_eq!(resume_position(recs, "t", 2), Some(NextOffset::at(1011)));
    }

    fn refusal(offset: i64, code: RDKafkaErrorCode) -> Refusal {
        Refusal {
            source: "t".into(),
            target: "b.t".into(),
            partition: 0,
            offset,
            code: Some(code),
            error: code.to_string(),
        }
    }

    #[test]
    fn issue_13_a_record_refused_twice_with_the_same_error_is_refused_for_good() {
        let mut seen = Refusals::default();
        let big = RDKafkaErrorCode::MessageSizeTooLarge;
        assert!(!seen.seen_again(&refusal(5, big)));
        // Another record, or the same record with another error: not yet.
        assert!(!seen.seen_again(&refusal(6, big)));
        assert!(!seen.seen_again(&refusal(5, RDKafkaErrorCode::PolicyViolation)));
        assert!(seen.seen_again(&refusal(5, big)));
        // Bounded memory: the oldest refusals are forgotten first.
        for o in 100..200 {
            seen.seen_again(&refusal(o, big));
        }
        assert!(!seen.seen_again(&refusal(5, big)));
        assert!(seen.seen_again(&refusal(199, big)));
    }

    #[test]
    fn shards_partition_the_partitions() {
        let shards: Vec<Shard> = (1..=3).map(|i| Shard { index: i, count: 3 }).collect();
        for topic in ["orders", "payments", "a.b-c"] {
            for p in 0..50 {
                let owners = shards.iter().filter(|s| s.owns(topic, p)).count();
                assert_eq!(owners, 1, "{topic}[{p}]");
            }
        }
        assert!((0..10).all(|p| Shard::default().owns("x", p)));
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        assert!(Shard::parse("0/3").is_err());
        assert!(Shard::parse("4/3").is_err());
        assert!(Shard::parse("x").is_err());
        assert_eq!(
            Shard { index: 2, count: 3 }.transactional_id("g"),
            "g.shard-2-of-3"
        );
    }
}
