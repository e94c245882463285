//! What users run: three-node clusters (replication factor 3, `min.insync.replicas=2`) restarted
//! node by node under a live writer and a continuous run (issue 30). A rolling restart of the
//! target, then of the source: the run rides both out (no exit), nothing is missing, exactly-once
//! is exact for a read_committed reader, at-least-once duplicates are counted and bounded. The
//! target topic is made by `--create-topics --replication-factor 3` on a target whose brokers'
//! default is Kafka's own (1), so its three replicas come from the flag. The runs' diagnostics
//! (`RUST_LOG=warn`) show no ERROR line for these routine restarts: a lost broker is one warning,
//! then a line when it accepts connections again.

use std::io::Read;
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

use crate::common::kr::{self, FAST_GROUP};
use crate::common::{self, Cluster};

const TOPIC: &str = "orders";
const PARTS: i32 = 3;

/// Counts what the writer's producer had acknowledged, and what failed.
#[derive(Default)]
struct Acks {
    ok: AtomicU64,
    failed: AtomicU64,
}

struct Counted(Arc<Acks>);

impl ClientContext for Counted {}

impl ProducerContext for Counted {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(_) => self.0.ok.fetch_add(1, Ordering::Relaxed),
            Err(_) => self.0.failed.fetch_add(1, Ordering::Relaxed),
        };
    }
}

/// A producer that writes until stopped, ~250 records/s, each value `p{partition}-{seq}`: an
/// idempotent producer (what users run), so a source restart adds no duplicate of its own.
pub(crate) struct LiveWriter {
    acks: Arc<Acks>,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl LiveWriter {
    fn start(bootstrap: &str) -> LiveWriter {
        LiveWriter::start_on(bootstrap, TOPIC)
    }

    /// Writes to `topic`'s partitions 0, 1 and 2.
    pub(crate) fn start_on(bootstrap: &str, topic: &str) -> LiveWriter {
        let topic = topic.to_string();
        let acks = Arc::new(Acks::default());
        let stop = Arc::new(AtomicBool::new(false));
        let producer: BaseProducer<Counted> = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("enable.idempotence", "true")
            .set("linger.ms", "5")
            .create_with_context(Counted(acks.clone()))
            .expect("writer");
        let s = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut seq = [0u64; PARTS as usize];
            while !s.load(Ordering::Relaxed) {
                for p in 0..PARTS {
                    let n = seq[p as usize];
                    seq[p as usize] += 1;
                    let value = format!("p{p}-{n}");
                    let headers = OwnedHeaders::new().insert(Header {
                        key: "seq",
                        value: Some(&n.to_string()),
                    });
                    let rec = BaseRecord::to(&topic)
                        .partition(p)
                        .key(&value)
                        .payload(&value)
                        .headers(headers)
                        .timestamp(kr::recent() + n as i64);
                    producer.send(rec).expect("enqueue");
                }
                producer.poll(Duration::from_millis(12));
            }
            producer
                .flush(Duration::from_secs(120))
                .expect("writer flush");
        });
        LiveWriter {
            acks,
            stop,
            handle: Some(handle),
        }
    }

    pub(crate) fn acked(&self) -> u64 {
        self.acks.ok.load(Ordering::Relaxed)
    }

    /// Stops writing, flushes; what was acknowledged.
    pub(crate) fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.join().expect("writer thread");
        }
        assert_eq!(
            self.acks.failed.load(Ordering::Relaxed),
            0,
            "writer failures"
        );
        self.acked()
    }
}

impl Drop for LiveWriter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn create_rf3_topic(bootstrap: &str) {
    create_rf3(bootstrap, TOPIC);
}

/// `topic` with 3 partitions and 3 replicas.
pub(crate) fn create_rf3(bootstrap: &str, topic: &str) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("admin");
    let new = NewTopic::new(topic, PARTS, TopicReplication::Fixed(3));
    let opts = AdminOptions::new().request_timeout(Some(Duration::from_secs(30)));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let res = rt
        .block_on(admin.create_topics([&new], &opts))
        .expect("create");
    assert!(res.iter().all(Result::is_ok), "{res:?}");
    // Every node: one that learned of the topic later told a run at once that it did not exist
    // (exit 2, in a loaded run).
    for node in bootstrap.split(',') {
        common::wait_for_topic(node, topic, PARTS);
    }
}

