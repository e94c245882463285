//! When a copy loop does its periodic work, and its rate limit: the same in both engines.
//! Periodic work (serve delivery reports, then the engine's own checks) is due every
//! [`crate::tick::RECORDS`] records or [`crate::tick::PERIOD`], and at every poll without a
//! record; the metrics snapshot every second; discovery every `--refresh-topics`.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use rdkafka::producer::BaseProducer;

use crate::options::RunOptions;
use crate::report::Counters;
use crate::target::{self, Counted};
use crate::throttle::Throttle;
use crate::tick::Ticker;

/// How often the progress display and the metrics get a new snapshot of the positions.
const PUBLISH_EVERY: Duration = Duration::from_secs(1);

/// A copy loop's clock.
pub(in crate::engine) struct Clock {
    ticker: Ticker,
    last_publish: Instant,
    last_refresh: Instant,
    refresh_every: Option<Duration>,
}

impl Clock {
    pub(in crate::engine) fn new(opts: &RunOptions) -> Self {
        let now = Instant::now();
        Clock {
            ticker: Ticker::new(now),
            last_publish: now,
            last_refresh: now,
            refresh_every: opts.refresh_topics,
        }
    }

    /// One record was handled: true when periodic work is due, after serving the delivery
    /// reports that arrived.
    pub(in crate::engine) fn record<C: Counted>(&mut self, producer: &BaseProducer<C>) -> bool {
        let due = self.ticker.record(Instant::now());
        if due {
            target::serve_reports(producer);
        }
        due
    }

    /// A poll without a record: periodic work is due now; serves the delivery reports.
    pub(in crate::engine) fn idle<C: Counted>(&mut self, producer: &BaseProducer<C>) {
        target::serve_reports(producer);
        self.ticker.done(Instant::now());
    }

    /// True once a second: time for a new snapshot of the positions.
    pub(in crate::engine) fn should_publish(&mut self) -> bool {
        due(&mut self.last_publish, Some(PUBLISH_EVERY))
    }

    /// True every `--refresh-topics`: time to look at the source's topics again.
    pub(in crate::engine) fn should_refresh(&mut self) -> bool {
        due(&mut self.last_refresh, self.refresh_every)
    }

    /// The topics were looked at outside [`Clock::should_refresh`] (a source error).
    pub(in crate::engine) fn refreshed(&mut self) {
        self.last_refresh = Instant::now();
    }
}

/// True (and the clock starts again) once `every` passed since `last`.
fn due(last: &mut Instant, every: Option<Duration>) -> bool {
    let due = every.is_some_and(|every| last.elapsed() >= every);
    if due {
        *last = Instant::now();
    }
    due
}

/// `--max-bytes-per-sec` and `--max-records-per-sec`.
pub(in crate::engine) struct Pace(Throttle);

impl Pace {
    pub(in crate::engine) fn new(opts: &RunOptions) -> Self {
        let (bytes, records) = (opts.max_bytes_per_sec, opts.max_records_per_sec);
        Pace(Throttle::new(bytes, records, Instant::now()))
    }

    /// Whether a limit is set (then the loop serves partitions in turn, see `turns`).
    pub(in crate::engine) fn limited(&self) -> bool {
        self.0.is_limited()
    }

    /// After one record of `bytes` (see [`target::record_bytes`]): waits as long as the
    /// limits say, serving delivery reports meanwhile, and counts the wait.
    pub(in crate::engine) fn after<C: Counted>(
        &mut self,
        bytes: u64,
        producer: &BaseProducer<C>,
        stop: &AtomicBool,
        counters: &Counters,
    ) {
        if !self.0.is_limited() {
            return;
        }
        let wait = self.0.take(bytes, Instant::now());
        let waited = target::throttle_wait(producer, wait, stop);
        counters.add_throttled(waited);
    }
}
