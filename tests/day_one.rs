//! Issue 22, an operator's first day: `--create-topics` says what it created, config-file
//! errors name the file, the key and the line, copy flags given to `verify` or `groups` are
//! named, and named flows (`flows:`, `--flow NAME`) for copy, plan, verify and groups.

use std::time::Duration;

use crate::common::kr;
use crate::common::{self, Kafka};

fn write_config(name: &str, text: &str) -> String {
    let path = common::scratch_dir().join(format!("{}.yaml", common::unique(name)));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// A run that must fail with exit 2 and exactly `line` on stderr.
#[track_caller]
fn assert_refused(args: &[&str], line: &str) {
    let run = kr::run(args);
    assert_eq!(run.code, 2, "{args:?}: {run:?}");
    assert_eq!(
        run.stderr.trim(),
        format!("kreplicate: error: {line}"),
        "{args:?}"
    );
}

#[test]
fn issue_22_create_topics_says_what_it_creates_at_start_and_at_discovery() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let p = common::unique("mk");
    let (events, grow, late) = (
        format!("{p}.events"),
        format!("{p}.grow"),
        format!("{p}.late"),
    );
    common::create_topic_with(ab, &events, 2, &[("retention.ms", "7200000")]);
    common::create_topic(ab, &grow, 2);
    common::create_topic(bb, &grow, 1);
    // Stamped now: kr::records are stamped a day back, and a topic that keeps 2 hours loses
    // them whenever the broker's retention check (every 5 minutes) comes first.
    let now = kr::recent() + 86_400_000;
    let mut fresh = kr::records(20, 2, "e");
    for r in &mut fresh {
        r.timestamp = r.timestamp.map(|t| t - kr::recent() + now);
    }
    common::produce(ab, &events, &fresh);
    common::produce(ab, &grow, &kr::records(10, 2, "g"));
    let regex = format!("^{p}\\..*");
    let group = common::unique("g-mk");
    let args = kr::Args::copy(ab, bb)
        .topics(&regex)
        .with(&["--create-topics", "--refresh-topics", "1s"])
        .group(&group)
        .with(&["--json"])
        .fast_group()
        .build();
    let mut child = Some(kr::spawn(&args));
    kr::wait_for_records(bb, &events, 20, Duration::from_secs(90), &mut child);
    kr::wait_for_records(bb, &grow, 10, Duration::from_secs(60), &mut child);
    // A topic found while copying (--refresh-topics) is created and said so too.
    common::create_topic(ab, &late, 1);
    common::produce(ab, &late, &kr::records(5, 1, "l"));
    kr::wait_for_records(bb, &late, 5, Duration::from_secs(60), &mut child);
    let run = kr::stop(&mut child);
    for line in [
        format!("kreplicate: created topic '{events}' (2 partitions, retention.ms=7200000)"),
        format!("kreplicate: added 1 partition to '{grow}' (now 2)"),
        format!("kreplicate: created topic '{late}' (1 partition)"),
    ] {
        assert_eq!(
            run.stderr.matches(&line).count(),
            1,
            "{line}\n{}",
            run.stderr
        );
    }
    let json = run.json();
    assert_eq!(
        json["created_topics"],
        serde_json::json!([
            {"topic": events, "partitions": 2, "configs": {"retention.ms": "7200000"}},
            {"topic": late, "partitions": 1, "configs": {}},
        ]),
        "{json}"
    );
    assert_eq!(
        json["added_partitions"],
        serde_json::json!([{"topic": grow, "added": 1, "partitions": 2}]),
        "{json}"
    );
    assert_eq!(common::partition_count(bb, &grow), 2);
    assert_eq!(
        common::topic_overrides(bb, &events).get("retention.ms"),
        Some(&"7200000".to_string())
    );
}

#[test]
fn issue_22_config_file_errors_name_the_file_the_key_and_the_line() {
    let secret_var = "KREPLICATE_TEST_NEVER_SET_22";
    let file = write_config(
        "bad-values",
        &format!(
            "# kreplicate\nclusters:\n  prod:\n    bootstrap: 127.0.0.1:1\n    properties:\n      sasl.password: \"hunter2-${{{secret_var}}}\"\n  dr:\n    bootstrap: 127.0.0.1:2\ndefaults:\n  topics: t\n  commit-interval: 5 seconds\nflows:\n  slow:\n    from: dr\n    to: 127.0.0.1:3\n    timeout: \"0\"\n  nowhere:\n    to: prdo\n"
        ),
    );
    fn args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let ends = ["--from", "127.0.0.1:1", "--to", "127.0.0.1:2"];
    let with = |extra: &[&'static str]| -> Vec<String> {
        let mut v: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        v.extend(["--config".to_string(), file.clone()]);
        v
    };
    // Before: `--commit-interval '5 seconds': unknown unit 'seconds' ...`, as if a flag.
    let mut copy = with(&[]);
    copy.extend(ends.iter().map(|s| s.to_string()));
    assert_refused(
        &args(&copy),
        &format!("{file}: defaults.commit-interval (line 11): '5 seconds': unknown unit 'seconds' (use ms, s, m or h)"),
    );
    // The flag wins over the file, and is named as a flag.
    copy.extend(["--commit-interval".to_string(), "5 parsecs".to_string()]);
    assert_refused(
        &args(&copy),
        "--commit-interval '5 parsecs': unknown unit 'parsecs' (use ms, s, m or h)",
    );
    // A flow's key is named in its flow; verify names it the same way.
    assert_refused(
        &args(&with(&["verify", "--flow", "slow"])),
        &format!("{file}: flows.slow.timeout (line 16): must be greater than zero"),
    );
    assert_refused(
        &args(&with(&["verify", "--flow", "nowhere", "--from", "127.0.0.1:1"])),
        &format!("{file}: flows.nowhere.to (line 18): 'prdo': unknown cluster name (known: dr, prod); give a config cluster name or host:port"),
    );
    // A property's reference is named with its line; the value is never shown.
    let run = kr::run(&args(&with(&[
        "--from",
        "prod",
        "--to",
        "127.0.0.1:2",
        "--commit-interval",
        "5s",
    ])));
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr.trim(),
        format!("kreplicate: error: {file}: clusters.prod.properties.sasl.password (line 6): refers to ${{{secret_var}}}, which is not set in the environment")
    );
    assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
    // Errors the YAML parser finds: the key path and the line as well.
    let typo = write_config(
        "typo",
        "clusters:\n  prod:\n    bootstrap: h:1\ndefaults:\n  from: prod\n  create-topic: true\n",
    );
    assert_refused(
        &["--config", &typo, "--topics", "t"],
        &format!(
            "{typo}: defaults.create-topic (line 6): unknown key: did you mean `create-topics`?"
        ),
    );
}

