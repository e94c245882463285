//! YAML config file + flags + environment -> a validated [`RunOptions`].
//! All serde_yaml use lives in this folder: `file` reads the YAML, `values` its scalars.

mod file;
mod values;

use std::time::Duration;

pub use self::file::{config_path, load_file, parse_file, pick, setting, FileConfig, Src};
use self::values::property_value;
pub use self::values::{parse_duration, parse_properties, parse_size};
use crate::cli::{CopyArgs, EndpointArgs};
use crate::error::{Error, Result};
use crate::options::{ClusterSpec, Guarantee, Metrics, RunOptions, TopicSelection};
use crate::shard::Shard;

/// The config file a command reads (`--config`, `$KREPLICATE_CONFIG` or the default path),
/// with `--flow NAME` applied.
pub fn load(args: &EndpointArgs) -> Result<FileConfig> {
    let (path, required) = config_path(args.config.as_deref());
    load_file(path.as_deref(), required)?.with_flow(args.flow.as_deref())
}

/// The clusters and topics of a run, from flags over the config file's defaults.
#[derive(Clone, Debug)]
pub struct Endpoints {
    pub from: ClusterSpec,
    pub to: ClusterSpec,
    pub topics: TopicSelection,
    pub exclude: Option<TopicSelection>,
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
    let from = pick(args.from.as_ref(), d.from.as_ref()).ok_or_else(|| missing("--from"))?;
    let to = pick(args.to.as_ref(), d.to.as_ref()).ok_or_else(|| missing("--to"))?;
    let topics = pick(args.topics.as_ref(), d.topics.as_ref())
        .ok_or_else(|| Error::usage("missing --topics <LIST|^REGEX>"))?;
    let mut from = endpoint(file, from, "from")?;
    let mut to = endpoint(file, to, "to")?;
    from.properties
        .extend(parse_properties(&args.from_property, "--from-property")?);
    to.properties
        .extend(parse_properties(&args.to_property, "--to-property")?);
    let selection = |(spec, src): (&str, Src), name: &str| match src {
        Src::Flag | Src::Builtin => TopicSelection::parse_flag(spec, &format!("--{name}")),
        // The selection's own message names the flag: name the key instead.
        Src::File => TopicSelection::parse_flag(spec, &file.key_location(name)),
    };
    let topics = selection(topics, "topics")?;
    let exclude = match pick(args.exclude.as_ref(), d.exclude.as_ref()) {
        Some(spec) => Some(selection(spec, "exclude")?),
        None => None,
    };
    let rename = setting(args.rename.as_ref(), d.rename.as_ref(), "rename")
        .map_or_else(String::new, |(r, _)| r.to_string());
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
        exclude,
        rename,
    })
}

/// A `--from`/`--to` value, or the config file's: an unknown cluster name is named where
/// it was written.
fn endpoint(file: &FileConfig, (value, src): (&str, Src), name: &str) -> Result<ClusterSpec> {
    match src {
        Src::Flag | Src::Builtin => cluster(file, value, &format!("--{name}")),
        Src::File => cluster(file, value, &format!("{}:", file.key_location(name))),
    }
}

