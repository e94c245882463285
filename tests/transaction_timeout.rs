//! Issue 35, items 4 and 5: exactly-once's transaction timeout. kreplicate derives it from
//! `--txn-max-time` and `--delivery-timeout`: a user's `transaction.timeout.ms` is refused by
//! name, and a target whose `transaction.max.timeout.ms` is below it is refused before anything
//! is created, by `plan` too, with the numbers.

use crate::common::kr;
use crate::common::{self, Kafka};

#[test]
fn issue_35_a_users_transaction_timeout_is_refused_under_exactly_once() {
    // Nothing listens: the refusal comes before any connection.
    let (a, b) = (kr::closed_address(), kr::closed_address());
    for cmd in [&[][..], &["plan"][..]] {
        let mut args = cmd.to_vec();
        args.extend([
            "--from",
            &a,
            "--to",
            &b,
            "--topics",
            "t",
            "--guarantee",
            "exactly-once",
            "--to-property",
            "transaction.timeout.ms=60000",
        ]);
        let run = kr::run(&args);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(
            run.stderr
                .contains("target property 'transaction.timeout.ms' (from --to-property")
                && run.stderr.contains("--txn-max-time"),
            "{run:?}"
        );
    }
}

#[test]
fn issue_35_a_target_transaction_limit_below_the_timeout_is_refused_before_anything_is_created() {
    let a = Kafka::shared("a");
    let b = Kafka::start_with("txn-limit", &["--set", "transaction.max.timeout.ms=5000"]);
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("txn-limit");
    common::create_topic(ab, &topic, 1);
    common::produce(ab, &topic, &kr::records(5, 1, "tl"));
    let group = common::unique("g-txn-limit");
    // 2 s + 1 m + 30 s: no flags fit under 5 s, so the fix is the broker's setting.
    let flags = [
        "--create-topics",
        "--txn-max-time",
        "2s",
        "--delivery-timeout",
        "1m",
    ];
    let numbers = "the target's transaction.max.timeout.ms is 5000 ms, below the transaction timeout exactly-once needs: 92000 ms";
    let fix = "raise the broker's transaction.max.timeout.ms to at least 92000";

    let mut plan = vec!["plan"];
    plan.extend(kr::caught_up_args(
        ab,
        bb,
        &topic,
        &group,
        "exactly-once",
        &flags,
    ));
    let out = kr::run(&plan);
    assert_eq!(out.code, 2, "{out:?}");
    let json = out.json();
    assert_eq!(json["would_start"], false, "{json}");
    let why = json["refusal"].as_str().unwrap_or_default();
    assert!(why.contains(numbers) && why.contains(fix), "{json}");

    let run = kr::run(&kr::caught_up_args(
        ab,
        bb,
        &topic,
        &group,
        "exactly-once",
        &flags,
    ));
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(numbers) && !run.stderr.contains("lower those"),
        "{run:?}"
    );
    assert!(
        !kr::topics(bb).contains(&topic),
        "the refused run created the target topic: {:?}",
        kr::topics(bb)
    );
}
