//! Lines on stderr: [`say`] prints above the progress bar (time-stamped off a terminal), and
//! `-v`/`RUST_LOG` log records go the same way; `brokers`: a broker restart the clients ride
//! out, said once instead of an error per retry. A leaf: whoever must say something while a
//! bar may be drawn (`topics` waiting for a cluster, too) says it here.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use indicatif::ProgressBar;

mod brokers;

use self::brokers::Seen;

/// The bar currently drawn, if any: `say` prints above it instead of through it.
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Prints one line on stderr without tearing the progress display; time-stamped when stderr is
/// not a terminal.
pub fn say(line: &str) {
    emit(line, !std::io::stderr().is_terminal());
}

pub(crate) fn emit(line: &str, stamped: bool) {
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

/// The bar lines are printed above from now on, or none.
pub(crate) fn draw_above(bar: Option<ProgressBar>) {
    *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = bar;
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
        let level = shown_level(r.level(), msg);
        let line = || format!("kreplicate: {level} {}: {msg}", r.target());
        // A broker restart the clients ride out: one warning per broker, not an error per
        // client and retry (librdkafka's own lines stay at -vv).
        match brokers::note(msg) {
            Seen::Other => return emit(&line(), true),
            Seen::Lost { addr, why } => {
                emit(
                    &format!("kreplicate: WARN librdkafka: broker {addr} unreachable ({why}): the clients retry it (said once until it is back)"),
                    true,
                );
                brokers::watch(addr, back);
            }
            Seen::Again => {}
        }
        if log::max_level() >= log::LevelFilter::Debug {
            emit(&format!("kreplicate: DEBUG {}: {msg}", r.target()), true);
        }
    }
    fn flush(&self) {}
}

/// librdkafka's level for its line, but a warning for an abortable transaction error:
/// exactly-once aborts that transaction, rewinds and says so itself, so it is no error of the
/// run (a partition leader's failover in a rolling restart can cause one, issue 30:
/// OUT_OF_ORDER_SEQUENCE_NUMBER, requires epoch bump). A fatal one stays an error.
fn shown_level(level: log::Level, msg: &str) -> log::Level {
    let abortable =
        msg.starts_with("TXNERR ") && msg.contains(": Current transaction failed in state ");
    match level {
        log::Level::Error if abortable => log::Level::Warn,
        _ => level,
    }
}

/// The second half of a lost broker's story.
fn back(addr: &str, after: Duration) {
    emit(
        &format!(
            "kreplicate: WARN librdkafka: broker {addr} accepts connections again after {:.1} s: the clients reconnect",
            after.as_secs_f64()
        ),
        true,
    );
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
    fn issue_30_an_abortable_transaction_error_is_a_warning_a_fatal_one_an_error() {
        let abortable = "TXNERR [thrd:127.0.0.1:41239/2]: Current transaction failed in state InTransaction: skipped sequence numbers (OUT_OF_ORDER_SEQUENCE_NUMBER, requires epoch bump)";
        assert_eq!(shown_level(log::Level::Error, abortable), log::Level::Warn);
        let fatal = "TXNERR [thrd:main]: Fatal transaction error: Producer fenced by newer instance (PRODUCER_FENCED)";
        assert_eq!(shown_level(log::Level::Error, fatal), log::Level::Error);
        assert_eq!(
            shown_level(
                log::Level::Error,
                "FAIL [thrd:b]: Connect to ipv4#127.0.0.1:1 failed"
            ),
            log::Level::Error
        );
    }
}
