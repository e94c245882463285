//! What a run shows while it runs: the live display when stderr is a terminal, one progress
//! line per interval otherwise (journald, cron mail), and log lines that never tear the
//! display. Lines that are not on a terminal carry a time stamp.
//!
//! * this module: the display's thread, [`start`] and [`Live`];
//! * `figures`: what the progress line says (rate, figures, sizes; pure);
//! * `lines` (a leaf beneath every layer): [`say`], log records, and printing above the bar.

mod figures;

use std::cell::Cell;
use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub use self::figures::size;
use self::figures::{count, message, Rate, RATE_SPAN};
use crate::lines::{draw_above, emit};
pub use crate::lines::{init_logging, say};
use crate::report::{Counters, Stall};
use crate::stop::Stop;

/// A running display or progress-line writer; `finish` ends it.
pub struct Live {
    bar: Option<ProgressBar>,
    stop: Arc<Stop>,
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
    let stop = Arc::new(Stop::default());
    let warn = Warn {
        delivery_timeout,
        errors_before: Cell::new(0),
    };
    if quiet {
        let stop2 = stop.clone();
        let ticker = std::thread::spawn(move || {
            while !stop2.wait(Duration::from_millis(100)) {
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
    draw_above(Some(bar.clone()));
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

/// What the display's thread warns about besides the run's notices.
struct Warn {
    delivery_timeout: Duration,
    /// Failed deliveries when the stall began: whether the target acknowledged the records
    /// it held, or they failed.
    errors_before: Cell<u64>,
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
            Some(Stall::Began { records, waited }) => {
                self.errors_before
                    .set(p.delivery_errors.load(Ordering::Relaxed));
                say(&format!(
                    "kreplicate: warning: target has not acknowledged {} record{} for {} s (a record not acknowledged within --delivery-timeout {} fails the run)",
                    count(records),
                    if records == 1 { "" } else { "s" },
                    waited.as_secs(),
                    humantime::format_duration(self.delivery_timeout)
                ))
            }
            // Not when they failed instead: the run's error says so.
            Some(Stall::Ended { waited })
                if p.delivery_errors.load(Ordering::Relaxed) == self.errors_before.get() =>
            {
                say(&format!(
                    "kreplicate: target acknowledges again, after {} s",
                    waited.as_secs()
                ))
            }
            Some(Stall::Ended { .. }) | None => {}
        }
    }
}

fn tick(bar: &ProgressBar, p: &Counters, stop: &Stop, warn: &Warn) {
    let mut rate = Rate::new(RATE_SPAN);
    while !stop.wait(Duration::from_millis(250)) {
        warn.notices(p);
        let per_sec = rate.sample(Instant::now(), p.records.load(Ordering::Relaxed));
        // What is left of the terminal's width after "⠋ 00:01:23 " (and a column to spare).
        let width = console::Term::stderr()
            .size_checked()
            .map(|(_, cols)| usize::from(cols).saturating_sub(12));
        bar.set_message(message(p, per_sec, width));
        bar.tick();
    }
    warn.notices(p);
}

/// Not on a terminal: one time-stamped line per interval, so journald shows progress.
fn lines(p: &Counters, stop: &Stop, every: Duration, warn: &Warn) {
    // Sampled every tick, so that the rate covers the last few seconds whatever `every` is.
    let mut rate = Rate::new(RATE_SPAN);
    rate.sample(Instant::now(), 0);
    let mut next = Instant::now() + every;
    while !stop.wait(Duration::from_millis(100)) {
        warn.notices(p);
        let per_sec = rate.sample(Instant::now(), p.records.load(Ordering::Relaxed));
        if Instant::now() >= next {
            emit(&format!("kreplicate: {}", message(p, per_sec, None)), true);
            next = Instant::now() + every;
        }
    }
    warn.notices(p);
}

impl Live {
    pub fn finish(mut self) {
        self.stop.raise();
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
            draw_above(None);
        }
    }
}
