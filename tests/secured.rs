//! Secured clusters (issue 19) on Apache Kafka: a copy, `plan`, `verify` and `groups` from a
//! SASL_SSL source (SCRAM-SHA-512, the CA checked, the host name verified) to a SASL_PLAINTEXT
//! target (PLAIN), and over plain SSL; refused credentials and certificates are one line and
//! exit 2. Secrets come from a file and from the environment, and no output shows them. The
//! tests set up and check through each broker's own PLAINTEXT listener ([`Kafka::internal`]).

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::kr::{self, Run};
use crate::common::{self, unique, Kafka};

/// The secrets of these tests: no output of any run may hold any of them.
const SOURCE_PASSWORD: &str = "src-Pw-4fd1c9e7";
const TARGET_PASSWORD: &str = "dst-Pw-93b0aa52";
const TARGET_PASSWORD_ENV: &str = "KREPLICATE_TEST_TARGET_PASSWORD";

/// Runs kreplicate with the target password in the environment; stderr goes to a file, since
/// librdkafka's debug output at `-vv` can outgrow a pipe that is read only at the end.
fn run_in(dir: &Path, args: &[&str]) -> Run {
    let log = dir.join(format!("stderr-{}.log", unique("run")));
    let mut cmd = kr::command(args);
    cmd.env(TARGET_PASSWORD_ENV, TARGET_PASSWORD)
        .stderr(Stdio::from(fs::File::create(&log).expect("stderr file")));
    eprintln!("running kreplicate {}", args.join(" "));
    let mut run = kr::wait(
        cmd.spawn().expect("spawn kreplicate"),
        Duration::from_secs(120),
    );
    run.stderr = fs::read_to_string(&log).expect("stderr");
    run
}

#[track_caller]
fn assert_no_secret(run: &Run) {
    for secret in [SOURCE_PASSWORD, TARGET_PASSWORD] {
        for (name, out) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            assert!(!out.contains(secret), "{name} shows a password: {out}");
        }
    }
}

/// The metrics a run wrote (`--metrics-file`) show no password either.
#[track_caller]
fn assert_no_secret_in(metrics: &Path) {
    let text = fs::read_to_string(metrics).expect("the metrics file");
    assert!(text.contains("run_info"), "no metrics: {text}");
    for secret in [SOURCE_PASSWORD, TARGET_PASSWORD] {
        assert!(
            !text.contains(secret),
            "the metrics show a password: {text}"
        );
    }
}

/// The config file of docs/guide.md's "Secured clusters" section, as tested.
fn config(source: &Kafka, target: &Kafka, password_file: &Path) -> String {
    format!(
        r#"clusters:
  a:
    bootstrap: "localhost:{source_port}"
    properties:
      security.protocol: SASL_SSL
      sasl.mechanism: SCRAM-SHA-512
      sasl.username: replicator
      sasl.password: ${{file:{password_file}}}
      ssl.ca.location: {ca}
      debug: security,broker
  b:
    bootstrap: "{target}"
    properties:
      security.protocol: SASL_PLAINTEXT
      sasl.mechanism: PLAIN
      sasl.username: writer
      sasl.password: ${{{TARGET_PASSWORD_ENV}}}
"#,
        source_port = source.port,
        password_file = password_file.display(),
        ca = source.dir.join("ca.pem").display(),
        target = target.bootstrap,
    )
}

#[test]
fn issue_19_copy_plan_verify_and_groups_over_sasl_ssl_and_sasl_plaintext() {
    let a = Kafka::start_with(
        "sasl-ssl",
        &[
            "--protocol",
            "SASL_SSL",
            "--user",
            &format!("replicator:{SOURCE_PASSWORD}"),
        ],
    );
    let b = Kafka::start_with(
        "sasl-plain",
        &[
            "--protocol",
            "SASL_PLAINTEXT",
            "--user",
            &format!("writer:{TARGET_PASSWORD}"),
        ],
    );
    let dir = common::scratch_dir().join(unique("secured"));
    fs::create_dir_all(&dir).unwrap();
    let password_file = dir.join("source-password");
    fs::write(&password_file, format!("{SOURCE_PASSWORD}\n")).unwrap();
    let file = dir.join("kreplicate.yaml");
    fs::write(&file, config(&a, &b, &password_file)).unwrap();
    let file = file.to_str().unwrap();

    let topic = unique("orders");
    let group = unique("app");
    common::create_topic(&a.internal(), &topic, 2);
    let records = kr::records(400, 2, "sec");
    common::produce(&a.internal(), &topic, &records);
    common::commit(&a.internal(), &group, &topic, &[(0, 50), (1, 200)]);

    let flags = [
        "--config", file, "--from", "a", "--to", "b", "--topics", &topic,
    ];
    let with = |sub: &[&str], extra: &[&str]| -> Run {
        let mut args: Vec<&str> = sub.to_vec();
        args.extend_from_slice(&flags);
        args.extend_from_slice(extra);
        let run = run_in(&dir, &args);
        assert_no_secret(&run);
        run
    };

    let plan = with(&["plan"], &["--create-topics", "--json"]);
    assert_eq!(plan.code, 0, "{plan:?}");
    assert_eq!(plan.json()["records_to_copy"], 400, "{}", plan.stdout);

    let metrics = dir.join("metrics.prom");
    let copy = with(
        &[],
        &[
            "--create-topics",
            "--until-caught-up",
            "--json",
            "-vv",
            "--metrics-file",
            metrics.to_str().unwrap(),
        ],
    );
    assert_eq!(copy.code, 0, "{}", copy.stderr);
    assert_no_secret_in(&metrics);
    assert_eq!(copy.json()["records"], 400);
    // -vv with debug=security,broker: librdkafka's TLS and SASL steps are in the log.
    assert!(copy.stderr.contains("SCRAM-SHA-512"), "no SASL debug lines");
    kr::assert_complete(&a.internal(), &b.internal(), &topic, &topic, 2);

    let verify = with(&["verify"], &["--json"]);
    assert_eq!(verify.code, 0, "{verify:?}");
    assert_eq!(verify.json()["exact"], true, "{}", verify.stdout);

    let groups = with(&["groups"], &["--groups", &group]);
    assert_eq!(groups.code, 0, "{groups:?}");
    // Each group-partition on B at the copy of the record it would have read next on A.
    assert_eq!(
        common::committed(&b.internal(), &group, &topic, 2),
        vec![50, 200]
    );
}

