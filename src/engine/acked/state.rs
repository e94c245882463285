//! What the at-least-once loop, its delivery callback and its rebalance callback share, and
//! which positions to commit (pure, unit-tested).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard};
use std::time::Instant;

use rdkafka::{Offset, TopicPartitionList};

use crate::engine::shared::index;
use crate::error::Failure;
use crate::offsets::{NextOffset, PartitionTracker};
use crate::partmap::PartitionMap;
use crate::report::{Copied, Counters, PartitionEnd};
use crate::shard::Fnv;
use crate::source::Ends;
use crate::trail::{Entry, Subject, Trail};

pub(super) type TopicMap<V> = HashMap<String, V, std::hash::BuildHasherDefault<Fnv>>;

/// One assigned source partition: its commit decision and what it contributed to the copy.
#[derive(Debug, Default)]
pub(super) struct Part {
    pub(super) tracker: PartitionTracker,
    pub(super) copied: Copied,
    /// This assignment's acknowledged records on the target, and what the positions index
    /// was last told of them.
    pub(super) trail: Option<Trail>,
    pub(super) indexed: Option<Entry>,
    /// The group held a position for it when it was assigned (an earlier run's commit).
    pub(super) held: bool,
}

impl Part {
    /// The source group's position: this run's last commit, else the one it held at
    /// assignment (`start`, where reading began).
    pub(super) fn committed(&self, start: Option<i64>) -> Option<i64> {
        let held = start.filter(|_| self.held);
        self.tracker.committed().map(NextOffset::get).or(held)
    }
}

/// Everything the loop, the delivery callback and the rebalance callback share.
#[derive(Debug, Default)]
pub(super) struct State {
    /// Keyed by target topic (the delivery report names it), then partition.
    pub(super) parts: PartitionMap<Part>,
    pub(super) ends: Ends,
    /// Partitions this process no longer owns (committed position, records copied), for the
    /// summary.
    pub(super) released: BTreeMap<(String, i32), PartitionEnd>,
    /// The failure that ends the run.
    pub(super) failure: Failure,
    pub(super) assigned_once: bool,
    /// Since when the group (KIP-848) has counted this process as a member with no partitions
    /// to give it: its share is known to be empty only a while later (see `caught_up`).
    pub(super) answered: Option<Instant>,
    /// Since when the run has waited for the group to assign partitions (at start and after
    /// a revoke, and a new subscription); `None` while it holds partitions or the group
    /// counts it as a member.
    pub(super) waiting_since: Option<Instant>,
    /// Partitions revoked since the loop last looked, kept while it reads ahead (a rate
    /// limit: `shared::turns`), so that it drops what it read of them.
    pub(super) revoked: Option<Vec<(String, i32)>>,
}

impl State {
    /// Publishes the assignment and commit counts for the progress display: partitions with a
    /// committed position, this run's or an earlier one's.
    pub(super) fn publish(&self, counters: &Counters) {
        let (mut assigned, mut committed) = (0, 0);
        for part in self.parts.values() {
            assigned += 1;
            committed += u64::from(part.held || part.tracker.committed().is_some());
        }
        counters.assigned.store(assigned, Ordering::Relaxed);
        counters.committed.store(committed, Ordering::Relaxed);
    }
}

