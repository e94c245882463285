//! `kreplicate demo`: a real run between two in-process mock clusters, with a fault on the
//! target mid-run, checked record by record afterwards.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};
use rdkafka::{Offset, TopicPartitionList};

use crate::cli::DemoArgs;
use crate::engine::Replicator;
use crate::error::{Error, Result};
use crate::mock::MockKafka;
use crate::options::{
    ClusterSpec, GapPolicy, Guarantee, RunOptions, StartPosition, TopicSelection,
};
use crate::report::{Counters, Summary};

const TOPIC: &str = "demo.orders";
const PARTITIONS: i32 = 3;
const GROUP: &str = "kreplicate-demo";

/// One record as written or read, every field that a faithful copy must keep.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    pub partition: i32,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    pub timestamp: Option<i64>,
}

/// Sample records with every shape that matters: null keys, tombstones, empty values,
/// repeated and null-valued headers.
pub fn sample_records(n: usize) -> Vec<Record> {
    let base_ts = 1_700_000_000_000i64;
    (0..n)
        .map(|i| {
            let mut headers = vec![("seq".to_string(), Some(i.to_string().into_bytes()))];
            if i % 5 == 0 {
                headers.push(("trace".to_string(), None));
                headers.push(("seq".to_string(), Some(b"repeated".to_vec())));
            }
            Record {
                partition: (i % PARTITIONS as usize) as i32,
                key: (i % 10 != 0).then(|| format!("customer-{}", i % 97).into_bytes()),
                value: match i {
                    _ if i % 7 == 0 => None,
                    _ if i % 11 == 0 => Some(Vec::new()),
                    _ => {
                        Some(format!("{{\"order\":{i},\"amount\":{}}}", i * 3 % 1000).into_bytes())
                    }
                },
                headers,
                timestamp: Some(base_ts + i as i64),
            }
        })
        .collect()
}

struct CountFailures(AtomicUsize);

impl ClientContext for CountFailures {}

impl ProducerContext for CountFailures {
    type DeliveryOpaque = ();
    fn delivery(&self, r: &DeliveryResult<'_>, _: ()) {
        if r.is_err() {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Writes records with an idempotent producer and checks every delivery.
pub fn produce(bootstrap: &str, topic: &str, records: &[Record]) -> Result<()> {
    let producer: BaseProducer<CountFailures> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .create_with_context(CountFailures(AtomicUsize::new(0)))
        .map_err(|e| Error::failed(format!("producer: {e}")))?;
    for r in records {
        let mut rec: BaseRecord<'_, [u8], [u8], ()> = BaseRecord::to(topic).partition(r.partition);
        if let Some(k) = &r.key {
            rec = rec.key(k.as_slice());
        }
        if let Some(v) = &r.value {
            rec = rec.payload(v.as_slice());
        }
        if let Some(ts) = r.timestamp {
            rec = rec.timestamp(ts);
        }
        if !r.headers.is_empty() {
            let mut h = OwnedHeaders::new_with_capacity(r.headers.len());
            for (k, v) in &r.headers {
                h = h.insert(Header {
                    key: k,
                    value: v.as_deref(),
                });
            }
            rec = rec.headers(h);
        }
        let mut rec = rec;
        loop {
            match producer.send(rec) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(_), back)) => {
                    rec = back;
                    producer.poll(Duration::from_millis(20));
                }
                Err((e, _)) => return Err(Error::failed(format!("produce to {topic}: {e}"))),
            }
        }
        producer.poll(Duration::ZERO);
    }
    producer
        .flush(Duration::from_secs(30))
        .map_err(|e| Error::failed(format!("flush to {topic}: {e}")))?;
    match producer.context().0.load(Ordering::Relaxed) {
        0 => Ok(()),
        n => Err(Error::failed(format!(
            "{n} records to {topic} were not delivered"
        ))),
    }
}

/// Reads every partition of a topic from the beginning to its end (partition EOF), in
/// offset order per partition.
pub fn read_all(bootstrap: &str, topic: &str, partitions: i32) -> Result<Vec<Record>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "kreplicate-demo-reader")
        .set("enable.partition.eof", "true")
        .set("enable.auto.commit", "false")
        .create()
        .map_err(|e| Error::failed(format!("consumer: {e}")))?;
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .map_err(|e| Error::failed(e.to_string()))?;
    }
    consumer
        .assign(&tpl)
        .map_err(|e| Error::failed(e.to_string()))?;
    let mut out = Vec::new();
    let mut at_end = vec![false; partitions as usize];
    let deadline = Instant::now() + Duration::from_secs(30);
    while at_end.iter().any(|e| !e) {
        if Instant::now() > deadline {
            return Err(Error::failed(format!("reading {topic} timed out")));
        }
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                at_end[m.partition() as usize] = false;
                out.push(Record {
                    partition: m.partition(),
                    key: m.key().map(<[u8]>::to_vec),
                    value: m.payload().map(<[u8]>::to_vec),
                    headers: m
                        .headers()
                        .map(|h| {
                            h.iter()
                                .map(|x| (x.key.to_string(), x.value.map(<[u8]>::to_vec)))
                                .collect()
                        })
                        .unwrap_or_default(),
                    timestamp: m.timestamp().to_millis(),
                })
            }
            Some(Err(KafkaError::PartitionEOF(p))) => {
                if let Some(e) = at_end.get_mut(p as usize) {
                    *e = true;
                }
            }
            Some(Err(e)) => return Err(Error::failed(format!("reading {topic}: {e}"))),
            None => {}
        }
    }
    Ok(out)
}

