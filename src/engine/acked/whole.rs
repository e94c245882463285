//! `--until-caught-up` in a consumer group: a member is done when every partition of the copied
//! topics reached its end, not when its own share did. Other members hold the rest (and a
//! crashed member holds its partitions until its session expires: under KIP-848 a member that
//! joins meanwhile gets the free partitions at once). Those partitions are done when the
//! group's committed position reaches the end noted for them, or when nothing but aborted
//! records and transaction markers lies between the two (read as the copy reads them,
//! `read_committed`): an at-least-once commit stops after the last copied record. Until then
//! the member keeps running, and so receives a crashed member's partitions when its session
//! expires. A `--shard` owns a fixed set and is done with its own share.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use super::rebalance::SourceConsumer;
use super::state::State;
use super::Acked;
use crate::error::Result;
use crate::kafka;
use crate::offsets::NextOffset;
use crate::options::{Guarantee, RunOptions};
use crate::source::{self, classify_groupless, end_check, EndCheck, Polled};
use crate::topics::Route;

/// How often the group's positions are read while this member waits for other members.
const EVERY: Duration = Duration::from_secs(1);

/// How long one look at the partitions behind waits for their fetches.
const LOOK: Duration = Duration::from_secs(2);

/// How long a member the group (KIP-848) answered without partitions waits before it counts
/// its share as empty: partitions that other members give up first come with a later
/// heartbeat (5 s apart by default). Only a run with nothing left to copy anywhere ends
/// then; waiting lets it hold its share first, and tell the positions index where it stands.
const EMPTY_SHARE: Duration = Duration::from_secs(5);

type Key = (String, i32);

impl Acked {
    /// With `--until-caught-up`: true once the group gave this process its share, every partition
    /// it holds reached its end, and (in a group, not a `--shard`) every other partition of
    /// the copied topics too: the group's committed positions tell (see [`Whole`]).
    pub(super) fn caught_up(&mut self) -> bool {
        let mut st = self.shared.lock();
        let empty_share = st.answered.is_some_and(|t| t.elapsed() >= EMPTY_SHARE);
        if !self.opts.until_caught_up || !(st.assigned_once || empty_share) {
            return false;
        }
        let checked = st.ends.check(&self.consumer, &self.opts);
        for line in st.ends.news() {
            self.shared.counters.notice(line);
        }
        for (source, p, at) in st.ends.reached() {
            self.passed(&mut st, &source, p, NextOffset::at(at));
        }
        match checked {
            Ok(true) => {}
            Ok(false) => return false,
            Err(e) => {
                st.failure.fail_with(e);
                return false;
            }
        }
        let held = st.ends.held();
        drop(st);
        let Some(whole) = self.whole.as_mut() else {
            log::info!("caught up with every partition of this shard");
            return true;
        };
        let held = |t: &str, p: i32| held.contains(&(t.to_string(), p));
        match whole.reached(&self.consumer, held, &self.opts) {
            Ok(true) => {
                log::info!("caught up with every partition of the copied topics");
                true
            }
            Ok(false) => false,
            Err(e) => {
                self.shared.lock().failure.fail_with(e);
                false
            }
        }
    }

    /// A partition read to `end` (see `PartitionTracker::passed`): its position may move
    /// past what follows its last record; under `none`, stored for auto-commit at once.
    fn passed(&self, st: &mut State, source: &str, partition: i32, end: NextOffset) {
        if self.opts.guarantee == Guarantee::None {
            let mut tpl = TopicPartitionList::new();
            if tpl
                .add_partition_offset(source, partition, Offset::Offset(end.get()))
                .is_ok()
            {
                let _ = self.consumer.store_offsets(&tpl);
            }
            return;
        }
        let Some(target) = self.shared.target_of().get(source).cloned() else {
            return;
        };
        if let Some(part) = st.parts.get_mut(&target, partition) {
            part.tracker.passed(end);
        }
    }
}

/// The copied topics' partitions at start, and which of them reached their end.
pub(super) struct Whole {
    parts: Vec<Key>,
    /// Each partition's end: the high watermark of the first fetch made for it.
    ends: HashMap<Key, i64>,
    done: HashSet<Key>,
    /// A reader outside the group, for partitions other members hold.
    reader: Option<BaseConsumer>,
    next: Instant,
    last_note: Option<Instant>,
}

impl Whole {
    pub(super) fn new(routes: &[Route]) -> Whole {
        Whole {
            parts: routes
                .iter()
                .flat_map(|r| (0..r.partitions).map(|p| (r.source.clone(), p)))
                .collect(),
            ends: HashMap::new(),
            done: HashSet::new(),
            reader: None,
            next: Instant::now(),
            last_note: None,
        }
    }

