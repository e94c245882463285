//! One admin request through librdkafka's C API: options with the request timeout (and
//! authorised operations asked for, where the request has them), a queue of its own, and the
//! answer polled from it. Every C object is a [`Native`], freed once whichever way the request
//! ends.

use std::os::raw::c_char;
use std::time::{Duration, Instant};

use rdkafka_sys as sys;

use super::native::{text, Native};

/// An answer: the event that owns every result read from it.
pub(crate) type Event = Native<sys::rd_kafka_event_t>;

/// Why a request as a whole failed: librdkafka's code and message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub code: sys::rd_kafka_resp_err_t,
    pub message: String,
}

impl Failure {
    fn new(code: sys::rd_kafka_resp_err_t, message: String) -> Failure {
        Failure { code, message }
    }

    /// No answer in time.
    pub(crate) fn timed_out(&self) -> bool {
        self.code == sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__TIMED_OUT
    }
}

/// Admin requests of one client, one at a time, on a queue of their own.
pub(crate) struct Request {
    rk: *mut sys::rd_kafka_t,
    queue: Native<sys::rd_kafka_queue_t>,
    timeout_ms: i32,
}

impl Request {
    /// `rk` is an admin client's handle, live as long as the request is.
    pub(crate) fn new(rk: *mut sys::rd_kafka_t, timeout: Duration) -> Result<Request, Failure> {
        // SAFETY: `rk` is a live client handle; the new queue is ours.
        let queue = unsafe { Native::from_ptr(sys::rd_kafka_queue_new(rk)) }.ok_or_else(|| {
            Failure::new(
                sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__FAIL,
                "librdkafka refused a queue".into(),
            )
        })?;
        let timeout_ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        Ok(Request {
            rk,
            queue,
            timeout_ms,
        })
    }

    /// The client's handle, for the call that starts a request.
    pub(crate) fn rk(&self) -> *mut sys::rd_kafka_t {
        self.rk
    }

    /// The options of one request of `op`: the timeout, and authorised operations asked for.
    fn options(
        &self,
        op: sys::rd_kafka_admin_op_t,
    ) -> Result<Native<sys::rd_kafka_AdminOptions_t>, Failure> {
        // SAFETY: `self.rk` is live; the options are ours.
        let options = unsafe { Native::from_ptr(sys::rd_kafka_AdminOptions_new(self.rk, op)) }
            .ok_or_else(|| {
                Failure::new(
                    sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__INVALID_ARG,
                    "librdkafka refused the request's options".into(),
                )
            })?;
        let mut errstr = [0 as c_char; 256];
        // SAFETY: `options` is live; `errstr` is writable for the length given. A timeout out
        // of range leaves librdkafka's default, which the poll outlasts.
        unsafe {
            sys::rd_kafka_AdminOptions_set_request_timeout(
                options.ptr(),
                self.timeout_ms,
                errstr.as_mut_ptr(),
                errstr.len(),
            )
        };
        // SAFETY: `options` is live; a request without authorised operations answers with an
        // error, which is ours to free (the `Native` dropped at once).
        drop(unsafe {
            Native::from_ptr(
                sys::rd_kafka_AdminOptions_set_include_authorized_operations(options.ptr(), 1),
            )
        });
        Ok(options)
    }

    /// Starts a request of `op` with `call(options, queue)` and waits for its answer (the
    /// request timeout, plus a second); a failure of the request as a whole otherwise.
    ///
    /// # Safety
    /// `call` must start one admin request of `op` on the queue it is given, with the options
    /// it is given (librdkafka copies them: they are freed after `call` returns).
    pub(crate) unsafe fn answer(
        &self,
        op: sys::rd_kafka_admin_op_t,
        call: impl FnOnce(*mut sys::rd_kafka_AdminOptions_t, *mut sys::rd_kafka_queue_t),
    ) -> Result<Event, Failure> {
        let options = self.options(op)?;
        call(options.ptr(), self.queue.ptr());
        drop(options);
        let wait = Duration::from_millis(self.timeout_ms.saturating_add(1000) as u64);
        let deadline = Instant::now() + wait;
        // In steps, given up once the process is on its way out.
        let event = loop {
            let step = deadline
                .saturating_duration_since(Instant::now())
                .min(crate::exit::STEP);
            // SAFETY: the queue is live; the event it returns (or null) is ours.
            let event =
                unsafe { sys::rd_kafka_queue_poll(self.queue.ptr(), step.as_millis() as i32) };
            // SAFETY: a non-null event is ours, freed once by its `Native`.
            if let Some(event) = unsafe { Native::from_ptr(event) } {
                break event;
            }
            if Instant::now() >= deadline || crate::exit::closing() {
                return Err(Failure::new(
                    sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__TIMED_OUT,
                    format!("no answer within {} ms", self.timeout_ms),
                ));
            }
        };
        // SAFETY: `event` is live.
        let code = unsafe { sys::rd_kafka_event_error(event.ptr()) };
        if code == sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            return Ok(event);
        }
        // SAFETY: `event` is live; its text is copied while it is.
        let message = unsafe { text(sys::rd_kafka_event_error_string(event.ptr())) };
        let message = match message.is_empty() {
            true => format!("{code:?}"),
            false => message,
        };
        Err(Failure::new(code, message))
    }
}
