//! Admin requests of the topic checks: describe topic configs, create topics with configs,
//! and IncrementalAlterConfigs (rust-rdkafka 0.39 has only the legacy AlterConfigs, which
//! resets every key it is not given; that would touch excluded keys, so this calls
//! librdkafka's incremental API directly).

use std::collections::{BTreeMap, HashMap};
use std::ffi::{CStr, CString};
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, ConfigSource, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::RDKafkaErrorCode;
use rdkafka_sys as sys;

use super::configs::Entry;
use crate::error::{Error, Result};
use crate::kafka;
use crate::options::ClusterSpec;

pub type Admin = AdminClient<DefaultClientContext>;

pub fn admin(spec: &ClusterSpec, side: &str) -> Result<Admin> {
    kafka::admin_config(spec)
        .create()
        .map_err(|e| kafka::creation_error(side, e))
}

/// Runs an admin future to completion on a private runtime, bounded by `timeout`.
pub fn block_on<F: std::future::Future>(fut: F, timeout: Duration) -> Option<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .ok()?;
    rt.block_on(async { tokio::time::timeout(timeout, fut).await.ok() })
}

/// Why a describe failed, and whether the broker simply could not answer: no DescribeConfigs
/// (librdkafka's mock cluster), or no answer in time.
#[derive(Debug)]
pub struct DescribeError {
    pub quiet: bool,
    pub message: String,
}

