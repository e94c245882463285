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

/// Creates `topic` with `partitions` partitions unless it exists with exactly that many, and
/// waits until metadata shows it.
pub fn ensure_topic(bootstrap: &str, topic: &str, partitions: i32) -> Result<()> {
    // kreplicate's default for every client (src/kafka/mod.rs, apply_cluster).
    let meta: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("reconnect.backoff.ms", "10")
        .create()?;
    if let Some(n) = partition_count(&meta, topic)? {
        if n != partitions {
            bail!("topic {topic} exists with {n} partitions, not {partitions}");
        }
        return Ok(());
    }
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("reconnect.backoff.ms", "10")
        .create()?;
    let new = NewTopic::new(topic, partitions, TopicReplication::Fixed(-1));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    for r in rt.block_on(admin.create_topics([&new], &AdminOptions::new()))? {
        if let Err((t, code)) = r {
            if code != RDKafkaErrorCode::TopicAlreadyExists {
                bail!("cannot create {t}: {code}");
            }
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while partition_count(&meta, topic)? != Some(partitions) {
        if Instant::now() > deadline {
            bail!("topic {topic} did not show up in metadata");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}
