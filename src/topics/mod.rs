//! What is known and done about topics: both clusters reachable, topics selected and mapped,
//! target topics created (configs included) or grown, copied configs that differ. Whether a
//! topic is copied at all is decided in `preflight`, which reads this module.
//!
//! * this module: routes, metadata, selection (`--topics`, `--exclude`, `--rename`);
//! * `realise`: the writes of the start and of discovery: create topics, add partitions,
//!   set configs; `changes`: what they changed, for the summary;
//! * `configs`: which configs travel and where a target differs (pure);
//! * `drift`: reading both sides' configs and reporting what differs;
//! * `admin`: the admin client and describing topic configs;
//! * `alter`: IncrementalAlterConfigs through librdkafka's C API;
//! * `limits`: the smallest `max.message.bytes` of the target topics;
//! * `loops`: which source topics are copies of the target's (loop prevention);
//! * `index`: the positions index topic on the target;
//! * `txn_limit`: exactly-once's transaction timeout against the target broker's limit;

pub(crate) mod admin;
mod alter;
mod awaited;
mod changes;
pub mod configs;
pub(crate) mod drift;
pub(crate) mod index;
pub mod limits;
pub mod loops;
pub(crate) mod realise;
pub(crate) mod txn_limit;

pub use admin::consumer_protocol_offered;
pub use awaited::any_selected;
pub use changes::{AddedPartitions, CreatedTopic, TargetChanges};
pub use drift::{config_differences, TopicDrift};

use self::configs::Drift;

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;

use crate::error::{Error, Result};
use crate::kafka;
use crate::options::{ClusterSpec, RunOptions, TopicSelection};
use crate::shard::Shard;

/// One selected topic as a run would find it.
#[derive(Debug, Clone)]
pub struct TopicCheck {
    pub route: Route,
    /// The target topic's partition count; `None` when it does not exist.
    pub target_partitions: Option<i32>,
    /// Configs a missing target topic is created with (with `--create-topics`).
    pub create_configs: BTreeMap<String, String>,
    /// Copied configs an existing target topic differs in.
    pub drift: Vec<Drift>,
}

/// A source topic and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub source: String,
    pub target: String,
    pub partitions: i32,
}

