//! Live metrics (issue 10): `--metrics-addr` scraped by a real Prometheus server, and
//! `--metrics-file` read by a real node_exporter's textfile collector.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::common::kr;
use crate::common::{self, Kafka, NodeExporter, Prometheus, Rec};

/// Per source partition: the value of each sample.
fn by_partition(samples: &[common::monitor::Sample]) -> BTreeMap<i64, f64> {
    samples
        .iter()
        .map(|(labels, v)| (labels["partition"].parse().expect("partition"), *v))
        .collect()
}

/// What kreplicate itself serves at `path`.
fn served(addr: &str, path: &str) -> (u16, String) {
    common::http_get(&format!("http://{addr}{path}")).expect("kreplicate's metrics server")
}

fn local_addr() -> String {
    format!("127.0.0.1:{}", common::free_port())
}

#[test]
fn issue_10_prometheus_scrapes_records_copied_and_lag_matching_the_run() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("metrics");
    let m = &format!("{n}.m");
    let g = &format!("{n}.metrics");
    common::create_topic(&a.bootstrap, m, 3);
    common::create_topic(&b.bootstrap, m, 3);
    common::produce(&a.bootstrap, m, &kr::records(3000, 3, m));
    let addr = local_addr();
    let file = NodeExporter::dir().join("kreplicate.prom");
    let file_arg = file.display().to_string();
    let mut args = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        m,
        "--group",
        g,
        "--json",
        "--commit-interval",
        "300ms",
        "--metrics-addr",
        &addr,
        "--metrics-file",
        &file_arg,
        "--metrics-file-interval",
        "500ms",
    ];
    args.extend_from_slice(&kr::FAST_GROUP);
    let spawned = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64();
    let child = kr::spawn(&args);

    let prometheus = Prometheus::start(&addr);
    let copied = prometheus.wait_for("kreplicate_records_copied_total", |s| {
        s.len() == 3 && s.iter().map(|(_, v)| v).sum::<f64>() == 3000.0
    });
    let lag = prometheus.wait_for("kreplicate_lag_records", |s| {
        s.len() == 3 && s.iter().all(|(_, v)| *v == 0.0)
    });
    let ends = prometheus.wait_for("kreplicate_source_end_offset", |s| s.len() == 3);
    let bytes = prometheus.query("sum(kreplicate_bytes_copied_total)");
    assert!(bytes[0].1 > 0.0, "{bytes:?}");
    let running = prometheus.query("kreplicate_status{status=\"running\"}");
    assert_eq!(running[0].1, 1.0, "{running:?}");
    let (status, body) = served(&addr, "/healthz");
    assert_eq!((status, body.as_str()), (200, "ok\n"));
    // The file is rewritten while the run goes on (its first write, at start, counted 0).
    common::wait_until(
        "the metrics file rewritten",
        Duration::from_secs(10),
        || {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let copied: f64 = common::scraped(&text, "kreplicate_records_copied_total")
                .iter()
                .map(|s| s.1)
                .sum();
            let running = common::scraped(&text, "kreplicate_status")
                .iter()
                .any(|(l, v)| l["status"] == "running" && *v == 1.0);
            copied == 3000.0 && running
        },
    );
    let (status, _) = served(&addr, "/nothing-here");
    assert_eq!(status, 404);
    // Issue 41, item 12: the metrics no test read. A healthy copy of records that came from
    // no target skips none and sends no produce request again.
    let last = prometheus.wait_for("kreplicate_last_copied_offset", |s| s.len() == 3);
    let one = |metric: &str| prometheus.wait_for(metric, |s| s.len() == 1)[0].1;
    let started = one("kreplicate_start_time_seconds");
    assert!(
        (started - spawned).abs() < 5.0,
        "start_time_seconds {started}, spawned at {spawned}"
    );
    assert_eq!(one("kreplicate_skipped_records_total"), 0.0);
    assert_eq!(one("kreplicate_delivery_retries_total"), 0.0);

    kr::signal(&child, "TERM");
    let run = kr::wait(child, Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    let (copied, lag, ends, last) = (
        by_partition(&copied),
        by_partition(&lag),
        by_partition(&ends),
        by_partition(&last),
    );
    let partitions = json["partitions"].as_array().expect("partitions");
    assert_eq!(partitions.len(), 3, "{json}");
    for p in partitions {
        let n = p["partition"].as_i64().expect("partition");
        assert_eq!(
            copied[&n],
            p["records"].as_f64().expect("records"),
            "{json}"
        );
        assert_eq!(lag[&n], p["lag"].as_f64().expect("lag"), "{json}");
        assert_eq!(
            last[&n],
            p["last_offset"].as_f64().expect("last_offset"),
            "{json}"
        );
        assert_eq!(ends[&n], p["end_offset"].as_f64().expect("end"), "{json}");
    }
    // And against the brokers, not only the run's own JSON: what B holds, where A ends, and
    // the group's committed positions there.
    let (src, dst) = (
        common::read_all(&a.bootstrap, m),
        common::read_all(&b.bootstrap, m),
    );
    let committed = common::committed(&a.bootstrap, g, m, 3);
    for p in 0..3 {
        let on_b = dst.iter().filter(|g| g.partition == p).count() as f64;
        let end = src
            .iter()
            .filter(|g| g.partition == p)
            .map(|g| g.offset + 1)
            .max()
            .unwrap_or(0);
        assert_eq!(copied[&(p as i64)], on_b, "records copied to partition {p}");
        assert_eq!(ends[&(p as i64)], end as f64, "end offset of partition {p}");
        assert_eq!(
            committed[p as usize], end,
            "committed position of partition {p}"
        );
    }
}

