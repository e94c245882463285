//! Issue 35, item 15: `--metrics-addr :PORT` listens on every interface, as Prometheus
//! exporters take it (it was refused: "cannot listen there").

use std::time::Duration;

use crate::common::{self, kr};

#[test]
fn issue_35_metrics_addr_with_only_a_port_listens_on_every_interface() {
    let port = common::free_port();
    let addr = format!(":{port}");
    // The exporter starts before the clusters are reached: nothing needs to answer.
    let (a, b) = (kr::closed_address(), kr::closed_address());
    let mut run = Some(kr::spawn(&[
        "--from",
        &a,
        "--to",
        &b,
        "--topics",
        "t",
        "--timeout",
        "60s",
        "--metrics-addr",
        &addr,
    ]));
    kr::wait_or_kill(
        Duration::from_secs(30),
        &mut run,
        || match common::http_get(&format!("http://127.0.0.1:{port}/metrics")) {
            Ok((200, text)) if text.contains("kreplicate_run_info") => None,
            other => Some(format!("no metrics on 127.0.0.1:{port} yet: {other:?}")),
        },
    );
    let child = run.take().expect("the run is still going");
    kr::signal(&child, "INT");
    let done = kr::wait(child, Duration::from_secs(30));
    assert_eq!(done.code, 0, "{done:?}");
}
