//! Unit tests of the positions index and of translation (pure).

use super::*;

/// A target partition as a reader sees it: (offset, origin if ours).
type Log = Vec<(i64, Option<i64>)>;

/// Writes `origins` (None: a foreign record) from offset `at` on.
fn log(at: i64, origins: &[Option<i64>]) -> Log {
    origins
        .iter()
        .enumerate()
        .map(|(i, o)| (at + i as i64, *o))
        .collect()
}

fn ours(range: std::ops::Range<i64>) -> Vec<Option<i64>> {
    range.map(Some).collect()
}

/// Translation by reading the whole partition: the definition.
fn by_definition(l: &Log, x: i64, copied: Option<i64>, end: i64) -> Translation {
    decide(x, first_at_or_after(l.iter().copied(), x), copied, end)
}

/// Translation by reading only the ranges the entries leave; also returns the records read.
fn by_index(l: &Log, entries: &[Entry], x: i64, end: i64) -> (Translation, usize) {
    let copied = entries
        .iter()
        .map(|e| e.committed)
        .max()
        .filter(|c| *c >= 0);
    let mut read = 0;
    for (from, to) in ranges(entries, x) {
        // A reader stops at the first match.
        let window = l
            .iter()
            .copied()
            .filter(|(t, _)| *t >= from && to.is_none_or(|to| *t < to))
            .inspect(|_| read += 1);
        if let Some(t) = first_at_or_after(window, x) {
            return (Translation::At(t), read);
        }
    }
    (decide(x, None, copied, end), read)
}

/// Entries one writer would write: a commit after every `every` of its records.
fn entries_of(l: &Log, t0: i64, upto: i64, every: usize, committed: i64) -> Vec<Entry> {
    let mine: Vec<(i64, i64)> = l
        .iter()
        .filter(|(t, o)| *t >= t0 && *t < upto && o.is_some())
        .map(|(t, o)| (*t, o.unwrap_or_default()))
        .collect();
    let mut trail = None;
    let mut out = Vec::new();
    for (i, (t, o)) in mine.iter().enumerate() {
        trail = Some(Trail::after(trail, *t, *o));
        if (i + 1) % every == 0 || i + 1 == mine.len() {
            out.push(Entry { trail, committed });
        }
    }
    out
}

#[test]
fn issue_11_entries_round_trip_and_compact_per_bucket() {
    let s = Subject {
        cluster: "A",
        topic: "orders",
        partition: 3,
        target: "backup.orders",
    };
    let e = Entry {
        trail: Some(Trail {
            t0: 17,
            t: 900,
            m: 5000,
        }),
        committed: 5001,
    };
    let k = key(&s, &e);
    assert_eq!(k, "A/orders/3/backup.orders/17/1");
    assert_eq!(parse(k.as_bytes(), value(&e).as_bytes()), Some((s, e)));
    // A writer that copied nothing there yet still tells its committed position.
    let none = Entry {
        trail: None,
        committed: 0,
    };
    let k = key(&s, &none);
    assert_eq!(k, "A/orders/3/backup.orders/-1/-1");
    assert_eq!(
        parse(k.as_bytes(), value(&none).as_bytes()),
        Some((s, none))
    );
    assert_eq!(copied(&[none, e]), Some(5001));
    assert_eq!(parse(b"A/t/x/b/0/0", b"1 2 3 4"), None);
    assert_eq!(parse(k.as_bytes(), b"1 2 3"), None);
}

#[test]
fn issue_11_translation_with_duplicates_points_at_the_first_copy() {
    // Run 1 copied 0..30 and died having committed 20; run 2 copied 20..40 again.
    let mut l = log(0, &ours(0..30));
    l.extend(log(30, &ours(20..40)));
    for x in [0, 10, 20, 25, 29, 30, 35, 39] {
        let want = by_definition(&l, x, Some(40), 50);
        let first = l
            .iter()
            .find(|(_, o)| o.is_some_and(|o| o >= x))
            .map(|p| p.0);
        assert_eq!(want, Translation::At(first.unwrap_or(50)), "x={x}");
    }
    // X=25: the first copy, written by run 1 (offset 25), not run 2's (offset 35).
    assert_eq!(by_definition(&l, 25, Some(40), 50), Translation::At(25));
    assert_eq!(by_definition(&l, 30, Some(40), 50), Translation::At(40));
}

