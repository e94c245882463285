//! Benchmark helper (see `bench/run.sh`): fills a source topic fast, and reads a topic back to
//! count (and digest) its records, partition by partition.
//!
//! ```text
//! cargo run --release --example load -- produce --bootstrap 127.0.0.1:9092 --topic src \
//!     --partitions 8 --records 1500000 --size 400
//! cargo run --release --example load -- count --bootstrap 127.0.0.1:9092 --topic src
//! ```
//!
//! `produce` is a plain, non-idempotent producer with `acks=all` and large batches; records go
//! round-robin over the partitions, with a ~16 B key, one small header and a CreateTime
//! timestamp. `count` assigns every partition from the beginning and reads to partition EOF
//! (tansu's ListOffsets LATEST is wrong; the Fetch high watermark is right), printing one JSON
//! object with per-partition counts and an order-sensitive digest of key, value, headers and
//! timestamp, so a copy can be compared with its source.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{Parser, Subcommand};
use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

#[derive(Parser)]
#[command(about = "Load or count a Kafka topic (kreplicate benchmark helper)")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Create the topic (if missing) and produce records into it
    Produce {
        #[arg(long)]
        bootstrap: String,
        #[arg(long)]
        topic: String,
        /// Write into TOPIC-00000.. instead (bench/scale.sh), record i into topic i mod N
        #[arg(long, default_value_t = 1)]
        topic_count: usize,
        #[arg(long, default_value_t = 8)]
        partitions: i32,
        #[arg(long, default_value_t = 1_500_000)]
        records: u64,
        /// Value size in bytes
        #[arg(long, default_value_t = 400)]
        size: usize,
        /// Key size in bytes (at least 8)
        #[arg(long, default_value_t = 16)]
        key_size: usize,
        /// Headers per record
        #[arg(long, default_value_t = 1)]
        headers: usize,
        /// Extra producer property KEY=VALUE (repeatable)
        #[arg(short = 'X', value_name = "KEY=VALUE")]
        props: Vec<String>,
    },
    /// Read every partition from the beginning to EOF; print counts and digests as JSON
    Count {
        #[arg(long)]
        bootstrap: String,
        #[arg(long)]
        topic: String,
        /// Read TOPIC-00000..SUFFIX instead (bench/scale.sh)
        #[arg(long, default_value_t = 1)]
        topic_count: usize,
        /// Appended to each of the --topic-count names
        #[arg(long, default_value = "")]
        suffix: String,
        /// Give up when no record or EOF arrives for this many seconds
        #[arg(long, default_value_t = 60)]
        idle_timeout: u64,
        /// Skip the digest (counts only)
        #[arg(long)]
        no_digest: bool,
        /// Leave headers with this name out of the digest (repeatable), e.g. kreplicate.origin
        #[arg(long, value_name = "NAME")]
        ignore_header: Vec<String>,
    },
    /// Commit positions of `topic` for consumer groups <prefix>000.. (as a non-member): every
    /// partition at --position, or, with --seed, at a pseudo-random position in 0..=--max
    Commit {
        #[arg(long)]
        bootstrap: String,
        #[arg(long)]
        topic: String,
        #[arg(long)]
        partitions: i32,
        /// One group of this exact name, or with --groups N the groups PREFIX000 to PREFIX<N-1>
        #[arg(long)]
        group: String,
        #[arg(long)]
        groups: Option<u32>,
        #[arg(long)]
        position: Option<i64>,
        #[arg(long, default_value_t = 0)]
        max: i64,
        #[arg(long)]
        seed: Option<u64>,
        /// With --seed: one position in ten at 0 and one in ten at --max (the ends)
        #[arg(long)]
        edges: bool,
    },
    /// Wait until the topic's partitions hold --records records in all (sum of the high
    /// watermarks: readable by a consumer); exit 1 after --timeout seconds
    Wait {
        #[arg(long)]
        bootstrap: String,
        #[arg(long)]
        topic: String,
        /// Wait for TOPIC-00000..SUFFIX in all instead (bench/scale.sh)
        #[arg(long, default_value_t = 1)]
        topic_count: usize,
        /// Appended to each of the --topic-count names
        #[arg(long, default_value = "")]
        suffix: String,
        /// Count this partition of each topic only
        #[arg(long)]
        partition: Option<i32>,
        #[arg(long)]
        records: i64,
        #[arg(long, default_value_t = 600)]
        timeout: u64,
    },
    /// Read every partition from the beginning to EOF; print, per partition, the record ids
    /// (the number in each key `produce` wrote) in offset order, as JSON
    Dump {
        #[arg(long)]
        bootstrap: String,
        #[arg(long)]
        topic: String,
        #[arg(long, default_value_t = 60)]
        idle_timeout: u64,
    },
    /// Poll the committed positions of groups PREFIX000.. on the given topics until every one is
    /// set and none has changed for --stable seconds; print each final position and the seconds
    /// from the start until it first held that value, as JSON
    Watch {
        #[arg(long)]
        bootstrap: String,
        /// Topic (repeatable)
        #[arg(long = "topic", required = true)]
        topics: Vec<String>,
        #[arg(long)]
        partitions: i32,
        #[arg(long)]
        group: String,
        #[arg(long)]
        groups: u32,
        #[arg(long, default_value_t = 10.0)]
        stable: f64,
        #[arg(long, default_value_t = 900)]
        timeout: u64,
    },
    /// List the topics of a cluster with their partition counts
    Topics {
        #[arg(long)]
        bootstrap: String,
    },
    /// Delete topics
    Delete {
        #[arg(long)]
        bootstrap: String,
        #[arg(required = true)]
        topics: Vec<String>,
    },
    /// Delete consumer groups (a group that does not exist is no error)
    DeleteGroups {
        #[arg(long)]
        bootstrap: String,
        #[arg(required = true)]
        groups: Vec<String>,
    },
}

