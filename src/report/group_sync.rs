//! What `--sync-groups` did in a run (issue 35, item 10): the summary's line, the JSON's
//! `group_sync` and `kreplicate_group_sync_last_success_timestamp_seconds`.

use std::collections::BTreeSet;
use std::time::SystemTime;

use crate::table::count;

/// The sync's record, updated after every round.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct GroupSync {
    /// Translation rounds run: one every `--sync-groups-interval`, one at the end.
    pub rounds: u64,
    /// Groups a round of this run translated: committed on the target, or already there.
    pub synced: BTreeSet<String>,
    /// Groups the last round refused, and why.
    pub refused: Vec<RefusedGroup>,
    /// Of those, groups whose positions are ahead of the copy: the sync waits for the copy
    /// to reach them (they need no one to act).
    pub waiting: Vec<String>,
    /// The last round's failure as a whole (a cluster that did not answer), if it failed.
    pub error: Option<String>,
    /// When a round last translated every selected group (RFC 3339, UTC).
    pub last_success: Option<String>,
    /// The same in Unix milliseconds, for the metric.
    #[serde(skip)]
    pub last_success_ms: u64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RefusedGroup {
    pub group: String,
    pub reason: String,
}

/// The part of a refusal that says the group waits for the copy (`groups::table`'s words).
const AHEAD: &str = "ahead of the copy";

impl GroupSync {
    /// One round's outcome: per group, `None` when translated, else why it was refused.
    pub fn round(&mut self, outcome: Result<Vec<(String, Option<String>)>, String>) {
        self.rounds += 1;
        self.refused.clear();
        self.waiting.clear();
        self.error = None;
        let groups = match outcome {
            Ok(groups) => groups,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        for (group, refused) in groups {
            match refused {
                None => {
                    self.synced.insert(group);
                }
                Some(reason) => {
                    if reason.contains(AHEAD) {
                        self.waiting.push(group.clone());
                    }
                    self.refused.push(RefusedGroup { group, reason });
                }
            }
        }
        if self.refused.is_empty() {
            let now = SystemTime::now();
            self.last_success = Some(humantime::format_rfc3339_millis(now).to_string());
            self.last_success_ms = now
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
        }
    }

    /// The summary's line.
    pub fn line(&self) -> String {
        let names = |v: &mut dyn Iterator<Item = &String>| {
            v.map(|g| format!("'{g}'")).collect::<Vec<_>>().join(", ")
        };
        let mut line = format!(
            "--sync-groups: {}, synced {}",
            count(self.rounds, "round"),
            count(self.synced.len() as u64, "group")
        );
        if !self.synced.is_empty() {
            line += &format!(" ({})", names(&mut self.synced.iter()));
        }
        if !self.refused.is_empty() {
            let why: Vec<String> = self
                .refused
                .iter()
                .map(|r| format!("'{}': {}", r.group, r.reason))
                .collect();
            line += &format!("; refused {}: {}", self.refused.len(), why.join("; "));
        }
        if let Some(e) = &self.error {
            line += &format!("; the last round failed: {e}");
        }
        if self.last_success.is_none() {
            line += "; no round translated every group";
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_35_a_round_records_synced_refused_and_waiting_groups() {
        let mut s = GroupSync::default();
        s.round(Ok(vec![
            ("a".into(), None),
            (
                "b".into(),
                Some("t[0] is ahead of the copy: copy first".into()),
            ),
        ]));
        assert_eq!(s.synced, BTreeSet::from(["a".to_string()]));
        assert_eq!(s.waiting, ["b"]);
        assert_eq!(s.last_success, None);
        assert_eq!(
            s.line(),
            "--sync-groups: 1 round, synced 1 group ('a'); refused 1: 'b': t[0] is ahead of the copy: copy first; no round translated every group"
        );
        s.round(Ok(vec![("a".into(), None), ("b".into(), None)]));
        assert!(s.refused.is_empty() && s.waiting.is_empty());
        assert!(s.last_success.is_some() && s.last_success_ms > 0);
        assert_eq!(
            s.line(),
            "--sync-groups: 2 rounds, synced 2 groups ('a', 'b')"
        );
        s.round(Err("cannot reach b".into()));
        assert_eq!(s.error.as_deref(), Some("cannot reach b"));
        assert!(s.last_success.is_some(), "kept from the round before");
    }
}
