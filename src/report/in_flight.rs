//! Records sent to the target and not yet acknowledged: how many, and how long the oldest has
//! waited (pure). The one send path and the delivery reports of both engines feed it; the
//! display warns from it and the metrics export it.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::partmap::PartitionMap;

/// Per target partition, sends in order as runs of (time stamp, count): the target
/// acknowledges a partition's records in the order they were sent.
#[derive(Debug)]
pub struct InFlight {
    /// The time stamp sends get: the last tick's, which saves a clock read per record (a send
    /// happens after it, so an age is at most one tick too long).
    now: Instant,
    parts: PartitionMap<VecDeque<(Instant, u32)>>,
    count: u64,
    /// Since when the oldest record waited when the stall was warned about.
    warned: Option<Instant>,
}

/// What [`InFlight::check`] has to say about a stall.
#[derive(Debug, PartialEq, Eq)]
pub enum Stall {
    /// `records` wait; the oldest for `waited`.
    Began { records: u64, waited: Duration },
    /// The records warned about were acknowledged (or failed) after `waited`.
    Ended { waited: Duration },
}

impl InFlight {
    pub fn new(now: Instant) -> Self {
        InFlight {
            now,
            parts: PartitionMap::default(),
            count: 0,
            warned: None,
        }
    }

    pub fn tick(&mut self, now: Instant) {
        self.now = now;
    }

    /// A record handed to the producer for `topic[partition]` (every copy names its
    /// partition; a record without one is not counted, as its report could not be matched).
    pub fn sent(&mut self, topic: &str, partition: i32) {
        let Some(queue) = self
            .parts
            .get_or_insert_with(topic, partition, VecDeque::new)
        else {
            return;
        };
        match queue.back_mut() {
            Some((at, n)) if *at == self.now && *n < u32::MAX => *n += 1,
            _ => queue.push_back((self.now, 1)),
        }
        self.count += 1;
    }

    /// A delivery report (acknowledged or failed) for a record of `topic[partition]`.
    pub fn reported(&mut self, topic: &str, partition: i32) {
        let Some(queue) = self.parts.get_mut(topic, partition) else {
            return;
        };
        let Some((_, n)) = queue.front_mut() else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            queue.pop_front();
        }
        self.count -= 1;
    }

    /// Records sent and not yet reported.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// How long the oldest record in flight has waited at `now`.
    pub fn oldest(&self, now: Instant) -> Option<Duration> {
        self.parts
            .values()
            .filter_map(|q| q.front().map(|(at, _)| *at))
            .min()
            .map(|at| now.saturating_duration_since(at))
    }

    /// Once per stall: the oldest record has waited `limit` or longer; then, once it ends,
    /// that it ended.
    pub fn check(&mut self, now: Instant, limit: Duration) -> Option<Stall> {
        let waited = self.oldest(now).filter(|w| *w >= limit);
        match (waited, self.warned) {
            (Some(waited), None) => {
                self.warned = Some(now - waited);
                Some(Stall::Began {
                    records: self.count,
                    waited,
                })
            }
            (None, Some(since)) => {
                self.warned = None;
                Some(Stall::Ended {
                    waited: now.saturating_duration_since(since),
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn issue_22_counts_and_ages_per_partition_in_send_order() {
        let t0 = Instant::now();
        let mut f = InFlight::new(t0);
        assert_eq!((f.count(), f.oldest(t0)), (0, None));
        f.sent("b", 0);
        f.sent("b", 0);
        f.tick(t0 + S);
        f.sent("b", 1);
        f.sent("c", 0);
        assert_eq!(f.count(), 4);
        assert_eq!(f.oldest(t0 + 3 * S), Some(3 * S));
        // Partition 1 acknowledges; partition 0 still waits since t0.
        f.reported("b", 1);
        assert_eq!(f.oldest(t0 + 3 * S), Some(3 * S));
        f.reported("b", 0);
        f.reported("b", 0);
        assert_eq!((f.count(), f.oldest(t0 + 3 * S)), (1, Some(2 * S)));
        f.reported("c", 0);
        assert_eq!((f.count(), f.oldest(t0 + 3 * S)), (0, None));
        // A report for a record it never saw sent changes nothing.
        f.reported("c", 0);
        f.reported("x", 9);
        assert_eq!(f.count(), 0);
        // Nor does a record without a partition count: no report could be matched with it.
        f.sent("b", -1);
        f.reported("b", -1);
        assert_eq!((f.count(), f.oldest(t0 + 3 * S)), (0, None));
    }

    #[test]
    fn issue_22_a_stall_is_told_once_when_it_begins_and_once_when_it_ends() {
        let t0 = Instant::now();
        let mut f = InFlight::new(t0);
        for _ in 0..100 {
            f.sent("b", 0);
        }
        assert_eq!(f.check(t0 + 4 * S, 5 * S), None);
        assert_eq!(
            f.check(t0 + 5 * S, 5 * S),
            Some(Stall::Began {
                records: 100,
                waited: 5 * S
            })
        );
        assert_eq!(f.check(t0 + 6 * S, 5 * S), None, "once per stall");
        for _ in 0..100 {
            f.reported("b", 0);
        }
        assert_eq!(
            f.check(t0 + 7 * S, 5 * S),
            Some(Stall::Ended { waited: 7 * S })
        );
        assert_eq!(f.check(t0 + 8 * S, 5 * S), None);
        // A later stall is told again.
        f.tick(t0 + 8 * S);
        f.sent("b", 0);
        assert!(matches!(
            f.check(t0 + 14 * S, 5 * S),
            Some(Stall::Began { records: 1, .. })
        ));
    }
}
