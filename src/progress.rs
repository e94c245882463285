//! What a run shows while it runs: the live display when stderr is a terminal, one progress
//! line per interval otherwise (journald, cron mail), and log lines that never tear the
//! display. Lines that are not on a terminal carry a time stamp.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::report::Counters;

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
/// Warnings (e.g. a deleted source topic) are printed in every mode, `quiet` included.
pub fn start(progress: Arc<Counters>, quiet: bool, every: Duration) -> Option<Live> {
    let stop = Arc::new(AtomicBool::new(false));
    if quiet {
        let stop2 = stop.clone();
        let ticker = std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                notices(&progress);
            }
            notices(&progress);
        });
        return Some(Live {
            bar: None,
            stop,
            ticker: Some(ticker),
        });
    }
    if !std::io::stderr().is_terminal() {
        let stop2 = stop.clone();
        let ticker = std::thread::spawn(move || lines(&progress, &stop2, every));
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
        std::thread::spawn(move || tick(&bar, &progress, &stop))
    };
    Some(Live {
        bar: Some(bar),
        stop,
        ticker: Some(ticker),
    })
}

/// Records per second, smoothed over the last few samples.
#[derive(Default)]
struct Rate {
    last: Option<(Instant, u64)>,
    per_sec: f64,
}

impl Rate {
    fn sample(&mut self, records: u64) -> f64 {
        if let Some((at, before)) = self.last {
            let dt = at.elapsed().as_secs_f64();
            if dt > 0.0 {
                let now = records.saturating_sub(before) as f64 / dt;
                self.per_sec = if self.per_sec == 0.0 {
                    now
                } else {
                    0.7 * self.per_sec + 0.3 * now
                };
            }
        }
        self.last = Some((Instant::now(), records));
        self.per_sec
    }
}

/// What the run is doing: the phase it waits in, or its counters.
fn message(p: &Counters, rate: f64) -> String {
    if let Some(what) = p.waiting() {
        return format!("{what}…");
    }
    let lag = p.lag.load(Ordering::Relaxed);
    let lag = if lag >= 0 {
        format!("  {} to go", count(lag as u64))
    } else {
        String::new()
    };
    let throttled = p.throttled_seconds();
    let throttled = if throttled > 0.0 {
        format!("  throttled {throttled:.1} s")
    } else {
        String::new()
    };
    // Records that came from the target (loops), only when there are any.
    let skipped = match p.skipped.load(Ordering::Relaxed) {
        0 => String::new(),
        n => format!("  {} skipped", count(n)),
    };
    format!(
        "{} records  {:.1} MB  {}/s{lag}{skipped}  committed {}/{} partitions{throttled}",
        count(p.records.load(Ordering::Relaxed)),
        p.bytes.load(Ordering::Relaxed) as f64 / 1e6,
        count(rate as u64),
        p.committed.load(Ordering::Relaxed),
        p.assigned.load(Ordering::Relaxed),
    )
}

/// Prints the warnings the run raised since the last call.
fn notices(p: &Counters) {
    for line in p.take_notices() {
        say(&format!("kreplicate: warning: {line}"));
    }
}

fn tick(bar: &ProgressBar, p: &Counters, stop: &AtomicBool) {
    let mut rate = Rate::default();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(250));
        notices(p);
        let per_sec = rate.sample(p.records.load(Ordering::Relaxed));
        bar.set_message(message(p, per_sec));
        bar.tick();
    }
    notices(p);
}

/// Not on a terminal: one time-stamped line per interval, so journald shows progress.
fn lines(p: &Counters, stop: &AtomicBool, every: Duration) {
    let mut rate = Rate::default();
    rate.sample(0);
    let mut next = Instant::now() + every;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        notices(p);
        if Instant::now() >= next {
            let per_sec = rate.sample(p.records.load(Ordering::Relaxed));
            emit(&format!("kreplicate: {}", message(p, per_sec)), true);
            next = Instant::now() + every;
        }
    }
    notices(p);
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
    #[test]
    fn thousands() {
        assert_eq!(super::count(0), "0");
        assert_eq!(super::count(999), "999");
        assert_eq!(super::count(1000), "1,000");
        assert_eq!(super::count(1234567), "1,234,567");
    }
}
