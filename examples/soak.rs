//! The soak's workload and checkers (see `scripts/soak.sh`).
//!
//! ```text
//! soak write --bootstrap A --topic T --partitions 3 --seed 7 --status w.json --stop stop-file
//! soak check --bootstrap B --topic T --partitions 3 --guarantee exactly-once --status c.json --stop stop-file
//! soak final --source A --target B --topic T --partitions 3 --guarantee exactly-once
//! soak proxy --listen P1,P2,P3 --upstream U1,U2,U3 --control ctl
//! ```
//!
//! `write` never stops (until the stop file appears): an idempotent producer, each record's key
//! `p{partition}` and value `{partition}:{seq}`, seq counting from 0 per partition, partitions
//! and pauses drawn from the seed. `check` reads the target read_committed for the whole soak and
//! checks every record as it arrives: a seq past the highest seen + 1 is a gap; one at or below
//! it a duplicate (both violations under exactly-once); the status file holds its figures every
//! second. `final` reads both ends to their end and checks record by record: missing (in the
//! source, not in the target), duplicates, order (exactly-once's records, at-least-once's last
//! copies, in source order). Each prints
//! one JSON object; exit 1 when a check fails. `proxy` forwards each listen port to its
//! upstream port (the target's nodes advertise the proxies) and applies the fault the control
//! file names, `NODE MODE [MS]` (MODE: pass, hold, hold_requests, latency, flap), as it changes:
//! `flap MS` cuts every connection to the node and holds new ones for MS/2, then forwards for
//! MS/2, over and over.

#[allow(dead_code)]
#[path = "../tests/common/proxy.rs"]
mod proxy;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{Offset, TopicPartitionList};
use serde_json::json;

#[derive(Parser)]
#[command(about = "kreplicate soak: writer and checkers")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Write per-partition sequence numbers until the stop file appears
    Write {
        #[arg(long)]
        bootstrap: String,
        #[arg(long)]
        topic: String,
        #[arg(long, default_value_t = 3)]
        partitions: i32,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        status: PathBuf,
        #[arg(long)]
        stop: PathBuf,
    },
    /// Read the target read_committed until the stop file appears, checking every record
    Check {
        #[arg(long)]
        bootstrap: String,
        #[arg(long)]
        topic: String,
        #[arg(long, default_value_t = 3)]
        partitions: i32,
        #[arg(long)]
        guarantee: String,
        #[arg(long)]
        status: PathBuf,
        #[arg(long)]
        stop: PathBuf,
    },
    /// Forward ports to brokers, applying the faults a control file names
    Proxy {
        #[arg(long, value_delimiter = ',')]
        listen: Vec<u16>,
        #[arg(long, value_delimiter = ',')]
        upstream: Vec<u16>,
        #[arg(long)]
        control: PathBuf,
    },
    /// Compare the whole target with the whole source, record by record
    Final {
        #[arg(long)]
        source: String,
        #[arg(long)]
        target: String,
        #[arg(long)]
        topic: String,
        #[arg(long, default_value_t = 3)]
        partitions: i32,
        #[arg(long)]
        guarantee: String,
    },
}

