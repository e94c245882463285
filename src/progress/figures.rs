//! What the progress line says: the rate over the last seconds, the run's figures, sizes and
//! counts in human units (pure but for reading the counters).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::report::{Counters, PartitionEnd};
pub(super) use crate::table::number as count;

/// Records per second over the last few seconds: a copy that goes idle shows 0/s within
/// [`RATE_SPAN`], not an average since start that only slowly falls.
pub(super) struct Rate {
    span: Duration,
    /// (when, records acknowledged then), oldest first; the first is the newest sample at
    /// least `span` old, once there is one.
    samples: VecDeque<(Instant, u64)>,
}

pub(super) const RATE_SPAN: Duration = Duration::from_secs(5);

impl Rate {
    pub(super) fn new(span: Duration) -> Self {
        Rate {
            span,
            samples: VecDeque::new(),
        }
    }

    pub(super) fn sample(&mut self, now: Instant, records: u64) -> f64 {
        self.samples.push_back((now, records));
        while self
            .samples
            .get(1)
            .is_some_and(|(at, _)| now.saturating_duration_since(*at) >= self.span)
        {
            self.samples.pop_front();
        }
        let Some(&(at, before)) = self.samples.front() else {
            return 0.0;
        };
        let dt = now.saturating_duration_since(at).as_secs_f64();
        if dt <= 0.0 {
            return 0.0;
        }
        records.saturating_sub(before) as f64 / dt
    }
}

/// What the progress line shows.
#[derive(Debug, Default, PartialEq)]
struct Figures {
    records: u64,
    bytes: u64,
    per_sec: f64,
    /// Over the assigned partitions whose end is known: end minus the acknowledged position
    /// (exactly-once: the committed one).
    left: Option<u64>,
    /// Sent and not yet acknowledged by the target.
    unacknowledged: u64,
    committed: u64,
    assigned: u64,
    skipped: u64,
    throttled: f64,
}

impl Figures {
    fn of(p: &Counters, per_sec: f64) -> Self {
        let parts = p.partitions();
        let lags: Vec<i64> = parts.values().filter_map(PartitionEnd::lag).collect();
        Figures {
            records: p.records.load(Ordering::Relaxed),
            bytes: p.bytes.load(Ordering::Relaxed),
            per_sec,
            left: (!lags.is_empty()).then(|| lags.iter().map(|&l| l.max(0) as u64).sum()),
            unacknowledged: p.in_flight().0,
            committed: p.committed.load(Ordering::Relaxed),
            assigned: p.assigned.load(Ordering::Relaxed),
            skipped: p.skipped.load(Ordering::Relaxed),
            throttled: p.throttled_seconds(),
        }
    }

    /// `170,000 records  68 MB  34,012/s  1,204 to go  100 unacknowledged  committed 4/4
    /// partitions`; the parts that would say nothing are left out. Within `width` columns (a
    /// narrow terminal), the least telling parts go first, whole (issue 35: the terminal cut
    /// the line mid-word, `committed` included): the unacknowledged, the size, the skipped,
    /// the throttled time, the rate, then `committed 4/4 partitions` says `committed 4/4`.
    fn line(&self, width: Option<usize>) -> String {
        // (drop rank: lower goes first, text), in the order shown.
        let mut parts: Vec<(u8, String)> = vec![(9, format!("{} records", count(self.records)))];
        parts.push((2, size(self.bytes)));
        parts.push((5, format!("{}/s", count(self.per_sec.round() as u64))));
        if let Some(left) = self.left {
            parts.push((8, format!("{} to go", count(left))));
        }
        if self.unacknowledged > 0 {
            parts.push((1, format!("{} unacknowledged", count(self.unacknowledged))));
        }
        // Records that came from the target (loops), only when there are any.
        if self.skipped > 0 {
            parts.push((3, format!("{} skipped", count(self.skipped))));
        }
        // Not before partitions are assigned: "committed 0/0" would read as nothing committed.
        if self.assigned > 0 {
            let c = format!("committed {}/{}", self.committed, self.assigned);
            parts.push((7, format!("{c} partitions")));
        }
        if self.throttled > 0.0 {
            parts.push((4, format!("throttled {:.1} s", self.throttled)));
        }
        let join = |parts: &[(u8, String)]| {
            parts
                .iter()
                .map(|(_, t)| t.as_str())
                .collect::<Vec<_>>()
                .join("  ")
        };
        let Some(width) = width else {
            return join(&parts);
        };
        while join(&parts).len() > width {
            let only_telling = parts.iter().all(|(r, _)| *r >= 7);
            let long = parts.iter_mut().find(|(_, t)| t.ends_with(" partitions"));
            if let (true, Some(c)) = (only_telling, long) {
                c.1 = c.1.trim_end_matches(" partitions").to_string();
                continue;
            }
            let Some(lowest) = parts
                .iter()
                .enumerate()
                .filter(|(_, (r, _))| *r < 9)
                .min_by_key(|(_, (r, _))| *r)
                .map(|(i, _)| i)
            else {
                break;
            };
            parts.remove(lowest);
        }
        join(&parts)
    }
}

