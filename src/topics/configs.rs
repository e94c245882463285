//! Which topic configs travel with a topic, and where a target differs (pure, unit-tested).
//!
//! A key travels when it is set on the source topic, copyable, and not excluded. "Set" is
//! what the broker says: Kafka answers DescribeConfigs with every topic key and gives each
//! value's source; only `DYNAMIC_TOPIC_CONFIG` is the topic's own. A value from the source
//! broker's server.properties (`STATIC_BROKER_CONFIG`) or a dynamic broker config is not
//! `is_default` either (librdkafka calls only `DEFAULT_CONFIG` default), but it belongs to the
//! source *broker*: copying it would pin that broker's defaults on the target (and
//! `--sync-configs` could shorten the target's retention with it).
//!
//! A broker that answers with only the keys set on the topic and marks them all default
//! (tansu 0.6) is recognised by what its answer lacks: the many keys Kafka lists for every
//! topic. Then every key it lists counts as set. A broker that gives no sources at all
//! (DescribeConfigs v0) falls back to `is_default`.

use std::collections::BTreeMap;

/// Never copied (like MirrorMaker 2's `DefaultConfigPropertyFilter`, plus tiered storage
/// and vendor keys): they describe the brokers or the replication of one cluster, not the
/// data. `--config-exclude` adds to this list. A trailing `*` matches a prefix.
pub const EXCLUDED: &[&str] = &[
    "min.insync.replicas",
    "follower.replication.throttled.replicas",
    "leader.replication.throttled.replicas",
    "unclean.leader.election.enable",
    "message.format.version",
    "message.timestamp.difference.max.ms",
    // Kafka 3.6+'s replacements of the key above: a backlog older than the limit would be
    // refused by the target with INVALID_TIMESTAMP on every run.
    "message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms",
    "remote.storage.enable",
    "local.retention.ms",
    "local.retention.bytes",
    "confluent.*",
];

/// Keys every Kafka broker lists for every topic, set or not: an answer with all of them is a
/// full answer. Ten, so that a topic with a few keys set (compacted, with its own retention)
/// on a broker that lists only set keys is not taken for one.
const ALWAYS_LISTED: &[&str] = &[
    "cleanup.policy",
    "retention.ms",
    "segment.bytes",
    "max.message.bytes",
    "min.cleanable.dirty.ratio",
    "segment.index.bytes",
    "flush.messages",
    "index.interval.bytes",
    "message.timestamp.type",
    "preallocate",
];

/// One DescribeConfigs entry, as much of it as the decision needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub value: Option<String>,
    /// The broker calls it a default (source `DEFAULT_CONFIG`).
    pub is_default: bool,
    /// Source `DYNAMIC_TOPIC_CONFIG`: set on this topic.
    pub topic_override: bool,
    /// The broker said where the value comes from (any source but UNKNOWN).
    pub has_source: bool,
    pub read_only: bool,
    pub sensitive: bool,
}

/// The built-in exclusions plus `--config-exclude`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Excludes(Vec<String>);

impl Excludes {
    pub fn new(extra: &[String]) -> Self {
        let mut all: Vec<String> = EXCLUDED.iter().map(|s| s.to_string()).collect();
        all.extend(extra.iter().map(|s| s.trim().to_string()));
        Excludes(all)
    }

    pub fn excludes(&self, key: &str) -> bool {
        self.0
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => key.starts_with(prefix),
                None => key == pattern,
            })
    }
}

/// The keys set on a topic, by the rule in the module doc.
fn set_on_topic(entries: &[Entry]) -> impl Iterator<Item = &Entry> {
    let full_answer = ALWAYS_LISTED
        .iter()
        .all(|k| entries.iter().any(|e| e.name == *k));
    let sources = entries.iter().any(|e| e.has_source);
    let only_set_keys = sources && !full_answer && !entries.iter().any(|e| e.topic_override);
    entries.iter().filter(move |e| {
        if !sources {
            !e.is_default
        } else {
            only_set_keys || e.topic_override
        }
    })
}

/// Topic configs Kafka retired, which the built-in exclusions keep from travelling, and why:
/// a topic of a 2.x or 3.x cluster may still set them, and a copy to Kafka 4 (which refuses
/// them) names them in a warning instead of leaving them behind silently.
const RETIRED: &[(&str, &str)] = &[
    (
        "message.format.version",
        "Kafka 4.0 removed it, 3.0 deprecated it: the target writes its own record format",
    ),
    (
        "message.timestamp.difference.max.ms",
        "Kafka 3.6 replaced it with message.timestamp.before.max.ms and message.timestamp.after.max.ms, 4.0 removed it: set those on the target if the limit matters",
    ),
];

