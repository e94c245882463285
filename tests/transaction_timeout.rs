//! Issue 35, items 4 and 5: exactly-once's transaction timeout. kreplicate derives it from
//! `--txn-max-time` and `--delivery-timeout`: a user's `transaction.timeout.ms` is refused by
//! name, and a target whose `transaction.max.timeout.ms` is below it is refused before anything
//! is created, by `plan` too, with the numbers.

use crate::common::kr;

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
