//! `kreplicate verify` through the built binary on the two shared Kafka clusters (topics of
//! each test's own). The target is produced directly (no replicator), shaped like each kind of
//! difference.

use serde_json::Value;

use crate::common::kr::{self, Run};
use crate::common::{self, unique, Kafka, Rec};

/// The shared clusters, and a prefix for the test's topic names.
fn clusters(name: &str) -> (Kafka, Kafka, String) {
    (Kafka::shared("a"), Kafka::shared("b"), unique(name))
}

/// `topic` on A with `source` and on B (as `target_topic`) with `target`.
#[allow(clippy::too_many_arguments)]
fn setup(
    a: &Kafka,
    b: &Kafka,
    topic: &str,
    target_topic: &str,
    source_partitions: i32,
    target_partitions: i32,
    source: &[Rec],
    target: &[Rec],
) {
    common::create_topic(&a.bootstrap, topic, source_partitions);
    common::create_topic(&b.bootstrap, target_topic, target_partitions);
    if !source.is_empty() {
        common::produce(&a.bootstrap, topic, source);
    }
    if !target.is_empty() {
        common::produce(&b.bootstrap, target_topic, target);
    }
}

fn verify(a: &Kafka, b: &Kafka, extra: &[&str]) -> Run {
    let mut args = vec!["verify", "--from", &a.bootstrap, "--to", &b.bootstrap];
    args.extend_from_slice(extra);
    kr::run(&args)
}

/// The `--json` report, after checking the exit code.
fn json(a: &Kafka, b: &Kafka, extra: &[&str], code: i32) -> Value {
    let mut args = extra.to_vec();
    args.push("--json");
    let run = verify(a, b, &args);
    assert_eq!(run.code, code, "{run:?}");
    run.json()
}

/// The report's row for `partition`.
fn row(report: &Value, partition: i64) -> &Value {
    report["partitions"]
        .as_array()
        .expect("partitions array")
        .iter()
        .find(|p| p["partition"] == partition)
        .unwrap_or_else(|| panic!("no row for partition {partition}: {report}"))
}

/// missing, extra, duplicates, reordered, altered of a row.
fn counts(row: &Value) -> [u64; 5] {
    ["missing", "extra", "duplicates", "reordered", "altered"]
        .map(|k| row[k].as_u64().unwrap_or_else(|| panic!("{k} in {row}")))
}

/// The table line of `topic[partition]`.
fn table_line<'a>(run: &'a Run, topic: &str, partition: i32) -> &'a str {
    run.stdout
        .lines()
        .find(|l| {
            let mut cells = l.split_whitespace();
            cells.next() == Some(topic) && cells.next() == Some(&partition.to_string())
        })
        .unwrap_or_else(|| panic!("no table line for {topic} {partition}: {}", run.stdout))
}

/// Records of `partition` only, in order.
fn on(records: &[Rec], partition: i32) -> Vec<Rec> {
    records
        .iter()
        .filter(|r| r.partition == partition)
        .cloned()
        .collect()
}

