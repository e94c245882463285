//! Test fixtures shared by the integration tests (`mod common;` in tests/tests.rs).
//!
//! * [`Tansu`]: one real Kafka-compatible broker process (tansu, memory storage) on a free loopback
//!   port; one `Tansu` is one independent cluster. Install the binary with
//!   `scripts/install-deps.sh`; a missing binary is a panic, never a skipped test.
//! * rdkafka helpers against a bootstrap string: [`create_topic`], [`delete_topic`], [`produce`],
//!   [`read_all`], [`committed`]. They are blocking (no async runtime needed) and may be called
//!   from plain `#[test]`s or from inside `#[tokio::test]`s.
//!
//! tansu quirks the helpers respect (see shared/design/brokers.md): ListOffsets LATEST is wrong, so
//! [`read_all`] finds the end through partition-EOF events; group joins wait
//! `session.timeout.ms / 2`, so group clients here use `session.timeout.ms=2000`.
#![allow(dead_code)]

use std::fs::{self, File};
use std::future::Future;
use std::io::{Read, Seek, SeekFrom};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{DeliveryResult, Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, ProducerContext};
use rdkafka::{ClientContext, Offset, TopicPartitionList};

/// How long a broker may take to accept TCP connections after spawn.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// Default bound for every helper that talks to a broker.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

// ------------------------------------------------------------------------------------------------
// Tansu broker process
// ------------------------------------------------------------------------------------------------

/// A running tansu broker (memory storage). Killed (and reaped) on drop, also when the test panics.
/// If the test process itself dies without unwinding (SIGKILL, abort), a small watchdog `sh`
/// notices its stdin closing and kills the broker, so no broker outlives the test binary.
pub struct Tansu {
    /// `127.0.0.1:PORT`, ready for `bootstrap.servers`.
    pub bootstrap: String,
    pub port: u16,
    pub name: String,
    /// stdout+stderr of the broker.
    pub log_path: PathBuf,
    child: Child,
    watchdog: Option<Child>,
    frozen: bool,
}

/// Path of the tansu binary: `$KREPLICATE_TANSU`, else `<repo>/.cache/tansu/tansu`.
pub fn tansu_path() -> PathBuf {
    match std::env::var_os("KREPLICATE_TANSU") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/tansu/tansu"),
    }
}

