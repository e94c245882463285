//! `kreplicate verify`: compare a source and a target topic partition by partition.
//!
//! For every selected topic and every partition, both sides are read from the beginning to
//! the end seen by a partition-EOF event (never ListOffsets LATEST, which tansu gets wrong),
//! with `isolation.level=read_committed`, and reduced to a [`Fingerprint`] per record: hashes
//! of key, value and headers, the timestamp, and the offset. Headers whose key starts with
//! `kreplicate.` are left out on both sides: kreplicate adds origin headers of its own, and a
//! chained copy (A → B → C) carries them in its source too.
//!
//! The comparison itself is the pure function [`compare`]; this module's Kafka part only
//! produces fingerprint sequences for it.
//!
//! # Memory bound
//!
//! Records are never kept: each is turned into a 32-byte [`Fingerprint`] as it is read.
//! One partition is compared at a time, in two phases:
//!
//! 1. Both sides are streamed in lockstep. While they agree record for record nothing at all
//!    is kept per record, so a partition that is an exact copy costs O(1) memory whatever its
//!    size.
//! 2. At the first difference, both sides of that one partition are read again from the
//!    beginning (both at once) into fingerprint vectors and handed to [`compare`].
//!    Fingerprints plus the comparison's index arrays cost at most [`BYTES_PER_RECORD`] (48)
//!    bytes per source record plus 48 bytes per target record of that one partition (up to
//!    64 for a moment while a vector grows), freed before the next partition. So the bound
//!    is 48 B × (source + target records) of the largest *differing* partition: about 1 GB
//!    for a partition of 10 million records on each side.
//!
//! Besides this, librdkafka's prefetch queue is bounded by `queued.max.messages.kbytes`
//! (16 MiB per side by default here; `-X`/`--to-property` may change it). Examples are at
//! most [`MAX_EXAMPLES`] per partition.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};
use serde::Serialize;

use crate::cli::EndpointArgs;
use crate::config::{self, ClusterSpec, TopicSelection};
use crate::error::{Error, Result};
use crate::kafka;
use crate::topics;

/// Flags of `kreplicate verify`.
#[derive(Debug, Default, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub ends: EndpointArgs,

    /// Print one JSON object on stdout instead of the table
    #[arg(long)]
    pub json: bool,

    /// Report duplicates (as left by at-least-once reruns) but still exit 0 when every source
    /// record is in the target and, keeping each record's last copy, in source order
    #[arg(long)]
    pub accept_duplicates: bool,

    /// Longest wait for a broker: metadata at start, and the next record or end of a
    /// partition while reading (e.g. 500ms, 30s, 2m) [default: defaults.timeout in the config
    /// file, else 30s]
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

/// Upper bound on the bytes [`compare`] and its input take per record (see the module doc).
pub const BYTES_PER_RECORD: usize = 48;

/// Concrete problems listed per partition, at most.
pub const MAX_EXAMPLES: usize = 5;

/// Prefix of header keys kreplicate itself adds to target records; ignored on both sides.
pub const OWN_HEADER_PREFIX: &str = "kreplicate.";

/// Readers' properties kreplicate sets itself, and why the user may not.
const OWNED: &[(&str, &str)] = &[
    ("bootstrap.servers", "use --from / --to"),
    ("metadata.broker.list", "use --from / --to"),
    ("group.id", "verify never joins a group"),
    ("enable.partition.eof", "verify needs it to find the end"),
    (
        "isolation.level",
        "verify reads what a read_committed consumer sees",
    ),
    ("enable.auto.commit", "verify never commits"),
    ("enable.auto.offset.store", "verify never commits"),
    (
        "auto.offset.reset",
        "verify always reads from the beginning",
    ),
];

// ------------------------------------------------------------------------------------------------
// Fingerprints and the pure comparison
// ------------------------------------------------------------------------------------------------

/// What verify keeps of one record: 32 bytes, whatever the record's size.
///
/// Two records are the same record when key, value, headers and timestamp match; the offset
/// only says where the record is. Each field hash is 32 bits, so a mismatch between two
/// records goes unnoticed with probability 2^-32 per field, and two different records share
/// all three hashes and the timestamp with probability 2^-96.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    pub offset: i64,
    /// Milliseconds; -1 when the record has none (Kafka's own encoding).
    pub timestamp: i64,
    pub key: u32,
    pub value: u32,
    pub headers: u32,
}

impl Fingerprint {
    /// Fingerprint of a record's fields. Null and empty keys/values differ; header order
    /// matters; headers for which `skip_header` is true are left out.
    pub fn of<'a>(
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: impl IntoIterator<Item = (&'a str, Option<&'a [u8]>)>,
        timestamp: Option<i64>,
        skip_header: impl Fn(&str) -> bool,
    ) -> Fingerprint {
        let mut h = hasher(3);
        let mut n = 0u64;
        for (k, v) in headers {
            if skip_header(k) {
                continue;
            }
            k.hash(&mut h);
            v.hash(&mut h);
            n += 1;
        }
        n.hash(&mut h);
        Fingerprint {
            offset,
            timestamp: timestamp.unwrap_or(-1),
            key: hash32(1, &key),
            value: hash32(2, &value),
            headers: fold(h.finish()),
        }
    }

    /// The record's identity: everything but the offset.
    fn identity(&self) -> (u32, u32, u32, i64) {
        (self.key, self.value, self.headers, self.timestamp)
    }

    fn same_record(&self, other: &Fingerprint) -> bool {
        self.identity() == other.identity()
    }

    /// Which fields differ, for an example line.
    fn differences(&self, target: &Fingerprint) -> String {
        let mut d = Vec::new();
        if self.key != target.key {
            d.push("key differs".to_string());
        }
        if self.value != target.value {
            d.push("value differs".to_string());
        }
        if self.headers != target.headers {
            d.push("headers differ".to_string());
        }
        if self.timestamp != target.timestamp {
            d.push(format!(
                "timestamp differs ({} vs {})",
                self.timestamp, target.timestamp
            ));
        }
        if d.is_empty() {
            "identical".into()
        } else {
            d.join(", ")
        }
    }
}

fn hasher(domain: u8) -> std::collections::hash_map::DefaultHasher {
    // Fixed keys: the same in both reads of one process, which is all verify needs.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    domain.hash(&mut h);
    h
}

fn hash32<T: Hash>(domain: u8, v: &T) -> u32 {
    let mut h = hasher(domain);
    v.hash(&mut h);
    fold(h.finish())
}

