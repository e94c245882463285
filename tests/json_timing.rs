//! Issue 35, item 11: a successful run's JSON `started` and `seconds` cover the whole run, the
//! checks and the wait for a cluster included, as a failure's do (a run reported 0.57 s after
//! a 15 s wait for its target).

use std::net::TcpListener;
use std::time::{Duration, Instant, SystemTime};

use crate::common::{self, kr, Kafka, Proxy};

#[test]
fn issue_35_json_seconds_of_a_successful_run_include_the_wait_for_the_target() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let topic = common::unique("timing");
    common::create_topic(&a.bootstrap, &topic, 1);
    common::produce(&a.bootstrap, &topic, &kr::records(5, 1, "tm"));
    // The target's bootstrap goes through a proxy that holds it: the checks wait for it.
    let proxy = Proxy::start(TcpListener::bind("127.0.0.1:0").expect("bind"), b.port);
    proxy.hold();
    let group = common::unique("g-timing");
    let began = SystemTime::now();
    let spawned = Instant::now();
    let child = kr::spawn(&kr::caught_up_args(
        &a.bootstrap,
        &proxy.addr,
        &topic,
        &group,
        "at-least-once",
        &["--create-topics"],
    ));
    // The injected fault: the target stays silent for 3 s of the run's checks.
    let held = Duration::from_secs(3);
    std::thread::sleep(held);
    proxy.resume();
    let run = kr::wait(child, Duration::from_secs(60));
    let wall = spawned.elapsed();
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["records"], 5, "{json}");
    let seconds = json["seconds"].as_f64().unwrap_or_default();
    assert!(
        seconds >= held.as_secs_f64() && seconds <= wall.as_secs_f64(),
        "seconds {seconds}, held {held:?}, wall {wall:?}: {json}"
    );
    let started = json["started"].as_str().unwrap_or_default();
    let started = humantime::parse_rfc3339(started).unwrap_or_else(|e| panic!("{e}: {json}"));
    let late = started.duration_since(began).unwrap_or_default();
    assert!(
        late < Duration::from_secs(1),
        "started {late:?} after the spawn: {json}"
    );
}
