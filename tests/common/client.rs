//! rdkafka helpers against a bootstrap string: topics (create, wait, delete, count), produce,
//! read everything back, and consumer-group offsets (commit, committed). All blocking.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewPartitions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{DeliveryResult, Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, ProducerContext};
use rdkafka::{ClientContext, Offset, TopicPartitionList};

use super::records::{Got, Rec};

/// Default bound for every helper that talks to a broker.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

fn client_config(bootstrap: &str, overrides: &[(&str, &str)]) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap);
    c.set("socket.timeout.ms", "10000");
    c.set("log_level", "3"); // errors only: tests run many clients
    for (k, v) in overrides {
        c.set(*k, *v);
    }
    c
}

/// Minimal executor for rdkafka's admin futures (driven by the admin client's own thread), so the
/// helpers work from plain tests and from inside a tokio runtime alike.
fn block_on<F: Future>(fut: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park_timeout(Duration::from_millis(100));
    }
}

fn admin(bootstrap: &str) -> AdminClient<DefaultClientContext> {
    client_config(bootstrap, &[])
        .create()
        .unwrap_or_else(|e| panic!("admin client for {bootstrap}: {e}"))
}

/// As long as the other waits here: a freshly started broker on a loaded machine (CI runs the
/// multi-node tests beside the others) has taken over 10 s to answer CreateTopics.
fn admin_opts() -> AdminOptions {
    AdminOptions::new()
        .request_timeout(Some(DEFAULT_TIMEOUT))
        .operation_timeout(Some(DEFAULT_TIMEOUT))
}

/// Create `topic` with `partitions` partitions (replication 1) and wait until metadata shows every
/// partition with a leader. Panics on any error (including "already exists").
pub fn create_topic(bootstrap: &str, topic: &str, partitions: i32) {
    create_topic_with(bootstrap, topic, partitions, &[]);
}

/// [`create_topic`] with topic configs, e.g. `&[("cleanup.policy", "compact")]`.
pub fn create_topic_with(bootstrap: &str, topic: &str, partitions: i32, configs: &[(&str, &str)]) {
    let admin = admin(bootstrap);
    let mut nt = NewTopic::new(topic, partitions, TopicReplication::Fixed(1));
    for (k, v) in configs {
        nt = nt.set(k, v);
    }
    let res = block_on(admin.create_topics([&nt], &admin_opts()))
        .unwrap_or_else(|e| panic!("create_topics {topic} on {bootstrap}: {e}"));
    for r in res {
        if let Err((t, code)) = r {
            panic!("create topic {t} on {bootstrap}: {code:?}");
        }
    }
    wait_for_topic(bootstrap, topic, partitions);
}