#[test]
fn issue_19_a_copy_over_plain_ssl_checks_the_ca() {
    let a = Kafka::start_with("ssl", &["--protocol", "SSL"]);
    let b = Kafka::shared("b");
    let topic = unique("tls");
    common::create_topic(&a.internal(), &topic, 1);
    common::create_topic(&b.bootstrap, &topic, 1);
    common::produce(&a.internal(), &topic, &kr::records(100, 1, "tls"));
    let ca = format!("ssl.ca.location={}", a.dir.join("ca.pem").display());
    let group = unique("g");
    let mut args = kr::caught_up_args(
        &a.bootstrap,
        &b.bootstrap,
        &topic,
        &group,
        "at-least-once",
        &[],
    );
    args.extend_from_slice(&["-X", "security.protocol=SSL", "-X", &ca]);
    let run = kr::run(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["records"], 100);
    kr::assert_complete(&a.internal(), &b.bootstrap, &topic, &topic, 1);
}

#[test]
fn issue_19_refused_credentials_and_certificates_are_one_line_and_exit_2() {
    let a = Kafka::start_with(
        "refusing",
        &[
            "--protocol",
            "SASL_SSL",
            "--user",
            &format!("replicator:{SOURCE_PASSWORD}"),
        ],
    );
    let b = Kafka::shared("b");
    let topic = unique("t");
    let group = unique("g");
    common::create_topic(&a.internal(), &topic, 1);
    common::create_topic(&b.bootstrap, &topic, 1);
    common::produce(&a.internal(), &topic, &kr::records(10, 1, "r"));
    let ca = a.dir.join("ca.pem").display().to_string();
    // The system's CAs, which never signed the test broker's certificate.
    let untrusted = "/etc/ssl/certs/ca-certificates.crt";
    let cases: [(&str, &str, &str, &str, &str); 4] = [
        (
            "a wrong password",
            "replicator",
            "not-the-password",
            &ca,
            "SASL authentication failed",
        ),
        (
            "an unknown user",
            "nobody",
            SOURCE_PASSWORD,
            &ca,
            "SASL authentication failed",
        ),
        (
            "an untrusted certificate",
            "replicator",
            SOURCE_PASSWORD,
            untrusted,
            "check ssl.ca.location",
        ),
        (
            "a listener without TLS",
            "replicator",
            SOURCE_PASSWORD,
            &ca,
            "check security.protocol",
        ),
    ];
    let dir = common::scratch_dir().join(unique("refusals"));
    fs::create_dir_all(&dir).unwrap();
    for (case, user, password, ca, says) in cases {
        // The last case speaks TLS to the broker's PLAINTEXT listener.
        let bootstrap = if case == "a listener without TLS" {
            a.internal()
        } else {
            a.bootstrap.clone()
        };
        let props = [
            "security.protocol=SASL_SSL".to_string(),
            "sasl.mechanism=SCRAM-SHA-512".to_string(),
            format!("sasl.username={user}"),
            format!("sasl.password={password}"),
            format!("ssl.ca.location={ca}"),
        ];
        let mut args = vec![
            "--from",
            &bootstrap,
            "--to",
            &b.bootstrap,
            "--topics",
            &topic,
            "--group",
            &group,
            "--until-caught-up",
            "--timeout",
            "20s",
        ];
        for p in &props {
            args.extend_from_slice(&["-X", p]);
        }
        let started = Instant::now();
        let run = run_in(&dir, &args);
        let took = started.elapsed();
        eprintln!("{case} ({took:?}): {}", run.stderr.trim());
        assert_eq!(run.code, 2, "{case}: {run:?}");
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{case}: one line: {}", run.stderr);
        assert!(
            lines[0].contains(&format!(
                "the source cluster '{bootstrap}' refused the connection"
            )) && lines[0].contains(says),
            "{case}: {}",
            lines[0]
        );
        assert_no_secret(&run);
        assert!(
            !run.stderr.contains("not-the-password") && !run.stdout.contains("not-the-password")
        );
        assert!(
            took < Duration::from_secs(20),
            "{case}: took {took:?}, the whole --timeout"
        );
    }
    assert!(common::read_all(&b.bootstrap, &topic).is_empty());
    assert_eq!(
        common::committed(&a.internal(), &group, &topic, 1),
        vec![-1]
    );
}