/// A run that fails part-way (the target producer refuses one record) leaves a metrics file
/// whose lag and records match its JSON, and node_exporter serves them.
#[test]
fn issue_10_node_exporter_reads_the_metrics_file_of_a_failed_run() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("textfile");
    let f = &format!("{n}.f");
    let g = &format!("{n}.textfile");
    common::create_topic(&a.bootstrap, f, 1);
    common::create_topic(&b.bootstrap, f, 1);
    let mut recs = kr::records(50, 1, "before");
    recs.push(Rec {
        partition: 0,
        value: Some(vec![b'x'; 30_000]),
        ..Rec::default()
    });
    recs.extend(kr::records(49, 1, "after"));
    common::produce(&a.bootstrap, f, &recs);
    let dir = NodeExporter::dir();
    let file = dir.join("kreplicate.prom");
    let file_arg = file.display().to_string();
    let run = kr::run(&kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        f,
        g,
        "at-least-once",
        &[
            "--to-property",
            "message.max.bytes=20000",
            "--metrics-file",
            &file_arg,
        ],
    ));
    assert_eq!(run.code, 1, "{run:?}");
    let json = run.json();
    let p = &json["partitions"][0];
    assert_eq!(
        (p["committed"].as_i64(), p["lag"].as_i64()),
        (Some(50), Some(50)),
        "{json}"
    );

    let exporter = NodeExporter::start(&dir);
    let text = exporter.metrics();
    let one = |metric: &str, want: Option<(&str, &str)>| -> f64 {
        let samples = common::scraped(&text, metric);
        let hit: Vec<_> = samples
            .iter()
            .filter(|(l, _)| want.is_none_or(|(k, v)| l.get(k).map(String::as_str) == Some(v)))
            .collect();
        assert_eq!(hit.len(), 1, "{metric} {want:?} in:\n{text}");
        hit[0].1
    };
    assert_eq!(one("node_textfile_scrape_error", None), 0.0, "{text}");
    assert_eq!(one("kreplicate_lag_records", Some(("topic", f))), 50.0);
    assert_eq!(
        one("kreplicate_records_copied_total", Some(("partition", "0"))),
        p["records"].as_f64().expect("records")
    );
    assert_eq!(one("kreplicate_committed_offset", Some(("topic", f))), 50.0);
    assert_eq!(one("kreplicate_status", Some(("status", "failed"))), 1.0);
    assert_eq!(one("kreplicate_status", Some(("status", "running"))), 0.0);
    assert_eq!(
        one("kreplicate_delivery_errors_total", None),
        0.0,
        "refused at send, never delivered"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(
        leftovers,
        ["kreplicate.prom"],
        "no temporary file left behind"
    );
}