mod support;

use anyhow::{bail, Context, Result as AnyResult};
use support::{cached_watermarks, ensure_topics, partition_count, set_props, topic_names};

fn with_suffix(names: Vec<String>, suffix: &str) -> Vec<String> {
    names.into_iter().map(|n| n + suffix).collect()
}

fn main() -> ExitCode {
    let res = match Cli::parse().cmd {
        Cmd::Produce {
            bootstrap,
            topic,
            topic_count,
            partitions,
            records,
            size,
            key_size,
            headers,
            props,
        } => produce(
            &bootstrap,
            &topic_names(&topic, topic_count),
            partitions,
            records,
            size,
            key_size,
            headers,
            &props,
        ),
        Cmd::Count {
            bootstrap,
            topic,
            topic_count,
            suffix,
            idle_timeout,
            no_digest,
            ignore_header,
        } => count(
            &bootstrap,
            &with_suffix(topic_names(&topic, topic_count), &suffix),
            Duration::from_secs(idle_timeout),
            !no_digest,
            &ignore_header,
        ),
        Cmd::Commit {
            bootstrap,
            topic,
            partitions,
            group,
            groups,
            position,
            max,
            seed,
            edges,
        } => commit(
            &bootstrap, &topic, partitions, &group, groups, position, max, seed, edges,
        ),
        Cmd::Wait {
            bootstrap,
            topic,
            topic_count,
            suffix,
            partition,
            records,
            timeout,
        } => wait_end(
            &bootstrap,
            &with_suffix(topic_names(&topic, topic_count), &suffix),
            partition,
            records,
            Duration::from_secs(timeout),
        ),
        Cmd::Dump {
            bootstrap,
            topic,
            idle_timeout,
        } => dump(&bootstrap, &topic, Duration::from_secs(idle_timeout)),
        Cmd::Watch {
            bootstrap,
            topics,
            partitions,
            group,
            groups,
            stable,
            timeout,
        } => watch(
            &bootstrap,
            &topics,
            partitions,
            &group,
            groups,
            Duration::from_secs_f64(stable),
            Duration::from_secs(timeout),
        ),
        Cmd::Topics { bootstrap } => list_topics(&bootstrap),
        Cmd::Delete { bootstrap, topics } => delete_topics(&bootstrap, &topics),
        Cmd::DeleteGroups { bootstrap, groups } => delete_groups(&bootstrap, &groups),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("load: error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn commit(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    group: &str,
    groups: Option<u32>,
    position: Option<i64>,
    max: i64,
    seed: Option<u64>,
    edges: bool,
) -> AnyResult<()> {
    let names: Vec<String> = match groups {
        None => vec![group.to_string()],
        Some(n) => group_names(group, n),
    };
    let mut x = seed.unwrap_or(1) | 1;
    for name in names {
        let c: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", &name)
            .set("enable.auto.commit", "false")
            .create()?;
        let mut tpl = TopicPartitionList::new();
        for p in 0..partitions {
            let at = match (position, seed) {
                (Some(n), _) => n,
                (None, Some(_)) => {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    match x % 10 {
                        0 if edges => 0,
                        1 if edges => max,
                        _ => (x % (max as u64 + 1)) as i64,
                    }
                }
                (None, None) => bail!("give --position or --seed"),
            };
            tpl.add_partition_offset(topic, p, Offset::Offset(at))?;
        }
        c.commit(&tpl, rdkafka::consumer::CommitMode::Sync)
            .with_context(|| format!("commit for {name}"))?;
    }
    Ok(())
}

fn group_names(prefix: &str, n: u32) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i:03}")).collect()
}

