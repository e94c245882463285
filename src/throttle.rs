//! The read side's rate limit (`--max-bytes-per-sec`, `--max-records-per-sec`): token
//! buckets that say how long to wait after a record (pure, unit-tested; the engines wait).
//!
//! A bucket may go into debt: a record is always taken whole, and the wait is what repays
//! the debt at the limit's rate. So the long-run rate is the limit exactly, a record larger
//! than the bucket never blocks forever, and a burst is at most one tenth of a second's
//! worth. Waiting happens after a record is handed to the producer and before the next is
//! read: nothing is committed early and nothing is dropped, only read later.

use std::time::{Duration, Instant};

/// The burst a full bucket allows, as time at the limit's rate.
const BURST: Duration = Duration::from_millis(100);

/// One limit: `rate` units per second.
#[derive(Debug, Clone)]
pub struct Bucket {
    rate: f64,
    capacity: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    /// A full bucket for `rate` (> 0) units per second.
    pub fn new(rate: u64, now: Instant) -> Self {
        let rate = rate.max(1) as f64;
        let capacity = (rate * BURST.as_secs_f64()).max(1.0);
        Bucket {
            rate,
            capacity,
            tokens: capacity,
            last: now,
        }
    }

    /// Takes `n` units at `now`; returns how long to wait before the next take.
    pub fn take(&mut self, n: u64, now: Instant) -> Duration {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now.max(self.last);
        self.tokens = (self.tokens + elapsed * self.rate).min(self.capacity) - n as f64;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / self.rate)
        }
    }
}

/// Both limits of a run; either may be absent.
#[derive(Debug, Clone, Default)]
pub struct Throttle {
    bytes: Option<Bucket>,
    records: Option<Bucket>,
}

impl Throttle {
    pub fn new(bytes_per_sec: Option<u64>, records_per_sec: Option<u64>, now: Instant) -> Self {
        Throttle {
            bytes: bytes_per_sec.map(|r| Bucket::new(r, now)),
            records: records_per_sec.map(|r| Bucket::new(r, now)),
        }
    }

    pub fn is_limited(&self) -> bool {
        self.bytes.is_some() || self.records.is_some()
    }

    /// One record of `bytes` read at `now`: how long to wait before reading the next.
    pub fn take(&mut self, bytes: u64, now: Instant) -> Duration {
        let b = self
            .bytes
            .as_mut()
            .map_or(Duration::ZERO, |b| b.take(bytes, now));
        let r = self
            .records
            .as_mut()
            .map_or(Duration::ZERO, |b| b.take(1, now));
        b.max(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds records of `size` as fast as the bucket allows for `secs` of simulated time and
    /// returns the achieved rate.
    fn simulate(rate: u64, size: u64, secs: f64) -> f64 {
        let start = Instant::now();
        let mut now = start;
        let mut b = Bucket::new(rate, now);
        let mut total = 0u64;
        while now.duration_since(start).as_secs_f64() < secs {
            total += size;
            now += b.take(size, now);
        }
        total as f64 / now.duration_since(start).as_secs_f64()
    }

    #[test]
    fn the_long_run_rate_is_the_limit() {
        for (rate, size) in [
            (20_000_000, 400),
            (20_000_000, 1_000_000),
            (1000, 1),
            (50, 7),
        ] {
            let got = simulate(rate, size, 30.0);
            let err = (got - rate as f64).abs() / rate as f64;
            assert!(err < 0.01, "rate {rate} size {size}: got {got}");
        }
    }

    #[test]
    fn a_full_bucket_allows_a_tenth_of_a_second_then_waits() {
        let t0 = Instant::now();
        let mut b = Bucket::new(1000, t0);
        assert_eq!(b.take(100, t0), Duration::ZERO);
        assert_eq!(b.take(50, t0), Duration::from_millis(50));
        // After the wait the debt is repaid; an idle second refills only up to the burst.
        let later = t0 + Duration::from_secs(10);
        assert_eq!(b.take(100, later), Duration::ZERO);
        assert_eq!(b.take(1, later), Duration::from_millis(1));
    }

    #[test]
    fn a_record_larger_than_the_bucket_waits_its_own_time() {
        let t0 = Instant::now();
        let mut b = Bucket::new(1000, t0);
        assert_eq!(b.take(2100, t0), Duration::from_secs(2));
    }

    #[test]
    fn the_stricter_limit_decides() {
        let t0 = Instant::now();
        let mut t = Throttle::new(Some(1_000_000), Some(10), t0);
        assert!(t.is_limited());
        assert_eq!(t.take(10, t0), Duration::ZERO);
        // The record bucket holds one record (a tenth of a second at 10/s).
        assert_eq!(t.take(10, t0), Duration::from_millis(100));
        let mut none = Throttle::new(None, None, t0);
        assert!(!none.is_limited());
        assert_eq!(none.take(u64::MAX, t0), Duration::ZERO);
    }
}