/// `key=value (why)` for each retired key set on a source topic (see [`RETIRED`]).
pub fn retired(source: &[Entry]) -> Vec<String> {
    set_on_topic(source)
        .filter_map(|e| {
            let (_, why) = RETIRED.iter().find(|(k, _)| *k == e.name)?;
            Some(format!(
                "{}={} ({why})",
                e.name,
                e.value.as_deref().unwrap_or("")
            ))
        })
        .collect()
}

/// What a target topic copying a source topic with `source` entries is created with.
pub fn to_copy(source: &[Entry], excludes: &Excludes) -> BTreeMap<String, String> {
    set_on_topic(source)
        .filter(|e| !e.read_only && !e.sensitive && !excludes.excludes(&e.name))
        .filter_map(|e| Some((e.name.clone(), e.value.clone()?)))
        .collect()
}

/// A copied key whose value differs between the two topics.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Drift {
    pub key: String,
    pub source: String,
    /// `None`: the target does not report the key (a broker that lists only set keys).
    pub target: Option<String>,
}

/// The copied keys (`to_copy` of the source) whose target value differs. Keys set only on
/// the target are left alone: they are the target's own choice.
pub fn drift(copied: &BTreeMap<String, String>, target: &[Entry]) -> Vec<Drift> {
    copied
        .iter()
        .filter_map(|(key, value)| {
            let there = target
                .iter()
                .find(|e| &e.name == key)
                .and_then(|e| e.value.clone());
            (there.as_deref() != Some(value.as_str())).then(|| Drift {
                key: key.clone(),
                source: value.clone(),
                target: there,
            })
        })
        .collect()
}

