//! Consumer-group behaviour: two processes sharing a group, static shards, source gaps,
//! signals, and (on librdkafka's mock cluster) assignments the group takes away.

use std::time::{Duration, Instant};

use kreplicate::mock::MockKafka;
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};

use crate::common::kr::{self, FAST_GROUP};
use crate::common::{self, Kafka};

fn args<'a>(a: &'a Kafka, b: &'a Kafka, group: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    member(a, b, group, &FAST_GROUP, extra)
}

/// A run in `group` with `group_props` (the classic protocol's timeouts, or none).
fn member<'a>(
    a: &'a Kafka,
    b: &'a Kafka,
    group: &'a str,
    group_props: &[&'a str],
    extra: &[&'a str],
) -> Vec<&'a str> {
    kr::Args::copy(&a.bootstrap, &b.bootstrap)
        .group(group)
        .with(group_props)
        .with(extra)
        .build()
}

#[test]
fn two_processes_in_one_group_split_the_partitions_and_copy_everything() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("split");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g");
    common::create_topic(&a.bootstrap, t, 4);
    common::create_topic(&b.bootstrap, t, 4);
    let extra = ["--topics", t, "--json", "--commit-interval", "200ms"];
    let addrs = [0, 1].map(|_| format!("127.0.0.1:{}", common::free_port()));
    let [first, second] = [0, 1].map(|i| {
        let mut v = args(&a, &b, g, &extra);
        v.extend(["--metrics-addr", addrs[i].as_str()]);
        kr::spawn(&v)
    });
    // Both joined and hold two partitions each before there is anything to copy.
    common::wait_until("the split", Duration::from_secs(60), || {
        addrs
            .iter()
            .all(|addr| kr::metric(addr, "kreplicate_assigned_partitions") == Some(2.0))
    });
    let total = 4000;
    for round in 0..4 {
        common::produce(
            &a.bootstrap,
            t,
            &kr::records(total / 4, 4, &format!("r{round}")),
        );
    }
    common::wait_until("every record committed", Duration::from_secs(60), || {
        common::committed(&a.bootstrap, g, t, 4) == vec![(total / 4) as i64; 4]
    });
    kr::signal(&first, "INT");
    kr::signal(&second, "INT");
    let (r1, r2) = (
        kr::wait(first, Duration::from_secs(60)),
        kr::wait(second, Duration::from_secs(60)),
    );
    assert_eq!((r1.code, r2.code), (0, 0), "{r1:?} {r2:?}");
    let (n1, n2) = (
        r1.json()["records"].as_u64().unwrap(),
        r2.json()["records"].as_u64().unwrap(),
    );
    // Each copied its own two partitions, and only those.
    let copied = |r: &kr::Run| -> Vec<i64> {
        let json = r.json();
        let mut parts: Vec<i64> = json["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["records"].as_u64().unwrap_or(0) > 0)
            .map(|p| p["partition"].as_i64().unwrap())
            .collect();
        parts.sort();
        parts
    };
    let (p1, p2) = (copied(&r1), copied(&r2));
    assert_eq!((p1.len(), p2.len()), (2, 2), "{p1:?} {p2:?}");
    let mut all = [p1, p2].concat();
    all.sort();
    assert_eq!(all, vec![0, 1, 2, 3]);
    assert_eq!(
        n1 + n2,
        total as u64,
        "a stable split copies each record once"
    );
    let dups = kr::assert_complete(&a.bootstrap, &b.bootstrap, t, t, 4);
    assert_eq!(n1 + n2, (total + dups) as u64);
}

#[test]
fn static_shards_copy_their_own_partitions_and_resume_from_the_group_commits() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("shards");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g");
    common::create_topic(&a.bootstrap, t, 6);
    common::create_topic(&b.bootstrap, t, 6);
    common::produce(&a.bootstrap, t, &kr::records(600, 6, "one"));
    let shard_run = |shard: &str, guarantee: &str| -> u64 {
        let run = kr::run(&args(
            &a,
            &b,
            g,
            &[
                "--topics",
                t,
                "--until-caught-up",
                "--json",
                "--shard",
                shard,
                "--guarantee",
                guarantee,
            ],
        ));
        assert_eq!(run.code, 0, "{run:?}");
        run.json()["records"].as_u64().unwrap()
    };
    // One shard after the other: each copies and commits only the partitions it owns.
    let first = shard_run("1/2", "at-least-once");
    assert!(first > 0 && first < 600, "shard 1/2 copied {first}");
    let owned = common::committed(&a.bootstrap, g, t, 6)
        .iter()
        .filter(|&&c| c == 100)
        .count();
    assert_eq!(
        owned as u64 * 100,
        first,
        "shard 1/2 committed what it copied"
    );
    assert_eq!(first + shard_run("2/2", "at-least-once"), 600);
    assert_eq!(common::committed(&a.bootstrap, g, t, 6), vec![100; 6]);

    // New records: each shard resumes at the group's positions, under `none` too.
    common::produce(&a.bootstrap, t, &kr::records(60, 6, "two"));
    assert_eq!(shard_run("1/2", "none") + shard_run("2/2", "none"), 60);
    assert_eq!(common::committed(&a.bootstrap, g, t, 6), vec![110; 6]);
    let dups = kr::assert_complete(&a.bootstrap, &b.bootstrap, t, t, 6);
    assert_eq!(dups, 0);
}

