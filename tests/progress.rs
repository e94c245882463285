//! The progress display: drawn on a terminal, absent (no escape codes) when piped.

use std::process::Command;

use crate::common::{self, Tansu};
use crate::kr::{self, FAST_GROUP};

#[test]
fn progress_is_drawn_on_a_terminal_and_absent_when_piped() {
    let a = Tansu::start("progress-a");
    let b = Tansu::start("progress-b");
    common::create_topic(&a.bootstrap, "t", 2);
    common::create_topic(&b.bootstrap, "t", 2);
    common::produce(&a.bootstrap, "t", &kr::records(2000, 2, "p"));

    let mut args: Vec<String> = [
        "--from",
        &a.bootstrap,
        "--to",
        &b.bootstrap,
        "--topics",
        "t",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(FAST_GROUP.iter().map(|s| s.to_string()));
    // A continuous run on a pseudo-terminal (script(1)), stopped after the display has drawn.
    let cmd = format!(
        "{} {} --group tty & pid=$!; sleep 4; kill -INT $pid; wait $pid",
        env!("CARGO_BIN_EXE_kreplicate"),
        args.join(" ")
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("KREPLICATE_CONFIG")
        .output()
        .expect("script(1) from util-linux");
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(
        tty.contains('\x1b'),
        "no escape codes on a terminal: {tty:?}"
    );
    assert!(
        tty.contains("2,000 records") && tty.contains("committed"),
        "the display shows records and commits: {tty:?}"
    );
    assert!(
        tty.contains("kreplicate: stopped: copied 2000 records"),
        "{tty:?}"
    );

    let mut piped: Vec<&str> = args.iter().map(String::as_str).collect();
    piped.extend(["--group", "piped", "--until-caught-up"]);
    let run = kr::run(&piped);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        !run.stderr.contains('\x1b') && !run.stdout.contains('\x1b'),
        "{run:?}"
    );
    assert!(run.stderr.contains("copied 2000 records"), "{}", run.stderr);
}
