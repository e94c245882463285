//! The positions index on the target, and exact group translation from it (pure).
//!
//! A copy writes, with each commit and for each target partition, one entry to the compacted
//! topic [`INDEX_TOPIC`] on the target: "this writer's records in target offsets `[t0, t)`
//! came from source offsets at most `m`, the record at `t - 1` from `m` itself, and the copy's
//! committed source position was `c`". One writer's records of a partition go out in source
//! order (idempotent producer, one partition), so its origins only grow from `t0` on: `m` is
//! exact. A writer that starts again (a new run, a rebalance, an aborted transaction) starts a
//! new `t0`; what a writer that died wrote after its last entry is a gap, read when needed.
//!
//! Translation of a source position X: T = the offset of the first target record whose origin
//! is ≥ X. The entries say which offsets can hold no such record, so a lookup reads the gaps
//! before the answer and one interval between two entries (at most one commit, or one bucket of
//! 4096 origins when compaction has merged entries), never the whole partition.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The compacted topic on the target that holds the entries (`__`: never matched by a
/// `--topics` regex, so an opposite run does not copy it).
pub const INDEX_TOPIC: &str = "__kreplicate.index";

/// Entries of one writer keep one per bucket of 2^12 origins after compaction.
const BUCKET_BITS: u32 = 12;

/// What one writer knows of its own records in one target partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trail {
    /// Target offset of the writer's first record, and just after its last acknowledged one.
    pub t0: i64,
    pub t: i64,
    /// Origin offset of its last acknowledged record (the greatest so far).
    pub m: i64,
}

impl Trail {
    /// The trail after one more acknowledged record at `target_offset` from `origin`.
    pub fn after(trail: Option<Trail>, target_offset: i64, origin: i64) -> Trail {
        match trail {
            Some(t) => Trail {
                t0: t.t0,
                t: t.t.max(target_offset + 1),
                m: t.m.max(origin),
            },
            None => Trail {
                t0: target_offset,
                t: target_offset + 1,
                m: origin,
            },
        }
    }
}

/// Which source partition and target topic an entry is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subject<'a> {
    pub cluster: &'a str,
    pub topic: &'a str,
    pub partition: i32,
    pub target: &'a str,
}

/// One index entry: a writer's trail (none when it has copied nothing there yet) and the
/// copy's committed source position (-1: none yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub trail: Option<Trail>,
    pub committed: i64,
}

/// The entry's key: compaction keeps the newest entry per writer and bucket of origins.
pub fn key(s: &Subject<'_>, entry: &Entry) -> String {
    let (t0, bucket) = entry.trail.map_or((-1, -1), |t| (t.t0, t.m >> BUCKET_BITS));
    let mut k = String::new();
    let _ = write!(
        k,
        "{}/{}/{}/{}/{t0}/{bucket}",
        s.cluster, s.topic, s.partition, s.target
    );
    k
}

pub fn value(e: &Entry) -> String {
    let t = e.trail.unwrap_or(Trail {
        t0: -1,
        t: -1,
        m: -1,
    });
    format!("{} {} {} {}", t.t0, t.t, t.m, e.committed)
}

/// An entry read back, and its subject, if both parse.
pub fn parse<'a>(key: &'a [u8], value: &[u8]) -> Option<(Subject<'a>, Entry)> {
    let key = std::str::from_utf8(key).ok()?;
    let mut k = key.rsplitn(6, '/');
    let (_bucket, _t0) = (k.next()?, k.next()?);
    let target = k.next()?;
    let partition = k.next()?.parse().ok()?;
    let topic = k.next()?;
    let cluster = k.next()?;
    let v: Vec<i64> = std::str::from_utf8(value)
        .ok()?
        .split(' ')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let [t0, t, m, committed] = v[..] else {
        return None;
    };
    let subject = Subject {
        cluster,
        topic,
        partition,
        target,
    };
    let trail = (t0 >= 0).then_some(Trail { t0, t, m });
    Some((subject, Entry { trail, committed }))
}

/// Target offset ranges `[from, to)` (`to` `None`: to the end) to read, in order, for the
/// first record with origin ≥ `x`; every offset left out holds none (pure). The last range is
/// always open, so a reader that finds nothing in a range goes on.
pub fn ranges(entries: &[Entry], x: i64) -> Vec<(i64, Option<i64>)> {
    // Per writer (t0): its entries by t.
    let mut writers: BTreeMap<i64, Vec<Trail>> = BTreeMap::new();
    for t in entries.iter().filter_map(|e| e.trail) {
        writers.entry(t.t0).or_default().push(t);
    }
    let mut out = Vec::new();
    let mut pos = 0i64;
    for (t0, mut trails) in writers {
        trails.sort_by_key(|t| t.t);
        if t0 > pos {
            // Written by no indexed writer, or by one that died after its last entry.
            out.push((pos, Some(t0)));
        }
        if let Some(i) = trails.iter().position(|t| t.m >= x) {
            let from = if i == 0 { t0 } else { trails[i - 1].t };
            out.push((from.max(pos), None));
            return merge(out);
        }
        if let Some(last) = trails.last() {
            pos = pos.max(last.t);
        }
    }
    out.push((pos, None));
    merge(out)
}

