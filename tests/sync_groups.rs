//! Issue 11: a copy run with `--sync-groups` keeps the target's consumer groups where the
//! applications are on the source, while it copies, never moving one back.

use std::time::{Duration, Instant};

use crate::common::kr;
use crate::common::{self, unique, Kafka};

#[test]
fn issue_11_sync_groups_follows_an_application_group_while_copying() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let t = unique("sync");
    let (copier, app, later) = (unique("kreplicate.sync"), unique("app"), unique("later"));
    let t = t.as_str();
    common::create_topic(ab, t, 2);
    common::create_topic(bb, t, 2);
    common::produce(ab, t, &kr::records(1000, 2, "first"));
    let sync = format!("{app},{later}");
    let args = kr::Args::copy(ab, bb)
        .topics(t)
        .group(&copier)
        .with(&["--json", "--commit-interval", "200ms"])
        .with(&["--sync-groups", &sync, "--sync-groups-interval", "1s"])
        .fast_group()
        .build();
    let copy = kr::spawn(&args);
    let writer = kr::Writer::start(ab, t, 2);
    // The application follows the copy on the source, 10 records behind; the target group is
    // sampled meanwhile and must never move back. Sampling ends after 4 moves (a sync runs every
    // second once the run copies: a loaded machine only makes the start slower), with the writer
    // still writing, so the group followed while copying.
    let mut seen = vec![-1i64; 2];
    let mut moves = 0;
    let until = Instant::now() + Duration::from_secs(90);
    while moves < 4 && Instant::now() < until {
        let copied = common::committed(ab, &copier, t, 2);
        if copied.iter().all(|&c| c > 10) {
            common::commit(ab, &app, t, &[(0, copied[0] - 10), (1, copied[1] - 10)]);
        }
        let on_b = common::committed(bb, &app, t, 2);
        for p in 0..2 {
            assert!(
                on_b[p] >= seen[p],
                "app[{p}] moved back: {} after {}",
                on_b[p],
                seen[p]
            );
            moves += usize::from(on_b[p] > seen[p]);
        }
        seen = on_b;
        std::thread::sleep(Duration::from_millis(300));
    }
    drop(writer);
    assert!(
        moves >= 4,
        "the target group followed while copying ({moves} moves)"
    );
    // The last positions, once the copy has committed everything written, then stop: the run's
    // last round syncs them.
    let written = common::read_all(ab, t);
    let ends: Vec<i64> = (0..2)
        .map(|p| written.iter().filter(|g| g.partition == p).count() as i64)
        .collect();
    common::wait_until(
        "the copy committing everything written",
        Duration::from_secs(60),
        || common::committed(ab, &copier, t, 2) == ends,
    );
    let copied = common::committed(ab, &copier, t, 2);
    assert_eq!(copied, ends, "the copy committed everything written");
    common::commit(ab, &app, t, &[(0, copied[0] - 3), (1, copied[1] - 3)]);
    kr::signal(&copy, "INT");
    let run = kr::wait(copy, Duration::from_secs(60));
    assert_eq!(run.code, 0, "{run:?}");
    // On B, at the first copy of the record the application reads next on A (an oracle of
    // the test's own: records matched by content, not by kreplicate's headers).
    let (src, dst) = (common::read_all(ab, t), common::read_all(bb, t));
    let on_b = common::committed(bb, &app, t, 2);
    for p in 0..2 {
        let next = copied[p as usize] - 3;
        let want = src
            .iter()
            .find(|g| g.partition == p && g.offset == next)
            .map(kr::comparable)
            .expect("the record the application reads next");
        let at = dst
            .iter()
            .find(|g| g.partition == p && kr::comparable(g) == want)
            .map(|g| g.offset)
            .expect("its copy on B");
        assert_eq!(on_b[p as usize], at, "app on B, partition {p}");
    }
    // A group the source does not know (yet) is not an error for a sync.
    assert!(!run.stderr.contains(&later), "{}", run.stderr);
}

