//! IncrementalAlterConfigs, through librdkafka's C API: rust-rdkafka 0.39 has only the legacy
//! AlterConfigs, which resets every key it is not given and so would touch excluded keys.
//! [`Request`] owns the C objects of one request and frees them in `Drop`, whichever way the
//! request ends.

use std::collections::BTreeMap;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::time::Duration;

use rdkafka_sys as sys;

use super::admin::Admin;
use crate::error::{Error, Result};

/// Sets `configs` on each topic with IncrementalAlterConfigs (SET only: no other key is
/// touched). A broker's refusal is a usage error naming the topic and its reason.
pub fn alter_incremental(
    admin: &Admin,
    changes: &BTreeMap<String, BTreeMap<String, String>>,
    timeout: Duration,
) -> Result<()> {
    if changes.is_empty() {
        return Ok(());
    }
    let mut request = Request::new();
    for (topic, configs) in changes {
        request.add_topic(topic, configs)?;
    }
    request.send(admin, timeout)?;
    request.refusal()
}

/// The librdkafka objects of one IncrementalAlterConfigs request. Each pointer is null or was
/// returned by librdkafka to this request alone and is freed once, in `Drop`.
struct Request {
    /// Never null.
    resources: Vec<*mut sys::rd_kafka_ConfigResource_t>,
    options: *mut sys::rd_kafka_AdminOptions_t,
    queue: *mut sys::rd_kafka_queue_t,
    /// The answer; the results read from it live as long as it does.
    event: *mut sys::rd_kafka_event_t,
}

impl Request {
    fn new() -> Request {
        Request {
            resources: Vec::new(),
            options: std::ptr::null_mut(),
            queue: std::ptr::null_mut(),
            event: std::ptr::null_mut(),
        }
    }

    /// Adds `topic` with a SET operation per config.
    fn add_topic(&mut self, topic: &str, configs: &BTreeMap<String, String>) -> Result<()> {
        let name = c_string(topic)?;
        // SAFETY: `name` is NUL-terminated and outlives the call, which copies it.
        let resource = unsafe {
            sys::rd_kafka_ConfigResource_new(
                sys::rd_kafka_ResourceType_t::RD_KAFKA_RESOURCE_TOPIC,
                name.as_ptr(),
            )
        };
        if resource.is_null() {
            // librdkafka refuses an empty name.
            return Err(Error::usage(format!(
                "cannot set configs on target topic '{topic}': not a topic name"
            )));
        }
        self.resources.push(resource);
        for (key, value) in configs {
            let (k, v) = (c_string(key)?, c_string(value)?);
            // SAFETY: `resource` is live (owned by `self.resources`); `k` and `v` are
            // NUL-terminated and outlive the call, which copies them.
            let err = unsafe {
                sys::rd_kafka_ConfigResource_add_incremental_config(
                    resource,
                    k.as_ptr(),
                    sys::rd_kafka_AlterConfigOpType_t::RD_KAFKA_ALTER_CONFIG_OP_TYPE_SET,
                    v.as_ptr(),
                )
            };
            if !err.is_null() {
                // SAFETY: `err` is an error librdkafka handed to us; its text is copied
                // before it is destroyed, once, here.
                let why = unsafe {
                    let why = text(sys::rd_kafka_error_string(err));
                    sys::rd_kafka_error_destroy(err);
                    why
                };
                return Err(Error::usage(format!(
                    "cannot set config '{key}' on target topic '{topic}': {why}"
                )));
            }
        }
        Ok(())
    }