fn wait_end(
    bootstrap: &str,
    topics: &[String],
    partition: Option<i32>,
    records: i64,
    timeout: Duration,
) -> AnyResult<()> {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()?;
    let started = Instant::now();
    loop {
        let total = high_watermarks(&c, topics, partition).unwrap_or_else(|e| {
            eprintln!("load wait: {e} (retrying)");
            -1
        });
        if total >= records {
            return Ok(());
        }
        if started.elapsed() > timeout {
            bail!(
                "{} holds {total} of {records} records after {timeout:?}",
                topics[0]
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The sum of the topics' high watermarks, in one ListOffsets request per broker; a topic not
/// there yet (a replicator creates it) or a partition without a leader yet counts 0.
fn high_watermarks(c: &BaseConsumer, topics: &[String], partition: Option<i32>) -> AnyResult<i64> {
    // One topic's metadata alone: every topic's, 10 times a second, loads a broker that holds
    // thousands.
    let only = (topics.len() == 1).then(|| topics[0].as_str());
    let md = c.fetch_metadata(only, Duration::from_secs(30))?;
    let mut tpl = TopicPartitionList::new();
    for topic in topics {
        let Some(t) = md
            .topics()
            .iter()
            .find(|t| t.name() == topic.as_str() && t.error().is_none())
        else {
            continue;
        };
        let wanted = |p: i32| partition.is_none_or(|w| w == p);
        for p in t
            .partitions()
            .iter()
            .filter(|p| p.leader() >= 0 && wanted(p.id()))
        {
            tpl.add_partition_offset(topic, p.id(), Offset::End)?;
        }
    }
    if tpl.count() == 0 {
        return Ok(0);
    }
    let got = c.offsets_for_times(tpl, Duration::from_secs(30))?;
    Ok(got
        .elements()
        .iter()
        .filter_map(|e| match e.offset() {
            Offset::Offset(n) => Some(n),
            _ => None,
        })
        .sum())
}

fn dump(bootstrap: &str, topic: &str, idle: Duration) -> AnyResult<()> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set(
            "group.id",
            format!("kreplicate-bench-dump-{}", std::process::id()),
        )
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .set("isolation.level", "read_committed")
        .create()?;
    let n =
        partition_count(&consumer, topic)?.with_context(|| format!("topic {topic} not found"))?;
    let mut tpl = TopicPartitionList::new();
    for p in 0..n {
        tpl.add_partition_offset(topic, p, Offset::Beginning)?;
    }
    consumer.assign(&tpl)?;
    // Per partition: (offset, id) in offset order; the offset maps a committed position to ids.
    let mut parts: Vec<Vec<(i64, i64)>> = vec![Vec::new(); n as usize];
    let mut eof = vec![false; n as usize];
    let mut open = n as usize;
    let mut last_event = Instant::now();
    while open > 0 {
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(m)) => {
                last_event = Instant::now();
                let id = m
                    .key()
                    .and_then(|k| std::str::from_utf8(k.get(1..)?).ok()?.parse::<i64>().ok())
                    .unwrap_or(-1);
                parts[m.partition() as usize].push((m.offset(), id));
            }
            Some(Err(KafkaError::PartitionEOF(p))) => {
                last_event = Instant::now();
                if !eof[p as usize] {
                    eof[p as usize] = true;
                    open -= 1;
                }
            }
            Some(Err(e)) => eprintln!("load dump: warning: {e}"),
            None => {
                if last_event.elapsed() > idle {
                    bail!("no progress for {idle:?} reading {topic}");
                }
            }
        }
    }
    println!(
        "{}",
        serde_json::json!({ "topic": topic, "partitions": parts })
    );
    Ok(())
}

fn watch(
    bootstrap: &str,
    topics: &[String],
    partitions: i32,
    prefix: &str,
    groups: u32,
    stable: Duration,
    timeout: Duration,
) -> AnyResult<()> {
    let names = group_names(prefix, groups);
    let mut consumers = Vec::with_capacity(names.len());
    for name in &names {
        let c: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", name)
            .set("enable.auto.commit", "false")
            .create()?;
        consumers.push(c);
    }
    let mut tpl = TopicPartitionList::new();
    for t in topics {
        for p in 0..partitions {
            tpl.add_partition(t, p);
        }
    }
    // (group, topic, partition) -> (offset, seconds from start when it first held it)
    let mut last: std::collections::BTreeMap<(String, String, i32), (i64, f64)> =
        std::collections::BTreeMap::new();
    let started = Instant::now();
    let mut changed = Instant::now();
    let want = names.len() * topics.len() * partitions as usize;
    loop {
        for (name, c) in names.iter().zip(&consumers) {
            let got = match c.committed_offsets(tpl.clone(), Duration::from_secs(10)) {
                Ok(got) => got,
                Err(e) => {
                    eprintln!("load watch: warning: {name}: {e}");
                    continue;
                }
            };
            let now = started.elapsed().as_secs_f64();
            for e in got.elements() {
                if let Offset::Offset(o) = e.offset() {
                    let k = (name.clone(), e.topic().to_string(), e.partition());
                    if last.get(&k).map(|v| v.0) != Some(o) {
                        last.insert(k, (o, now));
                        changed = Instant::now();
                    }
                }
            }
        }
        if last.len() == want && changed.elapsed() >= stable {
            break;
        }
        if started.elapsed() > timeout {
            eprintln!(
                "load watch: {} of {want} group-partitions set after {timeout:?}",
                last.len()
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let rows: Vec<_> = last
        .iter()
        .map(|((g, t, p), (o, s))| {
            serde_json::json!({"group": g, "topic": t, "partition": p, "offset": o, "seconds": s})
        })
        .collect();
    println!("{}", serde_json::json!({ "rows": rows }));
    Ok(())
}

fn list_topics(bootstrap: &str) -> AnyResult<()> {
    let meta: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()?;
    let md = meta.fetch_metadata(None, Duration::from_secs(10))?;
    for t in md.topics() {
        println!("{}\t{}", t.name(), t.partitions().len());
    }
    Ok(())
}

fn delete_topics(bootstrap: &str, topics: &[String]) -> AnyResult<()> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()?;
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    for r in rt.block_on(admin.delete_topics(&names, &opts))? {
        match r {
            Ok(t) => eprintln!("deleted {t}"),
            Err((t, code)) => bail!("cannot delete {t}: {code}"),
        }
    }
    Ok(())
}

fn delete_groups(bootstrap: &str, groups: &[String]) -> AnyResult<()> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()?;
    let names: Vec<&str> = groups.iter().map(String::as_str).collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    for r in rt.block_on(admin.delete_groups(&names, &opts))? {
        match r {
            Ok(g) => eprintln!("deleted group {g}"),
            Err((g, RDKafkaErrorCode::GroupIdNotFound)) => eprintln!("no group {g}"),
            Err((g, code)) => bail!("cannot delete group {g}: {code}"),
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn produce(
    bootstrap: &str,
    topics: &[String],
    partitions: i32,
    records: u64,
    size: usize,
    key_size: usize,
    headers: usize,
    props: &[String],
) -> AnyResult<()> {
    if partitions < 1 || key_size < 8 {
        bail!("need --partitions >= 1 and --key-size >= 8");
    }
    ensure_topics(bootstrap, topics, partitions)?;
    let mut cfg = ClientConfig::new();
    cfg.set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "false")
        .set("acks", "all")
        .set("linger.ms", "20")
        .set("batch.size", "1000000")
        .set("batch.num.messages", "100000")
        .set("queue.buffering.max.messages", "1000000")
        .set("queue.buffering.max.kbytes", "1048576")
        .set("compression.type", "none");
    set_props(&mut cfg, props)?;
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
    let mut key = vec![b'k'; key_size];
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis() as i64;
    let started = Instant::now();
    let mut bytes = 0u64;
    for i in 0..records {
        let digits = format!("{i:0w$}", w = key_size - 1);
        key[1..].copy_from_slice(&digits.as_bytes()[digits.len() - (key_size - 1)..]);
        let start = (i as usize).wrapping_mul(7919) % (1 << 20);
        let value = &pool[start..start + size];
        let n = topics.len() as u64;
        let mut record = BaseRecord::to(&topics[(i % n) as usize])
            .partition(((i / n) % partitions as u64) as i32)
            .key(&key[..])
            .payload(value)
            .timestamp(now_ms + (i / 1000) as i64);
        if headers > 0 {
            let mut h = OwnedHeaders::new_with_capacity(headers);
            let seq = i.to_be_bytes();
            for n in 0..headers {
                let name = if n == 0 { "seq" } else { "extra" };
                h = h.insert(Header {
                    key: name,
                    value: Some(&seq[..]),
                });
            }
            record = record.headers(h);
        }
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                    record = r;
                    producer.poll(Duration::from_millis(10));
                }
                Err((e, _)) => bail!("produce failed at record {i}: {e}"),
            }
        }
        bytes += (key_size + size) as u64;
        if i % 1024 == 0 {
            producer.poll(Duration::ZERO);
        }
    }
    producer.flush(Duration::from_secs(300))?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "topic": topics[0],
            "topics": topics.len(),
            "partitions": partitions,
            "records": records,
            "bytes": bytes,
            "seconds": secs,
        })
    );
    Ok(())
}

