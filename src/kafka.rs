//! librdkafka client configs per guarantee: user properties first, then the settings the
//! guarantee depends on, so a passthrough property can never undo them. Also the read-only
//! reader, metadata clients, and client-creation errors that never show a property's value.

use std::time::Duration;

use rdkafka::config::ClientConfig;
use std::sync::Mutex;

use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::error::{redact_quoted, Error};
use crate::options::{ClusterSpec, GapPolicy, Guarantee, RunOptions};

/// Keys the user may not set on the source consumer, and the flag to use instead.
const CONSUMER_OWNED: &[(&str, &str)] = &[
    ("bootstrap.servers", "--from"),
    ("metadata.broker.list", "--from"),
    ("group.id", "--group"),
    ("auto.offset.reset", "--start / --on-gap"),
    (
        "enable.partition.eof",
        "nothing (kreplicate needs it to detect the end)",
    ),
];

/// Keys the user may not set on the target producer, and the flag to use instead.
const PRODUCER_OWNED: &[(&str, &str)] = &[
    ("bootstrap.servers", "--to"),
    ("metadata.broker.list", "--to"),
    ("message.timeout.ms", "--delivery-timeout"),
    ("delivery.timeout.ms", "--delivery-timeout"),
];

/// `(key, required value)` the exactly-once consumer depends on.
const EOS_CONSUMER: &[(&str, &str)] = &[
    ("enable.auto.commit", "false"),
    ("enable.auto.offset.store", "false"),
    ("isolation.level", "read_committed"),
];

/// `(key, required value)` the at-least-once consumer depends on.
const ALO_CONSUMER: &[(&str, &str)] = &[
    ("enable.auto.commit", "false"),
    ("enable.auto.offset.store", "false"),
];

/// `(key, required value)` the at-least-once producer depends on.
const ALO_PRODUCER: &[(&str, &str)] = &[("enable.idempotence", "true"), ("acks", "all")];

fn same_value(key: &str, user: &str, required: &str) -> bool {
    let user = user.trim().to_ascii_lowercase();
    match key {
        "acks" | "request.required.acks" => user == "all" || user == "-1",
        _ => user == required,
    }
}

fn check(
    spec: &ClusterSpec,
    side: &str,
    flag: &str,
    owned: &[(&str, &str)],
    safe: &[(&str, &str)],
    guarantee: Guarantee,
) -> Result<(), Error> {
    for (key, value) in &spec.properties {
        if let Some((_, instead)) = owned.iter().find(|(k, _)| k == key) {
            return Err(Error::usage(format!(
                "{side} property '{key}' (from {flag} or the config file) is set by kreplicate: use {instead}"
            )));
        }
        let key_norm = if key == "request.required.acks" {
            "acks"
        } else {
            key.as_str()
        };
        if let Some((_, required)) = safe.iter().find(|(k, _)| *k == key_norm) {
            if !same_value(key_norm, value, required) {
                return Err(Error::usage(format!(
                    "{side} property '{key}' (from {flag} or the config file) would break the {} guarantee, which needs {key_norm}={required}: remove it",
                    guarantee.as_str()
                )));
            }
        }
        if key == "transactional.id" {
            return Err(Error::usage(format!(
                "{side} property 'transactional.id' (from {flag} or the config file) is not allowed: kreplicate manages transactions itself"
            )));
        }
        if key == "partition.assignment.strategy" && value.contains("cooperative") {
            return Err(Error::usage(format!(
                "{side} property '{key}': the cooperative protocol is not supported; use range or roundrobin"
            )));
        }
    }
    Ok(())
}