fn main() -> ExitCode {
    let ok = match Cli::parse().cmd {
        Cmd::Write {
            bootstrap,
            topic,
            partitions,
            seed,
            status,
            stop,
        } => write(&bootstrap, &topic, partitions, seed, &status, &stop),
        Cmd::Check {
            bootstrap,
            topic,
            partitions,
            guarantee,
            status,
            stop,
        } => check(&bootstrap, &topic, partitions, &guarantee, &status, &stop),
        Cmd::Proxy {
            listen,
            upstream,
            control,
        } => run_proxies(&listen, &upstream, &control),
        Cmd::Final {
            source,
            target,
            topic,
            partitions,
            guarantee,
        } => final_check(&source, &target, &topic, partitions, &guarantee),
    };
    match ok {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("soak: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// xorshift64*: the seed's stream of numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn save(path: &Path, v: &serde_json::Value) {
    let tmp = path.with_extension("tmp");
    if std::fs::write(&tmp, v.to_string()).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

#[derive(Default)]
struct Acks {
    acked: std::sync::Mutex<Vec<i64>>,
    failed: std::sync::atomic::AtomicU64,
}

struct Counted(std::sync::Arc<Acks>);

impl ClientContext for Counted {}

impl ProducerContext for Counted {
    type DeliveryOpaque = ();
    fn delivery(&self, r: &DeliveryResult<'_>, _: ()) {
        match r {
            Ok(m) => {
                let mut a = self.0.acked.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(n) = a.get_mut(m.partition() as usize) {
                    *n += 1;
                }
            }
            Err(_) => {
                self.0
                    .failed
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }
}

fn write(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    seed: u64,
    status: &Path,
    stop: &Path,
) -> anyhow::Result<bool> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()?;
    // The broker's default replication factor (3 on a three-node cluster of kafka.sh).
    let nt = NewTopic::new(topic, partitions, TopicReplication::Fixed(-1));
    let opts = AdminOptions::new().request_timeout(Some(Duration::from_secs(30)));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    for r in rt.block_on(admin.create_topics([&nt], &opts))? {
        match r {
            Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((t, e)) => anyhow::bail!("create {t}: {e}"),
        }
    }
    let acks = std::sync::Arc::new(Acks {
        acked: std::sync::Mutex::new(vec![0; partitions as usize]),
        ..Acks::default()
    });
    let producer: BaseProducer<Counted> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .create_with_context(Counted(acks.clone()))?;
    let mut rng = Rng(seed.max(1));
    let mut seq = vec![0i64; partitions as usize];
    let mut last_save = Instant::now();
    let figures = |seq: &[i64]| {
        json!({
            "sent": seq,
            "acked": *acks.acked.lock().unwrap_or_else(|e| e.into_inner()),
            "failed": acks.failed.load(std::sync::atomic::Ordering::Relaxed),
        })
    };
    while !stop.exists() {
        // A burst of 1-10 records to random partitions, then 5-30 ms: ~150-300 records/s.
        for _ in 0..1 + rng.next() % 10 {
            let p = (rng.next() % partitions as u64) as i32;
            let n = seq[p as usize];
            let (key, value) = (format!("p{p}"), format!("{p}:{n}"));
            let mut rec = BaseRecord::to(topic).partition(p).key(&key).payload(&value);
            loop {
                match producer.send(rec) {
                    Ok(()) => break,
                    Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                        rec = back;
                        producer.poll(Duration::from_millis(50));
                    }
                    Err((e, _)) => anyhow::bail!("send: {e}"),
                }
            }
            seq[p as usize] += 1;
        }
        producer.poll(Duration::from_millis(5 + rng.next() % 25));
        if last_save.elapsed() > Duration::from_secs(1) {
            save(status, &figures(&seq));
            last_save = Instant::now();
        }
    }
    let flushed = producer.flush(Duration::from_secs(300));
    let out = figures(&seq);
    save(status, &out);
    println!("{out}");
    Ok(flushed.is_ok() && acks.failed.load(std::sync::atomic::Ordering::Relaxed) == 0)
}

/// `{partition}:{seq}` from a record's value.
fn seq_of(m: &impl Message) -> Option<(i32, i64)> {
    let v = std::str::from_utf8(m.payload()?).ok()?;
    let (p, n) = v.split_once(':')?;
    Some((p.parse().ok()?, n.parse().ok()?))
}

fn reader(bootstrap: &str, topic: &str, partitions: i32) -> anyhow::Result<BaseConsumer> {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "soak-reader")
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .set("enable.partition.eof", "true")
        .create()?;
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)?;
    }
    c.assign(&tpl)?;
    Ok(c)
}

