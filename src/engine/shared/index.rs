//! The positions index entries both engines write to the target (see [`crate::trail`]):
//! which partitions moved since the index was last told, and the record for one entry.

use rdkafka::producer::BaseRecord;

use crate::trail::{self, Entry, Subject, INDEX_TOPIC};

/// The delivery opaque of a record that copies no source record (a positions index entry):
/// the engines' delivery callbacks pass over it. Copies carry their source offset.
pub(in crate::engine) const NOT_A_COPY: usize = usize::MAX;

/// True when the index should be told `entry`, having last been told `told`: the entry
/// changed, and it says something. An entry says something once the writer has a trail
/// (where its records sit in the target partition, which narrows a lookup even before the
/// copy committed a position) or a committed position. Exactly-once used to skip every entry
/// without a committed position: the same there, where a trail comes only with a position
/// sent in the open transaction, but not the rule (at-least-once acknowledges records, and so
/// has a trail, before its first commit).
pub(in crate::engine) fn moved(entry: &Entry, told: Option<&Entry>) -> bool {
    told != Some(entry) && (entry.trail.is_some() || entry.committed >= 0)
}

/// One entry's key and value ([`trail::key`], [`trail::value`]).
pub(in crate::engine) fn key_value(subject: &Subject<'_>, entry: &Entry) -> (String, String) {
    (trail::key(subject, entry), trail::value(entry))
}

/// The record that carries one entry: the index topic's only partition, [`NOT_A_COPY`].
pub(in crate::engine) fn record<'a>(
    key: &'a str,
    value: &'a str,
) -> BaseRecord<'a, str, str, usize> {
    BaseRecord::with_opaque_to(INDEX_TOPIC, NOT_A_COPY)
        .partition(0)
        .key(key)
        .payload(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::Trail;

    #[test]
    fn issue_21_an_entry_is_told_once_it_says_something_new() {
        let trail = Some(Trail { t0: 5, t: 9, m: 40 });
        let nothing = Entry {
            trail: None,
            committed: -1,
        };
        let trail_only = Entry {
            trail,
            committed: -1,
        };
        let committed_only = Entry {
            trail: None,
            committed: 7,
        };
        assert!(
            !moved(&nothing, None),
            "an entry without trail or position says nothing"
        );
        // At-least-once acknowledges records before its first commit: their trail is told.
        assert!(moved(&trail_only, None));
        assert!(moved(&committed_only, None));
        assert!(!moved(&trail_only, Some(&trail_only)), "told already");
        assert!(moved(&committed_only, Some(&trail_only)));
    }
}
