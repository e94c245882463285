//! Issue 12: topic configs travel with `--create-topics`; a target that differs is warned
//! about at start and fixed by `--sync-configs`; `plan` shows it without writing.

use std::collections::BTreeMap;

use crate::common::{self, Tansu};
use crate::kr;

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
    let a = Tansu::start("cfg-a");
    let b = Tansu::start("cfg-b");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic_with(ab, "compacted", 2, &SOURCE_CONFIGS);
    common::create_topic_with(ab, "drifty", 1, &[("retention.ms", "3600000")]);
    common::create_topic_with(bb, "drifty", 1, &[("retention.ms", "7200000")]);
    common::produce(ab, "compacted", &kr::records(40, 2, "c"));
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
        "drifty: config differs: retention.ms: source '3600000', target '7200000'",
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
    assert_eq!(json["records_to_copy"], 50, "{json}");
    assert_eq!(
        json["topics"][1]["config_differences"][0]["target"], "7200000",
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
    let warning = "kreplicate: warning: target topic 'drifty' config retention.ms: source '3600000', target '7200000'";
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
    // Excluded keys: built in (min.insync.replicas) and --config-exclude (segment.ms).
    assert!(!target.contains_key("min.insync.replicas"), "{target:?}");
    assert!(!target.contains_key("segment.ms"), "{target:?}");
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
            .contains("drifty: retention.ms: source '3600000', target '7200000'"),
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
        Some("3600000")
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
