//! ACLs on secured clusters (issue 19): `--sync-acls` copies the copied topics' ACLs (and the
//! named groups') under MirrorMaker 2's rule, checked with Kafka's own AclCommand through each
//! broker's PLAINTEXT listener; a permission revoked while a run copies ends it with exit 1
//! and nothing committed past what the target holds. No output of any run shows a password.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::kr::{self, Run};
use crate::common::{self, unique, Kafka};

const SOURCE_PASSWORD: &str = "src-Acl-Pw-7c1e";
const TARGET_PASSWORD: &str = "dst-Acl-Pw-2b9d";
const ADMIN_PASSWORD: &str = "adm-Acl-Pw-55f0";

/// No output of a run, nor its metrics file, holds a password.
#[track_caller]
fn assert_no_secret(run: &Run, metrics: Option<&Path>) {
    let metrics = metrics.map(|m| fs::read_to_string(m).expect("the metrics file"));
    if let Some(m) = &metrics {
        assert!(m.contains("run_info"), "no metrics: {m}");
    }
    for secret in [SOURCE_PASSWORD, TARGET_PASSWORD, ADMIN_PASSWORD] {
        for (name, out) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            assert!(!out.contains(secret), "{name} shows a password: {out}");
        }
        if let Some(m) = &metrics {
            assert!(!m.contains(secret), "the metrics show a password: {m}");
        }
    }
}

/// A secured cluster of the test's own: SASL_PLAINTEXT with the StandardAuthorizer, `admin`
/// its super user, `user` the run's principal, `others` more SCRAM users.
fn secured(name: &str, user: &str, password: &str, others: &[&str]) -> Kafka {
    let admin = format!("admin:{ADMIN_PASSWORD}");
    let run_user = format!("{user}:{password}");
    let others: Vec<String> = others.iter().map(|u| format!("{u}:other-pw")).collect();
    let mut args = vec![
        "--protocol",
        "SASL_PLAINTEXT",
        "--user",
        &admin,
        "--user",
        &run_user,
    ];
    for o in &others {
        args.extend_from_slice(&["--user", o]);
    }
    args.push("--acl");
    Kafka::start_with(name, &args)
}

/// A secured cluster of Kafka `version` (ZooKeeper mode with `zookeeper`), as [`secured`]
/// makes one, with `admin` its only SCRAM user and super user.
fn secured_version(name: &str, version: &str, zookeeper: bool) -> Kafka {
    let admin = format!("admin:{ADMIN_PASSWORD}");
    let args = ["--protocol", "SASL_PLAINTEXT", "--user", &admin, "--acl"];
    Kafka::start_version(name, version, zookeeper, &args)
}

/// Kafka's AclCommand on a cluster's PLAINTEXT listener (its super user).
fn acl_command(kafka: &Kafka, action: &str, args: &[&str]) -> String {
    let internal = kafka.internal();
    let mut argv = vec!["--bootstrap-server", internal.as_str(), action];
    if action == "--remove" {
        argv.push("--force");
    }
    argv.extend_from_slice(args);
    common::kafka_tool("org.apache.kafka.tools.AclCommand", &argv)
}

fn allow(kafka: &Kafka, principal: &str, op: &str, resource: &[&str]) {
    allow_ops(kafka, principal, &[op], resource);
}

/// One AclCommand for several operations (each one a JVM start).
fn allow_ops(kafka: &Kafka, principal: &str, ops: &[&str], resource: &[&str]) {
    let principal = format!("User:{principal}");
    let mut args = vec!["--allow-principal", principal.as_str()];
    for op in ops {
        args.extend_from_slice(&["--operation", op]);
    }
    args.extend_from_slice(resource);
    acl_command(kafka, "--add", &args);
}

/// The ACL lines AclCommand lists for one resource, e.g.
/// `(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)`.
fn listed(kafka: &Kafka, resource: &[&str]) -> Vec<String> {
    let out = acl_command(kafka, "--list", resource);
    let mut lines: Vec<String> = out
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("(principal="))
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

fn entry(principal: &str, op: &str, permission: &str) -> String {
    format!("(principal=User:{principal}, host=*, operation={op}, permissionType={permission})")
}

