//! The origin header every copied record carries, and what it gives (pure): the resume
//! position of exactly-once, loop prevention, and group translation.
//!
//! `kreplicate.origin` = `<source cluster>/<source topic>/<partition>/<offset>` since issue 11;
//! exactly-once targets written before hold `<source topic>/<partition>/<offset>`, which still
//! parses (with no cluster). Kafka topic names cannot hold `/`, so the two never mix up; the
//! cluster is split off from the left of the last three fields, so an odd cluster name with a
//! `/` still parses.

use crate::offsets::NextOffset;

/// The header that records where a copied record came from.
pub const ORIGIN_HEADER: &str = "kreplicate.origin";

/// Where a copied record came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin<'a> {
    /// The source cluster's id; `None` in the format written before issue 11.
    pub cluster: Option<&'a str>,
    pub topic: &'a str,
    pub partition: i32,
    pub offset: i64,
}

/// What a run stamps on every record: the source cluster's identity, and the target's, for
/// loop prevention. Built once per run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub source: String,
    pub target: String,
}

impl Stamp {
    /// Writes the origin of one source record into a reused buffer (per record: no
    /// formatting machinery, no allocation once the buffer has grown).
    pub fn write(&self, buf: &mut String, topic: &str, partition: i32, offset: i64) {
        buf.clear();
        buf.push_str(&self.source);
        buf.push('/');
        buf.push_str(topic);
        buf.push('/');
        push_int(buf, i64::from(partition));
        buf.push('/');
        push_int(buf, offset);
    }

    /// True when any of a record's origin header values names the target cluster: the record
    /// was copied from the target, and copying it back would loop.
    pub fn loops<'a>(&self, origins: impl IntoIterator<Item = &'a [u8]>) -> bool {
        // A copy within one cluster (a renamed topic) stamps that cluster on every record: a
        // later copy from there within the cluster is not a loop.
        if self.source == self.target {
            return false;
        }
        origins
            .into_iter()
            .filter_map(parse_origin)
            .any(|o| o.cluster == Some(self.target.as_str()))
    }
}

/// Appends the decimal digits of `n`.
fn push_int(buf: &mut String, n: i64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = n.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if n < 0 {
        buf.push('-');
    }
    for &d in &digits[i..] {
        buf.push(char::from(d));
    }
}

/// The origin of a copied record, if the header parses (either format).
pub fn parse_origin(value: &[u8]) -> Option<Origin<'_>> {
    let s = std::str::from_utf8(value).ok()?;
    let mut it = s.rsplitn(4, '/');
    let offset = it.next()?.parse().ok()?;
    let partition = it.next()?.parse().ok()?;
    let topic = it.next()?;
    let cluster = it.next();
    if topic.is_empty() || cluster.is_some_and(str::is_empty) {
        return None;
    }
    Some(Origin {
        cluster,
        topic,
        partition,
        offset,
    })
}

/// The origin offset of a record if it came from `cluster`'s `topic`/`partition`. Records of
/// the old format (no cluster) count as ours: only exactly-once wrote them, for one source.
pub fn offset_from(value: &[u8], cluster: &str, topic: &str, partition: i32) -> Option<i64> {
    let o = parse_origin(value)?;
    (o.topic == topic && o.partition == partition && o.cluster.is_none_or(|c| c == cluster))
        .then_some(o.offset)
}

