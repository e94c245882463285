//! Issue 18, item 4: no run grows a chain of copies, within one cluster (a rename that its own
//! regex matches) or across two (active-active with renames and regexes matching each other's
//! renamed topics).

use std::process::Child;
use std::time::Duration;

use crate::common::kr::{self, FAST_GROUP};
use crate::common::{self, Kafka};

fn run(from: &str, to: &str, topics: &str, rename: &str) -> kr::Run {
    let mut v = vec![
        "--from",
        from,
        "--to",
        to,
        "--topics",
        topics,
        "--rename",
        rename,
        "--create-topics",
        "--until-caught-up",
        "--json",
    ];
    v.extend_from_slice(&FAST_GROUP);
    kr::run(&v)
}

/// Waits (bounded) until `topic` holds `n` records.
fn wait_for(bootstrap: &str, topic: &str, n: usize, child: &mut Option<Child>) {
    kr::wait_or_kill(Duration::from_secs(60), child, || {
        let held = kr::topics(bootstrap).iter().any(|t| t == topic)
            && common::read_all(bootstrap, topic).len() >= n;
        (!held).then(|| format!("{topic} never held {n} records"))
    });
}

fn user_topics(bootstrap: &str) -> Vec<String> {
    let mut t: Vec<String> = kr::topics(bootstrap)
        .into_iter()
        .filter(|t| !t.starts_with("__"))
        .collect();
    t.sort();
    t
}

#[test]
fn issue_18_a_rename_within_one_cluster_never_copies_its_own_output() {
    let a = Kafka::start("loop-one");
    let ab = a.bootstrap.as_str();
    common::create_topic(ab, "orders", 2);
    common::produce(ab, "orders", &kr::records(40, 2, "o"));
    for round in 0..3 {
        let r = run(ab, ab, "^orders", "{topic}.bak");
        assert_eq!(r.code, 0, "round {round}: {r:?}");
        assert_eq!(
            r.json()["records"],
            if round == 0 { 40 } else { 0 },
            "{r:?}"
        );
        if round > 0 {
            assert!(
                r.stderr.contains("left out source topics this run writes to on the same cluster (--rename makes them from selected topics; copying them would copy copies): orders.bak"),
                "{r:?}"
            );
        }
        assert_eq!(user_topics(ab), ["orders", "orders.bak"], "round {round}");
    }
    kr::assert_complete(ab, ab, "orders", "orders.bak", 2);

    // A continuous run: its refreshes see orders.bak (made by it) and leave it out, while a
    // new topic is still picked up.
    let mut args = vec![
        "--from",
        ab,
        "--to",
        ab,
        "--topics",
        "^orders",
        "--rename",
        "{topic}.bak",
        "--create-topics",
        "--refresh-topics",
        "500ms",
        "--json",
    ];
    args.extend_from_slice(&FAST_GROUP);
    let mut child = Some(kr::spawn(&args));
    common::create_topic(ab, "orders2", 1);
    common::produce(ab, "orders2", &kr::records(5, 1, "o2"));
    wait_for(ab, "orders2.bak", 5, &mut child);
    let c = child.take().expect("running");
    kr::signal(&c, "INT");
    let r = kr::wait(c, Duration::from_secs(60));
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        user_topics(ab),
        ["orders", "orders.bak", "orders2", "orders2.bak"],
        "{r:?}"
    );
}

#[test]
fn issue_18_active_active_with_renames_grows_no_chain_of_topics() {
    let (a, b) = Kafka::pair("loop-a", "loop-b");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic(ab, "orders", 2);
    common::produce(ab, "orders", &kr::records(30, 2, "o"));
    common::create_topic(ab, "idle", 1);
    common::create_topic(bb, "payments", 1);
    common::produce(bb, "payments", &kr::records(7, 1, "p"));
    for round in 0..3 {
        let ab_run = run(ab, bb, "^[a-z]", "a.{topic}");
        assert_eq!(ab_run.code, 0, "round {round}: {ab_run:?}");
        let ba_run = run(bb, ab, "^[a-z]", "b.{topic}");
        assert_eq!(ba_run.code, 0, "round {round}: {ba_run:?}");
        assert_eq!(
            user_topics(ab),
            ["b.payments", "idle", "orders"],
            "round {round}"
        );
        assert_eq!(user_topics(bb), ["a.orders", "payments"], "round {round}");
        if round == 0 {
            assert!(
                ba_run.stderr.contains("not copied yet: source topics that hold nothing but copies from the target cluster, or no record at all: a.orders"),
                "{ba_run:?}"
            );
        }
    }
    kr::assert_complete(ab, bb, "orders", "a.orders", 2);
    kr::assert_complete(bb, ab, "payments", "b.payments", 1);
    // An empty topic's copy is made once it holds a record of its own.
    common::produce(ab, "idle", &kr::records(1, 1, "i"));
    let r = run(ab, bb, "^[a-z]", "a.{topic}");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(user_topics(bb), ["a.idle", "a.orders", "payments"]);
    assert_eq!(common::read_all(bb, "a.idle").len(), 1);
}
