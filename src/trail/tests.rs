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

/// Active-active (issue 18): two clusters, a copy each way, each record a content number.
#[derive(Default)]
struct Pair {
    /// Source A: (content, its offset on B when it was copied from B).
    a: Vec<(u32, Option<i64>)>,
    /// Target B: (content, its origin offset on A when it was copied from A).
    b: Vec<(u32, Option<i64>)>,
    /// The next record each copy reads: A→B on A, B→A on B.
    ab: usize,
    ba: usize,
    next: u32,
    restarted: bool,
}

impl Pair {
    /// `a`/`b`: an application writes there; `>`: A→B copies one record; `<`: B→A copies one
    /// (a record that came from the other side is skipped, as a loop); `R`/`r`: A→B/B→A
    /// restart two records back (at-least-once copies them again).
    fn run(&mut self, steps: &str) {
        for s in steps.chars() {
            match s {
                'a' | 'b' => {
                    self.next += 1;
                    let side = if s == 'a' { &mut self.a } else { &mut self.b };
                    side.push((self.next, None));
                }
                '>' if self.ab < self.a.len() => {
                    let (c, from_b) = self.a[self.ab];
                    if from_b.is_none() {
                        self.b.push((c, Some(self.ab as i64)));
                    }
                    self.ab += 1;
                }
                '<' if self.ba < self.b.len() => {
                    let (c, from_a) = self.b[self.ba];
                    if from_a.is_none() {
                        self.a.push((c, Some(self.ba as i64)));
                    }
                    self.ba += 1;
                }
                'R' | 'r' => {
                    let pos = if s == 'R' { &mut self.ab } else { &mut self.ba };
                    *pos = pos.saturating_sub(2);
                    self.restarted = true;
                }
                _ => {}
            }
        }
    }

    /// What `groups` computes for a group at `x` on A: the first copy, then the source read
    /// from `x` for records that came from B.
    fn translate(&self, x: i64) -> Translation {
        let log: Log = self
            .b
            .iter()
            .enumerate()
            .map(|(t, r)| (t as i64, r.1))
            .collect();
        let end = self.b.len() as i64;
        let copies = by_definition(&log, x, Some(self.ab as i64), end);
        let Translation::At(bound) = copies else {
            return copies;
        };
        let mut seen = Returned::new(bound);
        for (_, on_b) in self.a.iter().skip(x as usize) {
            if seen.see(*on_b) {
                break;
            }
        }
        with_returned(copies, seen.least)
    }

    /// The least position on B of A's records from `x` on, or B's end (the definition).
    fn least_position(&self, x: i64) -> i64 {
        let copies = self
            .b
            .iter()
            .enumerate()
            .filter(|(_, r)| r.1.is_some_and(|o| o >= x));
        let returned = self.a.iter().skip(x as usize).filter_map(|r| r.1);
        copies
            .map(|(t, _)| t as i64)
            .chain(returned)
            .chain([self.b.len() as i64])
            .min()
            .unwrap_or_default()
    }

    /// A consumer at `x` on A, moved to `t` on B, misses none of A's records from `x` on
    /// (those A→B has read, and every one that came from B).
    fn misses(&self, x: i64, t: i64) -> Vec<u32> {
        let on_b: std::collections::HashSet<u32> =
            self.b.iter().skip(t as usize).map(|r| r.0).collect();
        self.a
            .iter()
            .enumerate()
            .skip(x as usize)
            .filter(|(s, r)| *s < self.ab || r.1.is_some())
            .map(|(_, r)| r.0)
            .filter(|c| !on_b.contains(c))
            .collect()
    }

    fn check(&self, steps: &str) {
        for x in 0..=self.ab as i64 {
            let Translation::At(t) = self.translate(x) else {
                panic!("{steps}: x {x} not translated");
            };
            assert_eq!(
                self.misses(x, t),
                Vec::<u32>::new(),
                "{steps}: x {x} at {t}"
            );
            let least = self.least_position(x);
            if self.restarted {
                // A record copied again after a restart may stand earlier than the one read
                // first; the consumer has that record already.
                assert!(t >= least, "{steps}: x {x}: {t} before {least}");
            } else {
                assert_eq!(t, least, "{steps}: x {x}: exact");
            }
        }
    }
}

#[test]
fn issue_18_translation_counts_records_that_came_from_the_target() {
    // B's record reaches A late (after A's own record was copied to B): a group on A before
    // it must start on B before the original, not at the copy of A's record.
    let cases = [
        "b a > <>",
        "bbb aa >> <<< >>>",
        "ab<>ab><>ab<><>",
        "aaa bbb > < > < > < >>> <<<",
        "b<a>b<a>b<a>b<a>",
        "a>b<a>b<ab><a><b><",
        "bbbb<<<<aaaa>>>>>>>>",
        "aaaabbbb>>>><<<<>>>><<<<",
        "ab ab ab >>> <<< ab >> << >>> <<<",
        "ab>R>><<ab<r<<>>>>",
    ];
    for steps in cases {
        let mut pair = Pair::default();
        pair.run(steps);
        pair.check(steps);
    }
}

#[test]
fn issue_18_random_interleavings_lose_nothing() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for round in 0..300 {
        let mut steps = String::new();
        for _ in 0..40 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Restarts in one round out of three.
            let pick = if round % 3 == 0 { seed % 7 } else { seed % 6 };
            steps.push(['a', 'b', '>', '<', '>', '<', 'R'][pick as usize]);
        }
        let mut pair = Pair::default();
        pair.run(&steps);
        pair.check(&steps);
        // Every copy caught up: still exact.
        pair.run(&">".repeat(80));
        pair.run(&"<".repeat(80));
        pair.check(&steps);
    }
}

#[test]
fn issue_18_without_records_from_the_target_nothing_changes() {
    assert_eq!(with_returned(Translation::At(7), None), Translation::At(7));
    assert_eq!(
        with_returned(Translation::At(7), Some(3)),
        Translation::At(3)
    );
    assert_eq!(
        with_returned(Translation::At(3), Some(7)),
        Translation::At(3)
    );
    assert_eq!(
        with_returned(Translation::Ahead, Some(3)),
        Translation::Ahead
    );
    let mut seen = Returned::new(10);
    assert!(!seen.see(None));
    assert!(!seen.see(Some(6)));
    assert!(!seen.see(Some(4)));
    assert!(seen.see(Some(10)));
    assert_eq!(seen.least, Some(4));
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