#[test]
fn a_recreated_source_topic_under_a_committed_group_fails_with_exit_1() {
    let (a, b) = Kafka::pair("gap-a", "gap-b");
    common::create_topic(&a.bootstrap, "t", 2);
    common::create_topic(&b.bootstrap, "t", 2);
    common::produce(&a.bootstrap, "t", &kr::records(40, 2, "old"));
    let run = kr::run(&args(&a, &b, "g", &["--topics", "t", "--until-caught-up"]));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(common::committed(&a.bootstrap, "g", "t", 2), vec![20, 20]);

    // The recreated topic holds fewer records than the group's committed positions.
    common::delete_topic(&a.bootstrap, "t");
    common::create_topic(&a.bootstrap, "t", 2);
    common::produce(&a.bootstrap, "t", &kr::records(6, 2, "new"));
    common::commit(&a.bootstrap, "g", "t", &[(0, 20), (1, 20)]);

    let run = kr::run(&args(&a, &b, "g", &["--topics", "t", "--until-caught-up"]));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("source gap") && run.stderr.contains("committed position 20"),
        "{}",
        run.stderr
    );
    assert_eq!(
        common::read_all(&b.bootstrap, "t").len(),
        40,
        "nothing was copied"
    );
    assert_eq!(
        common::committed(&a.bootstrap, "g", "t", 2),
        vec![20, 20],
        "nothing moved"
    );

    // Choosing a policy copies the new records.
    let run = kr::run(&args(
        &a,
        &b,
        "g",
        &[
            "--topics",
            "t",
            "--until-caught-up",
            "--on-gap",
            "earliest",
            "--json",
        ],
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["records"], 6);
}

/// A first signal stops a group member with everything committed; a second one exits 130 at
/// once, committing nothing more. `a`: the source, whose sessions suit `group` (the classic
/// protocol's properties, or none for KIP-848's).
fn signals(a: &Kafka, mut b: Kafka, group: &[&str], joined: &str) {
    common::create_topic(&a.bootstrap, "t", 2);
    common::create_topic(&b.bootstrap, "t", 2);
    common::produce(&a.bootstrap, "t", &kr::records(500, 2, "s"));

    // Continuous run: stops on the first SIGINT with everything verified and committed.
    let child = kr::spawn(&member(
        a,
        &b,
        "g",
        group,
        &["--topics", "t", "--json", "--commit-interval", "1h", "-v"],
    ));
    common::wait_until("the copy", Duration::from_secs(60), || {
        common::read_all(&b.bootstrap, "t").len() >= 500
    });
    kr::signal(&child, "INT");
    let run = kr::wait(child, Duration::from_secs(30));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains(joined), "{}", run.stderr);
    assert_eq!(run.json()["status"], "stopped");
    assert_eq!(common::committed(&a.bootstrap, "g", "t", 2), vec![250, 250]);

    // With the target frozen the graceful stop would wait; a second signal exits at once.
    // Each step waits for the run's own metrics: joined, then the new records fetched.
    let addr = format!("127.0.0.1:{}", common::free_port());
    let child = kr::spawn(&member(
        a,
        &b,
        "g",
        group,
        &[
            "--topics",
            "t",
            "--delivery-timeout",
            "60s",
            "--json",
            "--metrics-addr",
            &addr,
        ],
    ));
    let sum = |metric: &str| {
        common::http_get(&format!("http://{addr}/metrics"))
            .map(|(_, text)| {
                common::scraped(&text, metric)
                    .iter()
                    .map(|s| s.1)
                    .sum::<f64>()
            })
            .unwrap_or(-1.0)
    };
    common::wait_until("the assignment", Duration::from_secs(60), || {
        sum("kreplicate_assigned_partitions") == 2.0
    });
    b.freeze();
    common::produce(&a.bootstrap, "t", &kr::records(100, 2, "more"));
    common::wait_until("the new records fetched", Duration::from_secs(60), || {
        sum("kreplicate_source_end_offset") == 600.0
    });
    kr::signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    kr::signal(&child, "TERM");
    let run = kr::wait(child, Duration::from_secs(10));
    assert_eq!(run.code, 130, "{run:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // Issue 10: a JSON line on this exit too.
    assert_eq!(run.json()["status"], "interrupted");
    assert_eq!(run.json()["error_kind"], "interrupted");
    b.thaw();
    let committed = kr::assert_committed_is_covered(&a.bootstrap, &b.bootstrap, "g", "t", "t", 2);
    assert_eq!(
        committed,
        vec![250, 250],
        "nothing acknowledged after the first run"
    );
}

#[test]
fn first_signal_commits_and_exits_0_second_exits_130() {
    let (a, b) = Kafka::pair("sig-a", "sig-b");
    signals(&a, b, &FAST_GROUP, "joins with the classic protocol");
}

/// Issue 31: the same under KIP-848's group protocol, the one a run on Kafka 4 chooses.
#[test]
fn issue_31_kip848_first_signal_commits_and_exits_0_second_exits_130() {
    let a = Kafka::start_with("sig848-a", &common::KIP848_FAST_SESSIONS);
    let b = Kafka::start("sig848-b");
    signals(&a, b, &[], "joins with the consumer protocol");
}

/// Regression (issue 5's profiling): after a lost assignment, `--until-caught-up` saw an empty
/// assignment as "every partition done" and exited 0 with a partial copy.
#[test]
fn issue_5_until_caught_up_waits_for_the_assignment_after_losing_it() {
    let (a, b) = Kafka::pair("lost-a", "lost-b");
    lost_assignment(&a, &b, &FAST_GROUP, "classic", Duration::from_secs(2));
}

/// Issue 31 (3): the same under KIP-848, its 3 s sessions set on the source broker.
#[test]
fn issue_31_kip848_until_caught_up_waits_for_the_assignment_after_losing_it() {
    let (a, b) = std::thread::scope(|s| {
        let b = s.spawn(|| Kafka::start("lost848-b"));
        let a = Kafka::start_with("lost848-a", &common::KIP848_FAST_SESSIONS);
        (a, b.join().expect("start the second cluster"))
    });
    lost_assignment(&a, &b, &[], "consumer", Duration::from_secs(3));
}

