//! The README's first command: `kreplicate demo`, with each guarantee.

use crate::common::kr;

#[test]
fn demo_copies_every_record_with_each_guarantee() {
    for guarantee in ["at-least-once", "exactly-once", "none"] {
        let run = kr::run(&[
            "demo",
            "--guarantee",
            guarantee,
            "--records",
            "1500",
            "--json",
        ]);
        assert_eq!(run.code, 0, "{guarantee}: {run:?}");
        assert!(
            run.stderr.contains("fault:"),
            "{guarantee}: a fault was injected: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("every record arrived"),
            "{guarantee}: {}",
            run.stderr
        );
        let json = run.json();
        assert_eq!(json["guarantee"], guarantee);
        // exactly-once counts records of committed transactions; an aborted one the mock
        // still shows is not counted, so only the other two must match exactly.
        if guarantee != "exactly-once" {
            assert_eq!(json["records"], 1500);
        }
    }
}
