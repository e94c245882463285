//! Reading the target for translation: the positions index, and the few target records the
//! index leaves to read (see [`crate::trail`]).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use crate::error::{Error, Result};
use crate::kafka;
use crate::options::ClusterSpec;
use crate::origin::{copied_from, offset_from, ORIGIN_HEADER};
use crate::source;
use crate::trail::{self, Entry, Translation, INDEX_TOPIC};

/// (source cluster, source topic, partition, target topic) → its index entries.
pub type Index = HashMap<(String, String, i32, String), Vec<Entry>>;

/// A reader of the target that never joins a group or commits.
pub struct Target {
    reader: BaseConsumer,
    timeout: Duration,
}

impl Drop for Target {
    fn drop(&mut self) {
        source::close(&self.reader, self.timeout);
    }
}

/// One translation and what it cost.
pub struct Found {
    pub translation: Translation,
    pub records_read: u64,
}

impl Target {
    pub fn new(spec: &ClusterSpec, timeout: Duration) -> Result<Target> {
        // Empty partitions answer only after fetch.wait.max.ms.
        let defaults = [
            ("fetch.wait.max.ms", "10"),
            ("auto.offset.reset", "earliest"),
        ];
        let reader: BaseConsumer = kafka::reader_config(spec, "kreplicate.groups", &defaults)
            .create()
            .map_err(|e| kafka::creation_error("target", e))?;
        Ok(Target { reader, timeout })
    }

    /// Every entry of the positions index (an empty index when the topic does not exist).
    pub fn index(&self) -> Result<Index> {
        let mut index = Index::new();
        let md = self
            .reader
            .fetch_metadata(Some(INDEX_TOPIC), self.timeout)
            .map_err(|e| Error::failed(format!("cannot read the target's metadata: {e}")))?;
        let exists = md
            .topics()
            .iter()
            .any(|t| t.error().is_none() && !t.partitions().is_empty());
        drop(md);
        if !exists {
            return Ok(index);
        }
        self.read(INDEX_TOPIC, 0, (0, None), Until::End, |m| {
            if let Some((s, e)) =
                trail::parse(m.key().unwrap_or_default(), m.payload().unwrap_or_default())
            {
                let key = (
                    s.cluster.into(),
                    s.topic.into(),
                    s.partition,
                    s.target.into(),
                );
                index.entry(key).or_default().push(e);
            }
            false
        })?;
        Ok(index)
    }

    /// Translates source position `x` of `cluster`'s `topic`[`partition`], copied to `target`,
    /// reading only the ranges the entries leave.
    pub fn translate(
        &self,
        (cluster, topic, partition, target): (&str, &str, i32, &str),
        entries: &[Entry],
        x: i64,
    ) -> Result<Found> {
        let mut read = 0u64;
        let mut first = None;
        let mut search = trail::Search::default();
        let mut end = 0;
        for (from, to) in trail::ranges(entries, x) {
            let reached = self.read(target, partition, (from, to), Until::Stable, |m| {
                read += 1;
                let origin = m.headers().and_then(|h| {
                    h.iter()
                        .filter(|h| h.key == ORIGIN_HEADER)
                        .last()
                        .and_then(|h| h.value)
                });
                let ours = origin.map(|v| offset_from(v, cluster, topic, partition));
                first = search.record(m.offset(), ours, x);
                first.is_some()
            })?;
            end = reached.end;
            // What follows an open transaction is not known yet, copies of `x` included:
            // the answer is no later than where a read_committed reader stands now.
            if first.is_some() || reached.hidden {
                break;
            }
        }

        Ok(Found {
            // Position 0 is covered by any copy: nothing comes before it.
            translation: trail::decide(
                x,
                first,
                trail::copied(entries).or((x == 0).then_some(0)),
                search.leftover().unwrap_or(end),
            ),
            records_read: read,
        })
    }

    /// Active-active (issue 18), on a reader of the source: the least position on the target
    /// among the records of `topic`[`partition`] from `x` on that were copied from the target
    /// cluster `back` (its `target` topic, same partition), read until [`trail::Returned`]
    /// says no later one matters; and the records read.
    pub fn returned(
        &self,
        (topic, partition, x): (&str, i32, i64),
        (back, target): (&str, &str),
        bound: i64,
    ) -> Result<(Option<i64>, u64)> {
        let mut seen = trail::Returned::new(bound);
        let mut read = 0u64;
        self.read(topic, partition, (x, None), Until::End, |m| {
            read += 1;
            let on_target = m.headers().and_then(|h| {
                h.iter()
                    .filter(|h| h.key == ORIGIN_HEADER)
                    .filter_map(|h| h.value)
                    .filter_map(|v| copied_from(v, back, target, partition))
                    .last()
            });
            seen.see(on_target)
        })?;
        Ok((seen.least, read))
    }

