//! Helpers shared by the benchmark examples.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::RDKafkaErrorCode;

/// Applies `KEY=VALUE` properties.
pub fn set_props(c: &mut ClientConfig, props: &[String]) -> Result<()> {
    for p in props {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("expected KEY=VALUE, got {p:?}"))?;
        c.set(k, v);
    }
    Ok(())
}

/// Partition count of `topic`, or `None` when the topic does not exist.
pub fn partition_count(client: &BaseConsumer, topic: &str) -> Result<Option<i32>> {
    let md = client.fetch_metadata(Some(topic), Duration::from_secs(10))?;
    Ok(md
        .topics()
        .iter()
        .find(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty())
        .map(|t| t.partitions().len() as i32))
}

/// The topics of a layout: `base` itself for one, `base-00000`.. for more (bench/scale.sh).
pub fn topic_names(base: &str, count: usize) -> Vec<String> {
    if count == 1 {
        return vec![base.to_string()];
    }
    (0..count).map(|i| format!("{base}-{i:05}")).collect()
}

/// Creates each topic with `partitions` partitions unless it exists with exactly that many
/// (5,000 partitions a request, as kreplicate's --create-topics), and waits until metadata shows every one with its leaders.
pub fn ensure_topics(bootstrap: &str, topics: &[String], partitions: i32) -> Result<()> {
    // kreplicate's default for every client (src/kafka/mod.rs, apply_cluster).
    let meta: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("reconnect.backoff.ms", "10")
        .create()?;
    let md = meta.fetch_metadata(None, Duration::from_secs(30))?;
    let mut missing = Vec::new();
    for topic in topics {
        match md
            .topics()
            .iter()
            .find(|t| t.name() == topic && t.error().is_none())
        {
            Some(t) if t.partitions().len() as i32 != partitions => bail!(
                "topic {topic} exists with {} partitions, not {partitions}",
                t.partitions().len()
            ),
            Some(_) => {}
            None => missing.push(topic.as_str()),
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("reconnect.backoff.ms", "10")
        .create()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let new: Vec<_> = missing
        .iter()
        .map(|t| NewTopic::new(t, partitions, TopicReplication::Fixed(-1)))
        .collect();
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(120)));
    // As kreplicate: at most 5,000 partitions a request (Kafka refuses 10,000).
    let per = (5_000 / partitions.max(1)).max(1) as usize;
    for chunk in new.chunks(per) {
        for r in rt.block_on(admin.create_topics(chunk, &opts))? {
            if let Err((t, code)) = r {
                if code != RDKafkaErrorCode::TopicAlreadyExists {
                    bail!("cannot create {t}: {code}");
                }
            }
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30 + missing.len() as u64 / 10);
    loop {
        let md = meta.fetch_metadata(None, Duration::from_secs(30))?;
        let shown = missing
            .iter()
            .filter(|&&m| {
                md.topics().iter().any(|t| {
                    t.name() == m
                        && t.error().is_none()
                        && t.partitions().len() as i32 == partitions
                        && t.partitions().iter().all(|p| p.leader() >= 0)
                })
            })
            .count();
        if shown == missing.len() {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "{} of {} new topics did not show up in metadata",
                missing.len() - shown,
                missing.len()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// librdkafka's watermarks from the last Fetch response (rust-rdkafka does not expose them).
pub fn cached_watermarks(
    consumer: &BaseConsumer,
    topic: &str,
    partition: i32,
) -> Option<(i64, i64)> {
    let topic = std::ffi::CString::new(topic).ok()?;
    let (mut low, mut high) = (-1i64, -1i64);
    // SAFETY: valid client pointer for the consumer's lifetime; writes the two integers.
    let err = unsafe {
        rdkafka_sys::rd_kafka_get_watermark_offsets(
            consumer.client().native_ptr(),
            topic.as_ptr(),
            partition,
            &mut low,
            &mut high,
        )
    };
    (err == rdkafka_sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR && high >= 0)
        .then_some((low.max(0), high))
}
