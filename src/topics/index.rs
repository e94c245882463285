//! The positions index topic on the target (`kreplicate groups` translates through it):
//! created when missing, one compacted partition.

use std::time::Duration;

use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::error::RDKafkaErrorCode;

use super::admin;
use super::{wait_for, Metadata};
use crate::options::RunOptions;
use crate::trail::INDEX_TOPIC;

/// Makes sure the index topic exists on the target; else says why not.
pub(crate) fn ensure(
    opts: &RunOptions,
    exists: bool,
    target: &Metadata,
) -> std::result::Result<(), String> {
    if exists {
        return Ok(());
    }
    let admin = admin::admin(&opts.to, "target").map_err(|e| e.to_string())?;
    let rf = opts.replication_factor.unwrap_or(-1);
    let topic =
        NewTopic::new(INDEX_TOPIC, 1, TopicReplication::Fixed(rf)).set("cleanup.policy", "compact");
    // Bounded apart from --timeout: a cluster without the admin API must not hold up every
    // start for long.
    let timeout = opts.timeout.min(Duration::from_secs(5));
    let admin_opts = AdminOptions::new().operation_timeout(Some(timeout));
    match admin::block_on(admin.create_topics([&topic], &admin_opts), timeout) {
        Some(Ok(r)) => match r.into_iter().next() {
            Some(Err((_, code))) if code != RDKafkaErrorCode::TopicAlreadyExists => {
                return Err(code.to_string())
            }
            _ => {}
        },
        Some(Err(e)) => return Err(e.to_string()),
        None => return Err("timed out".into()),
    }
    wait_for(target, &[(INDEX_TOPIC, 1)], opts.timeout)
}
