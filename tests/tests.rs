//! Integration tests: one test binary, one module per feature, run by `scripts/test.sh`
//! (cargo-nextest). Brokers come from `common`: Apache Kafka clusters (`common::Kafka`, from
//! the jars scripts/install-deps.sh fetches), librdkafka's mock cluster for injected protocol
//! errors, and tansu where a second implementation adds something. `issue_N_` in a test's name
//! is the issue it pins (README, "Tests").

mod common;
mod kr;

mod active_active;
mod bad_input;
mod batch_size;
mod copy;
mod cutover;
mod day_one;
mod demo;
mod discovery;
mod docs;
mod eos_resume;
mod exactly_once;
mod faults;
mod groups;
mod groups_refusals;
mod growth;
mod harness;
mod loops;
mod metrics;
mod origin_size;
mod progress;
mod promises;
mod provenance;
mod route_positions;
mod secured;
mod secured_acls;
mod slow_copies;
mod sync_groups;
mod throttle;
mod topic_configs;
mod translate;
mod verify;
mod while_it_works;