/// Each topic's config entries, as the broker answers DescribeConfigs.
pub fn describe(
    admin: &Admin,
    topics: &[&str],
    timeout: Duration,
) -> std::result::Result<HashMap<String, Vec<Entry>>, DescribeError> {
    if topics.is_empty() {
        return Ok(HashMap::new());
    }
    let specs: Vec<ResourceSpecifier<'_>> =
        topics.iter().map(|t| ResourceSpecifier::Topic(t)).collect();
    let opts = AdminOptions::new().request_timeout(Some(timeout));
    let failed = |message: String, quiet: bool| DescribeError { quiet, message };
    let quiet = |code: Option<RDKafkaErrorCode>| {
        matches!(
            code,
            Some(RDKafkaErrorCode::UnsupportedFeature | RDKafkaErrorCode::OperationTimedOut)
        )
    };
    let results = block_on(admin.describe_configs(&specs, &opts), timeout)
        .ok_or_else(|| {
            failed(
                format!("describing topic configs timed out after {timeout:?}"),
                false,
            )
        })?
        .map_err(|e| {
            let unsupported = e.rdkafka_error_code() == Some(RDKafkaErrorCode::UnsupportedFeature);
            failed(format!("cannot describe topic configs: {e}"), unsupported)
        })?;
    let mut out = HashMap::new();
    for (topic, result) in topics.iter().zip(results) {
        let resource = result.map_err(|code| {
            failed(
                format!("cannot describe the configs of topic '{topic}': {code}"),
                quiet(Some(code)),
            )
        })?;
        let entries = resource
            .entries
            .into_iter()
            .map(|e| Entry {
                topic_override: e.source == ConfigSource::DynamicTopic,
                has_source: e.source != ConfigSource::Unknown,
                name: e.name,
                value: e.value,
                is_default: e.is_default,
                read_only: e.is_read_only,
                sensitive: e.is_sensitive,
            })
            .collect();
        out.insert(topic.to_string(), entries);
    }
    Ok(out)
}

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
    let rk = admin.inner().native_ptr();
    let cstr =
        |s: &str| CString::new(s).map_err(|_| Error::usage(format!("a NUL byte in config '{s}'")));
    // Frees everything librdkafka allocated for us, whichever way this function returns.
    struct Owned {
        resources: Vec<*mut sys::rd_kafka_ConfigResource_t>,
        queue: *mut sys::rd_kafka_queue_t,
        options: *mut sys::rd_kafka_AdminOptions_t,
        event: *mut sys::rd_kafka_event_t,
    }
    impl Drop for Owned {
        fn drop(&mut self) {
            // SAFETY: each pointer is null or was returned by librdkafka and not freed yet.
            unsafe {
                for r in self.resources.drain(..) {
                    sys::rd_kafka_ConfigResource_destroy(r);
                }
                if !self.event.is_null() {
                    sys::rd_kafka_event_destroy(self.event);
                }
                if !self.options.is_null() {
                    sys::rd_kafka_AdminOptions_destroy(self.options);
                }
                if !self.queue.is_null() {
                    sys::rd_kafka_queue_destroy(self.queue);
                }
            }
        }
    }
    let mut owned = Owned {
        resources: Vec::new(),
        queue: std::ptr::null_mut(),
        options: std::ptr::null_mut(),
        event: std::ptr::null_mut(),
    };
    // SAFETY: every call gets pointers librdkafka created (or C strings that outlive the
    // call); results are read before the event that owns them is destroyed (by `owned`).
    unsafe {
        for (topic, configs) in changes {
            let name = cstr(topic)?;
            let res = sys::rd_kafka_ConfigResource_new(
                sys::rd_kafka_ResourceType_t::RD_KAFKA_RESOURCE_TOPIC,
                name.as_ptr(),
            );
            owned.resources.push(res);
            for (key, value) in configs {
                let (k, v) = (cstr(key)?, cstr(value)?);
                let err = sys::rd_kafka_ConfigResource_add_incremental_config(
                    res,
                    k.as_ptr(),
                    sys::rd_kafka_AlterConfigOpType_t::RD_KAFKA_ALTER_CONFIG_OP_TYPE_SET,
                    v.as_ptr(),
                );
                if !err.is_null() {
                    let why = CStr::from_ptr(sys::rd_kafka_error_string(err))
                        .to_string_lossy()
                        .into_owned();
                    sys::rd_kafka_error_destroy(err);
                    return Err(Error::usage(format!(
                        "cannot set config '{key}' on target topic '{topic}': {why}"
                    )));
                }
            }
        }
        owned.options = sys::rd_kafka_AdminOptions_new(
            rk,
            sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_INCREMENTALALTERCONFIGS,
        );
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        let mut errstr = [0 as std::os::raw::c_char; 256];
        sys::rd_kafka_AdminOptions_set_request_timeout(
            owned.options,
            ms,
            errstr.as_mut_ptr(),
            errstr.len(),
        );
        owned.queue = sys::rd_kafka_queue_new(rk);
        let list = &mut owned.resources;
        sys::rd_kafka_IncrementalAlterConfigs(
            rk,
            list.as_mut_ptr(),
            list.len(),
            owned.options,
            owned.queue,
        );
        owned.event = sys::rd_kafka_queue_poll(owned.queue, ms.saturating_add(1000));
        if owned.event.is_null() {
            return Err(Error::failed(format!(
                "changing target topic configs timed out after {timeout:?}"
            )));
        }
        if sys::rd_kafka_event_error(owned.event)
            != sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR
        {
            let why = CStr::from_ptr(sys::rd_kafka_event_error_string(owned.event))
                .to_string_lossy()
                .into_owned();
            return Err(Error::failed(format!(
                "cannot change target topic configs: {why}"
            )));
        }
        let result = sys::rd_kafka_event_IncrementalAlterConfigs_result(owned.event);
        let mut count = 0usize;
        let answers = sys::rd_kafka_IncrementalAlterConfigs_result_resources(result, &mut count);
        for i in 0..count {
            let r = *answers.add(i);
            if sys::rd_kafka_ConfigResource_error(r)
                != sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR
            {
                let name = CStr::from_ptr(sys::rd_kafka_ConfigResource_name(r)).to_string_lossy();
                let why = sys::rd_kafka_ConfigResource_error_string(r);
                let why = if why.is_null() {
                    "refused".into()
                } else {
                    CStr::from_ptr(why).to_string_lossy()
                };
                return Err(Error::usage(format!(
                    "the target refused the configs of topic '{name}': {why}"
                )));
            }
        }
    }
    drop(owned);
    Ok(())
}