struct PartCount {
    records: u64,
    eof: bool,
    hasher: DefaultHasher,
}

fn hash_opt(h: &mut DefaultHasher, b: Option<&[u8]>) {
    match b {
        None => h.write_u8(0),
        Some(b) => {
            h.write_u8(1);
            h.write_usize(b.len());
            h.write(b);
        }
    }
}

fn count(
    bootstrap: &str,
    topics: &[String],
    idle: Duration,
    digest: bool,
    ignore: &[String],
) -> AnyResult<()> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set(
            "group.id",
            format!("kreplicate-bench-count-{}", std::process::id()),
        )
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("enable.partition.eof", "true")
        // What a reader of a transactional copy sees (librdkafka's default, made explicit).
        .set("isolation.level", "read_committed")
        .set("fetch.max.bytes", "104857600")
        .set("max.partition.fetch.bytes", "16777216")
        .create()?;
    let topic = &topics[0];
    let n =
        partition_count(&consumer, topic)?.with_context(|| format!("topic {topic} not found"))?;
    let mut tpl = TopicPartitionList::new();
    for t in topics {
        for p in 0..n {
            tpl.add_partition_offset(t, p, Offset::Beginning)?;
        }
    }
    consumer.assign(&tpl)?;
    // Each partition's slot: its topic's index times the partition count plus its own.
    let index: std::collections::HashMap<&str, usize> = topics
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let slot = |t: &str, p: i32| index.get(t).map(|i| i * n as usize + p as usize);
    let mut parts: Vec<PartCount> = (0..topics.len() * n as usize)
        .map(|_| PartCount {
            records: 0,
            eof: false,
            hasher: DefaultHasher::new(),
        })
        .collect();
    let started = Instant::now();
    let mut last_event = Instant::now();
    let mut open = parts.len();
    while open > 0 {
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(m)) => {
                last_event = Instant::now();
                let Some(i) = slot(m.topic(), m.partition()) else {
                    bail!("a record of {} that was not asked for", m.topic());
                };
                let pc = &mut parts[i];
                pc.records += 1;
                if digest {
                    let h = &mut pc.hasher;
                    hash_opt(h, m.key());
                    hash_opt(h, m.payload());
                    h.write_i64(m.timestamp().to_millis().unwrap_or(-1));
                    // No headers and no headers left after `ignore` digest the same.
                    let mut kept = 0usize;
                    for hd in m.headers().into_iter().flat_map(|hs| hs.iter()) {
                        if ignore.iter().any(|i| i == hd.key) {
                            continue;
                        }
                        kept += 1;
                        hash_opt(h, Some(hd.key.as_bytes()));
                        hash_opt(h, hd.value);
                    }
                    h.write_usize(kept);
                }
            }
            // rust-rdkafka's EOF names the partition, not its topic: with many topics the
            // positions tell when idle (below).
            Some(Err(KafkaError::PartitionEOF(_))) if topics.len() > 1 => {
                last_event = Instant::now();
            }
            Some(Err(KafkaError::PartitionEOF(p))) => {
                last_event = Instant::now();
                let pc = &mut parts[p as usize];
                if !pc.eof {
                    pc.eof = true;
                    open -= 1;
                }
            }
            Some(Err(e)) => eprintln!("load count: warning: {e}"),
            None => {
                if topics.len() > 1 {
                    // Done where the position (past any transaction marker) reached the end
                    // the last fetch saw, as kreplicate's own check.
                    for e in consumer.position()?.elements() {
                        let Some(i) = slot(e.topic(), e.partition()) else {
                            continue;
                        };
                        let Some((low, high)) =
                            cached_watermarks(&consumer, e.topic(), e.partition())
                        else {
                            continue;
                        };
                        let at = match e.offset() {
                            Offset::Offset(n) => n,
                            _ => low,
                        };
                        if !parts[i].eof && at >= high {
                            parts[i].eof = true;
                            open -= 1;
                        }
                    }
                }
                if last_event.elapsed() > idle {
                    bail!("no progress for {idle:?} reading {topic}");
                }
            }
        }
    }
    let total: u64 = parts.iter().map(|p| p.records).sum();
    let per: Vec<_> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            serde_json::json!({
                "topic": i / n as usize,
                "partition": i % n as usize,
                "records": p.records,
                "digest": if digest { format!("{:016x}", p.hasher.finish()) } else { String::new() },
            })
        })
        .collect();
    println!(
        "{}",
        serde_json::json!({
            "topic": topic,
            "records": total,
            "seconds": started.elapsed().as_secs_f64(),
            "partitions": per,
        })
    );
    Ok(())
}