/// Replicas per partition of `topic` on `bootstrap` (empty while it does not exist).
fn replicas(bootstrap: &str, topic: &str) -> Vec<usize> {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("metadata client");
    let md = c
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .expect("metadata");
    md.topics()
        .iter()
        .flat_map(|t| t.partitions())
        .map(|p| p.replicas().len())
        .collect()
}

fn copied(addr: &str) -> f64 {
    kr::metric(addr, "kreplicate_records_copied_total").unwrap_or(0.0)
}

/// One continuous run: its guarantee, the target topic it writes, where its metrics are.
struct Copy {
    guarantee: &'static str,
    target: String,
    addr: String,
    run: Option<Child>,
    /// Its stderr, read while it runs: a run of several minutes writes more than a pipe holds.
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Copy {
    fn start(a: &str, b: &str, guarantee: &'static str) -> Copy {
        let addr = format!("127.0.0.1:{}", common::free_port());
        let group = common::unique(guarantee);
        let rename = format!("{{topic}}.{guarantee}");
        let mut args = vec![
            "--from",
            a,
            "--to",
            b,
            "--topics",
            TOPIC,
            "--rename",
            &rename,
            "--group",
            &group,
            "--guarantee",
            guarantee,
            "--create-topics",
            "--replication-factor",
            "3",
            "--commit-interval",
            "1s",
            "--metrics-addr",
            &addr,
            "--json",
        ];
        args.extend_from_slice(&FAST_GROUP);
        eprintln!("running RUST_LOG=warn kreplicate {}", args.join(" "));
        // librdkafka's warnings and errors shown, as an operator debugging a run sees them.
        let mut run = kr::command(&args)
            .env("RUST_LOG", "warn")
            .spawn()
            .expect("spawn kreplicate");
        let mut pipe = run.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        });
        Copy {
            guarantee,
            target: format!("{TOPIC}.{guarantee}"),
            run: Some(run),
            addr,
            stderr: Some(stderr),
        }
    }

    /// What the run wrote on stderr, once it exited.
    fn stderr(&mut self) -> String {
        let drain = self.stderr.take().expect("stderr read once");
        drain.join().expect("stderr reader")
    }

    fn copied(&self) -> f64 {
        copied(&self.addr)
    }

    fn still_running(&mut self, when: &str) {
        let run = self.run.as_mut().expect("the run");
        if let Some(status) = run.try_wait().expect("try_wait") {
            kr::wait(self.run.take().expect("run"), Duration::from_secs(5));
            let told = kr::told(&self.stderr());
            panic!(
                "{} run exited ({status}) during {when}: a routine restart is not a failure; its stderr but the progress lines:\n{told}",
                self.guarantee
            );
        }
    }
}

/// A failed test leaves no run behind (it would retry its dead clusters for ever).
impl Drop for Copy {
    fn drop(&mut self) {
        if let Some(mut run) = self.run.take() {
            let _ = run.kill();
            let _ = run.wait();
        }
    }
}

