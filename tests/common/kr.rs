//! Running the built `kreplicate` binary from tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{self, Got, Rec};

/// What a finished run printed and returned.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {self:?}"))
    }
}

/// Properties every run against tansu needs (its group joins wait session.timeout.ms / 2), and
/// reruns on librdkafka's mock (it keeps a closed run's member until its session times out).
pub const FAST_GROUP: [&str; 4] = [
    "-X",
    "session.timeout.ms=2000",
    "-X",
    "heartbeat.interval.ms=500",
];

/// A `kreplicate` command isolated from the user's config files.
pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kreplicate"));
    c.args(args)
        .env_remove("KREPLICATE_CONFIG")
        .env("XDG_CONFIG_HOME", common::scratch_dir().join("no-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

pub fn spawn(args: &[&str]) -> Child {
    eprintln!("running kreplicate {}", args.join(" "));
    command(args).spawn().expect("spawn kreplicate")
}

/// Waits for a child (bounded: a hung run fails the test and is killed). Its output is read
/// while it runs: a child blocked on a full pipe (64 KiB of `-vv`) would look hung.
pub fn wait(mut child: Child, limit: Duration) -> Run {
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    }
    let (stdout, stderr) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = stderr.join().unwrap_or_default();
            panic!("kreplicate did not exit within {limit:?}; stderr: {stderr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Where a slow test's time went, in its log.
    eprintln!(
        "kreplicate exited ({status}) after waiting {:.1?}",
        started.elapsed()
    );
    Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// A run's stderr without its progress lines (one a second), for a failure message: what it
/// warned about and why it ended, short enough for CI's excerpt of a failed test.
pub fn told(stderr: &str) -> String {
    let told: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            !l.split_once("kreplicate: ").is_some_and(|(_, rest)| {
                rest.split(' ')
                    .next()
                    .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit() || c == ','))
                    && rest.contains(" records ")
            })
        })
        .collect();
    told[told.len().saturating_sub(60)..].join("\n")
}

pub fn run(args: &[&str]) -> Run {
    wait(spawn(args), Duration::from_secs(180))
}

pub fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .expect("kill")
        .success();
    assert!(ok, "kill -{sig} failed");
}

/// A loopback address where nothing listens (connections are refused).
pub fn closed_address() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local_addr").to_string()
}

/// The one builder of a copy run's arguments: `--from` and `--to`, then each part in the order
/// a test adds it. `build()` gives what [`spawn`] and [`run`] take.
#[derive(Clone, Debug)]
pub struct Args<'a>(Vec<&'a str>);

impl<'a> Args<'a> {
    /// `--from FROM --to TO`.
    pub fn copy(from: &'a str, to: &'a str) -> Self {
        Args(vec!["--from", from, "--to", to])
    }

    /// `plan --from FROM --to TO`: what [`Args::copy`] would do.
    pub fn plan(from: &'a str, to: &'a str) -> Self {
        Args(vec!["plan", "--from", from, "--to", to])
    }

    /// `--topics LIST|^REGEX`.
    pub fn topics(self, topics: &'a str) -> Self {
        self.with(&["--topics", topics])
    }

    /// `--group ID`.
    pub fn group(self, group: &'a str) -> Self {
        self.with(&["--group", group])
    }

    /// `--guarantee G`.
    pub fn guarantee(self, guarantee: &'a str) -> Self {
        self.with(&["--guarantee", guarantee])
    }

    /// `--until-caught-up --json`.
    pub fn caught_up(self) -> Self {
        self.with(&["--until-caught-up", "--json"])
    }

    /// [`FAST_GROUP`]'s short classic-protocol sessions.
    pub fn fast_group(self) -> Self {
        self.with(&FAST_GROUP)
    }

    /// Any other arguments, as given.
    pub fn with(mut self, extra: &[&'a str]) -> Self {
        self.0.extend_from_slice(extra);
        self
    }

    pub fn build(self) -> Vec<&'a str> {
        self.0
    }
}

/// `--until-caught-up --json` arguments copying `topic` from `a` to `b` in `group` under
/// `guarantee`, with `extra` and the tansu group settings.
pub fn caught_up_args<'a>(
    a: &'a str,
    b: &'a str,
    topic: &'a str,
    group: &'a str,
    guarantee: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    Args::copy(a, b)
        .topics(topic)
        .group(group)
        .guarantee(guarantee)
        .caught_up()
        .with(extra)
        .fast_group()
        .build()
}

/// A CreateTime base a day back, the same for every record of a test process: Apache Kafka
/// deletes records older than its retention (7 days), whatever their offsets. A topic that
/// holds them keeps more than a day (2 days: the configs and migration tests), or the broker's
/// retention check (30 s after its start, then every 5 minutes) deletes them mid-test.
pub fn recent() -> i64 {
    static BASE: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *BASE.get_or_init(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        (now - 86_400_000) / 1000 * 1000
    })
}

