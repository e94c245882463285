//! Issue 12: topic configs travel with `--create-topics`; a target that differs is warned
//! about at start and fixed by `--sync-configs`; `plan` shows it without writing.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::common::kr;
use crate::common::{self, Kafka};

const SOURCE_CONFIGS: [(&str, &str); 6] = [
    ("cleanup.policy", "compact"),
    ("retention.ms", "3600000"),
    ("min.compaction.lag.ms", "1000"),
    ("max.message.bytes", "2000000"),
    ("segment.ms", "600000"),
    // Excluded by default: a property of the cluster's replication, not of the data.
    ("min.insync.replicas", "1"),
];

fn table(source: &BTreeMap<String, String>, target: &BTreeMap<String, String>) -> String {
    let mut out = String::from("| key | source | target after create |\n|---|---|---|\n");
    for (k, v) in source {
        let t = target.get(k).map_or("(not set)", String::as_str);
        out.push_str(&format!("| {k} | {v} | {t} |\n"));
    }
    out
}

#[test]
fn issue_12_configs_travel_drift_is_warned_then_synced() {
    let (a, b) = Kafka::pair("cfg-a", "cfg-b");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic_with(ab, "compacted", 2, &SOURCE_CONFIGS);
    // Retentions longer than a day: the test records are stamped a day back (kr::recent).
    common::create_topic_with(ab, "drifty", 1, &[("retention.ms", "172800000")]);
    common::create_topic_with(bb, "drifty", 1, &[("retention.ms", "259200000")]);
    // A compacted topic refuses records without a key (Apache Kafka).
    let mut keyed = kr::records(40, 2, "c");
    for r in &mut keyed {
        r.key.get_or_insert_with(|| b"no-key".to_vec());
    }
    common::produce(ab, "compacted", &keyed);
    common::produce(ab, "drifty", &kr::records(10, 1, "d"));

    // plan: what the run below will do, writing nothing.
    let mut plan_args = vec!["plan"];
    plan_args.extend(kr::caught_up_args(
        ab,
        bb,
        "compacted,drifty",
        "g-cfg",
        "at-least-once",
        &["--create-topics", "--config-exclude", "segment.ms"],
    ));
    plan_args.retain(|a| *a != "--json");
    let plan = kr::run(&plan_args);
    eprintln!("{}", plan.stdout);
    assert_eq!(plan.code, 0, "{plan:?}");
    for line in [
        "compacted: create with cleanup.policy=compact, max.message.bytes=2000000, min.compaction.lag.ms=1000, retention.ms=3600000",
        "drifty: config differs: retention.ms: source '172800000', target '259200000'",
        "records to copy: 50",
        "warning: target topic 'drifty' config retention.ms",
        "a real run would start (exit 0)",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    assert!(
        !kr::topics(bb).contains(&"compacted".to_string()),
        "plan created a topic"
    );
    // Without --create-topics a run would refuse: plan says why and exits 2.
    plan_args.retain(|a| *a != "--create-topics");
    plan_args.push("--json");
    let refused = kr::run(&plan_args);
    assert_eq!(refused.code, 2, "{refused:?}");
    let json = refused.json();
    assert_eq!(json["would_start"], false, "{json}");
    let why = json["refusal"].as_str().unwrap();
    assert!(why.contains("'compacted' does not exist"), "{why}");
    // Issue 35: a target a run would not create is missing, not to be created.
    assert_eq!(json["topics"][0]["target"], "compacted", "{json}");
    assert_eq!(json["topics"][0]["action"], "missing", "{json}");
    assert_eq!(json["records_to_copy"], 50, "{json}");
    assert_eq!(
        json["topics"][1]["config_differences"][0]["target"], "259200000",
        "{json}"
    );

    let run = kr::run(&kr::caught_up_args(
        ab,
        bb,
        "compacted,drifty",
        "g-cfg",
        "at-least-once",
        &["--create-topics", "--config-exclude", "segment.ms"],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["records"], 50);
    let warning = "kreplicate: warning: target topic 'drifty' config retention.ms: source '172800000', target '259200000'";
    assert!(run.stderr.contains(warning), "{}", run.stderr);

    let source = common::topic_configs(ab, "compacted");
    let target = common::topic_configs(bb, "compacted");
    eprintln!("{}", table(&source, &target));
    for key in [
        "cleanup.policy",
        "retention.ms",
        "min.compaction.lag.ms",
        "max.message.bytes",
    ] {
        assert_eq!(target.get(key), source.get(key), "{key}: {target:?}");
    }
    // Exactly the copied keys are set on the target topic: not the excluded ones, built in
    // (min.insync.replicas) and --config-exclude (segment.ms).
    let overrides = common::topic_overrides(bb, "compacted");
    assert_eq!(
        overrides.keys().collect::<Vec<_>>(),
        [
            "cleanup.policy",
            "max.message.bytes",
            "min.compaction.lag.ms",
            "retention.ms"
        ],
        "{overrides:?}"
    );
    assert_eq!(common::partition_count(bb, "compacted"), 2);

    // verify reports the drift; it fails on it only with --configs.
    let verify = |extra: &[&str]| {
        let mut args = vec![
            "verify",
            "--from",
            ab,
            "--to",
            bb,
            "--topics",
            "compacted,drifty",
        ];
        args.extend_from_slice(&["--config-exclude", "segment.ms"]);
        args.extend_from_slice(extra);
        kr::run(&args)
    };
    let v = verify(&[]);
    assert_eq!(v.code, 0, "{v:?}");
    assert!(
        v.stdout
            .contains("drifty: retention.ms: source '172800000', target '259200000'"),
        "{}",
        v.stdout
    );
    let v = verify(&["--configs", "--json"]);
    assert_eq!(v.code, 1, "{v:?}");
    let json = v.json();
    assert_eq!(
        json["configs"]["differences"][0]["key"], "retention.ms",
        "{json}"
    );
    assert_eq!(json["configs"]["differences"][0]["target_topic"], "drifty");

    let synced = kr::run(&kr::caught_up_args(
        ab,
        bb,
        "compacted,drifty",
        "g-cfg",
        "at-least-once",
        &["--sync-configs", "--config-exclude", "segment.ms"],
    ));
    assert_eq!(synced.code, 0, "{synced:?}");
    assert!(!synced.stderr.contains("warning"), "{}", synced.stderr);
    let drifty = common::topic_configs(bb, "drifty");
    assert_eq!(
        drifty.get("retention.ms").map(String::as_str),
        Some("172800000")
    );
    // Nothing differs any more: a plain run warns about nothing.
    let again = kr::run(&kr::caught_up_args(
        ab,
        bb,
        "compacted,drifty",
        "g-cfg",
        "at-least-once",
        &["--config-exclude", "segment.ms"],
    ));
    assert_eq!(again.code, 0, "{again:?}");
    assert!(!again.stderr.contains("warning"), "{}", again.stderr);
}

/// Issue 18, item 5 (Apache Kafka only: it says where each value comes from): a value from the
/// source broker's server.properties is the broker's, not the topic's. It is not set on the
/// created target topic, not reported as drift, not written by `--sync-configs`, and does not
/// fail `verify --configs`; a value set on the topic travels.
#[test]
fn issue_18_the_source_brokers_defaults_never_travel() {
    let a = Kafka::start_with("cfg-broker-a", &["--set", "log.retention.ms=3600000"]);
    let b = Kafka::shared("b");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("brokerdefault");
    common::create_topic_with(ab, &topic, 1, &[("segment.ms", "600000")]);
    common::produce(ab, &topic, &kr::records(10, 1, "d"));
    assert_eq!(
        common::topic_configs(ab, &topic)["retention.ms"],
        "3600000",
        "the source broker's setting shows on the topic"
    );
    let group = common::unique("g");
    let args = |extra: &[&'static str]| {
        let mut v = vec![
            "--from", ab, "--to", bb, "--topics", &topic, "--group", &group,
        ];
        v.extend_from_slice(extra);
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run_with = |v: Vec<String>| kr::run(&v.iter().map(String::as_str).collect::<Vec<_>>());

    let mut plan = vec!["plan".to_string()];
    plan.extend(args(&["--create-topics"]));
    let plan = run_with(plan);
    assert_eq!(plan.code, 0, "{plan:?}");
    assert!(
        plan.stdout
            .contains(&format!("{topic}: create with segment.ms=600000\n")),
        "{}",
        plan.stdout
    );

    let run = run_with(args(&[
        "--create-topics",
        "--until-caught-up",
        "--sync-configs",
    ]));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    let target = common::topic_configs(bb, &topic);
    assert_eq!(target["segment.ms"], "600000");
    // The target broker's own default, not the source broker's; only segment.ms is set.
    assert_eq!(target["retention.ms"], "604800000", "{target:?}");
    let overrides = common::topic_overrides(bb, &topic);
    assert_eq!(overrides.keys().collect::<Vec<_>>(), ["segment.ms"]);

    let again = run_with(args(&["--until-caught-up"]));
    assert_eq!(again.code, 0, "{again:?}");
    assert!(!again.stderr.contains("warning"), "{}", again.stderr);
    let mut verify = vec!["verify".to_string()];
    verify.extend(args(&["--configs"]));
    verify.retain(|a| a != "--group" && !a.starts_with("g-"));
    let v = run_with(verify);
    assert_eq!(v.code, 0, "{v:?}");
}

/// Issue 17: a config the target refuses (tansu, the source here, accepts any value; Apache
/// Kafka does not) is one line and exit 2 before anything is copied.
#[test]
fn issue_17_a_config_the_target_refuses_is_exit_2_before_copying() {
    let a = common::Tansu::start("cfg-refused-a");
    let b = Kafka::shared("b");
    let topic = common::unique("refused");
    common::create_topic_with(&a.bootstrap, &topic, 1, &[("retention.ms", "soon")]);
    common::produce(&a.bootstrap, &topic, &kr::records(5, 1, "r"));
    let group = common::unique("g");
    let run = kr::run(&kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        "at-least-once",
        &["--create-topics"],
    ));
    assert_eq!(run.code, 2, "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].contains(&format!("cannot create target topic '{topic}'"))
            && lines[0].contains("retention.ms=soon")
            && lines[0].contains("--config-exclude"),
        "{}",
        lines[0]
    );
    assert!(!kr::topics(&b.bootstrap).contains(&topic));
    assert_eq!(common::committed(&a.bootstrap, &group, &topic, 1), vec![-1]);
}

/// The same refusal for a topic found while copying (`--refresh-topics`): a person must fix
/// it, so the run ends with exit 2 and `error_kind` usage, not 1 (a rerun would fail alike).
fn a_config_the_target_refuses_on_a_discovered_topic_is_exit_2(guarantee: &str) {
    let a = common::Tansu::start("cfg-found-a");
    let b = Kafka::shared("b");
    let prefix = common::unique("found");
    let (good, bad) = (format!("{prefix}.good"), format!("{prefix}.bad"));
    common::create_topic(&a.bootstrap, &good, 1);
    common::produce(&a.bootstrap, &good, &kr::records(5, 1, "g"));
    let group = common::unique("g-found");
    let pattern = format!("^{}\\..*", prefix.replace('.', "\\."));
    let mut args = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &pattern,
        "--group",
        &group,
        "--guarantee",
        guarantee,
        "--create-topics",
        "--refresh-topics",
        "1s",
        "--json",
    ];
    args.extend_from_slice(&kr::FAST_GROUP);
    let mut child = Some(kr::spawn(&args));
    kr::wait_for_records(&b.bootstrap, &good, 5, Duration::from_secs(60), &mut child);

    common::create_topic_with(&a.bootstrap, &bad, 1, &[("retention.ms", "soon")]);
    common::produce(&a.bootstrap, &bad, &kr::records(5, 1, "b"));
    let run = kr::wait(child.take().expect("running"), Duration::from_secs(60));
    assert_eq!(run.code, 2, "{run:?}");
    let json = run.json();
    assert_eq!(json["error_kind"], "usage", "{run:?}");
    let error = json["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!("cannot create target topic '{bad}'"))
            && error.contains("retention.ms=soon"),
        "{run:?}"
    );
    assert!(!kr::topics(&b.bootstrap).contains(&bad));
    assert_eq!(json["records"], 5, "{run:?}");
}

#[test]
fn issue_18_a_config_the_target_refuses_on_a_discovered_topic_is_exit_2_at_least_once() {
    a_config_the_target_refuses_on_a_discovered_topic_is_exit_2("at-least-once");
}

#[test]
fn issue_18_a_config_the_target_refuses_on_a_discovered_topic_is_exit_2_exactly_once() {
    a_config_the_target_refuses_on_a_discovered_topic_is_exit_2("exactly-once");
}

/// Milliseconds since the epoch, as the brokers on this machine stamp records.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// `kreplicate verify --from A --to B --topics TOPIC` with `extra`.
fn verify_run(ab: &str, bb: &str, topic: &str, extra: &[&str]) -> kr::Run {
    let mut args = vec!["verify", "--from", ab, "--to", bb, "--topics", topic];
    args.extend_from_slice(extra);
    kr::run(&args)
}

/// Issue 41, item 12 (the guide's Topic configs): `message.timestamp.before.max.ms` and
/// `message.timestamp.after.max.ms` set on a source topic never travel with `--create-topics`.
/// A backlog three days old, written before a one-hour limit was set on the source topic (the
/// limits apply to writes), is copied whole with its own timestamps, and the created target
/// topic has neither key (it would refuse that backlog on every run).
#[test]
fn issue_41_timestamp_limits_never_travel_with_create_topics() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("tslimits");
    common::create_topic(ab, &topic, 2);
    // Three days old: inside the brokers' 7-day retention, far outside a one-hour limit.
    let old = (now_ms() - 3 * 86_400_000) / 1000 * 1000;
    let mut backlog = kr::records(200, 2, "old");
    for (i, r) in backlog.iter_mut().enumerate() {
        r.timestamp = Some(old + i as i64);
    }
    common::produce(ab, &topic, &backlog);

    let limits = [
        ("message.timestamp.before.max.ms", "3600000"),
        ("message.timestamp.after.max.ms", "3600000"),
    ];
    let add = limits.map(|(k, v)| format!("{k}={v}")).join(",");
    common::kafka_tool(
        "org.apache.kafka.tools.ConfigCommand",
        &[
            "--bootstrap-server",
            ab,
            "--alter",
            "--entity-type",
            "topics",
            "--entity-name",
            &topic,
            "--add-config",
            &add,
        ],
    );
    let want: BTreeMap<String, String> = limits
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    common::wait_until(
        "the limits are set on the source topic",
        Duration::from_secs(30),
        || common::topic_overrides(ab, &topic) == want,
    );
    // The limit is live on the source: a record as old as the backlog is refused now.
    let mut late = kr::records(1, 2, "late");
    late[0].timestamp = Some(old);
    let refused = common::produce_with(
        ab,
        &topic,
        &late,
        &[("message.timeout.ms", "10000")],
        Duration::from_secs(20),
    )
    .expect_err("the source topic refuses a record older than its limit");
    assert!(refused.to_lowercase().contains("timestamp"), "{refused}");
    assert_eq!(common::read_all(ab, &topic).len(), 200, "the backlog stays");

    let group = common::unique("g-tslimits");
    let run = kr::run(&kr::caught_up_args(
        ab,
        bb,
        &topic,
        &group,
        "at-least-once",
        &["--create-topics"],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["records"], 200, "{json}");
    let created = format!("kreplicate: created topic '{topic}' (2 partitions)\n");
    assert!(run.stderr.contains(&created), "{}", run.stderr);
    assert_eq!(json["created_topics"][0]["configs"], serde_json::json!({}));

    // Every record, with its own timestamp (assert_complete compares them too).
    let dups = kr::assert_complete(ab, bb, &topic, &topic, 2);
    let got = common::read_all(bb, &topic);
    let src = common::read_all(ab, &topic);
    let stamps = |g: &[common::Got]| g.iter().map(|g| g.timestamp).collect::<Vec<_>>();
    assert_eq!(stamps(&got), stamps(&src));
    let (min, max) = (
        got.iter().filter_map(|g| g.timestamp).min().unwrap(),
        got.iter().filter_map(|g| g.timestamp).max().unwrap(),
    );
    assert!(max < now_ms() - 3_600_000, "older than the source's limit");
    let overrides = common::topic_overrides(bb, &topic);
    assert!(overrides.is_empty(), "{overrides:?}");
    let target = common::topic_configs(bb, &topic);
    // verify with --configs: the limits are no copied config, so no difference either.
    let v = verify_run(ab, bb, &topic, &["--configs"]);
    assert_eq!(v.code, 0, "{v:?}");
    assert!(v.stdout.contains("EXACT"), "{}", v.stdout);
    eprintln!(
        "evidence: source topic overrides {:?}; a record stamped {} h ago refused on the source: {refused}",
        common::topic_overrides(ab, &topic),
        (now_ms() - old) / 3_600_000
    );
    eprintln!(
        "evidence: --create-topics --until-caught-up exit {}, {} records, {dups} duplicates; {}",
        run.code,
        json["records"],
        created.trim()
    );
    eprintln!(
        "evidence: target timestamps {min}..{max} ({:.1} to {:.1} days old) equal the source's for all {} records; target overrides {overrides:?}; target message.timestamp.before.max.ms={:?} after.max.ms={:?} (broker defaults)",
        (now_ms() - min) as f64 / 86_400_000.0,
        (now_ms() - max) as f64 / 86_400_000.0,
        got.len(),
        target.get("message.timestamp.before.max.ms"),
        target.get("message.timestamp.after.max.ms"),
    );
    eprintln!(
        "evidence: verify --configs exit {}: {}",
        v.code,
        v.stdout
            .lines()
            .filter(|l| l.starts_with("Configs:") || l.starts_with("EXACT"))
            .collect::<Vec<_>>()
            .join(" / ")
    );
}

/// Issue 41, item 12 (the guide's Topic configs): a source topic with
/// `message.timestamp.type=LogAppendTime`. `--create-topics` copies the key, so the target
/// re-stamps every record with its own append time (`verify` finds each record altered: its
/// timestamp differs); with `--config-exclude message.timestamp.type` the created target topic
/// keeps `CreateTime` and the records carry the source's log-append timestamps exactly (EXACT).
#[test]
fn issue_41_log_append_time_restamps_unless_excluded() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("logappend");
    let kept = format!("kept.{topic}");
    common::create_topic_with(
        ab,
        &topic,
        2,
        &[("message.timestamp.type", "LogAppendTime")],
    );
    let records = kr::records(200, 2, "lat");
    let before_produce = now_ms();
    common::produce(ab, &topic, &records);
    let src = common::read_all(ab, &topic);
    assert_eq!(src.len(), 200);
    let src_max = src.iter().filter_map(|g| g.timestamp).max().unwrap();
    let src_min = src.iter().filter_map(|g| g.timestamp).min().unwrap();
    // The source stamped them itself: not the producer's CreateTime (a day back).
    assert!(src_min >= before_produce, "{src_min} < {before_produce}");
    let without_stamps = |got: &[common::Got], p: i32| {
        kr::partition(got, p)
            .into_iter()
            .map(|mut r| {
                r.timestamp = None;
                r
            })
            .collect::<Vec<_>>()
    };

    // 1. The key travels: the target re-stamps.
    let copy_started = now_ms();
    let group = common::unique("g-logappend");
    let run = kr::run(&kr::caught_up_args(
        ab,
        bb,
        &topic,
        &group,
        "at-least-once",
        &["--create-topics"],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    let created =
        format!("kreplicate: created topic '{topic}' (2 partitions, message.timestamp.type=LogAppendTime)\n");
    assert!(run.stderr.contains(&created), "{}", run.stderr);
    assert_eq!(
        common::topic_overrides(bb, &topic)
            .get("message.timestamp.type")
            .map(String::as_str),
        Some("LogAppendTime")
    );
    let got = common::read_all(bb, &topic);
    assert_eq!(got.len(), 200, "one copy of each record");
    for p in 0..2 {
        assert_eq!(without_stamps(&got, p), without_stamps(&src, p), "[{p}]");
    }
    let restamped = got
        .iter()
        .filter_map(|g| g.timestamp)
        .filter(|t| *t >= copy_started && *t > src_max)
        .count();
    assert_eq!(
        restamped, 200,
        "every target record has the target's append time"
    );
    let (got_min, got_max) = (
        got.iter().filter_map(|g| g.timestamp).min().unwrap(),
        got.iter().filter_map(|g| g.timestamp).max().unwrap(),
    );
    let v = verify_run(ab, bb, &topic, &["--json"]);
    assert_eq!(v.code, 1, "{v:?}");
    let vj = v.json();
    assert_eq!(vj["totals"]["altered"], 200, "{vj}");
    let example = vj["partitions"][0]["examples"][0]["detail"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(example.contains("timestamp differs"), "{vj}");

    // 2. Excluded: the target topic keeps CreateTime and the source's stamps.
    let group = common::unique("g-logappend-kept");
    let run2 = kr::run(&kr::caught_up_args(
        ab,
        bb,
        &topic,
        &group,
        "at-least-once",
        &[
            "--create-topics",
            "--rename",
            "kept.{topic}",
            "--config-exclude",
            "message.timestamp.type",
        ],
    ));
    assert_eq!(run2.code, 0, "{run2:?}");
    let created2 = format!("kreplicate: created topic '{kept}' (2 partitions)\n");
    assert!(run2.stderr.contains(&created2), "{}", run2.stderr);
    let overrides = common::topic_overrides(bb, &kept);
    assert!(overrides.is_empty(), "{overrides:?}");
    let kept_type = common::topic_configs(bb, &kept)["message.timestamp.type"].clone();
    assert_eq!(kept_type, "CreateTime");
    let dups = kr::assert_complete(ab, bb, &topic, &kept, 2);
    assert_eq!(dups, 0);
    let v2 = verify_run(
        ab,
        bb,
        &topic,
        &[
            "--rename",
            "kept.{topic}",
            "--config-exclude",
            "message.timestamp.type",
            "--configs",
        ],
    );
    assert_eq!(v2.code, 0, "{v2:?}");
    assert!(v2.stdout.contains("EXACT"), "{}", v2.stdout);
    // Without the exclusion verify names the difference (it fails only with --configs).
    let v3 = verify_run(ab, bb, &topic, &["--rename", "kept.{topic}"]);
    assert_eq!(v3.code, 0, "{v3:?}");
    let diff = "message.timestamp.type: source 'LogAppendTime', target 'CreateTime'";
    assert!(v3.stdout.contains(diff), "{}", v3.stdout);

    eprintln!(
        "evidence: source LogAppendTime stamps {src_min}..{src_max} (produced with CreateTime {}..{}); copy started at {copy_started}",
        records[0].timestamp.unwrap(),
        records[199].timestamp.unwrap()
    );
    let warned: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("warning"))
        .collect();
    eprintln!(
        "evidence: copied key: {}; the run's warnings: {warned:?}; target stamps {got_min}..{got_max}, all 200 later than every source stamp; verify exit {}: {}, totals altered {}, e.g. '{example}'",
        created.trim(),
        v.code,
        vj["verdict"],
        vj["totals"]["altered"]
    );
    eprintln!(
        "evidence: --config-exclude message.timestamp.type: {}; target message.timestamp.type={kept_type}, overrides {overrides:?}; all 200 timestamps equal the source's; verify --configs exit {}: {}",
        created2.trim(),
        v2.code,
        v2.stdout.lines().last().unwrap_or_default()
    );
    eprintln!(
        "evidence: verify without the exclusion, exit {}, says: {}",
        v3.code,
        v3.stdout
            .lines()
            .find(|l| l.contains("message.timestamp.type"))
            .unwrap_or_default()
            .trim()
    );
}
