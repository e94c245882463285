//! [`Cluster`]: a multi-node Apache Kafka cluster of a test's own (`scripts/kafka.sh start NAME 0
//! --nodes N`): every node broker and controller, internal and new topics with min(N, 3)
//! replicas, `min.insync.replicas=2` from three nodes on. Node-level faults (`kill`, `stop`,
//! `restart`, `freeze`, `thaw`) and a rolling restart ([`Cluster::roll`]). Killed on drop; a
//! watchdog per node kills it when the test process dies without unwinding.

use std::fs;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};

use super::broker::{proc_state, spawn_watchdog};
use super::kafka::{kafka_home, kafka_sh_with, unique, TEST_SETTINGS};
use super::proxy::Proxy;

/// The nodes' heaps: three nodes and two clusters fit the 2-core, shared test machines.
const HEAP: (&str, &str) = ("KAFKA_HEAP_OPTS", "-Xmx384m -Xms384m");

/// A node's start (a restart replays its log) took over 60 s, kafka.sh's default limit, with
/// four three-node clusters on two cores (a load of 40): allow what the soak allows.
const START_TIMEOUT: (&str, &str) = ("KREPLICATE_KAFKA_START_TIMEOUT", "180");

pub struct Cluster {
    /// Every node's client listener, `127.0.0.1:P1,127.0.0.1:P2,...`.
    pub bootstrap: String,
    pub name: String,
    pub dir: PathBuf,
    nodes: Vec<Node>,
}

struct Node {
    port: u16,
    pid: u32,
    watchdog: Option<Child>,
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key} in kafka.sh's line {line:?}"))
}

fn sh(args: &[&str]) -> String {
    kafka_sh_with(args, &[HEAP, START_TIMEOUT])
}

impl Cluster {
    pub fn start(name: &str, n_nodes: usize) -> Cluster {
        Cluster::start_with(name, n_nodes, &[])
    }

    /// [`Cluster::start`] with `scripts/kafka.sh start` options (`--set key=value`).
    pub fn start_with(name: &str, n_nodes: usize, args: &[&str]) -> Cluster {
        let name = unique(name);
        let n = n_nodes.to_string();
        let mut argv = vec!["start", name.as_str(), "0", "--nodes", n.as_str()];
        argv.extend_from_slice(&TEST_SETTINGS);
        argv.extend_from_slice(args);
        let line = sh(&argv);
        let line = line.trim();
        let bootstrap = field(line, "bootstrap=").to_string();
        let ports = bootstrap.split(',').map(|a| {
            a.rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .expect("port")
        });
        let pids = field(line, "pid=")
            .split(',')
            .map(|p| p.parse().expect("pid"));
        let nodes = ports
            .zip(pids)
            .map(|(port, pid)| Node {
                port,
                pid,
                watchdog: spawn_watchdog(pid),
            })
            .collect::<Vec<_>>();
        assert_eq!(nodes.len(), n_nodes, "{line}");
        Cluster {
            bootstrap,
            dir: PathBuf::from(field(line, "dir=")),
            name,
            nodes,
        }
    }