#[test]
fn verify_exact_copy_exits_0_also_renamed_with_origin_headers() {
    let (a, b, n) = clusters("exact");
    let (orders, backup) = (format!("{n}.orders"), format!("backup.{n}.orders"));
    let recs = kr::records(90, 3, "e");
    setup(&a, &b, &orders, &orders, 3, 3, &recs, &recs);
    // kreplicate's own headers on the target do not count.
    let with_origin: Vec<Rec> = recs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut r = r.clone();
            r.headers.push((
                "kreplicate.origin".into(),
                Some(format!("a/orders/{i}").into_bytes()),
            ));
            r
        })
        .collect();
    common::create_topic(&b.bootstrap, &backup, 3);
    common::produce(&b.bootstrap, &backup, &with_origin);

    let run = verify(&a, &b, &["--topics", &orders]);
    assert_eq!(run.code, 0, "{run:?}");
    for p in 0..3 {
        let line = table_line(&run, &orders, p);
        assert!(line.ends_with("OK"), "{line}");
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells[2..6], ["30", "30", "0-29", "0-29"], "{line}");
    }
    assert!(
        run.stdout.lines().next().unwrap_or("").starts_with("TOPIC"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .trim_end()
            .ends_with("EXACT: the target holds an exact copy of 90 records in 3 partitions"),
        "{}",
        run.stdout
    );

    let report = json(&a, &b, &["--topics", &orders], 0);
    assert_eq!(report["exact"], true, "{report}");
    // Issue 10: versioned and time-stamped, with every documented field.
    assert_eq!(report["version"], 1, "{report}");
    for stamp in ["started", "ended"] {
        let t = report[stamp].as_str().unwrap_or_default();
        assert!(humantime::parse_rfc3339(t).is_ok(), "{stamp}: {report}");
    }
    for key in [
        "verdict",
        "accept_duplicates",
        "from",
        "to",
        "totals",
        "partitions",
    ] {
        assert!(report.get(key).is_some(), "{key}: {report}");
    }
    assert_eq!(report["totals"]["source_count"], 90);
    for p in 0..3 {
        let r = row(&report, p);
        assert_eq!(r["status"], "OK", "{r}");
        assert_eq!(
            (r["source_count"].as_u64(), r["target_count"].as_u64()),
            (Some(30), Some(30))
        );
        assert_eq!(
            r["source_offsets"],
            serde_json::json!({"first": 0, "last": 29})
        );
        assert_eq!(r["target_offsets"], r["source_offsets"]);
        assert_eq!(r["source_digest"], r["target_digest"]);
        assert_eq!(counts(r), [0; 5]);
        assert_eq!(r["examples"], serde_json::json!([]));
    }

    let regex = format!("^{}\\.ord.*", n.replace('.', "\\."));
    let report = json(
        &a,
        &b,
        &["--topics", &regex, "--rename", "backup.{topic}"],
        0,
    );
    assert_eq!(report["exact"], true, "{report}");
    assert_eq!(row(&report, 0)["target_topic"], backup.as_str());
}