/// librdkafka accepts a heartbeat interval at or above the session timeout; the group then
/// drops the member over and over, and a run never keeps its partitions long enough to finish.
fn check_heartbeat(spec: &ClusterSpec) -> Result<(), Error> {
    // The last setting wins, as when the properties are applied.
    let get = |key: &str, default: u64| {
        spec.properties
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(default)
    };
    let session = get("session.timeout.ms", 45_000);
    let heartbeat = get("heartbeat.interval.ms", 3_000);
    if heartbeat >= session {
        return Err(Error::usage(format!(
            "source properties: heartbeat.interval.ms ({heartbeat}) must be below session.timeout.ms ({session}); set both"
        )));
    }
    Ok(())
}

/// The user's properties, then the cluster's address.
fn apply_cluster(c: &mut ClientConfig, spec: &ClusterSpec) {
    for (k, v) in &spec.properties {
        c.set(k, v);
    }
    c.set("bootstrap.servers", &spec.bootstrap);
}

/// The source consumer.
pub fn consumer_config(opts: &RunOptions) -> Result<ClientConfig, Error> {
    let safe: &[(&str, &str)] = match opts.guarantee {
        Guarantee::None => &[],
        Guarantee::AtLeastOnce => ALO_CONSUMER,
        Guarantee::ExactlyOnce => EOS_CONSUMER,
    };
    check(
        &opts.from,
        "source",
        "--from-property",
        CONSUMER_OWNED,
        safe,
        opts.guarantee,
    )?;
    check_heartbeat(&opts.from)?;
    let mut c = ClientConfig::new();
    // Defaults that bound memory; the user may change them.
    c.set("queued.max.messages.kbytes", "32768");
    // librdkafka (>= 2.1) waits fetch.queue.backoff.ms (default 1000) before fetching a
    // partition again once the prefetch queue is over its bound; while the target applies
    // backpressure that turns into whole seconds of an empty queue. 10 ms keeps it fed.
    c.set("fetch.queue.backoff.ms", "10");
    apply_cluster(&mut c, &opts.from);
    c.set("group.id", &opts.group);
    c.set("enable.partition.eof", "true");
    // Where to start without a committed position is decided explicitly on assign; this
    // only applies when a committed position is outside the log (a source gap).
    c.set(
        "auto.offset.reset",
        match opts.on_gap {
            GapPolicy::Fail => "error",
            GapPolicy::Earliest => "earliest",
            GapPolicy::Latest => "latest",
        },
    );
    match opts.guarantee {
        Guarantee::None => {
            // Offsets are stored as records are read and committed in the background.
            c.set("enable.auto.commit", "true");
            c.set("enable.auto.offset.store", "true");
        }
        _ => {
            for (k, v) in safe {
                c.set(*k, *v);
            }
        }
    }
    Ok(c)
}

/// The target producer.
pub fn producer_config(opts: &RunOptions) -> Result<ClientConfig, Error> {
    let safe: &[(&str, &str)] = match opts.guarantee {
        Guarantee::None => &[],
        _ => ALO_PRODUCER,
    };
    check(
        &opts.to,
        "target",
        "--to-property",
        PRODUCER_OWNED,
        safe,
        opts.guarantee,
    )?;
    let mut c = ClientConfig::new();
    // Defaults for throughput and bounded memory; the user may change them.
    c.set("linger.ms", "5");
    c.set("queue.buffering.max.kbytes", "65536");
    c.set("enable.idempotence", "true");
    apply_cluster(&mut c, &opts.to);
    // The metrics' retry count comes from librdkafka's statistics.
    if opts.metrics.enabled() && c.get("statistics.interval.ms").is_none() {
        c.set("statistics.interval.ms", "1000");
    }
    c.set(
        "message.timeout.ms",
        opts.delivery_timeout.as_millis().to_string(),
    );
    if opts.guarantee != Guarantee::None {
        for (k, v) in ALO_PRODUCER {
            c.set(*k, *v);
        }
    }
    if opts.guarantee == Guarantee::ExactlyOnce {
        transactional(opts, &mut c)?;
    }
    Ok(c)
}

