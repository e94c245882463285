//! When the copy loops of both engines do their periodic work (serve delivery reports, then
//! check the commit interval, the positions index, the metrics snapshot, discovery and the
//! transaction's age): every [`RECORDS`] records, or once [`PERIOD`] passed, whichever comes
//! first (pure, unit-tested).
//!
//! By count alone, a slow copy (a rate limit, or a trickle that never leaves the source idle)
//! did its periodic work once every 256 records: at 20 records/s an at-least-once commit
//! every 13 s whatever `--commit-interval` said, exactly-once transactions that outlived the
//! broker's transaction timeout, and a `/healthz` that saw no progress (issue 18). Reading the
//! clock costs a few nanoseconds a record; the work itself stays batched.

use std::time::{Duration, Instant};

/// Records between two rounds of periodic work on a busy copy.
pub const RECORDS: u32 = 256;

/// The longest a copy that is moving goes without periodic work. Shorter than any interval
/// the work checks (`--commit-interval`, `--txn-max-time`, the 1 s metrics snapshot) by a
/// wide margin, so they are late by at most this.
pub const PERIOD: Duration = Duration::from_millis(20);

/// Counts records and says when periodic work is due.
#[derive(Debug, Clone)]
pub struct Ticker {
    records: u32,
    last: Instant,
}

impl Ticker {
    pub fn new(now: Instant) -> Self {
        Ticker {
            records: 0,
            last: now,
        }
    }

    /// One record was handled at `now`: true when periodic work is due (and the count and
    /// the clock start again).
    pub fn record(&mut self, now: Instant) -> bool {
        self.records += 1;
        if self.records < RECORDS && now.saturating_duration_since(self.last) < PERIOD {
            return false;
        }
        self.records = 0;
        self.last = now;
        true
    }

    /// Periodic work was done outside [`Ticker::record`] (an idle poll does it every time).
    pub fn done(&mut self, now: Instant) {
        self.records = 0;
        self.last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_18_a_busy_copy_ticks_every_256_records() {
        let t0 = Instant::now();
        let mut t = Ticker::new(t0);
        let due: Vec<usize> = (1..=1024)
            .filter(|_| t.record(t0 + Duration::from_millis(1)))
            .collect();
        assert_eq!(due, vec![256, 512, 768, 1024]);
    }

    #[test]
    fn issue_18_a_slow_copy_ticks_by_time() {
        // 20 records a second: every record comes after more than PERIOD.
        let t0 = Instant::now();
        let mut t = Ticker::new(t0);
        for i in 1..=10u32 {
            assert!(t.record(t0 + Duration::from_millis(50) * i), "record {i}");
        }
        // Within PERIOD of the last tick: not yet.
        let last = t0 + Duration::from_millis(500);
        assert!(!t.record(last + PERIOD / 2));
        assert!(t.record(last + PERIOD));
        // Work done elsewhere starts the period again.
        let later = last + PERIOD * 3;
        t.done(later);
        assert!(!t.record(later + PERIOD / 2));
    }
}