/// Waits until metadata shows each `(topic, partitions)` with at least that many partitions.
pub(super) fn wait_for(
    target: &Metadata,
    topics: &[(&str, i32)],
    timeout: Duration,
) -> std::result::Result<(), String> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let ready = topic_partitions(target, timeout)
            .map(|t| {
                topics
                    .iter()
                    .all(|(name, n)| t.get(*name).is_some_and(|have| have >= n))
            })
            .unwrap_or(false);
        if ready {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err("it did not show up in the target's metadata in time".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Both clusters' ids, where they report one.
pub(crate) fn cluster_ids(
    opts: &RunOptions,
    a: &Metadata,
    b: &Metadata,
) -> (Option<String>, Option<String>) {
    let timeout = opts.timeout.min(Duration::from_secs(5));
    (
        a.client().fetch_cluster_id(timeout),
        b.client().fetch_cluster_id(timeout),
    )
}

/// The source partitions of `routes` this shard owns; a usage error when it owns none.
pub fn owned<'r>(shard: &Shard, routes: &'r [Route]) -> Result<Vec<(&'r Route, i32)>> {
    let owned: Vec<(&Route, i32)> = routes
        .iter()
        .flat_map(|r| (0..r.partitions).map(move |p| (r, p)))
        .filter(|(r, p)| shard.owns(&r.source, *p))
        .collect();
    if owned.is_empty() {
        let total: i32 = routes.iter().map(|r| r.partitions).sum();
        return Err(Error::usage(format!(
            "--shard {}/{} owns none of the {total} source partitions: use fewer shards",
            shard.index, shard.count
        )));
    }
    Ok(owned)
}

/// A client for metadata requests, which keeps librdkafka's error reasons.
pub type Metadata = BaseConsumer<kafka::Reasons>;

/// A metadata client for one side, and topic → partition count for every topic there.
pub fn metadata(
    spec: &ClusterSpec,
    side: &str,
    flag: &str,
    timeout: Duration,
) -> Result<(Metadata, HashMap<String, i32>)> {
    let mut config = kafka::admin_config(spec);
    // Connection failures are logged at INFO: keep them for the reason, even without -v.
    if (config.log_level as i32) < RDKafkaLogLevel::Info as i32 {
        config.set_log_level(RDKafkaLogLevel::Info);
    }
    let client: Metadata = config
        .create_with_context(kafka::Reasons::default())
        .map_err(|e| kafka::creation_error(side, e))?;
    let deadline = Instant::now() + timeout;
    let (started, mut told) = (Instant::now(), None::<Instant>);
    let topics = loop {
        // Short tries, so refused credentials end the wait at once and the wait says why.
        let left = deadline.saturating_duration_since(Instant::now());
        let answer = topic_partitions(&client, left.min(Duration::from_secs(1)));
        kafka::serve_logs(&client);
        if let Some(fix) = client.context().refused() {
            return Err(Error::usage(format!(
                "the {side} cluster '{}' refused the connection: {fix}",
                spec.name
            )));
        }
        // One reading of the clock decides both: read twice, a busy machine could pass the
        // deadline between them and print "retrying, 0 s left" before the error (issue 41).
        let now = Instant::now();
        match answer {
            Ok(topics) => break Ok(topics),
            Err(e) if now >= deadline => break Err(e),
            Err(_) => {
                // Say what the run waits for, and why, every few seconds: the display only
                // shows that it checks the clusters.
                let every = (timeout / 6).max(TELL_WAIT_EVERY);
                if let Some(left) = tell_wait(told.unwrap_or(started), now, deadline, every) {
                    told = Some(now);
                    crate::lines::say(&waiting_line(side, spec, client.context().kind(), left));
                }
            }
        }
    };
    // A broker that is down or slow may be up at the next run: not a usage error.
    let topics = topics.map_err(|_| {
        Error::failed(format!(
            "cannot reach the {side} cluster '{}' within {timeout:?}: {}; check {flag}",
            spec.name,
            client.context().why()
        ))
    })?;
    Ok((client, topics))
}

/// How often, at least, a run waiting for a cluster says so: about five times per
/// `--timeout`, and not at all within 2 s (a broker that answers late is no news).
const TELL_WAIT_EVERY: Duration = Duration::from_secs(2);

/// Whether a run waiting for a cluster says so at `now` (it last said so, or started, at
/// `since`), and the time left to say: nothing within a second of the deadline, where the
/// error line follows instead and a retry notice would promise a retry that never comes.
fn tell_wait(since: Instant, now: Instant, deadline: Instant, every: Duration) -> Option<Duration> {
    let left = deadline.saturating_duration_since(now);
    (now.saturating_duration_since(since) >= every && left >= Duration::from_secs(1))
        .then_some(left)
}

/// `kreplicate: target 127.0.0.1:19399: connection refused, retrying, 25 s left`.
fn waiting_line(side: &str, spec: &ClusterSpec, kind: &str, left: Duration) -> String {
    let cluster = match spec.name == spec.bootstrap {
        true => spec.name.clone(),
        false => format!("'{}' ({})", spec.name, spec.bootstrap),
    };
    // Rounded up: "0 s left" would read as already given up.
    let left = left.as_millis().div_ceil(1000);
    format!("kreplicate: {side} {cluster}: {kind}, retrying, {left} s left")
}

/// Topic → partition count, for every topic of a cluster.
pub(crate) fn topic_partitions(
    client: &Metadata,
    timeout: Duration,
) -> std::result::Result<HashMap<String, i32>, KafkaError> {
    let md = client.fetch_metadata(None, timeout)?;
    Ok(md
        .topics()
        .iter()
        .filter(|t| t.error().is_none() && !t.partitions().is_empty())
        .map(|t| (t.name().to_string(), t.partitions().len() as i32))
        .collect())
}

/// Resolves `--topics` against the source's topics (`source_name` is the cluster as the
/// user named it), leaves out `--exclude`, and applies `--rename`.
pub fn select(
    topics: &TopicSelection,
    exclude: Option<&TopicSelection>,
    rename: &str,
    source: &HashMap<String, i32>,
    source_name: &str,
) -> Result<Vec<Route>> {
    let mut names: Vec<String> = match topics {
        TopicSelection::List(list) => {
            for t in list {
                if !source.contains_key(t) {
                    // Kafka topic names are letters, digits, '.', '_' and '-'.
                    let regex_like = t
                        .chars()
                        .any(|c| !(c.is_ascii_alphanumeric() || "._-".contains(c)));
                    let meant = crate::suggest::nearest(t, source.keys().map(String::as_str));
                    let hint = match (regex_like, meant) {
                        (true, _) => " (to use a regex, start it with '^')".to_string(),
                        (false, Some(m)) => format!("; did you mean '{m}'?"),
                        (false, None) => String::new(),
                    };
                    return Err(Error::usage(format!(
                        "source topic '{t}' does not exist on '{source_name}': check --topics{hint}"
                    )));
                }
            }
            list.clone()
        }
        TopicSelection::Regex(re) => source
            .keys()
            .filter(|t| !t.starts_with("__") && re.is_match(t))
            .cloned()
            .collect(),
    };
    names.sort();
    names.dedup();
    if names.is_empty() {
        return Err(Error::usage(format!(
            "no topic on '{source_name}' matches --topics"
        )));
    }
    if let Some(exclude) = exclude {
        names.retain(|t| !exclude.matches(t));
        if names.is_empty() {
            return Err(Error::usage(format!(
                "--exclude leaves out every topic on '{source_name}' that --topics selects"
            )));
        }
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut routes = Vec::new();
    for source_topic in names {
        let target = rename.replace("{topic}", &source_topic);
        if let Some(other) = seen.insert(target.clone(), source_topic.clone()) {
            return Err(Error::usage(format!(
                "--rename '{rename}' maps both '{other}' and '{source_topic}' to '{target}'"
            )));
        }
        // Every selected name comes from, or was checked against, the source's topics.
        let partitions = source.get(&source_topic).copied().unwrap_or_default();
        routes.push(Route {
            partitions,
            source: source_topic,
            target,
        });
    }
    Ok(routes)
}

/// Same cluster when both report the same cluster id, or share a bootstrap address.
pub(crate) fn same_cluster(opts: &RunOptions, ids: &(Option<String>, Option<String>)) -> bool {
    if let (Some(x), Some(y)) = ids {
        return x == y;
    }
    let addrs = |s: &str| -> Vec<String> {
        s.split(',')
            .map(|a| a.trim().to_ascii_lowercase())
            .filter(|a| !a.is_empty())
            .collect()
    };
    let (x, y) = (addrs(&opts.from.bootstrap), addrs(&opts.to.bootstrap));
    x.iter().any(|a| y.contains(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_41_no_retry_notice_within_a_second_of_the_deadline() {
        let started = Instant::now();
        let every = Duration::from_secs(2);
        // `--timeout 2s`: the deadline was taken a moment before `started`.
        let deadline = started + Duration::from_secs(2) - Duration::from_micros(50);
        let at = |ms: u64| started + Duration::from_millis(ms);
        assert_eq!(tell_wait(started, at(1_900), deadline, every), None);
        // The second fresh-clone failure: past `every`, a hair before the deadline.
        assert_eq!(
            tell_wait(
                started,
                deadline - Duration::from_micros(1),
                deadline,
                every
            ),
            None
        );
        let long = started + Duration::from_secs(30);
        assert_eq!(
            tell_wait(started, at(5_000), long, Duration::from_secs(5)),
            Some(Duration::from_secs(25))
        );
        assert_eq!(tell_wait(started, at(29_500), long, every), None);
    }

    #[test]
    fn issue_22_create_topics_says_what_it_created() {
        let changes = TargetChanges {
            created: vec![
                CreatedTopic {
                    topic: "events".into(),
                    partitions: 2,
                    configs: [
                        ("retention.ms".to_string(), "7200000".to_string()),
                        ("cleanup.policy".to_string(), "compact".to_string()),
                    ]
                    .into(),
                },
                CreatedTopic {
                    topic: "one".into(),
                    partitions: 1,
                    configs: BTreeMap::new(),
                },
            ],
            grown: vec![AddedPartitions {
                topic: "orders".into(),
                added: 2,
                partitions: 4,
            }],
        };
        assert_eq!(
            changes.lines(),
            [
                "created topic 'events' (2 partitions, cleanup.policy=compact, retention.ms=7200000)",
                "created topic 'one' (1 partition)",
                "added 2 partitions to 'orders' (now 4)",
            ]
        );
    }

    #[test]
    fn issue_22_a_missing_topic_that_looks_like_a_regex_says_how_to_write_one() {
        let source: HashMap<String, i32> = [("orders".to_string(), 1)].into();
        let missing = |name: &str| {
            let list = TopicSelection::List(vec![name.to_string()]);
            select(&list, None, "{topic}", &source, "a")
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            missing("orders.*"),
            "source topic 'orders.*' does not exist on 'a': check --topics (to use a regex, start it with '^')"
        );
        assert_eq!(
            missing("orders.eu"),
            "source topic 'orders.eu' does not exist on 'a': check --topics; did you mean 'orders'?"
        );
        assert_eq!(
            missing("payments"),
            "source topic 'payments' does not exist on 'a': check --topics"
        );
        // Issue 35: a typo of a source topic is answered with the one meant.
        assert_eq!(
            missing("ordres"),
            "source topic 'ordres' does not exist on 'a': check --topics; did you mean 'orders'?"
        );
    }
}
