//! Issue 11: `kreplicate groups` refuses what it cannot translate exactly, with one line
//! saying why, and commits nothing for it.

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};

use crate::common::{self, Kafka};

use crate::common::kr;

const PARTS: i32 = 2;

#[test]
fn issue_11_groups_refusals_say_why_in_one_line_and_commit_nothing() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("trb");
    let t = &format!("{n}.t");
    let raw = &format!("{n}.raw");
    let kc = &format!("kreplicate.{n}.c");
    let kr_ = &format!("kreplicate.{n}.r");
    let busy = &format!("{n}.busy");
    let idle = &format!("{n}.idle");
    let nope = &format!("{n}.nope");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    for t in [t, raw] {
        common::create_topic(ab, t, PARTS);
        common::create_topic(bb, t, PARTS);
        common::produce(ab, t, &kr::records(40, PARTS, t));
    }
    let run = kr::run(&kr::caught_up_args(ab, bb, t, kc, "at-least-once", &[]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bare = ["--no-origin-header"];
    let run = kr::run(&kr::caught_up_args(
        ab,
        bb,
        raw,
        kr_,
        "at-least-once",
        &bare,
    ));
    assert_eq!(run.code, 0, "{}", run.stderr);
    common::commit(ab, busy, t, &[(0, 5), (1, 5)]);
    common::commit(ab, idle, t, &[(0, 5), (1, 5)]);
    common::commit(ab, idle, raw, &[(0, 5), (1, 5)]);

    let groups = |topics: &str, extra: &[&str]| {
        let mut v = vec!["groups", "--from", ab, "--to", bb, "--topics", topics];
        v.extend_from_slice(extra);
        kr::run(&v)
    };
    let one_line = |r: &kr::Run| {
        let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 1, "{}", r.stderr);
        lines[0].to_string()
    };
    // Usage errors: exit 2, nothing committed.
    let r = groups(t, &["--groups", nope]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(one_line(&r).contains(&format!("'{nope}'")), "{r:?}");
    let r = groups(t, &["--groups", "^(bad"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(one_line(&r).contains("--groups: bad regex"), "{r:?}");

    // Copied without the origin header: no provenance, so no guess.
    let r = groups(raw, &["--groups", idle]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains("no provenance on the target"),
        "{}",
        r.stdout
    );
    assert_eq!(common::committed(bb, idle, raw, PARTS), [-1, -1]);

    // A group with a live member on the target.
    let member: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bb)
        .set("group.id", busy)
        .set("enable.auto.commit", "false")
        .set("session.timeout.ms", "2000")
        .set("heartbeat.interval.ms", "500")
        .create()
        .expect("consumer");
    member.subscribe(&[t]).expect("subscribe");
    common::wait_until(
        "the member getting partitions",
        Duration::from_secs(30),
        || {
            let _ = member.poll(Duration::from_millis(100));
            member.assignment().map(|a| a.count()).unwrap_or(0) > 0
        },
    );
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let r = std::thread::scope(|s| {
        let stop2 = stop.clone();
        let member = &member;
        s.spawn(move || {
            while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = member.poll(Duration::from_millis(100));
            }
        });
        let r = groups(t, &["--groups", &format!("{busy},{idle}")]);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        r
    });
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains(&format!(
            "group '{busy}' refused: it has active members on the target"
        )),
        "{}",
        r.stdout
    );
    assert_eq!(
        common::committed(bb, idle, t, PARTS),
        [5, 5],
        "idle translated"
    );
    drop(member);
    assert_eq!(common::committed(bb, busy, t, PARTS), [-1, -1]);
}

#[test]
fn issue_11_a_group_at_0_of_a_partition_the_copy_never_wrote_to_translates_to_its_end() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("tre0");
    let t = &format!("{n}.t");
    let kc = &format!("kreplicate.{n}.c");
    let app = &format!("{n}.app");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic(ab, t, PARTS);
    common::create_topic(bb, t, PARTS);
    // Partition 1 is empty on the source; the target holds two foreign records there.
    let only_p0: Vec<common::Rec> = (0..10)
        .map(|i| common::Rec::kv(0, "k", &format!("v{i}")))
        .collect();
    common::produce(ab, t, &only_p0);
    common::produce(
        bb,
        t,
        &[common::Rec::kv(1, "f", "x"), common::Rec::kv(1, "f", "y")],
    );
    let run = kr::run(&kr::caught_up_args(ab, bb, t, kc, "at-least-once", &[]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    common::commit(ab, app, t, &[(0, 4), (1, 0)]);
    let r = kr::run(&[
        "groups", "--from", ab, "--to", bb, "--topics", t, "--groups", app,
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(common::committed(bb, app, t, PARTS), [4, 2], "{}", r.stdout);
}