/// A `--until-caught-up` run frozen past its group session (`session`) loses its assignment,
/// gets it back and copies everything.
fn lost_assignment(a: &Kafka, b: &Kafka, group_props: &[&str], protocol: &str, session: Duration) {
    common::create_topic(&a.bootstrap, "t", 4);
    common::create_topic(&b.bootstrap, "t", 4);
    for round in 0..20 {
        common::produce(
            &a.bootstrap,
            "t",
            &kr::records(10_000, 4, &format!("l{round}")),
        );
    }
    let run_args = member(
        a,
        b,
        "g",
        group_props,
        &[
            "--topics",
            "t",
            "--until-caught-up",
            "--json",
            "--commit-interval",
            "100ms",
            "-v",
        ],
    );
    // The log goes to a file (a pipe nobody reads could fill up), shown if the run hangs.
    let log = common::scratch_dir().join(format!("issue-5-{}.log", std::process::id()));
    eprintln!("running kreplicate {}", run_args.join(" "));
    let child = kr::command(&run_args)
        .stderr(std::fs::File::create(&log).expect("log file"))
        .spawn()
        .expect("spawn kreplicate");
    common::wait_until("the first commit", Duration::from_secs(60), || {
        common::committed(&a.bootstrap, "g", "t", 4)
            .iter()
            .any(|&c| c > 0)
    });
    // Frozen past the session: the group takes the partitions away (asserted below).
    kr::signal(&child, "STOP");
    std::thread::sleep(session + Duration::from_secs(3));
    kr::signal(&child, "CONT");
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        kr::wait(child, Duration::from_secs(120))
    }));
    let run = waited.unwrap_or_else(|hung| {
        eprintln!("kreplicate's log:\n{}", common::file_tail(&log, 20_000));
        eprintln!("broker A:\n{}\nbroker B:\n{}", a.log_tail(), b.log_tail());
        std::panic::resume_unwind(hung)
    });
    let text = common::file_tail(&log, 1 << 20);
    assert_eq!(run.code, 0, "{run:?}\nlog:\n{text}");
    let joined = format!("group 'g' joins with the {protocol} protocol");
    assert!(text.contains(&joined), "{text}");
    assert!(text.contains("revoked (assignment lost)"), "{text}");
    kr::assert_complete(&a.bootstrap, &b.bootstrap, "t", "t", 4);
    assert_eq!(
        common::committed(&a.bootstrap, "g", "t", 4),
        vec![50_000; 4]
    );
}

/// Arguments for a run in group `g` copying `t` between mock clusters. The group's sessions
/// are short: the mock holds a rejoin until a forgotten member's session expires.
fn mock_args<'a>(ab: &'a str, bb: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    kr::Args::copy(ab, bb)
        .topics("t")
        .group("g")
        .with(&[
            "-X",
            "session.timeout.ms=3000",
            "-X",
            "heartbeat.interval.ms=100",
            "-v",
        ])
        .with(extra)
        .build()
}

/// Regression (issue 5, the CI hang): a partition read to its end is paused until the rest
/// catch up, and librdkafka keeps an application pause across a lost and re-granted
/// assignment. Re-granted with a committed position below its end, the partition was never
/// fetched again and `--until-caught-up` waited forever.
#[test]
fn issue_5_a_partition_paused_at_its_end_is_read_again_after_a_lost_assignment() {
    let (a, ab) = common::mock_split_source("t", "g", &kr::records(400, 2, "p"));
    let b = MockKafka::start(1).unwrap();
    b.create_topic("t", 2).unwrap();
    let bb = b.bootstrap().unwrap();
    let source = a.cluster().unwrap();
    // t[1] cannot be read: the run goes on after t[0] is done (and paused).
    source.broker_down(2).unwrap();
    let child = kr::spawn(&mock_args(
        &ab,
        &bb,
        // No commit before the assignment is lost: t[0] comes back with nothing committed.
        &["--until-caught-up", "--commit-interval", "1h"],
    ));
    common::wait_until("t[0] copied", Duration::from_secs(30), || {
        kr::partition(&common::read_all(&bb, "t"), 0).len() == 200
    });
    // The coordinator forgets the member: the assignment is lost and the group re-grants it.
    source.request_errors(
        RDKafkaApiKey::Heartbeat,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID],
    );
    std::thread::sleep(Duration::from_secs(2));
    source.broker_up(2).unwrap();
    let run = kr::wait(child, Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
    let dups = kr::assert_complete(&ab, &bb, "t", "t", 2);
    assert_eq!(
        dups, 200,
        "t[0] was copied again from its (empty) committed position"
    );
    assert_eq!(common::committed(&ab, "g", "t", 2), vec![200, 200]);
}

/// A mock source (`t`, 2 partitions, 400 records) and target whose first Produce request is
/// answered after `delay`; a run with `extra` arguments is started (its log in the file
/// `name`-PID.log), and
/// once every record is in flight the coordinator forgets the member: the assignment is lost.
/// The group forgets the member once the run's log shows `when` (after the assignment).
fn lose_the_assignment_with_records_in_flight(
    name: &str,
    delay: Duration,
    extra: &[&str],
    when: &str,
) -> (
    MockKafka,
    MockKafka,
    std::process::Child,
    std::path::PathBuf,
) {
    let (a, b, ab, bb) = common::mock_pair("t", 2, &kr::records(400, 2, "f"));
    b.answer_next(
        1,
        RDKafkaApiKey::Produce,
        RDKafkaRespErr::RD_KAFKA_RESP_ERR_NO_ERROR,
        delay,
    )
    .unwrap();
    let log = common::scratch_dir().join(format!("{name}-{}.log", std::process::id()));
    let run_args = mock_args(&ab, &bb, extra);
    eprintln!("running kreplicate {}", run_args.join(" "));
    let child = kr::command(&run_args)
        .stderr(std::fs::File::create(&log).expect("log file"))
        .spawn()
        .expect("spawn kreplicate");
    common::wait_until("the assignment", Duration::from_secs(30), || {
        common::file_tail(&log, 20_000).contains("assigned 2 source partitions")
    });
    common::wait_until(when, Duration::from_secs(30), || {
        common::file_tail(&log, 20_000).contains(when)
    });
    std::thread::sleep(Duration::from_millis(300));
    a.cluster().unwrap().request_errors(
        RDKafkaApiKey::Heartbeat,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID],
    );
    (a, b, child, log)
}

