//! The pure comparison of one partition: [`compare`] turns the source's and the target's
//! fingerprint sequences into a [`Comparison`] (counts per kind of [`Problem`] and a few
//! [`Example`]s). No Kafka here.

use std::collections::BTreeMap;

use serde::Serialize;

use super::fingerprint::Fingerprint;

/// Upper bound on the bytes [`compare`] and its input take per record (see the
/// [`verify`](super) module doc).
#[cfg(test)]
pub const BYTES_PER_RECORD: usize = 48;

/// Concrete problems listed per partition, at most.
pub const MAX_EXAMPLES: usize = 5;

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
    pub(super) fn as_str(self) -> &'static str {
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
/// 13 per target record (32-bit index arrays and bitsets), within `BYTES_PER_RECORD`.
/// Inputs longer than [`MAX_RECORDS`] are an error of the caller (checked while reading).
pub fn compare(source: &[Fingerprint], target: &[Fingerprint]) -> Comparison {
    debug_assert!(source.len() <= MAX_RECORDS && target.len() <= MAX_RECORDS);
    let tmap = match_copies(source, target);
    let mut out = Comparison::default();
    let mut examples = Examples::new(source, target);
    {
        let mut matched = Bits::new(source.len());
        for &s in tmap.iter().filter(|&&s| s < EXTRA) {
            matched.set(s as usize);
        }
        let paired = altered_and_extra(&tmap, &matched, &mut out, &mut examples);
        duplicates(&tmap, &mut out, &mut examples);
        missing(&matched, &paired, &mut out, &mut examples);
        // `matched` and `paired` are freed before the reordering's arrays are made.
    }
    reordered(&tmap, &mut out, &mut examples);
    out.examples = pick_examples(examples.by_kind);
    out
}

/// Per target position: the source position it is a copy of, or `DUP` / `EXTRA`.
///
/// Both sides' positions sorted by (identity, position), then merged: each identity is one
/// run on each side, and a run pair decides its records at once.
fn match_copies(source: &[Fingerprint], target: &[Fingerprint]) -> Vec<u32> {
    let (n, m) = (source.len(), target.len());
    let mut tmap = vec![NONE; m];
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
    tmap
}

/// Positions sorted by (identity, position).
fn sorted(fps: &[Fingerprint]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..fps.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| {
        fps[a as usize]
            .identity()
            .cmp(&fps[b as usize].identity())
            .then(a.cmp(&b))
    });
    order
}

/// How many positions from `order[at]` on share its identity.
fn run_len(fps: &[Fingerprint], order: &[u32], at: usize) -> usize {
    let id = fps[order[at] as usize].identity();
    order[at..]
        .iter()
        .take_while(|&&i| fps[i as usize].identity() == id)
        .count()
}

/// One bit per record, in 32-bit words.
struct Bits(Vec<u32>);

impl Bits {
    fn new(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(32)])
    }

    fn set(&mut self, i: usize) {
        self.0[i / 32] |= 1 << (i % 32);
    }

    fn get(&self, i: usize) -> bool {
        self.0[i / 32] & (1 << (i % 32)) != 0
    }
}

/// The examples noted so far, per kind, at most [`MAX_EXAMPLES`] of each.
struct Examples<'a> {
    source: &'a [Fingerprint],
    target: &'a [Fingerprint],
    by_kind: BTreeMap<Problem, Vec<Example>>,
}

impl<'a> Examples<'a> {
    fn new(source: &'a [Fingerprint], target: &'a [Fingerprint]) -> Self {
        Examples {
            source,
            target,
            by_kind: BTreeMap::new(),
        }
    }

    /// Records an example of `kind` unless it has enough; says whether it has enough now.
    fn note(&mut self, kind: Problem, s: Option<usize>, t: Option<usize>, detail: String) -> bool {
        let list = self.by_kind.entry(kind).or_default();
        if list.len() < MAX_EXAMPLES {
            list.push(Example {
                kind,
                source_offset: s.map(|i| self.source[i].offset),
                target_offset: t.map(|j| self.target[j].offset),
                detail,
            });
        }
        list.len() >= MAX_EXAMPLES
    }
}

/// Altered and extra, walking the target in order: an unmatched target record standing
/// where the next expected source record is missing is that record, altered. Returns the
/// source records so paired.
fn altered_and_extra(
    tmap: &[u32],
    matched: &Bits,
    out: &mut Comparison,
    examples: &mut Examples<'_>,
) -> Bits {
    let (source, target) = (examples.source, examples.target);
    let n = source.len();
    let mut paired = Bits::new(n);
    let mut cursor = 0usize;
    for (j, &s) in tmap.iter().enumerate() {
        match s {
            DUP => {}
            EXTRA => {
                if cursor < n && !matched.get(cursor) && !paired.get(cursor) {
                    paired.set(cursor);
                    out.altered += 1;
                    examples.note(
                        Problem::Altered,
                        Some(cursor),
                        Some(j),
                        source[cursor].differences(&target[j]),
                    );
                    cursor += 1;
                } else {
                    out.extra += 1;
                    examples.note(Problem::Extra, None, Some(j), "not in the source".into());
                }
            }
            s => cursor = s as usize + 1,
        }
    }
    paired
}

/// Duplicates, with examples: the first few in target order, each with the copy that counts
/// (the next matched record with the same content; a scan, for at most MAX_EXAMPLES).
fn duplicates(tmap: &[u32], out: &mut Comparison, examples: &mut Examples<'_>) {
    let target = examples.target;
    let m = target.len();
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
        examples.note(Problem::Duplicate, s, Some(j), detail);
    }
    out.duplicates = tmap.iter().filter(|&&s| s == DUP).count() as u64;
}

/// Missing: source records neither copied nor paired with an altered copy.
fn missing(matched: &Bits, paired: &Bits, out: &mut Comparison, examples: &mut Examples<'_>) {
    for i in 0..examples.source.len() {
        if !matched.get(i) && !paired.get(i) {
            out.missing += 1;
            examples.note(Problem::Missing, Some(i), None, "not in the target".into());
        }
    }
}

/// Reordered: matched records outside one longest increasing run of source positions.
fn reordered(tmap: &[u32], out: &mut Comparison, examples: &mut Examples<'_>) {
    let (in_run, outside) = longest_in_order_run(tmap);
    out.reordered = outside;
    if outside == 0 {
        return;
    }
    let source = examples.source;
    let m = tmap.len();
    let mut last_in_order: Option<usize> = None;
    for (j, &s) in tmap.iter().enumerate() {
        if s >= EXTRA {
            continue;
        }
        if in_run.get(j) {
            last_in_order = Some(s as usize);
            continue;
        }
        // Outside a longest in-order run, a record follows a later one or precedes an
        // earlier one of that run.
        let next_in_order = || {
            (j + 1..m)
                .find(|&k| tmap[k] < EXTRA && in_run.get(k))
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
        if examples.note(Problem::Reordered, Some(s as usize), Some(j), detail) {
            break;
        }
    }
}

/// The target positions of one longest run of matched records in increasing source order
/// (patience sorting; `prev` links each record to its predecessor in that run), and how
/// many matched records are outside it.
fn longest_in_order_run(tmap: &[u32]) -> (Bits, u64) {
    let m = tmap.len();
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
    let mut in_run = Bits::new(m);
    let mut at = tails.last().copied().unwrap_or(NONE);
    while at != NONE {
        in_run.set(at as usize);
        at = prev[at as usize];
    }
    (in_run, matched_count - tails.len() as u64)
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

#[cfg(test)]
mod tests;
