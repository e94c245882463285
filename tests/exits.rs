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

/// One way out: the command line, how often it runs, the exit code it must end with, what
/// stderr must say (that the run took the path named), a SIGTERM sent this long after the
/// start (if any), and its name.
type Way<'a> = (Vec<String>, usize, i32, &'a str, Option<Duration>, &'a str);

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
    // `[SUBCOMMAND] --from FROM --to TO --topics T`, then `extra`.
    let line = |sub: &[&'static str], (from, to, t): (&str, &str, &str), extra: &[&str]| {
        let mut v: Vec<String> = sub.iter().map(|s| s.to_string()).collect();
        v.extend(["--from", from, "--to", to, "--topics", t].map(String::from));
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let (closed_pair, kafka, missing_t) = (
        (c, c2, "t"),
        (ab, bb, topic.as_str()),
        (ab, bb, missing.as_str()),
    );
    let ssl_slow = ["-X", "security.protocol=SSL", "--timeout", "1s"];
    let ways: Vec<Way> = vec![
        (
            line(
                &[],
                closed_pair,
                &["-X", "security.protocol=SSL", "-X", "sasl.mechanism=PLAIN"],
            ),
            40,
            2,
            "the SASL credentials would not be used",
            None,
            "SASL credentials over SSL, refused before connecting",
        ),
        (
            line(
                &[],
                closed_pair,
                &["-X", "security.protocol=SSL", "-X", "ssl.ca.locatoin=/x"],
            ),
            10,
            2,
            "ssl.ca.locatoin",
            None,
            "a misspelt property beside SSL",
        ),
        (
            line(&[], closed_pair, &ssl_slow),
            4,
            1,
            "cannot reach the source cluster",
            None,
            "an SSL source that refuses connections",
        ),
        (
            line(&[], missing_t, &["--group", &group]),
            10,
            2,
            "does not exist",
            None,
            "a missing topic, the protocol probe at work",
        ),
        (
            line(
                &[],
                closed_pair,
                &["-X", "security.protocol=SSL", "--timeout", "20s"],
            ),
            4,
            0,
            "stopped before copying",
            Some(Duration::from_millis(400)),
            "stopped by a signal while checking an SSL source",
        ),
        (
            line(&[], kafka, &["--group", &group, "--until-caught-up"]),
            3,
            0,
            "committed positions for 2 of 2",
            None,
            "a copy to the end",
        ),
        (
            line(&["plan"], missing_t, &[]),
            5,
            2,
            "does not exist",
            None,
            "plan of a missing topic",
        ),
        (
            line(&["status"], closed_pair, &ssl_slow),
            3,
            1,
            "cannot reach",
            None,
            "status of an SSL source that refuses connections",
        ),
        (
            line(&["groups"], closed_pair, &ssl_slow),
            3,
            1,
            "cannot reach",
            None,
            "groups from an SSL source that refuses connections",
        ),
        (
            line(&["verify"], missing_t, &[]),
            5,
            2,
            "does not exist",
            None,
            "verify of a missing topic",
        ),
    ];
    let load = Load::start(2);
    let mut failures = Vec::new();
    for (args, times, code, says, signal, name) in &ways {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let started = Instant::now();
        let mut codes = std::collections::BTreeMap::new();
        for _ in 0..*times {
            let child = kr::command(&args).spawn().expect("spawn kreplicate");
            if let Some(after) = signal {
                std::thread::sleep(*after);
                kr::signal(&child, "TERM");
            }
            let run = kr::wait(child, Duration::from_secs(60));
            *codes.entry(run.code).or_insert(0) += 1;
            if run.code != *code || !run.stderr.contains(says) {
                failures.push(format!(
                    "{name}: exit {} (-1: killed by a signal), want {code} and '{says}'; stderr: {}",
                    run.code,
                    kr::told(&run.stderr)
                ));
            }
        }
        eprintln!(
            "evidence: {name}: {times} runs with both cores busy, exits {codes:?}, {:.2} s each",
            started.elapsed().as_secs_f64() / *times as f64
        );
    }
    drop(load);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