fn fold(x: u64) -> u32 {
    (x ^ (x >> 32)) as u32
}

/// Order-sensitive digest of a fingerprint sequence (shown as hex in the JSON report).
#[derive(Clone, Copy, Debug)]
struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0x6b72_6570_6c69_6361)
    }
}

impl Digest {
    fn add(&mut self, fp: &Fingerprint) {
        let mut h = hasher(4);
        self.0.hash(&mut h);
        fp.identity().hash(&mut h);
        self.0 = h.finish();
    }

    fn hex(self) -> String {
        format!("{:016x}", self.0)
    }
}

/// Kinds of difference, in the order examples are picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Problem {
    /// Same position, different key, value, headers or timestamp.
    Altered,
    /// A source record with no copy in the target.
    Missing,
    /// A target record that is no source record.
    Extra,
    /// A target record whose last copy is out of source order.
    Reordered,
    /// An earlier copy of a record that appears again later in the target.
    Duplicate,
}

impl Problem {
    fn as_str(self) -> &'static str {
        match self {
            Problem::Altered => "altered",
            Problem::Missing => "missing",
            Problem::Extra => "extra",
            Problem::Reordered => "reordered",
            Problem::Duplicate => "duplicate",
        }
    }
}

/// One concrete problem: where it is and what differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Example {
    pub kind: Problem,
    pub source_offset: Option<i64>,
    pub target_offset: Option<i64>,
    pub detail: String,
}

/// What [`compare`] found in one partition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    pub missing: u64,
    pub extra: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub altered: u64,
    /// At most [`MAX_EXAMPLES`], mixing kinds.
    pub examples: Vec<Example>,
}

impl Comparison {
    /// Exact: every source record is in the target once (or, accepting duplicates, at least
    /// once), in source order, unaltered, with nothing else.
    pub fn is_exact(&self, accept_duplicates: bool) -> bool {
        self.missing == 0
            && self.extra == 0
            && self.reordered == 0
            && self.altered == 0
            && (accept_duplicates || self.duplicates == 0)
    }
}

const NONE: u32 = u32::MAX;
const DUP: u32 = u32::MAX - 1;
const EXTRA: u32 = u32::MAX - 2;
/// Largest partition (in records) [`compare`] accepts; indices are kept in 32 bits.
pub const MAX_RECORDS: usize = (u32::MAX - 3) as usize;

/// Compares one source partition with its target partition, both in offset order.
///
/// * Each target record is matched to a source record with the same content. When a record
///   has more copies in the target than in the source, its **last** copies are the real ones
///   and the earlier ones are duplicates: an at-least-once rerun re-sends everything from
///   the committed position, so last copies are in source order even where an earlier
///   failed run left later records ahead of a failed one. (Identical source records are
///   interchangeable; with fewer target copies than source ones, the first are matched.)
/// * Reordered: matched target records outside a longest in-order run of source positions.
/// * A target record with no source match that stands where the next expected source
///   record is missing is that record, **altered**; otherwise it is **extra**. Unmatched
///   source records left over are **missing**.
///
/// Memory: besides the inputs (32 bytes per record), at most 13 bytes per source record and
/// 13 per target record (32-bit index arrays and bitsets), within [`BYTES_PER_RECORD`].
/// Inputs longer than [`MAX_RECORDS`] are an error of the caller (checked while reading).
pub fn compare(source: &[Fingerprint], target: &[Fingerprint]) -> Comparison {
    let n = source.len();
    let m = target.len();
    debug_assert!(n <= MAX_RECORDS && m <= MAX_RECORDS);

    // Both sides' positions sorted by (identity, position), then merged: each identity is
    // one run on each side, and a run pair decides its records at once.
    let sorted = |fps: &[Fingerprint]| -> Vec<u32> {
        let mut order: Vec<u32> = (0..fps.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            fps[a as usize]
                .identity()
                .cmp(&fps[b as usize].identity())
                .then(a.cmp(&b))
        });
        order
    };
    let run_len = |fps: &[Fingerprint], order: &[u32], at: usize| -> usize {
        let id = fps[order[at] as usize].identity();
        order[at..]
            .iter()
            .take_while(|&&i| fps[i as usize].identity() == id)
            .count()
    };
    // Per target position: the source position it is, or DUP / EXTRA.
    let mut tmap = vec![NONE; m];
    {
        let sorder = sorted(source);
        let torder = sorted(target);
        let (mut a, mut b) = (0usize, 0usize);
        while b < m {
            let tid = target[torder[b] as usize].identity();
            let l = run_len(target, &torder, b);
            // Skip source runs of identities the target does not have.
            while a < n && source[sorder[a] as usize].identity() < tid {
                a += run_len(source, &sorder, a);
            }
            let k = if a < n && source[sorder[a] as usize].identity() == tid {
                run_len(source, &sorder, a)
            } else {
                0
            };
            if k == 0 {
                for &j in &torder[b..b + l] {
                    tmap[j as usize] = EXTRA;
                }
            } else {
                // More copies than records: the last ones count, the earlier are duplicates.
                let skip = l.saturating_sub(k);
                for (q, &j) in torder[b..b + l].iter().enumerate() {
                    tmap[j as usize] = if q < skip { DUP } else { sorder[a + q - skip] };
                }
                a += k;
            }
            b += l;
        }
    }
    // Which source positions have a copy (bit per record, in the `u32` words of `matched`).
    let mut matched = vec![0u32; n.div_ceil(32)];
    let set = |bits: &mut Vec<u32>, i: usize| bits[i / 32] |= 1 << (i % 32);
    let get = |bits: &Vec<u32>, i: usize| bits[i / 32] & (1 << (i % 32)) != 0;
    for &s in &tmap {
        if s < EXTRA {
            set(&mut matched, s as usize);
        }
    }

    let mut out = Comparison::default();
    let mut examples: BTreeMap<Problem, Vec<Example>> = BTreeMap::new();
    // Records an example of `kind` unless it has enough; says whether it has enough now.
    let mut note = |kind: Problem, s: Option<usize>, t: Option<usize>, detail: String| -> bool {
        let list = examples.entry(kind).or_default();
        if list.len() < MAX_EXAMPLES {
            list.push(Example {
                kind,
                source_offset: s.map(|i| source[i].offset),
                target_offset: t.map(|j| target[j].offset),
                detail,
            });
        }
        list.len() >= MAX_EXAMPLES
    };

    // Altered and extra, walking the target in order.
    let mut paired = vec![0u32; n.div_ceil(32)];
    let mut cursor = 0usize;
    for (j, &s) in tmap.iter().enumerate() {
        match s {
            DUP => {}
            EXTRA => {
                if cursor < n && !get(&matched, cursor) && !get(&paired, cursor) {
                    set(&mut paired, cursor);
                    out.altered += 1;
                    note(
                        Problem::Altered,
                        Some(cursor),
                        Some(j),
                        source[cursor].differences(&target[j]),
                    );
                    cursor += 1;
                } else {
                    out.extra += 1;
                    note(Problem::Extra, None, Some(j), "not in the source".into());
                }
            }
            s => cursor = s as usize + 1,
        }
    }
    // Duplicate examples: the first few in target order, each with the copy that counts
    // (the next matched record with the same content; a scan, for at most MAX_EXAMPLES).
    for j in (0..m).filter(|&j| tmap[j] == DUP).take(MAX_EXAMPLES) {
        let later = (j + 1..m).find(|&k| tmap[k] < EXTRA && target[k].same_record(&target[j]));
        let (s, detail) = match later {
            Some(k) => (
                Some(tmap[k] as usize),
                format!(
                    "earlier copy of the record at target offset {}",
                    target[k].offset
                ),
            ),
            None => (
                None,
                "earlier copy of a record that appears again".to_string(),
            ),
        };
        note(Problem::Duplicate, s, Some(j), detail);
    }
    out.duplicates = tmap.iter().filter(|&&s| s == DUP).count() as u64;
    for i in 0..n {
        if !get(&matched, i) && !get(&paired, i) {
            out.missing += 1;
            note(Problem::Missing, Some(i), None, "not in the target".into());
        }
    }
    drop(matched);
    drop(paired);

    // Reordered: matched records outside one longest increasing run of source positions
    // (patience sorting; `prev` links each record to its predecessor in that run).
    let mut prev = vec![NONE; m];
    let mut tails: Vec<u32> = Vec::new();
    let mut matched_count = 0u64;
    for (j, &s) in tmap.iter().enumerate() {
        if s >= EXTRA {
            continue;
        }
        matched_count += 1;
        let pos = tails.partition_point(|&t| tmap[t as usize] < s);
        if pos > 0 {
            prev[j] = tails[pos - 1];
        }
        if pos == tails.len() {
            tails.push(j as u32);
        } else {
            tails[pos] = j as u32;
        }
    }
    let lis = tails.len() as u64;
    out.reordered = matched_count - lis;
    if out.reordered > 0 {
        // Mark the run's members in `prev` (reusing it: NONE-linked walk, then a flag bit).
        let mut in_run = vec![0u32; m.div_ceil(32)];
        let mut at = tails.last().copied().unwrap_or(NONE);
        while at != NONE {
            set(&mut in_run, at as usize);
            at = prev[at as usize];
        }
        drop(prev);
        let mut last_in_order: Option<usize> = None;
        for (j, &s) in tmap.iter().enumerate() {
            if s >= EXTRA {
                continue;
            }
            if get(&in_run, j) {
                last_in_order = Some(s as usize);
                continue;
            }
            // Outside a longest in-order run, a record follows a later one or precedes an
            // earlier one of that run.
            let next_in_order = || {
                (j + 1..m)
                    .find(|&k| tmap[k] < EXTRA && get(&in_run, k))
                    .map(|k| tmap[k] as usize)
            };
            let detail = match last_in_order {
                Some(p) if p > s as usize => format!(
                    "out of source order: comes after source offset {}",
                    source[p].offset
                ),
                _ => match next_in_order() {
                    Some(q) if q < s as usize => format!(
                        "out of source order: comes before source offset {}",
                        source[q].offset
                    ),
                    _ => "out of source order".to_string(),
                },
            };
            if note(Problem::Reordered, Some(s as usize), Some(j), detail) {
                break;
            }
        }
    }

    out.examples = pick_examples(examples);
    out
}

