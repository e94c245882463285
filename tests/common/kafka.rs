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
//! * [`Kafka::start_version`] gives a test a cluster of another Kafka version (2.8.2 and 3.9.1
//!   with ZooKeeper, 4.4.0, ...). `KREPLICATE_KAFKA_VERSION` (and `KREPLICATE_KAFKA_ZOOKEEPER=1`)
//!   change the version of every other cluster, shared ones included: `scripts/matrix.sh`.

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
    /// A ZooKeeper-mode cluster's ZooKeeper (killed with the broker on drop).
    zk_pid: Option<u32>,
    zk_watchdog: Option<Child>,
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
    run_tool(libs.trim(), class, args)
}

/// A `java` command for one of Kafka's own clients that runs beside a test (VerifiableProducer,
/// VerifiableConsumer), from the default version's jars; stdout piped, stdin closed.
pub fn kafka_client(class: &str, args: &[&str]) -> Command {
    let libs = kafka_sh(&["libs"]);
    let mut c = Command::new("java");
    c.args([
        "-Xmx256m",
        QUICK_JIT,
        "-cp",
        &format!("{}/*", libs.trim()),
        class,
    ])
    .args(args)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

/// `class` as Kafka `version` names it: before 4.0 (2.x: TopicCommand too) the admin tools
/// were Scala classes in `kafka.admin`.
fn tool_class(version: &str, class: &str) -> String {
    let scala = match class.strip_prefix("org.apache.kafka.tools.") {
        Some(c @ ("AclCommand" | "ConfigCommand")) if !version.starts_with('4') => Some(c),
        Some(c @ "TopicCommand") if version.starts_with("2.") => Some(c),
        _ => None,
    };
    scala.map_or_else(|| class.to_string(), |c| format!("kafka.admin.{c}"))
}

fn run_tool(libs: &str, class: &str, args: &[&str]) -> String {
    // .cache/kafka/VERSION/libs
    let version = Path::new(libs)
        .parent()
        .and_then(|p| p.file_name())
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    let class = tool_class(&version, class);
    let class = class.as_str();
    let out = Command::new("java")
        .args(["-Xmx256m", QUICK_JIT, "-cp", &format!("{libs}/*"), class])
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
        k.zk_watchdog = k.zk_pid.and_then(spawn_watchdog);
        if k.zk_pid.is_some() {
            k.wait_for_leaders();
        }
        k
    }

    /// A cluster of this test's own running Kafka `version` (`scripts/kafka.sh start --version`):
    /// ZooKeeper mode for 2.x, and for 3.x with `zookeeper`.
    pub fn start_version(name: &str, version: &str, zookeeper: bool, args: &[&str]) -> Kafka {
        let mut argv = vec!["--version", version];
        if zookeeper {
            argv.push("--zookeeper");
        }
        argv.extend_from_slice(args);
        Kafka::start_with(name, &argv)
    }

    /// The Kafka version and mode of this cluster, as `scripts/kafka.sh version` says
    /// (`4.4.0 kraft`, `2.8.2 zk`).
    pub fn version(&self) -> String {
        kafka_sh(&["version", &self.name]).trim().to_string()
    }

    /// Runs one of Kafka's own tools from this cluster's version's jars (see [`kafka_tool`]).
    pub fn tool(&self, class: &str, args: &[&str]) -> String {
        let libs = kafka_sh(&["libs", &self.name]);
        run_tool(libs.trim(), class, args)
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
        let zk_pid = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("zkpid="))
            .map(|p| p.parse().expect("zkpid"));
        Kafka {
            bootstrap,
            port,
            name: name.to_string(),
            dir,
            pid,
            zk_pid,
            zk_watchdog: None,
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
        self.wait_for_leaders();
    }

    /// Waits until the metadata names a broker and every partition has a leader: a
    /// ZooKeeper-mode broker says `started` before its controller's UpdateMetadata reached it
    /// (no broker, no controller: a librdkafka admin request waits its whole timeout for one),
    /// and before the controller elected the leaders of the partitions it had.
    fn wait_for_leaders(&self) {
        use rdkafka::consumer::{BaseConsumer, Consumer};
        // The broker's own PLAINTEXT listener: no credentials on a secured cluster.
        let c: BaseConsumer = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", self.internal())
            .create()
            .expect("metadata client");
        super::wait_until(
            "every partition has a leader",
            Duration::from_secs(60),
            || {
                c.fetch_metadata(None, Duration::from_secs(5))
                    .is_ok_and(|md| {
                        !md.brokers().is_empty()
                            && md
                                .topics()
                                .iter()
                                .flat_map(|t| t.partitions())
                                .all(|p| p.leader() >= 0)
                    })
            },
        );
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
        if let Some(mut w) = self.zk_watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        // A crash stop is enough for a cluster nobody reads again, and takes no time.
        for pid in std::iter::once(self.pid).chain(self.zk_pid) {
            for sig in ["-CONT", "-KILL"] {
                let _ = Command::new("kill")
                    .args([sig, &pid.to_string()])
                    .stderr(Stdio::null())
                    .status();
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while proc_state(pid).is_some_and(|s| s != 'Z') && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = fs::remove_dir_all(&self.dir);
        let _ = fs::remove_file(kafka_home().join(format!(".{}.lock", self.name)));
    }
}
