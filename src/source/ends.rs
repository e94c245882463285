//! Where reading ends: per source partition, whether the reader reached the end the last
//! fetch saw, a source gap at the start, and a stall behind an open transaction.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext};
use rdkafka::{Offset, TopicPartitionList};

use crate::error::{Error, Result};
use crate::options::{GapPolicy, RunOptions};

use super::{cached_watermarks, gap_message};

/// Whether a partition has been read to its end.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum EndCheck {
    Done,
    NotYet,
    /// The start lies outside the log and the policy is to fail.
    Gap,
    /// The start lies outside the log: move there and keep reading.
    Reset(Offset),
}

/// `position` is the consumer's (Invalid until something was read), `start` where reading
/// began, `low..high` the log as the last fetch saw it. A partition is done when the position
/// reaches the high watermark of a fetch made after the run started: fetch high watermarks
/// are right on every broker we know, unlike ListOffsets on tansu.
pub(crate) fn end_check(
    position: Offset,
    start: Offset,
    low: i64,
    high: i64,
    on_gap: GapPolicy,
) -> EndCheck {
    let pos = match (position, start) {
        (Offset::Offset(n), _) | (_, Offset::Offset(n)) => n,
        (_, Offset::Beginning) => low,
        _ => high,
    };
    // Nothing read yet and the start lies outside the log: a source gap. Not every broker
    // answers such a fetch with an error (tansu returns nothing), so it is caught here too.
    if position == Offset::Invalid && (pos > high || pos < low) {
        return match on_gap {
            GapPolicy::Fail => EndCheck::Gap,
            GapPolicy::Earliest => EndCheck::Reset(Offset::Beginning),
            GapPolicy::Latest => EndCheck::Reset(Offset::End),
        };
    }
    if pos >= high {
        EndCheck::Done
    } else {
        EndCheck::NotYet
    }
}

/// At most one [`Ends::check`] per this (the checks that come sooner say "not yet").
const CHECK_EVERY: Duration = Duration::from_millis(20);

/// How long a partition's reading may stand still short of its end before the run looks
/// for a source transaction holding it back.
const STALL: Duration = Duration::from_secs(5);

/// Per source partition: where reading started, and whether it reached the end.
#[derive(Debug, Default)]
pub(crate) struct Ends {
    parts: BTreeMap<(String, i32), (Offset, bool)>,
    /// Partitions whose reading stands still short of their end.
    stalled: BTreeMap<(String, i32), Stalled>,
    /// How long each partition's reading waited behind a source transaction (issue 41).
    behind: BTreeMap<(String, i32), Duration>,
    /// What the run should say, taken by [`Ends::news`].
    news: Vec<String>,
    /// Partitions that reached their end and where reading stands, taken by [`Ends::reached`].
    reached: Vec<(String, i32, i64)>,
    /// When [`Ends::check`] last looked.
    checked: Option<Instant>,
}

/// A partition's reading standing still at `at` since `since`; `open` when a source
/// transaction holds it back (its last stable offset, since when that was found).
#[derive(Debug)]
struct Stalled {
    at: i64,
    since: Instant,
    looked: bool,
    open: Option<i64>,
}

impl Ends {
    pub(crate) fn insert(&mut self, topic: &str, partition: i32, start: Offset) {
        self.parts
            .insert((topic.to_string(), partition), (start, false));
    }

    pub(crate) fn remove(&mut self, topic: &str, partition: i32) {
        let key = (topic.to_string(), partition);
        self.parts.remove(&key);
        self.stalled.remove(&key);
    }

    /// What the run should say about partitions waiting behind a source transaction.
    pub(crate) fn news(&mut self) -> Vec<String> {
        std::mem::take(&mut self.news)
    }

    /// The partitions that reached their end since the last call, and the consumer's position
    /// there (past any transaction marker at the end).
    pub(crate) fn reached(&mut self) -> Vec<(String, i32, i64)> {
        std::mem::take(&mut self.reached)
    }

    /// How long a partition's reading waited behind a source transaction, if it did.
    pub(crate) fn behind_transaction(&self, topic: &str, partition: i32) -> Option<Duration> {
        let key = (topic.to_string(), partition);
        let waiting = self.stalled.get(&key).filter(|s| s.open.is_some());
        let done = self.behind.get(&key).copied();
        match (done, waiting) {
            (None, None) => None,
            (d, w) => Some(d.unwrap_or_default() + w.map_or(Duration::ZERO, |s| s.since.elapsed())),
        }
    }

