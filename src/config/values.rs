//! Values as users write them: durations, sizes, librdkafka properties (with `${VAR}` from the
//! environment and `${file:PATH}` from a file). Errors never repeat a property's value.

use std::time::Duration;

use crate::error::{Error, Result};

/// YAML scalars become librdkafka strings; `${VAR}` takes a value from the environment and
/// `${file:PATH}` from a file (systemd credentials, Kubernetes secrets), so secrets need not sit
/// in the config file. `at` names the key (`FILE: clusters.a.properties.k (line L)`); errors
/// never show the value.
pub(super) fn property_value(v: &serde_yaml::Value, at: &str) -> Result<String> {
    let raw = match v {
        serde_yaml::Value::String(s) => s.clone(),
        serde_yaml::Value::Bool(b) => b.to_string(),
        serde_yaml::Value::Number(n) => n.to_string(),
        _ => {
            return Err(Error::usage(format!(
                "{at}: must be a string, number or boolean"
            )))
        }
    };
    expand(&raw).map_err(|why| Error::usage(format!("{at}: refers to {why}")))
}

/// The SASL mechanisms librdkafka speaks (`sasl.mechanism`).
const SASL_MECHANISMS: [&str; 5] = [
    "GSSAPI",
    "PLAIN",
    "SCRAM-SHA-256",
    "SCRAM-SHA-512",
    "OAUTHBEARER",
];

/// Why a `sasl.mechanism` value is not one librdkafka speaks, with the one meant when near
/// (issue 35): librdkafka's own words named neither the file and line nor the spelling meant.
/// `None` for any other key, and for a mechanism it speaks (spelt as librdkafka compares it:
/// upper case).
pub(super) fn bad_mechanism(key: &str, value: &str) -> Option<String> {
    if !matches!(key, "sasl.mechanism" | "sasl.mechanisms") || SASL_MECHANISMS.contains(&value) {
        return None;
    }
    let meant = crate::suggest::nearest(&value.trim().to_ascii_uppercase(), SASL_MECHANISMS)
        .map_or_else(String::new, |m| format!("; did you mean '{m}'?"));
    Some(format!(
        "'{}' is not a SASL mechanism ({}){meant}",
        value.trim(),
        SASL_MECHANISMS.join(", ")
    ))
}

/// Replaces each `${VAR}` and `${file:PATH}`; the error names the reference, never a value.
pub(super) fn expand(raw: &str) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        let name = &rest[start + 2..start + 2 + len];
        out.push_str(&rest[..start]);
        out.push_str(&resolve(name)?);
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    Ok(out)
}

fn resolve(name: &str) -> std::result::Result<String, String> {
    let Some(file) = name.strip_prefix("file:") else {
        return std::env::var(name)
            .map_err(|_| format!("${{{name}}}, which is not set in the environment"));
    };
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("${{{name}}}, which cannot be read: {}", e.kind()))?;
    // A file holds one value; editors and `echo` end it with a newline that is not part of it.
    let text = text.strip_suffix('\n').unwrap_or(&text);
    Ok(text.strip_suffix('\r').unwrap_or(text).to_string())
}

pub fn parse_properties(items: &[String], flag: &str) -> Result<Vec<(String, String)>> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => match bad_mechanism(k.trim(), v) {
                Some(why) => Err(Error::usage(format!("{flag} {}: {why}", k.trim()))),
                None => Ok((k.trim().to_string(), v.to_string())),
            },
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
    // Any case: `20mb` is 20 MB, `512kib` is 512 KiB.
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "kb" => 1000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
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
    let secs = match unit.trim().to_ascii_lowercase().as_str() {
        "ms" => n / 1000.0,
        "" | "s" | "sec" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => {
            return Err(format!(
                "unknown unit '{}' (use ms, s, m or h)",
                unit.trim()
            ))
        }
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
        // Issue 22: the spellings people type.
        assert_eq!(parse_duration("5min").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("10S").unwrap(), Duration::from_secs(10));
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert_eq!(parse_size("32MiB").unwrap(), 32 << 20);
        assert_eq!(parse_size("2KB").unwrap(), 2000);
        assert!(parse_size("3 furlongs").is_err());
        assert_eq!(parse_size("20mb").unwrap(), 20_000_000);
        assert_eq!(parse_size("512kib").unwrap(), 512 << 10);
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
}
