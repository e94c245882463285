//! While the group gives this run no partitions: joining within `--join-timeout`, and, once
//! it waited a while, who holds them (issue 35).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rdkafka::consumer::Consumer;

use super::rebalance::Protocol;
use super::Acked;
use crate::kafka;
use crate::source;

/// How long the run waits for partitions before it says who holds them.
const EXPLAIN_WAIT: Duration = Duration::from_secs(10);

impl Acked {
    /// While the group has not assigned partitions: says so (progress display, and every 5 s at
    /// `-v`), and fails the run once `--join-timeout` passed. False when the run failed.
    pub(super) fn joined(&mut self) -> bool {
        let Some(since) = self.shared.lock().waiting_since else {
            return true;
        };
        if self.followed.routes.is_empty() {
            // Every source topic was deleted: nothing to join for until one appears.
            return true;
        }
        let holds = self.consumer.assignment().is_ok_and(|a| a.count() > 0);
        if holds || self.answered() {
            let mut st = self.shared.lock();
            st.waiting_since = None;
            if holds {
                st.assigned_once = true;
            } else {
                st.answered.get_or_insert_with(Instant::now);
            }
            drop(st);
            self.shared.counters.set_waiting(None);
            self.shared.counters.holding.store(true, Ordering::Relaxed);
            return true;
        }
        let waited = since.elapsed();
        let group = &self.opts.group;
        if waited > self.opts.join_timeout {
            self.shared.lock().failure.fail(format!(
                "consumer group '{group}' assigned no partitions within --join-timeout {:?}: its coordinator did not complete the join (a rebalance that does not end, or a stuck member); nothing was copied or committed meanwhile. Rerun, raise --join-timeout, or use --shard 1/1 to read without joining the group",
                self.opts.join_timeout
            ));
            return false;
        }
        self.shared
            .counters
            .set_waiting(Some(format!("joining group '{group}'")));
        if self.last_join_note.elapsed() >= Duration::from_secs(5) {
            log::info!(
                "waiting for group '{group}' to assign partitions: {:.0} s of --join-timeout {:?}",
                waited.as_secs_f64(),
                self.opts.join_timeout
            );
            self.last_join_note = Instant::now();
        }
        true
    }

    /// Once the group has given this process no partitions for [`EXPLAIN_WAIT`] (joining, or
    /// KIP-848's empty share while a killed member still holds them), says who holds them.
    pub(super) fn held_none(&mut self) {
        if self.opts.shard.is_some() || self.consumer.assignment().is_ok_and(|a| a.count() > 0) {
            (self.empty_since, self.wait_explained) = (None, false);
            return;
        }
        let waited = self.empty_since.get_or_insert_with(Instant::now).elapsed();
        if waited >= EXPLAIN_WAIT && !self.wait_explained {
            self.wait_explained = true;
            self.explain_wait(waited);
        }
    }

    /// Says which other members hold the partitions this run waits for (issue 35): after a
    /// `kill -9` the dead member keeps them until its session times out. Asked on a thread of
    /// its own, so that the wait is not lengthened by it; nothing is said when the group
    /// cannot be described or has no other member.
    fn explain_wait(&self, waited: Duration) {
        let (from, group) = (self.opts.from.clone(), self.opts.group.clone());
        let (timeout, counters) = (self.opts.timeout, self.shared.counters.clone());
        let me = source::member_id(&*self.consumer);
        let protocol = self.consumer.context().protocol;
        crate::exit::spawn("explain wait", move || {
            let Ok(admin) = kafka::admin_config(&from).create::<rdkafka::consumer::BaseConsumer>()
            else {
                return;
            };
            let rk = admin.client().native_ptr();
            if let Ok(Some(view)) = kafka::admin::groups::view(rk, &group, timeout) {
                let others: Vec<_> = view.members.iter().filter(|m| m.member_id != me).collect();
                if let Some(line) = wait_explained(&group, waited, &others, protocol) {
                    counters.notice(line);
                }
            }
        });
    }

    /// Whether (KIP-848) the group answered this process's heartbeat: a member, with or without
    /// partitions. KIP-848 reports no assignment that brings nothing new (a resubscribe after
    /// a deleted topic, a new topic given to another member, a surplus member's empty share),
    /// so only the member epoch says so. The classic protocol ends every join with an
    /// assignment, empty or not.
    fn answered(&self) -> bool {
        self.consumer.context().protocol == Protocol::Incremental
            && source::group_generation(&self.consumer).is_some_and(|g| g > 0)
    }
}

/// Why the group gives this run no partitions: the `others` members hold them (issue 35).
fn wait_explained(
    group: &str,
    waited: Duration,
    others: &[&kafka::admin::groups::Member],
    protocol: Protocol,
) -> Option<String> {
    if others.is_empty() {
        return None;
    }
    let who: Vec<String> = others
        .iter()
        .map(|m| format!("{} on host {}", m.client_id, m.host))
        .collect();
    let session = match protocol {
        Protocol::Eager => "session.timeout.ms (45 s by default; -X session.timeout.ms sets it, down to the broker's group.min.session.timeout.ms)",
        Protocol::Incremental => "the broker's group.consumer.session.timeout.ms (45 s by default) under KIP-848's protocol",
    };
    Some(format!(
        "group '{group}' has given this run no partitions for {} s: {} {} them ({}); a member that stopped without leaving (killed, or its host lost) keeps its partitions until its session times out: {session}",
        waited.as_secs(),
        crate::table::count(others.len() as u64, "other member"),
        if others.len() == 1 { "holds" } else { "hold" },
        who.join(", "),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka::admin::groups::Member;

    #[test]
    fn issue_35_a_wait_for_partitions_names_who_holds_them() {
        let dead = Member {
            client_id: "kreplicate.orders".into(),
            host: "10.0.0.5".into(),
            member_id: "m1".into(),
        };
        let wait = Duration::from_secs(10);
        assert_eq!(wait_explained("g", wait, &[], Protocol::Incremental), None);
        let line = wait_explained("g", wait, &[&dead], Protocol::Incremental).unwrap_or_default();
        assert!(
            line.starts_with("group 'g' has given this run no partitions for 10 s: 1 other member holds them (kreplicate.orders on host 10.0.0.5)"),
            "{line}"
        );
        assert!(
            line.contains("group.consumer.session.timeout.ms (45 s"),
            "{line}"
        );
        let line = wait_explained("g", wait, &[&dead, &dead], Protocol::Eager).unwrap_or_default();
        assert!(
            line.contains("2 other members hold them") && line.contains("-X session.timeout.ms"),
            "{line}"
        );
    }
}