/// Up to [`MAX_EXAMPLES`], taking kinds in turn so a rare kind is not hidden by a common one.
fn pick_examples(mut by_kind: BTreeMap<Problem, Vec<Example>>) -> Vec<Example> {
    for list in by_kind.values_mut() {
        list.reverse();
    }
    let mut out = Vec::new();
    while out.len() < MAX_EXAMPLES {
        let before = out.len();
        for list in by_kind.values_mut() {
            if out.len() < MAX_EXAMPLES {
                if let Some(e) = list.pop() {
                    out.push(e);
                }
            }
        }
        if out.len() == before {
            break;
        }
    }
    out.sort_by(|a, b| {
        let key = |e: &Example| e.target_offset.or(e.source_offset).unwrap_or(i64::MAX);
        key(a).cmp(&key(b)).then(a.kind.cmp(&b.kind))
    });
    out
}

// ------------------------------------------------------------------------------------------------
// The report
// ------------------------------------------------------------------------------------------------

/// First and last offset of the records read from a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OffsetRange {
    pub first: i64,
    pub last: i64,
}

/// Count, offsets and digest of one side of a partition.
#[derive(Clone, Copy, Debug, Default)]
struct SideStats {
    count: u64,
    offsets: Option<OffsetRange>,
    digest: Digest,
}

impl SideStats {
    fn add(&mut self, fp: &Fingerprint) {
        self.count += 1;
        self.offsets = Some(match self.offsets {
            None => OffsetRange {
                first: fp.offset,
                last: fp.offset,
            },
            Some(r) => OffsetRange {
                first: r.first,
                last: fp.offset,
            },
        });
        self.digest.add(fp);
    }

    fn of(fps: &[Fingerprint]) -> SideStats {
        let mut s = SideStats::default();
        for fp in fps {
            s.add(fp);
        }
        s
    }
}

/// One row of the report.
#[derive(Clone, Debug, Serialize)]
pub struct PartitionReport {
    pub topic: String,
    pub target_topic: String,
    pub partition: i32,
    pub source_count: u64,
    pub target_count: u64,
    pub source_offsets: Option<OffsetRange>,
    pub target_offsets: Option<OffsetRange>,
    pub missing: u64,
    pub extra: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub altered: u64,
    /// `OK` or `DIFF`.
    pub status: &'static str,
    /// Order-sensitive digest of the records (target without `kreplicate.*` headers); null
    /// when the partition does not exist on that side.
    pub source_digest: Option<String>,
    pub target_digest: Option<String>,
    /// Set when the partition exists on one side only.
    pub note: Option<String>,
    pub examples: Vec<Example>,
}

