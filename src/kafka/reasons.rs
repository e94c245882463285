//! What a client's failures mean: librdkafka's reasons for not reaching a cluster (refused
//! credentials and certificates told apart from outages), and client-creation errors that
//! name a property, never its value, with the nearest known name for a typo.

use std::sync::Mutex;
use std::time::Duration;

use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use super::admin_config;
use crate::error::{redact_quoted, Error};
use crate::options::ClusterSpec;

/// Prints what librdkafka logged on a client that nothing polls (a metadata client): rust-rdkafka
/// queues librdkafka's log lines on the client's main queue and prints them only when it is
/// polled, so `-v` showed nothing about why a broker could not be reached.
pub fn serve_logs<C: ConsumerContext>(client: &BaseConsumer<C>) {
    // SAFETY: the client pointer is valid for the consumer's lifetime; the queue handle is
    // released before returning.
    let queued = unsafe {
        let queue = rdkafka_sys::rd_kafka_queue_get_main(client.client().native_ptr());
        let n = rdkafka_sys::rd_kafka_queue_length(queue);
        rdkafka_sys::rd_kafka_queue_destroy(queue);
        n
    };
    // Without group.id a consumer polls its main queue; each poll serves one event.
    for _ in 0..queued {
        let _ = client.poll(Duration::ZERO);
    }
}

/// A metadata client's context: keeps librdkafka's error reasons, so that a cluster that cannot
/// be reached is reported with why, and credentials it refuses end the wait at once.
#[derive(Default)]
pub struct Reasons(Mutex<Vec<(Option<RDKafkaErrorCode>, String)>>);

impl ClientContext for Reasons {
    fn error(&self, error: KafkaError, reason: &str) {
        log::error!("{error}: {reason}");
        let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() < 16 {
            seen.push((error.rdkafka_error_code(), reason.to_string()));
        }
    }

    /// Connection failures without an error event (a listener that closes the connection on
    /// the first request) come only as FAIL log lines: keep them as reasons too.
    fn log(&self, level: RDKafkaLogLevel, fac: &str, line: &str) {
        if fac == "FAIL" {
            let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if seen.len() < 16 {
                seen.push((None, line.to_string()));
            }
        }
        DefaultClientContext.log(level, fac, line);
    }
}

impl ConsumerContext for Reasons {}

impl Reasons {
    /// Why the cluster could not be reached, from what librdkafka said.
    pub fn why(&self) -> String {
        let seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let reasons: Vec<String> = seen.iter().map(|(_, r)| r.clone()).collect();
        unreachable_because(&reasons)
    }

    /// The kind of failure so far (`connection refused`, `unknown host`, ...), for a line
    /// while the wait goes on; `no answer yet` before librdkafka gave a reason.
    pub fn kind(&self) -> &'static str {
        let seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let reasons: Vec<String> = seen.iter().map(|(_, r)| r.clone()).collect();
        kind_of(&reasons).map_or("no answer yet", |(kind, _)| kind)
    }

    /// What a person must fix, if the cluster refused the credentials or the client refused
    /// the broker's certificate: librdkafka retries both for ever, a rerun cannot fix them.
    pub fn refused(&self) -> Option<String> {
        let seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        seen.iter()
            .find_map(|(code, reason)| refusal(*code, reason))
    }
}

/// A connection failure a rerun cannot fix, with the fix: refused credentials, an untrusted
/// certificate, or a protocol that does not match the listener.
fn refusal(code: Option<RDKafkaErrorCode>, reason: &str) -> Option<String> {
    let reason = reason.trim();
    if code == Some(RDKafkaErrorCode::Authentication) {
        return Some(format!(
            "SASL authentication failed ({reason}): check sasl.username, sasl.password and sasl.mechanism"
        ));
    }
    let tls = code == Some(RDKafkaErrorCode::SSL) || reason.contains("SSL handshake failed");
    if tls && reason.contains("certificate verify failed") {
        return Some(format!(
            "the broker's TLS certificate is not trusted ({reason}): check ssl.ca.location"
        ));
    }
    if tls && reason.contains("PLAINTEXT") {
        return Some(format!(
            "TLS to a listener that does not speak it ({reason}): check security.protocol"
        ));
    }
    None
}

/// The kind of connection failure, with librdkafka's words for it: refused, unknown host, TLS
/// handshake, SASL authentication, or no answer at all (timed out).
pub fn unreachable_because(reasons: &[String]) -> String {
    match kind_of(reasons) {
        Some((kind, reason)) => format!("{kind} ({})", reason.trim()),
        None => "timed out: no answer from any broker".to_string(),
    }
}

/// The kind of the first connection failure librdkafka gave a reason for, and that reason.
fn kind_of(reasons: &[String]) -> Option<(&'static str, &str)> {
    const KINDS: &[(&str, &str)] = &[
        ("Connection refused", "connection refused"),
        ("Failed to resolve", "unknown host"),
        ("SSL handshake failed", "TLS handshake failed"),
        ("SSL", "TLS error"),
        ("SASL", "SASL authentication failed"),
        ("Authentication", "SASL authentication failed"),
        (
            "in state APIVERSION_QUERY",
            "closed on the first request (is security.protocol right for this listener?)",
        ),
        ("timed out", "timed out"),
    ];
    KINDS.iter().find_map(|(needle, kind)| {
        let r = reasons.iter().find(|r| r.contains(needle))?;
        Some((*kind, r.as_str()))
    })
}