/// Waits until AclCommand lists `want` for `resource` on `kafka`.
fn wait_for_acl(kafka: &Kafka, resource: &[&str], want: &str, run: &mut Option<Child>) {
    kr::wait_or_kill(Duration::from_secs(60), run, || {
        let have = listed(kafka, resource);
        let found = have.iter().any(|l| l == want);
        (!found).then(|| format!("{want} not on {resource:?}: {have:?}"))
    });
}

/// The client properties of both sides: SCRAM to the source, PLAIN to the target.
fn sasl_args(source_user: &str, target_user: &str) -> Vec<String> {
    let mut v = Vec::new();
    for (flag, user, password, mechanism) in [
        ("-X", source_user, SOURCE_PASSWORD, "SCRAM-SHA-512"),
        ("--to-property", target_user, TARGET_PASSWORD, "PLAIN"),
    ] {
        for p in [
            "security.protocol=SASL_PLAINTEXT".to_string(),
            format!("sasl.mechanism={mechanism}"),
            format!("sasl.username={user}"),
            format!("sasl.password={password}"),
        ] {
            v.push(flag.to_string());
            v.push(p);
        }
    }
    v
}

fn run_in(dir: &Path, args: &[&str]) -> Run {
    let log = dir.join(format!("stderr-{}.log", unique("run")));
    let mut cmd = kr::command(args);
    cmd.stderr(Stdio::from(fs::File::create(&log).expect("stderr file")));
    eprintln!("running kreplicate {}", args.join(" "));
    let mut run = kr::wait(cmd.spawn().expect("spawn"), Duration::from_secs(120));
    run.stderr = fs::read_to_string(&log).expect("stderr");
    run
}