pub(super) struct Shared {
    /// The lock rule: never call into librdkafka while holding it where the call may serve a
    /// callback (poll, flush, commit, assign, committed positions, metadata). The delivery and
    /// rebalance callbacks run on the thread that polls, inside those calls, and take this lock
    /// themselves: a `Mutex` is not reentrant, so that thread would wait for itself.
    pub(super) state: Mutex<State>,
    pub(super) counters: Arc<Counters>,
    /// SourceConsumer topic → target topic, and back. They only grow: topics found by
    /// `--refresh-topics` are added; a deleted topic's entry stays (harmless, and its
    /// partitions' last reports and commits still need it).
    pub(super) target_of: RwLock<TopicMap<Arc<str>>>,
    pub(super) source_of: RwLock<TopicMap<Arc<str>>>,
    /// Set by each assignment: the loop checks, before copying, that the run knows every
    /// assigned partition (the group may assign a grown topic's new ones on its own).
    pub(super) assigned: AtomicBool,
    /// Whether the run still writes the positions index (the delivery callback sees a refused
    /// entry).
    pub(super) index: index::Writing,
    /// Set once the run leaves the group: an assignment that arrives then is only answered.
    pub(super) closing: AtomicBool,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere must not turn every later lock into another panic.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn target_of(&self) -> RwLockReadGuard<'_, TopicMap<Arc<str>>> {
        self.target_of.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn source_of(&self) -> RwLockReadGuard<'_, TopicMap<Arc<str>>> {
        self.source_of.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a route found while copying.
    pub(super) fn add_route(&self, source: &str, target: &str) {
        let (s, t): (Arc<str>, Arc<str>) = (source.into(), target.into());
        let mut to = self.target_of.write().unwrap_or_else(|e| e.into_inner());
        to.insert(source.to_string(), t);
        drop(to);
        let mut from = self.source_of.write().unwrap_or_else(|e| e.into_inner());
        from.insert(target.to_string(), s);
    }
}

/// Positions index entries (key, value) for every partition whose trail moved since the last
/// ones; marks them as told.
pub(super) fn index_entries(shared: &Shared, cluster: &str) -> Vec<(String, String)> {
    let mut guard = shared.lock();
    let st = &mut *guard;
    let source_of = shared.source_of();
    let mut out = Vec::new();
    for (target, partition, part) in st.parts.iter_mut() {
        let Some(source) = source_of.get(target) else {
            continue;
        };
        // A position the group held at assignment is told too: a run killed between its
        // commit and its entry left the index behind it, and a rerun with nothing to copy
        // there would otherwise never tell it (`groups` then said "ahead of the copy").
        let entry = Entry {
            trail: part.trail,
            committed: part
                .committed(st.ends.start(source, partition))
                .unwrap_or(-1),
        };
        if !index::moved(&entry, part.indexed.as_ref()) {
            continue;
        }
        let subject = Subject {
            cluster,
            topic: source,
            partition,
            target,
        };
        out.push(index::key_value(&subject, &entry));
        part.indexed = Some(entry);
    }
    out
}

/// Which source positions to commit (pure): the verified prefix of each partition (of `only`,
/// when given) that moved past its last commit; with `all`, every verified prefix, since the
/// final synchronous commit must also store what an asynchronous one may have lost.
pub(super) fn positions_to_commit<'a>(
    parts: &'a PartitionMap<Part>,
    source_of: &'a TopicMap<Arc<str>>,
    only: Option<&[(String, i32)]>,
    all: bool,
) -> Vec<(&'a str, i32, NextOffset)> {
    let mut out = Vec::new();
    for (target, partition, Part { tracker: t, .. }) in parts.iter() {
        let Some(source) = source_of.get(target) else {
            continue;
        };
        if only.is_some_and(|o| !o.iter().any(|(s, p)| **s == **source && *p == partition)) {
            continue;
        }
        if let Some(pos) = if all { t.verified() } else { t.to_commit() } {
            out.push((&**source, partition, pos));
        }
    }
    out
}

/// [`positions_to_commit`] as the list a commit takes.
pub(super) fn commit_list(
    shared: &Shared,
    only: Option<&[(String, i32)]>,
    all: bool,
) -> TopicPartitionList {
    let st = shared.lock();
    let source_of = shared.source_of();
    let mut tpl = TopicPartitionList::new();
    for (source, partition, pos) in positions_to_commit(&st.parts, &source_of, only, all) {
        let _ = tpl.add_partition_offset(source, partition, Offset::Offset(pos.get()));
    }
    tpl
}