    /// Sends the request and waits for its answer (the request timeout, plus a second).
    fn send(&mut self, admin: &Admin, timeout: Duration) -> Result<()> {
        let rk = admin.inner().native_ptr();
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: `rk` is the admin client's handle, live while `admin` is borrowed.
        self.options = unsafe {
            sys::rd_kafka_AdminOptions_new(
                rk,
                sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_INCREMENTALALTERCONFIGS,
            )
        };
        if self.options.is_null() {
            return Err(Error::failed(
                "cannot change target topic configs: librdkafka refused the request's options",
            ));
        }
        let mut errstr = [0 as c_char; 256];
        // SAFETY: `self.options` is live; `errstr` is writable for the length passed. A
        // timeout out of range leaves librdkafka's default, which the poll below outlasts.
        unsafe {
            sys::rd_kafka_AdminOptions_set_request_timeout(
                self.options,
                ms,
                errstr.as_mut_ptr(),
                errstr.len(),
            )
        };
        // SAFETY: `rk` is live; the queue is freed in `Drop`, after its event.
        self.queue = unsafe { sys::rd_kafka_queue_new(rk) };
        // SAFETY: `rk`, `self.options` and `self.queue` are live; `self.resources` holds
        // that many live resources, which librdkafka copies (they stay ours to free).
        unsafe {
            sys::rd_kafka_IncrementalAlterConfigs(
                rk,
                self.resources.as_mut_ptr(),
                self.resources.len(),
                self.options,
                self.queue,
            )
        };
        // SAFETY: `self.queue` is live; the event it returns (or null) is ours to free.
        self.event = unsafe { sys::rd_kafka_queue_poll(self.queue, ms.saturating_add(1000)) };
        if self.event.is_null() {
            return Err(Error::failed(format!(
                "changing target topic configs timed out after {timeout:?}"
            )));
        }
        // SAFETY: `self.event` is live and not null.
        let err = unsafe { sys::rd_kafka_event_error(self.event) };
        if err != sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            // SAFETY: `self.event` is live; its text is copied while it is.
            let why = unsafe { text(sys::rd_kafka_event_error_string(self.event)) };
            return Err(Error::failed(format!(
                "cannot change target topic configs: {why}"
            )));
        }
        Ok(())
    }

    /// After [`send`](Self::send): the first topic the target refused, as a usage error.
    fn refusal(&self) -> Result<()> {
        // SAFETY: `self.event` is live and not null (`send` succeeded); an event of another
        // type gives null, checked below.
        let result = unsafe { sys::rd_kafka_event_IncrementalAlterConfigs_result(self.event) };
        if result.is_null() {
            return Err(Error::failed(
                "cannot change target topic configs: librdkafka answered with another event",
            ));
        }
        let mut count = 0usize;
        // SAFETY: `result` lives as long as `self.event`; librdkafka writes the array's
        // length into `count`.
        let answers =
            unsafe { sys::rd_kafka_IncrementalAlterConfigs_result_resources(result, &mut count) };
        for i in 0..count {
            // SAFETY: `answers` holds `count` resource pointers, live while `self.event` is.
            let r = unsafe { *answers.add(i) };
            // SAFETY: `r` is a live resource of the result.
            let err = unsafe { sys::rd_kafka_ConfigResource_error(r) };
            if err != sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                // SAFETY: `r` is live; its name and error text are copied while it is.
                let (name, why) = unsafe {
                    (
                        text(sys::rd_kafka_ConfigResource_name(r)),
                        text(sys::rd_kafka_ConfigResource_error_string(r)),
                    )
                };
                let why = if why.is_empty() {
                    "refused".into()
                } else {
                    why
                };
                return Err(Error::usage(format!(
                    "the target refused the configs of topic '{name}': {why}"
                )));
            }
        }
        Ok(())
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        for r in self.resources.drain(..) {
            // SAFETY: created by `rd_kafka_ConfigResource_new` for this request, freed once.
            unsafe { sys::rd_kafka_ConfigResource_destroy(r) };
        }
        if !self.event.is_null() {
            // SAFETY: returned by `rd_kafka_queue_poll` to this request, freed once, before
            // the queue it came from.
            unsafe { sys::rd_kafka_event_destroy(self.event) };
        }
        if !self.options.is_null() {
            // SAFETY: created by `rd_kafka_AdminOptions_new` for this request, freed once.
            unsafe { sys::rd_kafka_AdminOptions_destroy(self.options) };
        }
        if !self.queue.is_null() {
            // SAFETY: created by `rd_kafka_queue_new` for this request, freed once, last.
            unsafe { sys::rd_kafka_queue_destroy(self.queue) };
        }
    }
}

fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::usage(format!("a NUL byte in config '{s}'")))
}

/// A C string librdkafka gave us, copied; empty for null.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that stays valid during the call.
unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller's promise.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}