/// Rolls `cluster`; before each node goes down, every copy must be moving (records copied since
/// the last look) and alive, so the fault lands on runs with records in flight; across each
/// node's restart the copies and the writer go on. Returns what the writer wrote meanwhile.
fn roll_under_copy(
    cluster: &mut Cluster,
    which: &str,
    copies: &mut [Copy],
    writer: &LiveWriter,
) -> u64 {
    let mut written_during = 0;
    let mut window: Option<(usize, Vec<f64>, u64)> = None;
    let close = |copies: &mut [Copy], written: &mut u64, w: Option<(usize, Vec<f64>, u64)>| {
        let Some((i, before, acked)) = w else { return };
        let now = writer.acked();
        for (c, before) in copies.iter_mut().zip(before) {
            c.still_running(&format!("the roll of the {which}'s node {i}"));
            let after = c.copied();
            eprintln!(
                "{which} node {i}: {} copied {before} -> {after}",
                c.guarantee
            );
            assert!(
                after > before,
                "{which} node {i}: the {} copy did not go on across the restart",
                c.guarantee
            );
        }
        eprintln!("{which} node {i}: written {acked} -> {now} across its restart");
        assert!(
            now > acked,
            "{which} node {i}: the writer stopped across the restart"
        );
        *written += now - acked;
    };
    cluster.roll(|i| {
        close(copies, &mut written_during, window.take());
        // Every copy is moving at the moment the node goes down.
        for c in copies.iter() {
            let before = c.copied();
            common::wait_until(
                &format!(
                    "{} records copied before the {which}'s node {i} goes down",
                    c.guarantee
                ),
                Duration::from_secs(60),
                || c.copied() > before,
            );
        }
        let at: Vec<f64> = copies.iter().map(Copy::copied).collect();
        for c in copies.iter() {
            let in_flight = kr::metric(&c.addr, "kreplicate_records_in_flight");
            eprintln!(
                "{which} node {i} goes down: {} copied {}, in flight {in_flight:?}",
                c.guarantee,
                c.copied()
            );
        }
        window = Some((i, at, writer.acked()));
    });
    close(copies, &mut written_during, window.take());
    written_during
}

/// A read_committed reader of the exactly-once copy for the whole of both rolls: what a
/// consumer of the target sees while its nodes restart, not only afterwards. Each partition's
/// values (`p{partition}-{seq}`) must rise: a value at or below the last one read is a
/// duplicate or a disorder a live reader would have met.
struct LiveReader {
    read: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Vec<String>>>,
}

impl LiveReader {
    fn start(bootstrap: &str, topic: &str) -> LiveReader {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", common::unique("live-reader"))
            .set("isolation.level", "read_committed")
            .set("enable.auto.commit", "false")
            .create()
            .expect("live reader");
        let mut tpl = TopicPartitionList::new();
        for p in 0..PARTS {
            tpl.add_partition_offset(topic, p, Offset::Beginning)
                .expect("partition");
        }
        consumer.assign(&tpl).expect("assign");
        let (read, stop) = (
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (r, s) = (read.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            let mut last = [None::<u64>; PARTS as usize];
            let mut wrong = Vec::new();
            while !s.load(Ordering::Relaxed) {
                let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) else {
                    continue;
                };
                r.fetch_add(1, Ordering::Relaxed);
                let value = String::from_utf8_lossy(m.payload().unwrap_or_default()).to_string();
                let p = m.partition() as usize;
                let seq: Option<u64> = value.rsplit('-').next().and_then(|n| n.parse().ok());
                match (last[p], seq) {
                    (Some(l), Some(n)) if n <= l => wrong.push(format!(
                        "[{p}] offset {}: {value} after p{p}-{l}",
                        m.offset()
                    )),
                    (_, Some(n)) => last[p] = Some(n),
                    (_, None) => wrong.push(format!("[{p}] offset {}: {value}", m.offset())),
                }
            }
            wrong
        });
        LiveReader {
            read,
            stop,
            handle: Some(handle),
        }
    }

    fn read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// What the reader met out of order or twice.
    fn finish(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .map(|h| h.join().expect("live reader"))
            .unwrap_or_default()
    }
}

