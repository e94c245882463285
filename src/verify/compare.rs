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

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