/// Issue 31: `--sync-groups` on an exactly-once copy whose transaction is open commits a group
/// caught up with the copy where a read_committed reader of the target stands, never at the
/// high watermark, past the open copies of the group's next records.
#[test]
fn issue_31_sync_groups_stops_before_copies_in_an_open_transaction() {
    use crate::translate::{assert_reads_from_ten, open_transaction_copy, wait_for_open_copies};
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = &unique("sync-open");
    let (eos, app) = (&format!("kreplicate.{topic}"), &format!("{topic}.app"));
    let id = format!("{}/{topic}", common::cluster_id(ab));
    common::create_topic(ab, topic, 2);
    common::create_topic(bb, topic, 2);
    common::produce(ab, topic, &kr::records(20, 2, "first"));
    let run = kr::run(&kr::caught_up_args(ab, bb, topic, eos, "exactly-once", &[]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    common::produce(ab, topic, &kr::records(10, 2, "next"));
    let sync = ["--sync-groups", app, "--sync-groups-interval", "500ms"];
    let mut copy = Some(open_transaction_copy(ab, bb, topic, eos, &sync));
    let next = wait_for_open_copies(bb, topic, &id, &mut copy);
    // The group appears on the source only now: every round that syncs it sees the open
    // transaction.
    common::commit(ab, app, topic, &[(0, 10), (1, 10)]);
    kr::wait_or_kill(Duration::from_secs(60), &mut copy, || {
        let t = common::committed(bb, app, topic, 2);
        t.contains(&-1)
            .then(|| format!("{app} not synced yet: {t:?}"))
    });
    let t = common::committed(bb, app, topic, 2);
    for p in 0..2 {
        assert!(
            t[p] <= next[p],
            "{app}[{p}] synced to {} on the target, past the first copy of source offset 10 at {} (an open transaction)",
            t[p],
            next[p]
        );
    }
    assert_reads_from_ten(kr::stop(&mut copy), bb, app, topic, &id);
}

/// Issue 35, item 10: `--sync-groups` says what it did: a summary line, the JSON's
/// `group_sync` (groups synced, refused and why) and, once a round translated every group,
/// `kreplicate_group_sync_last_success_timestamp_seconds`.
#[test]
fn issue_35_sync_groups_says_what_it_synced_and_refused() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let (t, elsewhere) = (unique("sync-say"), unique("sync-else"));
    let (copier, app, other) = (unique("kreplicate.say"), unique("app"), unique("other"));
    common::create_topic(ab, &t, 1);
    common::create_topic(ab, &elsewhere, 1);
    common::produce(ab, &t, &kr::records(10, 1, "say"));
    common::commit(ab, &app, &t, &[(0, 5)]);
    // A group with positions on another topic only: refused, with the reason.
    common::commit(ab, &other, &elsewhere, &[(0, 0)]);
    let metrics = common::scratch_dir().join(format!("{}.prom", unique("sync-metrics")));
    let metrics = metrics.to_string_lossy().into_owned();
    let run = |groups: &str| {
        let mut args = kr::caught_up_args(ab, bb, &t, &copier, "at-least-once", &[]);
        args.extend([
            "--create-topics",
            "--sync-groups",
            groups,
            "--metrics-file",
            &metrics,
        ]);
        let run = kr::run(&args);
        assert_eq!(run.code, 0, "{run:?}");
        run
    };
    let both = run(&format!("{app},{other}"));
    let json = both.json();
    let sync = &json["group_sync"];
    assert_eq!(sync["synced"], serde_json::json!([app]), "{json}");
    assert_eq!(sync["refused"][0]["group"], other.as_str(), "{json}");
    let reason = sync["refused"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("no committed position"), "{json}");
    assert!(sync["rounds"].as_u64() >= Some(1), "{json}");
    assert!(sync["last_success"].is_null(), "{json}");
    assert!(
        both.stderr.contains(&format!(
            "kreplicate: --sync-groups: 1 round, synced 1 group ('{app}'); refused 1: '{other}': {reason}"
        )),
        "{}",
        both.stderr
    );
    let gauge = "kreplicate_group_sync_last_success_timestamp_seconds";
    assert!(!std::fs::read_to_string(&metrics).unwrap().contains(gauge));
    // Every selected group translated: a success, in the JSON and the metrics.
    let one = run(&app);
    let sync = &one.json()["group_sync"];
    assert!(sync["last_success"].is_string(), "{sync}");
    let text = std::fs::read_to_string(&metrics).unwrap();
    assert!(
        text.lines().any(|l| l.starts_with(&format!("{gauge} "))),
        "{text}"
    );
    assert_eq!(common::committed(bb, &app, &t, 1), [5]);
}
