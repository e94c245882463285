//! The YAML config file: where it is, what it may hold, and reading it without ever printing a
//! value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::cli::CONFIG_ENV;
use crate::error::{Error, Result};
use crate::options::{GapPolicy, Guarantee, StartPosition};

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
    /// The cluster's identity, for brokers that report no cluster id.
    pub id: Option<String>,
}

/// Defaults for flags; a flag given on the command line wins.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Defaults {
    pub from: Option<String>,
    pub to: Option<String>,
    pub topics: Option<String>,
    pub exclude: Option<String>,
    pub guarantee: Option<Guarantee>,
    pub rename: Option<String>,
    pub group: Option<String>,
    pub trust_group_positions: Option<bool>,
    pub start: Option<StartPosition>,
    pub on_gap: Option<GapPolicy>,
    pub delivery_timeout: Option<String>,
    pub timeout: Option<String>,
    pub commit_interval: Option<String>,
    pub join_timeout: Option<String>,
    pub refresh_topics: Option<String>,
    pub create_topics: Option<bool>,
    pub replication_factor: Option<i32>,
    pub config_exclude: Option<Vec<String>>,
    pub sync_configs: Option<bool>,
    pub max_bytes_per_sec: Option<String>,
    pub max_records_per_sec: Option<u64>,
    pub shard: Option<String>,
    pub txn_max_records: Option<u64>,
    pub txn_max_bytes: Option<String>,
    pub txn_max_time: Option<String>,
    pub metrics_addr: Option<String>,
    pub metrics_file: Option<PathBuf>,
    pub metrics_file_interval: Option<String>,
    pub no_origin_header: Option<bool>,
    pub sync_groups: Option<String>,
    pub sync_groups_interval: Option<String>,
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
    serde_yaml::from_str(text).map_err(|e| suggest_key(&hide_value(&e.to_string())))
}

/// serde quotes the offending value in type errors (`invalid type: string "sasl.password=…",
/// expected a map`); keep the path, the kind of value and the position, never the value.
/// serde lists every key after a misspelt one: name the one meant instead, when one is near.
fn suggest_key(msg: &str) -> String {
    let Some((head, rest)) = msg.split_once("unknown field `") else {
        return msg.to_string();
    };
    let Some((key, rest)) = rest.split_once("`, expected one of ") else {
        return msg.to_string();
    };
    let (list, tail) = rest
        .split_once(" at line ")
        .map_or((rest, ""), |(l, t)| (l, t));
    let known = list.split(", ").map(|k| k.trim_matches('`'));
    match crate::suggest::nearest(key, known) {
        Some(meant) if tail.is_empty() => {
            format!("{head}unknown key `{key}`: did you mean `{meant}`?")
        }
        Some(meant) => format!("{head}unknown key `{key}` at line {tail}: did you mean `{meant}`?"),
        None => msg.to_string(),
    }
}

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
