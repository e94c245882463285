//! The origin header every exactly-once record carries, `kreplicate.origin` =
//! `<source topic>/<partition>/<offset>`, and the resume position it gives (pure).

use std::fmt::Write as _;

use crate::offsets::NextOffset;

/// The header that records where a copied record came from.
pub const ORIGIN_HEADER: &str = "kreplicate.origin";

/// `topic/partition/offset`.
#[cfg(test)]
pub fn origin(topic: &str, partition: i32, offset: i64) -> String {
    let mut s = String::new();
    write_origin(&mut s, topic, partition, offset);
    s
}

/// [`origin`] into a reused buffer.
pub(crate) fn write_origin(buf: &mut String, topic: &str, partition: i32, offset: i64) {
    buf.clear();
    let _ = write!(buf, "{topic}/{partition}/{offset}");
}

/// The origin of a copied record, if the header parses.
pub fn parse_origin(value: &[u8]) -> Option<(&str, i32, i64)> {
    let s = std::str::from_utf8(value).ok()?;
    let mut it = s.rsplitn(3, '/');
    let offset = it.next()?.parse().ok()?;
    let partition = it.next()?.parse().ok()?;
    Some((it.next()?, partition, offset))
}

/// Where to resume a source partition, given the origin headers of the target records read
/// (in any order; records without one, or from another source partition, are foreign and
/// skipped): just after the newest origin offset. `None` when no record came from it.
pub fn resume_position<'a>(
    origins: impl IntoIterator<Item = Option<&'a [u8]>>,
    topic: &str,
    partition: i32,
) -> Option<NextOffset> {
    origins
        .into_iter()
        .flatten()
        .filter_map(parse_origin)
        .filter(|&(t, p, _)| t == topic && p == partition)
        .map(|(_, _, offset)| offset)
        .max()
        .map(NextOffset::after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(s: &str) -> Option<&[u8]> {
        Some(s.as_bytes())
    }

    #[test]
    fn origins_round_trip() {
        let v = origin("orders.eu/v2", 7, 12345);
        assert_eq!(parse_origin(v.as_bytes()), Some(("orders.eu/v2", 7, 12345)));
        assert_eq!(parse_origin(b"garbage"), None);
        assert_eq!(parse_origin(b"t/x/1"), None);
    }

    #[test]
    fn resume_on_an_empty_target_is_unknown() {
        assert_eq!(resume_position(Vec::<Option<&[u8]>>::new(), "t", 0), None);
    }

    #[test]
    fn resume_after_the_newest_origin() {
        let recs = vec![o("t/0/10"), o("t/0/11"), o("t/0/12")];
        assert_eq!(resume_position(recs, "t", 0), Some(NextOffset::at(13)));
    }

    #[test]
    fn foreign_records_are_skipped() {
        // Records without an origin, from another partition or topic, or unparsable.
        let recs = vec![
            o("t/0/4"),
            None,
            o("t/1/99"),
            o("u/0/50"),
            o("nonsense"),
            o("t/0/5"),
            None,
        ];
        assert_eq!(resume_position(recs, "t", 0), Some(NextOffset::at(6)));
        assert_eq!(resume_position(vec![None, o("u/0/1")], "t", 0), None);
    }

    #[test]
    fn partial_batches_and_sparse_offsets() {
        // A tail window that starts mid-batch, and source offsets with holes (compaction,
        // transaction markers): the newest origin decides.
        let recs = vec![o("t/2/1001"), o("t/2/1003"), o("t/2/1010")];
        assert_eq!(resume_position(recs, "t", 2), Some(NextOffset::at(1011)));
    }
}
