//! Unit tests of the comparison: every kind of difference, duplicates, examples, bounds.

use super::*;
use crate::verify::fingerprint::fixtures::{part, rec};

fn counts(c: &Comparison) -> [u64; 5] {
    [c.missing, c.extra, c.duplicates, c.reordered, c.altered]
}

fn kinds(c: &Comparison) -> Vec<Problem> {
    c.examples.iter().map(|e| e.kind).collect()
}

#[test]
fn a_fingerprint_and_its_index_entries_fit_the_documented_bound() {
    // 32-bit index arrays and bitsets: 13 bytes per record besides the fingerprint.
    assert!(std::mem::size_of::<Fingerprint>() + 13 <= BYTES_PER_RECORD);
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
