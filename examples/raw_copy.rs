//! Benchmark ceiling (see `bench/run.sh`): the simplest honest topic copy with the same
//! librdkafka and the same client defaults as kreplicate, and nothing else.
//!
//! A `BaseConsumer` is assigned every partition of the source topic from the beginning (no
//! group, no offsets); each record goes to a `BaseProducer` on the same partition of the target
//! topic with its key, value, headers and timestamp. It stops when every partition is read to
//! its end (an EOF event, or on an idle poll the high watermark of the last fetch, as
//! kreplicate checks it), then flushes. No tracking, no commits, no verification (bench/run.sh
//! counts the target afterwards). Delivery failures are counted and make the exit code 1.
//! With `--topic-count N` it copies the N topics of a partition-scale layout (bench/scale.sh),
//! all assigned to the one consumer.
//! With `--follow` it never stops by itself: the live latency benchmark's ceiling (issue 43),
//! stopped by SIGTERM once its reader counted every record.
//!
//! ```text
//! cargo run --release --example raw_copy -- --from 127.0.0.1:9092 --to 127.0.0.1:9093 \
//!     --topic src --target src.copy
//! ```

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use rdkafka::client::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::{Offset, TopicPartitionList};

#[derive(Parser)]
#[command(about = "Minimal raw topic copy (kreplicate benchmark ceiling)")]
struct Args {
    /// Source bootstrap servers
    #[arg(long)]
    from: String,
    /// Target bootstrap servers
    #[arg(long)]
    to: String,
    /// Source topic
    #[arg(long)]
    topic: String,
    /// Target topic (created with the source's partition count when missing); `{topic}` stands
    /// for the source topic's name
    #[arg(long)]
    target: String,
    /// Copy the topics TOPIC-00000.. instead of TOPIC alone (bench/scale.sh's layouts)
    #[arg(long, default_value_t = 1)]
    topic_count: usize,
    /// Serve delivery reports every N records
    #[arg(long, default_value_t = 256)]
    poll_every: u32,
    /// Also report where the loop waited (time in consumer poll, in queue-full waits)
    #[arg(long)]
    stats: bool,
    /// Copy what arrives until killed, instead of stopping at the partitions' ends
    #[arg(long)]
    follow: bool,
    /// Extra source consumer property KEY=VALUE (repeatable)
    #[arg(short = 'C', value_name = "KEY=VALUE")]
    consumer_props: Vec<String>,
    /// Extra target producer property KEY=VALUE (repeatable)
    #[arg(short = 'P', value_name = "KEY=VALUE")]
    producer_props: Vec<String>,
}

mod support;

use anyhow::{bail, Context, Result as AnyResult};
use support::{cached_watermarks, ensure_topics, partition_count, set_props, topic_names};

/// Counts failed deliveries; nothing else.
#[derive(Default)]
struct Reports {
    failed: AtomicU64,
}

impl ClientContext for Reports {}

