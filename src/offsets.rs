//! The commit decision, kept pure so it can be tested to death.
//!
//! A [`PartitionTracker`] follows one source partition: every record sent to the target is
//! registered with [`PartitionTracker::sent`], and its delivery report with `acked` or
//! `failed`. [`PartitionTracker::verified`] is the end of the contiguous acknowledged prefix:
//! the only position that may ever be committed under at-least-once.

use std::collections::VecDeque;

/// A position to commit: the offset of the next record to read (Kafka's convention).
///
/// `commit(tpl)` and `store_offsets(tpl)` take this value as is, while `commit_message` adds
/// one; keeping every committed position in this type avoids the off-by-one trap.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NextOffset(i64);

impl NextOffset {
    /// The position just after the record at `offset`.
    pub fn after(offset: i64) -> Self {
        NextOffset(offset + 1)
    }

    /// A position as Kafka reports it (e.g. a committed offset).
    pub fn at(position: i64) -> Self {
        NextOffset(position)
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    InFlight,
    Acked,
    Failed,
}

/// A delivery failure: the first one is kept, and nothing past it is ever verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub offset: i64,
    pub error: String,
}

/// A report for an offset the tracker does not hold in flight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownOffset(pub i64);

/// Follows the records of one source partition from send to acknowledgement.
#[derive(Debug, Default)]
pub struct PartitionTracker {
    /// Sent and not yet part of the verified prefix, in increasing offset order.
    pending: VecDeque<(i64, State)>,
    /// End of the contiguous acknowledged prefix.
    verified: Option<NextOffset>,
    failure: Option<Failure>,
    committed: Option<NextOffset>,
    last_sent: Option<i64>,
}

impl PartitionTracker {
    /// Registers a record handed to the producer. Offsets must increase; a repeated or
    /// lower offset is refused, since it would make the prefix ambiguous.
    pub fn sent(&mut self, offset: i64) -> Result<(), UnknownOffset> {
        if self.last_sent.is_some_and(|last| offset <= last) {
            return Err(UnknownOffset(offset));
        }
        self.last_sent = Some(offset);
        self.pending.push_back((offset, State::InFlight));
        Ok(())
    }

    /// Records a successful delivery of the record at `offset`.
    pub fn acked(&mut self, offset: i64) -> Result<(), UnknownOffset> {
        self.set(offset, State::Acked)?;
        self.advance();
        Ok(())
    }

    /// The source's reading reached `end` with no record past the last one sent: the offsets
    /// between hold none (transaction markers, aborted transactions' records), so once every
    /// record sent is acknowledged the verified prefix reaches `end`. A position left on the
    /// last record read as a lag of 1 for ever behind a transaction marker (issue 41).
    pub fn passed(&mut self, end: NextOffset) {
        let last = end.get() - 1;
        if self.last_sent.is_some_and(|l| l >= last) || self.verified.is_some_and(|v| v >= end) {
            return;
        }
        self.last_sent = Some(last);
        self.pending.push_back((last, State::Acked));
        self.advance();
    }

    /// Moves the verified prefix over acknowledged records at the front; a failure at the
    /// front blocks it for good: that is the sticky rule.
    fn advance(&mut self) {
        while let Some(&(off, State::Acked)) = self.pending.front() {
            self.verified = Some(NextOffset::after(off));
            self.pending.pop_front();
        }
    }

    /// Records a failed delivery. Only the first failure is remembered.
    pub fn failed(&mut self, offset: i64, error: impl Into<String>) -> Result<(), UnknownOffset> {
        self.set(offset, State::Failed)?;
        if self.failure.as_ref().is_none_or(|f| offset < f.offset) {
            self.failure = Some(Failure {
                offset,
                error: error.into(),
            });
        }
        Ok(())
    }

    fn set(&mut self, offset: i64, state: State) -> Result<(), UnknownOffset> {
        // Reports come in send order per partition (idempotent producer): the front first.
        let idx = match self.pending.front() {
            Some(&(off, _)) if off == offset => 0,
            _ => self
                .pending
                .binary_search_by_key(&offset, |&(off, _)| off)
                .map_err(|_| UnknownOffset(offset))?,
        };
        let entry = &mut self.pending[idx].1;
        // A failure is never overwritten by a later report for the same record.
        if *entry != State::Failed {
            *entry = state;
        }
        Ok(())
    }

    /// End of the contiguous acknowledged prefix, if any record was acknowledged.
    pub fn verified(&self) -> Option<NextOffset> {
        self.verified
    }