impl PartitionReport {
    fn ok(&self) -> bool {
        self.status == "OK"
    }
}

/// Totals over all partitions.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    pub partitions: u64,
    pub partitions_differing: u64,
    pub source_count: u64,
    pub target_count: u64,
    pub missing: u64,
    pub extra: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub altered: u64,
}

/// Everything `verify` prints, as one JSON object with `--json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// True when the target holds an exact copy (duplicates allowed with
    /// `--accept-duplicates`): exit 0.
    pub exact: bool,
    pub verdict: String,
    pub accept_duplicates: bool,
    pub from: String,
    pub to: String,
    pub totals: Totals,
    pub partitions: Vec<PartitionReport>,
}

impl Report {
    fn new(
        from: &str,
        to: &str,
        accept_duplicates: bool,
        partitions: Vec<PartitionReport>,
    ) -> Report {
        let mut t = Totals::default();
        for p in &partitions {
            t.partitions += 1;
            t.partitions_differing += u64::from(!p.ok());
            t.source_count += p.source_count;
            t.target_count += p.target_count;
            t.missing += p.missing;
            t.extra += p.extra;
            t.duplicates += p.duplicates;
            t.reordered += p.reordered;
            t.altered += p.altered;
        }
        let exact = t.partitions_differing == 0;
        let verdict = if exact {
            let dups = if t.duplicates > 0 {
                format!(" ({} duplicates accepted)", t.duplicates)
            } else {
                String::new()
            };
            format!(
                "EXACT: the target holds an exact copy of {} records in {} partitions{dups}",
                t.source_count, t.partitions
            )
        } else {
            let mut what = Vec::new();
            for (n, name) in [
                (t.missing, "missing"),
                (t.extra, "extra"),
                (t.duplicates, "duplicates"),
                (t.reordered, "reordered"),
                (t.altered, "altered"),
            ] {
                if n > 0 {
                    what.push(format!("{n} {name}"));
                }
            }
            let what = if what.is_empty() {
                "partitions missing on the target".to_string()
            } else {
                what.join(", ")
            };
            format!(
                "DIFF: {} of {} partitions differ: {what}",
                t.partitions_differing, t.partitions
            )
        };
        Report {
            exact,
            verdict,
            accept_duplicates,
            from: from.to_string(),
            to: to.to_string(),
            totals: t,
            partitions,
        }
    }

    /// The aligned table, the examples and the verdict line.
    pub fn human(&self) -> String {
        let range = |r: &Option<OffsetRange>| match r {
            Some(r) => format!("{}-{}", r.first, r.last),
            None => "-".to_string(),
        };
        let header = [
            "TOPIC",
            "PARTITION",
            "SOURCE",
            "TARGET",
            "SOURCE OFFSETS",
            "TARGET OFFSETS",
            "MISSING",
            "EXTRA",
            "DUPLICATES",
            "REORDERED",
            "ALTERED",
            "STATUS",
        ];
        let rows: Vec<[String; 12]> = self
            .partitions
            .iter()
            .map(|p| {
                let topic = if p.topic == p.target_topic {
                    p.topic.clone()
                } else {
                    format!("{} -> {}", p.topic, p.target_topic)
                };
                [
                    topic,
                    p.partition.to_string(),
                    p.source_count.to_string(),
                    p.target_count.to_string(),
                    range(&p.source_offsets),
                    range(&p.target_offsets),
                    p.missing.to_string(),
                    p.extra.to_string(),
                    p.duplicates.to_string(),
                    p.reordered.to_string(),
                    p.altered.to_string(),
                    p.status.to_string(),
                ]
            })
            .collect();
        let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
        for r in &rows {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: Vec<&str>| -> String {
            let mut s = String::new();
            for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
                let pad = w.saturating_sub(c.chars().count());
                // Text left-aligned, numbers right-aligned.
                if i == 0 || i == 4 || i == 5 || i == 11 {
                    s.push_str(c);
                    if i + 1 < cells.len() {
                        s.push_str(&" ".repeat(pad));
                    }
                } else {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                }
                if i + 1 < cells.len() {
                    s.push_str("  ");
                }
            }
            s.push('\n');
            s
        };
        let mut out = line(header.to_vec());
        for r in &rows {
            out.push_str(&line(r.iter().map(String::as_str).collect()));
        }
        let mut problems = String::new();
        for p in &self.partitions {
            if let Some(n) = &p.note {
                problems.push_str(&format!("  {}[{}]: {n}\n", p.target_topic, p.partition));
            }
            for e in &p.examples {
                let at = match (e.source_offset, e.target_offset) {
                    (Some(s), Some(t)) => format!("source offset {s}, target offset {t}"),
                    (Some(s), None) => format!("source offset {s}"),
                    (None, Some(t)) => format!("target offset {t}"),
                    (None, None) => String::new(),
                };
                problems.push_str(&format!(
                    "  {}[{}] {}: {at}: {}\n",
                    p.target_topic,
                    p.partition,
                    e.kind.as_str(),
                    e.detail
                ));
            }
        }
        if !problems.is_empty() {
            out.push_str(&format!(
                "\nExamples (up to {MAX_EXAMPLES} per partition):\n"
            ));
            out.push_str(&problems);
        }
        out.push('\n');
        out.push_str(&self.verdict);
        out.push('\n');
        out
    }
}

// ------------------------------------------------------------------------------------------------
// Options
// ------------------------------------------------------------------------------------------------

/// Validated flags.
#[derive(Clone, Debug)]
struct Options {
    from: ClusterSpec,
    to: ClusterSpec,
    topics: TopicSelection,
    rename: String,
    timeout: Duration,
    accept_duplicates: bool,
}

fn resolve(args: &VerifyArgs) -> Result<Options> {
    let (path, required) = config::config_path(args.ends.config.as_deref());
    let file = config::load_file(path.as_deref(), required)?;
    let d = &file.defaults;
    let config::Endpoints {
        from,
        to,
        topics,
        rename,
    } = config::endpoints(&args.ends, &file)?;
    for (spec, flag) in [(&from, "--from-property"), (&to, "--to-property")] {
        for (key, _) in &spec.properties {
            if let Some((_, why)) = OWNED.iter().find(|(k, _)| k == key) {
                return Err(Error::usage(format!(
                    "verify: property '{key}' (from {flag} or the config file) is set by kreplicate: {why}"
                )));
            }
        }
    }
    let timeout = match args.timeout.as_ref().or(d.timeout.as_ref()) {
        Some(s) => {
            config::parse_duration(s).map_err(|e| Error::usage(format!("--timeout '{s}': {e}")))?
        }
        None => Duration::from_secs(30),
    };
    if timeout.is_zero() {
        return Err(Error::usage("--timeout must be greater than zero"));
    }
    Ok(Options {
        from,
        to,
        topics,
        rename,
        timeout,
        accept_duplicates: args.accept_duplicates,
    })
}

