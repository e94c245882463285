//! Issue 42: `kreplicate migrate` moves Kafka's own Java clients from A to B. VerifiableProducer
//! writes to A while the copy runs and VerifiableConsumer groups read from A; the writer stops
//! when migrate asks, a group still read is refused until its consumer stops, the groups move,
//! and the writer and the groups start again against B. From the clients' own output: every
//! record the writer acknowledged is read exactly once by each group across the move, and
//! again across the failback that brings what was written on B back to A. The source runs
//! `KREPLICATE_MIGRATE_FROM` (2.8.2 in ZooKeeper mode unless set; scripts/migrate-matrix.sh
//! runs 3.9.1 too), the target 4.4.0, under `KREPLICATE_MIGRATE_GUARANTEES` (exactly-once, the
//! default of `migrate`, unless set: CI's time; the matrix script runs at-least-once too).
//! Also: a kill -9 inside each stage, resumed; the refusals.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::kr;
use crate::common::{self, Kafka};

const PRODUCER: &str = "org.apache.kafka.tools.VerifiableProducer";
const CONSUMER: &str = "org.apache.kafka.tools.VerifiableConsumer";

/// A Java client beside the test: its stdout's JSON events, collected as they come.
struct App {
    name: String,
    child: Child,
    events: Arc<Mutex<Vec<Value>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
    stderr: Arc<Mutex<String>>,
}

impl App {
    fn start(name: &str, class: &str, args: &[&str]) -> App {
        eprintln!("{name}: {class} {}", args.join(" "));
        let mut child = common::kafka_client(class, args)
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: cannot start java: {e}"));
        let events = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let (out, err) = (child.stdout.take(), child.stderr.take());
        let (e, s) = (events.clone(), stderr.clone());
        let readers = vec![
            std::thread::spawn(move || {
                for line in BufReader::new(out.expect("stdout")).lines() {
                    let Ok(line) = line else { break };
                    if let Ok(v) = serde_json::from_str::<Value>(&line) {
                        e.lock().unwrap().push(v);
                    }
                }
            }),
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = BufReader::new(err.expect("stderr")).read_to_string(&mut text);
                *s.lock().unwrap() = text;
            }),
        ];
        App {
            name: name.into(),
            child,
            events,
            readers,
            stderr,
        }
    }

    fn count(&self, event: &str) -> usize {
        let events = self.events.lock().unwrap();
        events.iter().filter(|e| e["name"] == event).count()
    }

    /// Waits until the client printed `n` events named `event`.
    fn wait_for(&mut self, event: &str, n: usize, limit: Duration) {
        self.wait(
            &format!("{n} {event} events (or it exited)"),
            limit,
            |app| app.count(event) >= n || app.child.try_wait().ok().flatten().is_some(),
        );
        let got = self.count(event);
        if got < n {
            panic!(
                "{}: it exited after {got} of {n} {event} events: {}",
                self.name,
                self.stderr.lock().unwrap()
            );
        }
    }

    /// Waits until `done`; kills the client and fails the test after `limit`.
    fn wait(&mut self, what: &str, limit: Duration, mut done: impl FnMut(&mut App) -> bool) {
        let deadline = Instant::now() + limit;
        while !done(self) {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "{}: not {what} within {limit:?}: {}",
                    self.name,
                    self.stderr.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Ends the client with SIGTERM (a clean close: the producer flushes and reports, the
    /// consumer leaves its group) unless it ended by itself; its events.
    fn stop(mut self) -> Vec<Value> {
        if self.child.try_wait().ok().flatten().is_none() {
            let pid = self.child.id().to_string();
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid])
                .status();
        }
        self.end(Duration::from_secs(60))
    }

    /// Waits for the client to end by itself (`--max-messages`); its events.
    fn end(mut self, limit: Duration) -> Vec<Value> {
        self.wait("ended", limit, |app| {
            app.child.try_wait().ok().flatten().is_some()
        });
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        std::mem::take(&mut *self.events.lock().unwrap())
    }
}

/// The values of the events named `event` (`producer_send_success`, `record_data`).
fn values(events: &[Value], event: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["name"] == event)
        .map(|e| e["value"].as_str().expect("a value").to_string())
        .collect()
}

/// A VerifiableConsumer of `group` that prints every record, read_committed.
fn consumer(name: &str, bootstrap: &str, topic: &str, group: &str, max: Option<usize>) -> App {
    let config = common::scratch_dir().join("read-committed.properties");
    std::fs::write(&config, "isolation.level=read_committed\n").expect("consumer config");
    let max = max.map(|n| n.to_string());
    let mut args = vec![
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--group-id",
        group,
        "--verbose",
        "--command-config",
        config.to_str().expect("path"),
    ];
    if let Some(max) = &max {
        args.extend(["--max-messages", max]);
    }
    App::start(name, CONSUMER, &args)
}