/// Regression (issue 5's review): a lost assignment dropped the partitions' trackers while
/// their records were still in flight. Granted the partitions again, the run re-sent them and
/// the old delivery reports reached the new trackers: a spurious "internal error", exit 1.
#[test]
fn issue_5_deliveries_in_flight_when_an_assignment_is_lost_stay_with_it() {
    // Deliveries take longer than the group takes to grant the partitions again.
    let (a, b, child, log) = lose_the_assignment_with_records_in_flight(
        "in-flight",
        Duration::from_secs(6),
        &["--commit-interval", "200ms"],
        "assigned 2 source partitions",
    );
    let (ab, bb) = (a.bootstrap().unwrap(), b.bootstrap().unwrap());
    common::wait_until(
        "every record committed, or a failure",
        Duration::from_secs(60),
        || {
            common::committed(&ab, "g", "t", 2) == vec![200, 200]
                || common::file_tail(&log, 20_000).contains("kreplicate: failed")
        },
    );
    kr::signal(&child, "INT");
    let run = kr::wait(child, Duration::from_secs(60));
    let stderr = common::file_tail(&log, 20_000);
    assert_eq!(run.code, 0, "{run:?}\n{stderr}");
    assert!(stderr.contains("(assignment lost)"), "{stderr}");
    kr::assert_complete(&ab, &bb, "t", "t", 2);
    assert_eq!(common::committed(&ab, "g", "t", 2), vec![200, 200]);
}

/// The group forgets the member while the final flush waits for the target: the final commit
/// is refused, and the run says why and exits 1 with nothing committed.
#[test]
fn a_membership_lost_before_the_final_commit_commits_nothing_and_says_why() {
    let (a, b, child, log) = lose_the_assignment_with_records_in_flight(
        "final-commit",
        Duration::from_secs(3),
        &["--until-caught-up"],
        // In the final flush, which the target's slow answer holds up.
        "flushing, verifying and committing",
    );
    let (ab, bb) = (a.bootstrap().unwrap(), b.bootstrap().unwrap());
    let run = kr::wait(child, Duration::from_secs(60));
    let stderr = common::file_tail(&log, 20_000);
    assert_eq!(run.code, 1, "{run:?}\n{stderr}");
    assert!(
        stderr.contains("no longer counted this process as a member"),
        "{stderr}"
    );
    assert_eq!(common::committed(&ab, "g", "t", 2), vec![-1, -1]);
    // Copied, though: the next run's duplicates are the whole cost.
    kr::assert_complete(&ab, &bb, "t", "t", 2);
}

/// Regression (issue 13, item 1): `--start latest` on a group with no committed position
/// resolves "latest" once, and that decision must outlive the run. A partition that received
/// nothing during the first run kept no committed position, so the next run chose "latest"
/// again and silently skipped every record written between the runs.
#[test]
fn issue_13_start_latest_is_committed_so_the_next_run_copies_what_arrived_in_between() {
    let (a, b) = Kafka::pair("latest-a", "latest-b");
    for guarantee in ["at-least-once", "none", "exactly-once"] {
        let topic = format!("t-{guarantee}");
        let group = format!("g-{guarantee}");
        common::create_topic(&a.bootstrap, &topic, 4);
        common::create_topic(&b.bootstrap, &topic, 4);
        // Before the first run: not to be copied under --start latest.
        common::produce(&a.bootstrap, &topic, &kr::records(40, 2, "old"));
        let run = || {
            let v = kr::caught_up_args(
                &a.bootstrap,
                &b.bootstrap,
                &topic,
                &group,
                guarantee,
                &["--start", "latest"],
            );
            let run = kr::run(&v);
            assert_eq!(run.code, 0, "{guarantee}: {run:?}");
            run
        };
        let first = run();
        assert_eq!(first.json()["records"], 0, "{guarantee}: {first:?}");
        let committed = common::committed(&a.bootstrap, &group, &topic, 4);
        assert_eq!(
            committed,
            vec![20, 20, 0, 0],
            "{guarantee}: the first run committed where it decided to start"
        );
        // Written while no run is active, also on partitions that had nothing before.
        let new: Vec<common::Rec> = kr::records(80, 4, "between");
        common::produce(&a.bootstrap, &topic, &new);
        run();
        let got: Vec<common::Rec> = common::read_all(&b.bootstrap, &topic)
            .iter()
            .map(|g| {
                let mut r = g.to_rec();
                r.headers.retain(|(k, _)| k != "kreplicate.origin");
                r
            })
            .collect();
        // Exactly the records written between the runs (ListOffsets on Apache Kafka is exact:
        // not one record from before the decision).
        for p in 0..4 {
            let want: Vec<&common::Rec> = new.iter().filter(|r| r.partition == p).collect();
            let have: Vec<&common::Rec> = got.iter().filter(|r| r.partition == p).collect();
            assert_eq!(have, want, "{guarantee}: {topic}[{p}]");
        }
    }
}

/// Regression (issue 13, item 4): a group whose coordinator never completes the join left an
/// `--until-caught-up` run waiting forever, silently. The wait is bounded by --join-timeout,
/// said at -v while it lasts, and ends with exit 1 naming the group and --shard.
#[test]
fn issue_13_a_group_join_that_never_completes_fails_after_the_join_timeout() {
    let (a, _b, ab, bb) = common::mock_pair("t", 2, &kr::records(40, 2, "j"));
    // Every SyncGroup answered "rebalance in progress": the join never completes.
    a.cluster().unwrap().request_errors(
        RDKafkaApiKey::SyncGroup,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS; 2000],
    );
    let started = Instant::now();
    let run = kr::wait(
        kr::spawn(&mock_args(
            &ab,
            &bb,
            &["--until-caught-up", "--join-timeout", "6s", "--json"],
        )),
        Duration::from_secs(60),
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        run.stderr
            .contains("waiting for group 'g' to assign partitions"),
        "-v says what it waits for: {}",
        run.stderr
    );
    let last = run.stderr.trim().lines().last().unwrap_or_default();
    assert!(
        last.contains("group 'g'") && last.contains("--join-timeout") && last.contains("--shard"),
        "{last}"
    );
    assert_eq!(run.json()["status"], "failed");
    assert_eq!(common::committed(&ab, "g", "t", 2), vec![-1, -1]);
    assert!(common::read_all(&bb, "t").is_empty(), "nothing copied");
}