/// The first copy of each record, in order, and how many repeats were dropped.
fn first_occurrences<'a>(got: &[&'a Record]) -> (Vec<&'a Record>, usize) {
    let mut seen = std::collections::HashSet::new();
    let firsts: Vec<&Record> = got.iter().copied().filter(|r| seen.insert(*r)).collect();
    let dups = got.len() - firsts.len();
    (firsts, dups)
}

/// The committed positions of a group, one per partition (`None` where nothing is committed).
pub fn committed(
    bootstrap: &str,
    group: &str,
    topic: &str,
    partitions: i32,
) -> Result<Vec<Option<i64>>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .create()
        .map_err(|e| Error::failed(format!("consumer: {e}")))?;
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition(topic, p);
    }
    let got = consumer
        .committed_offsets(tpl, Duration::from_secs(10))
        .map_err(|e| Error::failed(format!("committed offsets of {group}: {e}")))?;
    let out = got
        .elements()
        .iter()
        .map(|e| match e.offset() {
            Offset::Offset(n) => Some(n),
            _ => None,
        })
        .collect();
    // Drop the list before the consumer (a librdkafka hang otherwise: docs/brokers.md).
    drop(got);
    Ok(out)
}

/// Runs the demo; returns the replication summary and whether the check passed.
pub fn run(args: &DemoArgs) -> Result<(Summary, bool)> {
    let a = MockKafka::start(1)?;
    let b = MockKafka::start(1)?;
    let (a_boot, b_boot) = (a.bootstrap()?, b.bootstrap()?);
    eprintln!("kreplicate demo: cluster A (mock) at {a_boot}, cluster B (mock) at {b_boot}");
    a.create_topic(TOPIC, PARTITIONS)?;
    b.create_topic(TOPIC, PARTITIONS)?;
    let records = write_sample(&a_boot, args.records)?;
    let summary = copy_with_fault(
        &options(args.guarantee, &a_boot, &b_boot),
        &b,
        records.len(),
    )?;
    let ok = check(&records, &summary, &a_boot, &b_boot, args.guarantee)?;
    Ok((summary, ok))
}

/// Writes `n` sample records to A and says what they hold.
fn write_sample(a_boot: &str, n: usize) -> Result<Vec<Record>> {
    let records = sample_records(n);
    produce(a_boot, TOPIC, &records)?;
    let tombstones = records.iter().filter(|r| r.value.is_none()).count();
    let empty = records
        .iter()
        .filter(|r| r.value.as_deref() == Some(&[]))
        .count();
    eprintln!(
        "  wrote {} records to A/{TOPIC} ({PARTITIONS} partitions): keys, headers, timestamps, {tombstones} tombstones, {empty} empty values",
        records.len()
    );
    Ok(records)
}

/// The copy run's options: A to B, the demo topic, until caught up.
fn options(guarantee: Guarantee, a_boot: &str, b_boot: &str) -> RunOptions {
    RunOptions {
        from: ClusterSpec {
            name: "A".into(),
            bootstrap: a_boot.to_string(),
            properties: vec![],
            id: None,
        },
        to: ClusterSpec {
            name: "B".into(),
            bootstrap: b_boot.to_string(),
            // Small batches so the copy is still under way when the fault hits.
            properties: vec![("batch.num.messages".into(), "100".into())],
            id: None,
        },
        topics: TopicSelection::List(vec![TOPIC.into()]),
        exclude: None,
        guarantee,
        rename: "{topic}".into(),
        group: GROUP.into(),
        group_is_default: false,
        trust_group_positions: false,
        until_caught_up: true,
        refresh_topics: None,
        start: StartPosition::Earliest,
        on_gap: GapPolicy::Fail,
        delivery_timeout: Duration::from_secs(30),
        timeout: Duration::from_secs(10),
        commit_interval: Duration::from_millis(200),
        join_timeout: Duration::from_secs(30),
        create_topics: false,
        replication_factor: None,
        config_exclude: Vec::new(),
        sync_configs: false,
        sync_acls: false,
        sync_group_acls: None,
        max_bytes_per_sec: None,
        max_records_per_sec: None,
        shard: None,
        origin_header: true,
        sync_groups: None,
        sync_groups_interval: Duration::from_secs(30),
        flow: None,
        txn_max_records: 500,
        txn_max_bytes: 1 << 20,
        txn_max_time: Duration::from_millis(500),
        metrics: Default::default(),
    }
}

