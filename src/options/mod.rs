//! The run's vocabulary: what the command line and the config file resolve to, and what the
//! engines, `verify` and the demo take, with every built-in default ([`defaults`]). Imports
//! nothing of the engines.

pub mod defaults;

use std::time::Duration;

use clap::ValueEnum;
use regex::Regex;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::shard::Shard;

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Guarantee {
    /// Fastest: offsets are committed as records are read; records may be lost on failure
    None,
    /// Commit only what the target acknowledged; duplicates possible after a failure
    #[default]
    AtLeastOnce,
    /// Transactional copy; the target holds the positions; read_committed readers of the
    /// target see every record once
    ExactlyOnce,
}

impl Guarantee {
    pub fn as_str(self) -> &'static str {
        match self {
            Guarantee::None => "none",
            Guarantee::AtLeastOnce => "at-least-once",
            Guarantee::ExactlyOnce => "exactly-once",
        }
    }
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StartPosition {
    /// The oldest record still in the source
    #[default]
    Earliest,
    /// Only records written after the run starts
    Latest,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GapPolicy {
    /// Stop with exit 1 and name the partition and offsets
    #[default]
    Fail,
    /// Continue from the oldest record still in the source
    Earliest,
    /// Continue from the newest record of the source
    Latest,
}

/// One side of the copy.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterSpec {
    /// What the user called it: a config name or the bootstrap list.
    pub name: String,
    pub bootstrap: String,
    /// Passthrough librdkafka properties, config file first, then flags.
    pub properties: Vec<(String, String)>,
    /// The config file's `clusters.NAME.id`: the cluster's identity when its brokers report
    /// no cluster id (origins, loop prevention and the default group name it).
    pub id: Option<String>,
}

#[derive(Clone, Debug)]
pub enum TopicSelection {
    List(Vec<String>),
    Regex(Regex),
}

impl TopicSelection {
    /// `--topics` (the tests' shorthand; the config names where a value came from).
    #[cfg(test)]
    pub fn parse(spec: &str) -> Result<Self> {
        Self::parse_flag(spec, "--topics")
    }

    /// A `LIST|^REGEX` value of `flag` (`--topics`, `--exclude`).
    pub fn parse_flag(spec: &str, flag: &str) -> Result<Self> {
        let spec = spec.trim();
        if spec.starts_with('^') {
            let re = Regex::new(spec).map_err(|e| {
                // The regex crate's message spans lines; its last line says what is wrong.
                let text = e.to_string();
                let why = text.lines().last().unwrap_or_default();
                let why = why.strip_prefix("error: ").unwrap_or(why);
                Error::usage(format!("{flag}: bad regex '{spec}': {why}"))
            })?;
            return Ok(TopicSelection::Regex(re));
        }
        let list: Vec<String> = spec
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        if list.is_empty() {
            return Err(Error::usage(format!(
                "{flag} is empty: give a comma list of names or a regex starting with '^'"
            )));
        }
        Ok(TopicSelection::List(list))
    }

    pub fn matches(&self, topic: &str) -> bool {
        match self {
            TopicSelection::List(l) => l.iter().any(|t| t == topic),
            TopicSelection::Regex(re) => re.is_match(topic),
        }
    }
}

/// `kreplicate.<name>`, with every character a group id is better without (':' and ',' of a
/// bootstrap list) as '_': the default group of the cluster `name` (engine::positions adds the
/// rename; config keeps the name as spelled for the old default group).
pub fn kreplicate_group(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("kreplicate.{clean}")
}

/// Everything a run needs, validated.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub from: ClusterSpec,
    pub to: ClusterSpec,
    pub topics: TopicSelection,
    /// `--exclude`: source topics left out of `topics`.
    pub exclude: Option<TopicSelection>,
    pub guarantee: Guarantee,
    pub rename: String,
    /// `--group`; without one, the old-style default (`kreplicate.<TO as spelled>`) until the
    /// start replaces it with the route's default (see `group_is_default`).
    pub group: String,
    /// No `--group` (nor config `group`): the group is named after the target cluster's
    /// identity and `--rename` once the target answered.
    pub group_is_default: bool,
    /// `--trust-group-positions`: start from the group's positions even on an empty target.
    pub trust_group_positions: bool,
    pub until_caught_up: bool,
    /// How often a continuous run looks at the source's topics again (`--refresh-topics`);
    /// `None` with `--until-caught-up` or `--refresh-topics off`.
    pub refresh_topics: Option<Duration>,
    pub start: StartPosition,
    pub on_gap: GapPolicy,
    /// Bound on one record's delivery (librdkafka `message.timeout.ms`) and on flushes.
    pub delivery_timeout: Duration,
    /// Bound on broker requests made at start and on commits.
    pub timeout: Duration,
    pub commit_interval: Duration,
    /// Bound on waiting for the group to assign partitions.
    pub join_timeout: Duration,
    pub create_topics: bool,
    pub replication_factor: Option<i32>,
    /// `--config-exclude`: config keys (a trailing `*` is a prefix) that never travel, on top
    /// of the built-in list.
    pub config_exclude: Vec<String>,
    /// `--sync-configs`: set the source's values of copied configs on existing target topics.
    pub sync_configs: bool,
    /// `--sync-acls`: copy the copied topics' ACLs to the target (MirrorMaker 2's rule).
    pub sync_acls: bool,
    /// `--sync-group-acls`: also the ACLs of these source consumer groups.
    pub sync_group_acls: Option<TopicSelection>,
    /// `--max-bytes-per-sec` and `--max-records-per-sec`: the read side's rate limits.
    pub max_bytes_per_sec: Option<u64>,
    pub max_records_per_sec: Option<u64>,
    /// The static shard this process owns (`--shard`). Without one, `none` and
    /// `at-least-once` share the source partitions through the consumer group, and
    /// exactly-once owns shard 1/1.
    pub shard: Option<Shard>,
    /// exactly-once: bounds on one transaction.
    pub txn_max_records: u64,
    pub txn_max_bytes: u64,
    pub txn_max_time: Duration,
    pub metrics: Metrics,
    /// Stamp every copied record with its origin (off with `--no-origin-header`).
    pub origin_header: bool,
    /// `--sync-groups`: consumer groups to translate to the target while copying, and how often.
    pub sync_groups: Option<String>,
    pub sync_groups_interval: Duration,
    /// `--flow NAME`: the config file's named flow this run is (its default group, client id
    /// and `run_info` name it).
    pub flow: Option<String>,
}

/// Where the run publishes its metrics, if anywhere.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    /// `--metrics-addr`: serve `/metrics` and `/healthz` here.
    pub addr: Option<String>,
    /// `--metrics-file`: write the metrics here (atomically) every `file_interval` and at exit.
    pub file: Option<std::path::PathBuf>,
    pub file_interval: Duration,
}

impl Metrics {
    pub fn enabled(&self) -> bool {
        self.addr.is_some() || self.file.is_some()
    }
}

impl RunOptions {
    /// The target topic name for a source topic.
    pub fn target_topic(&self, source: &str) -> String {
        self.rename.replace("{topic}", source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_selection() {
        assert!(
            matches!(TopicSelection::parse("a, b").unwrap(), TopicSelection::List(l) if l == ["a", "b"])
        );
        assert!(matches!(
            TopicSelection::parse("^orders\\..*").unwrap(),
            TopicSelection::Regex(_)
        ));
        assert!(TopicSelection::parse("^(").is_err());
        assert!(TopicSelection::parse(" , ").is_err());
    }
}
