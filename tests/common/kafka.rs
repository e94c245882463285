//! The reference broker: [`Kafka`], one single-node Apache Kafka cluster (KRaft) on loopback,
//! started through `scripts/kafka.sh` (one implementation of the broker's configuration for
//! people, benchmarks and tests).
//!
//! * [`Kafka::start`] gives a test a cluster of its own: for tests that freeze, kill or
//!   reconfigure a broker. It is killed and its folder deleted on drop; a watchdog kills it when
//!   the test process dies without unwinding.
//! * [`Kafka::shared`] gives the cluster `shared-a` or `shared-b`, started once and reused by every
//!   test process (nextest runs each test in its own): tests on it use names of their own
//!   ([`unique`]) for topics and groups. `scripts/test.sh` stops them at the end.
//! * [`Kafka::cluster`] gives a test a multi-node cluster of its own ([`Cluster`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::broker::{file_tail, proc_state, scratch_dir, spawn_watchdog};
use super::cluster::Cluster;
use super::proxy::Proxy;
use std::net::TcpListener;

pub struct Kafka {
    /// `127.0.0.1:PORT`, ready for `bootstrap.servers`.
    pub bootstrap: String,
    pub port: u16,
    /// The name `scripts/kafka.sh` knows it by.
    pub name: String,
    /// Its folder: server.properties, server.log, data/, ca.pem with TLS.
    pub dir: PathBuf,
    pid: u32,
    watchdog: Option<Child>,
    frozen: bool,
    shared: bool,
}

/// What test clusters change from scripts/kafka.sh's broker: group members with 2 s sessions (the
/// tests' clients and runs), so a killed member's partitions move on in seconds, not 45 s.
pub(super) const TEST_SETTINGS: [&str; 2] = ["--set", "group.min.session.timeout.ms=1000"];

/// `Kafka::start_with` options for KIP-848 members with 3 s sessions and 500 ms heartbeats:
/// under KIP-848 the session lives on the broker (`FAST_GROUP`'s `session.timeout.ms` is a
/// classic-only property, which makes a run choose the classic protocol), so a test of a
/// killed KIP-848 member takes a cluster of its own with these.
pub const KIP848_FAST_SESSIONS: [&str; 8] = [
    "--set",
    "group.consumer.min.session.timeout.ms=1000",
    "--set",
    "group.consumer.session.timeout.ms=3000",
    "--set",
    "group.consumer.min.heartbeat.interval.ms=500",
    "--set",
    "group.consumer.heartbeat.interval.ms=500",
];

/// The test brokers' and tools' JIT: C1 only halves a broker's start (about 11 CPU seconds to 6
/// on these machines) and test traffic is too small to miss C2. The benchmark keeps both.
const QUICK_JIT: &str = "-XX:TieredStopAtLevel=1";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/kafka.sh")
}