/// Issue 10: a first signal while the checks before the copy still wait for a broker stops
/// the run at once (there is nothing to flush or commit yet), not after --timeout.
#[test]
fn issue_10_a_signal_during_start_up_stops_within_a_second() {
    let (mut a, b) = Kafka::pair("early-a", "early-b");
    common::create_topic(&a.bootstrap, "t", 1);
    common::create_topic(&b.bootstrap, "t", 1);
    a.freeze();
    let child = kr::spawn(&args(
        &a,
        &b,
        "g",
        &["--topics", "t", "--timeout", "60s", "--json"],
    ));
    std::thread::sleep(Duration::from_secs(2));
    let signalled = Instant::now();
    kr::signal(&child, "TERM");
    let run = kr::wait(child, Duration::from_secs(30));
    a.thaw();
    assert!(
        signalled.elapsed() < Duration::from_secs(2),
        "took {:?}",
        signalled.elapsed()
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("stopped before copying"),
        "{}",
        run.stderr
    );
    assert_eq!(run.json()["status"], "stopped");
    assert_eq!(common::committed(&a.bootstrap, "g", "t", 1), vec![-1]);
}

/// Issue 17: a member joins, then another leaves, while records are in flight (a live writer,
/// small batches): each rebalance flushes, verifies and commits the revoked partitions'
/// acknowledged prefix. Nothing is lost, and the group ends at the source's ends.
#[test]
fn issue_17_members_joining_and_leaving_with_records_in_flight_lose_nothing() {
    churn(&FAST_GROUP, "classic");
}

/// Issue 20: the same with KIP-848's consumer group protocol, which Kafka 4 offers and a run
/// without a classic-only property chooses: partitions are added and taken away one share at
/// a time (incremental assign), not all at once.
#[test]
fn issue_20_consumer_protocol_members_joining_and_leaving_lose_nothing() {
    churn(&[], "consumer");
}