/// /healthz turns 503 once records wait and nothing moved for longer than --delivery-timeout
/// (here: the source broker hangs mid-copy), and 200 again once the copy moves.
#[test]
fn issue_10_healthz_fails_after_a_stall_longer_than_the_delivery_timeout() {
    let (mut a, b) = Kafka::pair("stall-a", "stall-b");
    common::create_topic(&a.bootstrap, "s", 1);
    common::create_topic(&b.bootstrap, "s", 1);
    // 300 MB, fetched 1 MB at a time: the copy takes a few seconds, and the source holds
    // most of it when it hangs.
    let value = vec![b'v'; 1000];
    let recs: Vec<Rec> = (0..300_000)
        .map(|_| Rec {
            partition: 0,
            value: Some(value.clone()),
            ..Rec::default()
        })
        .collect();
    common::produce(&a.bootstrap, "s", &recs);
    drop(recs);
    let addr = local_addr();
    let child = kr::spawn(&[
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        "s",
        "--group",
        "stall",
        "--shard",
        "1/1",
        "--delivery-timeout",
        "2s",
        "--from-property",
        "queued.max.messages.kbytes=1024",
        "--from-property",
        "fetch.max.bytes=1048576",
        "--metrics-addr",
        &addr,
    ]);
    // 0 until the server listens.
    let copied = || {
        let text =
            common::http_get(&format!("http://{addr}/metrics")).map_or(String::new(), |r| r.1);
        common::scraped(&text, "kreplicate_records_copied_total")
            .first()
            .map_or(0.0, |s| s.1)
    };
    common::wait_until("a first record copied", Duration::from_secs(60), || {
        copied() >= 1.0
    });
    a.freeze();
    let before = copied();
    assert!(
        before < 300_000.0,
        "the copy finished before the source hung"
    );
    let frozen = Instant::now();
    let mut answers = Vec::new();
    let turned = loop {
        let (status, body) = served(&addr, "/healthz");
        answers.push((frozen.elapsed().as_millis(), status));
        if status == 503 {
            break body;
        }
        assert!(frozen.elapsed() < Duration::from_secs(20), "{answers:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(frozen.elapsed() >= Duration::from_secs(2), "{answers:?}");
    assert!(turned.contains("stalled"), "{turned}");
    let (_, text) = served(&addr, "/metrics");
    let stalled = common::scraped(&text, "kreplicate_stalled_seconds");
    assert!(stalled[0].1 > 2.0, "{stalled:?}");

    a.thaw();
    common::wait_until(
        "healthy again after the source came back",
        Duration::from_secs(30),
        || served(&addr, "/healthz").0 == 200,
    );
    assert!(copied() > before);
    kr::signal(&child, "TERM");
    let run = kr::wait(child, Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
}

/// A taken port or an unwritable file: one line, exit 2, before anything is copied.
#[test]
fn issue_10_a_taken_metrics_port_or_unwritable_file_is_a_usage_error_before_copying() {
    let (a, b) = Kafka::pair("metrics-bad-a", "metrics-bad-b");
    common::create_topic(&a.bootstrap, "t", 1);
    common::create_topic(&b.bootstrap, "t", 1);
    common::produce(&a.bootstrap, "t", &kr::records(10, 1, "t"));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let taken = taken.local_addr().expect("addr").to_string();
    let missing = common::scratch_dir().join("no-such-dir/kreplicate.prom");
    let missing = missing.display().to_string();
    for (flag, value, says) in [
        ("--metrics-addr", taken.as_str(), "cannot listen there"),
        ("--metrics-addr", "not-an-address", "cannot listen there"),
        ("--metrics-file", missing.as_str(), "cannot write it"),
    ] {
        let run = kr::run(&kr::caught_up_args(
            &a.bootstrap,
            &b.bootstrap,
            "t",
            "metrics-bad",
            "at-least-once",
            &[flag, value],
        ));
        assert_eq!(run.code, 2, "{flag} {value}: {run:?}");
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{flag} {value}: {run:?}");
        assert!(
            lines[0].contains(flag) && lines[0].contains(says),
            "{lines:?}"
        );
        assert_eq!(run.json()["error_kind"], "usage");
    }
    assert!(
        common::read_all(&b.bootstrap, "t").is_empty(),
        "nothing copied"
    );
    assert_eq!(common::committed(&a.bootstrap, "metrics-bad", "t", 1), [-1]);
}

/// Issue 35 (2): `kreplicate_run_info`'s `group` label names the default group a run chose
/// (it was empty: the metrics took the run's identity before the group was named), the one the
/// JSON summary names.
#[test]
fn issue_35_run_info_names_the_default_group() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("info-group");
    common::create_topic(&a.bootstrap, &topic, 1);
    common::produce(&a.bootstrap, &topic, &kr::records(10, 1, "i"));
    let file = common::scratch_dir().join("metrics.prom");
    let file_arg = file.to_string_lossy().to_string();
    // A rename of its own names a default group of its own on the shared clusters.
    let rename = format!("{topic}.{{topic}}");
    let mut args = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--rename",
        &rename,
        "--create-topics",
        "--until-caught-up",
        "--json",
        "--metrics-file",
        &file_arg,
    ];
    args.extend_from_slice(&kr::FAST_GROUP);
    let run = kr::run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    let group = run.json()["group"].as_str().unwrap_or_default().to_string();
    assert!(
        group.starts_with("kreplicate.") && group.ends_with(&rename),
        "{run:?}"
    );
    let text = std::fs::read_to_string(&file).expect("the metrics file");
    let info = common::scraped(&text, "kreplicate_run_info");
    let label = info[0].0.get("group").cloned().unwrap_or_default();
    assert_eq!(label, group, "{text}");
}
