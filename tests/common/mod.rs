//! Test fixtures shared by the integration tests (`mod common;` in tests/tests.rs).
//!
//! * [`Tansu`]: one real Kafka-compatible broker process (tansu, memory storage) on a free loopback
//!   port; one `Tansu` is one independent cluster. Install the binary with
//!   `scripts/install-deps.sh`; a missing binary is a panic, never a skipped test.
//! * rdkafka helpers against a bootstrap string: [`create_topic`], [`delete_topic`], [`produce`],
//!   [`read_all`], [`committed`]. They are blocking (no async runtime needed) and may be called
//!   from plain `#[test]`s or from inside `#[tokio::test]`s.
//!
//! tansu quirks the helpers respect (see shared/design/brokers.md): ListOffsets LATEST is wrong, so
//! [`read_all`] finds the end through partition-EOF events; group joins wait
//! `session.timeout.ms / 2`, so group clients here use `session.timeout.ms=2000`.
//!
//! Layout: `broker` (the tansu process), `records` (what is produced and read back), `client`
//! (the rdkafka helpers), `mock` (librdkafka mock-cluster setups), `monitor` (real Prometheus
//! and node_exporter processes, from Debian's packages). Everything is re-exported
//! here, so tests name it `common::X`.
#![allow(dead_code)]

mod broker;
mod client;
mod mock;
pub mod monitor;
mod records;

// Every helper stays reachable as `common::X`, whether or not a test uses it today.
#[allow(unused_imports)]
pub use broker::{file_tail, free_port, scratch_dir, tansu_path, Tansu};
#[allow(unused_imports)]
pub use client::{
    commit, committed, create_topic, create_topic_with, delete_topic, partition_count, produce,
    produce_with, read_all, read_all_with, topic_configs, wait_for_topic, DEFAULT_TIMEOUT,
};
#[allow(unused_imports)]
pub use mock::mock_split_source;
#[allow(unused_imports)]
pub use monitor::{http_get, scraped, NodeExporter, Prometheus};
#[allow(unused_imports)]
pub use records::{Got, Rec};