/// Adds ACLs with Kafka's own tool, through the broker's PLAINTEXT listener (its super user).
fn add_acl(kafka: &Kafka, args: &[&str]) {
    let internal = kafka.internal();
    let mut argv = vec!["--bootstrap-server", internal.as_str(), "--add"];
    argv.extend_from_slice(args);
    common::kafka_tool("org.apache.kafka.tools.AclCommand", &argv);
}

#[test]
fn issue_19_a_missing_permission_is_refused_before_copying_as_the_acl_to_add() {
    let a = Kafka::start_with(
        "acl",
        &[
            "--protocol",
            "SASL_PLAINTEXT",
            "--user",
            "admin:admin-pw",
            "--user",
            &format!("replicator:{SOURCE_PASSWORD}"),
            "--acl",
        ],
    );
    let b = Kafka::shared("b");
    let topic = unique("guarded");
    let group = unique("g");
    common::create_topic(&a.internal(), &topic, 2);
    common::create_topic(&b.bootstrap, &topic, 2);
    let records = kr::records(60, 2, "acl");
    common::produce(&a.internal(), &topic, &records);
    // The replicator may see the topic, but neither read it nor use its group.
    add_acl(
        &a,
        &[
            "--allow-principal",
            "User:replicator",
            "--operation",
            "Describe",
            "--topic",
            &topic,
        ],
    );

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
    let dir = common::scratch_dir().join(unique("acl"));
    fs::create_dir_all(&dir).unwrap();
    let run = |sub: &[&str]| {
        let mut args = sub.to_vec();
        args.extend(kr::caught_up_args(
            &a.bootstrap,
            &b.bootstrap,
            &topic,
            &group,
            "at-least-once",
            &sasl,
        ));
        let run = run_in(&dir, &args);
        assert_no_secret(&run);
        run
    };
    let grant = |op: &str, resource: &str, name: &str| {
        format!(
            "kafka-acls --bootstrap-server {} --add --allow-principal 'User:replicator' --operation {op} --{resource} '{name}'",
            a.bootstrap
        )
    };
    let copy = run(&[]);
    assert_eq!(copy.code, 2, "{copy:?}");
    assert_eq!(copy.stderr.trim().lines().count(), 1, "{}", copy.stderr);
    assert!(
        copy.stderr.contains(&format!(
            "the run lacks 2 permissions (ACLs): on the source cluster '{}': {}; on the source cluster '{}': {}",
            a.bootstrap,
            grant("Read", "topic", &topic),
            a.bootstrap,
            grant("Read", "group", &group)
        )),
        "{}",
        copy.stderr
    );
    let plan = run(&["plan"]);
    assert_eq!(plan.code, 2, "{plan:?}");
    assert!(
        plan.stdout.contains(&grant("Read", "group", &group)),
        "{}",
        plan.stdout
    );
    assert!(common::read_all(&b.bootstrap, &topic).is_empty());
    assert_eq!(
        common::committed(&a.internal(), &group, &topic, 2),
        vec![-1, -1]
    );

    // With the two ACLs the refusal named, the same command copies everything.
    add_acl(
        &a,
        &[
            "--allow-principal",
            "User:replicator",
            "--operation",
            "Read",
            "--topic",
            &topic,
        ],
    );
    add_acl(
        &a,
        &[
            "--allow-principal",
            "User:replicator",
            "--operation",
            "Read",
            "--group",
            &group,
        ],
    );
    let metrics = dir.join("metrics.prom");
    let copy = run(&[
        "-vv",
        "-X",
        "debug=security,broker",
        "--metrics-file",
        metrics.to_str().unwrap(),
    ]);
    assert_eq!(copy.code, 0, "{}", copy.stderr);
    assert!(copy.stderr.contains("SCRAM-SHA-512"), "no SASL debug lines");
    assert_no_secret_in(&metrics);
    assert_eq!(copy.json()["records"], 60);
    kr::assert_complete(&a.internal(), &b.bootstrap, &topic, &topic, 2);
}
