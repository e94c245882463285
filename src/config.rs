//! YAML config file + flags + environment → a validated [`RunOptions`].
//! All serde_yaml use lives here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;

use crate::cli::{CopyArgs, EndpointArgs, GapPolicy, Guarantee, StartPosition};
use crate::error::{Error, Result};
use crate::transactional::Shard;

/// Environment variable naming the config file (below `--config`, above the default path).
pub const CONFIG_ENV: &str = "KREPLICATE_CONFIG";

/// The config file as written by the user.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub clusters: BTreeMap<String, ClusterEntry>,
    #[serde(default)]
    pub defaults: Defaults,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterEntry {
    pub bootstrap: String,
    /// librdkafka properties for every client talking to this cluster (TLS, SASL, ...).
    #[serde(default)]
    pub properties: BTreeMap<String, serde_yaml::Value>,
}

/// Defaults for flags; a flag given on the command line wins.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Defaults {
    pub from: Option<String>,
    pub to: Option<String>,
    pub topics: Option<String>,
    pub guarantee: Option<Guarantee>,
    pub rename: Option<String>,
    pub group: Option<String>,
    pub start: Option<StartPosition>,
    pub on_gap: Option<GapPolicy>,
    pub delivery_timeout: Option<String>,
    pub timeout: Option<String>,
    pub commit_interval: Option<String>,
    pub join_timeout: Option<String>,
    pub create_topics: Option<bool>,
    pub replication_factor: Option<i32>,
    pub shard: Option<String>,
    pub txn_max_records: Option<u64>,
    pub txn_max_bytes: Option<String>,
    pub txn_max_time: Option<String>,
}

/// One side of the copy.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterSpec {
    /// What the user called it: a config name or the bootstrap list.
    pub name: String,
    pub bootstrap: String,
    /// Passthrough librdkafka properties, config file first, then flags.
    pub properties: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
pub enum TopicSelection {
    List(Vec<String>),
    Regex(Regex),
}

impl TopicSelection {
    pub fn parse(spec: &str) -> Result<Self> {
        let spec = spec.trim();
        if spec.starts_with('^') {
            let re = Regex::new(spec).map_err(|e| {
                // The regex crate's message spans lines; its last line says what is wrong.
                let text = e.to_string();
                let why = text.lines().last().unwrap_or_default();
                let why = why.strip_prefix("error: ").unwrap_or(why);
                Error::usage(format!("--topics: bad regex '{spec}': {why}"))
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
            return Err(Error::usage(
                "--topics is empty: give a comma list of topics or a regex starting with '^'",
            ));
        }
        Ok(TopicSelection::List(list))
    }
}

/// Everything a run needs, validated.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub from: ClusterSpec,
    pub to: ClusterSpec,
    pub topics: TopicSelection,
    pub guarantee: Guarantee,
    pub rename: String,
    pub group: String,
    pub until_caught_up: bool,
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
    /// The static shard this process owns (`--shard`). Without one, `none` and
    /// `at-least-once` share the source partitions through the consumer group, and
    /// exactly-once owns shard 1/1.
    pub shard: Option<Shard>,
    /// exactly-once: bounds on one transaction.
    pub txn_max_records: u64,
    pub txn_max_bytes: u64,
    pub txn_max_time: Duration,
}

impl RunOptions {
    /// The target topic name for a source topic.
    pub fn target_topic(&self, source: &str) -> String {
        self.rename.replace("{topic}", source)
    }
}

/// Where the config file comes from: `--config`, then `$KREPLICATE_CONFIG`, then the default.
pub fn config_path(flag: Option<&Path>) -> (Option<PathBuf>, bool) {
    if let Some(p) = flag {
        return (Some(p.to_path_buf()), true);
    }
    if let Some(p) = std::env::var_os(CONFIG_ENV).filter(|p| !p.is_empty()) {
        return (Some(PathBuf::from(p)), true);
    }
    (default_config_path(), false)
}

/// `$XDG_CONFIG_HOME/kreplicate/config.yaml`, else `~/.config/kreplicate/config.yaml`.
pub fn default_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("kreplicate").join("config.yaml"))
}