fn churn(group_props: &[&str], protocol: &str) {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("churn");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g");
    common::create_topic(&a.bootstrap, t, 4);
    common::create_topic(&b.bootstrap, t, 4);
    common::produce(&a.bootstrap, t, &kr::records(2000, 4, "pre"));
    let writer = kr::Writer::start(&a.bootstrap, t, 4);
    let addrs = [0, 1].map(|_| format!("127.0.0.1:{}", common::free_port()));
    let extra = [
        "--topics",
        t,
        "--json",
        "-v",
        "--commit-interval",
        "200ms",
        "--to-property",
        "batch.num.messages=20",
    ];
    let spawn = |i: usize| {
        let mut v = member(&a, &b, g, group_props, &extra);
        v.extend(["--metrics-addr", addrs[i].as_str()]);
        kr::Watched::spawn(&v)
    };
    let assigned = |i: usize| kr::metric(&addrs[i], "kreplicate_assigned_partitions");
    let mut first = spawn(0);
    common::wait_until("the first member's copy", Duration::from_secs(60), || {
        common::committed(&a.bootstrap, g, t, 4)
            .iter()
            .any(|&c| c > 0)
    });
    let mut second = spawn(1);
    // Waits 60 s for `done`; a miss shows both members' logs (their rebalance lines say who
    // held what).
    let wait_for = |what: &str,
                    done: &dyn Fn() -> bool,
                    first: &kr::Watched,
                    second: &kr::Watched| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done() {
            assert!(
                Instant::now() < deadline,
                "{what}: not within 60 s; the members hold {:?} and {:?}\n--- the first said:\n{}\n--- the second said:\n{}",
                assigned(0),
                assigned(1),
                first.said(),
                second.said()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let split = || assigned(0) == Some(2.0) && assigned(1) == Some(2.0);
    wait_for("the split", &split, &first, &second);
    // The first leaves while it copies: its partitions go to the second.
    kr::signal(first.child.as_ref().expect("the first runs"), "INT");
    let r1 = first.wait(Duration::from_secs(60));
    assert_eq!(r1.code, 0, "{r1:?}");
    let all = || assigned(1) == Some(4.0);
    wait_for("the second takes all", &all, &first, &second);
    drop(writer);
    let src = common::read_all(&a.bootstrap, t);
    let ends: Vec<i64> = (0..4)
        .map(|p| src.iter().filter(|g| g.partition == p).count() as i64)
        .collect();
    common::wait_until("every record committed", Duration::from_secs(60), || {
        common::committed(&a.bootstrap, g, t, 4) == ends
    });
    kr::signal(second.child.as_ref().expect("the second runs"), "INT");
    let r2 = second.wait(Duration::from_secs(60));
    assert_eq!(r2.code, 0, "{r2:?}");
    let joined = format!("group '{g}' joins with the {protocol} protocol");
    assert!(r1.stderr.contains(&joined), "{}", r1.stderr);
    // Each handover was graceful: the revoke committed what the target acknowledged.
    assert_eq!(kr::assert_complete(&a.bootstrap, &b.bootstrap, t, t, 4), 0);
}

/// Issue 31 (b): under KIP-848 a member beyond the partition count gets an empty share, which
/// librdkafka reports with no rebalance callback: the run took it for a join that never ends
/// and exited 1 after `--join-timeout`. A surplus member idles, and takes over when the other
/// member leaves.
#[test]
fn issue_31_kip848_a_surplus_member_idles_past_the_join_timeout() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("surplus");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g");
    common::create_topic(&a.bootstrap, t, 1);
    common::create_topic(&b.bootstrap, t, 1);
    common::produce(&a.bootstrap, t, &kr::records(100, 1, "pre"));
    let addrs = [0, 1].map(|_| format!("127.0.0.1:{}", common::free_port()));
    let extra = ["--topics", t, "--json", "-v", "--join-timeout", "5s"];
    let spawn = |i: usize| {
        let mut v = member(&a, &b, g, &[], &extra);
        v.extend(["--metrics-addr", addrs[i].as_str()]);
        kr::spawn(&v)
    };
    let mut first = Some(spawn(0));
    kr::wait_for_committed(&a.bootstrap, g, t, &[100], &mut first);
    let mut second = Some(spawn(1));
    // The second runs (its metrics answer) and stays up twice the join timeout, holding none.
    kr::wait_or_kill(Duration::from_secs(60), &mut second, || {
        let held = kr::metric(&addrs[1], "kreplicate_assigned_partitions");
        (held != Some(0.0)).then(|| format!("the second holds {held:?}"))
    });
    kr::stays_up(&mut second, Duration::from_secs(10));
    assert_eq!(
        kr::metric(&addrs[0], "kreplicate_assigned_partitions"),
        Some(1.0)
    );
    let r1 = kr::stop(&mut first);
    common::produce(&a.bootstrap, t, &kr::records(900, 1, "post"));
    kr::wait_for_committed(&a.bootstrap, g, t, &[1000], &mut second);
    let r2 = kr::stop(&mut second);
    let joined = format!("group '{g}' joins with the consumer protocol");
    assert!(r2.stderr.contains(&joined), "{}", r2.stderr);
    assert!(r1.stderr.contains(&joined), "{}", r1.stderr);
    kr::assert_complete(&a.bootstrap, &b.bootstrap, t, t, 1);
}

/// Issue 31 (c): two members copy 4 partitions; one is killed (its session still runs on the
/// broker), the other stopped; 4,000 more records arrive; then a cron-style
/// `--until-caught-up` run joins. Under KIP-848 it gets the 2 free partitions at once, and it
/// exited 0 once those were copied, the killed member's 2,000 records left behind by a run
/// that said `ok`. It must wait until the group's positions reach every partition's end (and
/// so receive the killed member's partitions when its session expires).
#[test]
fn issue_31_kip848_until_caught_up_waits_for_a_killed_members_partitions() {
    let a = Kafka::start_with("uc848-a", &common::KIP848_FAST_SESSIONS);
    a_killed_members_partitions(&a, &[], "consumer");
}

/// Issue 31 (c), the classic protocol: the join itself waits for the killed member's session
/// to end, so the run gets all 4 partitions; the same end.
#[test]
fn issue_31_classic_until_caught_up_copies_a_killed_members_partitions() {
    a_killed_members_partitions(&Kafka::shared("a"), &FAST_GROUP, "classic");
}

fn a_killed_members_partitions(a: &Kafka, group_props: &[&str], protocol: &str) {
    let b = Kafka::shared("b");
    let n = common::unique("uc-killed");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g");
    common::create_topic(&a.bootstrap, t, 4);
    common::create_topic(&b.bootstrap, t, 4);
    common::produce(&a.bootstrap, t, &kr::records(400, 4, "pre"));
    let addrs = [0, 1].map(|_| format!("127.0.0.1:{}", common::free_port()));
    let extra = ["--topics", t, "--json", "-v", "--commit-interval", "200ms"];
    let spawn = |i: usize| {
        let mut v = member(a, &b, g, group_props, &extra);
        v.extend(["--metrics-addr", addrs[i].as_str()]);
        kr::spawn(&v)
    };
    let (mut killed, mut stopped) = (Some(spawn(0)), Some(spawn(1)));
    kr::wait_or_kill(Duration::from_secs(60), &mut stopped, || {
        let held = addrs
            .each_ref()
            .map(|a| kr::metric(a, "kreplicate_assigned_partitions"));
        (held != [Some(2.0), Some(2.0)]).then(|| format!("held {held:?}, not 2 each"))
    });
    kr::wait_for_committed(&a.bootstrap, g, t, &[100; 4], &mut stopped);
    let dead = killed.take().expect("first member");
    kr::signal(&dead, "KILL");
    let dead = kr::wait(dead, Duration::from_secs(10));
    let r = kr::stop(&mut stopped);
    let joined = format!("group '{g}' joins with the {protocol} protocol");
    assert!(r.stderr.contains(&joined), "{}", r.stderr);
    assert!(dead.stderr.contains(&joined), "{}", dead.stderr);

    common::produce(&a.bootstrap, t, &kr::records(4000, 4, "post"));
    let mut cron = member(a, &b, g, group_props, &["--topics", t, "--json", "-v"]);
    cron.push("--until-caught-up");
    let run = kr::wait(kr::spawn(&cron), Duration::from_secs(120));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains(&joined), "{}", run.stderr);
    assert_eq!(run.json()["records"], 4000, "{}", run.stderr);
    assert_eq!(common::committed(&a.bootstrap, g, t, 4), vec![1100; 4]);
    assert_eq!(kr::assert_complete(&a.bootstrap, &b.bootstrap, t, t, 4), 0);
    if protocol == "consumer" {
        // The killed member still held its partitions when the run had copied the others.
        assert!(
            run.stderr
                .contains("waiting for 2 more that other members hold"),
            "{}",
            run.stderr
        );
    }
}

/// A continuous run of group `g` with `props` (2 partitions, 200 records) killed with `kill -9`
/// once it committed everything, 200 more records written, and the same run started again:
/// the restarted run, when it started, and the topic and group.
fn killed_and_restarted(
    a: &Kafka,
    b: &Kafka,
    tag: &str,
    props: &[&str],
) -> (
    Option<std::process::Child>,
    std::time::Instant,
    String,
    String,
) {
    let n = common::unique(tag);
    let (t, g) = (format!("{n}.t"), format!("{n}.g"));
    common::create_topic(&a.bootstrap, &t, 2);
    common::create_topic(&b.bootstrap, &t, 2);
    common::produce(&a.bootstrap, &t, &kr::records(200, 2, "pre"));
    let extra = ["--topics", &t, "--json", "--commit-interval", "200ms"];
    let args = member(a, b, &g, props, &extra);
    let mut first = Some(kr::spawn(&args));
    kr::wait_for_committed(&a.bootstrap, &g, &t, &[100; 2], &mut first);
    let dead = first.take().expect("first run");
    kr::signal(&dead, "KILL");
    kr::wait(dead, Duration::from_secs(10));
    common::produce(&a.bootstrap, &t, &kr::records(200, 2, "post"));
    let restarted = std::time::Instant::now();
    (Some(kr::spawn(&args)), restarted, t, g)
}