pub(super) fn mark_committed(shared: &Shared, tpl: &TopicPartitionList) {
    let mut st = shared.lock();
    let target_of = shared.target_of();
    for e in tpl.elements() {
        let (Some(target), Offset::Offset(n)) = (target_of.get(e.topic()), e.offset()) else {
            continue;
        };
        if let Some(t) = st.parts.get_mut(target, e.partition()) {
            t.tracker.mark_committed(NextOffset::at(n));
        }
    }
    st.publish(&shared.counters);
    shared.counters.note_commit();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TargetProducer topic `b.t` copies source topic `t`; `acks[p]` are the acknowledged offsets of
    /// partition p out of 0..10 sent.
    fn table(acks: &[&[i64]]) -> (PartitionMap<Part>, TopicMap<Arc<str>>) {
        let mut parts: PartitionMap<Part> = PartitionMap::default();
        for (p, acked) in acks.iter().enumerate() {
            let mut t = PartitionTracker::default();
            for off in 0..10 {
                t.sent(off).unwrap();
            }
            for &off in *acked {
                t.acked(off).unwrap();
            }
            let part = Part {
                tracker: t,
                ..Part::default()
            };
            parts.insert("b.t", p as i32, part);
        }
        let mut source_of = TopicMap::default();
        source_of.insert("b.t".to_string(), "t".into());
        (parts, source_of)
    }

    fn positions(v: Vec<(&str, i32, NextOffset)>) -> Vec<(String, i32, i64)> {
        v.into_iter()
            .map(|(t, p, n)| (t.to_string(), p, n.get()))
            .collect()
    }

    #[test]
    fn only_contiguous_acknowledged_prefixes_are_committed() {
        // p0: 0..3 acked; p1: a gap at 0; p2: nothing acked.
        let (parts, source_of) = table(&[&[0, 1, 2, 5], &[1, 2, 3], &[]]);
        assert_eq!(
            positions(positions_to_commit(&parts, &source_of, None, false)),
            vec![("t".to_string(), 0, 3)]
        );
    }

    #[test]
    fn committed_positions_are_repeated_only_for_the_final_commit() {
        let (mut parts, source_of) = table(&[&[0, 1], &[0]]);
        for part in parts.iter_mut().map(|(_, _, part)| part) {
            let v = part.tracker.verified().unwrap();
            part.tracker.mark_committed(v);
        }
        assert!(positions_to_commit(&parts, &source_of, None, false).is_empty());
        assert_eq!(
            positions(positions_to_commit(&parts, &source_of, None, true)),
            vec![("t".to_string(), 0, 2), ("t".to_string(), 1, 1)]
        );
    }

    #[test]
    fn a_revoke_commits_only_the_revoked_partitions() {
        let (parts, source_of) = table(&[&[0], &[0, 1], &[0, 1, 2]]);
        let revoked = [("t".to_string(), 2), ("other".to_string(), 1)];
        assert_eq!(
            positions(positions_to_commit(
                &parts,
                &source_of,
                Some(&revoked),
                true
            )),
            vec![("t".to_string(), 2, 3)]
        );
    }

    #[test]
    fn a_failed_delivery_stops_its_partition_for_good() {
        let (mut parts, source_of) = table(&[&[0, 1]]);
        let t = &mut parts.get_mut("b.t", 0).unwrap().tracker;
        t.failed(2, "refused").unwrap();
        for off in 3..10 {
            t.acked(off).unwrap();
        }
        assert_eq!(
            positions(positions_to_commit(&parts, &source_of, None, true)),
            vec![("t".to_string(), 0, 2)]
        );
    }

    #[test]
    fn partitions_of_unknown_topics_are_skipped() {
        let (parts, _) = table(&[&[0]]);
        assert!(positions_to_commit(&parts, &TopicMap::default(), None, true).is_empty());
    }
}
