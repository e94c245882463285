//! Preflight: whether a copy may start, and which topics it copies. One admission rule
//! ([`admission`]) decides each selected topic (loops, a copy onto itself, the target present
//! or creatable, its partitions, the permissions), whoever asks:
//!
//! * `start`: what a run would do ([`inspect`], which writes nothing, so `kreplicate plan`
//!   prints it) and doing it ([`apply`]): the start acts on the same answer;
//! * `discover`: looking again while a run copies (`--refresh-topics`): every topic it finds
//!   passes the same rule, permissions included;
//!
//! It reads and writes the clusters through `topics` (metadata, configs, creating topics).

pub mod admission;
mod discover;
mod start;

pub use discover::{follow_assigned, refresh, Refresh};
pub use start::{apply, identity, inspect, stamp, Applied, Inspection};