/// Folder for broker logs and other test scratch files (Cargo's target tmp dir when known).
pub fn scratch_dir() -> PathBuf {
    let base = option_env!("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join("kreplicate-tests");
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local_addr").port()
}

/// Last `max` bytes of a file, lossily decoded (for panic messages).
pub fn file_tail(path: &Path, max: u64) -> String {
    let Ok(mut f) = File::open(path) else {
        return format!("<no log at {}>", path.display());
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(max)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

fn signal(pid: u32, sig: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Process state letter from /proc/PID/stat ('T' = stopped), None if gone.
fn proc_state(pid: u32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Format: "pid (comm) S ..."; comm may contain spaces/parens, so split after the last ')'.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

enum StartOutcome {
    Ready,
    PortTaken,
}

impl Tansu {
    /// Start a broker whose cluster id and memory store are `name`. Panics (with the log tail) if it
    /// is not accepting connections within 10 s; retries on another port if the chosen one was taken.
    pub fn start(name: &str) -> Tansu {
        let bin = tansu_path();
        if !bin.is_file() {
            panic!(
                "tansu not found at {}; run scripts/install-deps.sh (or set KREPLICATE_TANSU)",
                bin.display()
            );
        }
        let mut last_log = String::new();
        for attempt in 1..=5 {
            let port = free_port();
            let log_path =
                scratch_dir().join(format!("tansu-{name}-{port}-{}.log", std::process::id()));
            let log = File::create(&log_path)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", log_path.display()));
            let url = format!("tcp://127.0.0.1:{port}");
            let child = Command::new(&bin)
                .arg("broker")
                .args(["--listener-url", &url])
                .args(["--advertised-listener-url", &url])
                .args(["--storage-engine", &format!("memory://{name}/")])
                .args(["--cluster-id", name])
                // Its flags all have env fallbacks; make sure none leaks in from the caller.
                .env_remove("CLUSTER_ID")
                .env_remove("LISTENER_URL")
                .env_remove("ADVERTISED_LISTENER_URL")
                .env_remove("STORAGE_ENGINE")
                .env_remove("SCHEMA_REGISTRY")
                .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("clone log handle"))
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
            let watchdog = spawn_watchdog(child.id());
            let mut t = Tansu {
                bootstrap: format!("127.0.0.1:{port}"),
                port,
                name: name.to_string(),
                log_path,
                child,
                watchdog,
                frozen: false,
            };
            match t.wait_ready() {
                StartOutcome::Ready => return t,
                StartOutcome::PortTaken => {
                    last_log = t.log_tail();
                    eprintln!("tansu {name}: port {port} taken (attempt {attempt}), retrying");
                    drop(t);
                }
            }
        }
        panic!("tansu {name}: could not get a free port after 5 attempts; last log:\n{last_log}");
    }

    /// Ready = our process is alive, logged "ready", and the port accepts TCP. A port that accepts
    /// while our process died or logged AddrInUse belongs to someone else: PortTaken.
    fn wait_ready(&mut self) -> StartOutcome {
        let deadline = Instant::now() + START_TIMEOUT;
        let addr: SocketAddr = self.bootstrap.parse().unwrap();
        loop {
            let log = fs::read_to_string(&self.log_path).unwrap_or_default();
            if log.contains("AddrInUse") || log.contains("Address in use") {
                return StartOutcome::PortTaken;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "tansu {} exited early ({status}) on port {}; log {}:\n{}",
                    self.name,
                    self.port,
                    self.log_path.display(),
                    self.log_tail()
                );
            }
            if log.contains("ready in")
                && TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
            {
                return StartOutcome::Ready;
            }
            if Instant::now() > deadline {
                panic!(
                    "tansu {} not accepting connections on {} after {:?}; log {}:\n{}",
                    self.name,
                    self.bootstrap,
                    START_TIMEOUT,
                    self.log_path.display(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Last 4 KiB of the broker's log.
    pub fn log_tail(&self) -> String {
        file_tail(&self.log_path, 4096)
    }

    /// SIGSTOP: the broker hangs with its sockets open (clients time out, data is kept).
    pub fn freeze(&mut self) {
        assert!(
            signal(self.pid(), "STOP"),
            "kill -STOP {} failed",
            self.pid()
        );
        self.frozen = true;
        self.wait_state(|s| s == 'T', "stopped");
    }

    /// SIGCONT: resume a frozen broker.
    pub fn thaw(&mut self) {
        assert!(
            signal(self.pid(), "CONT"),
            "kill -CONT {} failed",
            self.pid()
        );
        self.frozen = false;
        self.wait_state(|s| s != 'T', "running");
    }

    pub fn is_frozen(&self) -> bool {
        self.frozen
    }

    fn wait_state(&self, ok: impl Fn(char) -> bool, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match proc_state(self.pid()) {
                Some(s) if ok(s) => return,
                None => panic!("tansu {} (pid {}) is gone", self.name, self.pid()),
                Some(s) if Instant::now() > deadline => {
                    panic!(
                        "tansu {} (pid {}) not {what}: state {s}",
                        self.name,
                        self.pid()
                    )
                }
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

/// `sh` that kills the broker when its stdin (a pipe whose only writer is this test process)
/// reaches EOF, i.e. when the test process is gone without running Drop.
fn spawn_watchdog(pid: u32) -> Option<Child> {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "read _ignored; kill -CONT {pid} 2>/dev/null; kill -KILL {pid} 2>/dev/null"
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

impl Drop for Tansu {
    fn drop(&mut self) {
        // The watchdog goes first, so it can never signal a recycled pid.
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        let pid = self.pid();
        let _ = signal(pid, "CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------------------------------------------
// Records
// ------------------------------------------------------------------------------------------------

/// A record to produce. `partition < 0` lets the partitioner choose; `timestamp: None` lets the
/// client stamp the current time (CreateTime).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rec {
    pub partition: i32,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    pub timestamp: Option<i64>,
}

impl Rec {
    /// Record with UTF-8 key and value on `partition`, no headers, client timestamp.
    pub fn kv(partition: i32, key: &str, value: &str) -> Rec {
        Rec {
            partition,
            key: Some(key.as_bytes().to_vec()),
            value: Some(value.as_bytes().to_vec()),
            ..Rec::default()
        }
    }
}

/// A record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Got {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    /// Milliseconds; None when the record carries no timestamp.
    pub timestamp: Option<i64>,
}

impl Got {
    /// The fields a producer controls, for comparing with what was produced.
    pub fn to_rec(&self) -> Rec {
        Rec {
            partition: self.partition,
            key: self.key.clone(),
            value: self.value.clone(),
            headers: self.headers.clone(),
            timestamp: self.timestamp,
        }
    }
}

// ------------------------------------------------------------------------------------------------
// rdkafka helpers
// ------------------------------------------------------------------------------------------------

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

fn admin_opts() -> AdminOptions {
    AdminOptions::new()
        .request_timeout(Some(Duration::from_secs(10)))
        .operation_timeout(Some(Duration::from_secs(10)))
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

/// Partition count of `topic` from metadata (panics if the topic is unknown).
pub fn partition_count(bootstrap: &str, topic: &str) -> i32 {
    let c = consumer(bootstrap, &[]);
    let md = c
        .fetch_metadata(Some(topic), Duration::from_secs(10))
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
    c.commit(&tpl, rdkafka::consumer::CommitMode::Sync)
        .unwrap_or_else(|e| {
            panic!("commit {offsets:?} of {topic} for {group} on {bootstrap}: {e}")
        });
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
    let got = c
        .committed_offsets(req, Duration::from_secs(15))
        .unwrap_or_else(|e| panic!("committed offsets of {group} on {bootstrap}: {e}"));
    let mut out = Vec::with_capacity(partitions as usize);
    for p in 0..partitions {
        let off = match got.find_partition(topic, p).map(|e| e.offset()) {
            Some(Offset::Offset(n)) => n,
            _ => -1,
        };
        out.push(off);
    }
    // brokers.md: dropping the consumer while a list from committed() is alive hangs forever.
    drop(got);
    drop(c);
    out
}

/// A mock source cluster whose `topic` has two partitions on different brokers: `topic[0]`
/// and group `group`'s coordinator on broker 1, `topic[1]` on broker 2, with `records`
/// records spread over both. Taking broker 2 down stalls `topic[1]` alone.
pub fn mock_split_source(
    topic: &str,
    group: &str,
    records: &[Rec],
) -> (kreplicate::mock::MockKafka, String) {
    use rdkafka::mocking::MockCoordinator;
    let mock = kreplicate::mock::MockKafka::start(2).expect("mock cluster");
    mock.create_topic(topic, 2).expect("mock topic");
    let cluster = mock.cluster().expect("mock handle");
    cluster.partition_leader(topic, 0, Some(1)).expect("leader");
    cluster.partition_leader(topic, 1, Some(2)).expect("leader");
    cluster
        .coordinator(MockCoordinator::Group(group.into()), 1)
        .expect("coordinator");
    drop(cluster);
    let bootstrap = mock.bootstrap().expect("bootstrap");
    produce(&bootstrap, topic, records);
    (mock, bootstrap)
}
