//! What one source partition contributed to a run, as the engines publish it to the
//! counters, the summary and the metrics.

/// What one source partition contributed to a run's copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copied {
    pub records: u64,
    /// Key + value bytes.
    pub bytes: u64,
    pub first: Option<i64>,
    pub last: Option<i64>,
    /// Time stamp (Unix milliseconds) of the record at `last`, when it had one.
    pub last_time: Option<i64>,
}

impl Copied {
    /// One more record, at source `offset`, of `bytes` key + value bytes and time stamp `time`.
    pub fn add(&mut self, offset: i64, bytes: u64, time: Option<i64>) {
        self.records += 1;
        self.bytes += bytes;
        self.first = Some(self.first.map_or(offset, |f| f.min(offset)));
        if self.last.is_none_or(|l| offset >= l) {
            self.last = Some(offset);
            self.last_time = time;
        }
    }

    pub fn merge(&mut self, other: &Copied) {
        self.records += other.records;
        self.bytes += other.bytes;
        self.first = match (self.first, other.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if other.last.is_some() && (self.last.is_none() || other.last >= self.last) {
            self.last = other.last;
            self.last_time = other.last_time;
        }
    }
}

/// A source partition as an engine hands it to the summary and the metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct PartitionEnd {
    pub committed: Option<i64>,
    /// The next source offset the target does not hold yet, as far as the run knows (the
    /// acknowledged prefix, or the committed transactions).
    pub position: Option<i64>,
    pub copied: Copied,
    /// High watermark of the last fetch, while the partition was still assigned.
    pub end_offset: Option<i64>,
    /// Given up in a rebalance and not held now: the summary counts it, the metrics drop its
    /// gauges (another process serves them now).
    pub released: bool,
    /// How long reading waited behind a transaction open on the source, if it did.
    pub behind_transaction: Option<std::time::Duration>,
}

impl PartitionEnd {
    /// Records between what the target holds and the partition's end, when both are known.
    pub fn lag(&self) -> Option<i64> {
        let pos = self.position.or(self.committed)?;
        Some((self.end_offset? - pos).max(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copied_counts_and_spans_offsets_in_any_order() {
        let mut a = Copied::default();
        for o in [5, 3, 9] {
            a.add(o, 10, Some(o * 100));
        }
        assert_eq!((a.records, a.first, a.last), (3, Some(3), Some(9)));
        assert_eq!((a.bytes, a.last_time), (30, Some(900)));
        let mut b = Copied::default();
        b.add(12, 1, Some(5));
        a.merge(&b);
        assert_eq!((a.records, a.first, a.last), (4, Some(3), Some(12)));
        assert_eq!((a.bytes, a.last_time), (31, Some(5)));
        let mut older = Copied::default();
        older.add(1, 1, Some(7));
        a.merge(&older);
        assert_eq!((a.last, a.last_time), (Some(12), Some(5)));
        let mut empty = Copied::default();
        empty.merge(&Copied::default());
        assert_eq!(empty, Copied::default());
    }

    #[test]
    fn lag_counts_from_what_the_target_holds() {
        let mut p = PartitionEnd {
            committed: Some(4),
            end_offset: Some(10),
            ..PartitionEnd::default()
        };
        assert_eq!(p.lag(), Some(6));
        p.position = Some(8);
        assert_eq!(p.lag(), Some(2));
        p.end_offset = None;
        assert_eq!(p.lag(), None);
    }
}