/// What the broker counts beyond librdkafka's send-time size check: a v2 RecordBatch header (61
/// bytes) less what that check's worst-case record overhead (36 bytes) overcounts for a record
/// below 128 MiB alone in its batch (at least 19).
const BATCH_OVERHEAD: u64 = 61 - 19;
/// librdkafka's least `message.max.bytes`.
const MIN_MESSAGE_MAX: u64 = 1000;
/// librdkafka's default `message.max.bytes` and `batch.size`.
const DEFAULT_BATCH: u64 = 1_000_000;

/// The producer's `(message.max.bytes, batch.size)` within a target limit `limit` (the smallest
/// `max.message.bytes`), from the values set so far: never raised, lowered so that a batch,
/// and any record librdkafka accepts at send, fits.
pub(crate) fn batch_bounds(limit: u64, message_max: u64, batch_size: u64) -> (u64, u64) {
    let fit = limit.saturating_sub(BATCH_OVERHEAD);
    (
        message_max.min(fit.max(MIN_MESSAGE_MAX)),
        batch_size.min(fit.max(1)),
    )
}

/// Keeps the producer's batches within the target topics' smallest `max.message.bytes`
/// (applied after the user's properties); says so when it lowers a value the user set (not the
/// value: property values are never printed).
pub fn fit_batches(producer: &mut ClientConfig, limit: Option<u64>) -> Option<String> {
    let limit = limit?;
    let keys = ["message.max.bytes", "batch.size"];
    let set: Vec<Option<u64>> = keys
        .iter()
        .map(|k| producer.get(k).and_then(|v| v.trim().parse().ok()))
        .collect();
    if keys
        .iter()
        .zip(&set)
        .any(|(k, v)| producer.get(k).is_some() && v.is_none())
    {
        // Not a number: librdkafka refuses it with its own message.
        return None;
    }
    let (message_max, batch_size) = batch_bounds(
        limit,
        set[0].unwrap_or(DEFAULT_BATCH),
        set[1].unwrap_or(DEFAULT_BATCH),
    );
    let mut lowered = Vec::new();
    for ((key, user), new) in keys.iter().zip(&set).zip([message_max, batch_size]) {
        if user.is_some_and(|u| u > new) {
            lowered.push(format!("{key} to {new}"));
        }
        producer.set(*key, new.to_string());
    }
    (!lowered.is_empty()).then(|| {
        format!(
            "the smallest max.message.bytes of the target topics is {limit}: lowered the producer's {} (--to-property or the config file) so its batches fit",
            lowered.join(" and ")
        )
    })
}

/// The producer settings exactly-once depends on (applied after the user's).
fn transactional(opts: &RunOptions, producer: &mut ClientConfig) -> Result<(), Error> {
    let shard = opts.shard.unwrap_or_default();
    producer.set("transactional.id", shard.transactional_id(&opts.group));
    // Longer than any transaction: its time bound plus the commit's own wait.
    let timeout = opts.txn_max_time + opts.delivery_timeout + Duration::from_secs(30);
    if timeout > Duration::from_secs(900) {
        return Err(Error::usage(
            "--txn-max-time plus --delivery-timeout must stay under 870s (the broker's transaction.max.timeout.ms)",
        ));
    }
    producer.set("transaction.timeout.ms", timeout.as_millis().to_string());
    Ok(())
}

/// A read-only consumer of one cluster (verify's readers, exactly-once's tail reader): `defaults`
/// first (the user may change them), then the user's properties, then what reading to a
/// partition's end as a `read_committed` reader needs. It never commits.
pub fn reader_config(spec: &ClusterSpec, group: &str, defaults: &[(&str, &str)]) -> ClientConfig {
    let mut c = ClientConfig::new();
    for (k, v) in defaults {
        c.set(*k, *v);
    }
    apply_cluster(&mut c, spec);
    c.set("group.id", group)
        .set("enable.partition.eof", "true")
        .set("isolation.level", "read_committed")
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false");
    c
}

