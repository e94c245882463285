//! The way out of the process (issue 41): a process that exits while another thread creates or
//! uses a librdkafka client dies of SIGSEGV in the C library's exit handlers (OpenSSL's
//! clean-up under `SSL_CTX_new`). Threads that use clients besides the run's own (probes,
//! admin clients being destroyed, advice asked while the copy starts) start with [`spawn`];
//! [`settle`], on every way out, ends their waits ([`closing`]), joins them, and waits until
//! librdkafka has destroyed every client. An exit that cannot wait (a second signal) or a
//! client still alive then leaves through [`now`], which runs no C exit handler.

use std::io::Write;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::stop::Stop;

/// Raised on the way out: the helpers' waits end ([`closing`]).
static CLOSING: Stop = Stop::new();

/// The helper threads, joined by [`settle`].
static THREADS: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// How often a helper's wait looks whether the process is on its way out.
pub const STEP: Duration = Duration::from_millis(100);

/// How long [`settle`] waits for the helpers and for librdkafka's clients: helpers end within
/// a poll step once [`closing`]; a client's destruction takes milliseconds.
const SETTLE: Duration = Duration::from_secs(10);

/// A helper thread's result, once it is done.
pub struct Task<T>(Option<Receiver<T>>);

impl<T> Task<T> {
    /// Waits for the helper's result; `None` when it could not start or ended without one.
    pub fn join(self) -> Option<T> {
        self.0?.recv().ok()
    }
}

/// Starts `work` on a helper thread that the way out joins. Without a thread (the system has
/// none to give) nothing runs and the task has no result.
pub fn spawn<T: Send + 'static>(name: &str, work: impl FnOnce() -> T + Send + 'static) -> Task<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    let started = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(work());
        });
    let Ok(thread) = started else {
        return Task(None);
    };
    let mut threads = THREADS.lock().unwrap_or_else(PoisonError::into_inner);
    threads.retain(|t| !t.is_finished());
    threads.push(thread);
    Task(Some(rx))
}

/// Whether the process is on its way out: a helper's wait gives up.
pub fn closing() -> bool {
    CLOSING.wait(Duration::ZERO)
}

/// Ends the helpers' waits, joins them and waits until librdkafka has destroyed every client.
/// True when that is so: the C exit handlers may then run; else leave through [`now`].
pub fn settle() -> bool {
    CLOSING.raise();
    let deadline = Instant::now() + SETTLE;
    loop {
        let threads = std::mem::take(&mut *THREADS.lock().unwrap_or_else(PoisonError::into_inner));
        if threads.is_empty() {
            break;
        }
        for thread in threads {
            while !thread.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if !thread.is_finished() {
                log::debug!("a helper thread did not end within {SETTLE:?} of the exit");
                return false;
            }
            let _ = thread.join();
        }
    }
    let left = deadline.saturating_duration_since(Instant::now());
    let ms = left.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: a plain call that only reads librdkafka's global counts, waiting up to `ms`.
    let clean = unsafe { rdkafka_sys::rd_kafka_wait_destroyed(ms) } == 0;
    if !clean {
        log::debug!("a librdkafka client was still alive at exit");
    }
    clean
}

/// Calls `on` for every SIGINT or SIGTERM, on the runtime the caller is in (a copy and
/// `migrate` each decide what a first and a second signal mean).
pub fn on_signals(mut on: impl FnMut() + Send + 'static) -> crate::error::Result<()> {
    use crate::error::Error;
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt())
        .map_err(|e| Error::failed(format!("cannot watch SIGINT: {e}")))?;
    let mut term = signal(SignalKind::terminate())
        .map_err(|e| Error::failed(format!("cannot watch SIGTERM: {e}")))?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            on();
        }
    });
    Ok(())
}

/// Exits with `code` at once: stdout and stderr flushed, no C exit handler run, so that no
/// library is torn down under a thread still using it.
pub fn now(code: u8) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    extern "C" {
        fn _exit(status: std::os::raw::c_int) -> !;
    }
    // SAFETY: `_exit` ends the process; nothing runs after it.
    unsafe { _exit(code.into()) }
}