/// `n` records spread over `partitions`, each with a unique value, and every shape a faithful
/// copy must keep: null keys, tombstones, empty values, repeated and null-valued headers.
pub fn records(n: usize, partitions: i32, tag: &str) -> Vec<Rec> {
    (0..n)
        .map(|i| {
            let mut headers = vec![("seq".to_string(), Some(format!("{tag}-{i}").into_bytes()))];
            if i % 4 == 0 {
                headers.push(("null-header".to_string(), None));
                headers.push(("seq".to_string(), Some(b"again".to_vec())));
            }
            Rec {
                partition: (i % partitions as usize) as i32,
                key: (i % 9 != 0).then(|| format!("key-{}", i % 31).into_bytes()),
                // Tombstones and empty values carry identity in the seq header instead.
                value: match i % 13 {
                    0 => None,
                    1 => Some(Vec::new()),
                    _ => Some(format!("{tag}-{i}:{}", "x".repeat(i % 50)).into_bytes()),
                },
                headers,
                timestamp: Some(recent() + i as i64),
            }
        })
        .collect()
}

/// The header every copy adds (issue 11): left out when comparing records.
pub const ORIGIN: &str = "kreplicate.origin";

/// A record as produced, without kreplicate's origin header.
pub fn comparable(g: &Got) -> Rec {
    let mut r = g.to_rec();
    r.headers.retain(|(k, _)| k != ORIGIN);
    r
}

/// Records of one partition in offset order, as comparable records.
pub fn partition(got: &[Got], p: i32) -> Vec<Rec> {
    got.iter()
        .filter(|g| g.partition == p)
        .map(comparable)
        .collect()
}

/// The at-least-once invariant, asserted on the committed positions themselves: every source
/// record below a partition's committed position is present in the target partition.
#[track_caller]
pub fn assert_committed_is_covered(
    a: &str,
    b: &str,
    group: &str,
    source_topic: &str,
    target_topic: &str,
    partitions: i32,
) -> Vec<i64> {
    let src = common::read_all(a, source_topic);
    let dst = common::read_all(b, target_topic);
    let committed = common::committed(a, group, source_topic, partitions);
    for p in 0..partitions {
        let copied: std::collections::HashSet<Vec<u8>> = dst
            .iter()
            .filter(|g| g.partition == p)
            .map(|g| format!("{:?}", comparable(g)).into_bytes())
            .collect();
        let pos = committed[p as usize];
        for r in src.iter().filter(|g| g.partition == p && g.offset < pos) {
            assert!(
                copied.contains(format!("{:?}", comparable(r)).as_bytes()),
                "{source_topic}[{p}] committed position {pos} passes offset {}, which is not in the target",
                r.offset
            );
        }
    }
    committed
}

/// Every source record is in the target, in source order per partition once duplicates are
/// dropped, keeping each record's last copy: a rerun re-sends everything from the committed
/// position in order, so last copies are in source order even where a failed run left later
/// records ahead of a failed one. Returns how many duplicates there were.
#[track_caller]
pub fn assert_complete(
    a: &str,
    b: &str,
    source_topic: &str,
    target_topic: &str,
    partitions: i32,
) -> usize {
    let src = common::read_all(a, source_topic);
    let dst = common::read_all(b, target_topic);
    let mut dups = 0;
    for p in 0..partitions {
        let want = partition(&src, p);
        let mut seen = std::collections::HashSet::new();
        let mut got: Vec<Rec> = partition(&dst, p)
            .into_iter()
            .rev()
            .filter(|r| seen.insert(format!("{r:?}")))
            .collect();
        got.reverse();
        dups += partition(&dst, p).len() - got.len();
        assert_eq!(
            got.len(),
            want.len(),
            "{target_topic}[{p}]: record count (after dropping duplicates)"
        );
        assert!(
            got == want,
            "{target_topic}[{p}] is not an exact, in-order copy of {source_topic}[{p}]"
        );
    }
    dups
}

/// Topic names on a cluster.
pub fn topics(bootstrap: &str) -> Vec<String> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("metadata client");
    let md = c
        .fetch_metadata(None, Duration::from_secs(10))
        .expect("metadata");
    md.topics().iter().map(|t| t.name().to_string()).collect()
}