/// Runs one of Kafka's own command-line tools (`org.apache.kafka.tools.AclCommand`, ...) from
/// the jars scripts/kafka.sh runs; panics on failure. Its stdout.
pub fn kafka_tool(class: &str, args: &[&str]) -> String {
    let libs = kafka_sh(&["libs"]);
    let out = Command::new("java")
        .args([
            "-Xmx256m",
            QUICK_JIT,
            "-cp",
            &format!("{}/*", libs.trim()),
            class,
        ])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run java {class}: {e}"));
    assert!(
        out.status.success(),
        "{class} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Where the clusters' folders live (the same for every test process, so `shared-*` are shared).
pub fn kafka_home() -> PathBuf {
    scratch_dir().join("kafka")
}

/// `base-PID-N`: a topic or group name no other test (or earlier run on a shared cluster) uses.
pub fn unique(base: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{base}-{}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        nanos % 100_000
    )
}

fn kafka_sh(args: &[&str]) -> String {
    kafka_sh_with(args, &[])
}

/// `scripts/kafka.sh` with `env` on top of the harness's (a cluster's smaller heaps).
pub(super) fn kafka_sh_with(args: &[&str], env: &[(&str, &str)]) -> String {
    let started = Instant::now();
    let out = Command::new("bash")
        .arg(script())
        .args(args)
        .env("KREPLICATE_KAFKA_HOME", kafka_home())
        .env("KREPLICATE_KAFKA_JVM_OPTS", QUICK_JIT)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/kafka.sh: {e}"));
    assert!(
        out.status.success(),
        "scripts/kafka.sh {} failed ({}) after {:?}:\n{}{}",
        args.join(" "),
        out.status,
        started.elapsed(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The fields of `NAME bootstrap=127.0.0.1:PORT pid=PID dir=DIR`.
pub(super) fn parse_line(line: &str) -> (String, u32, PathBuf) {
    let field = |k: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .unwrap_or_else(|| panic!("no {k} in kafka.sh's line {line:?}"))
            .to_string()
    };
    (
        field("bootstrap="),
        field("pid=").parse().expect("pid"),
        PathBuf::from(field("dir=")),
    )
}

impl Kafka {
    /// A cluster of `nodes` nodes of this test's own (see [`Cluster`]).
    pub fn cluster(name: &str, nodes: usize) -> Cluster {
        Cluster::start(name, nodes)
    }

    /// A cluster of this test's own, with the harness's defaults.
    pub fn start(name: &str) -> Kafka {
        Kafka::start_with(name, &[])
    }

    /// Two clusters of this test's own, started side by side (a start is mostly waiting).
    pub fn pair(a: &str, b: &str) -> (Kafka, Kafka) {
        std::thread::scope(|s| {
            let b = s.spawn(|| Kafka::start(b));
            let a = Kafka::start(a);
            (a, b.join().expect("start the second cluster"))
        })
    }

    /// A cluster of this test's own; `args` are `scripts/kafka.sh start` options
    /// (`--protocol SASL_SSL`, `--user alice:pw`, `--acl`, `--set key=value`).
    pub fn start_with(name: &str, args: &[&str]) -> Kafka {
        let name = unique(name);
        let mut argv = vec!["start", name.as_str(), "0"];
        argv.extend_from_slice(&TEST_SETTINGS);
        argv.extend_from_slice(args);
        let line = kafka_sh(&argv);
        let mut k = Kafka::from_line(&name, &line, false);
        k.watchdog = spawn_watchdog(k.pid);
        k
    }

    /// A cluster of this test's own that clients reach only through a [`Proxy`]: the broker
    /// advertises the proxy's address, so the proxy holds or cuts every connection to it.
    /// `bootstrap` is the proxy's address.
    pub fn behind_proxy(name: &str) -> (Kafka, Proxy) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a proxy port");
        let proxy_port = listener.local_addr().expect("local addr").port();
        let broker_port = super::free_port();
        let proxy = Proxy::start(listener, broker_port);
        let name = unique(name);
        let (port, advertise) = (broker_port.to_string(), proxy_port.to_string());
        let mut argv = vec!["start", name.as_str(), port.as_str()];
        argv.extend_from_slice(&TEST_SETTINGS);
        argv.extend_from_slice(&["--advertise-port", advertise.as_str()]);
        let line = kafka_sh(&argv);
        let mut k = Kafka::from_line(&name, &line, false);
        k.watchdog = spawn_watchdog(k.pid);
        k.bootstrap = proxy.addr.clone();
        (k, proxy)
    }

    /// `shared-a` or `shared-b`: started by the first test that asks, reused by the others.
    /// Never frozen, killed or reconfigured (take a cluster of your own for that).
    pub fn shared(which: &str) -> Kafka {
        let name = format!("shared-{which}");
        let mut argv = vec!["start", name.as_str(), "0"];
        argv.extend_from_slice(&TEST_SETTINGS);
        let line = kafka_sh(&argv);
        Kafka::from_line(&name, &line, true)
    }

    fn from_line(name: &str, line: &str, shared: bool) -> Kafka {
        let (bootstrap, pid, dir) = parse_line(line.trim());
        let port = bootstrap
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("port");
        Kafka {
            bootstrap,
            port,
            name: name.to_string(),
            dir,
            pid,
            watchdog: None,
            frozen: false,
            shared,
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The broker's own PLAINTEXT listener (`INTERNAL`, no credentials): the tests' oracle on
    /// a secured cluster, to set up topics and read back what a run wrote.
    pub fn internal(&self) -> String {
        let props =
            fs::read_to_string(self.dir.join("server.properties")).expect("server.properties");
        let listeners = props
            .lines()
            .find_map(|l| l.strip_prefix("listeners="))
            .expect("listeners=");
        let addr = listeners
            .split(',')
            .find_map(|l| l.strip_prefix("INTERNAL://"))
            .expect("an INTERNAL listener");
        addr.to_string()
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// Last 4 KiB of the broker's log.
    pub fn log_tail(&self) -> String {
        file_tail(&self.log_path(), 4096)
    }

    /// SIGSTOP: the broker hangs with its sockets open (clients time out; bytes already sent to
    /// it are applied on thaw).
    pub fn freeze(&mut self) {
        assert!(!self.shared, "a shared cluster is never frozen");
        kafka_sh(&["freeze", &self.name]);
        self.frozen = true;
        self.wait_state(|s| s == 'T', "stopped");
    }

    /// SIGCONT: resume a frozen broker.
    pub fn thaw(&mut self) {
        kafka_sh(&["thaw", &self.name]);
        self.frozen = false;
        self.wait_state(|s| s != 'T', "running");
    }

    pub fn is_frozen(&self) -> bool {
        self.frozen
    }

    /// SIGKILL: a crash; the log stays on disk for [`Kafka::restart`].
    pub fn kill(&mut self) {
        assert!(!self.shared, "a shared cluster is never killed");
        kafka_sh(&["kill", &self.name]);
        self.frozen = false;
    }

    /// Start a killed broker again on its log, on the same port; returns once it answers.
    /// Takes about `broker.session.timeout.ms` (9 s): its old registration must expire first.
    pub fn restart(&mut self) {
        let line = kafka_sh(&["restart", &self.name]);
        let (_, pid, _) = parse_line(line.trim());
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        self.pid = pid;
        self.watchdog = spawn_watchdog(pid);
    }

    fn wait_state(&self, ok: impl Fn(char) -> bool, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match proc_state(self.pid) {
                Some(s) if ok(s) => return,
                None => panic!("kafka {} (pid {}) is gone", self.name, self.pid),
                Some(s) if Instant::now() > deadline => {
                    panic!(
                        "kafka {} (pid {}) not {what}: state {s}",
                        self.name, self.pid
                    )
                }
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

impl Drop for Kafka {
    fn drop(&mut self) {
        if self.shared {
            return;
        }
        // The watchdog goes first, so it can never signal a recycled pid.
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        // A crash stop is enough for a cluster nobody reads again, and takes no time.
        for sig in ["-CONT", "-KILL"] {
            let _ = Command::new("kill")
                .args([sig, &self.pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while proc_state(self.pid).is_some_and(|s| s != 'Z') && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = fs::remove_dir_all(&self.dir);
        let _ = fs::remove_file(kafka_home().join(format!(".{}.lock", self.name)));
    }
}