#[test]
fn issue_22_copy_flags_given_to_verify_or_groups_are_named() {
    let copy = [
        "--from",
        "127.0.0.1:1",
        "--to",
        "127.0.0.1:2",
        "--topics",
        "t",
        "--until-caught-up",
        "--create-topics",
    ];
    let mut verify = vec!["verify"];
    verify.extend_from_slice(&copy);
    // Before: "unexpected argument '--until-caught-up' found (see kreplicate --help)".
    assert_refused(
        &verify,
        "--until-caught-up and --create-topics are copy flags: verify does not need them (see kreplicate verify --help)",
    );
    assert_refused(
        &["groups", "--group", "app", "--from", "127.0.0.1:1"],
        "--group is a copy flag: groups does not need it; did you mean --groups? (see kreplicate groups --help)",
    );
    // groups --help says why a group is refused and what each exit code means.
    let help = kr::run(&["groups", "--help"]);
    assert_eq!(help.code, 0, "{help:?}");
    for text in [
        "ahead of the copy",
        "active members on the target",
        "no provenance",
        "Exit codes:",
        "  2    fix the command line or the config",
    ] {
        assert!(help.stdout.contains(text), "{text}\n{}", help.stdout);
    }
}

#[test]
fn issue_22_named_flows_for_copy_plan_verify_and_groups() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("flow");
    common::create_topic(ab, &topic, 2);
    common::produce(ab, &topic, &kr::records(30, 2, "f"));
    let group = common::unique("g-flow");
    let file = write_config(
        "flows",
        &format!(
            "clusters:\n  east:\n    bootstrap: {ab}\n  west:\n    bootstrap: {bb}\ndefaults:\n  create-topics: true\n  group: {group}\n  rename: \"default.{{topic}}\"\nflows:\n  east-to-west:\n    from: east\n    to: west\n    topics: {topic}\n    rename: \"flow.{{topic}}\"\n  west-to-east:\n    from: west\n    to: east\n    topics: other\n"
        ),
    );
    let unknown = |cmd: &[&str]| {
        let mut args = cmd.to_vec();
        args.extend(["--config", &file, "--flow", "east-to-wset"]);
        assert_refused(
            &args,
            &format!("--flow 'east-to-wset': no such flow in {file} (known: east-to-west, west-to-east); did you mean 'east-to-west'?"),
        );
    };
    for cmd in [&[][..], &["plan"], &["verify"], &["groups"]] {
        unknown(cmd);
    }
    // plan: the flow over defaults (its rename, the defaults' create-topics).
    let plan = kr::run(&["plan", "--config", &file, "--flow", "east-to-west"]);
    assert_eq!(plan.code, 0, "{plan:?}");
    assert!(
        plan.stdout.contains(&format!("flow.{topic}")) && plan.stdout.contains("create"),
        "{}",
        plan.stdout
    );
    // A flag wins over the flow.
    let rename = "flag.{topic}";
    let mut copy = vec![
        "--config",
        &file,
        "--flow",
        "east-to-west",
        "--rename",
        rename,
        "--until-caught-up",
        "--json",
    ];
    copy.extend_from_slice(&kr::FAST_GROUP);
    let run = kr::run(&copy);
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["records"], 30, "{json}");
    assert_eq!(
        (&json["from"], &json["to"], &json["group"]),
        (&"east".into(), &"west".into(), &group.clone().into())
    );
    let target = format!("flag.{topic}");
    kr::assert_complete(ab, bb, &topic, &target, 2);
    assert!(!kr::topics(bb).contains(&format!("flow.{topic}")));
    let verify = kr::run(&[
        "verify",
        "--config",
        &file,
        "--flow",
        "east-to-west",
        "--rename",
        rename,
    ]);
    assert_eq!(verify.code, 0, "{verify:?}");
    let groups = kr::run(&[
        "groups",
        "--config",
        &file,
        "--flow",
        "east-to-west",
        "--rename",
        rename,
        "--groups",
        &group,
        "--dry-run",
        "--json",
    ]);
    assert_eq!(groups.code, 0, "{groups:?}");
    assert_eq!(
        groups.json()["groups"][0]["group"],
        group.as_str(),
        "{groups:?}"
    );
}
