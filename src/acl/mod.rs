//! Permissions and ACLs: what a run may do, and copying what others may do.
//!
//! * `authorized`: which operations a broker says the run's principal may perform;
//! * `access`: the permissions a run needs, and the `kafka-acls` line that grants each
//!   (`preflight` refuses a start, or leaves out a discovered topic, with it);
//! * `acls`: describing and creating ACLs through librdkafka's C API;
//! * `sync`: `--sync-acls`, copying the copied topics' ACLs to the target, and `verify
//!   --acls`'s comparison.
//!
//! It reaches the brokers through `topics::admin`'s admin client and names topics by
//! `topics::Route`.

pub mod access;
mod acls;
pub mod authorized;
pub mod sync;