/// Merges flags over the config file and validates the result.
pub fn resolve(args: &CopyArgs, file: &FileConfig) -> Result<RunOptions> {
    let d = &file.defaults;
    let Endpoints {
        from,
        to,
        topics,
        exclude,
        rename,
    } = endpoints(&args.ends, file)?;
    let guarantee = args.guarantee.or(d.guarantee).unwrap_or_default();
    let given = args.group.clone().or_else(|| d.group.clone());
    let group_is_default = given.is_none();
    // The default group before issue 18, named after `--to` as spelled: a run whose route's
    // default group holds no positions yet resumes from this one's (see `engine::positions`).
    let group = given.unwrap_or_else(|| crate::options::kreplicate_group(&to.name));
    if group.trim().is_empty() {
        return Err(Error::usage("--group is empty"));
    }

    let duration = |flag: &Option<String>, value: &Option<String>, name: &str| {
        duration(file, flag.as_ref(), value.as_ref(), name)
    };
    let delivery_timeout = duration(
        &args.delivery_timeout,
        &d.delivery_timeout,
        "delivery-timeout",
    )?;
    let timeout = timeout(args.timeout.as_ref(), file)?;
    let commit_interval = duration(&args.commit_interval, &d.commit_interval, "commit-interval")?;
    let join_timeout = duration(&args.join_timeout, &d.join_timeout, "join-timeout")?;
    // librdkafka refuses message.timeout.ms above i32::MAX; keep flushes under max.poll.interval.ms.
    if delivery_timeout > Duration::from_secs(240) {
        let src = setting(
            args.delivery_timeout.as_ref(),
            d.delivery_timeout.as_ref(),
            "delivery-timeout",
        )
        .map_or(Src::Builtin, |(_, src)| src);
        return Err(file.bad_setting(
            src,
            "delivery-timeout",
            "must be at most 240s (it has to stay below the consumer's max.poll.interval.ms)",
        ));
    }
    let txn_max_time = duration(&args.txn_max_time, &d.txn_max_time, "txn-max-time")?;
    let shard = match pick(args.shard.as_ref(), d.shard.as_ref()) {
        Some((s, src)) => Some(Shard::parse(s).map_err(|e| file.bad_value(src, "shard", s, &e))?),
        None => None,
    };
    let txn_max_records = match args.txn_max_records.or(d.txn_max_records) {
        Some(n) => n,
        None => builtin_number("txn-max-records")?,
    };
    let txn_max_bytes = match setting(
        args.txn_max_bytes.as_ref(),
        d.txn_max_bytes.as_ref(),
        "txn-max-bytes",
    ) {
        Some((s, src)) => parse_size(s).map_err(|e| file.bad_value(src, "txn-max-bytes", s, &e))?,
        None => return Err(file.bad_setting(Src::Builtin, "txn-max-bytes", "is missing")),
    };
    if txn_max_records == 0 || txn_max_bytes == 0 || txn_max_time.is_zero() {
        return Err(Error::usage(
            "--txn-max-records, --txn-max-bytes and --txn-max-time must be greater than zero",
        ));
    }
    let m = &args.metrics;
    let metrics = Metrics {
        addr: m.metrics_addr.clone().or_else(|| d.metrics_addr.clone()),
        file: m.metrics_file.clone().or_else(|| d.metrics_file.clone()),
        file_interval: duration(
            &m.metrics_file_interval,
            &d.metrics_file_interval,
            "metrics-file-interval",
        )?,
    };
    let origin_header = !(args.no_origin_header || d.no_origin_header.unwrap_or(false));
    if !origin_header && guarantee == Guarantee::ExactlyOnce {
        return Err(Error::usage(
            "--no-origin-header cannot be used with --guarantee exactly-once: the target resumes from the origin headers",
        ));
    }
    let sync_groups = args.sync_groups.clone().or_else(|| d.sync_groups.clone());
    let sync_groups_interval = duration(
        &args.sync_groups_interval,
        &d.sync_groups_interval,
        "sync-groups-interval",
    )?;
    if sync_groups.is_some() && !origin_header {
        return Err(Error::usage(
            "--sync-groups needs the origin header: it cannot translate positions with --no-origin-header",
        ));
    }
    let replication_factor = args.replication_factor.or(d.replication_factor);
    if let Some(rf) = replication_factor {
        if rf < 1 {
            return Err(Error::usage("--replication-factor must be at least 1"));
        }
    }

    let (max_bytes_per_sec, max_records_per_sec) = rate_limits(args, file)?;
    let sync_acls = args.sync_acls || d.sync_acls.unwrap_or(false);
    let sync_group_acls = match args.sync_group_acls.as_ref().or(d.sync_group_acls.as_ref()) {
        Some(_) if !sync_acls => {
            return Err(Error::usage(
                "--sync-group-acls needs --sync-acls: group ACLs are copied along with the topics' ACLs",
            ))
        }
        Some(s) => Some(TopicSelection::parse_flag(s, "--sync-group-acls")?),
        None => None,
    };
    let config_exclude = if args.config_exclude.is_empty() {
        d.config_exclude.clone().unwrap_or_default()
    } else {
        args.config_exclude.clone()
    };
    if let Some(bad) = config_exclude.iter().find(|k| k.trim().is_empty()) {
        return Err(Error::usage(format!(
            "--config-exclude has an empty key ('{bad}'): give a comma list of config keys"
        )));
    }

    Ok(RunOptions {
        from,
        to,
        topics,
        exclude,
        guarantee,
        rename,
        group,
        group_is_default,
        trust_group_positions: args.trust_group_positions
            || d.trust_group_positions.unwrap_or(false),
        until_caught_up: args.until_caught_up,
        refresh_topics: refresh_topics(args, file)?,
        start: args.start.or(d.start).unwrap_or_default(),
        on_gap: args.on_gap.or(d.on_gap).unwrap_or_default(),
        delivery_timeout,
        timeout,
        commit_interval,
        join_timeout,
        create_topics: args.create_topics || d.create_topics.unwrap_or(false),
        replication_factor,
        config_exclude,
        sync_configs: args.sync_configs || d.sync_configs.unwrap_or(false),
        sync_acls,
        sync_group_acls,
        max_bytes_per_sec,
        max_records_per_sec,
        shard,
        txn_max_records,
        txn_max_bytes,
        txn_max_time,
        metrics,
        origin_header,
        sync_groups,
        sync_groups_interval,
        flow: file.flow_name().map(String::from),
    })
}