/// Joins ranges that touch.
fn merge(ranges: Vec<(i64, Option<i64>)>) -> Vec<(i64, Option<i64>)> {
    let mut out: Vec<(i64, Option<i64>)> = Vec::new();
    for (from, to) in ranges {
        if let Some(last) = out.last_mut() {
            if last.1 == Some(from) {
                last.1 = to;
                continue;
            }
        }
        if to.is_none_or(|to| to > from) {
            out.push((from, to));
        }
    }
    out
}

/// The copy's committed source position the entries tell of, if any.
pub fn copied(entries: &[Entry]) -> Option<i64> {
    entries
        .iter()
        .map(|e| e.committed)
        .max()
        .filter(|c| *c >= 0)
}

/// Where a source position lands on the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Translation {
    /// Resume the target group here.
    At(i64),
    /// The copy has not reached the source position yet: nothing to commit.
    Ahead,
}

/// The translation of source position `x` (pure): `first` is the offset of the first target
/// record whose origin is ≥ `x`, if the target holds one; `copied` the copy's committed
/// source position; `end` the target partition's end as a read_committed reader sees it (never
/// the high watermark: copies in an open transaction lie between, issue 31).
pub fn decide(x: i64, first: Option<i64>, copied: Option<i64>, end: i64) -> Translation {
    match first {
        Some(t) => Translation::At(t),
        None if copied.is_some_and(|c| c >= x) => Translation::At(end),
        None => Translation::Ahead,
    }
}

/// The first record of `records` (target offset, origin offset if the record is ours; in
/// target order, as a reader sees them) whose origin is ≥ `x`: the definition the tests
/// check [`Search`] and the index's ranges against.
#[cfg(test)]
pub fn first_at_or_after(
    records: impl IntoIterator<Item = (i64, Option<i64>)>,
    x: i64,
) -> Option<i64> {
    records
        .into_iter()
        .find(|(_, o)| o.is_some_and(|o| o >= x))
        .map(|(t, _)| t)
}

/// Active-active (issue 18): a source record that is itself a copy from the target is not
/// copied back, but it is already on the target, at the position its own origin names. A
/// source position X must translate to no later than the least such position among the
/// source's records from X on (in the same target partition: copies keep partition numbers),
/// else a consumer that fails over never sees the original.
///
/// `Returned` reads the source partition from X in order, fed with each record's position on
/// the target when its origin names the target partition (`None` otherwise), and keeps the
/// least. The copy from the target wrote them in target order, so once one is at or past
/// `bound` (the position the copies alone give) no later one can lower the answer, except a
/// re-copy after a restart, whose first copy came before it and was seen: reading stops there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Returned {
    pub bound: i64,
    pub least: Option<i64>,
}

impl Returned {
    pub fn new(bound: i64) -> Returned {
        Returned { bound, least: None }
    }

    /// Takes one more source record; true when reading can stop.
    pub fn see(&mut self, on_target: Option<i64>) -> bool {
        let Some(o) = on_target else { return false };
        if o >= self.bound {
            return true;
        }
        self.least = Some(self.least.map_or(o, |l| l.min(o)));
        false
    }
}

/// The translation once the source's records that came from the target are counted (pure):
/// the earlier of the first copy and the least such record's own position.
pub fn with_returned(copies: Translation, returned: Option<i64>) -> Translation {
    match (copies, returned) {
        (Translation::At(t), Some(o)) => Translation::At(t.min(o)),
        (t, _) => t,
    }
}

/// The search for the first target record whose origin is ≥ `x`, one record at a time, in
/// target order (pure). A record without any origin header may be a copy sent without it (too
/// large with it, issue 18): the answer lands on the first such record after the last of ours
/// below `x`, so a consumer moved there may read a record again but never misses one. Records
/// without origin before any of ours are another writer's, as before.
#[derive(Debug, Default)]
pub struct Search {
    seen_ours: bool,
    unstamped: Option<i64>,
}

impl Search {
    /// One more record: `origin` is `None` without an origin header, `Some(None)` for an
    /// origin that is not ours, `Some(Some(o))` for ours. The answer once found.
    pub fn record(&mut self, offset: i64, origin: Option<Option<i64>>, x: i64) -> Option<i64> {
        match origin {
            None => {
                if self.seen_ours {
                    self.unstamped.get_or_insert(offset);
                }
                None
            }
            Some(Some(o)) if o >= x => Some(self.unstamped.unwrap_or(offset)),
            Some(Some(_)) => {
                self.seen_ours = true;
                self.unstamped = None;
                None
            }
            Some(None) => None,
        }
    }

    /// A record without origin after the last of ours below `x`, when nothing was found: where
    /// a copy that has passed `x` lands instead of the partition's end.
    pub fn leftover(&self) -> Option<i64> {
        self.unstamped
    }
}

#[cfg(test)]
mod tests;
