//! IncrementalAlterConfigs, through librdkafka's C API: rust-rdkafka 0.39 has only the legacy
//! AlterConfigs, which resets every key it is not given and so would touch excluded keys. The
//! C objects are `kafka::admin`'s [`Native`] owners, sent as one [`Request`].

use std::collections::BTreeMap;
use std::ffi::CString;
use std::time::Duration;

use rdkafka_sys as sys;

use super::admin::Admin;
use crate::error::{Error, Result};
use crate::kafka::admin::{text, Native, Request};

type Resource = Native<sys::rd_kafka_ConfigResource_t>;

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
    let mut resources = Vec::new();
    for (topic, configs) in changes {
        resources.push(resource(topic, configs)?);
    }
    let failed = |why: String| Error::failed(format!("cannot change target topic configs: {why}"));
    let request =
        Request::new(admin.inner().native_ptr(), timeout).map_err(|f| failed(f.message))?;
    let mut ptrs: Vec<*mut sys::rd_kafka_ConfigResource_t> =
        resources.iter().map(Native::ptr).collect();
    let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_INCREMENTALALTERCONFIGS;
    // SAFETY: the call starts one IncrementalAlterConfigs on the queue and options given; the
    // handle is live while `admin` is borrowed; `ptrs` holds that many live resources, which
    // librdkafka copies (they stay ours, freed with `resources`).
    let answer = unsafe {
        request.answer(op, |o, q| {
            sys::rd_kafka_IncrementalAlterConfigs(request.rk(), ptrs.as_mut_ptr(), ptrs.len(), o, q)
        })
    };
    let event = answer.map_err(|f| match f.timed_out() {
        true => Error::failed(format!(
            "changing target topic configs timed out after {timeout:?}"
        )),
        false => failed(f.message),
    })?;
    refusal(&event)
}

/// A topic's resource with a SET operation per config.
fn resource(topic: &str, configs: &BTreeMap<String, String>) -> Result<Resource> {
    let name = c_string(topic)?;
    let kind = sys::rd_kafka_ResourceType_t::RD_KAFKA_RESOURCE_TOPIC;
    // SAFETY: `name` is NUL-terminated and outlives the call, which copies it; the resource
    // is ours.
    let resource =
        unsafe { Native::from_ptr(sys::rd_kafka_ConfigResource_new(kind, name.as_ptr())) }
            // librdkafka refuses an empty name.
            .ok_or_else(|| {
                Error::usage(format!(
                    "cannot set configs on target topic '{topic}': not a topic name"
                ))
            })?;
    for (key, value) in configs {
        let (k, v) = (c_string(key)?, c_string(value)?);
        let set = sys::rd_kafka_AlterConfigOpType_t::RD_KAFKA_ALTER_CONFIG_OP_TYPE_SET;
        // SAFETY: `resource` is live; `k` and `v` are NUL-terminated and outlive the call,
        // which copies them; the error it returns (or null) is ours.
        let err = unsafe {
            Native::from_ptr(sys::rd_kafka_ConfigResource_add_incremental_config(
                resource.ptr(),
                k.as_ptr(),
                set,
                v.as_ptr(),
            ))
        };
        if let Some(err) = err {
            // SAFETY: `err` is live; its text is copied while it is.
            let why = unsafe { text(sys::rd_kafka_error_string(err.ptr())) };
            return Err(Error::usage(format!(
                "cannot set config '{key}' on target topic '{topic}': {why}"
            )));
        }
    }
    Ok(resource)
}

/// The first topic the target refused in `event`'s answer, as a usage error.
fn refusal(event: &Native<sys::rd_kafka_event_t>) -> Result<()> {
    // SAFETY: `event` is live; an event of another type gives null, checked below.
    let result = unsafe { sys::rd_kafka_event_IncrementalAlterConfigs_result(event.ptr()) };
    if result.is_null() {
        return Err(Error::failed(
            "cannot change target topic configs: librdkafka answered with another event",
        ));
    }
    let mut count = 0usize;
    // SAFETY: `result` lives as long as `event`; librdkafka writes the array's length into
    // `count`.
    let answers =
        unsafe { sys::rd_kafka_IncrementalAlterConfigs_result_resources(result, &mut count) };
    for i in 0..count {
        // SAFETY: `answers` holds `count` resource pointers, live while `event` is.
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

fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::usage(format!("a NUL byte in config '{s}'")))
}