/// Reads the config file. A missing file is an error only when the user named it.
pub fn load_file(path: Option<&Path>, required: bool) -> Result<FileConfig> {
    let Some(path) = path else {
        return Ok(FileConfig::default());
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
            return Ok(FileConfig::default())
        }
        Err(e) => return Err(Error::usage(format!("config file {}: {e}", path.display()))),
    };
    parse_file(&text).map_err(|e| Error::usage(format!("config file {}: {e}", path.display())))
}

pub fn parse_file(text: &str) -> std::result::Result<FileConfig, String> {
    if text.trim().is_empty() {
        return Ok(FileConfig::default());
    }
    serde_yaml::from_str(text).map_err(|e| hide_value(&e.to_string()))
}

/// serde quotes the offending value in type errors (`invalid type: string "sasl.password=…",
/// expected a map`); keep the path, the kind of value and the position, never the value.
fn hide_value(msg: &str) -> String {
    for marker in ["invalid type: ", "invalid value: "] {
        let Some(at) = msg.find(marker) else { continue };
        let start = at + marker.len();
        // The last ", expected" is serde's own: the value may contain that text too.
        let Some(len) = msg[start..].rfind(", expected") else {
            continue;
        };
        let kind = msg[start..start + len]
            .split(['"', '`', '\''])
            .next()
            .unwrap_or_default()
            .trim();
        return format!(
            "{}{kind} (value not shown){}",
            &msg[..start],
            &msg[start + len..]
        );
    }
    msg.to_string()
}

/// The clusters and topics of a run, from flags over the config file's defaults.
#[derive(Clone, Debug)]
pub struct Endpoints {
    pub from: ClusterSpec,
    pub to: ClusterSpec,
    pub topics: TopicSelection,
    pub rename: String,
}

/// Resolves the flags `kreplicate` and `kreplicate verify` share.
pub fn endpoints(args: &EndpointArgs, file: &FileConfig) -> Result<Endpoints> {
    let d = &file.defaults;
    let missing = |flag: &str| {
        Error::usage(format!(
            "missing {flag} <CLUSTER> (a config cluster name or host:port list)"
        ))
    };
    let from = args
        .from
        .clone()
        .or_else(|| d.from.clone())
        .ok_or_else(|| missing("--from"))?;
    let to = args
        .to
        .clone()
        .or_else(|| d.to.clone())
        .ok_or_else(|| missing("--to"))?;
    let topics = args
        .topics
        .clone()
        .or_else(|| d.topics.clone())
        .ok_or_else(|| Error::usage("missing --topics <LIST|^REGEX>"))?;
    let mut from = cluster(file, &from, "--from")?;
    let mut to = cluster(file, &to, "--to")?;
    from.properties
        .extend(parse_properties(&args.from_property, "--from-property")?);
    to.properties
        .extend(parse_properties(&args.to_property, "--to-property")?);
    let topics = TopicSelection::parse(&topics)?;
    let rename = args
        .rename
        .clone()
        .or_else(|| d.rename.clone())
        .unwrap_or_else(|| "{topic}".into());
    if rename.trim().is_empty() {
        return Err(Error::usage(
            "--rename is empty: use a template such as 'backup.{topic}'",
        ));
    }
    if !rename.contains("{topic}") {
        if let TopicSelection::List(l) = &topics {
            if l.len() > 1 {
                return Err(Error::usage(format!(
                    "--rename '{rename}' has no {{topic}}: it would copy {} topics into one",
                    l.len()
                )));
            }
        }
    }
    Ok(Endpoints {
        from,
        to,
        topics,
        rename,
    })
}

