//! The progress display: drawn on a terminal, absent (no escape codes) when piped.

use std::process::Command;
use std::time::Duration;

use crate::common::kr::{self, FAST_GROUP};
use crate::common::{self, Kafka};

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
    // A continuous run on a pseudo-terminal (script(1)), stopped once every record is committed
    // and the display has had time to draw it (a fixed 4 s was a guess at both).
    let pid_file = common::scratch_dir().join(format!("tty-{}.pid", std::process::id()));
    let _ = std::fs::remove_file(&pid_file);
    let cmd = format!(
        "{} {} --group tty & echo $! > {}; wait $!",
        env!("CARGO_BIN_EXE_kreplicate"),
        args.join(" "),
        pid_file.display()
    );
    let script = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("KREPLICATE_CONFIG")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux");
    common::wait_until("a full commit", Duration::from_secs(60), || {
        common::committed(&a.bootstrap, "tty", "t", 2) == [1000, 1000]
    });
    std::thread::sleep(Duration::from_secs(1));
    let pid = std::fs::read_to_string(&pid_file).expect("kreplicate's pid");
    let killed = Command::new("kill").args(["-INT", pid.trim()]).status();
    assert!(killed.is_ok_and(|s| s.success()), "kill -INT {pid}");
    let out = script.wait_with_output().expect("script(1)'s output");
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
        tty.contains("kreplicate: stopped: copied 2,000 records"),
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
    assert!(
        run.stderr.contains("copied 2,000 records"),
        "{}",
        run.stderr
    );
}

/// Issue 10: without a terminal (journald, cron) a run prints one time-stamped progress line per
/// commit interval, its phases while it waits, and `-v` log lines with time stamps; `-v` wins
/// over RUST_LOG.
#[test]
fn issue_10_without_a_terminal_lines_are_time_stamped_and_show_progress() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("lines");
    let t = &format!("{n}.t");
    let g = &format!("{n}.lines");
    common::create_topic(&a.bootstrap, t, 2);
    common::create_topic(&b.bootstrap, t, 2);
    common::produce(&a.bootstrap, t, &kr::records(500, 2, "l"));
    let mut args = vec![
        "--from",
        a.bootstrap.as_str(),
        "--to",
        b.bootstrap.as_str(),
        "--topics",
        t,
        "--group",
        g,
        "--commit-interval",
        "500ms",
        "-v",
    ];
    args.extend_from_slice(&FAST_GROUP);
    let child = kr::command(&args)
        .env("RUST_LOG", "debug")
        .spawn()
        .expect("spawn kreplicate");
    // Stopped once every record is committed and the next progress lines (one per 500 ms
    // commit interval) had time to say so: a fixed 4 s was too short on a loaded machine.
    common::wait_until("a full commit", std::time::Duration::from_secs(60), || {
        common::committed(&a.bootstrap, g, t, 2) == [250, 250]
    });
    std::thread::sleep(std::time::Duration::from_secs(2));
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