    /// A partition read up to `at`, short of its end `high`: when it stood still for [`STALL`],
    /// looks once whether a source transaction holds it back (its last stable offset, as a
    /// read_committed ListOffsets answers, at or before `at`) and says so (issue 41: a cron run
    /// waited a minute in silence). Its end is not reachable before the transaction ends.
    fn stalled<C: ConsumerContext>(
        &mut self,
        consumer: &BaseConsumer<C>,
        (topic, partition): (&str, i32),
        at: i64,
        high: i64,
        timeout: Duration,
    ) {
        let key = (topic.to_string(), partition);
        if self.stalled.get(&key).is_none_or(|s| s.at != at) {
            // New, or moved on since the last look: standing still from now.
            self.moved(&key);
            let since = Instant::now();
            let fresh = Stalled {
                at,
                since,
                looked: false,
                open: None,
            };
            self.stalled.insert(key, fresh);
            return;
        }
        let Some(s) = self.stalled.get_mut(&key) else {
            return;
        };
        if s.looked || s.since.elapsed() < STALL {
            return;
        }
        s.looked = true;
        let Ok((_, stable)) = consumer.fetch_watermarks(topic, partition, timeout) else {
            return;
        };
        if stable > at || stable >= high {
            return;
        }
        s.open = Some(stable);
        let since =
            humantime::format_rfc3339_seconds(std::time::SystemTime::now() - s.since.elapsed());
        self.news.push(format!(
            "{topic}[{partition}] waits behind a transaction open on the source since {since} at the latest: readable up to offset {stable} (its last stable offset), its end {high}; --until-caught-up copies up to the end it saw at start, so it waits until the transaction commits or aborts (the source broker aborts one left open for its transaction.timeout.ms, at most transaction.max.timeout.ms, 15 minutes by default)"
        ));
    }

    /// A stalled partition's reading moved on (or reached its end): a wait behind a
    /// transaction ends, counted and said.
    fn moved(&mut self, key: &(String, i32)) {
        let Some(s) = self.stalled.remove(key) else {
            return;
        };
        if s.open.is_some() {
            let waited = s.since.elapsed();
            *self.behind.entry(key.clone()).or_default() += waited;
            self.news.push(format!(
                "{}[{}]: the source transaction ended after {} of waiting; reading goes on",
                key.0,
                key.1,
                humantime::format_duration(Duration::from_secs(waited.as_secs()))
            ));
        }
    }

    /// Where reading of one partition started, if at a known offset.
    pub(crate) fn start(&self, topic: &str, partition: i32) -> Option<i64> {
        match self.parts.get(&(topic.to_string(), partition)) {
            Some((Offset::Offset(n), _)) => Some(*n),
            _ => None,
        }
    }

    /// The partitions held.
    pub(crate) fn held(&self) -> std::collections::HashSet<(String, i32)> {
        self.parts.keys().cloned().collect()
    }

    /// Where reading started, for partitions that started at a known offset.
    pub(crate) fn starts(&self) -> Vec<(String, i32, i64)> {
        self.parts
            .iter()
            .filter_map(|((t, p), (start, _))| match start {
                Offset::Offset(n) => Some((t.clone(), *p, *n)),
                _ => None,
            })
            .collect()
    }