/// Merges flags over the config file and validates the result.
pub fn resolve(args: &CopyArgs, file: &FileConfig) -> Result<RunOptions> {
    let d = &file.defaults;
    let Endpoints {
        from,
        to,
        topics,
        rename,
    } = endpoints(&args.ends, file)?;
    let guarantee = args.guarantee.or(d.guarantee).unwrap_or_default();
    let group = args
        .group
        .clone()
        .or_else(|| d.group.clone())
        .unwrap_or_else(|| default_group(&to.name));
    if group.trim().is_empty() {
        return Err(Error::usage("--group is empty"));
    }

    let duration = |flag: &Option<String>,
                    default: &Option<String>,
                    name: &str,
                    fallback: Duration| {
        match flag.as_ref().or(default.as_ref()) {
            Some(s) => parse_duration(s).map_err(|e| Error::usage(format!("--{name} '{s}': {e}"))),
            None => Ok(fallback),
        }
    };
    let delivery_timeout = duration(
        &args.delivery_timeout,
        &d.delivery_timeout,
        "delivery-timeout",
        Duration::from_secs(120),
    )?;
    let timeout = duration(
        &args.timeout,
        &d.timeout,
        "timeout",
        Duration::from_secs(30),
    )?;
    let commit_interval = duration(
        &args.commit_interval,
        &d.commit_interval,
        "commit-interval",
        Duration::from_secs(5),
    )?;
    let join_timeout = duration(
        &args.join_timeout,
        &d.join_timeout,
        "join-timeout",
        Duration::from_secs(120),
    )?;
    for (name, v) in [
        ("delivery-timeout", delivery_timeout),
        ("timeout", timeout),
        ("commit-interval", commit_interval),
        ("join-timeout", join_timeout),
    ] {
        if v.is_zero() {
            return Err(Error::usage(format!("--{name} must be greater than zero")));
        }
    }
    // librdkafka refuses message.timeout.ms above i32::MAX; keep flushes under max.poll.interval.ms.
    if delivery_timeout > Duration::from_secs(240) {
        return Err(Error::usage(
            "--delivery-timeout must be at most 240s (it has to stay below the consumer's max.poll.interval.ms)",
        ));
    }
    let txn_max_time = duration(
        &args.txn_max_time,
        &d.txn_max_time,
        "txn-max-time",
        Duration::from_secs(2),
    )?;
    let shard = match args.shard.as_ref().or(d.shard.as_ref()) {
        Some(s) => Some(Shard::parse(s).map_err(|e| Error::usage(format!("--shard '{s}': {e}")))?),
        None => None,
    };
    let txn_max_records = args
        .txn_max_records
        .or(d.txn_max_records)
        .unwrap_or(200_000);
    let txn_max_bytes = match args.txn_max_bytes.as_ref().or(d.txn_max_bytes.as_ref()) {
        Some(s) => {
            parse_size(s).map_err(|e| Error::usage(format!("--txn-max-bytes '{s}': {e}")))?
        }
        None => 128 << 20,
    };
    if txn_max_records == 0 || txn_max_bytes == 0 || txn_max_time.is_zero() {
        return Err(Error::usage(
            "--txn-max-records, --txn-max-bytes and --txn-max-time must be greater than zero",
        ));
    }
    let replication_factor = args.replication_factor.or(d.replication_factor);
    if let Some(rf) = replication_factor {
        if rf < 1 {
            return Err(Error::usage("--replication-factor must be at least 1"));
        }
    }

    Ok(RunOptions {
        from,
        to,
        topics,
        guarantee,
        rename,
        group,
        until_caught_up: args.until_caught_up,
        start: args.start.or(d.start).unwrap_or_default(),
        on_gap: args.on_gap.or(d.on_gap).unwrap_or_default(),
        delivery_timeout,
        timeout,
        commit_interval,
        join_timeout,
        create_topics: args.create_topics || d.create_topics.unwrap_or(false),
        replication_factor,
        shard,
        txn_max_records,
        txn_max_bytes,
        txn_max_time,
    })
}

