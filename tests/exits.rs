//! Every way out of the process is clean (issue 41): a refusal's one line, a failure, a stop
//! before copying and a finished copy each end with their exit code, never a death by signal.
//! The process used to exit while a helper thread was inside librdkafka (`rd_kafka_new` →
//! `SSL_CTX_new`) and die of SIGSEGV in OpenSSL's exit handlers: 5 of 20 refusals on a loaded
//! machine. (A second signal's exit 130 runs no exit handler at all; `copy_group` and
//! `promises` test it with a frozen target.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::kr;
use crate::common::{self, Kafka};

/// Threads that keep both cores busy while they live: the crash needed a busy machine.
struct Load(Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>);

impl Load {
    fn start(threads: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let spin = (0..threads)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                })
            })
            .collect();
        Load(stop, spin)
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        for t in self.1.drain(..) {
            let _ = t.join();
        }
    }
}

/// One way out: the arguments, how often, the exit code it must end with, and what stderr
/// must say (that the run took the path named).
struct Path<'a> {
    name: &'a str,
    args: Vec<&'a str>,
    times: usize,
    code: i32,
    says: &'a str,
    /// A SIGTERM sent this long after the start, or none.
    signal: Option<Duration>,
}

#[test]
fn issue_41_no_way_out_dies_of_a_signal() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("exits");
    let topic = format!("{n}.t");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic(ab, &topic, 2);
    common::create_topic(bb, &topic, 2);
    common::produce(ab, &topic, &kr::records(200, 2, "exits"));
    let (closed, closed2) = (kr::closed_address(), kr::closed_address());
    let (c, c2) = (closed.as_str(), closed2.as_str());
    let missing = format!("{n}.missing");
    let group = format!("{n}.g");
    let ssl = ["-X", "security.protocol=SSL"];
    let copy = |from: &str, to: &str, t: &str| -> Vec<String> {
        ["--from", from, "--to", to, "--topics", t]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let owned: Vec<(Path, Vec<String>)> = vec![
        (
            Path {
                name: "SASL credentials over SSL, refused before connecting",
                args: vec!["-X", "security.protocol=SSL", "-X", "sasl.mechanism=PLAIN"],
                times: 40,
                code: 2,
                says: "the SASL credentials would not be used",
                signal: None,
            },
            copy(c, c2, "t"),
        ),
        (
            Path {
                name: "a misspelt property beside SSL",
                args: vec!["-X", "security.protocol=SSL", "-X", "ssl.ca.locatoin=/x"],
                times: 10,
                code: 2,
                says: "ssl.ca.locatoin",
                signal: None,
            },
            copy(c, c2, "t"),
        ),
        (
            Path {
                name: "an SSL source that refuses connections",
                args: [&ssl[..], &["--timeout", "1s"]].concat(),
                times: 4,
                code: 1,
                says: "cannot reach the source cluster",
                signal: None,
            },
            copy(c, c2, "t"),
        ),
        (
            Path {
                name: "a missing topic, the protocol probe at work",
                args: vec!["--group", &group],
                times: 10,
                code: 2,
                says: "does not exist",
                signal: None,
            },
            copy(ab, bb, &missing),
        ),
        (
            Path {
                name: "stopped by a signal while checking an SSL source",
                args: [&ssl[..], &["--timeout", "20s"]].concat(),
                times: 4,
                code: 0,
                says: "stopped before copying",
                signal: Some(Duration::from_millis(400)),
            },
            copy(c, c2, "t"),
        ),
        (
            Path {
                name: "a copy to the end",
                args: vec!["--group", &group, "--until-caught-up"],
                times: 3,
                code: 0,
                says: "committed positions for 2 of 2",
                signal: None,
            },
            copy(ab, bb, &topic),
        ),
    ];
    let subcommand = |sub: &'static str, args: Vec<String>| -> Vec<String> {
        std::iter::once(sub.to_string()).chain(args).collect()
    };
    let subs: Vec<(Path, Vec<String>)> = vec![
        (
            Path {
                name: "plan of a missing topic",
                args: vec![],
                times: 5,
                code: 2,
                says: "does not exist",
                signal: None,
            },
            subcommand("plan", copy(ab, bb, &missing)),
        ),
        (
            Path {
                name: "status of an SSL source that refuses connections",
                args: [&ssl[..], &["--timeout", "1s"]].concat(),
                times: 3,
                code: 1,
                says: "cannot reach",
                signal: None,
            },
            subcommand("status", copy(c, c2, "t")),
        ),
        (
            Path {
                name: "groups from an SSL source that refuses connections",
                args: [&ssl[..], &["--timeout", "1s"]].concat(),
                times: 3,
                code: 1,
                says: "cannot reach",
                signal: None,
            },
            subcommand("groups", copy(c, c2, "t")),
        ),
        (
            Path {
                name: "verify of a missing topic",
                args: vec![],
                times: 5,
                code: 2,
                says: "does not exist",
                signal: None,
            },
            subcommand("verify", copy(ab, bb, &missing)),
        ),
    ];
    let load = Load::start(2);
    let mut failures = Vec::new();
    for (path, head) in owned.iter().chain(&subs) {
        let mut args: Vec<&str> = head.iter().map(String::as_str).collect();
        args.extend_from_slice(&path.args);
        let started = Instant::now();
        let mut codes = std::collections::BTreeMap::new();
        for _ in 0..path.times {
            let child = kr::command(&args).spawn().expect("spawn kreplicate");
            if let Some(after) = path.signal {
                std::thread::sleep(after);
                kr::signal(&child, "TERM");
            }
            let run = kr::wait(child, Duration::from_secs(60));
            *codes.entry(run.code).or_insert(0) += 1;
            if run.code != path.code || !run.stderr.contains(path.says) {
                failures.push(format!(
                    "{}: exit {} (-1: killed by a signal), want {} and '{}'; stderr: {}",
                    path.name,
                    run.code,
                    path.code,
                    path.says,
                    kr::told(&run.stderr)
                ));
            }
        }
        eprintln!(
            "evidence: {}: {} runs with both cores busy, exits {codes:?}, {:.2} s each",
            path.name,
            path.times,
            started.elapsed().as_secs_f64() / path.times as f64
        );
    }
    drop(load);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
