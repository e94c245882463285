//! Admin requests of the topic checks: the admin client, describe topic configs, and running
//! rust-rdkafka's admin futures (IncrementalAlterConfigs is in `alter`).

use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, ConfigSource, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::RDKafkaErrorCode;

use super::configs::Entry;
use crate::error::Result;
use crate::kafka;
use crate::options::ClusterSpec;

/// An admin client that is destroyed on a thread of its own (joined on the way out, see
/// `exit`). rust-rdkafka's `AdminClient` joins its polling thread when dropped, and that thread
/// polls in 100 ms slices: a run's checks drop half a dozen clients one after the other,
/// which cost its start 0.5 s.
pub struct Admin(ManuallyDrop<AdminClient<DefaultClientContext>>);

impl Deref for Admin {
    type Target = AdminClient<DefaultClientContext>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Drop for Admin {
    fn drop(&mut self) {
        // SAFETY: the client is taken once, here, and `self.0` is not used again.
        let client = unsafe { ManuallyDrop::take(&mut self.0) };
        // Should the thread not start, the closure and the client drop here.
        crate::exit::spawn("admin drop", move || drop(client));
    }
}

pub fn admin(spec: &ClusterSpec, side: &str) -> Result<Admin> {
    kafka::admin_config(spec)
        .create()
        .map(|client| Admin(ManuallyDrop::new(client)))
        .map_err(|e| kafka::creation_error(side, e))
}

/// Runs an admin future to completion on a private runtime, bounded by `timeout`; given up
/// once the process is on its way out.
pub fn block_on<F: std::future::Future>(fut: F, timeout: Duration) -> Option<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .ok()?;
    rt.block_on(async {
        let answer = tokio::time::timeout(timeout, fut);
        tokio::pin!(answer);
        loop {
            tokio::select! {
                done = &mut answer => return done.ok(),
                () = tokio::time::sleep(crate::exit::STEP) => {
                    if crate::exit::closing() {
                        return None;
                    }
                }
            }
        }
    })
}

/// Whether the cluster's group coordinator offers KIP-848's consumer group protocol, from one
/// broker's `group.coordinator.rebalance.protocols` (Kafka 4.0 and later offer it by default).
/// `Some(false)` when the broker answers without that setting (an older Kafka); `None` when the
/// question could not be asked (no DescribeConfigs, as on librdkafka's mock cluster, or not
/// authorised).
pub fn consumer_protocol_offered(spec: &ClusterSpec, timeout: Duration) -> Option<bool> {
    let admin = admin(spec, "source").ok()?;
    // In steps: a source that does not answer must not hold up the way out of a refusal
    // (a step long enough for a loaded broker's first answer).
    const STEP: Duration = Duration::from_millis(500);
    let deadline = std::time::Instant::now() + timeout;
    let metadata = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match admin.inner().fetch_metadata(None, left.min(STEP)) {
            Ok(m) => break m,
            Err(_) if left > STEP && !crate::exit::closing() => continue,
            Err(_) => return None,
        }
    };
    let broker = metadata.brokers().first()?.id();
    let opts = AdminOptions::new().request_timeout(Some(timeout));
    let specs = [ResourceSpecifier::Broker(broker)];
    let results = block_on(admin.describe_configs(&specs, &opts), timeout)?.ok()?;
    let resource = results.into_iter().next()?.ok()?;
    let protocols = resource
        .entries
        .into_iter()
        .find(|e| e.name == "group.coordinator.rebalance.protocols")
        .and_then(|e| e.value);
    Some(protocols.is_some_and(|v| v.split(',').any(|p| p.trim() == "consumer")))
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