    /// Failback (issue 42), on a reader of the source: where position `x` of `topic`[`partition`]
    /// lands on the target when the copy back never wrote that partition, because all its
    /// records came from the target (`back`'s `target` topic): the origin of the first record
    /// at `x` or after it, else just past the origin of the last one before it. `None` when
    /// that record is the source's own (not copied back: no provenance). And the records read.
    pub fn home(
        &self,
        (topic, partition, x): (&str, i32, i64),
        (back, target): (&str, &str),
    ) -> Result<(Option<Translation>, u64)> {
        let origin = |m: &rdkafka::message::BorrowedMessage<'_>| {
            m.headers().and_then(|h| {
                h.iter()
                    .filter(|h| h.key == ORIGIN_HEADER)
                    .filter_map(|h| h.value)
                    .filter_map(|v| copied_from(v, back, target, partition))
                    .last()
            })
        };
        let mut read = 0u64;
        let mut next = None;
        self.read(topic, partition, (x, None), Until::End, |m| {
            read += 1;
            next = Some(origin(m));
            true
        })?;
        if let Some(o) = next {
            return Ok((o.map(Translation::At), read));
        }
        // At the end: past the last record, looked for in ever wider windows (markers and
        // aborted records take offsets too).
        let mut window = 64;
        loop {
            let from = (x - window).max(0);
            let mut last = None;
            self.read(topic, partition, (from, Some(x)), Until::End, |m| {
                read += 1;
                last = Some(origin(m));
                false
            })?;
            match last {
                Some(o) => return Ok((o.map(|o| Translation::At(o + 1)), read)),
                // Nothing read before `x`: nothing to skip on the target either.
                None if from == 0 => return Ok((Some(Translation::At(0)), read)),
                None => window *= 4,
            }
        }
    }

    /// Reads `topic`[`partition`] from `from` until `to` (or its end, as a read_committed
    /// reader sees it) or until `each` says stop.
    fn read(
        &self,
        topic: &str,
        partition: i32,
        (from, to): (i64, Option<i64>),
        until: Until,
        mut each: impl FnMut(&rdkafka::message::BorrowedMessage<'_>) -> bool,
    ) -> Result<Reached> {
        let cannot = |e: &dyn std::fmt::Display| {
            Error::failed(format!("reading target topic {topic}[{partition}]: {e}"))
        };
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(topic, partition, Offset::Offset(from))
            .map_err(|e| Error::failed(format!("cannot read {topic}[{partition}]: {e}")))?;
        source::assign(&self.reader, &tpl)
            .map_err(|e| Error::failed(format!("cannot read {topic}[{partition}]: {e}")))?;
        drop(tpl);
        // Just after the last record delivered: a reader there reads what one at the end
        // does (what lies between is markers and aborted records), never the high watermark,
        // past records of open transactions (issue 31).
        let mut next = from;
        // The last stable offset, asked for when the read may be stuck at or past it.
        let stable = || -> Result<i64> {
            source::watermarks(&self.reader, topic, partition, self.timeout)
                .map(|w| w.1)
                .map_err(|e| cannot(&e))
        };
        // Bounds the wait for the next record, not the whole read (a gap may be long).
        let mut deadline = Instant::now() + self.timeout;
        loop {
            if Instant::now() > deadline {
                return Err(cannot(&format!("nothing arrived for {:?}", self.timeout)));
            }
            match self.reader.poll(Duration::from_millis(100)) {
                Some(Ok(m)) if to.is_some_and(|to| m.offset() >= to) => break,
                Some(Ok(m)) => {
                    next = m.offset() + 1;
                    if each(&m) {
                        break;
                    }
                    deadline = Instant::now() + self.timeout;
                }
                // The end a read_committed reader sees is the last stable offset: short of
                // `to`, the rest of the range is hidden (past `next` itself, it may be only
                // markers and aborted records: ask).
                Some(Err(KafkaError::PartitionEOF(_))) => {
                    let hidden = match to {
                        Some(to) if until == Until::Stable && next < to => stable()? < to,
                        _ => false,
                    };
                    return Ok(Reached { end: next, hidden });
                }
                Some(Err(e)) => return Err(cannot(&e)),
                // A reader past the last stable offset (an open transaction before `from`)
                // gets neither records nor an end until that transaction ends.
                None if until == Until::Stable && stable()? <= next => {
                    return Ok(Reached {
                        end: next,
                        hidden: true,
                    })
                }
                None => {}
            }
        }
        Ok(Reached {
            end: next,
            hidden: false,
        })
    }
}

/// Where a read stops.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    /// At the partition's end, as a read_committed reader sees it.
    End,
    /// Also at the last stable offset (ListOffsets), which a reader past it never reaches.
    /// Not for the index: ListOffsets is wrong on some brokers (tansu), and too low there
    /// would drop entries; for a lookup it only gives an earlier position.
    Stable,
}

/// How a read ended.
struct Reached {
    /// Just after the last record read, or where the read began.
    end: i64,
    /// An open transaction hides the rest of the range: nothing after `end` is known.
    hidden: bool,
}
