//! librdkafka's admin C API, for what rust-rdkafka 0.39 lacks (IncrementalAlterConfigs,
//! authorised operations, ACLs, SCRAM credentials): [`Native`] owns each C object and frees
//! it once; [`Request`] is one request on a queue of its own. Callers keep each `unsafe` call
//! a few lines with its `SAFETY:` note.

pub(crate) mod groups;
mod native;
mod request;

pub(crate) use native::{text, Native};
pub(crate) use request::{Failure, Request};