#[test]
fn verify_reports_missing_records() {
    let (a, b, m) = clusters("m");
    let recs = kr::records(40, 2, "m");
    // Records 5, 7 and 9 are on partition 1 at offsets 2, 3 and 4.
    let target: Vec<Rec> = recs
        .iter()
        .enumerate()
        .filter(|(i, _)| ![5, 7, 9].contains(i))
        .map(|(_, r)| r.clone())
        .collect();
    setup(&a, &b, &m, &m, 2, 2, &recs, &target);

    let report = json(&a, &b, &["--topics", &m], 1);
    assert_eq!(report["exact"], false);
    assert_eq!(row(&report, 0)["status"], "OK");
    let r = row(&report, 1);
    assert_eq!(r["status"], "DIFF", "{r}");
    assert_eq!(
        (r["source_count"].as_u64(), r["target_count"].as_u64()),
        (Some(20), Some(17))
    );
    assert_eq!(counts(r), [3, 0, 0, 0, 0], "{r}");
    let examples: Vec<(&str, i64)> = r["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap(),
                e["source_offset"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(examples, [("missing", 2), ("missing", 3), ("missing", 4)]);

    let run = verify(&a, &b, &["--topics", &m]);
    assert_eq!(run.code, 1, "{run:?}");
    let line = table_line(&run, &m, 1);
    assert!(line.ends_with("DIFF"), "{line}");
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cells[2..7], ["20", "17", "0-19", "0-16", "3"], "{line}");
    assert!(
        run.stdout.contains(&format!(
            "{m}[1] missing: source offset 2: not in the target"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .trim_end()
            .ends_with("DIFF: 1 of 2 partitions differ: 3 missing"),
        "{}",
        run.stdout
    );
}

#[test]
fn verify_reports_an_altered_header() {
    let (a, b, h) = clusters("h");
    let recs = kr::records(20, 1, "h");
    let mut target = recs.clone();
    target[7].headers[0].1 = Some(b"changed".to_vec());
    setup(&a, &b, &h, &h, 1, 1, &recs, &target);

    let report = json(&a, &b, &["--topics", &h], 1);
    let r = row(&report, 0);
    assert_eq!(counts(r), [0, 0, 0, 0, 1], "{r}");
    let e = &r["examples"][0];
    assert_eq!(e["kind"], "altered");
    assert_eq!(
        (e["source_offset"].as_i64(), e["target_offset"].as_i64()),
        (Some(7), Some(7))
    );
    assert_eq!(e["detail"], "headers differ");
    assert_ne!(r["source_digest"], r["target_digest"]);

    let run = verify(&a, &b, &["--topics", &h]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains(&format!(
            "{h}[0] altered: source offset 7, target offset 7: headers differ"
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn verify_reports_reordered_and_extra_records() {
    let (a, b, n) = clusters("order");
    let (r, x) = (format!("{n}.r"), format!("{n}.x"));
    let recs = kr::records(20, 1, "r");
    let mut swapped = recs.clone();
    swapped.swap(10, 11);
    setup(&a, &b, &r, &r, 1, 1, &recs, &swapped);
    let mut more = recs.clone();
    more.extend(kr::records(3, 1, "extra"));
    setup(&a, &b, &x, &x, 1, 1, &recs, &more);

    let report = json(&a, &b, &["--topics", &r], 1);
    let row0 = row(&report, 0);
    assert_eq!(counts(row0), [0, 0, 0, 1, 0], "{row0}");
    let e = &row0["examples"][0];
    assert_eq!(e["kind"], "reordered");
    assert_eq!(
        (e["source_offset"].as_i64(), e["target_offset"].as_i64()),
        (Some(11), Some(10)),
        "{e}"
    );
    assert_eq!(
        e["detail"],
        "out of source order: comes before source offset 10"
    );
    let run = verify(&a, &b, &["--topics", &r]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains(&format!("{r}[0] reordered:")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.trim_end().ends_with("1 reordered"),
        "{}",
        run.stdout
    );

    let report = json(&a, &b, &["--topics", &x], 1);
    let row0 = row(&report, 0);
    assert_eq!(counts(row0), [0, 3, 0, 0, 0], "{row0}");
    assert_eq!(
        row0["target_offsets"],
        serde_json::json!({"first": 0, "last": 22})
    );
    assert_eq!(row0["examples"][0]["target_offset"], 20);
    let run = verify(&a, &b, &["--topics", &x]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains(&format!(
            "{x}[0] extra: target offset 20: not in the source"
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn verify_duplicates_fail_unless_accepted() {
    let (a, b, n) = clusters("dups");
    let (d, d2) = (format!("{n}.d"), format!("{n}.d2"));
    let recs = kr::records(300, 1, "d");
    // At-least-once rerun: 0..99 and 120..199 arrived, 100..119 failed; the rerun re-sent
    // everything from the committed position 100.
    let target: Vec<Rec> = recs[..100]
        .iter()
        .chain(&recs[120..200])
        .chain(&recs[100..])
        .cloned()
        .collect();
    setup(&a, &b, &d, &d, 1, 1, &recs, &target);

    let report = json(&a, &b, &["--topics", &d], 1);
    let r = row(&report, 0);
    assert_eq!(counts(r), [0, 0, 80, 0, 0], "{r}");
    assert_eq!(r["examples"][0]["kind"], "duplicate");
    assert_eq!(r["examples"][0]["source_offset"], 120);
    assert_eq!(r["examples"][0]["target_offset"], 100);
    let run = verify(&a, &b, &["--topics", &d]);
    assert_eq!(run.code, 1);
    assert!(table_line(&run, &d, 0).ends_with("DIFF"));
    assert!(
        run.stdout.trim_end().ends_with("80 duplicates"),
        "{}",
        run.stdout
    );

    let report = json(&a, &b, &["--topics", &d, "--accept-duplicates"], 0);
    assert_eq!(report["exact"], true);
    let r = row(&report, 0);
    assert_eq!(r["status"], "OK");
    assert_eq!(r["duplicates"], 80);
    let run = verify(&a, &b, &["--topics", &d, "--accept-duplicates"]);
    assert_eq!(run.code, 0, "{run:?}");
    // Issue 35: accepted duplicates are a complete copy, not an exact one.
    assert!(
        run.stdout.trim_end().ends_with(
            "COMPLETE: the target holds every one of 300 records in 1 partition, in source order (80 duplicates accepted)"
        ),
        "{}",
        run.stdout
    );

    // An unfinished rerun is not exact, duplicates accepted or not.
    let cut: Vec<Rec> = target[..target.len() - 10].to_vec();
    setup(&a, &b, &d2, &d2, 1, 1, &recs, &cut);
    let report = json(&a, &b, &["--topics", &d2, "--accept-duplicates"], 1);
    assert_eq!(counts(row(&report, 0)), [10, 0, 80, 0, 0]);
}

#[test]
fn verify_partition_counts() {
    let (a, b, n) = clusters("parts");
    let (narrow_t, wide) = (format!("{n}.narrow"), format!("{n}.wide"));
    let recs = kr::records(30, 3, "p");
    // The target lacks partition 2.
    let narrow: Vec<Rec> = on(&recs, 0).into_iter().chain(on(&recs, 1)).collect();
    setup(&a, &b, &narrow_t, &narrow_t, 3, 2, &recs, &narrow);
    let report = json(&a, &b, &["--topics", &narrow_t], 1);
    let r = row(&report, 2);
    assert_eq!(r["status"], "DIFF");
    assert_eq!(r["missing"], 10);
    assert_eq!(r["target_count"], 0);
    assert_eq!(r["target_digest"], Value::Null);
    assert!(
        r["note"]
            .as_str()
            .unwrap()
            .contains("does not exist on the target"),
        "{r}"
    );
    assert_eq!(row(&report, 0)["status"], "OK");

    // Extra target partitions are fine while empty.
    setup(&a, &b, &wide, &wide, 3, 4, &recs, &recs);
    let report = json(&a, &b, &["--topics", &wide], 0);
    assert_eq!(row(&report, 3)["status"], "OK");
    common::produce(&b.bootstrap, &wide, &[Rec::kv(3, "k", "v")]);
    let report = json(&a, &b, &["--topics", &wide], 1);
    let r = row(&report, 3);
    assert_eq!(
        (r["status"].as_str(), r["extra"].as_u64()),
        (Some("DIFF"), Some(1)),
        "{r}"
    );
    let run = verify(&a, &b, &["--topics", &wide]);
    assert!(
        run.stdout.contains("exists only on the target"),
        "{}",
        run.stdout
    );
}

#[test]
fn verify_usage_errors_exit_2() {
    let (a, b, n) = clusters("usage");
    let (t, only, x_t) = (
        format!("{n}.t"),
        format!("{n}.only-source"),
        format!("x.{n}.t"),
    );
    setup(
        &a,
        &b,
        &t,
        &t,
        1,
        1,
        &kr::records(5, 1, "t"),
        &kr::records(5, 1, "t"),
    );
    common::create_topic(&a.bootstrap, &only, 1);
    let (t, only) = (t.as_str(), only.as_str());
    let (no_target, no_renamed) = (
        format!("target topic '{only}' does not exist"),
        format!("target topic '{x_t}' does not exist"),
    );
    let ab = a.bootstrap.as_str();
    let bb = b.bootstrap.as_str();
    let cases: &[(&[&str], &str)] = &[
        (&["--from", ab, "--to", bb, "--topics", only], &no_target),
        (
            &[
                "--from",
                ab,
                "--to",
                bb,
                "--topics",
                t,
                "--rename",
                "x.{topic}",
            ],
            &no_renamed,
        ),
        (
            &["--from", ab, "--to", bb, "--topics", "nope"],
            "source topic 'nope' does not exist",
        ),
        (&["--from", ab, "--to", bb, "--topics", "^zzz"], "no topic"),
        (
            &["--from", "prod", "--to", bb, "--topics", t],
            "--from 'prod': unknown cluster",
        ),
        (
            &[
                "--from",
                ab,
                "--to",
                bb,
                "--topics",
                t,
                "--timeout",
                "5 parsecs",
            ],
            "--timeout",
        ),
        (
            &["--from", ab, "--to", bb, "--topics", t, "-X", "group.id=g"],
            "group.id",
        ),
        (
            &[
                "--from",
                ab,
                "--to",
                bb,
                "--topics",
                t,
                "--to-property",
                "nonsense",
            ],
            "expected key=value",
        ),
        (
            &["--from", ab, "--to", bb, "--topics", t, "--bogus"],
            "--bogus",
        ),
        (&["--from", ab, "--to", bb], "missing --topics"),
        (
            &[
                "--from",
                ab,
                "--to",
                "127.0.0.1:1",
                "--topics",
                t,
                "--timeout",
                "2s",
            ],
            "cannot reach the target cluster",
        ),
    ];
    for (args, expect) in cases {
        let mut all = vec!["verify"];
        all.extend_from_slice(args);
        let run = kr::run(&all);
        assert_eq!(run.code, 2, "{all:?}: {run:?}");
        let lines: Vec<&str> = run.stderr.trim().lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "{all:?}: one line on stderr: {:?}",
            run.stderr
        );
        assert!(
            lines[0].starts_with("kreplicate: error: ") && lines[0].contains(expect),
            "{all:?}: expected '{expect}' in {:?}",
            lines[0]
        );
        assert!(run.stdout.is_empty(), "{all:?}: {run:?}");
    }
}