#[test]
fn issue_11_translation_skips_foreign_records_gaps_and_aborted_ones() {
    // Foreign records first; source offsets with holes (compaction, transaction markers);
    // an aborted transaction leaves offsets a reader never sees (61..63 missing).
    let mut l = log(0, &[None, None, None]);
    l.extend(log(3, &[Some(0), Some(2), Some(7), None, Some(8)]));
    l.extend(log(60, &[Some(9)]));
    l.extend(log(64, &[Some(10), Some(12)]));
    let end = 66;
    assert_eq!(by_definition(&l, 0, Some(13), end), Translation::At(3));
    assert_eq!(by_definition(&l, 1, Some(13), end), Translation::At(4));
    assert_eq!(by_definition(&l, 3, Some(13), end), Translation::At(5));
    assert_eq!(by_definition(&l, 9, Some(13), end), Translation::At(60));
    assert_eq!(by_definition(&l, 11, Some(13), end), Translation::At(65));
    // At the end: copied up to 13 (a marker at 12 or a record skipped as a loop).
    assert_eq!(by_definition(&l, 13, Some(13), end), Translation::At(end));
    assert_eq!(by_definition(&l, 14, Some(13), end), Translation::Ahead);
}

#[test]
fn issue_11_translation_of_empty_partitions_and_the_ends() {
    let empty: Log = Vec::new();
    assert_eq!(by_definition(&empty, 0, Some(0), 0), Translation::At(0));
    assert_eq!(by_definition(&empty, 0, None, 0), Translation::Ahead);
    // Only foreign records: X=0 with nothing to copy is their end.
    let foreign = log(0, &[None, None]);
    assert_eq!(by_definition(&foreign, 0, Some(0), 2), Translation::At(2));
    assert_eq!(by_definition(&foreign, 1, Some(0), 2), Translation::Ahead);
}

#[test]
fn issue_11_the_index_gives_the_same_answer_reading_one_interval() {
    // Foreign records; run 1 (t0=5) copies 0..300 in commits of 50 but dies at 260 with its
    // last entry at 250; run 2 (t0=265) copies 250..1000 again; foreign records in between.
    let mut l = log(0, &[None; 5]);
    l.extend(log(5, &ours(0..260)));
    l.extend(log(265, &[None]));
    l.extend(log(266, &ours(250..1000)));
    let end = 266 + 750;
    let mut entries = entries_of(&l, 5, 255, 50, 200);
    entries.extend(entries_of(&l, 266, end, 50, 1000));
    for x in [
        0, 1, 49, 50, 199, 250, 255, 259, 260, 261, 500, 999, 1000, 1001,
    ] {
        let want = by_definition(&l, x, Some(1000), end);
        let (got, read) = by_index(&l, &entries, x, end);
        assert_eq!(got, want, "x={x}");
        // The gap before run 1, the dead run's tail after its last entry, and one commit.
        assert!(read <= 5 + 10 + 50 + 1, "x={x}: read {read}");
    }
    assert_eq!(by_index(&l, &entries, 1001, end).0, Translation::Ahead);
}

#[test]
fn issue_11_compacted_entries_still_translate_exactly() {
    // A commit every 10 records, compaction keeps one entry per writer and bucket of 4096.
    let l = log(0, &ours(0..20_000));
    let all = entries_of(&l, 0, 20_000, 10, 20_000);
    let mut kept: BTreeMap<i64, Entry> = BTreeMap::new();
    for e in all {
        kept.insert(e.trail.map_or(-1, |t| t.m >> BUCKET_BITS), e);
    }
    let kept: Vec<Entry> = kept.into_values().collect();
    assert_eq!(kept.len(), 5);
    for x in [0, 4095, 4096, 9000, 19_999, 20_000] {
        let (got, read) = by_index(&l, &kept, x, 20_000);
        assert_eq!(got, by_definition(&l, x, Some(20_000), 20_000), "x={x}");
        assert!(read <= 4096 + 10, "x={x}: read {read}");
    }
}

#[test]
fn issue_11_ranges_without_entries_read_everything() {
    assert_eq!(ranges(&[], 5), vec![(0, None)]);
}

#[test]
fn issue_18_a_record_without_origin_is_not_skipped_by_translation() {
    let run = |recs: &[(i64, Option<Option<i64>>)], x: i64| {
        let mut s = Search::default();
        recs.iter()
            .find_map(|(t, o)| s.record(*t, *o, x))
            .or(s.leftover())
    };
    // Ours at 10 (origin 4), a copy sent without its header at 11, ours at 12 (origin 6).
    let recs = [(10, Some(Some(4))), (11, None), (12, Some(Some(6)))];
    assert_eq!(run(&recs, 5), Some(11));
    assert_eq!(run(&recs, 6), Some(11));
    assert_eq!(run(&recs, 4), Some(10));
    // Another writer's records (an origin, not ours) change nothing.
    let recs = [(0, Some(Some(1))), (1, Some(None)), (2, Some(Some(3)))];
    assert_eq!(run(&recs, 2), Some(2));
    // Nothing of ours at or past x, but a record without origin after ours: land there.
    assert_eq!(run(&[(0, Some(Some(1))), (1, None)], 2), Some(1));
    assert_eq!(run(&[(0, Some(Some(1)))], 2), None);
    // Records without origin before any of ours are another writer's.
    assert_eq!(run(&[(0, None), (1, Some(Some(5)))], 2), Some(1));
}