/// Issue 35, item 6: a run restarted after `kill -9` of the only member waits until the dead
/// member's session times out (KIP-848 gives a static member's id back only after that: no
/// faster restart is possible there), and says who holds the partitions and for how long.
#[test]
fn issue_35_a_run_restarted_after_kill_9_says_what_it_waits_for() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (mut again, restarted, t, g) = killed_and_restarted(&a, &b, "killed-wait", &[]);
    kr::wait_for_committed(&a.bootstrap, &g, &t, &[200; 2], &mut again);
    let waited = restarted.elapsed();
    let run = kr::stop(&mut again);
    let said = run
        .stderr
        .lines()
        .find(|l| l.contains("has given this run no partitions"))
        .unwrap_or_else(|| panic!("no explanation of the wait: {}", run.stderr));
    eprintln!("evidence: the restarted run copied the new records {:.1} s after its start and said: {said}", waited.as_secs_f64());
    assert!(
        said.contains(&format!("group '{g}' has given this run no partitions for 10 s: 1 other member holds them (kreplicate"))
            && said.contains("group.consumer.session.timeout.ms (45 s by default)"),
        "{said}"
    );
    assert_eq!(
        kr::assert_complete(&a.bootstrap, &b.bootstrap, &t, &t, 2),
        0
    );
}

/// Issue 35, item 6: under the classic protocol a process with its own `group.instance.id`,
/// restarted after `kill -9`, takes the dead member's place at once instead of waiting for its
/// session (45 s by default) to end: its first record comes within 5 s of its start.
#[test]
fn issue_35_a_static_member_restarted_after_kill_9_copies_within_5_s() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let id = format!("group.instance.id={}", common::unique("static"));
    let props = ["-X", "group.protocol=classic", "-X", id.as_str()];
    let (mut again, restarted, t, g) = killed_and_restarted(&a, &b, "static-restart", &props);
    kr::wait_or_kill(Duration::from_secs(60), &mut again, || {
        let have: i64 = common::ends(&b.bootstrap, &t, 2, "read_uncommitted")
            .iter()
            .sum();
        (have <= 200).then(|| format!("{t} holds {have} records"))
    });
    let first_record = restarted.elapsed();
    kr::wait_for_committed(&a.bootstrap, &g, &t, &[200; 2], &mut again);
    kr::stop(&mut again);
    eprintln!("evidence: the static member restarted after kill -9 copied its first record {:.2} s after its start", first_record.as_secs_f64());
    assert!(first_record < Duration::from_secs(5), "{first_record:?}");
    assert_eq!(
        kr::assert_complete(&a.bootstrap, &b.bootstrap, &t, &t, 2),
        0
    );
}

/// Commits one transaction of `n` records into each of `partitions` partitions of `topic`:
/// each partition's log then ends with a transaction marker, which no commit of a copy covers.
fn transaction(bootstrap: &str, topic: &str, partitions: i32, n: usize) {
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let p: BaseProducer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("transactional.id", common::unique("source-txn"))
        .create()
        .expect("transactional producer");
    let t = Duration::from_secs(30);
    p.init_transactions(t).expect("init_transactions");
    p.begin_transaction().expect("begin");
    for part in 0..partitions {
        for i in 0..n {
            let key = format!("{part}-{i}");
            p.send(
                BaseRecord::to(topic)
                    .partition(part)
                    .key(&key)
                    .payload(&key),
            )
            .expect("send");
        }
    }
    p.commit_transaction(t).expect("commit");
}

/// Issue 31 (c): the group's position for a partition whose log ends with a transaction
/// marker stays one short of its end while a continuous member holds it (its commit stops
/// after the last record copied). A `--until-caught-up` run beside such a member must see
/// that nothing is left to copy there, not wait for ever; and it commits past the marker of
/// each partition it read to its end itself (issue 41: lag 0, not 1).
#[test]
fn issue_31_kip848_until_caught_up_beside_a_member_whose_partitions_end_with_a_marker() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("uc-marker");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g");
    common::create_topic(&a.bootstrap, t, 2);
    common::create_topic(&b.bootstrap, t, 2);
    transaction(&a.bootstrap, t, 2, 10);
    let extra = ["--topics", t, "--json", "-v", "--commit-interval", "200ms"];
    let mut live = Some(kr::spawn(&member(&a, &b, g, &[], &extra)));
    kr::wait_for_records(&b.bootstrap, t, 20, Duration::from_secs(60), &mut live);
    transaction(&a.bootstrap, t, 2, 10);
    // 10 records, a marker, 10 records, a marker: the end is 22, the group's position 21.
    kr::wait_for_committed(&a.bootstrap, g, t, &[21, 21], &mut live);
    let mut cron = member(&a, &b, g, &[], &["--topics", t, "--json", "-v"]);
    cron.push("--until-caught-up");
    let run = kr::wait(kr::spawn(&cron), Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
    let joined = format!("group '{g}' joins with the consumer protocol");
    assert!(run.stderr.contains(&joined), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("caught up with every partition of the copied topics"),
        "{}",
        run.stderr
    );
    // Each partition the cron member held it read to its end: committed past the marker.
    let mut want = vec![21, 21];
    for p in run.json()["partitions"].as_array().expect("partitions") {
        if let (Some(n), Some(c)) = (p["partition"].as_i64(), p["committed"].as_i64()) {
            assert_eq!(
                c, 22,
                "t[{n}]: the cron member's position stops short of the marker"
            );
            want[n as usize] = 22;
        }
    }
    eprintln!("evidence: the cron member committed {want:?} (22: past the marker)");
    assert_eq!(common::committed(&a.bootstrap, g, t, 2), want);
    let r = kr::stop(&mut live);
    assert!(r.stderr.contains(&joined), "{}", r.stderr);
    assert_eq!(kr::assert_complete(&a.bootstrap, &b.bootstrap, t, t, 2), 0);
}

