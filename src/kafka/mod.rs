//! librdkafka client configs per guarantee: user properties first, then the settings the
//! guarantee depends on, so a passthrough property can never undo them. Also the read-only
//! reader and metadata clients; `reasons` says what their failures mean, `defaults` holds the
//! defaults a user may change (the target's codec, the client id); `consumer` assigns and
//! leaves a group; `admin` owns librdkafka's admin C objects (one `Native` each).

pub(crate) mod admin;
pub(crate) mod consumer;
mod coordinator;
mod defaults;
mod group_protocol;
mod logs;
mod reasons;
mod release;

pub use coordinator::find_group_coordinator;
pub use defaults::compression;
use defaults::{copy_client_id, default_compression, CLIENT_ID};
pub use group_protocol::{choose_group_protocol, needs_offer};
pub use logs::LogPump;
pub use reasons::{creation_error, serve_logs, validate, Reasons};
pub use release::release_of;

use std::time::Duration;

use rdkafka::config::ClientConfig;

use crate::error::Error;
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
        // The engine keeps a transaction open up to --txn-max-time and its commit waits up to
        // --delivery-timeout: a shorter timeout lets the coordinator abort transactions the
        // run still commits (fenced, exit 1, again on every rerun), a longer one keeps
        // read_committed readers behind a killed run's open transaction for longer. Derived
        // from both flags (`transactional`), as message.timeout.ms is from one.
        if key == "transaction.timeout.ms" && guarantee == Guarantee::ExactlyOnce {
            return Err(Error::usage(format!(
                "{side} property 'transaction.timeout.ms' (from {flag} or the config file) is set by kreplicate under exactly-once: it is --txn-max-time plus --delivery-timeout plus 30 s; change those"
            )));
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

/// A default every client takes, the user's properties, then the cluster's address.
fn apply_cluster(c: &mut ClientConfig, spec: &ClusterSpec) {
    // librdkafka 2.12 drops the bootstrap connection as soon as it learns the brokers' ids,
    // failing the request on it, and then opens no connection for reconnect.backoff.ms / 2
    // (50 ms by default): every client's first request waited that, a group join twice.
    c.set("reconnect.backoff.ms", "10");
    // Broker logs, quotas and group tools name the client by it (librdkafka says 'rdkafka').
    if c.get("client.id").is_none() {
        c.set("client.id", CLIENT_ID);
    }
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
    copy_client_id(&mut c, opts.shard, opts.flow.as_deref());
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
            // Committed in the background, but stored only once a record is handed to the
            // producer: librdkafka's own store, at `poll`, covered records held back by the
            // rate limit's read-ahead or a stop, which a clean stop then lost (issue 41).
            c.set("enable.auto.commit", "true");
            c.set("enable.auto.offset.store", "false");
        }
        _ => {
            for (k, v) in safe {
                c.set(*k, *v);
            }
        }
    }
    Ok(c)
}

/// Refuses bad client properties of a copy run, before anything connects: the guarantee's
/// own settings, misspelt keys and SASL credentials a protocol would not use.
pub fn check_properties(opts: &RunOptions) -> Result<(), Error> {
    consumer_config(opts)?;
    producer_config(opts)?;
    validate(&opts.from, "source")?;
    validate(&opts.to, "target")
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
    default_compression(&mut c, &opts.to);
    copy_client_id(&mut c, opts.shard, opts.flow.as_deref());
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

/// What exactly-once's commit may wait beyond --txn-max-time and --delivery-timeout.
pub const TRANSACTION_MARGIN: Duration = Duration::from_secs(30);

/// exactly-once's `transaction.timeout.ms`: longer than any of its transactions, their time
/// bound plus the commit's own wait.
pub fn transaction_timeout(txn_max_time: Duration, delivery_timeout: Duration) -> Duration {
    txn_max_time + delivery_timeout + TRANSACTION_MARGIN
}

/// The producer settings exactly-once depends on (applied after the user's).
fn transactional(opts: &RunOptions, producer: &mut ClientConfig) -> Result<(), Error> {
    let shard = opts.shard.unwrap_or_default();
    producer.set("transactional.id", shard.transactional_id(&opts.group));
    let timeout = transaction_timeout(opts.txn_max_time, opts.delivery_timeout);
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

/// A cluster named `a` with `props`, for the unit tests here and below.
#[cfg(test)]
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn issue_35_transaction_timeout_is_refused_under_exactly_once_only() {
        let props = spec(&[("transaction.timeout.ms", "60000")]);
        let run = |g| check(&props, "target", "--to-property", PRODUCER_OWNED, &[], g);
        let refused = run(Guarantee::ExactlyOnce).err().map(|e| e.to_string());
        let refused = refused.unwrap_or_default();
        assert!(
            refused.contains("'transaction.timeout.ms'") && refused.contains("--txn-max-time"),
            "{refused}"
        );
        // Without transactions librdkafka ignores it: nothing to refuse.
        assert!(run(Guarantee::AtLeastOnce).is_ok());
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