/// Copies A to B while B fails mid-run: after a tenth of the records, B's broker goes down
/// for a second, then rejects five Produce requests.
fn copy_with_fault(opts: &RunOptions, b: &MockKafka, total: usize) -> Result<Summary> {
    let progress = Arc::new(Counters::default());
    let replicator = Replicator::prepare(opts, progress.clone())?;
    let mock_b = b.cluster()?;
    mock_b
        .broker_round_trip_time(1, Duration::from_millis(20))
        .map_err(|e| Error::failed(format!("mock: {e}")))?;
    eprintln!(
        "  copying A → B with --guarantee {} --until-caught-up (batches of 100; B answers every request after 20 ms)",
        opts.guarantee.as_str()
    );

    let stop = AtomicBool::new(false);
    let fault_at = (total / 10).max(1) as u64;
    let summary = std::thread::scope(|s| -> Result<Summary> {
        let run = s.spawn(|| replicator.run(&stop));
        let mut injected = false;
        while !run.is_finished() {
            if !injected && progress.records.load(Ordering::Relaxed) >= fault_at {
                injected = true;
                mock_b.request_errors(
                    RDKafkaApiKey::Produce,
                    &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS; 5],
                );
                let _ = mock_b.broker_down(1);
                eprintln!(
                    "  fault: after {} of {total} records were acknowledged, B's broker goes down for 1 s, then rejects 5 Produce requests (NOT_ENOUGH_REPLICAS)",
                    progress.records.load(Ordering::Relaxed),
                );
                std::thread::sleep(Duration::from_secs(1));
                let _ = mock_b.broker_up(1);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        run.join()
            .map_err(|_| Error::failed("the replication thread panicked"))
    })?;
    eprintln!(
        "  done: {} records, {:.1} KB in {:.1} s{}",
        summary.records,
        summary.bytes as f64 / 1024.0,
        summary.seconds,
        summary
            .error
            .as_ref()
            .map(|e| format!("; FAILED: {e}"))
            .unwrap_or_default()
    );
    Ok(summary)
}

/// Reads B back and checks each partition against what was written and the group's
/// committed positions on A: whether the copy is what the guarantee promises.
fn check(
    records: &[Record],
    summary: &Summary,
    a_boot: &str,
    b_boot: &str,
    guarantee: Guarantee,
) -> Result<bool> {
    let mut copied = read_all(b_boot, TOPIC, PARTITIONS)?;
    // Every copied record carries an origin header.
    for r in &mut copied {
        r.headers.retain(|(k, _)| !k.starts_with("kreplicate."));
    }
    let positions = committed(a_boot, GROUP, TOPIC, PARTITIONS)?;
    let mut ok = summary.error.is_none();
    for p in 0..PARTITIONS {
        let position = positions.get(p as usize).copied().flatten();
        ok &= check_partition(p, records, &copied, position, guarantee);
    }
    eprintln!(
        "{}",
        if ok {
            "  every record arrived: keys, values (null vs empty), headers and timestamps intact"
        } else {
            "  CHECK FAILED: the copy on B is not what the guarantee promises"
        }
    );
    Ok(ok)
}

/// One partition's check, printed: its first copies are the records written, in order;
/// the committed position is its end (unless `none`); no duplicates with exactly-once.
fn check_partition(
    p: i32,
    records: &[Record],
    copied: &[Record],
    pos: Option<i64>,
    guarantee: Guarantee,
) -> bool {
    let want: Vec<&Record> = records.iter().filter(|r| r.partition == p).collect();
    let got: Vec<&Record> = copied.iter().filter(|r| r.partition == p).collect();
    let (first_copies, duplicates) = first_occurrences(&got);
    let exact = first_copies == want;
    eprintln!(
        "  check {TOPIC}[{p}]: {} of {} records on B, {}{}; committed source position {}",
        first_copies.len().min(want.len()),
        want.len(),
        if exact {
            "identical and in order"
        } else {
            "NOT AN EXACT COPY"
        },
        if duplicates > 0 {
            format!(" (+{duplicates} duplicates of a batch retried after the outage: the mock broker, unlike Kafka, does not drop idempotent retries)")
        } else {
            String::new()
        },
        pos.map_or("none".to_string(), |n| n.to_string())
    );
    // `none` promises nothing about the committed positions.
    exact
        && (guarantee == Guarantee::None || pos == Some(want.len() as i64))
        && (guarantee != Guarantee::ExactlyOnce || duplicates == 0)
}
