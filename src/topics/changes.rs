//! What a run changed on the target (`--create-topics`), for stderr and the JSON summary.

use std::collections::BTreeMap;

/// What `--create-topics` did to the target: the topics it created and the partitions it
/// added, for one line each on stderr and the JSON summary (`created_topics`,
/// `added_partitions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetChanges {
    pub created: Vec<CreatedTopic>,
    pub grown: Vec<AddedPartitions>,
}

/// A target topic this run created, with the configs it set (sorted by key).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CreatedTopic {
    pub topic: String,
    pub partitions: i32,
    pub configs: BTreeMap<String, String>,
}

/// Partitions this run added to an existing target topic.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AddedPartitions {
    pub topic: String,
    /// How many were added.
    pub added: i32,
    /// The topic's partition count now.
    pub partitions: i32,
}

impl TargetChanges {
    pub fn extend(&mut self, other: TargetChanges) {
        self.created.extend(other.created);
        self.grown.extend(other.grown);
    }

    /// One line per change: `created topic 'events' (2 partitions, retention.ms=7200000)`,
    /// `added 2 partitions to 'events' (now 4)`.
    pub fn lines(&self) -> Vec<String> {
        let plural = |n: i32| if n == 1 { "" } else { "s" };
        let created = self.created.iter().map(|c| {
            let configs: String = c
                .configs
                .iter()
                .map(|(k, v)| format!(", {k}={v}"))
                .collect();
            format!(
                "created topic '{}' ({} partition{}{configs})",
                c.topic,
                c.partitions,
                plural(c.partitions)
            )
        });
        let grown = self.grown.iter().map(|g| {
            format!(
                "added {} partition{} to '{}' (now {})",
                g.added,
                plural(g.added),
                g.topic,
                g.partitions
            )
        });
        created.chain(grown).collect()
    }
}