/// Reads every record a group still has to read on `bootstrap` (`left` of them), then a
/// while longer to catch a record read twice; what it read.
fn read_rest(bootstrap: &str, topic: &str, group: &str, left: usize) -> Vec<String> {
    let mut c = consumer(
        &format!("{group} on {bootstrap}"),
        bootstrap,
        topic,
        group,
        None,
    );
    c.wait_for("record_data", left, Duration::from_secs(120));
    std::thread::sleep(Duration::from_secs(4));
    values(&c.stop(), "record_data")
}

/// Every acknowledged value read exactly once by a group, whatever side it read it on.
fn assert_exactly_once(group: &str, acked: &[String], reads: &[&[String]]) {
    let mut read: Vec<&String> = reads.iter().flat_map(|r| r.iter()).collect();
    let total = read.len();
    read.sort();
    let mut twice: Vec<&String> = read
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    twice.dedup();
    read.dedup();
    let mut want: Vec<&String> = acked.iter().collect();
    want.sort();
    let missing: Vec<&&String> = want
        .iter()
        .filter(|v| read.binary_search(v).is_err())
        .collect();
    let extra: Vec<&&String> = read
        .iter()
        .filter(|v| want.binary_search(v).is_err())
        .collect();
    let sides: Vec<usize> = reads.iter().map(|r| r.len()).collect();
    eprintln!(
        "{group}: {} acknowledged; read {total} ({sides:?} on each side in turn); missing {}, read twice {}, never acknowledged {}",
        acked.len(),
        missing.len(),
        twice.len(),
        extra.len()
    );
    assert!(
        missing.is_empty() && twice.is_empty() && extra.is_empty(),
        "{group}: missing {:?}, read twice {:?}, not acknowledged {:?}",
        &missing[..missing.len().min(10)],
        &twice[..twice.len().min(10)],
        &extra[..extra.len().min(10)]
    );
}

/// A source of `version` (ZooKeeper mode for 2.x and 3.x) and a 4.4.0 KRaft target.
fn clusters(version: &str) -> (Kafka, Kafka) {
    let zookeeper = version.starts_with("2.") || version.starts_with("3.");
    std::thread::scope(|s| {
        let b = s.spawn(|| Kafka::start_version("mig-b", "4.4.0", false, &[]));
        let a = Kafka::start_version("mig-a", version, zookeeper, &[]);
        (a, b.join().expect("start the 4.4.0 cluster"))
    })
}

fn run_migrate(args: &[&str]) -> kr::Run {
    let run = kr::run(args);
    eprintln!(
        "kreplicate {} → exit {}\n{}{}",
        args.join(" "),
        run.code,
        run.stderr,
        run.stdout
    );
    run
}