fn scratch(name: &str) -> PathBuf {
    let dir = common::scratch_dir().join(unique(name));
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The source principal may copy the topic and use its group (which does not exist yet: a
/// first run), but not describe the source cluster, which `--sync-acls` needs to read its
/// ACLs: the refusal is the one `kafka-acls` line that grants it, for that cluster and that
/// principal. The broker answers a group that does not exist yet with GROUP_ID_NOT_FOUND and
/// no operations; the check once took that for a broker that checks nothing, and refused
/// nothing on the source (the copy then read no ACLs, without a word).
#[test]
fn issue_19_sync_acls_refusal_names_the_source_principals_missing_cluster_describe() {
    let a = secured("acl-describe", "replicator", SOURCE_PASSWORD, &[]);
    let b = Kafka::shared("b");
    let dir = scratch("acl-describe");
    let topic = unique("described");
    let group = unique("g");
    common::create_topic(&a.internal(), &topic, 2);
    common::produce(&a.internal(), &topic, &kr::records(20, 2, "acl"));
    allow_ops(
        &a,
        "replicator",
        &["Read", "Describe", "DescribeConfigs"],
        &["--topic", &topic],
    );
    allow(&a, "replicator", "Read", &["--group", &group]);
    let copy = format!("dr.{topic}");
    let sasl = [
        "-X".to_string(),
        "security.protocol=SASL_PLAINTEXT".into(),
        "-X".into(),
        "sasl.mechanism=SCRAM-SHA-512".into(),
        "-X".into(),
        "sasl.username=replicator".into(),
        "-X".into(),
        format!("sasl.password={SOURCE_PASSWORD}"),
    ];
    let mut extra: Vec<&str> = vec!["--rename", "dr.{topic}", "--create-topics", "--sync-acls"];
    extra.extend(sasl.iter().map(String::as_str));
    let run = |sub: &[&str]| {
        let mut args = sub.to_vec();
        args.extend(kr::caught_up_args(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            &group,
            "at-least-once",
            &extra,
        ));
        let run = run_in(&dir, &args);
        assert_no_secret(&run, None);
        run
    };
    let want = format!(
        "the run lacks 1 permission (ACLs): on the source cluster '{0}': kafka-acls --bootstrap-server {0} --add --allow-principal 'User:replicator' --operation Describe --cluster",
        a.bootstrap
    );
    let refused = run(&[]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert_eq!(
        refused.stderr.trim(),
        format!("kreplicate: error: {want}"),
        "{}",
        refused.stderr
    );
    let plan = run(&["plan"]);
    assert_eq!(plan.code, 2, "{plan:?}");
    assert_eq!(plan.json()["refusal"], want.as_str(), "{}", plan.stdout);
    // Nothing written, nothing committed.
    assert!(!kr::topics(&b.bootstrap).contains(&copy));
    assert_eq!(
        common::committed(&a.internal(), &group, &topic, 2),
        vec![-1, -1]
    );
}

#[test]
fn issue_19_sync_acls_copies_topic_acls_renamed_without_write_and_follows_changes() {
    let a = secured("acl-src", "replicator", SOURCE_PASSWORD, &[]);
    let b = secured("acl-dst", "writer", TARGET_PASSWORD, &["reader", "owner"]);
    let dir = scratch("sync-acls");
    let topic = unique("orders");
    let copy = format!("dr.{topic}");
    let group = unique("g");
    let app = unique("app");
    common::create_topic(&a.internal(), &topic, 2);
    common::produce(&a.internal(), &topic, &kr::records(80, 2, "acl"));

    // What the source's users may do on the topic, and one group's ACL.
    let t = ["--topic", topic.as_str()];
    allow(&a, "reader", "Read", &t);
    allow(&a, "producer", "Write", &t);
    allow(&a, "owner", "All", &t);
    allow(&a, "ghost", "Describe", &t);
    acl_command(
        &a,
        "--add",
        &[
            "--deny-principal",
            "User:banned",
            "--operation",
            "Write",
            "--topic",
            &topic,
        ],
    );
    allow(&a, "reader", "Read", &["--group", &app]);
    // A prefixed ACL covering the topic is not copied (it cannot follow --rename).
    allow(
        &a,
        "reader",
        "Describe",
        &[
            "--topic",
            &topic[..6],
            "--resource-pattern-type",
            "prefixed",
        ],
    );
    // The run's principals: all it needs to copy, but not yet what --sync-acls needs.
    allow_ops(
        &a,
        "replicator",
        &["Read", "Describe", "DescribeConfigs"],
        &t,
    );
    allow(&a, "replicator", "Read", &["--group", &group]);
    allow(&b, "writer", "All", &["--topic", "*"]);
    allow(&b, "writer", "Describe", &["--cluster"]);

    let sasl = sasl_args("replicator", "writer");
    let mut flags: Vec<&str> = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--group",
        &group,
        "--rename",
        "dr.{topic}",
        "--create-topics",
        "--sync-acls",
    ];
    flags.extend(sasl.iter().map(String::as_str));
    let run = |sub: &[&str], extra: &[&str]| {
        let mut args = sub.to_vec();
        args.extend_from_slice(&flags);
        args.extend_from_slice(extra);
        let run = run_in(&dir, &args);
        assert_no_secret(&run, None);
        run
    };

    // Without DESCRIBE on the source cluster and ALTER on the target cluster: refused at once,
    // as the ACLs to add; nothing written.
    let refused = run(&[], &["--until-caught-up", "--json"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    let line = |side: &str, k: &Kafka, user: &str, op: &str| {
        format!(
            "on the {side} cluster '{}': kafka-acls --bootstrap-server {} --add --allow-principal 'User:{user}' --operation {op} --cluster",
            k.bootstrap, k.bootstrap
        )
    };
    assert_eq!(
        refused.stderr.trim().lines().count(),
        1,
        "{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains(&line("source", &a, "replicator", "Describe"))
            && refused
                .stderr
                .contains(&line("target", &b, "writer", "Alter")),
        "{}",
        refused.stderr
    );
    assert!(!kr::topics(&b.internal()).contains(&copy));
    allow(&a, "replicator", "Describe", &["--cluster"]);
    allow(&b, "writer", "Alter", &["--cluster"]);

    // plan shows what a run would create, and what it leaves out.
    let plan = run(&["plan"], &[]);
    assert_eq!(plan.code, 0, "{plan:?}");
    eprintln!("plan --sync-acls:\n{}", plan.stdout);
    for want in [
        format!("create: Allow 'User:reader' Read on topic '{copy}' from host '*'"),
        format!("create: Allow 'User:owner' Read on topic '{copy}' from host '*'"),
        format!("create: Deny 'User:banned' Write on topic '{copy}' from host '*'"),
        format!("not copied (an ALLOW WRITE: the run is the copies' one writer): Allow 'User:producer' Write on topic '{topic}' from host '*'"),
    ] {
        assert!(plan.stdout.contains(&want), "plan lacks {want}:\n{}", plan.stdout);
    }
    let plan = run(&["plan"], &["--json"]);
    assert_eq!(plan.code, 0, "{plan:?}");
    // reader, owner (All as Read), ghost, banned, and the replicator's own three.
    assert_eq!(
        plan.json()["acls"]["missing"].as_array().unwrap().len(),
        7,
        "{}",
        plan.stdout
    );
    assert!(listed(&b, &["--topic", &copy]).is_empty());

    let metrics = dir.join("metrics.prom");
    let metrics_arg = metrics.to_str().unwrap();
    let copied = run(
        &[],
        &[
            "--until-caught-up",
            "--json",
            "-vv",
            "-X",
            "debug=security,broker",
            "--metrics-file",
            metrics_arg,
        ],
    );
    assert_eq!(copied.code, 0, "{}", copied.stderr);
    assert_no_secret(&copied, Some(&metrics));
    assert!(
        copied.stderr.contains("SCRAM-SHA-512"),
        "no SASL debug lines"
    );
    assert_eq!(copied.json()["records"], 80);
    kr::assert_complete(&a.internal(), &b.internal(), &topic, &copy, 2);
    // The principals the target has no SCRAM credentials for are named, once.
    let warning: Vec<&str> = copied
        .stderr
        .lines()
        .filter(|l| l.contains("holds no SCRAM credentials for"))
        .collect();
    assert_eq!(warning.len(), 1, "{}", copied.stderr);
    assert!(
        warning[0].contains("User:ghost")
            && warning[0].contains("User:replicator")
            && !warning[0].contains("User:reader"),
        "{}",
        warning[0]
    );
    assert!(copied.stderr.contains("PREFIXED"), "{}", copied.stderr);

    // Kafka's own view of the target: READ kept, WRITE dropped, ALL as READ, DENY kept, the
    // group's ACLs not copied without --sync-group-acls.
    eprintln!(
        "kafka-acls --list --topic {copy} on the target:\n{}",
        acl_command(&b, "--list", &["--topic", &copy])
    );
    let on_copy = listed(&b, &["--topic", &copy]);
    let mut want = vec![
        entry("banned", "WRITE", "DENY"),
        entry("ghost", "DESCRIBE", "ALLOW"),
        entry("owner", "READ", "ALLOW"),
        entry("reader", "READ", "ALLOW"),
        entry("replicator", "DESCRIBE", "ALLOW"),
        entry("replicator", "DESCRIBE_CONFIGS", "ALLOW"),
        entry("replicator", "READ", "ALLOW"),
    ];
    want.sort();
    assert_eq!(on_copy, want);
    assert!(listed(&b, &["--group", &app]).is_empty());
    assert!(listed(&b, &["--topic", &topic]).is_empty());

    // verify --acls: nothing missing; then a new source ACL shows as missing (exit 1).
    let verify_flags = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "verify",
            "--from",
            &a.bootstrap,
            "--to",
            &b.bootstrap,
            "--topics",
            &topic,
            "--rename",
            "dr.{topic}",
            "--acls",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(sasl.iter().cloned());
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let verify = |extra: &[&str]| {
        let v = verify_flags(extra);
        let args: Vec<&str> = v.iter().map(String::as_str).collect();
        let run = run_in(&dir, &args);
        assert_no_secret(&run, None);
        run
    };
    let same = verify(&["--json"]);
    assert_eq!(same.code, 0, "{same:?}");
    assert_eq!(same.json()["acls_missing"].as_array().unwrap().len(), 0);
    allow(&a, "late", "Read", &t);
    let differs = verify(&[]);
    assert_eq!(differs.code, 1, "{differs:?}");
    eprintln!("verify --acls:\n{}", differs.stdout);
    assert!(
        differs.stdout.contains(&format!(
            "missing: Allow 'User:late' Read on topic '{copy}' from host '*'"
        )) && differs.stdout.contains("1 ACLs missing on the target"),
        "{}",
        differs.stdout
    );

    // A continuous run with the group's ACLs opted in: they are created at start, and an ACL
    // added to the source while it runs follows within --refresh-topics.
    let mut args: Vec<&str> = flags.clone();
    args.extend_from_slice(&[
        "--sync-group-acls",
        &app,
        "--refresh-topics",
        "1s",
        "--json",
        "--metrics-file",
        metrics_arg,
    ]);
    args.extend_from_slice(&kr::FAST_GROUP);
    let log = dir.join("continuous.log");
    let mut cmd = kr::command(&args);
    cmd.stderr(Stdio::from(fs::File::create(&log).unwrap()));
    let mut child = Some(cmd.spawn().expect("spawn"));
    wait_for_acl(
        &b,
        &["--group", &app],
        &entry("reader", "READ", "ALLOW"),
        &mut child,
    );
    wait_for_acl(
        &b,
        &["--topic", &copy],
        &entry("late", "READ", "ALLOW"),
        &mut child,
    );
    allow(&a, "later", "All", &t);
    wait_for_acl(
        &b,
        &["--topic", &copy],
        &entry("later", "READ", "ALLOW"),
        &mut child,
    );
    let mut stopped = kr::stop(&mut child);
    stopped.stderr = fs::read_to_string(&log).unwrap();
    assert_no_secret(&stopped, Some(&metrics));
    assert!(
        stopped.stderr.contains("--sync-acls created"),
        "{}",
        stopped.stderr
    );
    // The run's own group is no named group: its ACL stays on the source.
    assert!(listed(&b, &["--group", &group]).is_empty());
    let same = verify(&[]);
    assert_eq!(same.code, 0, "{same:?}");
}

#[test]
fn issue_19_a_write_permission_revoked_while_copying_exits_1_with_nothing_committed_past_the_target(
) {
    let a = Kafka::shared("a");
    let b = secured("revoke", "writer", TARGET_PASSWORD, &[]);
    let dir = scratch("revoke");
    let topic = unique("revoked");
    let group = unique("g");
    common::create_topic(&a.bootstrap, &topic, 2);
    common::create_topic(&b.internal(), &topic, 2);
    let t = ["--topic", topic.as_str()];
    allow_ops(&b, "writer", &["Write", "Describe"], &t);
    allow(&b, "writer", "All", &["--topic", "__kreplicate.index"]);
    let target = [
        "--to-property".to_string(),
        "security.protocol=SASL_PLAINTEXT".into(),
        "--to-property".into(),
        "sasl.mechanism=PLAIN".into(),
        "--to-property".into(),
        "sasl.username=writer".into(),
        "--to-property".into(),
        format!("sasl.password={TARGET_PASSWORD}"),
    ];
    let metrics = dir.join("metrics.prom");
    let mut args: Vec<&str> = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--group",
        &group,
        "--commit-interval",
        "200ms",
        "--json",
        "--metrics-file",
        metrics.to_str().unwrap(),
    ];
    args.extend(target.iter().map(String::as_str));
    args.extend_from_slice(&kr::FAST_GROUP);

    // Records copied while allowed, then the permission revoked under the running copy, then
    // more records, which the target refuses.
    common::produce(&a.bootstrap, &topic, &kr::records(200, 2, "before"));
    let log = dir.join("copy.log");
    let mut cmd = kr::command(&args);
    cmd.stderr(Stdio::from(fs::File::create(&log).unwrap()));
    let mut child = Some(cmd.spawn().expect("spawn"));
    // Gated on the group's committed positions: all 200 records copied and committed.
    kr::wait_for_committed(&a.bootstrap, &group, &topic, &[100, 100], &mut child);
    acl_command(
        &b,
        "--remove",
        &[
            "--allow-principal",
            "User:writer",
            "--operation",
            "Write",
            "--topic",
            &topic,
        ],
    );
    common::produce(&a.bootstrap, &topic, &kr::records(100, 2, "after"));
    let revoked = Instant::now();
    let mut run = kr::wait(child.take().unwrap(), Duration::from_secs(120));
    let took = revoked.elapsed();
    run.stderr = fs::read_to_string(&log).unwrap();
    eprintln!("exited {} after {took:?}: {}", run.code, run.stderr);
    assert_no_secret(&run, Some(&metrics));
    // Exit 1, not 2: the same command succeeds once the permission is back.
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.to_lowercase().contains("authoriz"),
        "the error says why: {}",
        run.stderr
    );
    // Nothing committed past what the target holds.
    let committed =
        kr::assert_committed_is_covered(&a.bootstrap, &b.internal(), &group, &topic, &topic, 2);
    assert!(
        committed.iter().all(|c| *c >= 100),
        "the records before: {committed:?}"
    );

    // The permission restored: a rerun copies the rest.
    allow(&b, "writer", "Write", &t);
    let mut rerun_args: Vec<&str> = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--group",
        &group,
        "--until-caught-up",
        "--json",
        "--timeout",
        "120s",
        "-vv",
        "--to-property",
        "debug=security,broker",
    ];
    rerun_args.extend(target.iter().map(String::as_str));
    rerun_args.extend_from_slice(&kr::FAST_GROUP);
    let started = Instant::now();
    let rerun = run_in(&dir, &rerun_args);
    let took = started.elapsed();
    assert_no_secret(&rerun, None);
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    // The writer may not read the target topic (at-least-once needs no Read there): the start
    // used to poll it for the whole --timeout before copying.
    assert!(
        took < Duration::from_secs(60),
        "the rerun took {took:?}: it waited out --timeout 120s on a target it may not read"
    );
    assert!(rerun.stderr.contains("PLAIN"), "no SASL debug lines");
    kr::assert_complete(&a.bootstrap, &b.internal(), &topic, &topic, 2);
}

/// Issue 34: a topic found by `--refresh-topics` gets the permission check a topic named at
/// start gets. The run's principal may describe a new matching topic but not read it: the
/// refresh leaves it out with the line a start naming it refuses with, the first topic's copy
/// goes on, and once Read is granted the next refresh copies it.
#[test]
fn issue_34_a_discovered_topic_without_read_is_refused_as_at_start() {
    let a = secured("acl-discover", "replicator", SOURCE_PASSWORD, &[]);
    let b = Kafka::shared("b");
    let dir = scratch("acl-discover");
    let prefix = unique("adm");
    let (first, found) = (format!("{prefix}.a"), format!("{prefix}.b"));
    let group = unique("g");
    for t in [&first, &found] {
        common::create_topic(&b.bootstrap, t, 1);
    }
    common::create_topic(&a.internal(), &first, 1);
    common::produce(&a.internal(), &first, &kr::records(10, 1, "first"));
    allow_ops(
        &a,
        "replicator",
        &["Read", "Describe"],
        &["--topic", &first],
    );
    allow(&a, "replicator", "Read", &["--group", &group]);
    let sasl = [
        "-X".to_string(),
        "security.protocol=SASL_PLAINTEXT".into(),
        "-X".into(),
        "sasl.mechanism=SCRAM-SHA-512".into(),
        "-X".into(),
        "sasl.username=replicator".into(),
        "-X".into(),
        format!("sasl.password={SOURCE_PASSWORD}"),
    ];
    let sasl: Vec<&str> = sasl.iter().map(String::as_str).collect();
    let regex = format!("^{prefix}\\..*");
    let mut args: Vec<&str> = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &regex,
        "--group",
        &group,
        "--refresh-topics",
        "1s",
        "--json",
    ];
    args.extend_from_slice(&sasl);
    args.extend_from_slice(&kr::FAST_GROUP);
    let log = dir.join("continuous.log");
    let mut cmd = kr::command(&args);
    cmd.stderr(Stdio::from(fs::File::create(&log).unwrap()));
    let mut child = Some(cmd.spawn().expect("spawn"));
    kr::wait_for_committed(&a.internal(), &group, &first, &[10], &mut child);

    // A new matching topic the principal may see (Describe) but not read.
    common::create_topic(&a.internal(), &found, 1);
    common::produce(&a.internal(), &found, &kr::records(5, 1, "found"));
    allow(&a, "replicator", "Describe", &["--topic", &found]);
    let want = format!(
        "the run lacks 1 permission (ACLs): on the source cluster '{0}': kafka-acls --bootstrap-server {0} --add --allow-principal 'User:replicator' --operation Read --topic '{found}'",
        a.bootstrap
    );
    let line = format!("kreplicate: warning: new source topic '{found}' is not copied: {want}");
    // Off a terminal each line starts with its time.
    let said = |l: &str| l == line || l.ends_with(&format!(" {line}"));
    kr::wait_or_kill(Duration::from_secs(60), &mut child, || {
        let err = fs::read_to_string(&log).unwrap_or_default();
        (!err.lines().any(said)).then(|| format!("no line {line:?} in: {err}"))
    });
    // A start naming that topic refuses with the same line (exit 2).
    let named = run_in(
        &dir,
        &kr::caught_up_args(
            &a.bootstrap,
            &b.bootstrap,
            &found,
            &group,
            "at-least-once",
            &sasl,
        ),
    );
    assert_eq!(named.code, 2, "{named:?}");
    assert_eq!(named.stderr.trim(), format!("kreplicate: error: {want}"));

    // Read granted: the next refresh copies it; the first topic's copy went on meanwhile.
    allow(&a, "replicator", "Read", &["--topic", &found]);
    common::produce(&a.internal(), &first, &kr::records(10, 1, "more"));
    kr::wait_for_committed(&a.internal(), &group, &found, &[5], &mut child);
    kr::wait_for_committed(&a.internal(), &group, &first, &[20], &mut child);
    let mut run = kr::stop(&mut child);
    run.stderr = fs::read_to_string(&log).unwrap();
    assert_no_secret(&run, None);
    assert_eq!(
        run.stderr.lines().filter(|l| said(l)).count(),
        1,
        "said once: {}",
        run.stderr
    );
}