/// `--refresh-topics`: a duration or `off` (60s by default); only for continuous runs. The
/// flag with `--until-caught-up` is refused (it would do nothing); the config file's default
/// is simply not used by such runs, so one file serves cron and continuous runs alike.
fn refresh_topics(args: &CopyArgs, file: &FileConfig) -> Result<Option<Duration>> {
    let d = &file.defaults;
    if args.until_caught_up {
        if let Some(s) = &args.refresh_topics {
            return Err(Error::usage(format!(
                "--refresh-topics '{s}' does nothing with --until-caught-up, which copies the topics found at start: leave one of them out"
            )));
        }
        return Ok(None);
    }
    let Some((s, src)) = setting(
        args.refresh_topics.as_ref(),
        d.refresh_topics.as_ref(),
        "refresh-topics",
    ) else {
        return Err(file.bad_setting(Src::Builtin, "refresh-topics", "is missing"));
    };
    if s.trim() == "off" {
        return Ok(None);
    }
    let every = parse_duration(s).map_err(|e| file.bad_value(src, "refresh-topics", s, &e))?;
    if every.is_zero() {
        return Err(file.bad_setting(
            src,
            "refresh-topics",
            "must be greater than zero (or 'off')",
        ));
    }
    Ok(Some(every))
}

/// A duration setting ([`setting`]: flag, flow, file defaults, built-in), above zero; a bad
/// one is named where it was written. `kreplicate`, `verify` and `groups` resolve theirs here.
pub fn duration(
    file: &FileConfig,
    flag: Option<&String>,
    value: Option<&String>,
    name: &str,
) -> Result<Duration> {
    let Some((s, src)) = setting(flag, value, name) else {
        return Err(file.bad_setting(Src::Builtin, name, "is missing"));
    };
    let v = parse_duration(s).map_err(|e| file.bad_value(src, name, s, &e))?;
    if v.is_zero() {
        return Err(file.bad_setting(src, name, "must be greater than zero"));
    }
    Ok(v)
}

/// `--timeout` of `kreplicate`, `verify` and `groups`.
pub fn timeout(flag: Option<&String>, file: &FileConfig) -> Result<Duration> {
    duration(file, flag, file.defaults.timeout.as_ref(), "timeout")
}

/// A whole-number built-in default (`txn-max-records`, which clap parses as a number).
fn builtin_number(name: &str) -> Result<u64> {
    let v = crate::options::defaults::of(name).unwrap_or_default();
    parse_size(v).map_err(|e| FileConfig::default().bad_value(Src::Builtin, name, v, &e))
}

/// `--max-bytes-per-sec` and `--max-records-per-sec`: positive when given.
fn rate_limits(args: &CopyArgs, file: &FileConfig) -> Result<(Option<u64>, Option<u64>)> {
    let d = &file.defaults;
    let bytes = match pick(
        args.max_bytes_per_sec.as_ref(),
        d.max_bytes_per_sec.as_ref(),
    ) {
        Some((s, src)) => {
            Some(parse_size(s).map_err(|e| file.bad_value(src, "max-bytes-per-sec", s, &e))?)
        }
        None => None,
    };
    let records = match (&args.max_records_per_sec, d.max_records_per_sec) {
        (Some(s), _) => Some(s.trim().parse::<u64>().map_err(|_| {
            Error::usage(format!(
                "--max-records-per-sec '{s}': expected a whole number of records, such as 5000"
            ))
        })?),
        (None, n) => n,
    };
    if bytes == Some(0) || records == Some(0) {
        return Err(Error::usage(
            "--max-bytes-per-sec and --max-records-per-sec must be greater than zero (leave them out for no limit)",
        ));
    }
    Ok((bytes, records))
}

/// A `--from`/`--to` value: a config cluster name, else a `host:port[,host:port]` list.
pub fn cluster(file: &FileConfig, value: &str, flag: &str) -> Result<ClusterSpec> {
    let value = value.trim();
    if let Some(entry) = file.clusters.get(value) {
        // `${VAR}` and `${file:PATH}` as in properties (a systemd unit's environment).
        let at = file.location(&["clusters", value, "bootstrap"]);
        let bootstrap = values::expand(entry.bootstrap.trim())
            .map_err(|why| Error::usage(format!("{at}: refers to {why}")))?;
        let bootstrap = bootstrap.trim();
        if bootstrap.is_empty() {
            return Err(Error::usage(format!("{at}: is empty")));
        }
        let mut properties = Vec::new();
        for (k, v) in &entry.properties {
            let at = file.location(&["clusters", value, "properties", k]);
            let v = property_value(v, &at)?;
            if let Some(why) = values::bad_mechanism(k, &v) {
                return Err(Error::usage(format!("{at}: {why}")));
            }
            properties.push((k.clone(), v));
        }
        let id = entry.id.as_deref().map(str::trim);
        if id.is_some_and(|i| i.is_empty() || i.contains('/')) {
            return Err(Error::usage(format!(
                "{}: must be a non-empty name without '/'",
                file.location(&["clusters", value, "id"])
            )));
        }
        return Ok(ClusterSpec {
            name: value.to_string(),
            bootstrap: bootstrap.to_string(),
            properties,
            id: id.map(String::from),
        });
    }
    if is_bootstrap_list(value) {
        return Ok(ClusterSpec {
            name: value.to_string(),
            bootstrap: value.to_string(),
            properties: Vec::new(),
            id: None,
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

#[cfg(test)]
mod defaults_tests;
#[cfg(test)]
mod tests;