/// The whole move under `guarantee`, and back; the clients' figures on stderr.
fn move_and_back(a: &Kafka, b: &Kafka, guarantee: &str) {
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let tag = if guarantee == "exactly-once" {
        "eos"
    } else {
        "alo"
    };
    let topic = format!("orders-{tag}");
    let (billing, audit) = (format!("billing-{tag}"), format!("audit-{tag}"));
    let groups = format!("{billing},{audit}");
    common::create_topic(ab, &topic, 3);
    let migrate = |extra: &[&str]| {
        let mut args = vec![
            "migrate",
            "--from",
            ab,
            "--to",
            bb,
            "--topics",
            &topic,
            "--groups",
            &groups,
            "--guarantee",
            guarantee,
            "--create-topics",
            "--quiet-for",
            "3s",
            "--json",
        ];
        args.extend_from_slice(extra);
        run_migrate(&args)
    };
    let outcome = |run: &kr::Run| {
        run.json()["outcome"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };

    // The applications on A: a writer that goes on until stopped, billing reads 1,500
    // records and stops, audit reads all along.
    let mut writer = App::start(
        "writer on A",
        PRODUCER,
        &[
            "--bootstrap-server",
            ab,
            "--topic",
            &topic,
            "--throughput",
            "500",
            "--value-prefix",
            "1",
        ],
    );
    writer.wait_for("producer_send_success", 2000, Duration::from_secs(90));
    let billing_a = consumer("billing on A", ab, &topic, &billing, Some(1500));
    let mut audit_a = consumer("audit on A", ab, &topic, &audit, None);
    let billing_a = values(&billing_a.end(Duration::from_secs(90)), "record_data");
    audit_a.wait_for("record_data", 1500, Duration::from_secs(90));

    // Stages 1 and 2 while the writer writes; then migrate asks for the writers to stop.
    let first = migrate(&[]);
    assert_eq!(
        (first.code, outcome(&first).as_str()),
        (3, "waiting-for-writers"),
        "{}",
        first.stderr
    );
    assert!(first
        .stderr
        .contains(&format!("stop the producers writing to {topic} on '")));
    // A writer that does not stop: exit 3, its partitions named.
    let busy = migrate(&["--continue", "--writers-timeout", "8s"]);
    assert_eq!(
        (busy.code, outcome(&busy).as_str()),
        (3, "writers-active"),
        "{}",
        busy.stderr
    );
    let named = busy.json()["waiting_for"].to_string();
    assert!(named.contains(&format!("{topic}[")), "{named}");

    let acked_a = values(&writer.stop(), "producer_send_success");
    // The writers stopped; audit still reads: its group cannot move yet.
    let second = migrate(&["--continue"]);
    assert_eq!(
        (second.code, outcome(&second).as_str()),
        (3, "group-active"),
        "{}",
        second.stderr
    );
    assert!(
        second.json()["message"].to_string().contains(&audit),
        "{}",
        second.stdout
    );
    // audit reads to the end, commits, and stops.
    audit_a.wait_for("record_data", acked_a.len(), Duration::from_secs(90));
    std::thread::sleep(Duration::from_secs(2));
    let audit_a = values(&audit_a.stop(), "record_data");

    let done = migrate(&["--continue"]);
    assert_eq!(
        (done.code, outcome(&done).as_str()),
        (0, "done"),
        "{}",
        done.stderr
    );
    let moved = done.json()["groups"].to_string();
    assert!(
        moved.contains(&billing) && moved.contains(&audit),
        "{moved}"
    );
    let status = kr::run(&[
        "migrate", "status", "--from", ab, "--to", bb, "--topics", &topic,
    ]);
    assert!(status.stdout.contains("stage 6/6 done"), "{status:?}");

    // The applications on B: the writer writes 1,000 records; billing reads all but 300,
    // audit reads everything.
    let writer_b = App::start(
        "writer on B",
        PRODUCER,
        &[
            "--bootstrap-server",
            bb,
            "--topic",
            &topic,
            "--max-messages",
            "1000",
            "--value-prefix",
            "2",
        ],
    );
    let acked_b = values(
        &writer_b.end(Duration::from_secs(90)),
        "producer_send_success",
    );
    assert_eq!(acked_b.len(), 1000);
    let acked: Vec<String> = acked_a.iter().chain(&acked_b).cloned().collect();
    let billing_left = acked.len() - billing_a.len();
    let billing_b = consumer(
        "billing on B",
        bb,
        &topic,
        &billing,
        Some(billing_left - 300),
    );
    let billing_b = values(&billing_b.end(Duration::from_secs(120)), "record_data");
    let audit_b = read_rest(bb, &topic, &audit, acked.len() - audit_a.len());

    // Back to A: what was written on B, and both groups.
    let back = |extra: &[&str]| {
        let mut args = vec!["--failback"];
        args.extend_from_slice(extra);
        migrate(&args)
    };
    let asked = back(&[]);
    assert_eq!(
        (asked.code, outcome(&asked).as_str()),
        (3, "waiting-for-writers"),
        "{}",
        asked.stderr
    );
    let returned = back(&["--continue"]);
    assert_eq!(
        (returned.code, outcome(&returned).as_str()),
        (0, "done"),
        "{}",
        returned.stderr
    );
    let billing_back = read_rest(ab, &topic, &billing, 300);
    let audit_back = read_rest(ab, &topic, &audit, 0);

    eprintln!(
        "{guarantee}, {} → 4.4.0: the writer's acknowledged records on A {}, on B {}",
        a.version(),
        acked_a.len(),
        acked_b.len()
    );
    assert_exactly_once(&billing, &acked, &[&billing_a, &billing_b, &billing_back]);
    assert_exactly_once(&audit, &acked, &[&audit_a, &audit_b, &audit_back]);
}

#[test]
fn issue_42_migrate_moves_kafkas_own_clients_to_4_4_and_back() {
    let version = std::env::var("KREPLICATE_MIGRATE_FROM").unwrap_or_else(|_| "2.8.2".into());
    let guarantees =
        std::env::var("KREPLICATE_MIGRATE_GUARANTEES").unwrap_or_else(|_| "exactly-once".into());
    let (a, b) = clusters(&version);
    for g in guarantees.split(',') {
        move_and_back(&a, &b, g);
    }
}

/// Runs migrate and kills it with -9 once a line of its stderr contains `line` and then
/// `landed()` holds (looked at every 20 ms); what it printed until then.
fn kill_at(args: &[&str], line: &str, landed: impl Fn() -> bool) -> String {
    let mut child = kr::command(args)
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn kreplicate");
    let err = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(l) => {
                let found = l.contains(line);
                seen.push(l);
                if found {
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
            Err(_) => {
                let _ = child.kill();
                panic!("no line with {line:?}:\n{}", seen.join("\n"));
            }
        }
    }
    while !landed() {
        assert!(
            Instant::now() < deadline,
            "it never landed:\n{}",
            seen.join("\n")
        );
        assert!(
            child.try_wait().ok().flatten().is_none(),
            "it ended first:\n{}",
            seen.join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    kr::signal(&child, "KILL");
    let status = child.wait().expect("wait");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    let _ = reader.join();
    seen.extend(rx.try_iter());
    seen.join("\n")
}

#[test]
fn issue_42_migrate_resumes_after_a_kill_9_inside_each_stage() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("moved");
    let group = common::unique("app");
    common::create_topic(ab, &topic, 2);
    common::produce(ab, &topic, &kr::records(20_000, 2, "early"));
    common::commit(ab, &group, &topic, &[(0, 4000), (1, 6000)]);
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "migrate",
            "--from",
            ab,
            "--to",
            bb,
            "--topics",
            &topic,
            "--groups",
            &group,
            "--create-topics",
            "-v",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let target_records = || -> i64 {
        match kr::topics(bb).contains(&topic) {
            true => common::ends(bb, &topic, 2, "read_uncommitted").iter().sum(),
            false => 0,
        }
    };
    let resumed_at = |stage: &str, extra: &[&str], line: &str, landed: &dyn Fn(i64) -> bool| {
        let argv = args(extra);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let printed = kill_at(&argv, line, || landed(target_records()));
        eprintln!(
            "killed -9 after '{line}' with the target's end offsets at {} in all:\n{printed}",
            target_records()
        );
        let status = kr::run(&[
            "migrate", "status", "--from", ab, "--to", bb, "--topics", &topic,
        ]);
        assert!(
            status.stdout.contains(&format!(" {stage} since")),
            "after a kill in {stage}: {status:?}"
        );
    };
    // 1 planned: killed while it checks; nothing was stored yet.
    let argv = args(&[]);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let printed = kill_at(&argv, "at stage 1/6 planned", || true);
    eprintln!("killed -9 at stage 1/6 planned:\n{printed}");
    let status = kr::run(&[
        "migrate", "status", "--from", ab, "--to", bb, "--topics", &topic,
    ]);
    assert_eq!(status.code, 2, "nothing stored yet: {status:?}");
    // 2 copying: killed once the copy has written to the target.
    resumed_at("copying", &[], "stage 2/6 copying", &|n| n > 0);
    // The copy ends (the lag is under --max-lag), then it asks for the writers.
    let run = kr::run(&args(&[]).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("at stage 2/6 copying"),
        "{}",
        run.stderr
    );
    // The writers write 5,000 more, then stop: the drain has them to copy.
    common::produce(ab, &topic, &kr::records(5_000, 2, "late"));
    // 3 waiting for the writers: killed while it watches the ends.
    resumed_at(
        "waiting-for-writers",
        &["--continue", "--quiet-for", "30s"],
        "waiting until every source partition",
        &|_| true,
    );
    // 4 draining: killed once the drain has written some of the last records.
    let before = target_records();
    resumed_at(
        "draining",
        &["--continue", "--quiet-for", "2s"],
        "stage 4/6 draining",
        &|n| n > before,
    );
    // 5 verified: killed as it moves the groups.
    resumed_at("verified", &["--continue"], "stage 5/6 verified", &|_| true);
    let last = kr::run(
        &args(&["--continue"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(last.code, 0, "{}", last.stderr);
    assert!(
        last.stderr.contains("at stage 5/6 verified"),
        "{}",
        last.stderr
    );
    // Every record once (exactly-once: the killed transactions were aborted), the group where
    // it stood on A.
    let copied = common::read_all(bb, &topic);
    assert_eq!(copied.len(), 25_000);
    // The group's first record on B is the one it stood at on A (offsets differ: the killed
    // transactions were aborted, their markers and records take offsets on B).
    let source = common::read_all(ab, &topic);
    let positions = common::committed(bb, &group, &topic, 2);
    for (p, on_a) in [(0, 4000), (1, 6000)] {
        let next = |records: &[common::Got], from: i64| {
            records
                .iter()
                .find(|g| g.partition == p && g.offset >= from)
                .map(|g| g.value.clone())
        };
        assert_eq!(
            next(&copied, positions[p as usize]),
            next(&source, on_a),
            "partition {p}: B's position {} is not A's {on_a}",
            positions[p as usize]
        );
    }
    let verify = kr::run(&["verify", "--from", ab, "--to", bb, "--topics", &topic]);
    assert_eq!(verify.code, 0, "{}", verify.stderr);
}

#[test]
fn issue_42_migrate_refusals_move_nothing() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let migrate = |extra: &[&str]| {
        let mut args = vec![
            "migrate",
            "--from",
            ab,
            "--to",
            bb,
            "--create-topics",
            "--json",
        ];
        args.extend_from_slice(extra);
        run_migrate(&args)
    };
    let refused = |run: &kr::Run, words: &str| {
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert_eq!(run.json()["outcome"], "refused", "{}", run.stdout);
        let line = kr::told(&run.stderr);
        let error: Vec<&str> = line.lines().filter(|l| l.contains("error:")).collect();
        assert_eq!(error.len(), 1, "one error line: {line}");
        assert!(error[0].contains(words), "{words:?} in {}", error[0]);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    };

    // A target that already holds other records in the topic: refused at the plan, nothing
    // stored.
    let taken = common::unique("taken");
    common::create_topic(ab, &taken, 1);
    common::create_topic(bb, &taken, 1);
    common::produce(ab, &taken, &kr::records(100, 1, "a"));
    common::produce(bb, &taken, &kr::records(10, 1, "b"));
    let run = migrate(&["--topics", &taken]);
    refused(&run, "not copies");
    let status = kr::run(&[
        "migrate", "status", "--from", ab, "--to", bb, "--topics", &taken,
    ]);
    assert_eq!(status.code, 2, "nothing stored: {status:?}");

    // A topic deleted mid-move.
    let gone = common::unique("gone");
    common::create_topic(ab, &gone, 1);
    common::produce(ab, &gone, &kr::records(100, 1, "a"));
    let run = migrate(&["--topics", &gone]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    common::delete_topic(ab, &gone);
    let run = migrate(&["--topics", &gone, "--continue"]);
    refused(&run, &gone);
    refused(&run, "at stage 3/6 waiting-for-writers");

    // An id that belongs to another pair of clusters: the migration above, asked of a mock
    // source.
    let mock = kreplicate::mock::MockKafka::start(1).expect("mock cluster");
    mock.create_topic(&gone, 1).expect("mock topic");
    let mb = mock.bootstrap().expect("bootstrap");
    let mut args = vec![
        "migrate",
        "--from",
        mb.as_str(),
        "--to",
        bb,
        "--topics",
        &gone,
        "--json",
    ];
    args.push("--continue");
    let run = run_migrate(&args);
    refused(&run, "belongs to the clusters");
    // The stored migration is where it was.
    let status = kr::run(&[
        "migrate", "status", "--from", ab, "--to", bb, "--topics", &gone,
    ]);
    assert!(
        status.stdout.contains("waiting-for-writers since"),
        "{status:?}"
    );
}

/// A signal while no stage can stop cleanly (here the run waits for an unreachable source
/// before its plan) ends the run at once, with its `--json` line (outcome `stopped`) and exit
/// 130. A first signal there was noted only once the wait ended (up to `--timeout`), and a
/// second exited with no line on stdout for the script that reads it.
#[test]
fn issue_42_a_signal_before_a_stage_can_stop_exits_at_once_with_its_json_line() {
    let (from, to) = (kr::closed_address(), kr::closed_address());
    let args = [
        "migrate",
        "--from",
        &from,
        "--to",
        &to,
        "--topics",
        "t",
        "--json",
        "--timeout",
        "60s",
    ];
    let mut child = kr::spawn(&args);
    let err = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    // The wait's notice: the signals are watched by then.
    let notice = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("a notice while it waits for the source");
    assert!(notice.contains("retrying"), "{notice}");
    let sent = Instant::now();
    kr::signal(&child, "TERM");
    let run = kr::wait(child, Duration::from_secs(10));
    let _ = reader.join();
    let took = sent.elapsed();
    eprintln!(
        "evidence: SIGTERM after '{notice}': exit {} after {took:?}",
        run.code
    );
    assert_eq!(run.code, 130, "{run:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    let json = run.json();
    assert_eq!(json["outcome"], "stopped", "{}", run.stdout);
    assert_eq!(json["exit"], 130, "{}", run.stdout);
    assert_eq!(json["from"], from.as_str(), "{}", run.stdout);
}
