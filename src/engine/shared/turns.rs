//! Partitions in turn under a rate limit (issue 35). librdkafka hands a consumer one fetched
//! batch after another, thousands of records of one partition at a time: a run held to 400
//! records/s copied one partition for ten seconds while the others waited and their lag grew
//! out of sight. Under `--max-bytes-per-sec`/`--max-records-per-sec` the loop reads ahead what
//! the consumer holds ready (up to a bound) into a queue per partition and copies one record of
//! each in turn. A partition's own order is kept; what a poll says besides a record (an error)
//! is held until every record read before it was copied, and nothing is read ahead meanwhile.

use std::collections::VecDeque;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::message::{BorrowedMessage, Message};

use crate::source::{classify, Polled};
use crate::target;

/// Records read ahead at most, and their bytes: past these the loop copies before reading on.
const MAX_RECORDS: usize = 10_000;
const MAX_BYTES: u64 = 8 << 20;

/// What [`Turns::next`] gives: the next record in turn, or an event once no record is left.
#[derive(Debug, PartialEq)]
pub(in crate::engine) enum Turn<R, E> {
    Record(R),
    Event(E),
}

/// A queue per source partition (`R` records of `bytes` each), served in turn.
pub(in crate::engine) struct Turns<R, E> {
    queues: Vec<Queue<R>>,
    /// The queue whose turn is next.
    next: usize,
    records: usize,
    bytes: u64,
    event: Option<E>,
}

struct Queue<R> {
    topic: Box<str>,
    partition: i32,
    records: VecDeque<(R, u64)>,
}

impl<R, E> Default for Turns<R, E> {
    fn default() -> Self {
        Turns {
            queues: Vec::new(),
            next: 0,
            records: 0,
            bytes: 0,
            event: None,
        }
    }
}

impl<R, E> Turns<R, E> {
    /// Nothing held: the next read may wait for the source.
    pub(in crate::engine) fn is_empty(&self) -> bool {
        self.records == 0 && self.event.is_none()
    }

    /// Read no further: the bound is reached, or an event waits for the records before it.
    pub(in crate::engine) fn full(&self) -> bool {
        self.records >= MAX_RECORDS || self.bytes >= MAX_BYTES || self.event.is_some()
    }

    /// Queues `record` (of the partition `key` names) behind that partition's others.
    pub(in crate::engine) fn push(
        &mut self,
        record: R,
        bytes: u64,
        key: impl Fn(&R) -> (&str, i32),
    ) {
        let (topic, partition) = key(&record);
        let i = match self
            .queues
            .iter()
            .position(|q| q.partition == partition && *q.topic == *topic)
        {
            Some(i) => i,
            None => {
                self.queues.push(Queue {
                    topic: topic.into(),
                    partition,
                    records: VecDeque::new(),
                });
                self.queues.len() - 1
            }
        };
        self.queues[i].records.push_back((record, bytes));
        self.records += 1;
        self.bytes += bytes;
    }

    /// Holds what a poll said besides a record until the records read before it are copied.
    pub(in crate::engine) fn hold(&mut self, event: E) {
        debug_assert!(self.event.is_none(), "reading stops at an event");
        self.event = Some(event);
    }

    /// The next partition's oldest record, else the held event.
    pub(in crate::engine) fn next(&mut self) -> Option<Turn<R, E>> {
        if self.records == 0 {
            return self.event.take().map(Turn::Event);
        }
        let n = self.queues.len();
        for k in 0..n {
            let i = (self.next + k) % n;
            if let Some((record, bytes)) = self.queues[i].records.pop_front() {
                self.next = (i + 1) % n;
                self.records -= 1;
                self.bytes -= bytes;
                return Some(Turn::Record(record));
            }
        }
        None
    }

    /// Drops what was read of partitions this run no longer owns (a revoke): a partition
    /// assigned again is read again from its committed position.
    pub(in crate::engine) fn forget(&mut self, gone: impl Fn(&str, i32) -> bool) {
        let (mut records, mut bytes) = (0, 0);
        self.queues.retain(|q| {
            let keep = !gone(&q.topic, q.partition);
            if keep {
                records += q.records.len();
                bytes += q.records.iter().map(|r| r.1).sum::<u64>();
            }
            keep
        });
        (self.records, self.bytes) = (records, bytes);
        self.next = 0;
    }

    /// Drops every record read ahead (a rewind reads them again).
    pub(in crate::engine) fn clear(&mut self) {
        self.forget(|_, _| true);
    }
}

