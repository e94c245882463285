//! Live progress on stderr (only when it is a terminal) and log lines that never tear it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::report::Counters;

/// The bar currently drawn, if any: `say` prints above it instead of through it.
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Prints one line on stderr without tearing the progress display.
pub fn say(line: &str) {
    let active = ACTIVE.lock().unwrap_or_else(|e| e.into_inner());
    match active.as_ref() {
        Some(bar) => bar.println(line),
        None => eprintln!("{line}"),
    }
}

/// A running display; `finish` removes it.
pub struct Live {
    bar: ProgressBar,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

/// Starts the display when stderr is a terminal and `quiet` is off.
pub fn start(progress: Arc<Counters>, quiet: bool) -> Option<Live> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4))
        .with_style(
            ProgressStyle::with_template("{spinner} {elapsed_precise} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
    *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let ticker = {
        let (bar, stop) = (bar.clone(), stop.clone());
        std::thread::spawn(move || tick(&bar, &progress, &stop))
    };
    Some(Live {
        bar,
        stop,
        ticker: Some(ticker),
    })
}

fn tick(bar: &ProgressBar, p: &Counters, stop: &AtomicBool) {
    let mut last = (Instant::now(), 0u64);
    let mut rate = 0.0f64;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(250));
        let records = p.records.load(Ordering::Relaxed);
        let bytes = p.bytes.load(Ordering::Relaxed);
        let dt = last.0.elapsed().as_secs_f64();
        if dt > 0.0 {
            // Smoothed records/s over the last few ticks.
            let now = (records - last.1) as f64 / dt;
            rate = if rate == 0.0 {
                now
            } else {
                0.7 * rate + 0.3 * now
            };
        }
        last = (Instant::now(), records);
        if let Some(what) = p.waiting() {
            bar.set_message(format!("{what}…"));
            bar.tick();
            continue;
        }
        let lag = p.lag.load(Ordering::Relaxed);
        let lag = if lag >= 0 {
            format!("  {} to go", count(lag as u64))
        } else {
            String::new()
        };
        bar.set_message(format!(
            "{} records  {:.1} MB  {}/s{lag}  committed {}/{} partitions",
            count(records),
            bytes as f64 / 1e6,
            count(rate as u64),
            p.committed.load(Ordering::Relaxed),
            p.assigned.load(Ordering::Relaxed),
        ));
        bar.tick();
    }
}

impl Live {
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        self.bar.finish_and_clear();
        *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = None;
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
        say(&format!("kreplicate: {} {}: {msg}", r.level(), r.target()));
    }
    fn flush(&self) {}
}

/// Level from `-v` counts (1 info, 2 debug, 3 trace), or from `RUST_LOG` when set to a level.
pub fn init_logging(verbose: u8) {
    let from_env = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.trim().parse::<log::LevelFilter>().ok());
    let level = from_env.unwrap_or(match verbose {
        0 => log::LevelFilter::Off,
        1 => log::LevelFilter::Info,
        2 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    });
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
