//! The YAML config file: where it is, what it may hold, and reading it without ever printing a
//! value.

use std::collections::{BTreeMap, BTreeSet};
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
    /// Named flows (`--flow NAME`): the same keys as `defaults`, each over `defaults`.
    #[serde(default)]
    pub flows: BTreeMap<String, Defaults>,
    /// Where the file came from, for error messages; not a key of the file.
    #[serde(skip)]
    origin: Origin,
}

/// The file's path and text, and the flow chosen: what an error message needs to name the
/// file, the key and its line.
#[derive(Debug, Default)]
struct Origin {
    path: Option<PathBuf>,
    text: String,
    /// `--flow NAME` and the keys that flow sets (they override `defaults`).
    flow: Option<(String, BTreeSet<String>)>,
}

/// Where a setting's value came from: a flag, the config file, or the built-in default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    Flag,
    File,
    Builtin,
}

/// The flag's value if given, else the config file's.
pub fn pick<'v>(flag: Option<&'v String>, file: Option<&'v String>) -> Option<(&'v str, Src)> {
    match (flag, file) {
        (Some(v), _) => Some((v, Src::Flag)),
        (None, Some(v)) => Some((v, Src::File)),
        (None, None) => None,
    }
}

/// The one precedence rule of a setting `name`: the flag, else the config file's value (the
/// flow chosen by `--flow` over `defaults`, as [`FileConfig::with_flow`] merged them), else the
/// built-in default ([`crate::options::defaults`]). None only for a setting without one.
pub fn setting<'v>(
    flag: Option<&'v String>,
    file: Option<&'v String>,
    name: &str,
) -> Option<(&'v str, Src)> {
    pick(flag, file).or_else(|| crate::options::defaults::of(name).map(|v| (v, Src::Builtin)))
}

impl FileConfig {
    /// `FILE: a.b.c (line L)`: a key of this file, and its line when it has one.
    pub fn location(&self, path: &[&str]) -> String {
        let file = self
            .origin
            .path
            .as_ref()
            .map_or_else(|| "config".to_string(), |p| p.display().to_string());
        let line =
            line_of(&self.origin.text, path).map_or_else(String::new, |l| format!(" (line {l})"));
        format!("{file}: {}{line}", path.join("."))
    }

    /// The named flow chosen by `--flow`, if any.
    pub fn flow_name(&self) -> Option<&str> {
        self.origin.flow.as_ref().map(|(name, _)| name.as_str())
    }

    /// Where this file sets the default of flag `name`: in the flow chosen by `--flow` when
    /// that flow sets it, else in `defaults`.
    pub fn key_location(&self, name: &str) -> String {
        match &self.origin.flow {
            Some((flow, set)) if set.contains(name) => self.location(&["flows", flow, name]),
            _ => self.location(&["defaults", name]),
        }
    }

    /// A bad value, named where the user wrote it: `--NAME 'V': WHY` for a flag,
    /// `FILE: defaults.NAME (line L): 'V': WHY` for the config file.
    pub fn bad_value(&self, src: Src, name: &str, value: &str, why: &str) -> Error {
        match src {
            Src::Flag => Error::usage(format!("--{name} '{value}': {why}")),
            Src::File => Error::usage(format!("{}: '{value}': {why}", self.key_location(name))),
            Src::Builtin => builtin_error(name, &format!("'{value}': {why}")),
        }
    }

    /// A setting that is wrong whatever its spelling: `--NAME WHY`, or
    /// `FILE: defaults.NAME (line L): WHY`.
    pub fn bad_setting(&self, src: Src, name: &str, why: &str) -> Error {
        match src {
            Src::Flag => Error::usage(format!("--{name} {why}")),
            Src::File => Error::usage(format!("{}: {why}", self.key_location(name))),
            Src::Builtin => builtin_error(name, why),
        }
    }

    /// Applies `--flow NAME`: that flow's keys over `defaults`. An unknown name is a usage
    /// error listing the known ones (and the one meant, when near).
    pub fn with_flow(mut self, name: Option<&str>) -> Result<Self> {
        let Some(name) = name else {
            return Ok(self);
        };
        let Some(flow) = self.flows.get(name) else {
            let file = self.origin.path.as_ref().map_or_else(
                || "the config file".to_string(),
                |p| p.display().to_string(),
            );
            let why = if self.origin.path.is_none() && self.origin.text.is_empty() {
                "no config file was read: name one with --config FILE".to_string()
            } else if self.flows.is_empty() {
                format!("{file} defines no flows (add them under 'flows:')")
            } else {
                let known: Vec<&str> = self.flows.keys().map(String::as_str).collect();
                let meant = crate::suggest::nearest(name, known.iter().copied())
                    .map_or_else(String::new, |m| format!("; did you mean '{m}'?"));
                format!(
                    "no such flow in {file} (known: {}){meant}",
                    known.join(", ")
                )
            };
            return Err(Error::usage(format!("--flow '{name}': {why}")));
        };
        let over = |what: &Defaults| {
            serde_yaml::to_value(what).map_err(|e| {
                Error::usage(format!(
                    "--flow '{name}': cannot merge it over defaults: {e}"
                ))
            })
        };
        let (mut merged, flow) = (over(&self.defaults)?, over(flow)?);
        let mut set = BTreeSet::new();
        if let (Some(base), Some(flow)) = (merged.as_mapping_mut(), flow.as_mapping()) {
            for (k, v) in flow.iter().filter(|(_, v)| !v.is_null()) {
                base.insert(k.clone(), v.clone());
                set.extend(k.as_str().map(String::from));
            }
        }
        self.defaults = serde_yaml::from_value(merged).map_err(|e| {
            Error::usage(format!(
                "--flow '{name}': cannot merge it over defaults: {e}"
            ))
        })?;
        self.origin.flow = Some((name.to_string(), set));
        Ok(self)
    }
}

