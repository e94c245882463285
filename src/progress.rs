//! What a run shows while it runs: the live display when stderr is a terminal, one progress
//! line per interval otherwise (journald, cron mail), and log lines that never tear the
//! display. Lines that are not on a terminal carry a time stamp.

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::report::{Counters, PartitionEnd, Stall};

/// The bar currently drawn, if any: `say` prints above it instead of through it.
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Prints one line on stderr without tearing the progress display; time-stamped when stderr is
/// not a terminal.
pub fn say(line: &str) {
    emit(line, !std::io::stderr().is_terminal());
}

fn emit(line: &str, stamped: bool) {
    let line = if stamped {
        format!(
            "{} {line}",
            humantime::format_rfc3339_millis(SystemTime::now())
        )
    } else {
        line.to_string()
    };
    let active = ACTIVE.lock().unwrap_or_else(|e| e.into_inner());
    match active.as_ref() {
        Some(bar) => bar.println(line),
        None => eprintln!("{line}"),
    }
}

/// A running display or progress-line writer; `finish` ends it.
pub struct Live {
    bar: Option<ProgressBar>,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

/// Unless `quiet`: the display when stderr is a terminal, else one line every `every`.
/// Warnings (e.g. a deleted source topic, a target that stopped acknowledging for half of
/// `delivery_timeout`) are printed in every mode, `quiet` included.
pub fn start(
    progress: Arc<Counters>,
    quiet: bool,
    every: Duration,
    delivery_timeout: Duration,
) -> Option<Live> {
    let stop = Arc::new(AtomicBool::new(false));
    let warn = Warn { delivery_timeout };
    if quiet {
        let stop2 = stop.clone();
        let ticker = std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                warn.notices(&progress);
            }
            warn.notices(&progress);
        });
        return Some(Live {
            bar: None,
            stop,
            ticker: Some(ticker),
        });
    }
    if !std::io::stderr().is_terminal() {
        let stop2 = stop.clone();
        let ticker = std::thread::spawn(move || lines(&progress, &stop2, every, &warn));
        return Some(Live {
            bar: None,
            stop,
            ticker: Some(ticker),
        });
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4))
        .with_style(
            ProgressStyle::with_template("{spinner} {elapsed_precise} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
    *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
    let ticker = {
        let (bar, stop) = (bar.clone(), stop.clone());
        std::thread::spawn(move || tick(&bar, &progress, &stop, &warn))
    };
    Some(Live {
        bar: Some(bar),
        stop,
        ticker: Some(ticker),
    })
}

/// Records per second over the last few seconds: a copy that goes idle shows 0/s within
/// [`RATE_SPAN`], not an average since start that only slowly falls.
struct Rate {
    span: Duration,
    /// (when, records acknowledged then), oldest first; the first is the newest sample at
    /// least `span` old, once there is one.
    samples: VecDeque<(Instant, u64)>,
}

const RATE_SPAN: Duration = Duration::from_secs(5);

impl Rate {
    fn new(span: Duration) -> Self {
        Rate {
            span,
            samples: VecDeque::new(),
        }
    }

    fn sample(&mut self, now: Instant, records: u64) -> f64 {
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
    /// partitions`; the parts that would say nothing are left out.
    fn line(&self) -> String {
        let mut out = format!(
            "{} records  {}  {}/s",
            count(self.records),
            size(self.bytes),
            count(self.per_sec.round() as u64)
        );
        if let Some(left) = self.left {
            out.push_str(&format!("  {} to go", count(left)));
        }
        if self.unacknowledged > 0 {
            out.push_str(&format!("  {} unacknowledged", count(self.unacknowledged)));
        }
        // Records that came from the target (loops), only when there are any.
        if self.skipped > 0 {
            out.push_str(&format!("  {} skipped", count(self.skipped)));
        }
        out.push_str(&format!(
            "  committed {}/{} partitions",
            self.committed, self.assigned
        ));
        if self.throttled > 0.0 {
            out.push_str(&format!("  throttled {:.1} s", self.throttled));
        }
        out
    }
}

/// What the run is doing: the phase it waits in, or its figures.
fn message(p: &Counters, per_sec: f64) -> String {
    match p.waiting() {
        Some(what) => format!("{what}…"),
        None => Figures::of(p, per_sec).line(),
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

/// What the display's thread warns about besides the run's notices.
struct Warn {
    delivery_timeout: Duration,
}

impl Warn {
    /// Prints the warnings the run raised since the last call, and whether the target stopped
    /// (or started again) acknowledging: a stall is told at half of `--delivery-timeout`, while
    /// there is still time to act, not only when the run fails.
    fn notices(&self, p: &Counters) {
        for line in p.take_notices() {
            say(&format!("kreplicate: warning: {line}"));
        }
        match p.check_stall(self.delivery_timeout / 2) {
            Some(Stall::Began { records, waited }) => say(&format!(
                "kreplicate: warning: target has not acknowledged {} record{} for {} s (a record not acknowledged within --delivery-timeout {} fails the run)",
                count(records),
                if records == 1 { "" } else { "s" },
                waited.as_secs(),
                humantime::format_duration(self.delivery_timeout)
            )),
            Some(Stall::Ended { waited }) => say(&format!(
                "kreplicate: target acknowledges again, after {} s",
                waited.as_secs()
            )),
            None => {}
        }
    }
}

fn tick(bar: &ProgressBar, p: &Counters, stop: &AtomicBool, warn: &Warn) {
    let mut rate = Rate::new(RATE_SPAN);
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(250));
        warn.notices(p);
        let per_sec = rate.sample(Instant::now(), p.records.load(Ordering::Relaxed));
        bar.set_message(message(p, per_sec));
        bar.tick();
    }
    warn.notices(p);
}

/// Not on a terminal: one time-stamped line per interval, so journald shows progress.
fn lines(p: &Counters, stop: &AtomicBool, every: Duration, warn: &Warn) {
    // Sampled every tick, so that the rate covers the last few seconds whatever `every` is.
    let mut rate = Rate::new(RATE_SPAN);
    rate.sample(Instant::now(), 0);
    let mut next = Instant::now() + every;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        warn.notices(p);
        let per_sec = rate.sample(Instant::now(), p.records.load(Ordering::Relaxed));
        if Instant::now() >= next {
            emit(&format!("kreplicate: {}", message(p, per_sec)), true);
            next = Instant::now() + every;
        }
    }
    warn.notices(p);
}

impl Live {
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
            *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }
}