/// `key: source 'x', target 'y'` for warnings and errors.
pub fn describe(d: &Drift) -> String {
    format!(
        "{}: source '{}', target {}",
        d.key,
        d.source,
        d.target
            .as_deref()
            .map_or_else(|| "not set".to_string(), |t| format!("'{t}'"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, value: &str, is_default: bool, topic_override: bool) -> Entry {
        Entry {
            name: name.into(),
            value: Some(value.into()),
            is_default,
            topic_override,
            has_source: true,
            read_only: false,
            sensitive: false,
        }
    }

    /// A Kafka answer: every key, overrides marked; `broker` values come from the source
    /// broker's server.properties (STATIC_BROKER_CONFIG: not default, not the topic's).
    fn kafka_with(overrides: &[(&str, &str)], broker: &[(&str, &str)]) -> Vec<Entry> {
        let mut v: Vec<Entry> = ALWAYS_LISTED
            .iter()
            .map(|k| (*k, "x"))
            .chain([
                ("min.insync.replicas", "1"),
                ("compression.type", "producer"),
            ])
            .filter(|(k, _)| !overrides.iter().chain(broker).any(|(o, _)| o == k))
            .map(|(k, v)| entry(k, v, true, false))
            .collect();
        v.extend(overrides.iter().map(|(k, v)| entry(k, v, false, true)));
        v.extend(broker.iter().map(|(k, v)| entry(k, v, false, false)));
        v
    }

    fn kafka(overrides: &[(&str, &str)]) -> Vec<Entry> {
        kafka_with(overrides, &[])
    }

    #[test]
    fn issue_33_retired_configs_of_an_old_source_are_named_not_copied() {
        let source = kafka(&[
            ("message.format.version", "2.8"),
            ("retention.ms", "3600000"),
        ]);
        let copy = to_copy(&source, &Excludes::new(&[]));
        assert!(!copy.contains_key("message.format.version"), "{copy:?}");
        let named = retired(&source);
        assert_eq!(named.len(), 1, "{named:?}");
        assert!(named[0].starts_with("message.format.version=2.8 (Kafka 4.0 removed it"));
        // A broker default of the same key is the broker's, not the topic's: not named.
        assert!(retired(&kafka_with(&[], &[("message.format.version", "2.8")])).is_empty());
    }

    #[test]
    fn kafka_overrides_travel_and_defaults_stay_behind() {
        let source = kafka(&[
            ("cleanup.policy", "compact"),
            ("retention.ms", "3600000"),
            ("min.insync.replicas", "2"),
        ]);
        let copy = to_copy(&source, &Excludes::new(&[]));
        assert_eq!(
            copy.into_iter().collect::<Vec<_>>(),
            vec![
                ("cleanup.policy".to_string(), "compact".to_string()),
                ("retention.ms".to_string(), "3600000".to_string())
            ]
        );
        assert!(to_copy(&kafka(&[]), &Excludes::new(&[])).is_empty());
    }

    #[test]
    fn issue_18_the_source_brokers_own_settings_never_travel() {
        // log.retention.ms in the source's server.properties: retention.ms is STATIC_BROKER.
        let source = kafka_with(
            &[("cleanup.policy", "compact")],
            &[("retention.ms", "3600000")],
        );
        let copy = to_copy(&source, &Excludes::new(&[]));
        assert_eq!(copy.keys().collect::<Vec<_>>(), vec!["cleanup.policy"]);
        assert!(to_copy(
            &kafka_with(&[], &[("retention.ms", "1")]),
            &Excludes::new(&[])
        )
        .is_empty());
    }

    #[test]
    fn issue_18_a_compacted_topic_with_the_commonly_set_keys_is_not_a_full_answer() {
        // tansu: exactly cleanup.policy, retention.ms and segment.bytes set, flagged default.
        let source = vec![
            entry("cleanup.policy", "compact", true, false),
            entry("retention.ms", "3600000", true, false),
            entry("segment.bytes", "1048576", true, false),
        ];
        assert_eq!(to_copy(&source, &Excludes::new(&[])).len(), 3);
    }

    #[test]
    fn a_broker_without_config_sources_falls_back_to_is_default() {
        let mut set = entry("retention.ms", "5", false, false);
        set.has_source = false;
        let mut default = entry("segment.ms", "6", true, false);
        default.has_source = false;
        let copy = to_copy(&[set, default], &Excludes::new(&[]));
        assert_eq!(copy.keys().collect::<Vec<_>>(), vec!["retention.ms"]);
    }

    #[test]
    fn issue_18_timestamp_limits_never_travel() {
        let source = kafka(&[
            ("message.timestamp.before.max.ms", "86400000"),
            ("message.timestamp.after.max.ms", "3600000"),
        ]);
        assert!(to_copy(&source, &Excludes::new(&[])).is_empty());
    }

    #[test]
    fn a_broker_listing_only_set_keys_as_defaults_copies_them_all() {
        // tansu 0.6: only the keys set at creation, each flagged default.
        let source = vec![
            entry("cleanup.policy", "compact", true, false),
            entry("segment.ms", "60000", true, false),
            entry("min.insync.replicas", "2", true, false),
        ];
        let copy = to_copy(&source, &Excludes::new(&["segment.*".into()]));
        assert_eq!(copy.len(), 1, "{copy:?}");
        assert_eq!(copy["cleanup.policy"], "compact");
    }

    #[test]
    fn read_only_sensitive_and_valueless_keys_never_travel() {
        let mut ro = entry("retention.bytes", "10", false, true);
        ro.read_only = true;
        let mut secret = entry("x.secret", "s", false, true);
        secret.sensitive = true;
        let mut none = entry("segment.ms", "", false, true);
        none.value = None;
        assert!(to_copy(&[ro, secret, none], &Excludes::new(&[])).is_empty());
    }

    #[test]
    fn excludes_match_keys_and_prefixes() {
        let ex = Excludes::new(&["retention.*".into(), " segment.ms ".into()]);
        assert!(ex.excludes("min.insync.replicas"));
        assert!(ex.excludes("confluent.placement.constraints"));
        assert!(ex.excludes("retention.bytes"));
        assert!(ex.excludes("segment.ms"));
        assert!(!ex.excludes("segment.bytes"));
        assert!(!ex.excludes("cleanup.policy"));
    }

    #[test]
    fn drift_names_differing_and_missing_keys_only() {
        let copied: BTreeMap<String, String> = [
            ("cleanup.policy", "compact"),
            ("retention.ms", "3600000"),
            ("segment.ms", "60000"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let target = vec![
            entry("cleanup.policy", "compact", false, true),
            entry("retention.ms", "7200000", false, true),
            entry("min.insync.replicas", "3", false, true),
        ];
        let d = drift(&copied, &target);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            describe(&d[0]),
            "retention.ms: source '3600000', target '7200000'"
        );
        assert_eq!(
            describe(&d[1]),
            "segment.ms: source '60000', target not set"
        );
    }
}