impl ProducerContext for Reports {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, _)) = result {
            if self.failed.fetch_add(1, Ordering::Relaxed) == 0 {
                eprintln!("raw_copy: delivery failed: {e}");
            }
        }
    }
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("raw_copy: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> AnyResult<()> {
    let started = Instant::now();
    // Producer first, as kreplicate does: the idempotent producer's ProducerId request then
    // overlaps the consumer's start instead of delaying the first send.
    // Producer: kreplicate's producer defaults (src/kafka.rs).
    let mut pcfg = ClientConfig::new();
    // kreplicate's default for every client (src/kafka/mod.rs, apply_cluster).
    pcfg.set("reconnect.backoff.ms", "10")
        .set("linger.ms", "5")
        .set("queue.buffering.max.kbytes", "65536")
        .set("enable.idempotence", "true")
        .set("bootstrap.servers", &args.to)
        .set("message.timeout.ms", "120000");
    set_props(&mut pcfg, &args.producer_props)?;
    let producer: BaseProducer<Reports> = pcfg.create_with_context(Reports::default())?;

    // Consumer: kreplicate's consumer default (bounded prefetch), no group semantics.
    let mut ccfg = ClientConfig::new();
    ccfg.set("reconnect.backoff.ms", "10")
        .set("queued.max.messages.kbytes", "32768")
        .set("fetch.queue.backoff.ms", "10")
        .set("bootstrap.servers", &args.from)
        .set(
            "group.id",
            format!("kreplicate-bench-raw-{}", std::process::id()),
        )
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("enable.partition.eof", "true");
    set_props(&mut ccfg, &args.consumer_props)?;
    let consumer: BaseConsumer = ccfg.create()?;
    let sources = topic_names(&args.topic, args.topic_count);
    let targets: Vec<String> = sources
        .iter()
        .map(|t| args.target.replace("{topic}", t))
        .collect();
    let partitions = partition_count(&consumer, &sources[0])?
        .with_context(|| format!("no topic {}", sources[0]))?;
    ensure_topics(&args.to, &targets, partitions)?;
    // As kreplicate's warm-up (src/target.rs): the second answer lets the idempotent producer
    // ask for its producer id at once instead of after its 500 ms retry timer.
    for _ in 0..2 {
        producer
            .client()
            .fetch_metadata(Some(&targets[0]), Duration::from_secs(10))?;
    }

    let mut tpl = TopicPartitionList::new();
    for topic in &sources {
        for p in 0..partitions {
            tpl.add_partition_offset(topic, p, Offset::Beginning)?;
        }
    }
    consumer.assign(&tpl)?;
    // Each partition's slot: its topic's index times the partition count plus its own.
    let index: std::collections::HashMap<&str, usize> = sources
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let slots = sources.len() * partitions as usize;

    let copy_started = Instant::now();
    let mut eof = vec![false; slots];
    // Next offset to read per partition, from the records themselves.
    let mut next: Vec<Option<i64>> = vec![None; slots];
    let mut open = slots;
    let (mut records, mut bytes, mut since_poll) = (0u64, 0u64, 0u32);
    let mut last_progress = Instant::now();
    let mut last_record = Duration::ZERO;
    // --stats: time blocked in consumer.poll, in QueueFull waits, and how often.
    let (mut poll_wait, mut full_wait, mut full_count) = (Duration::ZERO, Duration::ZERO, 0u64);
    while open > 0 {
        let t0 = args.stats.then(Instant::now);
        let polled = consumer.poll(Duration::from_millis(100));
        if let Some(t0) = t0 {
            poll_wait += t0.elapsed();
        }
        match polled {
            Some(Ok(m)) => {
                let t = index.get(m.topic()).copied().unwrap_or(0);
                let slot = t * partitions as usize + m.partition() as usize;
                let mut record: BaseRecord<'_, [u8], [u8]> =
                    BaseRecord::to(&targets[t]).partition(m.partition());
                if let Some(k) = m.key() {
                    record = record.key(k);
                    bytes += k.len() as u64;
                }
                if let Some(v) = m.payload() {
                    record = record.payload(v);
                    bytes += v.len() as u64;
                }
                if let Some(ts) = m.timestamp().to_millis() {
                    record = record.timestamp(ts);
                }
                if let Some(h) = m.headers() {
                    record = record.headers(h.detach());
                }
                loop {
                    match producer.send(record) {
                        Ok(()) => break,
                        Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                            record = r;
                            let t0 = args.stats.then(Instant::now);
                            std::thread::sleep(Duration::from_millis(1));
                            producer.poll(Duration::ZERO);
                            if let Some(t0) = t0 {
                                full_wait += t0.elapsed();
                                full_count += 1;
                            }
                        }
                        Err((e, _)) => bail!("produce failed: {e}"),
                    }
                }
                if let Some(n) = next.get_mut(slot) {
                    *n = Some(m.offset() + 1);
                }
                records += 1;
                since_poll += 1;
                if since_poll >= args.poll_every {
                    producer.poll(Duration::ZERO);
                    since_poll = 0;
                }
                last_progress = Instant::now();
                last_record = copy_started.elapsed();
                continue;
            }
            Some(Err(KafkaError::PartitionEOF(_))) if args.follow => {}
            // rust-rdkafka's EOF names the partition, not its topic: with many topics the idle
            // check below ends the partitions.
            Some(Err(KafkaError::PartitionEOF(p))) if sources.len() == 1 => {
                if let Some(done) = eof.get_mut(p as usize) {
                    if !*done {
                        *done = true;
                        open -= 1;
                    }
                }
            }
            Some(Err(KafkaError::PartitionEOF(_))) => {}
            Some(Err(e)) => eprintln!("raw_copy: warning: {e}"),
            None if args.follow => {}
            None => {
                // Idle: a fetch that finds nothing new is held by the broker for
                // fetch.wait.max.ms before the EOF event arrives; the last fetch's high
                // watermark already tells.
                for (slot, done) in eof.iter_mut().enumerate() {
                    if *done {
                        continue;
                    }
                    let (t, p) = (slot / partitions as usize, slot % partitions as usize);
                    if let Some((low, high)) = cached_watermarks(&consumer, &sources[t], p as i32) {
                        if next[slot].unwrap_or(low) >= high {
                            *done = true;
                            open -= 1;
                        }
                    }
                }
                if last_progress.elapsed() > Duration::from_secs(60) {
                    bail!("no progress for 60 s");
                }
            }
        }
        producer.poll(Duration::ZERO);
    }
    let read_secs = copy_started.elapsed().as_secs_f64();
    // BaseProducer::flush waits in 100 ms steps; wait in 1 ms steps, as kreplicate does.
    let deadline = Instant::now() + Duration::from_secs(300);
    while producer.flush(Duration::ZERO).is_err() {
        if Instant::now() > deadline {
            bail!("flush timed out");
        }
        std::thread::sleep(Duration::from_millis(1));
        producer.poll(Duration::ZERO);
    }
    let copy_secs = copy_started.elapsed().as_secs_f64();
    let failed = producer.context().failed.load(Ordering::Relaxed);
    let mut out = serde_json::json!({
        "records": records,
        "bytes": bytes,
        "failed": failed,
        "read_seconds": read_secs,
        "copy_seconds": copy_secs,
        "seconds": started.elapsed().as_secs_f64(),
    });
    if args.stats {
        out["consumer_poll_seconds"] = poll_wait.as_secs_f64().into();
        out["queue_full_wait_seconds"] = full_wait.as_secs_f64().into();
        out["queue_full_count"] = full_count.into();
        // What the end's detection took after the last record: read_seconds minus this.
        out["last_record_seconds"] = last_record.as_secs_f64().into();
    }
    println!("{out}");
    // The consumer's drop closes it in 100 ms steps; close in 1 ms steps, as kreplicate does.
    if consumer.close_queue().is_ok() {
        while !consumer.closed() {
            let _ = consumer.poll(Duration::ZERO);
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    if failed > 0 {
        bail!("{failed} deliveries failed");
    }
    Ok(())
}