/// A target topic the run's principal may not describe is hidden by Kafka (left out of the
/// listing, TOPIC_AUTHORIZATION_FAILED when asked for by name): the start names the missing
/// Describe grant, not "does not exist ... create it", advice that fails again (issue 35, 17).
#[test]
fn issue_35_a_target_topic_hidden_by_a_missing_describe_names_the_grant() {
    let a = Kafka::shared("a");
    let b = secured("acl-hidden", "writer", TARGET_PASSWORD, &[]);
    let dir = scratch("acl-hidden");
    let topic = unique("hidden");
    common::create_topic(&a.bootstrap, &topic, 2);
    common::produce(&a.bootstrap, &topic, &kr::records(10, 2, "h"));
    common::create_topic(&b.internal(), &topic, 2);
    let to = [
        "security.protocol=SASL_PLAINTEXT".to_string(),
        "sasl.mechanism=PLAIN".into(),
        "sasl.username=writer".into(),
        format!("sasl.password={TARGET_PASSWORD}"),
    ];
    let mut extra: Vec<&str> = Vec::new();
    for p in &to {
        extra.extend_from_slice(&["--to-property", p]);
    }
    let group = unique("g");
    let args = kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        "at-least-once",
        &extra,
    );
    let run = run_in(&dir, &args);
    assert_eq!(run.code, 2, "{run:?}");
    let want = format!(
        "kreplicate: error: target topic '{topic}' on '{0}' cannot be seen by the run (Kafka hides a topic its principal may not describe): the run lacks 1 permission (ACLs): on the target cluster '{0}': kafka-acls --bootstrap-server {0} --add --allow-principal 'User:writer' --operation Describe --topic '{topic}'",
        b.bootstrap
    );
    assert_eq!(run.stderr.trim(), want);
    assert_eq!(
        common::committed(&a.bootstrap, &group, &topic, 2),
        vec![-1, -1],
        "a refused start commits nothing"
    );
}