    /// The verified position if it is ahead of what was last committed.
    pub fn to_commit(&self) -> Option<NextOffset> {
        match (self.verified, self.committed) {
            (Some(v), Some(c)) if v <= c => None,
            (v, _) => v,
        }
    }

    pub fn mark_committed(&mut self, pos: NextOffset) {
        if self.committed.is_none_or(|c| pos > c) {
            self.committed = Some(pos);
        }
    }

    pub fn committed(&self) -> Option<NextOffset> {
        self.committed
    }

    #[cfg(test)]
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Records sent whose fate is not settled in the verified prefix (in flight, or stuck
    /// behind an unacknowledged or failed record).
    #[cfg(test)]
    pub fn unsettled(&self) -> usize {
        self.pending.len()
    }

    /// Records still waiting for a delivery report.
    #[cfg(test)]
    pub fn in_flight(&self) -> usize {
        self.pending
            .iter()
            .filter(|(_, s)| *s == State::InFlight)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_41_the_prefix_passes_a_transaction_marker_once_every_record_is_acked() {
        let mut t = PartitionTracker::default();
        for o in 10..13 {
            t.sent(o).unwrap();
        }
        t.acked(10).unwrap();
        // Read to 14: offset 13 is a marker. Not verified before 11 and 12 are acknowledged.
        t.passed(NextOffset::at(14));
        assert_eq!(t.verified(), Some(NextOffset::at(11)));
        t.acked(12).unwrap();
        assert_eq!(t.verified(), Some(NextOffset::at(11)));
        t.acked(11).unwrap();
        assert_eq!(t.verified(), Some(NextOffset::at(14)));
        // The next record comes after the end passed; a record at or before it is refused.
        assert!(t.sent(13).is_err());
        t.sent(14).unwrap();
        t.passed(NextOffset::at(14));
        assert_eq!(t.verified(), Some(NextOffset::at(14)));
    }

    #[test]
    fn issue_41_a_failure_keeps_the_prefix_short_of_a_passed_end() {
        let mut t = PartitionTracker::default();
        t.sent(5).unwrap();
        t.failed(5, "refused").unwrap();
        t.passed(NextOffset::at(8));
        assert_eq!(t.verified(), None);
        // Nothing read yet and an end already verified: nothing moves back.
        let mut fresh = PartitionTracker::default();
        fresh.passed(NextOffset::at(3));
        assert_eq!(fresh.verified(), Some(NextOffset::at(3)));
        fresh.passed(NextOffset::at(2));
        assert_eq!(fresh.verified(), Some(NextOffset::at(3)));
    }

    #[test]
    fn next_offset_is_one_past_the_record() {
        assert_eq!(NextOffset::after(41).get(), 42);
        assert_eq!(NextOffset::at(42), NextOffset::after(41));
    }

    #[test]
    fn empty_tracker_commits_nothing() {
        let t = PartitionTracker::default();
        assert_eq!(t.verified(), None);
        assert_eq!(t.to_commit(), None);
        assert_eq!(t.unsettled(), 0);
        assert_eq!(t.in_flight(), 0);
    }

    #[test]
    fn sent_but_unacked_commits_nothing() {
        let mut t = PartitionTracker::default();
        for off in 0..5 {
            t.sent(off).unwrap();
        }
        assert_eq!(t.to_commit(), None);
        assert_eq!(t.in_flight(), 5);
    }

    #[test]
    fn in_order_acks_advance_the_prefix() {
        let mut t = PartitionTracker::default();
        for off in 10..15 {
            t.sent(off).unwrap();
        }
        t.acked(10).unwrap();
        assert_eq!(t.verified(), Some(NextOffset::at(11)));
        t.acked(11).unwrap();
        t.acked(12).unwrap();
        assert_eq!(t.verified(), Some(NextOffset::at(13)));
        assert_eq!(t.unsettled(), 2);
    }

    #[test]
    fn out_of_order_acks_wait_for_the_gap() {
        let mut t = PartitionTracker::default();
        for off in 0..4 {
            t.sent(off).unwrap();
        }
        t.acked(2).unwrap();
        t.acked(3).unwrap();
        assert_eq!(t.verified(), None, "offset 0 and 1 are still in flight");
        t.acked(1).unwrap();
        assert_eq!(t.verified(), None);
        t.acked(0).unwrap();
        assert_eq!(t.verified(), Some(NextOffset::at(4)));
        assert_eq!(t.unsettled(), 0);
    }

    #[test]
    fn sparse_offsets_commit_after_the_last_acked_record() {
        // Compacted topics and transaction markers leave holes in source offsets.
        let mut t = PartitionTracker::default();
        for off in [3, 7, 8, 20] {
            t.sent(off).unwrap();
        }
        for off in [3, 7, 8, 20] {
            t.acked(off).unwrap();
        }
        assert_eq!(t.verified(), Some(NextOffset::at(21)));
    }

    #[test]
    fn failure_in_the_middle_is_sticky() {
        let mut t = PartitionTracker::default();
        for off in 0..6 {
            t.sent(off).unwrap();
        }
        t.acked(0).unwrap();
        t.acked(1).unwrap();
        t.failed(2, "broker said no").unwrap();
        t.acked(3).unwrap();
        t.acked(4).unwrap();
        t.acked(5).unwrap();
        assert_eq!(
            t.verified(),
            Some(NextOffset::at(2)),
            "nothing past the failure"
        );
        // A later success for the failed record itself does not lift the failure.
        t.acked(2).unwrap();
        assert_eq!(t.verified(), Some(NextOffset::at(2)));
        // Records sent after the failure never get past it either.
        t.sent(6).unwrap();
        t.acked(6).unwrap();
        assert_eq!(t.verified(), Some(NextOffset::at(2)));
        assert_eq!(
            t.failure(),
            Some(&Failure {
                offset: 2,
                error: "broker said no".into()
            })
        );
    }

    #[test]
    fn the_first_failure_by_offset_is_reported() {
        let mut t = PartitionTracker::default();
        for off in 0..3 {
            t.sent(off).unwrap();
        }
        t.failed(2, "late").unwrap();
        t.failed(1, "early").unwrap();
        assert_eq!(t.failure().map(|f| f.offset), Some(1));
        assert_eq!(t.verified(), None);
    }

    #[test]
    fn failure_at_the_first_record_commits_nothing() {
        let mut t = PartitionTracker::default();
        t.sent(0).unwrap();
        t.sent(1).unwrap();
        t.acked(1).unwrap();
        t.failed(0, "x").unwrap();
        assert_eq!(t.to_commit(), None);
    }

    #[test]
    fn to_commit_only_when_ahead_of_the_last_commit() {
        let mut t = PartitionTracker::default();
        t.sent(0).unwrap();
        t.acked(0).unwrap();
        assert_eq!(t.to_commit(), Some(NextOffset::at(1)));
        t.mark_committed(NextOffset::at(1));
        assert_eq!(t.to_commit(), None);
        t.sent(1).unwrap();
        t.acked(1).unwrap();
        assert_eq!(t.to_commit(), Some(NextOffset::at(2)));
        // An older commit confirmation never moves the committed mark backwards.
        t.mark_committed(NextOffset::at(2));
        t.mark_committed(NextOffset::at(1));
        assert_eq!(t.committed(), Some(NextOffset::at(2)));
    }

    #[test]
    fn unknown_and_repeated_offsets_are_refused() {
        let mut t = PartitionTracker::default();
        t.sent(5).unwrap();
        assert_eq!(t.sent(5), Err(UnknownOffset(5)));
        assert_eq!(t.sent(4), Err(UnknownOffset(4)));
        assert_eq!(t.acked(6), Err(UnknownOffset(6)));
        t.acked(5).unwrap();
        // Already part of the verified prefix: no longer pending.
        assert_eq!(t.acked(5), Err(UnknownOffset(5)));
    }

    #[test]
    fn many_records_interleaved() {
        // Acks arrive in a shuffled order; the prefix must equal the longest fully acked run.
        let mut t = PartitionTracker::default();
        let n = 1000i64;
        for off in 0..n {
            t.sent(off).unwrap();
        }
        let mut order: Vec<i64> = (0..n).collect();
        // Deterministic shuffle (LCG) so the test is repeatable.
        let mut x: u64 = 12345;
        for i in (1..order.len()).rev() {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            order.swap(i, (x >> 33) as usize % (i + 1));
        }
        let mut acked = vec![false; n as usize];
        for off in order {
            t.acked(off).unwrap();
            acked[off as usize] = true;
            let prefix = acked.iter().take_while(|a| **a).count() as i64;
            let expect = (prefix > 0).then(|| NextOffset::at(prefix));
            assert_eq!(t.verified(), expect);
        }
    }
}