/// Wait (bounded) until metadata lists `topic` with `partitions` partitions, each with a leader.
pub fn wait_for_topic(bootstrap: &str, topic: &str, partitions: i32) {
    let c = consumer(bootstrap, &[]);
    let deadline = Instant::now() + DEFAULT_TIMEOUT;
    let mut last: String;
    loop {
        match c.fetch_metadata(Some(topic), Duration::from_secs(5)) {
            Ok(md) => {
                if let Some(t) = md.topics().iter().find(|t| t.name() == topic) {
                    let ok = t.error().is_none()
                        && t.partitions().len() == partitions as usize
                        && t.partitions()
                            .iter()
                            .all(|p| p.leader() >= 0 && p.error().is_none());
                    if ok {
                        return;
                    }
                    last = format!(
                        "error {:?}, {} partitions, leaders {:?}",
                        t.error(),
                        t.partitions().len(),
                        t.partitions()
                            .iter()
                            .map(|p| p.leader())
                            .collect::<Vec<_>>()
                    );
                } else {
                    last = "topic not in metadata".into();
                }
            }
            Err(e) => last = e.to_string(),
        }
        if Instant::now() > deadline {
            panic!("topic {topic} on {bootstrap} not ready with {partitions} partitions: {last}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Grow `topic` to `partitions` partitions (CreatePartitions) and wait until metadata shows
/// them all. Panics on error.
pub fn add_partitions(bootstrap: &str, topic: &str, partitions: i32) {
    let admin = admin(bootstrap);
    let new = NewPartitions::new(topic, partitions as usize);
    let res = block_on(admin.create_partitions([&new], &admin_opts()))
        .unwrap_or_else(|e| panic!("create_partitions {topic} on {bootstrap}: {e}"));
    for r in res {
        if let Err((t, code)) = r {
            panic!("add partitions to {t} on {bootstrap}: {code:?}");
        }
    }
    wait_for_topic(bootstrap, topic, partitions);
}

/// Delete the records of `topic[partition]` below `before` (DeleteRecords: the log start moves,
/// as retention moves it). Panics on error.
pub fn delete_records(bootstrap: &str, topic: &str, partition: i32, before: i64) {
    let admin = admin(bootstrap);
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, partition, Offset::Offset(before))
        .expect("tpl add");
    let res = block_on(admin.delete_records(&tpl, &admin_opts()))
        .unwrap_or_else(|e| panic!("delete_records {topic}[{partition}] on {bootstrap}: {e}"));
    for e in res.elements() {
        if let Err(err) = e.error() {
            panic!("delete_records {topic}[{partition}] on {bootstrap}: {err}");
        }
    }
}

/// The cluster id the broker reports (what the origin header names a cluster by).
pub fn cluster_id(bootstrap: &str) -> String {
    consumer(bootstrap, &[])
        .client()
        .fetch_cluster_id(Duration::from_secs(10))
        .unwrap_or_else(|| panic!("{bootstrap} reports no cluster id"))
}

/// Delete `topic`. Panics on error.
pub fn delete_topic(bootstrap: &str, topic: &str) {
    let admin = admin(bootstrap);
    let res = block_on(admin.delete_topics(&[topic], &admin_opts()))
        .unwrap_or_else(|e| panic!("delete_topics {topic} on {bootstrap}: {e}"));
    for r in res {
        if let Err((t, code)) = r {
            panic!("delete topic {t} on {bootstrap}: {code:?}");
        }
    }
}

/// The configs the broker reports for `topic` (DescribeConfigs), key → value.
pub fn topic_configs(bootstrap: &str, topic: &str) -> std::collections::BTreeMap<String, String> {
    describe_topic(bootstrap, topic, |_| true)
}

/// The configs set on `topic` itself (DYNAMIC_TOPIC_CONFIG), key → value: what Apache Kafka
/// says the topic overrides, as opposed to its broker's defaults.
pub fn topic_overrides(bootstrap: &str, topic: &str) -> std::collections::BTreeMap<String, String> {
    describe_topic(bootstrap, topic, |e| {
        e.source == rdkafka::admin::ConfigSource::DynamicTopic
    })
}

fn describe_topic(
    bootstrap: &str,
    topic: &str,
    keep: impl Fn(&rdkafka::admin::ConfigEntry) -> bool,
) -> std::collections::BTreeMap<String, String> {
    use rdkafka::admin::ResourceSpecifier;
    let admin = admin(bootstrap);
    let res = block_on(admin.describe_configs([&ResourceSpecifier::Topic(topic)], &admin_opts()))
        .unwrap_or_else(|e| panic!("describe_configs {topic} on {bootstrap}: {e}"));
    let resource = res
        .into_iter()
        .next()
        .expect("one answer")
        .unwrap_or_else(|e| panic!("describe_configs {topic} on {bootstrap}: {e:?}"));
    resource
        .entries
        .into_iter()
        .filter(|e| keep(e))
        .filter_map(|e| Some((e.name, e.value?)))
        .collect()
}

/// Partition count of `topic` from metadata (panics if the topic is unknown).
pub fn partition_count(bootstrap: &str, topic: &str) -> i32 {
    let c = consumer(bootstrap, &[]);
    let md = c
        .fetch_metadata(Some(topic), DEFAULT_TIMEOUT)
        .unwrap_or_else(|e| panic!("metadata for {topic} on {bootstrap}: {e}"));
    let t = md
        .topics()
        .iter()
        .find(|t| t.name() == topic)
        .unwrap_or_else(|| panic!("topic {topic} not in metadata of {bootstrap}"));
    if let Some(e) = t.error() {
        panic!("topic {topic} on {bootstrap}: {e:?}");
    }
    t.partitions().len() as i32
}

/// Per record: None until its delivery report, then Ok((partition, offset)) or Err(reason).
type Delivery = Option<Result<(i32, i64), String>>;

struct DeliveryCtx {
    results: Mutex<Vec<Delivery>>,
}
impl ClientContext for DeliveryCtx {}
impl ProducerContext for DeliveryCtx {
    type DeliveryOpaque = Box<usize>;
    fn delivery(&self, r: &DeliveryResult<'_>, idx: Box<usize>) {
        let v = match r {
            Ok(m) => Ok((m.partition(), m.offset())),
            Err((e, _)) => Err(e.to_string()),
        };
        self.results.lock().unwrap()[*idx] = Some(v);
    }
}

/// Produce `records` in order (acks=all, one request in flight) and check every delivery. Returns
/// (partition, offset) per record. Panics on any failure.
pub fn produce(bootstrap: &str, topic: &str, records: &[Rec]) -> Vec<(i32, i64)> {
    produce_with(bootstrap, topic, records, &[], DEFAULT_TIMEOUT)
        .unwrap_or_else(|e| panic!("produce to {topic} on {bootstrap}: {e}"))
}

/// Another writer's transaction, left open on `topic`[`partition`] with one record in it:
/// read_committed readers see nothing past that record until the transaction ends (abort or
/// commit it through the producer returned).
pub fn open_transaction(bootstrap: &str, topic: &str, partition: i32) -> BaseProducer {
    let p: BaseProducer = client_config(
        bootstrap,
        &[
            ("transactional.id", &super::unique("other-writer")),
            ("transaction.timeout.ms", "300000"),
        ],
    )
    .create()
    .expect("transactional producer");
    p.init_transactions(DEFAULT_TIMEOUT)
        .expect("init_transactions");
    p.begin_transaction().expect("begin_transaction");
    p.send(
        BaseRecord::to(topic)
            .partition(partition)
            .key("other")
            .payload("open"),
    )
    .expect("send");
    p.flush(DEFAULT_TIMEOUT).expect("flush");
    p
}

/// `topic`[`partition`]'s last stable offset (where read_committed readers stop: the first
/// record of an open transaction) and high watermark, from ListOffsets.
pub fn stable_and_high(bootstrap: &str, topic: &str, partition: i32) -> (i64, i64) {
    let end = |isolation: &str| {
        let c = consumer(bootstrap, &[("isolation.level", isolation)]);
        c.fetch_watermarks(topic, partition, DEFAULT_TIMEOUT)
            .unwrap_or_else(|e| panic!("watermarks of {topic}[{partition}] on {bootstrap}: {e}"))
            .1
    };
    (end("read_committed"), end("read_uncommitted"))
}

/// [`produce`] with extra producer config (e.g. `message.timeout.ms`) that reports failure as Err
/// (the first failed delivery, or a timeout waiting for deliveries) instead of panicking.
pub fn produce_with(
    bootstrap: &str,
    topic: &str,
    records: &[Rec],
    overrides: &[(&str, &str)],
    timeout: Duration,
) -> Result<Vec<(i32, i64)>, String> {
    // Not idempotent: tansu makes InitProducerId cost ~0.5 s per producer. One request in flight
    // keeps the order of `records` within a partition.
    let mut cfg = client_config(
        bootstrap,
        &[
            ("enable.idempotence", "false"),
            ("acks", "all"),
            ("max.in.flight.requests.per.connection", "1"),
            ("linger.ms", "5"),
        ],
    );
    for (k, v) in overrides {
        cfg.set(*k, *v);
    }
    let ctx = DeliveryCtx {
        results: Mutex::new(vec![None; records.len()]),
    };
    let producer: BaseProducer<DeliveryCtx> = cfg
        .create_with_context(ctx)
        .map_err(|e| format!("create producer: {e}"))?;
    for (i, r) in records.iter().enumerate() {
        let mut headers = OwnedHeaders::new_with_capacity(r.headers.len());
        for (k, v) in &r.headers {
            headers = headers.insert(Header {
                key: k,
                value: v.as_deref(),
            });
        }
        let mut rec: BaseRecord<'_, [u8], [u8], Box<usize>> =
            BaseRecord::with_opaque_to(topic, Box::new(i)).headers(headers);
        if r.partition >= 0 {
            rec = rec.partition(r.partition);
        }
        if let Some(k) = &r.key {
            rec = rec.key(k.as_slice());
        }
        if let Some(v) = &r.value {
            rec = rec.payload(v.as_slice());
        }
        if let Some(ts) = r.timestamp {
            rec = rec.timestamp(ts);
        }
        loop {
            match producer.send(rec) {
                Ok(()) => break,
                Err((
                    KafkaError::MessageProduction(rdkafka::types::RDKafkaErrorCode::QueueFull),
                    back,
                )) => {
                    rec = back;
                    producer.poll(Duration::from_millis(50));
                }
                Err((e, _)) => return Err(format!("enqueue record {i}: {e}")),
            }
        }
        producer.poll(Duration::ZERO);
    }
    // flush() polls and so runs every delivery callback; a timeout means some never completed.
    let flushed = producer.flush(timeout);
    let results = std::mem::take(&mut *producer.context().results.lock().unwrap());
    drop(producer);
    let mut out = Vec::with_capacity(records.len());
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Some(Ok(po)) => out.push(po),
            Some(Err(e)) => return Err(format!("record {i}: delivery failed: {e}")),
            None => {
                return Err(format!(
                    "record {i}: no delivery report within {timeout:?} (flush: {flushed:?})"
                ))
            }
        }
    }
    Ok(out)
}

fn consumer(bootstrap: &str, overrides: &[(&str, &str)]) -> BaseConsumer {
    client_config(bootstrap, overrides)
        .create()
        .unwrap_or_else(|e| panic!("consumer for {bootstrap}: {e}"))
}

/// Every record of every partition of `topic`, from the beginning to the end seen by partition-EOF
/// (read_committed), sorted by (partition, offset). No consumer group is used.
pub fn read_all(bootstrap: &str, topic: &str) -> Vec<Got> {
    read_all_with(bootstrap, topic, &[], DEFAULT_TIMEOUT)
}

/// [`read_all`] with extra consumer config (e.g. `("isolation.level", "read_uncommitted")`).
pub fn read_all_with(
    bootstrap: &str,
    topic: &str,
    overrides: &[(&str, &str)],
    timeout: Duration,
) -> Vec<Got> {
    let parts = partition_count(bootstrap, topic);
    // librdkafka's assign() needs a group.id; assign() never joins the group, and nothing commits.
    let group = format!("kreplicate-test-read-all-{}", std::process::id());
    let mut cfg: Vec<(&str, &str)> = vec![
        ("group.id", &group),
        ("enable.partition.eof", "true"),
        // tansu holds an empty Fetch for the full wait: keep it short, reads end sooner.
        ("fetch.wait.max.ms", "100"),
        ("enable.auto.commit", "false"),
        ("enable.auto.offset.store", "false"),
        ("auto.offset.reset", "earliest"),
        ("isolation.level", "read_committed"),
    ];
    cfg.extend_from_slice(overrides);
    let c = consumer(bootstrap, &cfg);
    let mut tpl = TopicPartitionList::new();
    for p in 0..parts {
        tpl.add_partition_offset(topic, p, Offset::Beginning)
            .expect("tpl add");
    }
    c.assign(&tpl)
        .unwrap_or_else(|e| panic!("assign {topic} on {bootstrap}: {e}"));
    drop(tpl);
    let mut eof = vec![false; parts as usize];
    let mut out = Vec::new();
    let deadline = Instant::now() + timeout;
    while eof.iter().any(|e| !e) {
        if Instant::now() > deadline {
            panic!(
                "read_all {topic} on {bootstrap}: no partition EOF within {timeout:?} for partitions {:?} ({} records so far)",
                eof.iter().enumerate().filter(|(_, e)| !**e).map(|(p, _)| p).collect::<Vec<_>>(),
                out.len()
            );
        }
        match c.poll(Duration::from_millis(200)) {
            None => {}
            Some(Err(KafkaError::PartitionEOF(p))) => eof[p as usize] = true,
            Some(Err(e)) => panic!("read_all {topic} on {bootstrap}: {e}"),
            Some(Ok(m)) => {
                let headers = m
                    .headers()
                    .map(|h| {
                        h.iter()
                            .map(|h| (h.key.to_string(), h.value.map(|v| v.to_vec())))
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(Got {
                    topic: m.topic().to_string(),
                    partition: m.partition(),
                    offset: m.offset(),
                    key: m.key().map(|k| k.to_vec()),
                    value: m.payload().map(|v| v.to_vec()),
                    headers,
                    timestamp: m.timestamp().to_millis(),
                });
            }
        }
    }
    out.sort_by_key(|g| (g.partition, g.offset));
    out
}

/// Commit `offsets` ((partition, next offset to read)) of `topic` for consumer group `group`,
/// as a standalone (non-member) consumer would; simulates earlier progress of a group.
/// `f` again while a new cluster's group coordinator is still loading (NOT_COORDINATOR and
/// the like), up to [`DEFAULT_TIMEOUT`].
fn while_coordinator_loads<T>(f: impl Fn() -> Result<T, KafkaError>) -> Result<T, KafkaError> {
    let deadline = Instant::now() + DEFAULT_TIMEOUT;
    loop {
        match f() {
            Err(e)
                if Instant::now() < deadline
                    && matches!(
                        e.rdkafka_error_code(),
                        Some(
                            RDKafkaErrorCode::NotCoordinator
                                | RDKafkaErrorCode::CoordinatorNotAvailable
                                | RDKafkaErrorCode::CoordinatorLoadInProgress
                        )
                    ) =>
            {
                std::thread::sleep(Duration::from_millis(100))
            }
            done => return done,
        }
    }
}

pub fn commit(bootstrap: &str, group: &str, topic: &str, offsets: &[(i32, i64)]) {
    let c = consumer(
        bootstrap,
        &[
            ("group.id", group),
            ("enable.auto.commit", "false"),
            ("session.timeout.ms", "2000"),
            ("heartbeat.interval.ms", "500"),
        ],
    );
    let mut tpl = TopicPartitionList::new();
    for (p, o) in offsets {
        tpl.add_partition_offset(topic, *p, Offset::Offset(*o))
            .expect("tpl add");
    }
    // A commit from outside the group is refused (UnknownMemberId) while the group still has
    // members: a killed copier's member lives until its session times out.
    let deadline = Instant::now() + DEFAULT_TIMEOUT;
    let members = || {
        let list = while_coordinator_loads(|| c.fetch_group_list(Some(group), DEFAULT_TIMEOUT));
        list.map_or(0, |l| l.groups().iter().map(|g| g.members().len()).sum())
    };
    while members() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    while_coordinator_loads(|| c.commit(&tpl, rdkafka::consumer::CommitMode::Sync)).unwrap_or_else(
        |e| panic!("commit {offsets:?} of {topic} for {group} on {bootstrap}: {e}"),
    );
    drop(tpl);
    drop(c);
}

/// Committed offsets of consumer group `group` for partitions `0..partitions` of `topic`, in
/// partition order; -1 where the group has no committed offset.
pub fn committed(bootstrap: &str, group: &str, topic: &str, partitions: i32) -> Vec<i64> {
    let c = consumer(
        bootstrap,
        &[
            ("group.id", group),
            ("enable.auto.commit", "false"),
            ("session.timeout.ms", "2000"),
            ("heartbeat.interval.ms", "500"),
        ],
    );
    let mut req = TopicPartitionList::new();
    for p in 0..partitions {
        req.add_partition(topic, p);
    }
    let got = while_coordinator_loads(|| c.committed_offsets(req.clone(), Duration::from_secs(15)))
        .unwrap_or_else(|e| panic!("committed offsets of {group} on {bootstrap}: {e}"));
    let mut out = Vec::with_capacity(partitions as usize);
    for p in 0..partitions {
        let off = match got.find_partition(topic, p).map(|e| e.offset()) {
            Some(Offset::Offset(n)) => n,
            _ => -1,
        };
        out.push(off);
    }
    // docs/brokers.md: dropping the consumer while a list from committed() is alive hangs forever.
    drop(got);
    drop(c);
    out
}

/// Each partition's end of `topic` as a reader with `isolation` sees it: the high watermark
/// (`read_uncommitted`) or the last stable offset (`read_committed`).
pub fn ends(bootstrap: &str, topic: &str, partitions: i32, isolation: &str) -> Vec<i64> {
    let c = consumer(bootstrap, &[("isolation.level", isolation)]);
    let deadline = Instant::now() + DEFAULT_TIMEOUT;
    (0..partitions)
        .map(|p| loop {
            // A broker may answer NotLeaderForPartition for a moment after its metadata named
            // it leader (a topic just created, a leader just moved): wait for it to serve. A
            // fresh client's first metadata may not list the partition yet (UnknownPartition,
            // librdkafka's own: seen once on a loaded CI machine after a run was killed).
            match c.fetch_watermarks(topic, p, DEFAULT_TIMEOUT) {
                Ok((_, end)) => break end,
                Err(KafkaError::MetadataFetch(
                    RDKafkaErrorCode::NotLeaderForPartition
                    | RDKafkaErrorCode::LeaderNotAvailable
                    | RDKafkaErrorCode::UnknownPartition,
                )) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
                Err(e) => panic!("watermarks of {topic}[{p}] on {bootstrap}: {e}"),
            }
        })
        .collect()
}

/// Issue 41, item 9: no transaction is left open on `bootstrap` after an exactly-once run that
/// exited: each partition of `topic` and of the positions index has its last stable offset at
/// its high watermark. Returns what it compared, for the test's evidence.
#[track_caller]
pub fn assert_no_open_transaction(bootstrap: &str, topic: &str) -> String {
    const INDEX: &str = "__kreplicate.index";
    let mut said = Vec::new();
    let present = super::kr::topics(bootstrap);
    for t in [topic, INDEX] {
        if !present.iter().any(|p| p == t) {
            continue;
        }
        let n = partition_count(bootstrap, t);
        let (stable, high) = (
            ends(bootstrap, t, n, "read_committed"),
            ends(bootstrap, t, n, "read_uncommitted"),
        );
        assert_eq!(
            stable, high,
            "{t} on {bootstrap}: a transaction left open (last stable offsets, then high watermarks)"
        );
        said.push(format!("{t}: {} partitions closed", n));
    }
    said.join(", ")
}
