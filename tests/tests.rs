//! Integration tests: one test binary (`cargo test --test tests`), one module per feature.
//! Brokers come from `common` (tansu processes; install with scripts/install-deps.sh) and
//! from librdkafka's mock cluster (`kreplicate::mock`).

mod common;
mod kr;

mod active_active;
mod bad_input;
mod copy;
mod cutover;
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
mod slow_copies;
mod sync_groups;
mod throttle;
mod topic_configs;
mod translate;
mod verify;