/// Turns a client-creation error into one usage line naming the property (never its value,
/// which may be a secret).
pub fn creation_error(side: &str, e: KafkaError) -> Error {
    match e {
        KafkaError::ClientConfig(_, desc, key, _) => {
            let names = property_names();
            let meant = match desc.starts_with("No such configuration property") {
                true => crate::suggest::nearest(&key, names.iter().map(String::as_str))
                    .map(|m| format!(": did you mean '{m}'?"))
                    .unwrap_or_default(),
                false => String::new(),
            };
            Error::usage(format!(
                "{side} property '{key}': {}{meant}",
                redact_quoted(&desc, &key)
            ))
        }
        KafkaError::ClientCreation(msg) => {
            Error::usage(format!("{side} client: {}", redact_quoted(&msg, "")))
        }
        other => Error::usage(format!(
            "{side} client: {}",
            redact_quoted(&other.to_string(), "")
        )),
    }
}

/// Checks the user's properties for one side at once, without starting a client: a typo is
/// reported before any cluster is waited for.
pub fn validate(spec: &ClusterSpec, side: &str) -> Result<(), Error> {
    sasl_without_protocol(spec, side)?;
    admin_config(spec)
        .create_native_config()
        .map(drop)
        .map_err(|e| creation_error(side, e))
}

/// SASL credentials under a protocol without SASL: librdkafka ignores them and speaks
/// PLAINTEXT (or SSL) to the SASL listener, which never answers, so the run waited --timeout
/// and exited 1 (restarted by systemd for ever). Refused at once, naming the setting.
fn sasl_without_protocol(spec: &ClusterSpec, side: &str) -> Result<(), Error> {
    let last = |key: &str| {
        spec.properties
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.trim())
    };
    let Some((credential, _)) = spec.properties.iter().find(|(k, _)| {
        matches!(
            k.as_str(),
            "sasl.username" | "sasl.password" | "sasl.mechanism" | "sasl.mechanisms"
        ) || k.starts_with("sasl.oauthbearer.")
    }) else {
        return Ok(());
    };
    let protocol = last("security.protocol");
    if protocol.is_some_and(|p| p.to_ascii_lowercase().starts_with("sasl_")) {
        return Ok(());
    }
    let now = match protocol {
        Some(p) => format!("security.protocol is '{p}'"),
        None => "no security.protocol is set (librdkafka's default is plaintext)".to_string(),
    };
    Err(Error::usage(format!(
        "{side} properties set {credential} but {now}: the SASL credentials would not be used; set security.protocol=SASL_SSL (or SASL_PLAINTEXT) for '{}'",
        spec.name
    )))
}

/// Every librdkafka property name, aliases included, from librdkafka's own table (written to
/// a scratch file: the C call wants a `FILE *`). Only asked for on the error path.
fn property_names() -> Vec<String> {
    extern "C" {
        fn fopen(
            path: *const std::os::raw::c_char,
            mode: *const std::os::raw::c_char,
        ) -> *mut std::ffi::c_void;
        fn fclose(file: *mut std::ffi::c_void) -> std::os::raw::c_int;
    }
    let path = std::env::temp_dir().join(format!("kreplicate-properties-{}", std::process::id()));
    let Ok(c_path) = std::ffi::CString::new(path.to_string_lossy().as_bytes()) else {
        return Vec::new();
    };
    // SAFETY: the file is opened, written by librdkafka and closed here, once.
    unsafe {
        let file = fopen(c_path.as_ptr(), c"w".as_ptr());
        if file.is_null() {
            return Vec::new();
        }
        rdkafka_sys::rd_kafka_conf_properties_show(file.cast());
        fclose(file);
    }
    let table = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    // Markdown rows: `name | C/P | range | default | importance | description`.
    table
        .lines()
        .filter_map(|l| l.split('|').next())
        .map(str::trim)
        .filter(|n| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._".contains(c))
        })
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_22_a_misspelt_property_names_the_one_meant() {
        let spec = ClusterSpec {
            name: "a".into(),
            bootstrap: "h:1".into(),
            properties: vec![("lingr.ms".into(), "5".into())],
            id: None,
        };
        let err = validate(&spec, "source").unwrap_err().to_string();
        assert!(
            err.ends_with("source property 'lingr.ms': No such configuration property: \"lingr.ms\": did you mean 'linger.ms'?"),
            "{err}"
        );
        assert!(property_names().iter().any(|n| n == "sasl.mechanism"));
    }

    #[test]
    fn issue_10_connection_failures_say_what_kind_they_are() {
        let why = |r: &str| unreachable_because(&[r.to_string()]);
        assert!(why("127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms in state CONNECT)").starts_with("connection refused ("));
        assert!(
            why("h:9092/bootstrap: Failed to resolve 'h:9092': Name or service not known")
                .starts_with("unknown host")
        );
        assert!(why("ssl://h:9093/bootstrap: SSL handshake failed: error:0A000086:SSL routines::certificate verify failed").starts_with("TLS handshake failed"));
        assert!(why("sasl_ssl://h:9093/bootstrap: SASL SCRAM-SHA-512 mechanism handshake failed: Broker: Request not valid in current SASL state").starts_with("SASL authentication failed"));
        assert_eq!(
            unreachable_because(&[]),
            "timed out: no answer from any broker"
        );
        // The specific reason wins over the summary librdkafka adds after it.
        let both = [
            "1/1 brokers are down".to_string(),
            "Connect to ipv4#h failed: Connection refused".to_string(),
        ];
        assert!(unreachable_because(&both).starts_with("connection refused"));
    }
}
