//! Issue 35, item 14: a cluster's settings that could not work are refused at once (exit 2,
//! naming the setting) instead of waiting --timeout for a broker that never answers (exit 1,
//! which systemd restarts for ever); `${VAR}` in a config file's `bootstrap` is expanded as in
//! properties.

use std::time::{Duration, Instant};

use crate::common::kr;
use crate::common::{self, Kafka};

#[test]
fn issue_35_sasl_credentials_without_a_sasl_protocol_are_refused_at_once() {
    let (a, b) = (kr::closed_address(), kr::closed_address());
    for (props, named) in [
        (
            &["-X", "sasl.username=app", "-X", "sasl.password=secret"][..],
            "no security.protocol",
        ),
        (
            &["-X", "security.protocol=SSL", "-X", "sasl.mechanism=PLAIN"][..],
            "security.protocol is 'SSL'",
        ),
    ] {
        let mut args = vec![
            "--from",
            &a,
            "--to",
            &b,
            "--topics",
            "t",
            "--timeout",
            "10s",
        ];
        args.extend_from_slice(props);
        let started = Instant::now();
        let run = kr::run(&args);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(
            run.stderr.contains(named) && run.stderr.contains("security.protocol=SASL_SSL"),
            "{run:?}"
        );
        assert!(!run.stderr.contains("secret"), "{run:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "{run:?}");
    }
}

#[test]
fn issue_35_a_config_files_bootstrap_takes_environment_variables() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("env-boot");
    common::create_topic(&a.bootstrap, &topic, 1);
    let file = common::scratch_dir().join(format!("{topic}.yaml"));
    std::fs::write(
        &file,
        "clusters:\n  src:\n    bootstrap: \"${KR_TEST_SRC}\"\n  dst:\n    bootstrap: \"${KR_TEST_DST}\"\n",
    )
    .expect("write the config file");
    let file = file.to_str().expect("path");
    let args = [
        "plan",
        "--config",
        file,
        "--from",
        "src",
        "--to",
        "dst",
        "--topics",
        &topic,
        "--create-topics",
        "--timeout",
        "10s",
    ];
    let mut cmd = kr::command(&args);
    cmd.env("KR_TEST_SRC", &a.bootstrap)
        .env("KR_TEST_DST", &b.bootstrap);
    let run = kr::wait(cmd.spawn().expect("spawn"), Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("a real run would start"), "{run:?}");
    // A variable that is not set is named, never waited for.
    let run = kr::wait(
        kr::command(&args)
            .env_remove("KR_TEST_SRC")
            .spawn()
            .expect("spawn"),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(
            "clusters.src.bootstrap (line 3): refers to ${KR_TEST_SRC}, which is not set"
        ),
        "{run:?}"
    );
}

/// Issue 35, item 6: a user's `group.instance.id` (static membership) under KIP-848's
/// protocol, the one a run on Kafka 4 chooses, is refused with exit 2 before anything is
/// created: there the broker refuses a restarted member whose id it still holds
/// (UNRELEASED_INSTANCE_ID) until the dead member's session expires.
#[test]
fn issue_35_static_membership_under_the_consumer_protocol_is_refused() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("static");
    common::create_topic(ab, &topic, 1);
    let group = common::unique("g-static");
    let args = [
        "--from",
        ab,
        "--to",
        bb,
        "--topics",
        &topic,
        "--group",
        &group,
        "--create-topics",
        "--until-caught-up",
        "-X",
        "group.instance.id=copy-1",
    ];
    let run = kr::run(&args);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("source property 'group.instance.id' (static membership) under KIP-848's consumer group protocol")
            && run.stderr.contains("-X group.protocol=classic"),
        "{}",
        run.stderr
    );
    assert!(!kr::topics(bb).contains(&topic), "nothing created");
}