/// What the run is doing: the phase it waits in, or its figures (within `width` columns when
/// a terminal says how wide it is).
pub(super) fn message(p: &Counters, per_sec: f64, width: Option<usize>) -> String {
    match p.waiting() {
        Some(what) => format!("{what}…"),
        None => Figures::of(p, per_sec).line(width),
    }
}

/// Bytes in decimal units, two or three figures: `512 B`, `37 KB`, `1.2 MB`, `68 MB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KB", "MB", "GB", "TB", "PB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1000.0;
    let mut unit = 0;
    // Past 999.5 the rounded figure would read 1000: the next unit says it shorter.
    while v >= 999.5 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    if v < 9.95 {
        format!("{v:.1} {}", UNITS[unit])
    } else {
        format!("{v:.0} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_22_sizes_read_in_human_units() {
        let cases = [
            (0, "0 B"),
            (999, "999 B"),
            (1000, "1.0 KB"),
            (37_412, "37 KB"),
            (999_499, "999 KB"),
            (999_500, "1.0 MB"),
            (1_234_567, "1.2 MB"),
            (68_000_000, "68 MB"),
            (5_300_000_000, "5.3 GB"),
        ];
        for (bytes, want) in cases {
            assert_eq!(size(bytes), want, "{bytes}");
        }
    }

    #[test]
    fn issue_22_the_rate_covers_the_last_seconds_only() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut r = Rate::new(Duration::from_secs(5));
        assert_eq!(r.sample(at(0), 0), 0.0);
        // 1,000 records a second for 10 s.
        let mut last = 0.0;
        for s in 1..=10 {
            last = r.sample(at(s * 1000), s * 1000);
        }
        assert!((last - 1000.0).abs() < 1e-6, "{last}");
        // Then idle: the rate falls to 0 within the span, not by halves of an average.
        let idle: Vec<f64> = (11..=16).map(|s| r.sample(at(s * 1000), 10_000)).collect();
        assert!(idle.windows(2).all(|w| w[1] <= w[0]), "{idle:?}");
        assert_eq!(idle[4], 0.0, "{idle:?}");
        // A throttled copy at 200/s reads 200/s once the span holds only it.
        let mut records = 10_000;
        for s in 17..=30 {
            records += 200;
            last = r.sample(at(s * 1000), records);
        }
        assert!((last - 200.0).abs() < 1e-6, "{last}");
    }

    #[test]
    fn issue_22_the_line_shows_what_is_left_unacknowledged_and_committed() {
        let f = Figures {
            records: 170_000,
            bytes: 37_412,
            per_sec: 34_011.6,
            left: Some(1204),
            unacknowledged: 100,
            committed: 4,
            assigned: 5,
            ..Figures::default()
        };
        assert_eq!(
            f.line(None),
            "170,000 records  37 KB  34,012/s  1,204 to go  100 unacknowledged  committed 4/5 partitions"
        );
        // Issue 35: a narrow terminal loses the least telling parts whole, never a word.
        let fits = |w: usize| {
            let line = f.line(Some(w));
            assert!(line.len() <= w || w < 16, "{w}: {line}");
            line
        };
        assert_eq!(
            fits(80),
            "170,000 records  37 KB  34,012/s  1,204 to go  committed 4/5 partitions"
        );
        assert_eq!(fits(50), "170,000 records  1,204 to go  committed 4/5");
        assert_eq!(fits(30), "170,000 records  1,204 to go");
        assert_eq!(fits(10), "170,000 records");
        let quiet = Figures {
            throttled: 2.0,
            skipped: 3,
            ..Figures::default()
        };
        assert_eq!(
            quiet.line(None),
            "0 records  0 B  0/s  3 skipped  throttled 2.0 s"
        );
    }

    #[test]
    fn issue_22_records_left_sum_end_minus_acknowledged_over_partitions() {
        let c = Counters::default();
        let part = |position, end| PartitionEnd {
            position: Some(position),
            end_offset: Some(end),
            ..PartitionEnd::default()
        };
        c.publish(
            std::collections::BTreeMap::from([
                (("t".to_string(), 0), part(100, 244)),
                (("t".to_string(), 1), part(50, 50)),
                (("t".to_string(), 2), PartitionEnd::default()),
            ]),
            0,
        );
        assert_eq!(Figures::of(&c, 0.0).left, Some(144));
        assert_eq!(Figures::of(&Counters::default(), 0.0).left, None);
    }

    #[test]
    fn thousands() {
        assert_eq!(super::count(0), "0");
        assert_eq!(super::count(999), "999");
        assert_eq!(super::count(1000), "1,000");
        assert_eq!(super::count(1234567), "1,234,567");
    }
}