/// Both guarantees in one test, two runs side by side on one pair of three-node clusters (a pair
/// costs about a minute of CPU to start, and a roll of both about three minutes here).
#[test]
fn issue_30_rolling_restarts_of_target_then_source_under_both_guarantees() {
    // The target's brokers keep Kafka's own default replication factor (1): the flag makes 3.
    let (mut a, mut b) = Cluster::pair(
        "mn-a",
        "mn-b",
        3,
        &["--set", "default.replication.factor=1"],
    );
    create_rf3_topic(&a.bootstrap);
    let writer = LiveWriter::start(&a.bootstrap);
    let mut copies = [
        Copy::start(&a.bootstrap, &b.bootstrap, "at-least-once"),
        Copy::start(&a.bootstrap, &b.bootstrap, "exactly-once"),
    ];
    for c in copies.iter_mut() {
        common::wait_until("the first records copied", Duration::from_secs(90), || {
            c.still_running("its start");
            c.copied() > 0.0
        });
        assert_eq!(
            replicas(&b.bootstrap, &c.target),
            vec![3; PARTS as usize],
            "--replication-factor 3: replicas of {}",
            c.target
        );
    }

    let eos_target = copies[1].target.clone();
    let reader = LiveReader::start(&b.bootstrap, &eos_target);
    let mut written = roll_under_copy(&mut b, "target", &mut copies, &writer);
    let mut warned = 0;
    written += roll_under_copy(&mut a, "source", &mut copies, &writer);
    let read_during_rolls = reader.read();
    let total = writer.finish();

    for c in copies.iter_mut() {
        // Everything written reaches the target, then a SIGTERM ends the run cleanly.
        kr::wait_or_kill(Duration::from_secs(120), &mut c.run, || {
            let have = common::read_all(&b.bootstrap, &c.target).len() as u64;
            (have < total).then(|| format!("{} holds {have} of {total} records", c.target))
        });
        let child = c.run.take().expect("run");
        kr::signal(&child, "TERM");
        let mut run = kr::wait(child, Duration::from_secs(60));
        run.stderr = c.stderr();
        assert_eq!(run.code, 0, "{run:?}");
        assert_eq!(run.json()["status"], "stopped", "{run:?}");
        eprintln!("{} run's stderr:\n{}", c.guarantee, run.stderr);
        warned += assert_restarts_said_once(&run.stderr);

        // read_all reads read_committed.
        let dups = kr::assert_complete(&a.bootstrap, &b.bootstrap, TOPIC, &c.target, PARTS);
        eprintln!(
            "{}: {total} records written ({written} while a node was down), {dups} duplicates",
            c.guarantee
        );
        if c.guarantee == "exactly-once" {
            assert_eq!(
                dups, 0,
                "exactly-once: duplicates for a read_committed reader"
            );
        } else {
            // A re-send covers at most records in flight while a node was down.
            assert!(
                dups as u64 <= written,
                "{dups} duplicates, {written} written during restarts"
            );
        }
    }
    // Not asserted above zero: a controlled shutdown moves a node's leaderships away first, so
    // clients with no reason to reconnect while it is down see no failure to say (in one run
    // neither run said any of the six restarts). A killed node is said: multinode_faults.
    eprintln!("broker restarts said: {warned}");
    common::wait_until(
        "the live reader reads everything",
        Duration::from_secs(60),
        || reader.read() >= total,
    );
    let read = reader.read();
    let wrong = reader.finish();
    eprintln!(
        "live read_committed reader of {eos_target}: {read_during_rolls} records read during the rolls, {read} in all, {} out of order or twice",
        wrong.len()
    );
    assert!(
        read_during_rolls > 0,
        "the live reader read nothing during the rolls"
    );
    assert!(
        wrong.is_empty(),
        "a read_committed reader met these during the rolls: {wrong:#?}"
    );
}

/// A routine restart is no error: no ERROR line, one warning per broker lost, and each is said
/// to be back. How many were said lost.
#[track_caller]
pub(crate) fn assert_restarts_said_once(stderr: &str) -> usize {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains(" ERROR ")).collect();
    assert!(
        errors.is_empty(),
        "ERROR lines for routine restarts: {errors:#?}"
    );
    let lost: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.split("WARN librdkafka: broker ").nth(1))
        .filter_map(|l| l.split_once(" unreachable (").map(|(addr, _)| addr))
        .collect();
    for addr in &lost {
        assert!(
            stderr.contains(&format!("broker {addr} accepts connections again after ")),
            "{addr} said lost, never back: {stderr}"
        );
    }
    lost.len()
}
