//! Slow and steady copies (issue 18): a rate-limited copy still commits every
//! `--commit-interval` (or `--txn-max-time`) and stays healthy, and a SIGKILL re-copies no more
//! than about one commit interval of a live stream.

use std::time::{Duration, Instant};

use crate::common::kr;
use crate::common::{self, Kafka, Tansu};

/// A copy at 20 records a second: the first position shows on the source group within about
/// one `--commit-interval` (at-least-once) or `--txn-max-time` (exactly-once) of the first
/// record on the target, and `/healthz` answers 200 all along. Periodic work ran every 256
/// records: the first commit came after 13 s, and `/healthz` said 503 after
/// `--delivery-timeout`.
fn slow_copy_commits_in_time(guarantee: &str) {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("slow");
    let t = &format!("{n}.t");
    let g = &format!("{n}.g-slow");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic(ab, t, 2);
    common::create_topic(bb, t, 2);
    common::produce(ab, t, &kr::records(400, 2, "slow"));
    let addr = format!("127.0.0.1:{}", common::free_port());
    let args = kr::Args::copy(ab, bb)
        .topics(t)
        .group(g)
        .guarantee(guarantee)
        .with(&["--max-records-per-sec", "20", "--commit-interval", "1s"])
        .with(&["--txn-max-time", "1s", "--delivery-timeout", "3s"])
        .with(&["--metrics-addr", &addr])
        .fast_group()
        .build();
    let child = kr::spawn(&args);
    common::wait_until(
        "a first record on the target",
        Duration::from_secs(60),
        || !common::read_all(bb, t).is_empty(),
    );
    let took = common::wait_until(
        "a position on the source group",
        Duration::from_secs(30),
        || common::committed(ab, g, t, 2).iter().any(|&c| c > 0),
    );
    eprintln!("{guarantee}: first position committed {took:?} after the first record copied");
    assert!(
        took <= Duration::from_secs(3),
        "{guarantee}: the first commit came {took:?} after the first record, with 1 s intervals"
    );
    // For 6 s (longer than --delivery-timeout): /healthz, and how often the committed
    // positions move (once a second; at 20 records/s, 256 records took 13 s).
    let url = format!("http://{addr}/healthz");
    let mut unhealthy = Vec::new();
    let mut positions = vec![common::committed(ab, g, t, 2)];
    let polls = Instant::now();
    while polls.elapsed() < Duration::from_secs(6) {
        let (status, body) = common::http_get(&url).expect("/healthz");
        if status != 200 {
            unhealthy.push(body);
        }
        let now = common::committed(ab, g, t, 2);
        if positions.last() != Some(&now) {
            positions.push(now);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    kr::signal(&child, "INT");
    let run = kr::wait(child, Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
    eprintln!("{guarantee}: committed positions seen in 6 s: {positions:?}");
    assert!(
        unhealthy.is_empty(),
        "{guarantee}: /healthz said {unhealthy:?}"
    );
    let last = positions.last().map_or(0, |p| p.iter().sum::<i64>());
    assert!(last < 400, "still copying while polled: {positions:?}");
    assert!(
        positions.len() >= 5,
        "{guarantee}: the committed positions moved {} times in 6 s with 1 s intervals: {positions:?}",
        positions.len() - 1
    );
}

#[test]
fn issue_18_a_rate_limited_at_least_once_copy_commits_every_interval() {
    slow_copy_commits_in_time("at-least-once");
}

#[test]
fn issue_18_a_rate_limited_exactly_once_copy_commits_within_txn_max_time() {
    slow_copy_commits_in_time("exactly-once");
}

/// Produces to `topic` (partitions `0..PARTITIONS`) at about `rate` records a second until
/// dropped.
struct Steady {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<u64>>,
}

impl Steady {
    fn start(bootstrap: &str, topic: &str, rate: u64) -> Steady {
        use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (s, boot, topic) = (stop.clone(), bootstrap.to_string(), topic.to_string());
        let handle = std::thread::spawn(move || {
            let producer: BaseProducer = rdkafka::ClientConfig::new()
                .set("bootstrap.servers", &boot)
                .set("enable.idempotence", "false")
                .set("linger.ms", "5")
                .set("log_level", "3")
                .create()
                .expect("steady producer");
            let started = Instant::now();
            let mut sent = 0u64;
            while !s.load(Ordering::Relaxed) {
                // Catch up with the schedule every 5 ms.
                let due = (started.elapsed().as_secs_f64() * rate as f64) as u64;
                while sent < due {
                    let value = format!("steady-{sent}");
                    let rec = BaseRecord::<[u8], [u8]>::to(&topic)
                        .partition((sent % PARTITIONS as u64) as i32)
                        .payload(value.as_bytes());
                    match producer.send(rec) {
                        Ok(()) => sent += 1,
                        Err(_) => break,
                    }
                }
                producer.poll(Duration::from_millis(5));
            }
            producer
                .flush(Duration::from_secs(30))
                .expect("steady flush");
            sent
        });
        Steady {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops producing; how many records were sent.
    fn finish(mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle
            .take()
            .map_or(0, |h| h.join().expect("steady writer"))
    }
}

impl Drop for Steady {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Partitions of the SIGKILL test's topic: each partition's produce batches come back as a
/// delivery report event of their own.
const PARTITIONS: i32 = 8;

/// Reads the end offsets of the target topic's partitions, as often as called; `None` when a
/// read fails: a topic just created can answer NotLeaderForPartition for a moment after its
/// metadata shows the leader (seen once in CI), and a sample is only worth taking whole.
fn target_ends(bootstrap: &str) -> impl Fn() -> Option<Vec<i64>> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let reader: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("log_level", "3")
        .create()
        .expect("watermark reader");
    move || {
        (0..PARTITIONS)
            .map(
                |p| match reader.fetch_watermarks("t", p, Duration::from_secs(10)) {
                    Ok((_, high)) => Some(high),
                    Err(e) => {
                        eprintln!("target watermarks of t/{p}: {e}; this sample is skipped");
                        None
                    }
                },
            )
            .collect()
    }
}

/// A reader of `group`'s committed positions on `t`, kept for the whole test so that each read
/// is one request.
fn source_positions(bootstrap: &str, group: &str) -> impl Fn() -> Vec<i64> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::{Offset, TopicPartitionList};
    let reader: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("log_level", "3")
        .create()
        .expect("position reader");
    let mut req = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        req.add_partition("t", p);
    }
    move || {
        // Until the group has a coordinator and positions, no position: -1.
        let got = reader.committed_offsets(req.clone(), Duration::from_secs(10));
        (0..PARTITIONS)
            .map(
                |p| match got.as_ref().ok().and_then(|l| l.find_partition("t", p)) {
                    Some(e) => match e.offset() {
                        Offset::Offset(n) => n,
                        _ => -1,
                    },
                    None => -1,
                },
            )
            .collect()
    }
}

/// Source offsets of the copies on the target, per partition, from their origin headers.
fn origin_offsets(bootstrap: &str, topic: &str) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new(); PARTITIONS as usize];
    for g in common::read_all(bootstrap, topic) {
        let origin = g
            .headers
            .iter()
            .find(|(k, _)| k == kr::ORIGIN)
            .and_then(|(_, v)| v.clone())
            .expect("a copy with its origin");
        let text = String::from_utf8(origin).expect("utf-8 origin");
        let offset = text.rsplit('/').next().and_then(|o| o.parse().ok());
        out[g.partition as usize].push(offset.expect("an origin offset"));
    }
    out
}

/// Regression (issue 18, item 12): after a SIGKILL, at-least-once copied again about 7 s of a
/// live stream with `--commit-interval 1s`: the loop served one event of delivery reports (one
/// produce batch of one partition) per round of periodic work, so the acknowledged prefix (and
/// every commit built from it) fell seconds behind what the target held. Now the committed position trails what the target holds by
/// at most about one commit interval plus what is in flight, and the rerun's duplicates are
/// no more than that.
#[test]
fn issue_18_a_sigkill_recopies_at_most_about_one_commit_interval() {
    let (a, b) = Kafka::pair("kill-a", "kill-b");
    sigkill_recopies(&a.bootstrap, &b.bootstrap);
}

/// The same on tansu, a twin that adds something: its produce acknowledgements come in many
/// small batches, which showed the lag plainly (14,458 records re-copied without the fix, 1,218
/// with it), where Apache Kafka's larger batches showed it only in longer runs.
#[test]
fn issue_18_a_sigkill_recopies_at_most_about_one_commit_interval_on_tansu() {
    let a = Tansu::start("kill-a");
    let b = Tansu::start("kill-b");
    sigkill_recopies(&a.bootstrap, &b.bootstrap);
}

fn sigkill_recopies(ab: &str, bb: &str) {
    const RATE: u64 = 4000;
    common::create_topic(ab, "t", PARTITIONS);
    common::create_topic(bb, "t", PARTITIONS);
    let writer = Steady::start(ab, "t", RATE);
    let args = [
        "--from",
        ab,
        "--to",
        bb,
        "--topics",
        "t",
        "--group",
        "g-kill",
        "--shard",
        "1/1",
        "--commit-interval",
        "1s",
    ];
    let mut child = kr::spawn(&args);
    // For 30 commits: each time the committed positions move, how many records the target
    // holds past them (fresh topics and one writer: target offsets are source offsets). The
    // target's ends are read just before and just after the positions: the first read is a
    // lower bound of what it held when the commit landed, the second an upper bound, and on a
    // loaded machine the reads themselves can take seconds.
    let ends = target_ends(bb);
    let positions = source_positions(ab, "g-kill");
    let mut seen = Vec::new();
    let mut behind = Vec::new();
    common::wait_until("30 commits", Duration::from_secs(120), || {
        let started = Instant::now();
        let Some(before) = ends() else {
            return false;
        };
        let now = positions();
        if now.iter().all(|&c| c > 0) && seen.last() != Some(&now) {
            let Some(after) = ends() else {
                return false;
            };
            let past = |held: &[i64]| {
                (0..PARTITIONS as usize)
                    .map(|p| held[p] - now[p])
                    .sum::<i64>()
            };
            behind.push((past(&before), past(&after), started.elapsed().as_millis()));
            seen.push(now);
        }
        seen.len() >= 30
    });
    child.kill().expect("SIGKILL kreplicate");
    let _ = child.wait();
    let committed = common::committed(ab, "g-kill", "t", PARTITIONS);
    let held = origin_offsets(bb, "t");
    // What the next run copies again: records the target holds at or past the committed
    // position.
    let again: usize = (0..PARTITIONS as usize)
        .map(|p| held[p].iter().filter(|&&o| o >= committed[p]).count())
        .sum();
    let sent = writer.finish();
    let rerun = kr::run(&[&args[..], &["--until-caught-up", "--json"]].concat());
    assert_eq!(rerun.code, 0, "{rerun:?}");
    let dups = kr::assert_complete(ab, bb, "t", "t", PARTITIONS);
    eprintln!(
        "SIGKILL at {RATE} records/s, --commit-interval 1s: committed {committed:?}, the target held {} records, {again} of them at or past the committed position; the rerun duplicated {dups} of {sent} records",
        held.iter().map(Vec::len).sum::<usize>()
    );
    // Just after a commit the target holds past it what was acknowledged since that commit's
    // list was made, and what was in flight: well under one interval's worth. Served late,
    // the reports fell behind more and more after some 15 s (18,000 records at 30 s). The
    // median of the last ten lower bounds, since a loaded machine may delay one sample.
    eprintln!(
        "records on the target past each commit just seen (read before, read after, ms the reads took): {behind:?}"
    );
    let mut last: Vec<i64> = behind[behind.len() - 10..].iter().map(|b| b.0).collect();
    last.sort_unstable();
    let median = last[5];
    let bound = RATE as i64;
    assert!(
        median <= bound,
        "the target held a median {median} records past the last ten commits (more than {bound}, 1 s at {RATE}/s): {behind:?}"
    );
    // The kill follows a commit just seen too: the rerun copies again about as much.
    assert!(
        again <= 2 * bound as usize && dups <= 2 * bound as usize,
        "{again} records on the target past the committed position, {dups} duplicated by the rerun"
    );
}