/// A source topic, its target, and both partition counts.
#[derive(Clone, Debug)]
struct Route {
    source: String,
    target: String,
    source_partitions: i32,
    target_partitions: i32,
}

/// Source topics with their targets and both partition counts; every target must exist.
fn routes(
    opts: &Options,
    source: &HashMap<String, i32>,
    target: &HashMap<String, i32>,
) -> Result<Vec<Route>> {
    let selected = topics::select(&opts.topics, &opts.rename, source, &opts.from.name)?;
    let absent: Vec<&str> = selected
        .iter()
        .filter(|r| !target.contains_key(&r.target))
        .map(|r| r.target.as_str())
        .collect();
    if !absent.is_empty() {
        return Err(Error::usage(format!(
            "target topic '{}' does not exist on '{}': check --to and --rename",
            absent.join("', '"),
            opts.to.name
        )));
    }
    Ok(selected
        .into_iter()
        .map(|r| Route {
            target_partitions: target.get(&r.target).copied().unwrap_or_default(),
            source_partitions: r.partitions,
            source: r.source,
            target: r.target,
        })
        .collect())
}

// ------------------------------------------------------------------------------------------------
// Reading
// ------------------------------------------------------------------------------------------------

/// Reads one partition at a time of one cluster, as fingerprints, from the beginning to the
/// end marked by partition-EOF. Assign only: its throwaway `group.id` is never joined and
/// nothing is committed.
struct Reader {
    consumer: BaseConsumer,
    side: &'static str,
    cluster: String,
    timeout: Duration,
    topic: String,
    partition: i32,
    eof: bool,
}

impl Reader {
    fn new(spec: &ClusterSpec, side: &'static str, timeout: Duration) -> Result<Reader> {
        let mut c = ClientConfig::new();
        // Defaults the user may change: a bounded prefetch, and short empty fetches (some
        // brokers hold an empty fetch for the full wait, which would delay every partition end).
        c.set("queued.max.messages.kbytes", "16384");
        c.set("fetch.wait.max.ms", "100");
        // Both sides are read in lockstep, so one side's queue is often full while the other
        // catches up: retry such a partition soon, not after librdkafka's default second.
        c.set("fetch.queue.backoff.ms", "10");
        for (k, v) in &spec.properties {
            c.set(k, v);
        }
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        c.set("bootstrap.servers", &spec.bootstrap)
            .set(
                "group.id",
                format!("kreplicate-verify-{}-{nanos}", std::process::id()),
            )
            .set("enable.partition.eof", "true")
            .set("isolation.level", "read_committed")
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            // Records deleted under the reader (retention) must not be skipped silently.
            .set("auto.offset.reset", "error");
        let consumer: BaseConsumer = c.create().map_err(|e| kafka::creation_error(side, e))?;
        Ok(Reader {
            consumer,
            side,
            cluster: spec.name.clone(),
            timeout,
            topic: String::new(),
            partition: -1,
            eof: true,
        })
    }

    /// Starts reading `topic[partition]` from its first record.
    fn open(&mut self, topic: &str, partition: i32) -> Result<()> {
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(topic, partition, Offset::Beginning)
            .and_then(|()| self.consumer.assign(&tpl))
            .map_err(|e| {
                Error::usage(format!(
                    "{} cluster '{}': cannot read {topic}[{partition}]: {e}",
                    self.side, self.cluster
                ))
            })?;
        self.topic = topic.to_string();
        self.partition = partition;
        self.eof = false;
        Ok(())
    }

    fn error(&self, what: impl std::fmt::Display) -> Error {
        Error::usage(format!(
            "{} cluster '{}': reading {}[{}]: {what}",
            self.side, self.cluster, self.topic, self.partition
        ))
    }

    /// The next record's fingerprint, or None at the end of the partition. Errors when the
    /// broker gives neither a record nor the end within the timeout.
    fn next(&mut self) -> Result<Option<Fingerprint>> {
        if self.eof {
            return Ok(None);
        }
        let mut deadline: Option<Instant> = None;
        let mut last_error: Option<String> = None;
        loop {
            match self.consumer.poll(Duration::from_millis(100)) {
                Some(Ok(m)) => {
                    if m.partition() != self.partition || m.topic() != self.topic {
                        continue;
                    }
                    let headers = m.headers();
                    let fp = Fingerprint::of(
                        m.offset(),
                        m.key(),
                        m.payload(),
                        headers
                            .into_iter()
                            .flat_map(|h| h.iter().map(|h| (h.key, h.value))),
                        m.timestamp().to_millis(),
                        |k| k.starts_with(OWN_HEADER_PREFIX),
                    );
                    return Ok(Some(fp));
                }
                Some(Err(KafkaError::PartitionEOF(p))) if p == self.partition => {
                    self.eof = true;
                    return Ok(None);
                }
                Some(Err(KafkaError::PartitionEOF(_))) => {}
                Some(Err(KafkaError::MessageConsumption(
                    code @ (RDKafkaErrorCode::OffsetOutOfRange | RDKafkaErrorCode::AutoOffsetReset),
                ))) => {
                    return Err(self.error(format!(
                        "{code}: records were deleted while verify read them (retention?); run it again"
                    )));
                }
                Some(Err(KafkaError::MessageConsumption(
                    code @ (RDKafkaErrorCode::UnknownTopicOrPartition
                    | RDKafkaErrorCode::UnknownTopic
                    | RDKafkaErrorCode::TopicAuthorizationFailed
                    | RDKafkaErrorCode::GroupAuthorizationFailed),
                ))) => return Err(self.error(code)),
                Some(Err(KafkaError::MessageConsumptionFatal(code))) => {
                    return Err(self.error(format!("fatal consumer error: {code}")));
                }
                Some(Err(e)) => last_error = Some(e.to_string()),
                None => {}
            }
            let deadline = *deadline.get_or_insert_with(|| Instant::now() + self.timeout);
            if Instant::now() >= deadline {
                let why = last_error.map_or(String::new(), |e| format!(" (last error: {e})"));
                return Err(self.error(format!(
                    "no record and no end of partition within {:?}{why}; check the cluster or raise --timeout",
                    self.timeout
                )));
            }
        }
    }