/// A built-in default that does not resolve: a mistake in `options::defaults` (its tests
/// resolve every entry), not the user's.
fn builtin_error(name: &str, why: &str) -> Error {
    Error::failed(format!(
        "internal error: the built-in default of --{name} {why}"
    ))
}

/// The line (1-based) of the value at `path` in a YAML text, as the YAML parser finds it
/// (comments, quotes, flow style and all): serde_yaml marks an error with the place of the
/// value being read, so the search fails on purpose where the path ends.
pub(super) fn line_of(text: &str, path: &[&str]) -> Option<usize> {
    use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};
    const FOUND: &str = "kreplicate: found the key";

    struct Seek<'p>(&'p [&'p str]);
    impl<'de> DeserializeSeed<'de> for Seek<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Seek<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
            let Some((first, rest)) = self.0.split_first() else {
                return Err(A::Error::custom(FOUND));
            };
            while let Some(key) = map.next_key::<serde_yaml::Value>()? {
                if key.as_str() == Some(*first) {
                    return map.next_value_seed(Seek(rest));
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            seq: A,
        ) -> std::result::Result<(), A::Error> {
            if self.0.is_empty() {
                return Err(A::Error::custom(FOUND));
            }
            IgnoredAny.visit_seq(seq).map(|_| ())
        }
        fn visit_unit<E: serde::de::Error>(self) -> std::result::Result<(), E> {
            self.found()
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> std::result::Result<(), E> {
            self.found()
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> std::result::Result<(), E> {
            self.found()
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> std::result::Result<(), E> {
            self.found()
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> std::result::Result<(), E> {
            self.found()
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> std::result::Result<(), E> {
            self.found()
        }
    }
    impl Seek<'_> {
        /// A scalar: the key when the path ends here, else not on this branch.
        fn found<E: serde::de::Error>(self) -> std::result::Result<(), E> {
            match self.0.is_empty() {
                true => Err(E::custom(FOUND)),
                false => Ok(()),
            }
        }
    }

    let de = serde_yaml::Deserializer::from_str(text);
    match Seek(path).deserialize(de) {
        Err(e) if e.to_string().contains(FOUND) => e.location().map(|l| l.line()),
        _ => None,
    }
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
    pub sync_acls: Option<bool>,
    pub sync_group_acls: Option<String>,
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
    let mut file =
        parse_file(&text).map_err(|e| Error::usage(format!("{}: {e}", path.display())))?;
    file.origin = Origin {
        path: Some(path.to_path_buf()),
        text,
        flow: None,
    };
    Ok(file)
}

/// Parses a config file's text; an error reads `KEY.PATH (line L): what is wrong`.
pub fn parse_file(text: &str) -> std::result::Result<FileConfig, String> {
    if text.trim().is_empty() {
        return Ok(FileConfig::default());
    }
    let mut file: FileConfig = serde_yaml::from_str(text).map_err(|e| located(&e))?;
    file.origin.text = text.to_string();
    Ok(file)
}

/// serde_yaml's `PATH: MESSAGE at line L column C` as `PATH (line L): MESSAGE`, with the
/// value hidden and a misspelt key's nearest name.
fn located(e: &serde_yaml::Error) -> String {
    let text = e.to_string();
    let Some(loc) = e.location() else {
        return suggest_key(&hide_value(&text));
    };
    let mark = format!(" at line {} column {}", loc.line(), loc.column());
    let Some(message) = text.strip_suffix(&mark) else {
        // libyaml's own syntax errors say where they are already.
        return text;
    };
    // serde_yaml starts a message with the key path when there is one (`defaults.timeout: `).
    let (path, message) = match message.split_once(": ") {
        Some((p, m)) if !p.is_empty() && !p.contains(' ') => (Some(p), m),
        _ => (None, message),
    };
    let message = hide_value(message);
    let line = loc.line();
    match (path, unknown_key(&message)) {
        (Some(p), Some((key, meant))) => format!("{p}.{key} (line {line}): unknown key{meant}"),
        (None, Some((key, meant))) => format!("{key} (line {line}): unknown key{meant}"),
        (Some(p), None) => format!("{p} (line {line}): {message}"),
        (None, None) => format!("line {line}: {message}"),
    }
}

/// serde's `unknown field `k`, expected one of ...`: the key, and `: did you mean `m`?` when
/// one is near, else the list serde gives.
fn unknown_key(message: &str) -> Option<(String, String)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (key, list) = rest.split_once("`, expected one of ")?;
    let known = list.split(", ").map(|k| k.trim_matches('`'));
    let meant = match crate::suggest::nearest(key, known) {
        Some(m) => format!(": did you mean `{m}`?"),
        None => format!(", expected one of {list}"),
    };
    Some((key.to_string(), meant))
}

/// serde quotes the offending value in type errors (`invalid type: string "sasl.password=…",
/// expected a map`); keep the path, the kind of value and the position, never the value.
fn suggest_key(msg: &str) -> String {
    match unknown_key(msg) {
        Some((key, meant)) => format!("unknown key `{key}`{meant}"),
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
