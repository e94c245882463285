//! The positions index entries both engines write to the target (see [`crate::trail`]):
//! which partitions moved since the index was last told, the record for one entry, and what a
//! refused entry does.

use std::sync::atomic::{AtomicBool, Ordering};

use rdkafka::producer::BaseRecord;

use crate::trail::{self, Entry, Subject, INDEX_TOPIC};

/// Whether the run still writes the positions index, and the one rule both engines apply to
/// an entry the target refused (issue 18): the index never stops the copy; the first refusal
/// is said once, and the run writes no more entries. An entry is refused when its send is, or
/// its delivery for good ([`super::refused_for_good`]: the target would refuse the next ones
/// too), or (exactly-once) when its failure aborted a transaction whose copies were all
/// delivered: the next transaction, without entries, can commit. An entry lost otherwise (a
/// timeout) only widens a later lookup.
#[derive(Debug)]
pub(in crate::engine) struct Writing(AtomicBool);

impl Writing {
    pub(in crate::engine) fn new(on: bool) -> Self {
        Writing(AtomicBool::new(on))
    }

    pub(in crate::engine) fn on(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The target refused an entry (its send, or its delivery).
    pub(in crate::engine) fn refused(&self, error: &str) {
        if self.0.swap(false, Ordering::Relaxed) {
            crate::progress::say(&format!(
                "kreplicate: warning: the target refused an entry of the positions index {INDEX_TOPIC} ({error}): the copy goes on without it, but `kreplicate groups` cannot translate positions of what this run copies"
            ));
        }
    }
}

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