/// Where to resume a source partition, given the origin headers of the target records read
/// in target order (records without one, or from another source partition or cluster, are
/// foreign and skipped): just after the origin of the last record of ours, the one this
/// writer committed last. Not after the largest origin: a source topic deleted and
/// recreated (then recovered with `--on-gap earliest`) starts again at offset 0, and the
/// old topic's larger offsets earlier in the target say nothing about the new one (issue 18).
/// `None` when no record came from it.
pub fn resume_position<'a>(
    origins: impl IntoIterator<Item = Option<&'a [u8]>>,
    cluster: &str,
    topic: &str,
    partition: i32,
) -> Option<NextOffset> {
    origins
        .into_iter()
        .flatten()
        .filter_map(|v| offset_from(v, cluster, topic, partition))
        .last()
        .map(NextOffset::after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(s: &str) -> Option<&[u8]> {
        Some(s.as_bytes())
    }

    fn stamp() -> Stamp {
        Stamp {
            source: "A".into(),
            target: "B".into(),
        }
    }

    #[test]
    fn issue_11_new_origins_name_the_cluster_and_round_trip() {
        let mut buf = String::from("left over");
        stamp().write(&mut buf, "orders.eu", 7, 12345);
        assert_eq!(buf, "A/orders.eu/7/12345");
        let want = Origin {
            cluster: Some("A"),
            topic: "orders.eu",
            partition: 7,
            offset: 12345,
        };
        assert_eq!(parse_origin(buf.as_bytes()), Some(want));
        stamp().write(&mut buf, "t", 0, 0);
        assert_eq!(buf, "A/t/0/0");
        stamp().write(&mut buf, "t", i32::MAX, i64::MAX);
        assert_eq!(buf, format!("A/t/{}/{}", i32::MAX, i64::MAX));
        stamp().write(&mut buf, "t", 1, -1001);
        assert_eq!(buf, "A/t/1/-1001");
        // A cluster name holding a slash still parses: the last three fields are fixed.
        let odd = parse_origin(b"x/y/t/0/1").map(|o| (o.cluster, o.topic));
        assert_eq!(odd, Some((Some("x/y"), "t")));
        assert_eq!(parse_origin(b"garbage"), None);
        assert_eq!(parse_origin(b"t/x/1"), None);
        assert_eq!(parse_origin(b"/t/0/1"), None);
        assert_eq!(parse_origin(b"/0/1"), None);
    }

    #[test]
    fn issue_11_the_format_before_issue_11_still_parses() {
        let old = parse_origin(b"orders.eu/7/12345");
        let want = Origin {
            cluster: None,
            topic: "orders.eu",
            partition: 7,
            offset: 12345,
        };
        assert_eq!(old, Some(want));
        assert_eq!(offset_from(b"t/0/5", "A", "t", 0), Some(5));
        assert_eq!(offset_from(b"A/t/0/5", "A", "t", 0), Some(5));
        assert_eq!(offset_from(b"C/t/0/5", "A", "t", 0), None);
        assert_eq!(offset_from(b"A/t/1/5", "A", "t", 0), None);
    }

    #[test]
    fn issue_11_a_record_from_the_target_cluster_loops() {
        let s = stamp();
        assert!(s.loops([b"B/t/0/1".as_slice()]));
        // Any origin of a record copied more than once counts.
        assert!(s.loops([b"C/t/0/1".as_slice(), b"B/t/0/9".as_slice()]));
        assert!(!s.loops([b"A/t/0/1".as_slice()]));
        assert!(!s.loops([b"t/0/1".as_slice(), b"junk".as_slice()]));
        assert!(!s.loops(std::iter::empty()));
        // Within one cluster nothing is a loop: t -> t2 -> t3 all name it.
        let same = Stamp {
            source: "A".into(),
            target: "A".into(),
        };
        assert!(!same.loops([b"A/t/0/1".as_slice()]));
    }

    #[test]
    fn resume_on_an_empty_target_is_unknown() {
        assert_eq!(
            resume_position(Vec::<Option<&[u8]>>::new(), "A", "t", 0),
            None
        );
    }

    #[test]
    fn resume_after_the_newest_origin() {
        let recs = vec![o("A/t/0/10"), o("A/t/0/11"), o("t/0/12")];
        assert_eq!(resume_position(recs, "A", "t", 0), Some(NextOffset::at(13)));
    }

    #[test]
    fn foreign_records_are_skipped() {
        // Records without an origin, from another partition, topic or cluster, or unparsable.
        let recs = vec![
            o("A/t/0/4"),
            None,
            o("A/t/1/99"),
            o("A/u/0/50"),
            o("C/t/0/70"),
            o("nonsense"),
            o("t/0/5"),
            None,
        ];
        assert_eq!(resume_position(recs, "A", "t", 0), Some(NextOffset::at(6)));
        assert_eq!(resume_position(vec![None, o("A/u/0/1")], "A", "t", 0), None);
    }

    #[test]
    fn issue_18_a_recreated_source_topic_resumes_after_the_last_record_not_the_largest() {
        // The old topic's records 0..=5999, then (after it was recreated and --on-gap
        // earliest recovered) the new topic's 0..=1199: the next record to copy is 1200,
        // not 6000 (which would skip the new topic's 1200..=5999).
        let old: Vec<String> = (0..6000).map(|n| format!("A/t/0/{n}")).collect();
        let new: Vec<String> = (0..1200).map(|n| format!("A/t/0/{n}")).collect();
        let tail = old.iter().chain(&new).map(|s| Some(s.as_bytes()));
        assert_eq!(
            resume_position(tail, "A", "t", 0),
            Some(NextOffset::at(1200))
        );
        // A new topic that grew past the old one: just after its own last record too.
        let longer: Vec<String> = (0..9000).map(|n| format!("A/t/0/{n}")).collect();
        let tail = old.iter().chain(&longer).map(|s| Some(s.as_bytes()));
        assert_eq!(
            resume_position(tail, "A", "t", 0),
            Some(NextOffset::at(9000))
        );
        // Foreign records after ours, and the old header format before, change nothing.
        let tail = vec![
            o("t/0/7000"),
            o("A/t/0/3"),
            o("C/t/0/9999"),
            None,
            o("A/t/1/50"),
        ];
        assert_eq!(resume_position(tail, "A", "t", 0), Some(NextOffset::at(4)));
        let tail = vec![o("A/t/0/7000"), o("t/0/3")];
        assert_eq!(resume_position(tail, "A", "t", 0), Some(NextOffset::at(4)));
    }

    #[test]
    fn partial_batches_and_sparse_offsets() {
        // A tail window that starts mid-batch, and source offsets with holes (compaction,
        // transaction markers): the newest origin decides.
        let recs = vec![o("A/t/2/1001"), o("A/t/2/1003"), o("A/t/2/1010")];
        assert_eq!(
            resume_position(recs, "A", "t", 2),
            Some(NextOffset::at(1011))
        );
    }
}