/// Default source consumer group: stable per target, so cron runs resume where they stopped.
fn default_group(to: &str) -> String {
    let clean: String = to
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

/// A `--from`/`--to` value: a config cluster name, else a `host:port[,host:port]` list.
pub fn cluster(file: &FileConfig, value: &str, flag: &str) -> Result<ClusterSpec> {
    let value = value.trim();
    if let Some(entry) = file.clusters.get(value) {
        if entry.bootstrap.trim().is_empty() {
            return Err(Error::usage(format!(
                "config: clusters.{value}.bootstrap is empty"
            )));
        }
        let mut properties = Vec::new();
        for (k, v) in &entry.properties {
            let path = format!("clusters.{value}.properties.{k}");
            properties.push((k.clone(), property_value(v, &path)?));
        }
        return Ok(ClusterSpec {
            name: value.to_string(),
            bootstrap: entry.bootstrap.trim().to_string(),
            properties,
        });
    }
    if is_bootstrap_list(value) {
        return Ok(ClusterSpec {
            name: value.to_string(),
            bootstrap: value.to_string(),
            properties: Vec::new(),
        });
    }
    let known: Vec<&str> = file.clusters.keys().map(String::as_str).collect();
    let known = if known.is_empty() {
        "the config file defines no clusters".to_string()
    } else {
        format!("known: {}", known.join(", "))
    };
    Err(Error::usage(format!(
        "{flag} '{value}': unknown cluster name ({known}); give a config cluster name or host:port"
    )))
}

fn is_bootstrap_list(value: &str) -> bool {
    !value.is_empty()
        && value.split(',').all(|hp| {
            let hp = hp.trim();
            let hp = hp.rsplit_once("://").map_or(hp, |(_, rest)| rest);
            matches!(hp.rsplit_once(':'), Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok())
        })
}

/// YAML scalars become librdkafka strings; `${VAR}` takes a value from the environment so
/// secrets need not sit in the file.
fn property_value(v: &serde_yaml::Value, path: &str) -> Result<String> {
    let raw = match v {
        serde_yaml::Value::String(s) => s.clone(),
        serde_yaml::Value::Bool(b) => b.to_string(),
        serde_yaml::Value::Number(n) => n.to_string(),
        _ => {
            return Err(Error::usage(format!(
                "config: {path} must be a string, number or boolean"
            )))
        }
    };
    expand_env(&raw).map_err(|var| {
        Error::usage(format!(
            "config: {path} refers to ${{{var}}}, which is not set in the environment"
        ))
    })
}

fn expand_env(raw: &str) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        let var = &rest[start + 2..start + 2 + len];
        out.push_str(&rest[..start]);
        out.push_str(&std::env::var(var).map_err(|_| var.to_string())?);
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    Ok(out)
}

pub fn parse_properties(items: &[String], flag: &str) -> Result<Vec<(String, String)>> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            // Without '=' there is no telling key from value (`sasl.password:hunter2`): name
            // only the leading key-like part.
            _ => {
                let key: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
                    .collect();
                let named = if key.is_empty() {
                    String::new()
                } else {
                    format!(" '{key}'")
                };
                Err(Error::usage(format!(
                    "{flag}{named}: expected key=value (the argument is not shown: it may hold a secret)"
                )))
            }
        })
        .collect()
}

/// `1048576`, `512KiB`, `32MiB`, `1GiB` (also KB, MB, GB as powers of 1000).
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| "expected a size such as 1048576, 512KiB or 32MiB".to_string())?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" => 1000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        u => {
            return Err(format!(
                "unknown unit '{u}' (use KiB, MiB, GiB, KB, MB or GB)"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| "size out of range".to_string())
}

