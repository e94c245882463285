//! Which group protocol the source consumer joins with: KIP-848's where the source offers it
//! and the user chose nothing that needs the classic one.

use crate::error::Error;
use crate::options::ClusterSpec;

/// Properties only the classic group protocol takes (librdkafka refuses them with KIP-848's).
const CLASSIC_ONLY: [&str; 4] = [
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "partition.assignment.strategy",
    "group.protocol.type",
];

/// The last value the user set for `key`, if any.
fn set<'a>(spec: &'a ClusterSpec, key: &str) -> Option<&'a str> {
    spec.properties
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Whether [`choose_group_protocol`] needs to know what the source offers: not where the
/// user's properties decide the protocol already.
pub fn needs_offer(spec: &ClusterSpec) -> bool {
    match set(spec, "group.protocol") {
        Some(v) => v.trim().eq_ignore_ascii_case("consumer"),
        None => CLASSIC_ONLY.iter().all(|k| set(spec, k).is_none()),
    }
}

/// The source consumer's group protocol (the caller sets `group.protocol` to it where it is
/// `consumer`): KIP-848's `consumer` protocol where the source `offered` it, since its first heartbeat brings the assignment,
/// where the classic join waits `group.initial.rebalance.delay.ms` (3 s by default) for more
/// members; the classic one where it is not offered, or the user set `group.protocol` or a
/// property only the classic protocol takes. An explicit `consumer` the source does not offer
/// is bad input.
pub fn choose_group_protocol(
    spec: &ClusterSpec,
    offered: Option<bool>,
) -> Result<&'static str, Error> {
    let chosen = if let Some(v) = set(spec, "group.protocol") {
        let consumer = v.trim().eq_ignore_ascii_case("consumer");
        if consumer && offered == Some(false) {
            return Err(Error::usage(format!(
                "source property 'group.protocol=consumer': the source cluster '{}'{} does not offer KIP-848's consumer group protocol (Kafka 4.0 and later, group.coordinator.rebalance.protocols); remove the property",
                spec.name,
                super::release_of(spec, std::time::Duration::from_secs(2))
            )));
        }
        if consumer {
            "consumer"
        } else {
            "classic"
        }
    } else if !needs_offer(spec) || offered != Some(true) {
        "classic"
    } else {
        "consumer"
    };
    static_membership(spec, chosen)?;
    Ok(chosen)
}

/// A user's `group.instance.id` (static membership) under KIP-848's protocol is refused
/// (issue 35, item 6): there the broker refuses a new member with the id of one it still
/// holds (UNRELEASED_INSTANCE_ID, fatal in librdkafka 2.12, INTRODUCTION.md "Static Group
/// Membership"), so a run restarted after a crash fails until the dead member's session
/// expires, the wait static membership was meant to remove; under the classic protocol the
/// new member fences the old one and takes its place at once.
fn static_membership(spec: &ClusterSpec, protocol: &str) -> Result<(), Error> {
    if protocol != "consumer" || set(spec, "group.instance.id").is_none() {
        return Ok(());
    }
    Err(Error::usage(
        "source property 'group.instance.id' (static membership) under KIP-848's consumer group protocol: the broker refuses a member whose id it still holds (UNRELEASED_INSTANCE_ID, fatal), so a run restarted after a crash would fail until the dead member's session expires; remove it, or add -X group.protocol=classic, where the restarted member takes the dead one's place at once (a static member sends no leave: another member takes its partitions only after session.timeout.ms)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::spec;

    #[test]
    fn issue_20_the_consumer_group_protocol_where_offered_and_nothing_classic_is_set() {
        let choose = |props: &[(&str, &str)], offered: Option<bool>| {
            choose_group_protocol(&spec(props), offered).map_err(|e| e.to_string())
        };
        let (consumer, classic) = (Ok("consumer"), Ok("classic"));
        assert_eq!(choose(&[], Some(true)), consumer);
        // Not offered, or not known to be: the classic protocol, which every broker has.
        assert_eq!(choose(&[], Some(false)), classic);
        assert_eq!(choose(&[], None), classic);
        // The user's choice stands (it is in their properties already).
        assert_eq!(
            choose(&[("session.timeout.ms", "10000")], Some(true)),
            classic
        );
        assert_eq!(
            choose(&[("group.protocol", "classic")], Some(true)),
            classic
        );
        assert_eq!(choose(&[("group.protocol", "consumer")], None), consumer);
        let refused = choose(&[("group.protocol", " Consumer")], Some(false)).unwrap_err();
        assert!(refused.contains("does not offer KIP-848"), "{refused}");
        // Only where the answer matters is the source asked.
        assert!(needs_offer(&spec(&[])));
        assert!(needs_offer(&spec(&[("group.protocol", "consumer")])));
        assert!(!needs_offer(&spec(&[("group.protocol", "classic")])));
        assert!(!needs_offer(&spec(&[("session.timeout.ms", "10000")])));
    }
}