/// Leaving ZooKeeper with the ACLs (issue 33): from a 3.9.1 ZooKeeper-mode source
/// (`AclAuthorizer`, ACLs in ZooKeeper) to a 4.4.0 KRaft target (`StandardAuthorizer`, ACLs in
/// the metadata log), `--sync-acls` and `--sync-group-acls` copy a topic's and a group's ACLs
/// as written, ALLOW and DENY. The run is each cluster's super user, as a migration's may be.
#[test]
fn issue_33_sync_acls_from_a_zookeeper_source_to_a_kraft_target() {
    let (a, b) = std::thread::scope(|s| {
        let b = s.spawn(|| secured_version("acl-kraft", "4.4.0", false));
        let a = secured_version("acl-zk", "3.9.1", true);
        (a, b.join().expect("start the 4.4.0 cluster"))
    });
    assert_eq!(
        (a.version(), b.version()),
        ("3.9.1 zk".into(), "4.4.0 kraft".into())
    );
    let dir = scratch("zk-acls");
    let topic = unique("zk-orders");
    let app = unique("zk-app");
    common::create_topic(&a.internal(), &topic, 2);
    common::produce(&a.internal(), &topic, &kr::records(20, 2, "zk"));
    allow(&a, "reader", "Read", &["--topic", &topic]);
    acl_command(
        &a,
        "--add",
        &[
            "--deny-principal",
            "User:banned",
            "--operation",
            "Write",
            "--topic",
            &topic,
        ],
    );
    allow(&a, "reader", "Read", &["--group", &app]);
    let mut args = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        &topic,
        "--create-topics",
        "--sync-acls",
        "--sync-group-acls",
        &app,
        "--until-caught-up",
    ];
    let password = format!("sasl.password={ADMIN_PASSWORD}");
    for flag in ["-X", "--to-property"] {
        for p in [
            "security.protocol=SASL_PLAINTEXT",
            "sasl.mechanism=SCRAM-SHA-512",
            "sasl.username=admin",
            &password,
        ] {
            args.extend([flag, p]);
        }
    }
    let copied = run_in(&dir, &args);
    assert_eq!(copied.code, 0, "{}", copied.stderr);
    assert_no_secret(&copied, None);
    kr::assert_complete(&a.internal(), &b.internal(), &topic, &topic, 2);
    let mut want = vec![
        entry("banned", "WRITE", "DENY"),
        entry("reader", "READ", "ALLOW"),
    ];
    want.sort();
    assert_eq!(listed(&b, &["--topic", &topic]), want);
    assert_eq!(
        listed(&b, &["--group", &app]),
        vec![entry("reader", "READ", "ALLOW")]
    );
}