/// `500ms`, `30s`, `2m`, `1h`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| "expected a duration such as 500ms, 30s, 2m or 1h".to_string())?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        u => return Err(format!("unknown unit '{u}' (use ms, s, m or h)")),
    };
    if !secs.is_finite() || secs > 1e9 {
        return Err("duration out of range".into());
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert_eq!(parse_size("32MiB").unwrap(), 32 << 20);
        assert_eq!(parse_size("2KB").unwrap(), 2000);
        assert!(parse_size("3 furlongs").is_err());
    }

    #[test]
    fn bootstrap_lists() {
        assert!(is_bootstrap_list("127.0.0.1:9092"));
        assert!(is_bootstrap_list("a:1,b:2"));
        assert!(is_bootstrap_list("SSL://broker:9093"));
        assert!(!is_bootstrap_list("prod"));
        assert!(!is_bootstrap_list("prod:x"));
    }

    #[test]
    fn unknown_yaml_key_is_rejected_with_its_name() {
        let err =
            parse_file("clusters:\n  a:\n    bootstrap: x:1\n    bootstarp: y\n").unwrap_err();
        assert!(err.contains("bootstarp"), "{err}");
        let err = parse_file("defaults:\n  guarantee: sometimes\n").unwrap_err();
        assert!(err.contains("sometimes"), "{err}");
    }

    #[test]
    fn properties_become_strings_and_expand_env() {
        std::env::set_var("KREPLICATE_TEST_SECRET", "s3cret");
        let f = parse_file(
            "clusters:\n  a:\n    bootstrap: h:1\n    properties:\n      socket.keepalive.enable: true\n      retries: 5\n      sasl.password: ${KREPLICATE_TEST_SECRET}\n",
        )
        .unwrap();
        let c = cluster(&f, "a", "--from").unwrap();
        assert_eq!(
            c.properties,
            vec![
                ("retries".to_string(), "5".to_string()),
                ("sasl.password".to_string(), "s3cret".to_string()),
                ("socket.keepalive.enable".to_string(), "true".to_string()),
            ]
        );
        let f = parse_file(
            "clusters:\n  a:\n    bootstrap: h:1\n    properties:\n      sasl.password: ${KREPLICATE_TEST_UNSET_VAR}\n",
        )
        .unwrap();
        let err = cluster(&f, "a", "--from").unwrap_err().to_string();
        assert!(err.contains("clusters.a.properties.sasl.password"), "{err}");
    }

    #[test]
    fn issue_13_yaml_type_errors_never_show_the_value() {
        let err = parse_file(
            "clusters:\n  src:\n    bootstrap: h:1\n    properties: \"sasl.password=kp-secret, expected x\"\n",
        )
        .unwrap_err();
        assert!(!err.contains("kp-secret"), "{err}");
        assert!(
            err.contains("clusters.src.properties") && err.contains("line 4"),
            "{err}"
        );
        assert!(err.contains("expected a map"), "{err}");
        let err =
            parse_file("clusters:\n  src:\n    bootstrap: 1234567\n    properties: 987654321\n")
                .unwrap_err();
        assert!(!err.contains("987654321"), "{err}");
        // Unknown keys and enum variants are names, not values: still shown.
        let err = parse_file("defaults:\n  guarantee: sometimes\n").unwrap_err();
        assert!(err.contains("sometimes"), "{err}");
    }

    #[test]
    fn issue_13_a_malformed_property_argument_is_not_echoed() {
        let err = parse_properties(&["sasl.password:hunter2".into()], "-X/--from-property")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("hunter2"), "{err}");
        assert!(
            err.contains("'sasl.password'") && err.contains("key=value"),
            "{err}"
        );
        let err = parse_properties(&[":hunter2".into()], "--to-property")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn unknown_cluster_names_the_known_ones() {
        let f = parse_file("clusters:\n  prod:\n    bootstrap: h:1\n").unwrap();
        let err = cluster(&f, "prdo", "--from").unwrap_err().to_string();
        assert!(err.contains("prdo") && err.contains("prod"), "{err}");
    }

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