    /// A cluster whose every node clients reach only through a [`Proxy`] of its own (node `i`
    /// advertises `proxies[i - 1]`), for faults between a client and one node; `bootstrap`
    /// lists the proxies. [`Cluster::internal`] bypasses them (the tests' oracle).
    pub fn behind_proxies(name: &str, n_nodes: usize, args: &[&str]) -> (Cluster, Vec<Proxy>) {
        let listeners: Vec<std::net::TcpListener> = (0..n_nodes)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("bind a proxy port"))
            .collect();
        let ports: Vec<String> = listeners
            .iter()
            .map(|l| l.local_addr().expect("local addr").port().to_string())
            .collect();
        let advertise = ports.join(",");
        let mut argv = vec!["--advertise-port", advertise.as_str()];
        argv.extend_from_slice(args);
        let mut c = Cluster::start_with(name, n_nodes, &argv);
        let proxies: Vec<Proxy> = listeners
            .into_iter()
            .zip(&c.nodes)
            .map(|(l, node)| Proxy::start(l, node.port))
            .collect();
        c.bootstrap = proxies
            .iter()
            .map(|p| p.addr.clone())
            .collect::<Vec<_>>()
            .join(",");
        (c, proxies)
    }

    /// Every node's own PLAINTEXT listener (`INTERNAL`), past any proxy: the tests' oracle.
    pub fn internal(&self) -> String {
        self.internal_except(0)
    }

    /// [`Cluster::internal`] without node `down`'s (a reader bootstrapping to a node that is
    /// down fails).
    pub fn internal_except(&self, down: usize) -> String {
        (1..=self.nodes.len())
            .filter(|i| *i != down)
            .map(|i| {
                let props = fs::read_to_string(self.dir.join(format!("n{i}/server.properties")))
                    .expect("server.properties");
                props
                    .lines()
                    .find_map(|l| l.strip_prefix("listeners="))
                    .and_then(|l| l.split(',').find_map(|l| l.strip_prefix("INTERNAL://")))
                    .expect("an INTERNAL listener")
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The node that leads `topic`'s partition `partition` (1-based, its `node.id`), as the
    /// metadata says.
    pub fn leader(&self, topic: &str, partition: i32) -> usize {
        let c: BaseConsumer = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", self.internal())
            .create()
            .expect("metadata client");
        let md = c
            .fetch_metadata(Some(topic), Duration::from_secs(10))
            .expect("metadata");
        let leader = md
            .topics()
            .iter()
            .flat_map(|t| t.partitions())
            .find(|p| p.id() == partition)
            .map(|p| p.leader())
            .unwrap_or_else(|| panic!("{topic}[{partition}]: no such partition"));
        assert!(leader > 0, "{topic}[{partition}] has no leader");
        leader as usize
    }

    /// The node that coordinates `transactional_id`'s transactions: the leader of its
    /// `__transaction_state` partition (Kafka: `Utils.abs(id.hashCode()) % partitions`, Java's
    /// `String.hashCode` over UTF-16 units; `Utils.abs` is `Math.abs` with `MIN_VALUE` as 0).
    pub fn txn_coordinator(&self, transactional_id: &str) -> usize {
        let hash = transactional_id
            .encode_utf16()
            .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(u as i32));
        let parts = self.nodes.len() as i32; // kafka.sh: one partition per node
        let abs = if hash == i32::MIN { 0 } else { hash.abs() };
        self.leader("__transaction_state", abs % parts)
    }

    /// Two clusters of this test's own, started side by side; `b_args` for the second.
    pub fn pair(a: &str, b: &str, nodes: usize, b_args: &[&str]) -> (Cluster, Cluster) {
        std::thread::scope(|s| {
            let b = s.spawn(|| Cluster::start_with(b, nodes, b_args));
            let a = Cluster::start(a, nodes);
            (a, b.join().expect("start the second cluster"))
        })
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Node `i`'s (1-based, as Kafka's `node.id`) client address.
    pub fn node_addr(&self, i: usize) -> String {
        format!("127.0.0.1:{}", self.nodes[i - 1].port)
    }

    pub fn pid(&self, i: usize) -> u32 {
        self.nodes[i - 1].pid
    }

    /// Node `i`'s server.log.
    pub fn log_path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("n{i}/server.log"))
    }

    /// SIGKILL node `i`: a crash; its log stays for [`Cluster::restart`].
    pub fn kill(&mut self, i: usize) {
        sh(&["kill", &self.name, "--node", &i.to_string()]);
    }

    /// SIGTERM node `i` and wait until it is gone: a controlled shutdown (its leaders move away
    /// first); its log stays for [`Cluster::restart`].
    pub fn stop(&mut self, i: usize) {
        sh(&["stop", &self.name, "--node", &i.to_string()]);
    }

    /// Start node `i` again on its log; returns once it answers (not yet in every ISR: see
    /// [`Cluster::settled`]).
    pub fn restart(&mut self, i: usize) {
        let line = sh(&["restart", &self.name, "--node", &i.to_string()]);
        let pid = field(line.trim(), "pid=").parse().expect("pid");
        let node = &mut self.nodes[i - 1];
        if let Some(mut w) = node.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        node.pid = pid;
        node.watchdog = spawn_watchdog(pid);
    }

    /// SIGSTOP node `i`: it hangs with its sockets open.
    pub fn freeze(&mut self, i: usize) {
        sh(&["freeze", &self.name, "--node", &i.to_string()]);
        self.wait_state(i, |s| s == 'T', "stopped");
    }

    /// SIGCONT node `i`.
    pub fn thaw(&mut self, i: usize) {
        sh(&["thaw", &self.name, "--node", &i.to_string()]);
        self.wait_state(i, |s| s != 'T', "running");
    }

    /// Waits until every partition (internal topics included) has its full ISR, as the
    /// cluster's metadata says (what `scripts/kafka.sh settled` asks Kafka's TopicCommand, without
    /// a JVM start per look).
    pub fn settled(&self) {
        let c: BaseConsumer = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", self.internal())
            .create()
            .expect("metadata client");
        let full = || match c.fetch_metadata(None, Duration::from_secs(5)) {
            Ok(md) => {
                let under: Vec<String> = md
                    .topics()
                    .iter()
                    .flat_map(|t| t.partitions().iter().map(move |p| (t.name(), p)))
                    .filter(|(_, p)| p.isr().len() < p.replicas().len())
                    .map(|(t, p)| format!("{t}[{}] isr {:?}", p.id(), p.isr()))
                    .collect();
                (
                    under.is_empty() && md.brokers().len() == self.nodes.len(),
                    under.join(", "),
                )
            }
            Err(e) => (false, e.to_string()),
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let (ok, why) = full();
            if ok {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{}: not settled after 120 s: {why}",
                self.name
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// A rolling restart as operators do it: for each node in turn, `before(i)`, then a
    /// controlled shutdown, a start on its log, and a wait until every ISR is full again.
    pub fn roll(&mut self, mut before: impl FnMut(usize)) {
        for i in 1..=self.nodes.len() {
            before(i);
            let t0 = Instant::now();
            self.stop(i);
            let t1 = Instant::now();
            self.restart(i);
            let t2 = Instant::now();
            self.settled();
            eprintln!(
                "{}: node {i} rolled in {:.1?} (stop {:.1?}, start {:.1?}, full ISRs {:.1?})",
                self.name,
                t0.elapsed(),
                t1 - t0,
                t2 - t1,
                t2.elapsed()
            );
        }
    }

    fn wait_state(&self, i: usize, ok: impl Fn(char) -> bool, what: &str) {
        let pid = self.pid(i);
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match proc_state(pid) {
                Some(s) if ok(s) => return,
                None => panic!("{} node {i} (pid {pid}) is gone", self.name),
                Some(s) if Instant::now() > deadline => {
                    panic!("{} node {i} (pid {pid}) not {what}: state {s}", self.name)
                }
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            // The watchdog goes first, so it can never signal a recycled pid.
            if let Some(mut w) = node.watchdog.take() {
                let _ = w.kill();
                let _ = w.wait();
            }
            for sig in ["-CONT", "-KILL"] {
                let _ = Command::new("kill")
                    .args([sig, &node.pid.to_string()])
                    .stderr(Stdio::null())
                    .status();
            }
        }
        for node in &self.nodes {
            let deadline = Instant::now() + Duration::from_secs(10);
            while proc_state(node.pid).is_some_and(|s| s != 'Z') && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = fs::remove_dir_all(&self.dir);
        let _ = fs::remove_file(kafka_home().join(format!(".{}.lock", self.name)));
    }
}