/// Writes to the source in the background until dropped, so the replicator is mid-copy.
pub struct Writer {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    pub fn start(bootstrap: &str, topic: &str, partitions: i32) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let (s, boot, topic) = (stop.clone(), bootstrap.to_string(), topic.to_string());
        let handle = std::thread::spawn(move || {
            let mut round = 0;
            while !s.load(Ordering::Relaxed) && round < 300 {
                common::produce(
                    &boot,
                    &topic,
                    &records(100, partitions, &format!("w{round}")),
                );
                round += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Writer {
            stop,
            handle: Some(handle),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Waits until `topic` on `bootstrap` holds `n` records; returns how long that took. On
/// timeout, stops the run and shows what it printed.
pub fn wait_for_records(
    bootstrap: &str,
    topic: &str,
    n: usize,
    limit: Duration,
    child: &mut Option<Child>,
) -> Duration {
    let started = Instant::now();
    wait_or_kill(limit, child, || {
        let have = if topics(bootstrap).iter().any(|t| t == topic) {
            common::read_all(bootstrap, topic).len()
        } else {
            0
        };
        (have < n).then(|| format!("{topic} holds {have} of {n} records"))
    });
    started.elapsed()
}

/// Waits until `done` says nothing is missing (`None`); after `limit` the run is killed and its
/// stderr printed, then the test fails with what was missing.
pub fn wait_or_kill(
    limit: Duration,
    run: &mut Option<Child>,
    mut done: impl FnMut() -> Option<String>,
) {
    let deadline = Instant::now() + limit;
    while let Some(missing) = done() {
        if Instant::now() > deadline {
            if let Some(c) = run.take() {
                signal(&c, "KILL");
                let r = wait(c, Duration::from_secs(10));
                eprintln!("kreplicate exit {}: {}", r.code, r.stderr);
            }
            panic!("{missing} after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Fails the test with the run's output if `child` ended before `limit` passed.
#[track_caller]
pub fn stays_up(child: &mut Option<Child>, limit: Duration) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        let exited = child.as_mut().and_then(|c| c.try_wait().expect("try_wait"));
        if exited.is_some() {
            let run = wait(child.take().expect("child"), Duration::from_secs(10));
            panic!("the run ended: {run:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits until `group`'s committed positions on `topic` reach `want`.
pub fn wait_for_committed(
    bootstrap: &str,
    group: &str,
    topic: &str,
    want: &[i64],
    run: &mut Option<Child>,
) {
    wait_or_kill(Duration::from_secs(120), run, || {
        let have = common::committed(bootstrap, group, topic, want.len() as i32);
        let reached = have.iter().zip(want).all(|(h, w)| h >= w);
        (!reached).then(|| format!("{group} committed {have:?} on {topic}, not {want:?}"))
    });
}

/// SIGINT to a continuous run: it stops, exits 0 and says `stopped`.
#[track_caller]
pub fn stop(child: &mut Option<Child>) -> Run {
    let child = child.take().expect("the run is still going");
    signal(&child, "INT");
    let run = wait(child, Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["status"], "stopped", "{run:?}");
    run
}

/// The first sample of `metric` that a run serving `--metrics-addr addr` shows now, if any.
pub fn metric(addr: &str, metric: &str) -> Option<f64> {
    let text = common::http_get(&format!("http://{addr}/metrics")).ok()?.1;
    common::scraped(&text, metric).first().map(|s| s.1)
}

/// A running kreplicate whose stderr is read as it comes, so a test can wait for a line.
pub struct Watched {
    pub child: Option<Child>,
    said: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Watched {
    pub fn spawn(args: &[&str]) -> Watched {
        let mut child = spawn(args);
        let said = Arc::new(Mutex::new(String::new()));
        let (pipe, into) = (child.stderr.take(), said.clone());
        let reader = std::thread::spawn(move || {
            let Some(pipe) = pipe else { return };
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut text = into.lock().unwrap_or_else(|e| e.into_inner());
                text.push_str(&line);
                text.push('\n');
            }
        });
        Watched {
            child: Some(child),
            said,
            reader: Some(reader),
        }
    }

    /// What the run printed on stderr so far.
    pub fn said(&self) -> String {
        self.said.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits until what the run printed satisfies `done`; after `limit` the run is killed and
    /// the test fails with its stderr.
    pub fn wait_for(&mut self, what: &str, limit: Duration, done: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + limit;
        while !done(&self.said()) {
            if Instant::now() > deadline {
                let run = self.kill();
                panic!(
                    "{what}: not within {limit:?}; kreplicate said:\n{}",
                    run.stderr
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGKILL, then what the run printed.
    pub fn kill(&mut self) -> Run {
        if let Some(c) = self.child.as_ref() {
            signal(c, "KILL");
        }
        self.wait(Duration::from_secs(10))
    }

    /// [`kr::wait`], with the stderr read here (also when the run outlasts `limit`).
    pub fn wait(&mut self, limit: Duration) -> Run {
        let mut child = self.child.take().expect("the run was waited for");
        let deadline = Instant::now() + limit;
        while child.try_wait().expect("wait").is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "kreplicate did not exit within {limit:?}; it said:\n{}",
                    self.said()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut run = wait(child, Duration::from_secs(10));
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        run.stderr = self.said();
        run
    }
}

impl Drop for Watched {
    /// A run the test left running is killed; if the test failed, its last lines are shown.
    fn drop(&mut self) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        let _ = c.kill();
        let _ = c.wait();
        if std::thread::panicking() {
            let said = self.said();
            let lines: Vec<&str> = said.lines().collect();
            eprintln!(
                "--- the run left running said last:\n{}",
                lines[lines.len().saturating_sub(25)..].join("\n")
            );
        }
    }
}
