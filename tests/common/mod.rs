//! Test fixtures shared by the integration tests (`mod common;` in tests/tests.rs).
//!
//! * [`Kafka`]: Apache Kafka, the reference broker: one single-node KRaft cluster per `Kafka`,
//!   started through `scripts/kafka.sh` from the jars `scripts/install-deps.sh` fetches; a
//!   cluster that cannot start is a panic, never a skipped test.
//! * [`Tansu`]: tansu, a second implementation of the protocol (memory storage), kept for the
//!   tests that are a twin of a Kafka test.
//! * rdkafka helpers against a bootstrap string: [`create_topic`], [`delete_topic`], [`produce`],
//!   [`read_all`], [`committed`]. They are blocking (no async runtime needed) and may be called
//!   from plain `#[test]`s or from inside `#[tokio::test]`s.
//!
//! * [`kr`]: running the built `kreplicate` binary (spawn, wait, signals, shared argument
//!   sets and assertions on what a run left behind).
//! * [`wait_until`]: the one bounded wait for an observed state (never a fixed sleep).
//!
//! Layout: `kafka` (the Kafka cluster), `cluster` (a multi-node one), `proxy` (a TCP fault proxy in front of one), `broker` (the tansu process, scratch folders), `records`
//! (what is produced and read back), `client` (the rdkafka helpers), `mock` (librdkafka
//! mock-cluster setups), `monitor` (real Prometheus and node_exporter processes, from Debian's
//! packages). Everything is re-exported here, so tests name it `common::X`.
#![allow(dead_code)]

mod broker;
mod client;
mod cluster;
mod kafka;
pub mod kr;
mod mock;
pub mod monitor;
mod proxy;
mod records;

// Every helper stays reachable as `common::X`, whether or not a test uses it today.
#[allow(unused_imports)]
pub use broker::{file_tail, free_port, scratch_dir, tansu_path, Tansu};
#[allow(unused_imports)]
pub use client::stable_and_high;
#[allow(unused_imports)]
pub use client::{
    add_partitions, assert_no_open_transaction, cluster_id, commit, committed, create_topic,
    create_topic_with, delete_records, delete_topic, ends, open_transaction, partition_count,
    produce, produce_with, read_all, read_all_with, topic_configs, topic_overrides, wait_for_topic,
    DEFAULT_TIMEOUT,
};
#[allow(unused_imports)]
pub use cluster::Cluster;
#[allow(unused_imports)]
pub use kafka::{kafka_client, kafka_home, kafka_tool, unique, Kafka, KIP848_FAST_SESSIONS};
#[allow(unused_imports)]
pub use mock::{mock_pair, mock_split_source};
#[allow(unused_imports)]
pub use monitor::{http_get, scraped, NodeExporter, Prometheus};
#[allow(unused_imports)]
pub use proxy::Proxy;
#[allow(unused_imports)]
pub use records::{Got, Rec};

/// Waits until `done` holds, polling every 100 ms; panics naming `what` after `limit`. The time
/// it took.
#[track_caller]
pub fn wait_until(
    what: &str,
    limit: std::time::Duration,
    mut done: impl FnMut() -> bool,
) -> std::time::Duration {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    start.elapsed()
}