    /// True when every partition this member does not hold (`held`) reached its end; asked at
    /// most every [`EVERY`] (one OffsetFetch, and a fetch for each partition still behind).
    pub(super) fn reached(
        &mut self,
        consumer: &SourceConsumer,
        held: impl Fn(&str, i32) -> bool,
        opts: &RunOptions,
    ) -> Result<bool> {
        if Instant::now() < self.next {
            return Ok(false);
        }
        self.next = Instant::now() + EVERY;
        let pending: Vec<Key> = self
            .parts
            .iter()
            .filter(|k| !self.done.contains(*k) && !held(&k.0, k.1))
            .cloned()
            .collect();
        if pending.is_empty() {
            return Ok(true);
        }
        let mut tpl = TopicPartitionList::new();
        for (t, p) in &pending {
            tpl.add_partition(t, *p);
        }
        let committed = source::group_positions(consumer, &tpl, &opts.group, opts.timeout)?;
        drop(tpl);
        let mut behind = Vec::new();
        for k in pending {
            let at = committed.get(&k).copied();
            match (at, self.ends.get(&k)) {
                (Some(at), Some(&end)) if at >= end => {
                    self.done.insert(k);
                }
                _ => behind.push((k, at)),
            }
        }
        if behind.is_empty() {
            return Ok(true);
        }
        self.look(&behind, opts)?;
        behind.retain(|(k, _)| !self.done.contains(k));
        if behind.is_empty() {
            return Ok(true);
        }
        self.note(&behind);
        Ok(false)
    }

    /// Reads each partition from the group's position (its beginning without one) until a
    /// record before its end says it is behind, or the read position reached the end.
    fn look(&mut self, behind: &[(Key, Option<i64>)], opts: &RunOptions) -> Result<()> {
        if self.reader.is_none() {
            // The copy's group id, which the principal may use, though the reader never joins
            // or commits. Errors, not a jump, at a position outside the log: the partition's
            // next owner decides by --on-gap.
            let cfg = kafka::reader_config(
                &opts.from,
                &opts.group,
                &[("fetch.wait.max.ms", "10"), ("auto.offset.reset", "error")],
            );
            let reader = cfg
                .create()
                .map_err(|e| kafka::creation_error("source", e))?;
            self.reader = Some(reader);
        }
        let Whole {
            reader: Some(reader),
            ends,
            done,
            ..
        } = self
        else {
            return Ok(());
        };
        let mut tpl = TopicPartitionList::new();
        let mut starts = HashMap::new();
        for ((t, p), at) in behind {
            let start = at.map_or(Offset::Beginning, Offset::Offset);
            let _ = tpl.add_partition_offset(t, *p, start);
            starts.insert((t.clone(), *p), start);
        }
        let assigned = source::assign(reader, &tpl);
        drop(tpl);
        if assigned.is_err() {
            return Ok(());
        }
        let deadline = Instant::now() + LOOK;
        let mut looked = Instant::now();
        while !starts.is_empty() && Instant::now() < deadline {
            match classify_groupless(reader.poll(Duration::from_millis(100))) {
                Polled::Record(m) => {
                    let k = (m.topic().to_string(), m.partition());
                    if starts.remove(&k).is_some() {
                        let end = end_of(ends, reader, &k);
                        if end.is_some_and(|end| m.offset() >= end) {
                            done.insert(k);
                        }
                    }
                    continue;
                }
                // A gap or a topic gone: the partition's owner meets it too, and decides.
                Polled::Gap(_) | Polled::Fatal(_) => break,
                _ => {}
            }
            // Every partition's end comes as an event: look at most every 10 ms, at the
            // partitions still open (see `kafka::consumer::positions`).
            if looked.elapsed() < Duration::from_millis(10) {
                continue;
            }
            looked = Instant::now();
            let open = starts.keys().map(|(t, p)| (t.as_str(), *p));
            let Ok(positions) = kafka::consumer::positions(reader, open) else {
                continue;
            };
            for e in positions.elements() {
                let k = (e.topic().to_string(), e.partition());
                let Some(&start) = starts.get(&k) else {
                    continue;
                };
                let (Some(end), Some((low, _))) = (
                    end_of(ends, reader, &k),
                    source::cached_watermarks(reader, &k.0, k.1),
                ) else {
                    continue;
                };
                if end_check(e.offset(), start, low, end, opts.on_gap) == EndCheck::Done {
                    starts.remove(&k);
                    done.insert(k);
                }
            }
        }
        let _ = reader.unassign();
        Ok(())
    }

    /// Says at `-v`, every 5 s, what this member waits for.
    fn note(&mut self, behind: &[(Key, Option<i64>)]) {
        if self
            .last_note
            .is_some_and(|t| t.elapsed() < Duration::from_secs(5))
        {
            return;
        }
        self.last_note = Some(Instant::now());
        let named: Vec<String> = behind
            .iter()
            .take(3)
            .map(|((t, p), at)| {
                let at = at.map_or("none".to_string(), |n| n.to_string());
                let end = self
                    .ends
                    .get(&(t.clone(), *p))
                    .map_or("?".to_string(), |n| n.to_string());
                format!("{t}[{p}] committed {at}, end {end}")
            })
            .collect();
        log::info!(
            "caught up with this member's partitions; waiting for {} more that other members hold, until the group's positions reach their ends: {}",
            behind.len(),
            named.join(", ")
        );
    }
}

/// A partition's end, noted from the first fetch that answered for it.
fn end_of(ends: &mut HashMap<Key, i64>, reader: &BaseConsumer, k: &Key) -> Option<i64> {
    if let Some(&end) = ends.get(k) {
        return Some(end);
    }
    let (_, high) = source::cached_watermarks(reader, &k.0, k.1)?;
    ends.insert(k.clone(), high);
    Some(high)
}