/// Issue 41 (item 12): the guide promises that an exactly-once run failing on a fatal source
/// error with its transaction open aborts that transaction on the way out; left open, it would
/// hold every read_committed reader of the target partition until `transaction.timeout.ms`
/// (here more than 5 minutes). The fault: the run's Read permission on its source topic removed
/// while 10 copies sit in its open transaction (a deleted topic is no such error: discovery
/// follows it and the transaction commits).
#[test]
fn issue_41_a_fatal_source_error_aborts_the_open_transaction_on_the_way_out() {
    let a = secured("eos-fatal", "replicator", SOURCE_PASSWORD, &[]);
    let b = Kafka::shared("b");
    let topic = &unique("eos-fatal");
    let group = &unique("g");
    common::create_topic(&a.internal(), topic, 1);
    common::create_topic(&b.bootstrap, topic, 1);
    common::produce(&a.internal(), topic, &kr::records(10, 1, "src"));
    let t = ["--topic", topic.as_str()];
    allow_ops(&a, "replicator", &["Read", "Describe"], &t);
    allow(&a, "replicator", "Read", &["--group", group]);
    let sasl = [
        "security.protocol=SASL_PLAINTEXT".to_string(),
        "sasl.mechanism=SCRAM-SHA-512".into(),
        "sasl.username=replicator".into(),
        format!("sasl.password={SOURCE_PASSWORD}"),
    ];
    let mut args: Vec<&str> = vec![
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        topic,
        "--group",
        group,
        "--guarantee",
        "exactly-once",
        "--txn-max-time",
        "5m",
        "--json",
        "-v",
    ];
    for p in &sasl {
        args.extend(["-X", p.as_str()]);
    }
    let mut run = Some(kr::spawn(&args));
    kr::wait_or_kill(Duration::from_secs(60), &mut run, || {
        let (stable, high) = common::stable_and_high(&b.bootstrap, topic, 0);
        (high < 10).then(|| format!("the target at {stable} of {high}"))
    });
    // The fault lands with the copies in the run's open transaction: sent, not visible.
    let at_fault = common::stable_and_high(&b.bootstrap, topic, 0);
    assert_eq!(
        at_fault,
        (0, 10),
        "the 10 copies are in an open transaction"
    );
    acl_command(
        &a,
        "--remove",
        &[
            "--allow-principal",
            "User:replicator",
            "--operation",
            "Read",
            "--topic",
            topic,
        ],
    );
    let revoked = Instant::now();
    let failed = kr::wait(run.take().expect("running"), Duration::from_secs(120));
    let exited = revoked.elapsed();
    let (stable, high) = common::stable_and_high(&b.bootstrap, topic, 0);
    let error = failed.json()["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    eprintln!(
        "evidence: Read revoked with the target at (last stable, high) {at_fault:?}: exit {} {exited:.1?} later, {error:?}; the target then at ({stable}, {high})",
        failed.code
    );
    assert_eq!(failed.code, 1, "{failed:?}");
    assert!(error.contains("Topic authorization failed"), "{error}");
    assert!(
        failed
            .stderr
            .contains("aborted the open transaction of 10 records on the way out"),
        "{}",
        failed.stderr
    );
    assert_eq!(stable, high, "read_committed readers reach the end at once");
    assert!(
        common::read_all(&b.bootstrap, topic).is_empty(),
        "the aborted copies are not visible"
    );
}
