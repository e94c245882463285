//! The smallest `max.message.bytes` of the target topics: the producer keeps its batches within
//! it (a broker refuses a whole batch over the limit, and librdkafka does not split it).

use std::collections::HashMap;
use std::time::Duration;

use rdkafka::consumer::Consumer;

use super::admin;
use super::configs::Entry;
use super::Metadata;
use crate::options::ClusterSpec;

/// The longest start-up waits for the answer.
pub(super) const WAIT: Duration = Duration::from_secs(5);

/// The smallest effective `max.message.bytes` of `targets` (the topic's own, else the
/// broker's, as DescribeConfigs reports it); `None` when the target does not say.
pub fn smallest(
    spec: &ClusterSpec,
    target: &Metadata,
    targets: &[&str],
    timeout: Duration,
) -> Option<u64> {
    let first = targets.first()?;
    if !controller_known(target, Some(first), timeout.min(WAIT)) {
        log::info!(
            "the target names no controller it lists: its topics' max.message.bytes not read"
        );
        return None;
    }
    let described = admin::admin(spec, "target")
        .map_err(|e| e.to_string())
        .and_then(|a| admin::describe(&a, targets, timeout.min(WAIT)).map_err(|e| e.message));
    match described {
        Ok(d) => smallest_of(&d),
        Err(e) => {
            log::info!("target topics' max.message.bytes not read ({e}): the producer keeps its batch.size and message.max.bytes");
            None
        }
    }
}

/// Whether the target's metadata names a controller among its brokers: DescribeConfigs goes to
/// it, and librdkafka's mock cluster (controller 0, brokers from 1) never answers.
pub(super) fn controller_known(target: &Metadata, topic: Option<&str>, timeout: Duration) -> bool {
    let Ok(md) = target.fetch_metadata(topic, timeout) else {
        return false;
    };
    // SAFETY: the client pointer is valid for the client's lifetime; a zero timeout reads the
    // cached metadata.
    let id = unsafe { rdkafka_sys::rd_kafka_controllerid(target.client().native_ptr(), 0) };
    id >= 0 && md.brokers().iter().any(|b| b.id() == id)
}

fn smallest_of(described: &HashMap<String, Vec<Entry>>) -> Option<u64> {
    described
        .values()
        .flatten()
        .filter(|e| e.name == "max.message.bytes")
        .filter_map(|e| e.value.as_deref()?.trim().parse().ok())
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, value: &str) -> Entry {
        Entry {
            name: name.into(),
            value: Some(value.into()),
            is_default: false,
            topic_override: true,
            has_source: true,
            read_only: false,
            sensitive: false,
        }
    }

    #[test]
    fn issue_18_the_smallest_target_limit_wins() {
        let mut d = HashMap::new();
        d.insert(
            "a".to_string(),
            vec![
                entry("retention.ms", "5"),
                entry("max.message.bytes", "1048588"),
            ],
        );
        d.insert("b".to_string(), vec![entry("max.message.bytes", "2000")]);
        d.insert("c".to_string(), vec![]);
        assert_eq!(smallest_of(&d), Some(2000));
        d.remove("b");
        assert_eq!(smallest_of(&d), Some(1_048_588));
        d.remove("a");
        assert_eq!(smallest_of(&d), None);
    }
}