fn topic_exists(bootstrap: &str, topic: &str) -> bool {
    let Ok(c) = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create::<BaseConsumer>()
    else {
        return false;
    };
    c.fetch_metadata(Some(topic), Duration::from_secs(5))
        .is_ok_and(|md| {
            md.topics()
                .iter()
                .any(|t| t.error().is_none() && !t.partitions().is_empty())
        })
}

/// Per partition: the highest seq seen, and what broke the rules so far.
#[derive(Default)]
struct Live {
    max: Vec<i64>,
    records: u64,
    duplicates: u64,
    gaps: u64,
    foreign: u64,
    first_problems: Vec<String>,
}

impl Live {
    fn see(&mut self, partition: i32, offset: i64, got: Option<(i32, i64)>) {
        self.records += 1;
        let Some((p, n)) = got.filter(|(p, _)| *p == partition) else {
            self.foreign += 1;
            return self.problem(format!("[{partition}]@{offset}: not a soak record"));
        };
        let max = &mut self.max[p as usize];
        if n == *max + 1 {
            *max = n;
        } else if n <= *max {
            self.duplicates += 1;
        } else {
            self.gaps += 1;
            let was = *max;
            *max = n;
            self.problem(format!("[{p}]@{offset}: seq {n} after {was} (gap)"));
        }
    }

    fn problem(&mut self, what: String) {
        if self.first_problems.len() < 20 {
            self.first_problems.push(what);
        }
    }
}

