//! Issue 22, "while it works": what a run says while it copies, waits, or stalls, and what it
//! leaves for monitoring.

use std::time::{Duration, Instant};

use crate::common::kr;
use crate::common::{self, Kafka};

/// A target frozen mid-copy: the run warns at half of `--delivery-timeout` (long before it
/// fails), the metrics show the records in flight and the growing age of the oldest, and
/// `/healthz` stays 200 until the stall passes `--delivery-timeout`, as documented.
#[test]
fn issue_22_a_target_that_stops_acknowledging_is_warned_about_and_measured() {
    let a = Kafka::shared("a");
    let mut b = Kafka::start("frozen-target");
    let topic = common::unique("acks");
    common::create_topic(&a.bootstrap, &topic, 2);
    common::create_topic(&b.bootstrap, &topic, 2);
    common::produce(&a.bootstrap, &topic, &kr::records(200, 2, "before"));
    let writer = kr::Writer::start(&a.bootstrap, &topic, 2);
    let addr = format!("127.0.0.1:{}", common::free_port());
    let child = kr::spawn(&[
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--group",
        &topic,
        "--shard",
        "1/1",
        "--delivery-timeout",
        "10s",
        "--metrics-addr",
        &addr,
    ]);
    common::wait_until("200 records copied", Duration::from_secs(60), || {
        kr::metric(&addr, "kreplicate_records_copied_total").unwrap_or(0.0) >= 200.0
    });
    b.freeze();
    let frozen = Instant::now();
    // (seconds since the freeze, records in flight, age of the oldest, /healthz status)
    let mut seen: Vec<(f64, f64, f64, u16)> = Vec::new();
    // Until the run ends (its server goes away) or the oldest record waited 8 s.
    while let Ok((_, text)) = common::http_get(&format!("http://{addr}/metrics")) {
        let value = |m: &str| common::scraped(&text, m).first().map_or(-1.0, |s| s.1);
        let (in_flight, age) = (
            value("kreplicate_records_in_flight"),
            value("kreplicate_oldest_unacknowledged_seconds"),
        );
        let health = common::http_get(&format!("http://{addr}/healthz")).map_or(0, |r| r.0);
        seen.push((frozen.elapsed().as_secs_f64(), in_flight, age, health));
        if age >= 8.0 {
            break;
        }
        assert!(frozen.elapsed() < Duration::from_secs(60), "{seen:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
    let run = kr::wait(child, Duration::from_secs(90));
    drop(writer);
    b.thaw();
    assert_eq!(run.code, 1, "a frozen target fails the run: {run:?}");
    // The metrics: records wait, and the oldest of them ages with the freeze. Answers already
    // on their way when the broker stopped still arrive for a moment (CI once saw the oldest
    // age drop from 0.15 s to 0.09 s between the first two samples): watch from 0.5 s on.
    let waiting: Vec<_> = seen
        .iter()
        .filter(|s| s.0 >= 0.5 && s.1 > 0.0 && s.2 > 0.0)
        .collect();
    assert!(waiting.len() >= 3, "{seen:?}");
    assert!(
        waiting.windows(2).all(|w| w[1].2 >= w[0].2),
        "the age grows: {seen:?}"
    );
    let (first, last) = (waiting[0], waiting[waiting.len() - 1]);
    assert!(last.2 - first.2 >= 1.0, "{seen:?}");
    assert!(
        last.2 <= last.0 + 1.0,
        "no older than the freeze (plus a tick): {seen:?}"
    );
    // /healthz: 200 while the stall is shorter than --delivery-timeout.
    assert!(
        seen.iter().filter(|s| s.2 < 9.0).all(|s| s.3 == 200),
        "{seen:?}"
    );
    // The warning, once, before the run's error.
    let warning = regex::Regex::new(
        r"kreplicate: warning: target has not acknowledged ([\d,]+) records? for (\d+) s \(a record not acknowledged within --delivery-timeout 10s fails the run\)",
    )
    .expect("regex");
    let warned: Vec<_> = warning.captures_iter(&run.stderr).collect();
    assert_eq!(warned.len(), 1, "once per stall: {}", run.stderr);
    let records: u64 = warned[0][1].replace(',', "").parse().expect("count");
    let waited: u64 = warned[0][2].parse().expect("seconds");
    assert!(records > 0 && (5..10).contains(&waited), "{}", run.stderr);
    let at = |needle: &str| run.stderr.find(needle);
    assert!(
        at("target has not acknowledged") < at("kreplicate: error:") && at("error:").is_some(),
        "{}",
        run.stderr
    );
}

/// A target that refuses connections at start: while the run waits (`--timeout`), it says every
/// few seconds what it waits for and why, counting down; then the one-line error, exit 1, and
/// no summary line for a run that never started.
#[test]
fn issue_22_waiting_for_a_broker_at_start_says_what_it_waits_for() {
    let a = Kafka::shared("a");
    let topic = common::unique("wait");
    common::create_topic(&a.bootstrap, &topic, 1);
    let closed = kr::closed_address();
    let run = kr::run(&[
        "--from",
        &a.bootstrap,
        "--to",
        &closed,
        "--topics",
        &topic,
        "--timeout",
        "6s",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let waiting = regex::Regex::new(&format!(
        r"kreplicate: target {}: connection refused, retrying, (\d+) s left$",
        regex::escape(&closed)
    ))
    .expect("regex");
    let lines: Vec<&str> = run.stderr.lines().collect();
    // Time-stamped (stderr is not a terminal): the line is what follows the stamp.
    let left: Vec<u64> = lines
        .iter()
        .filter_map(|l| waiting.captures(l))
        .map(|c| c[1].parse().expect("seconds"))
        .collect();
    assert!(left.len() >= 2, "{}", run.stderr);
    assert!(
        left.windows(2).all(|w| w[1] < w[0]) && left.iter().all(|&s| (1..=5).contains(&s)),
        "a decreasing count within --timeout: {left:?}"
    );
    let last = lines.last().copied().unwrap_or_default();
    assert!(
        last.starts_with("kreplicate: error: cannot reach the target cluster")
            && last.contains("within 6s: connection refused ("),
        "{}",
        run.stderr
    );
    // Besides: the display's phase, as a time-stamped line per --commit-interval.
    let others: Vec<&&str> = lines
        .iter()
        .filter(|l| {
            !waiting.is_match(l) && !l.ends_with("kreplicate: checking clusters and topics…")
        })
        .collect();
    assert_eq!(
        others,
        [&last],
        "the waiting lines and the error, no summary: {}",
        run.stderr
    );
    assert!(!run.stderr.contains("copied 0 records"), "{}", run.stderr);
}

/// `--metrics-file` holds the time of the last successful run, for "no successful copy for 2 h":
/// set by a run with nothing to copy and by one with records, under both engines, and kept
/// by a run that fails.
#[test]
fn issue_22_the_metrics_file_keeps_the_time_of_the_last_successful_run() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs_f64()
    };
    for guarantee in ["at-least-once", "exactly-once"] {
        let topic = common::unique("success");
        common::create_topic(&a.bootstrap, &topic, 2);
        common::create_topic(&b.bootstrap, &topic, 2);
        let file = common::scratch_dir().join(format!("{topic}.prom"));
        let file_arg = file.display().to_string();
        let last = || {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let status = common::scraped(&text, "kreplicate_status")
                .into_iter()
                .find(|(_, v)| *v == 1.0)
                .map(|(l, _)| l["status"].clone());
            let success = common::scraped(&text, "kreplicate_last_success_timestamp_seconds")
                .first()
                .map(|s| s.1);
            (status, success)
        };
        let extra = ["--metrics-file", file_arg.as_str()];
        let copy = || {
            let before = now();
            let run = kr::run(&kr::caught_up_args(
                &a.bootstrap,
                &b.bootstrap,
                &topic,
                &topic,
                guarantee,
                &extra,
            ));
            assert_eq!(run.code, 0, "{guarantee}: {run:?}");
            let (status, success) = last();
            assert_eq!(status.as_deref(), Some("ok"), "{guarantee}");
            let success = success.unwrap_or_else(|| panic!("{guarantee}: no last success"));
            assert!(
                (before..=now()).contains(&success),
                "{guarantee}: {success} not within the run"
            );
            (run.json()["records"].as_u64(), success)
        };
        let (records, empty) = copy();
        assert_eq!(records, Some(0), "{guarantee}: nothing to copy");
        common::produce(&a.bootstrap, &topic, &kr::records(100, 2, "s"));
        let (records, copied) = copy();
        assert_eq!(records, Some(100), "{guarantee}");
        assert!(copied > empty, "{guarantee}");
        // A run that fails leaves the last success where it was.
        let closed = kr::closed_address();
        let failed = kr::run(&[
            "--from",
            &a.bootstrap,
            "--to",
            &closed,
            "--topics",
            &topic,
            "--guarantee",
            guarantee,
            "--timeout",
            "1s",
            "--metrics-file",
            &file_arg,
        ]);
        assert_eq!(failed.code, 1, "{guarantee}: {failed:?}");
        assert_eq!(
            last(),
            (Some("failed".to_string()), Some(copied)),
            "{guarantee}"
        );
    }
}

/// A run on a pseudo-terminal (script(1) from util-linux), its output read as it comes.
struct Tty {
    child: std::process::Child,
    out: std::sync::Arc<std::sync::Mutex<String>>,
    /// kreplicate's own process id (the shell execs it).
    pid: u32,
}

impl Tty {
    fn spawn(args: &[&str]) -> Tty {
        use std::io::Read;
        let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
        let cmd = format!(
            "echo PID $$; exec {} {}",
            env!("CARGO_BIN_EXE_kreplicate"),
            quoted.join(" ")
        );
        let mut child = std::process::Command::new("script")
            .args(["-qfec", &cmd, "/dev/null"])
            .env_remove("KREPLICATE_CONFIG")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("script(1) from util-linux");
        let out = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (mut stdout, into) = (child.stdout.take().expect("stdout"), out.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stdout.read(&mut buf) {
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                into.lock().expect("output").push_str(&text);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        let pid = loop {
            let text = out.lock().expect("output").clone();
            if let Some(pid) = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("PID "))
                .and_then(|p| p.trim().parse().ok())
            {
                break pid;
            }
            assert!(Instant::now() < deadline, "no PID line: {text:?}");
            std::thread::sleep(Duration::from_millis(20));
        };
        Tty { child, out, pid }
    }

    fn text(&self) -> String {
        self.out.lock().expect("output").clone()
    }

    /// Waits until the display shows figures that pass `ok`; returns them all.
    fn wait_for(&self, what: &str, ok: impl Fn(&[Figures]) -> bool) -> Vec<Figures> {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let text = self.text();
            let figures = Figures::all(&text);
            if ok(&figures) {
                return figures;
            }
            assert!(Instant::now() < deadline, "{what}: {figures:#?}\n{text:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn signal(&self, sig: &str) {
        let ok = std::process::Command::new("kill")
            .args([&format!("-{sig}"), &self.pid.to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill -{sig}");
    }

    /// Waits for the run to end; its whole output.
    fn finish(mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(90);
        while self.child.try_wait().expect("wait").is_none() {
            // What the run printed so far says where it hung.
            assert!(Instant::now() < deadline, "{}", self.text());
            std::thread::sleep(Duration::from_millis(50));
        }
        // The reader thread drains what is left.
        std::thread::sleep(Duration::from_millis(200));
        self.text()
    }
}

/// One redraw of the progress line.
#[derive(Debug, Clone, PartialEq)]
struct Figures {
    records: u64,
    size: String,
    per_sec: u64,
    to_go: Option<u64>,
    unacknowledged: u64,
    committed: Option<(u64, u64)>,
}

impl Figures {
    /// Every redraw in a terminal's output, in order.
    fn all(tty: &str) -> Vec<Figures> {
        let ansi = regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").expect("regex");
        let line = regex::Regex::new(
            r"([\d,]+) records  (\d+(?:\.\d)? [KMGTP]?B)  ([\d,]+)/s(?:  ([\d,]+) to go)?(?:  ([\d,]+) unacknowledged)?(?:  committed (\d+)/(\d+) partitions)?",
        )
        .expect("regex");
        let n = |s: &str| s.replace(',', "").parse::<u64>().expect("number");
        let plain = ansi.replace_all(tty, "\n");
        plain
            .split(['\r', '\n'])
            .filter_map(|l| line.captures(l))
            .map(|c| Figures {
                records: n(&c[1]),
                size: c[2].to_string(),
                per_sec: n(&c[3]),
                to_go: c.get(4).map(|m| n(m.as_str())),
                unacknowledged: c.get(5).map_or(0, |m| n(m.as_str())),
                // An 80-column terminal may cut the end of the line.
                committed: c
                    .get(6)
                    .zip(c.get(7))
                    .map(|(x, y)| (n(x.as_str()), n(y.as_str()))),
            })
            .collect()
    }
}

/// A throttled copy on a terminal: records to go fall steadily (never jump up), the rate is
/// the throttle's and falls to 0/s once idle, sizes read in KB, and the partitions an earlier
/// run committed count as committed from the start.
#[test]
fn issue_22_the_progress_figures_of_a_throttled_copy_on_a_terminal() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("figures");
    common::create_topic(&a.bootstrap, &topic, 2);
    common::create_topic(&b.bootstrap, &topic, 2);
    common::produce(&a.bootstrap, &topic, &kr::records(100, 2, "earlier"));
    let first = kr::run(&kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &topic,
        "at-least-once",
        &[],
    ));
    assert_eq!(first.code, 0, "{first:?}");
    common::produce(&a.bootstrap, &topic, &kr::records(800, 2, "now"));
    let mut args = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--group",
        &topic,
        "--shard",
        "1/1",
        "--max-records-per-sec",
        "100",
        // No commit of this run's before the end: "committed" shows the earlier run's.
        "--commit-interval",
        "10m",
    ];
    args.extend_from_slice(&kr::FAST_GROUP);
    let tty = Tty::spawn(&args);
    let seen = tty.wait_for("copied everything, then idle at 0/s", |f| {
        f.iter().any(|f| f.records == 800 && f.per_sec == 0)
    });
    tty.signal("INT");
    let out = tty.finish();
    assert!(
        out.contains("kreplicate: stopped: copied 800 records (") && out.contains(" KB)"),
        "{out:?}"
    );
    let copying: Vec<&Figures> = seen.iter().filter(|f| f.records < 800).collect();
    assert!(copying.len() >= 10, "{seen:#?}");
    for f in &seen {
        assert!(
            f.committed.is_none_or(|c| c == (2, 2)),
            "the earlier run's commits: {f:?}"
        );
        assert!(f.size.ends_with(" KB") || f.size.ends_with(" B"), "{f:?}");
    }
    // Records to go: from 800 down to 0, never up.
    let to_go: Vec<u64> = seen.iter().filter_map(|f| f.to_go).collect();
    assert!(to_go.windows(2).all(|w| w[1] <= w[0]), "{to_go:?}");
    assert!(
        to_go.first().is_some_and(|&n| n > 400) && to_go.last() == Some(&0),
        "{to_go:?}"
    );
    // The rate is the throttle's while copying (once 5 s of it are in the window).
    let late: Vec<u64> = copying
        .iter()
        .filter(|f| (500..750).contains(&f.records))
        .map(|f| f.per_sec)
        .collect();
    assert!(!late.is_empty(), "{seen:#?}");
    assert!(late.iter().all(|r| (60..=140).contains(r)), "{late:?}");
}

/// A target frozen mid-copy, on a terminal: the records waiting for it are shown, and counted
/// in the records to go (which said "0 to go" while they waited).
#[test]
fn issue_22_the_progress_figures_show_what_waits_behind_a_frozen_target() {
    let a = Kafka::shared("a");
    let mut b = Kafka::start("figures-frozen");
    let topic = common::unique("figures-frozen");
    common::create_topic(&a.bootstrap, &topic, 2);
    common::create_topic(&b.bootstrap, &topic, 2);
    common::produce(&a.bootstrap, &topic, &kr::records(200, 2, "before"));
    let mut args = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--group",
        &topic,
        "--shard",
        "1/1",
        "--delivery-timeout",
        "20s",
    ];
    args.extend_from_slice(&kr::FAST_GROUP);
    let tty = Tty::spawn(&args);
    tty.wait_for("copied the first records", |f| {
        f.iter().any(|f| f.records == 200)
    });
    b.freeze();
    common::produce(&a.bootstrap, &topic, &kr::records(300, 2, "frozen"));
    let seen = tty.wait_for("300 records waiting for the frozen target", |f| {
        f.iter()
            .any(|f| f.unacknowledged == 300 && f.to_go == Some(300))
    });
    tty.signal("KILL");
    let _ = tty.finish();
    b.thaw();
    // From the freeze on (the first 200 were acknowledged before it), nothing more is.
    for f in seen.iter().skip_while(|f| f.records < 200) {
        assert_eq!(f.records, 200, "nothing acknowledged while frozen: {f:?}");
    }
}

/// Issue 41, item 13: a run that cannot reach its end because a source transaction is open
/// says which partition waits, where its readable records end and since when, and says when
/// the transaction ended; the JSON reports the wait. Such a cron run waited a minute in
/// silence ("0/s 105 to go").
fn behind_an_open_source_transaction(guarantee: &str) {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let t = &common::unique("open-src");
    common::create_topic(ab, t, 1);
    common::create_topic(bb, t, 1);
    common::produce(ab, t, &kr::records(20, 1, "before"));
    let open = common::open_transaction(ab, t, 0);
    common::produce(ab, t, &kr::records(100, 1, "after"));
    let (stable, high) = common::stable_and_high(ab, t, 0);
    let g = &format!("{t}.g");
    let mut run = kr::Watched::spawn(&kr::caught_up_args(ab, bb, t, g, guarantee, &[]));
    let waits = "waits behind a transaction open";
    run.wait_for(waits, Duration::from_secs(60), |s| s.contains(waits));
    let said = run.said();
    let said = said.lines().find(|l| l.contains(waits)).unwrap_or_default();
    eprintln!("evidence: stable {stable}, high {high}: {said}");
    assert!(
        said.contains(&format!("{t}[0]"))
            && said.contains(&format!("readable up to offset {stable}"))
            && said.contains(&format!("its end {high}")),
        "{said}"
    );
    std::thread::sleep(Duration::from_secs(1));
    rdkafka::producer::Producer::abort_transaction(&open, common::DEFAULT_TIMEOUT).expect("abort");
    let ended = "the source transaction ended after";
    run.wait_for(ended, Duration::from_secs(60), |s| s.contains(ended));
    let run = run.wait(Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    let part = &json["partitions"][0];
    assert_eq!(
        (&json["records"], &part["lag"]),
        (&120.into(), &0.into()),
        "{json}"
    );
    let waited = part["waited_for_source_transaction_seconds"]
        .as_f64()
        .expect("the wait reported");
    assert!(waited >= 1.0, "{json}");
}

#[test]
fn issue_41_a_run_behind_an_open_source_transaction_says_what_it_waits_for() {
    behind_an_open_source_transaction("at-least-once");
}

#[test]
fn issue_41_an_exactly_once_run_behind_an_open_source_transaction_says_what_it_waits_for() {
    behind_an_open_source_transaction("exactly-once");
}

/// Issue 44: `/readyz` for a Kubernetes readiness probe. Ready (and `kreplicate_ready` 1) once
/// the run holds its partitions and copies; a frozen target turns it off once the oldest
/// record has waited half of `--delivery-timeout` (the reason names the target), and back on
/// after the thaw; whatever it answered before it first held partitions was "not ready" with
/// a reason. SIGTERM then ends the run with exit 0.
#[test]
fn issue_44_readiness_goes_off_with_a_frozen_target_and_back_on() {
    let a = Kafka::shared("a");
    let mut b = Kafka::start("readyz-target");
    let topic = common::unique("ready");
    common::create_topic(&a.bootstrap, &topic, 2);
    common::create_topic(&b.bootstrap, &topic, 2);
    common::produce(&a.bootstrap, &topic, &kr::records(200, 2, "before"));
    let writer = kr::Writer::start(&a.bootstrap, &topic, 2);
    let addr = format!("127.0.0.1:{}", common::free_port());
    let args = kr::Args::copy(&a.bootstrap, &b.bootstrap)
        .topics(&topic)
        .group(&topic)
        .with(&["--delivery-timeout", "30s", "--metrics-addr", &addr])
        .build();
    let child = kr::spawn(&args);
    let readyz = || common::http_get(&format!("http://{addr}/readyz")).ok();
    let ready_gauge = || kr::metric(&addr, "kreplicate_ready");
    // Before it holds partitions: every answer is 503 with a reason.
    let mut before = Vec::new();
    common::wait_until("/readyz ready", Duration::from_secs(60), || {
        match readyz() {
            Some((200, body)) => return body == "ready\n",
            Some(answer) => before.push(answer),
            None => {}
        }
        std::thread::sleep(Duration::from_millis(20));
        false
    });
    assert!(
        before
            .iter()
            .all(|(code, body)| *code == 503 && body.starts_with("not ready: ")),
        "{before:?}"
    );
    assert_eq!(ready_gauge(), Some(1.0));
    assert!(kr::metric(&addr, "kreplicate_assigned_partitions").unwrap_or(0.0) > 0.0);

    b.freeze();
    let frozen = Instant::now();
    let mut off = None;
    common::wait_until("/readyz off", Duration::from_secs(40), || {
        off = readyz().filter(|(code, _)| *code == 503);
        off.is_some()
    });
    let went_off = frozen.elapsed();
    assert_eq!(ready_gauge(), Some(0.0));
    b.thaw();
    let (_, why) = off.unwrap_or_default();
    assert!(
        why.starts_with("not ready: the target has not acknowledged ") && why.ends_with(" s\n"),
        "{why}"
    );
    // Half of --delivery-timeout, from records sent just before the freeze.
    assert!(
        (Duration::from_secs(14)..Duration::from_secs(25)).contains(&went_off),
        "off {went_off:?} after the freeze"
    );
    common::wait_until("/readyz back on", Duration::from_secs(30), || {
        readyz().is_some_and(|(code, _)| code == 200)
    });
    assert_eq!(ready_gauge(), Some(1.0));
    eprintln!(
        "evidence: ready after {} not-ready answers ({:?}); frozen target: {} after {went_off:?}; back on after the thaw",
        before.len(),
        before.first().map(|(_, b)| b.trim()),
        why.trim()
    );
    kr::signal(&child, "TERM");
    let run = kr::wait(child, Duration::from_secs(60));
    drop(writer);
    assert_eq!(run.code, 0, "{run:?}");
}