/// Issue 35 (9): a member that gives partitions up in a rebalance stops serving their gauges
/// (committed offset, lag, ...: the other member serves them now), and keeps their counters.
#[test]
fn issue_35_gauges_of_partitions_given_up_in_a_rebalance_are_dropped() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("given-up");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g");
    common::create_topic(&a.bootstrap, t, 4);
    common::create_topic(&b.bootstrap, t, 4);
    common::produce(&a.bootstrap, t, &kr::records(400, 4, "g"));
    let addr = format!("127.0.0.1:{}", common::free_port());
    let series = |name: &str| {
        let text =
            common::http_get(&format!("http://{addr}/metrics")).map_or(String::new(), |r| r.1);
        common::scraped(&text, name).len()
    };
    let first_args = args(
        &a,
        &b,
        g,
        &[
            "--topics",
            t,
            "--json",
            "--commit-interval",
            "200ms",
            "--metrics-addr",
            &addr,
        ],
    );
    let mut first = Some(kr::spawn(&first_args));
    kr::wait_or_kill(Duration::from_secs(60), &mut first, || {
        let n = series("kreplicate_committed_offset");
        (n < 4).then(|| format!("{n} committed offsets served"))
    });
    let second_args = args(
        &a,
        &b,
        g,
        &["--topics", t, "--json", "--commit-interval", "200ms"],
    );
    let mut second = Some(kr::spawn(&second_args));
    kr::wait_or_kill(Duration::from_secs(60), &mut first, || {
        let held = kr::metric(&addr, "kreplicate_assigned_partitions").unwrap_or(0.0);
        (held != 2.0).then(|| format!("the first member holds {held} partitions"))
    });
    // The loop publishes its partitions every tick: the next snapshot has only what it holds.
    kr::wait_or_kill(Duration::from_secs(10), &mut first, || {
        let gauges = [
            "kreplicate_committed_offset",
            "kreplicate_lag_records",
            "kreplicate_source_end_offset",
        ]
        .map(&series);
        (gauges != [2, 2, 2]).then(|| format!("gauge series {gauges:?} for 2 held partitions"))
    });
    assert_eq!(
        series("kreplicate_records_copied_total"),
        4,
        "counters stay"
    );
    kr::stop(&mut second);
    kr::stop(&mut first);
    kr::assert_complete(&a.bootstrap, &b.bootstrap, t, t, 4);
}

/// Issue 41 (item 12): the guide promises that a cron-style `--until-caught-up` member the group
/// gives no partitions (more members than partitions) ends once the other members are caught
/// up, under both group protocols. A continuous member, rate-limited, holds the only partition
/// with 500 records still to copy; the cron member joins, holds nothing, copies nothing, and
/// exits 0 once the group's position reached the end.
#[test]
fn issue_41_a_surplus_until_caught_up_member_ends_once_the_others_are_caught_up() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    for (protocol, props) in [("classic", &FAST_GROUP[..]), ("consumer", &[][..])] {
        let n = common::unique(&format!("surplus-cron-{protocol}"));
        let t = &format!("{n}.t");
        let g = &format!("{n}.g");
        common::create_topic(&a.bootstrap, t, 1);
        common::create_topic(&b.bootstrap, t, 1);
        common::produce(&a.bootstrap, t, &kr::records(100, 1, "pre"));
        let addrs = [0, 1].map(|_| format!("127.0.0.1:{}", common::free_port()));
        let extra = ["--topics", t, "--json", "-v", "--commit-interval", "200ms"];
        let spawn = |i: usize, more: &[&str]| {
            let mut v = member(&a, &b, g, props, &extra);
            v.extend(["--metrics-addr", addrs[i].as_str()]);
            v.extend_from_slice(more);
            kr::spawn(&v)
        };
        // Under the classic protocol librdkafka's range assignor gives the partition to the
        // member whose id sorts first, and a member's id starts with its client.id: these keep
        // the partition with the continuous member (one CI run gave it to the cron member).
        let mut continuous = Some(spawn(
            0,
            &["-X", "client.id=a-continuous", "--max-bytes-per-sec", "4KB"],
        ));
        kr::wait_for_committed(&a.bootstrap, g, t, &[100], &mut continuous);
        common::produce(&a.bootstrap, t, &kr::records(500, 1, "more"));
        let joined = Instant::now();
        let cron = kr::wait(
            spawn(1, &["-X", "client.id=b-cron", "--until-caught-up"]),
            Duration::from_secs(90),
        );
        let took = joined.elapsed();
        let positions = common::committed(&a.bootstrap, g, t, 1);
        let held_by_continuous = kr::metric(&addrs[0], "kreplicate_assigned_partitions");
        let stopped = kr::stop(&mut continuous);
        eprintln!(
            "evidence: {protocol}: the surplus cron member exited {} after {took:.1?}, copying {} records; the continuous member held {held_by_continuous:?} partitions; the group's position then {positions:?} of 600",
            cron.code,
            cron.json()["records"]
        );
        assert_eq!(cron.code, 0, "{protocol}: {}", cron.stderr);
        assert_eq!(cron.json()["records"], 0, "{protocol}: {}", cron.stdout);
        assert_eq!(held_by_continuous, Some(1.0), "{protocol}");
        assert_eq!(
            positions,
            vec![600],
            "{protocol}: it ended before the other member was caught up"
        );
        assert_eq!(stopped.code, 0, "{protocol}: {}", stopped.stderr);
        kr::assert_complete(&a.bootstrap, &b.bootstrap, t, t, 1);
    }
}