/// 1234567 → "1,234,567".
fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `-v`/`RUST_LOG` diagnostics: log records (ours and librdkafka's) as lines on stderr.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::max_level()
    }
    fn log(&self, r: &log::Record<'_>) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let msg = r.args().to_string();
        // Not errors: the partition-EOF events kreplicate asks for, and rust-rdkafka's drop
        // trying to close a consumer that kreplicate already closed.
        if r.target().starts_with("rdkafka::")
            && (msg.contains("PartitionEOF")
                || msg.starts_with("Failed to close consumer queue on drop"))
        {
            return;
        }
        // rust-rdkafka starts librdkafka's lines with the target's name again.
        let msg = msg.strip_prefix("librdkafka: ").unwrap_or(&msg);
        emit(
            &format!("kreplicate: {} {}: {msg}", r.level(), r.target()),
            true,
        );
    }
    fn flush(&self) {}
}

/// Level from `-v` counts (1 info, 2 debug, 3 trace); without `-v`, from `RUST_LOG` when it
/// is set to a level.
pub fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => std::env::var("RUST_LOG")
            .ok()
            .and_then(|v| v.trim().parse::<log::LevelFilter>().ok())
            .unwrap_or(log::LevelFilter::Off),
        1 => log::LevelFilter::Info,
        2 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    };
    if level != log::LevelFilter::Off && log::set_logger(&StderrLog).is_ok() {
        log::set_max_level(level);
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
            f.line(),
            "170,000 records  37 KB  34,012/s  1,204 to go  100 unacknowledged  committed 4/5 partitions"
        );
        let quiet = Figures {
            throttled: 2.0,
            skipped: 3,
            ..Figures::default()
        };
        assert_eq!(
            quiet.line(),
            "0 records  0 B  0/s  3 skipped  committed 0/0 partitions  throttled 2.0 s"
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
