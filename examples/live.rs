//! The live benchmark's writer and reader (`bench/run.sh --live`, issue 32).
//!
//! `write` produces `--records` records to the source at `--rate` records per second, each
//! stamped with the wall-clock time it was sent (CreateTime, which every copier keeps).
//! `latency` reads the target topic from its beginning as a consumer of the copy would
//! (`read_committed`), and for every record takes the time from its timestamp to its arrival;
//! it prints the count and the p50, p99 and maximum, in milliseconds, as JSON.
//!
//! ```text
//! cargo run --release --example live -- write --bootstrap 127.0.0.1:9092 --topic src \
//!     --records 300000 --rate 50000 --size 1024
//! cargo run --release --example live -- latency --bootstrap 127.0.0.1:9093 --topic src \
//!     --records 300000
//! ```

use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

#[allow(dead_code)] // helpers of the other examples
mod support;

#[derive(Parser)]
#[command(about = "Write at a set rate; measure end-to-end latency (kreplicate benchmark helper)")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Produce records at a set rate, each stamped with the time it was sent
    Write {
        #[arg(long)]
        bootstrap: String,
        #[arg(long)]
        topic: String,
        #[arg(long, default_value_t = 8)]
        partitions: i32,
        #[arg(long)]
        records: u64,
        /// Records per second
        #[arg(long)]
        rate: u64,
        /// Value size in bytes
        #[arg(long, default_value_t = 1024)]
        size: usize,
        /// Extra producer property KEY=VALUE (repeatable)
        #[arg(short = 'X', value_name = "KEY=VALUE")]
        props: Vec<String>,
    },
    /// Read the topic read_committed from its beginning until --records arrived; print the
    /// latency percentiles (arrival time - record timestamp) as JSON
    Latency {
        #[arg(long)]
        bootstrap: String,
        #[arg(long)]
        topic: String,
        #[arg(long)]
        records: u64,
        /// Give up after this many seconds
        #[arg(long, default_value_t = 1800)]
        timeout: u64,
    },
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn main() -> ExitCode {
    let res = match Cli::parse().cmd {
        Cmd::Write {
            bootstrap,
            topic,
            partitions,
            records,
            rate,
            size,
            props,
        } => write(
            &bootstrap,
            &topic,
            (partitions, records, rate, size),
            &props,
        ),
        Cmd::Latency {
            bootstrap,
            topic,
            records,
            timeout,
        } => latency(&bootstrap, &topic, records, Duration::from_secs(timeout)),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("live: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn write(
    bootstrap: &str,
    topic: &str,
    (partitions, records, rate, size): (i32, u64, u64, usize),
    props: &[String],
) -> Result<()> {
    if rate == 0 || partitions < 1 {
        bail!("need --rate > 0 and --partitions > 0");
    }
    support::ensure_topics(bootstrap, &[topic.to_string()], partitions)?;
    let mut cfg = ClientConfig::new();
    cfg.set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .set("compression.type", "none");
    support::set_props(&mut cfg, props)?;
    let producer: BaseProducer = cfg.create()?;
    // Values are windows into a pseudo-random pool, so they differ from record to record.
    let pool_len = (1 << 20) + size;
    let mut pool = Vec::with_capacity(pool_len);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while pool.len() < pool_len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        pool.extend_from_slice(&x.to_le_bytes());
    }
    let started = Instant::now();
    for i in 0..records {
        // Ahead of the rate: wait until this record is due.
        let due = Duration::from_secs_f64(i as f64 / rate as f64);
        if let Some(wait) = due.checked_sub(started.elapsed()) {
            if wait >= Duration::from_millis(1) {
                std::thread::sleep(wait);
            }
        }
        let key = format!("k{i:015}");
        let start = (i as usize).wrapping_mul(7919) % (1 << 20);
        let mut record = BaseRecord::to(topic)
            .partition((i % partitions as u64) as i32)
            .key(key.as_bytes())
            .payload(&pool[start..start + size])
            .timestamp(now_ms());
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                    record = r;
                    producer.poll(Duration::from_millis(1));
                }
                Err((e, _)) => bail!("produce failed at record {i}: {e}"),
            }
        }
        producer.poll(Duration::ZERO);
    }
    producer.flush(Duration::from_secs(120))?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({"records": records, "seconds": secs, "records_per_s": records as f64 / secs})
    );
    Ok(())
}

fn latency(bootstrap: &str, topic: &str, records: u64, timeout: Duration) -> Result<()> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set(
            "group.id",
            format!("kreplicate-bench-latency-{}", std::process::id()),
        )
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .set("fetch.wait.max.ms", "10")
        .create()?;
    let started = Instant::now();
    // The copier creates the target topic: wait for it.
    let partitions = loop {
        if let Some(n) = support::partition_count(&consumer, topic)? {
            break n;
        }
        if started.elapsed() > timeout {
            bail!("no topic {topic} after {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)?;
    }
    consumer.assign(&tpl)?;
    let mut lat: Vec<i64> = Vec::with_capacity(records as usize);
    while (lat.len() as u64) < records {
        if started.elapsed() > timeout {
            bail!("{} of {records} records after {timeout:?}", lat.len());
        }
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                if let Some(ts) = m.timestamp().to_millis() {
                    lat.push(now_ms() - ts);
                }
            }
            Some(Err(e)) => eprintln!("live latency: warning: {e}"),
            None => {}
        }
    }
    lat.sort_unstable();
    let pct = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize];
    println!(
        "{}",
        serde_json::json!({"records": lat.len(), "p50_ms": pct(0.5), "p99_ms": pct(0.99), "max_ms": pct(1.0)})
    );
    Ok(())
}