    /// Every fingerprint of `topic[partition]`.
    fn read_all(&mut self, topic: &str, partition: i32) -> Result<Vec<Fingerprint>> {
        self.open(topic, partition)?;
        let mut out = Vec::new();
        while let Some(fp) = self.next()? {
            if out.len() >= MAX_RECORDS {
                return Err(self.error(format!(
                    "more than {MAX_RECORDS} records in one partition differ, more than verify can compare"
                )));
            }
            out.push(fp);
        }
        out.shrink_to_fit();
        Ok(out)
    }

    /// Count, offsets and digest of `topic[partition]`, plus its first few fingerprints.
    fn scan(&mut self, topic: &str, partition: i32) -> Result<(SideStats, Vec<Fingerprint>)> {
        self.open(topic, partition)?;
        let mut stats = SideStats::default();
        let mut first = Vec::new();
        while let Some(fp) = self.next()? {
            stats.add(&fp);
            if first.len() < MAX_EXAMPLES {
                first.push(fp);
            }
        }
        Ok((stats, first))
    }
}

/// Compares one partition (see the module doc for the two phases and their memory).
fn verify_partition(
    src: &mut Reader,
    tgt: &mut Reader,
    route: &Route,
    partition: i32,
    accept_duplicates: bool,
) -> Result<PartitionReport> {
    let row = |s: Option<SideStats>,
               t: Option<SideStats>,
               c: Comparison,
               ok: bool,
               note: Option<String>| {
        PartitionReport {
            topic: route.source.clone(),
            target_topic: route.target.clone(),
            partition,
            source_count: s.map_or(0, |s| s.count),
            target_count: t.map_or(0, |t| t.count),
            source_offsets: s.and_then(|s| s.offsets),
            target_offsets: t.and_then(|t| t.offsets),
            missing: c.missing,
            extra: c.extra,
            duplicates: c.duplicates,
            reordered: c.reordered,
            altered: c.altered,
            status: if ok { "OK" } else { "DIFF" },
            source_digest: s.map(|s| s.digest.hex()),
            target_digest: t.map(|t| t.digest.hex()),
            note,
            examples: c.examples,
        }
    };
    let in_source = partition < route.source_partitions;
    let in_target = partition < route.target_partitions;
    if in_source && in_target {
        src.open(&route.source, partition)?;
        tgt.open(&route.target, partition)?;
        let (mut s, mut t) = (SideStats::default(), SideStats::default());
        loop {
            match (src.next()?, tgt.next()?) {
                (None, None) => {
                    return Ok(row(Some(s), Some(t), Comparison::default(), true, None))
                }
                (Some(a), Some(b)) if a.same_record(&b) => {
                    s.add(&a);
                    t.add(&b);
                }
                _ => break,
            }
        }
        // They differ: compare the whole partition from its fingerprints, reading both
        // sides again from the start, at the same time.
        let (s, t) = std::thread::scope(|scope| {
            let source = scope.spawn(|| src.read_all(&route.source, partition));
            let t = tgt.read_all(&route.target, partition);
            let s = source
                .join()
                .unwrap_or_else(|_| Err(Error::usage("internal error: the source reader failed")));
            (s, t)
        });
        let (s, t) = (s?, t?);
        let c = compare(&s, &t);
        let ok = c.is_exact(accept_duplicates);
        return Ok(row(
            Some(SideStats::of(&s)),
            Some(SideStats::of(&t)),
            c,
            ok,
            None,
        ));
    }
    if in_source {
        let (s, first) = src.scan(&route.source, partition)?;
        let c = Comparison {
            missing: s.count,
            examples: first
                .iter()
                .map(|fp| Example {
                    kind: Problem::Missing,
                    source_offset: Some(fp.offset),
                    target_offset: None,
                    detail: "not in the target".into(),
                })
                .collect(),
            ..Comparison::default()
        };
        let note = format!(
            "partition {partition} does not exist on the target ('{}' has {} partitions, '{}' has {})",
            route.target, route.target_partitions, route.source, route.source_partitions
        );
        // A missing partition is a difference even when the source partition is empty.
        return Ok(row(Some(s), None, c, false, Some(note)));
    }
    let (t, first) = tgt.scan(&route.target, partition)?;
    let c = Comparison {
        extra: t.count,
        examples: first
            .iter()
            .map(|fp| Example {
                kind: Problem::Extra,
                source_offset: None,
                target_offset: Some(fp.offset),
                detail: "in a partition the source does not have".into(),
            })
            .collect(),
        ..Comparison::default()
    };
    let note = format!(
        "partition {partition} exists only on the target ('{}' has {} partitions, '{}' has {}); it must be empty",
        route.target, route.target_partitions, route.source, route.source_partitions
    );
    let ok = t.count == 0;
    Ok(row(None, Some(t), c, ok, Some(note)))
}

fn verify(opts: &Options) -> Result<Report> {
    let (_, source) = topics::metadata(&opts.from, "source", "--from", opts.timeout)?;
    let (_, target) = topics::metadata(&opts.to, "target", "--to", opts.timeout)?;
    let routes = routes(opts, &source, &target)?;
    let mut src = Reader::new(&opts.from, "source", opts.timeout)?;
    let mut tgt = Reader::new(&opts.to, "target", opts.timeout)?;
    let mut rows = Vec::new();
    for route in &routes {
        for p in 0..route.source_partitions.max(route.target_partitions) {
            rows.push(verify_partition(
                &mut src,
                &mut tgt,
                route,
                p,
                opts.accept_duplicates,
            )?);
        }
    }
    let _ = src.consumer.unassign();
    let _ = tgt.consumer.unassign();
    Ok(Report::new(
        &opts.from.name,
        &opts.to.name,
        opts.accept_duplicates,
        rows,
    ))
}