/// A plain client for metadata and admin requests on one cluster.
pub fn admin_config(spec: &ClusterSpec) -> ClientConfig {
    let mut c = ClientConfig::new();
    apply_cluster(&mut c, spec);
    c
}

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
    for (needle, kind) in KINDS {
        if let Some(r) = reasons.iter().find(|r| r.contains(needle)) {
            return format!("{kind} ({})", r.trim());
        }
    }
    "timed out: no answer from any broker".to_string()
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
    admin_config(spec)
        .create_native_config()
        .map(drop)
        .map_err(|e| creation_error(side, e))
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
    #[test]
    fn issue_22_a_misspelt_property_names_the_one_meant() {
        let spec = crate::options::ClusterSpec {
            name: "a".into(),
            bootstrap: "h:1".into(),
            properties: vec![("lingr.ms".into(), "5".into())],
            id: None,
        };
        let err = super::validate(&spec, "source").unwrap_err().to_string();
        assert!(
            err.ends_with("source property 'lingr.ms': No such configuration property: \"lingr.ms\": did you mean 'linger.ms'?"),
            "{err}"
        );
        assert!(super::property_names()
            .iter()
            .any(|n| n == "sasl.mechanism"));
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

    use super::*;

    fn spec(props: &[(&str, &str)]) -> ClusterSpec {
        ClusterSpec {
            name: "a".into(),
            bootstrap: "a:9092".into(),
            properties: props
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            id: None,
        }
    }

    #[test]
    fn issue_18_producer_batches_stay_within_the_smallest_target_limit() {
        // A 2000-byte topic: batches and records within it, with the batch header.
        assert_eq!(batch_bounds(2000, 1_000_000, 1_000_000), (1958, 1958));
        // Kafka's default limit is above librdkafka's defaults: nothing changes.
        assert_eq!(
            batch_bounds(1_048_588, 1_000_000, 1_000_000),
            (1_000_000, 1_000_000)
        );
        // Never raised; librdkafka's least message.max.bytes is 1000.
        assert_eq!(batch_bounds(2000, 1500, 800), (1500, 800));
        assert_eq!(batch_bounds(500, 1_000_000, 1_000_000), (1000, 458));
        assert_eq!(batch_bounds(10, 1_000_000, 1_000_000), (1000, 1));

        let mut c = ClientConfig::new();
        assert_eq!(fit_batches(&mut c, None), None);
        assert_eq!(c.get("batch.size"), None);
        assert_eq!(fit_batches(&mut c, Some(2000)), None);
        assert_eq!(c.get("message.max.bytes"), Some("1958"));
        assert_eq!(c.get("batch.size"), Some("1958"));
        // A user's value above the limit is lowered, once, with a notice.
        let mut c = ClientConfig::new();
        c.set("batch.size", "16384")
            .set("message.max.bytes", "1200");
        let note = fit_batches(&mut c, Some(2000)).unwrap_or_default();
        assert!(note.contains("batch.size to 1958"), "{note}");
        assert!(
            !note.contains("16384") && !note.contains("message.max.bytes"),
            "{note}"
        );
        assert_eq!(c.get("message.max.bytes"), Some("1200"));
    }

    #[test]
    fn heartbeat_must_stay_below_the_session_timeout() {
        assert!(check_heartbeat(&spec(&[])).is_ok());
        assert!(check_heartbeat(&spec(&[("session.timeout.ms", "2000")])).is_err());
        assert!(check_heartbeat(&spec(&[
            ("session.timeout.ms", "2000"),
            ("heartbeat.interval.ms", "500")
        ]))
        .is_ok());
        // The last setting wins.
        assert!(check_heartbeat(&spec(&[
            ("heartbeat.interval.ms", "500"),
            ("session.timeout.ms", "2000"),
            ("heartbeat.interval.ms", "2000")
        ]))
        .is_err());
    }
}