    /// Checks every partition; pauses those that are done (the run copies what existed when
    /// it started) and moves those past a gap the user chose to skip. `Ok(true)` when all are
    /// done, `Err` with a message on a source gap.
    pub(crate) fn check<C: ConsumerContext>(
        &mut self,
        consumer: &BaseConsumer<C>,
        opts: &RunOptions,
    ) -> Result<bool> {
        // Asked on every partition's end, a burst of thousands at a run's end: at most one
        // look per CHECK_EVERY, of the partitions not done yet.
        if self.checked.is_some_and(|t| t.elapsed() < CHECK_EVERY) {
            return Ok(false);
        }
        self.checked = Some(Instant::now());
        let Ok(assigned) = consumer.assignment() else {
            return Ok(false);
        };
        let elements = assigned.elements();
        let open = elements
            .iter()
            .map(|e| (e.topic(), e.partition()))
            .filter(|(t, p)| {
                let key = (t.to_string(), *p);
                self.parts.get(&key).is_some_and(|(_, done)| !done)
            });
        let Ok(positions) = crate::kafka::consumer::positions(consumer, open) else {
            return Ok(false);
        };
        let mut all = true;
        let mut newly = TopicPartitionList::new();
        for e in positions.elements() {
            let Some((start, done)) = self.parts.get_mut(&(e.topic().to_string(), e.partition()))
            else {
                continue;
            };
            if *done {
                continue;
            }
            let Some((low, high)) = cached_watermarks(consumer, e.topic(), e.partition()) else {
                all = false;
                continue;
            };
            let outcome = end_check(e.offset(), *start, low, high, opts.on_gap);
            let (topic, partition) = (e.topic(), e.partition());
            match outcome {
                EndCheck::Done => {
                    *done = true;
                    let _ = newly.add_partition(topic, partition);
                    self.moved(&(topic.to_string(), partition));
                    if let Offset::Offset(at) = e.offset() {
                        self.reached.push((topic.to_string(), partition, at));
                    }
                }
                EndCheck::NotYet => {
                    all = false;
                    if let Offset::Offset(at) = e.offset() {
                        let timeout = opts.timeout.min(Duration::from_secs(5));
                        self.stalled(consumer, (topic, partition), at, high, timeout);
                    }
                }
                EndCheck::Gap => {
                    return Err(Error::failed(gap_message(consumer, self.starts(), opts)))
                }
                EndCheck::Reset(to) => {
                    all = false;
                    // The skip is resolved to an offset and committed at once, as `--start
                    // latest` is: the next run starts there too instead of finding the gap
                    // again and skipping to a later end, past records written meanwhile.
                    let at = Offset::Offset(if to == Offset::End { high } else { low });
                    *start = at;
                    let (topic, partition) = (e.topic(), e.partition());
                    let mut decided = TopicPartitionList::new();
                    let _ = decided.add_partition_offset(topic, partition, at);
                    let skipped = consumer
                        .seek(topic, partition, at, opts.timeout)
                        .and_then(|()| consumer.commit(&decided, CommitMode::Sync));
                    if let Err(err) = skipped {
                        return Err(Error::failed(format!(
                            "cannot skip the gap in {topic}[{partition}]: {err}"
                        )));
                    }
                }
            }
        }
        if newly.count() > 0 {
            let _ = consumer.pause(&newly);
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAIL: GapPolicy = GapPolicy::Fail;

    #[test]
    fn end_check_uses_the_position_when_something_was_read() {
        let pos = Offset::Offset(10);
        assert_eq!(
            end_check(pos, Offset::Beginning, 0, 10, FAIL),
            EndCheck::Done
        );
        assert_eq!(
            end_check(pos, Offset::Beginning, 0, 11, FAIL),
            EndCheck::NotYet
        );
        // Control records move the position past the last data record: still done.
        assert_eq!(
            end_check(Offset::Offset(12), Offset::Offset(3), 0, 12, FAIL),
            EndCheck::Done
        );
    }

    #[test]
    fn end_check_uses_the_start_when_nothing_was_read() {
        let none = Offset::Invalid;
        assert_eq!(
            end_check(none, Offset::Offset(5), 0, 5, FAIL),
            EndCheck::Done
        );
        assert_eq!(
            end_check(none, Offset::Offset(4), 0, 5, FAIL),
            EndCheck::NotYet
        );
        assert_eq!(
            end_check(none, Offset::Beginning, 3, 3, FAIL),
            EndCheck::Done,
            "empty log"
        );
        assert_eq!(
            end_check(none, Offset::Beginning, 0, 3, FAIL),
            EndCheck::NotYet
        );
        assert_eq!(end_check(none, Offset::End, 0, 3, FAIL), EndCheck::Done);
    }

    #[test]
    fn end_check_reports_gaps_by_policy() {
        let none = Offset::Invalid;
        // Committed 20 on a recreated topic that holds 3 records.
        assert_eq!(
            end_check(none, Offset::Offset(20), 0, 3, FAIL),
            EndCheck::Gap
        );
        // Committed 2 where retention removed everything below 5.
        assert_eq!(
            end_check(none, Offset::Offset(2), 5, 9, FAIL),
            EndCheck::Gap
        );
        assert_eq!(
            end_check(none, Offset::Offset(20), 0, 3, GapPolicy::Earliest),
            EndCheck::Reset(Offset::Beginning)
        );
        assert_eq!(
            end_check(none, Offset::Offset(20), 0, 3, GapPolicy::Latest),
            EndCheck::Reset(Offset::End)
        );
    }
}
