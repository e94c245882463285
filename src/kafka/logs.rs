//! librdkafka's log lines as they happen. rust-rdkafka forwards them to a client's main queue,
//! which only a poll of the client serves; nothing polls the exactly-once producer during its
//! blocking transaction calls (commit, abort, init), so `-X debug=eos` showed an EndTxn's lines
//! only once it had returned, and nothing at all while it hung. [`LogPump`] serves them from a
//! queue of their own on a thread of their own.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use rdkafka::client::{Client, ClientContext};
use rdkafka::config::RDKafkaLogLevel;
use rdkafka_sys as rdsys;

/// A queue handle the pump thread may use: librdkafka's queues are thread-safe.
struct Queue(*mut rdsys::RDKafkaQueue);

// SAFETY: librdkafka queue operations may be called from any thread.
unsafe impl Send for Queue {}

/// Serves a client's log lines until dropped; drop it before its client.
pub struct LogPump {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Queue>>,
    client: *mut rdsys::RDKafka,
}

// SAFETY: the client pointer is only used in `drop`, for a thread-safe librdkafka call.
unsafe impl Send for LogPump {}

impl LogPump {
    /// Sends `client`'s log lines to its context's `log` as librdkafka emits them.
    pub fn start<C: ClientContext + 'static>(client: &Client<C>) -> LogPump {
        let rk = client.native_ptr();
        // SAFETY: `rk` is a live client; the queue is destroyed in `drop`, after the log
        // queue was set back to the main queue.
        let queue = unsafe {
            let q = rdsys::rd_kafka_queue_new(rk);
            rdsys::rd_kafka_set_log_queue(rk, q);
            Queue(q)
        };
        let raw = queue.0;
        let stop = Arc::new(AtomicBool::new(false));
        let (s, context) = (stop.clone(), client.context().clone());
        let thread = std::thread::Builder::new()
            .name("librdkafka-logs".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    // SAFETY: the queue lives until this thread returned it (see `drop`).
                    unsafe { serve_one(&queue, context.as_ref()) };
                }
                queue
            })
            .ok();
        if thread.is_none() {
            // No thread: the lines go back to the main queue, served when the client polls.
            // SAFETY: as in `drop`.
            unsafe {
                rdsys::rd_kafka_set_log_queue(rk, std::ptr::null_mut());
                rdsys::rd_kafka_queue_destroy(raw);
            }
        }
        LogPump {
            stop,
            thread,
            client: rk,
        }
    }
}

/// Waits up to 100 ms for one event; a log line goes to `context.log`.
unsafe fn serve_one<C: ClientContext>(queue: &Queue, context: &C) {
    let ev = rdsys::rd_kafka_queue_poll(queue.0, 100);
    if ev.is_null() {
        return;
    }
    if rdsys::rd_kafka_event_type(ev) == rdsys::RD_KAFKA_EVENT_LOG {
        let (mut fac, mut line): (*const c_char, *const c_char) =
            (std::ptr::null(), std::ptr::null());
        let mut level: c_int = 0;
        if rdsys::rd_kafka_event_log(ev, &mut fac, &mut line, &mut level) == 0 {
            let fac = CStr::from_ptr(fac).to_string_lossy();
            let line = CStr::from_ptr(line).to_string_lossy();
            context.log(log_level(level), fac.trim(), line.trim());
        }
    }
    rdsys::rd_kafka_event_destroy(ev);
}

/// syslog's levels, as librdkafka logs them.
fn log_level(level: c_int) -> RDKafkaLogLevel {
    match level {
        i32::MIN..=0 => RDKafkaLogLevel::Emerg,
        1 => RDKafkaLogLevel::Alert,
        2 => RDKafkaLogLevel::Critical,
        3 => RDKafkaLogLevel::Error,
        4 => RDKafkaLogLevel::Warning,
        5 => RDKafkaLogLevel::Notice,
        6 => RDKafkaLogLevel::Info,
        _ => RDKafkaLogLevel::Debug,
    }
}

impl Drop for LogPump {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let Some(queue) = self.thread.take().and_then(|t| t.join().ok()) else {
            return;
        };
        // SAFETY: the client outlives this pump (its owner drops the pump first); logs go
        // back to the main queue (NULL) before their queue is destroyed.
        unsafe {
            rdsys::rd_kafka_set_log_queue(self.client, std::ptr::null_mut());
            rdsys::rd_kafka_queue_destroy(queue.0);
        }
    }
}