fn check(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    guarantee: &str,
    status: &Path,
    stop: &Path,
) -> anyhow::Result<bool> {
    while !topic_exists(bootstrap, topic) {
        if stop.exists() {
            anyhow::bail!("{topic} never appeared on {bootstrap}");
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    let c = reader(bootstrap, topic, partitions)?;
    let mut live = Live {
        max: vec![-1; partitions as usize],
        ..Live::default()
    };
    let mut last_save = Instant::now();
    let figures = |l: &Live| {
        json!({
            "records": l.records, "highest": l.max, "duplicates": l.duplicates, "gaps": l.gaps,
            "foreign": l.foreign, "first_problems": l.first_problems,
        })
    };
    while !stop.exists() {
        // Partition EOF and broker restarts are errors here: the reader goes on.
        if let Some(Ok(m)) = c.poll(Duration::from_millis(200)) {
            live.see(m.partition(), m.offset(), seq_of(&m));
        }
        if last_save.elapsed() > Duration::from_secs(1) {
            save(status, &figures(&live));
            last_save = Instant::now();
        }
    }
    let out = figures(&live);
    save(status, &out);
    println!("{out}");
    // Under at-least-once a delivery failure's gap is filled by the rerun, after later records
    // (`final` checks that nothing is missing): counted, not failed.
    let exact = guarantee != "exactly-once" || (live.duplicates == 0 && live.gaps == 0);
    Ok(live.foreign == 0 && exact)
}

/// Every record of `topic`, per partition, `{partition}:{seq}` values in offset order.
fn read_to_end(bootstrap: &str, topic: &str, partitions: i32) -> anyhow::Result<Vec<Vec<i64>>> {
    let c = reader(bootstrap, topic, partitions)?;
    let mut out = vec![Vec::new(); partitions as usize];
    let mut at_end = vec![false; partitions as usize];
    let mut quiet = Instant::now();
    while !at_end.iter().all(|e| *e) {
        match c.poll(Duration::from_millis(500)) {
            Some(Ok(m)) => {
                let p = m.partition() as usize;
                at_end[p] = false;
                out[p].push(seq_of(&m).map_or(-1, |(_, n)| n));
                quiet = Instant::now();
            }
            Some(Err(KafkaError::PartitionEOF(p))) => at_end[p as usize] = true,
            _ => {}
        }
        if quiet.elapsed() > Duration::from_secs(120) {
            anyhow::bail!("{topic} on {bootstrap}: no record nor end for 120 s");
        }
    }
    Ok(out)
}

fn final_check(
    source: &str,
    target: &str,
    topic: &str,
    partitions: i32,
    guarantee: &str,
) -> anyhow::Result<bool> {
    let src = read_to_end(source, topic, partitions)?;
    let dst = read_to_end(target, topic, partitions)?;
    let (mut missing, mut duplicates, mut disorder, mut records) = (0u64, 0u64, 0u64, 0u64);
    for p in 0..partitions as usize {
        records += src[p].len() as u64;
        let mut count: HashMap<i64, u64> = HashMap::new();
        let mut firsts = Vec::new();
        for n in &dst[p] {
            let c = count.entry(*n).or_default();
            if *c == 0 {
                firsts.push(*n);
            }
            *c += 1;
        }
        duplicates += count.values().map(|c| c - 1).sum::<u64>();
        missing += src[p].iter().filter(|n| !count.contains_key(n)).count() as u64;
        // In source order (the source holds 0, 1, 2, ... per partition): exactly-once's records
        // (each once); under at-least-once each record's last copy, as `verify
        // --accept-duplicates` checks. A delivery failure can leave a gap that the rerun fills
        // after later records: librdkafka sends records queued after the ones that timed out.
        let order = if guarantee == "exactly-once" {
            firsts
        } else {
            let mut last: HashMap<i64, usize> = HashMap::new();
            for (i, n) in dst[p].iter().enumerate() {
                last.insert(*n, i);
            }
            let mut lasts: Vec<(usize, i64)> = last.into_iter().map(|(n, i)| (i, n)).collect();
            lasts.sort_unstable();
            lasts.into_iter().map(|(_, n)| n).collect()
        };
        disorder += order.windows(2).filter(|w| w[1] < w[0]).count() as u64;
    }
    let ok = missing == 0 && disorder == 0 && (guarantee != "exactly-once" || duplicates == 0);
    println!(
        "{}",
        json!({
            "records": records, "missing": missing, "duplicates": duplicates,
            "disorder": disorder, "ok": ok,
        })
    );
    Ok(ok)
}

/// One proxy per node; the control file's fault applies to one of them, the others pass.
fn run_proxies(listen: &[u16], upstream: &[u16], control: &Path) -> anyhow::Result<bool> {
    anyhow::ensure!(
        listen.len() == upstream.len(),
        "one upstream per listen port"
    );
    let proxies = listen
        .iter()
        .zip(upstream)
        .map(|(l, u)| {
            Ok(proxy::Proxy::start(
                std::net::TcpListener::bind(("127.0.0.1", *l))?,
                *u,
            ))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut current = String::new();
    let mut flap_at = Instant::now();
    let mut flap_down = false;
    loop {
        let want = std::fs::read_to_string(control).unwrap_or_default();
        let want = want.trim().to_string();
        let words: Vec<&str> = want.split_whitespace().collect();
        let node = words.first().and_then(|n| n.parse::<usize>().ok());
        let mode = words.get(1).copied().unwrap_or("pass");
        let ms = words
            .get(2)
            .and_then(|m| m.parse::<u64>().ok())
            .unwrap_or(1000);
        if want != current {
            for p in &proxies {
                p.resume();
                p.latency(Duration::ZERO);
            }
            if let Some(p) = node.and_then(|n| proxies.get(n.wrapping_sub(1))) {
                match mode {
                    "hold" => p.hold(),
                    "hold_requests" => p.hold_requests(),
                    "latency" => p.latency(Duration::from_millis(ms)),
                    _ => {}
                }
            }
            eprintln!("proxy: {want:?}");
            current = want.clone();
            flap_down = false;
            flap_at = Instant::now();
        }
        if mode == "flap" && flap_at.elapsed() >= Duration::from_millis(ms / 2) {
            if let Some(p) = node.and_then(|n| proxies.get(n.wrapping_sub(1))) {
                flap_down = !flap_down;
                if flap_down {
                    p.hold();
                    p.cut();
                } else {
                    p.resume();
                }
            }
            flap_at = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