/// The next thing to copy under a rate limit: reads ahead what `consumer` holds ready (waiting
/// up to `wait` only when nothing is held), then gives the next record in turn, else the held
/// event, else `Idle`. `forget` drops what was read of revoked partitions: called first (a
/// `--shard` run reassigns itself outside a poll, and a full read-ahead polls not at all:
/// issue 41) and after each poll (a rebalance runs inside one).
pub(in crate::engine) fn poll_in_turn<'c, C: ConsumerContext>(
    consumer: &'c BaseConsumer<C>,
    turns: &mut Turns<BorrowedMessage<'c>, Polled<'c>>,
    wait: Duration,
    mut forget: impl FnMut(&mut Turns<BorrowedMessage<'c>, Polled<'c>>),
) -> Polled<'c> {
    forget(turns);
    let mut wait = if turns.is_empty() {
        wait
    } else {
        Duration::ZERO
    };
    while !turns.full() {
        let polled = consumer.poll(wait);
        forget(turns);
        match polled {
            None => break,
            Some(Ok(msg)) => {
                let bytes = target::record_bytes(&msg);
                turns.push(msg, bytes, |m| (m.topic(), m.partition()));
            }
            // A partition's end only makes the loop check every partition's position against
            // its end, which it does once nothing is held (the poll after says `Idle`): held,
            // it would stop reading the other partitions behind this one's records.
            Some(Err(KafkaError::PartitionEOF(_))) if !turns.is_empty() => {}
            other => {
                turns.hold(classify(other));
                break;
            }
        }
        wait = Duration::ZERO;
    }
    match turns.next() {
        Some(Turn::Record(msg)) => Polled::Record(msg),
        Some(Turn::Event(e)) => e,
        None => Polled::Idle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Rec = (&'static str, i32, u32);

    fn push(t: &mut Turns<Rec, &'static str>, topic: &'static str, p: i32, r: u32, bytes: u64) {
        t.push((topic, p, r), bytes, |r| (r.0, r.1));
    }

    /// The records' numbers, then the event, in the order they are given.
    fn drain(t: &mut Turns<Rec, &'static str>) -> Vec<Turn<u32, &'static str>> {
        std::iter::from_fn(|| t.next())
            .map(|x| match x {
                Turn::Record(r) => Turn::Record(r.2),
                Turn::Event(e) => Turn::Event(e),
            })
            .collect()
    }

    #[test]
    fn issue_35_partitions_take_turns_and_keep_their_order() {
        let mut t = Turns::default();
        // One partition's whole batch first, as librdkafka hands them over.
        for r in 0..4 {
            push(&mut t, "a", 0, r, 10);
        }
        for r in 10..12 {
            push(&mut t, "a", 1, r, 10);
        }
        push(&mut t, "b", 0, 20, 10);
        assert!(!t.full() && !t.is_empty());
        let order = [0, 10, 20, 1, 11, 2, 3].map(Turn::Record);
        assert_eq!(drain(&mut t), order);
        assert!(t.is_empty());
    }

    #[test]
    fn issue_35_an_event_waits_for_the_records_read_before_it() {
        let mut t = Turns::default();
        push(&mut t, "a", 0, 1, 10);
        push(&mut t, "a", 1, 2, 10);
        t.hold("end of a[1]");
        // Nothing is read past an event, so it cannot wait forever behind new records.
        assert!(t.full());
        assert_eq!(
            drain(&mut t),
            [Turn::Record(1), Turn::Record(2), Turn::Event("end of a[1]")]
        );
        assert!(!t.full() && t.is_empty());
    }

    #[test]
    fn issue_35_reading_ahead_is_bounded() {
        let mut t = Turns::default();
        for r in 0..MAX_RECORDS as u32 - 1 {
            push(&mut t, "a", (r % 3) as i32, r, 1);
        }
        assert!(!t.full());
        push(&mut t, "a", 0, 0, 1);
        assert!(t.full());
        let mut big = Turns::default();
        push(&mut big, "a", 0, 0, MAX_BYTES);
        assert!(big.full());
        assert_eq!(drain(&mut big), [Turn::Record(0)]);
        assert!(!big.full());
    }

    #[test]
    fn issue_35_a_revoked_partition_is_forgotten_and_the_rest_kept() {
        let mut t = Turns::default();
        push(&mut t, "a", 0, 1, 5);
        push(&mut t, "a", 1, 2, 7);
        push(&mut t, "a", 0, 3, 5);
        t.forget(|topic, p| topic == "a" && p == 0);
        assert!(!t.is_empty());
        assert_eq!(drain(&mut t), [Turn::Record(2)]);
        assert!(t.is_empty());
        push(&mut t, "a", 1, 4, 1);
        t.clear();
        assert!(t.is_empty());
        assert!(t.next().is_none());
    }
}
