//! The progress display: drawn on a terminal, absent (no escape codes) when piped.

use std::process::Command;

use crate::common::{self, Kafka};
use crate::kr::{self, FAST_GROUP};

#[test]
fn progress_is_drawn_on_a_terminal_and_absent_when_piped() {
    let (a, b) = Kafka::pair("progress-a", "progress-b");
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

/// Issue 10: without a terminal (journald, cron) a run prints one time-stamped progress line per
/// commit interval, its phases while it waits, and `-v` log lines with time stamps; `-v` wins
/// over RUST_LOG.
#[test]
fn issue_10_without_a_terminal_lines_are_time_stamped_and_show_progress() {
    let (a, b) = Kafka::pair("lines-a", "lines-b");
    common::create_topic(&a.bootstrap, "t", 2);
    common::create_topic(&b.bootstrap, "t", 2);
    common::produce(&a.bootstrap, "t", &kr::records(500, 2, "l"));
    let mut args = vec![
        "--from",
        a.bootstrap.as_str(),
        "--to",
        b.bootstrap.as_str(),
        "--topics",
        "t",
        "--group",
        "lines",
        "--commit-interval",
        "500ms",
        "-v",
    ];
    args.extend_from_slice(&FAST_GROUP);
    let child = kr::command(&args)
        .env("RUST_LOG", "debug")
        .spawn()
        .expect("spawn kreplicate");
    std::thread::sleep(std::time::Duration::from_secs(4));
    kr::signal(&child, "INT");
    let run = kr::wait(child, std::time::Duration::from_secs(30));
    assert_eq!(run.code, 0, "{run:?}");
    let stamped = |l: &&str| {
        l.len() > 25
            && l.as_bytes()[4] == b'-'
            && l.as_bytes()[10] == b'T'
            && l.contains("Z kreplicate: ")
    };
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(
        lines.iter().any(|l| stamped(l)
            && l.contains("500 records")
            && l.contains("committed 2/2 partitions")),
        "a progress line per interval: {}",
        run.stderr
    );
    assert!(
        lines.iter().any(|l| stamped(l) && l.contains("INFO")),
        "-v lines carry time stamps: {}",
        run.stderr
    );
    assert!(
        !lines.iter().any(|l| l.contains(" DEBUG ")),
        "-v (info) wins over RUST_LOG=debug: {}",
        run.stderr
    );
}