/// `kreplicate verify`: exit 0 when the target holds an exact copy, 1 when it does not;
/// errors (bad flags, unknown cluster or topic, unreachable broker) exit 2.
pub fn run(args: &VerifyArgs) -> Result<i32> {
    use std::io::Write;
    let opts = resolve(args)?;
    let report = verify(&opts)?;
    let text = if args.json {
        let mut s = serde_json::to_string(&report)
            .map_err(|e| Error::usage(format!("cannot write the JSON report: {e}")))?;
        s.push('\n');
        s
    } else {
        report.human()
    };
    // A closed stdout (e.g. `| head`) does not change the verdict.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(if report.exact { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Record `id` at offset `offset`: distinct ids are distinct records.
    fn rec(offset: i64, id: u32) -> Fingerprint {
        Fingerprint {
            offset,
            timestamp: 1_000 + i64::from(id),
            key: id,
            value: id.wrapping_mul(7),
            headers: id.wrapping_mul(13),
        }
    }

    /// A partition holding records `ids`, at offsets 0, 1, 2, ...
    fn part(ids: impl IntoIterator<Item = u32>) -> Vec<Fingerprint> {
        ids.into_iter()
            .enumerate()
            .map(|(o, id)| rec(o as i64, id))
            .collect()
    }

    fn counts(c: &Comparison) -> [u64; 5] {
        [c.missing, c.extra, c.duplicates, c.reordered, c.altered]
    }

    fn kinds(c: &Comparison) -> Vec<Problem> {
        c.examples.iter().map(|e| e.kind).collect()
    }

    #[test]
    fn exact_copy() {
        let c = compare(&part(0..100), &part(0..100));
        assert_eq!(c, Comparison::default());
        assert!(c.is_exact(false));
        assert!(compare(&[], &[]).is_exact(false));
    }

    #[test]
    fn missing_records() {
        let target = part((0..10).filter(|i| *i != 3 && *i != 4));
        let c = compare(&part(0..10), &target);
        assert_eq!(counts(&c), [2, 0, 0, 0, 0]);
        assert!(!c.is_exact(true));
        let at: Vec<_> = c
            .examples
            .iter()
            .map(|e| (e.kind, e.source_offset, e.target_offset))
            .collect();
        assert_eq!(
            at,
            [
                (Problem::Missing, Some(3), None),
                (Problem::Missing, Some(4), None)
            ]
        );
        // An empty target misses everything; examples stop at MAX_EXAMPLES.
        let c = compare(&part(0..50), &[]);
        assert_eq!(counts(&c), [50, 0, 0, 0, 0]);
        assert_eq!(c.examples.len(), MAX_EXAMPLES);
    }

    #[test]
    fn extra_records() {
        let c = compare(&part(0..10), &part((0..10).chain([100, 101])));
        assert_eq!(counts(&c), [0, 2, 0, 0, 0]);
        assert_eq!(kinds(&c), [Problem::Extra, Problem::Extra]);
        assert_eq!(c.examples[0].target_offset, Some(10));
        assert!(!c.is_exact(true));
        // In the middle, where no source record is missing: extra, not altered.
        let c = compare(&part(0..10), &part([0, 1, 100, 2, 3, 4, 5, 6, 7, 8, 9]));
        assert_eq!(counts(&c), [0, 1, 0, 0, 0]);
        assert_eq!(c.examples[0].target_offset, Some(2));
    }

    #[test]
    fn altered_records() {
        let source = part(0..10);
        let mut target = source.clone();
        target[5].headers ^= 1;
        target[7].timestamp += 1;
        let c = compare(&source, &target);
        assert_eq!(counts(&c), [0, 0, 0, 0, 2]);
        assert_eq!(c.examples.len(), 2);
        assert_eq!(
            (c.examples[0].source_offset, c.examples[0].target_offset),
            (Some(5), Some(5))
        );
        assert_eq!(c.examples[0].detail, "headers differ");
        assert_eq!(c.examples[1].detail, "timestamp differs (1007 vs 1008)");
        assert!(!c.is_exact(true));
        // Two in a row, and the very first record.
        let mut target = source.clone();
        target[0].key ^= 1;
        target[3].value ^= 1;
        target[4].value ^= 1;
        let c = compare(&source, &target);
        assert_eq!(counts(&c), [0, 0, 0, 0, 3]);
        assert_eq!(c.examples[0].detail, "key differs");
        assert_eq!(c.examples[1].detail, "value differs");
    }

    #[test]
    fn reordered_records() {
        let c = compare(&part(0..10), &part([0, 1, 2, 4, 3, 5, 6, 7, 8, 9]));
        assert_eq!(counts(&c), [0, 0, 0, 1, 0]);
        let e = &c.examples[0];
        assert_eq!((e.source_offset, e.target_offset), (Some(4), Some(3)));
        assert_eq!(
            e.detail,
            "out of source order: comes before source offset 3"
        );
        assert!(!c.is_exact(true));
        // One record moved to the end: one reordered, named against what it follows.
        let c = compare(&part(0..10), &part([0, 1, 2, 4, 5, 6, 7, 8, 9, 3]));
        assert_eq!(counts(&c), [0, 0, 0, 1, 0]);
        let e = &c.examples[0];
        assert_eq!(
            (e.kind, e.source_offset, e.target_offset),
            (Problem::Reordered, Some(3), Some(9))
        );
        assert_eq!(e.detail, "out of source order: comes after source offset 9");
        // Fully reversed: all but one out of order.
        let c = compare(&part(0..10), &part((0..10).rev()));
        assert_eq!(counts(&c), [0, 0, 0, 9, 0]);
    }

    #[test]
    fn duplicates() {
        let source = part(0..10);
        let target = part([0, 1, 2, 3, 4, 5, 5, 6, 7, 8, 9]);
        let c = compare(&source, &target);
        assert_eq!(counts(&c), [0, 0, 1, 0, 0]);
        let e = &c.examples[0];
        assert_eq!(
            (e.kind, e.source_offset, e.target_offset),
            (Problem::Duplicate, Some(5), Some(5))
        );
        assert_eq!(e.detail, "earlier copy of the record at target offset 6");
        assert!(!c.is_exact(false));
        assert!(c.is_exact(true));
        // Everything twice in a row (a rerun from the start after a complete run).
        let c = compare(&source, &part((0..10).chain(0..10)));
        assert_eq!(counts(&c), [0, 0, 10, 0, 0]);
        assert!(c.is_exact(true));
    }

    #[test]
    fn at_least_once_rerun_shape() {
        // 0..99 written, 100..119 failed, 120..199 written; the rerun re-sent 100..299.
        let source = part(0..300);
        let target = part((0..100).chain(120..200).chain(100..300));
        let c = compare(&source, &target);
        assert_eq!(counts(&c), [0, 0, 80, 0, 0]);
        assert!(
            !c.is_exact(false),
            "duplicates fail without --accept-duplicates"
        );
        assert!(
            c.is_exact(true),
            "with --accept-duplicates the rerun shape is exact"
        );
        let e = &c.examples[0];
        assert_eq!(
            (e.kind, e.source_offset, e.target_offset),
            (Problem::Duplicate, Some(120), Some(100))
        );
        // A rerun from before records that were copied fine is also exact.
        let c = compare(&source, &part((0..150).chain(50..300)));
        assert_eq!(counts(&c), [0, 0, 100, 0, 0]);
        assert!(c.is_exact(true));
    }

    #[test]
    fn unfinished_rerun_is_not_exact_even_accepting_duplicates() {
        // The rerun stopped after re-sending 100..109: 110..119 and 200..299 never arrived,
        // and 100..109 now sit after 120..199.
        let c = compare(
            &part(0..300),
            &part((0..100).chain(120..200).chain(100..110)),
        );
        assert_eq!(counts(&c), [110, 0, 0, 10, 0]);
        assert!(!c.is_exact(true));
        // A stray late copy of one record: its last copy is out of order.
        let c = compare(&part(0..10), &part((0..10).chain([5])));
        assert_eq!(counts(&c), [0, 0, 1, 1, 0]);
        assert!(!c.is_exact(true));
    }

    #[test]
    fn identical_source_records_are_interchangeable() {
        // Records 0 and 2 are the same record (same key, value, headers, timestamp).
        let source = part([7, 8, 7]);
        assert!(compare(&source, &part([7, 8, 7])).is_exact(false));
        let c = compare(&source, &part([7, 8]));
        assert_eq!(counts(&c), [1, 0, 0, 0, 0]);
        assert_eq!(c.examples[0].source_offset, Some(2));
        // The rerun shape with them: last copies in order.
        let c = compare(&source, &part([7, 8, 7, 8, 7]));
        assert_eq!(counts(&c), [0, 0, 2, 0, 0]);
        assert!(c.is_exact(true));
    }

    #[test]
    fn examples_mix_kinds_and_stay_bounded() {
        let source = part(0..100);
        let mut target = part((0..100).filter(|i| i % 10 != 0));
        target[0].value ^= 1; // source 1: altered
        target.push(rec(90, 5000)); // extra at the end
        target.swap(20, 21); // reordered
        target.push(rec(91, 55)); // a stray late copy: a duplicate, its last copy out of order
        let c = compare(&source, &target);
        assert_eq!(c.missing, 10);
        assert_eq!(c.altered, 1);
        assert_eq!(c.extra, 1);
        assert!(c.reordered >= 1);
        assert_eq!(c.duplicates, 1);
        assert_eq!(c.examples.len(), MAX_EXAMPLES);
        let mut k = kinds(&c);
        k.sort();
        k.dedup();
        assert_eq!(k.len(), 5, "one of each kind: {:?}", c.examples);
    }

    #[test]
    fn fingerprints() {
        let none = |_: &str| false;
        let h = |k: &'static str, v: Option<&'static [u8]>| (k, v);
        let base = Fingerprint::of(
            0,
            Some(b"k"),
            Some(b"v"),
            [h("a", Some(b"1"))],
            Some(5),
            none,
        );
        let same = Fingerprint::of(
            9,
            Some(b"k"),
            Some(b"v"),
            [h("a", Some(b"1"))],
            Some(5),
            none,
        );
        assert!(base.same_record(&same));
        let null_key = Fingerprint::of(0, None, Some(b"v"), [h("a", Some(b"1"))], Some(5), none);
        let empty_key = Fingerprint::of(
            0,
            Some(b""),
            Some(b"v"),
            [h("a", Some(b"1"))],
            Some(5),
            none,
        );
        assert_ne!(null_key.key, empty_key.key);
        let tombstone = Fingerprint::of(0, Some(b"k"), None, [h("a", Some(b"1"))], Some(5), none);
        assert_ne!(tombstone.value, base.value);
        let null_header = Fingerprint::of(0, Some(b"k"), Some(b"v"), [h("a", None)], Some(5), none);
        assert_ne!(null_header.headers, base.headers);
        let two = [h("a", Some(b"1")), h("b", Some(b"2"))];
        let swapped = [h("b", Some(b"2")), h("a", Some(b"1"))];
        let x = Fingerprint::of(0, None, None, two, None, none);
        let y = Fingerprint::of(0, None, None, swapped, None, none);
        assert_ne!(x.headers, y.headers, "header order matters");
        assert_eq!(x.timestamp, -1);
        // The target's own headers are left out.
        let own = |k: &str| k.starts_with(OWN_HEADER_PREFIX);
        let with_origin = Fingerprint::of(
            0,
            Some(b"k"),
            Some(b"v"),
            [h("a", Some(b"1")), h("kreplicate.origin", Some(b"a/t/0/0"))],
            Some(5),
            own,
        );
        assert!(base.same_record(&with_origin));
        assert_eq!(std::mem::size_of::<Fingerprint>(), 32);
    }

    #[test]
    fn report_table_and_verdict() {
        let mut target = part(0..10);
        target[2].headers ^= 1;
        let c = compare(&part(0..10), &target);
        let row = PartitionReport {
            topic: "orders".into(),
            target_topic: "backup.orders".into(),
            partition: 0,
            source_count: 10,
            target_count: 10,
            source_offsets: Some(OffsetRange { first: 0, last: 9 }),
            target_offsets: Some(OffsetRange { first: 0, last: 9 }),
            missing: c.missing,
            extra: c.extra,
            duplicates: c.duplicates,
            reordered: c.reordered,
            altered: c.altered,
            status: "DIFF",
            source_digest: None,
            target_digest: None,
            note: None,
            examples: c.examples,
        };
        let r = Report::new("a", "b", false, vec![row]);
        assert!(!r.exact);
        let text = r.human();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("TOPIC"), "{text}");
        assert!(
            lines[1].contains("orders -> backup.orders") && lines[1].ends_with("DIFF"),
            "{text}"
        );
        // Aligned: text columns start under their header, number columns end under it.
        assert_eq!(lines[0].find("STATUS"), lines[1].find("DIFF"), "{text}");
        let end = lines[0].find("PARTITION").unwrap() + "PARTITION".len();
        assert!(lines[1][..end].ends_with(" 0"), "{text}");
        assert!(
            text.contains(
                "backup.orders[0] altered: source offset 2, target offset 2: headers differ"
            ),
            "{text}"
        );
        assert_eq!(
            lines.last(),
            Some(&"DIFF: 1 of 1 partitions differ: 1 altered")
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["exact"], false);
        assert_eq!(json["partitions"][0]["altered"], 1);
        assert_eq!(json["partitions"][0]["examples"][0]["kind"], "altered");
    }
}
