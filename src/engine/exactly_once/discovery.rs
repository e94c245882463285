//! Following the source's topics while copying exactly-once (`--refresh-topics`): when the
//! topics change, the open transaction is committed, the owned partitions are set anew
//! (this shard's share of the new routes) and every partition is rewound to what the target
//! holds, exactly as at start. Partitions of a deleted topic keep their counts for the
//! summary; a topic of that name found again is a new one, copied from its beginning.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use super::resume::Reread;
use super::{ExactlyOnce, Part};
use crate::report::{Copied, PartitionEnd};
use crate::topics;

impl ExactlyOnce {
    /// Looks at the source's topics again. True when the source error just seen is
    /// explained by a deleted topic.
    pub(super) fn refresh_topics(&mut self) -> bool {
        let looked = self
            .followed
            .look(&self.opts, &self.counters, &self.producer);
        let found = match looked {
            Ok(Some(found)) => found,
            Ok(None) => return self.followed.echo(),
            Err(e) => {
                // The refusal is about another topic: what was copied is committed first.
                if self.txn.open {
                    self.commit_txn();
                }
                self.failure.fail_with(e);
                return false;
            }
        };
        // The rewind below starts from what the target holds: commit what was sent first.
        if self.txn.open {
            self.commit_txn();
        }
        if self.failure.is_set() {
            return false;
        }
        let shard = self.opts.shard.unwrap_or_default();
        let owned: BTreeSet<(String, i32)> = topics::owned(&shard, &found.routes)
            .unwrap_or_default()
            .into_iter()
            .map(|(r, p)| (r.source.clone(), p))
            .collect();
        let gone: Vec<(String, i32)> = self
            .parts
            .keys()
            .filter(|k| !owned.contains(*k))
            .cloned()
            .collect();
        let deleted = !gone.is_empty();
        for key in gone {
            if !found.routes.iter().any(|r| r.source == key.0) {
                self.deleted.insert(key.0.clone());
            }
            if let Some(o) = self.parts.remove(&key) {
                let end = PartitionEnd {
                    committed: o.committed.map(|n| n.get()),
                    copied: o.copied,
                    ..PartitionEnd::default()
                };
                self.released.insert(key, end);
            }
        }
        for r in &found.routes {
            for p in 0..r.partitions {
                let key = (r.source.clone(), p);
                if owned.contains(&key) {
                    self.parts.entry(key).or_insert_with(|| Part {
                        target: r.target.clone(),
                        committed: None,
                        sent: None,
                        copied: Copied::default(),
                        pending: Copied::default(),
                        fresh: self.deleted.contains(&r.source),
                    });
                }
            }
        }
        let explained = self
            .followed
            .adopt(found, deleted, &self.producer, self.opts.timeout);
        self.counters
            .assigned
            .store(self.parts.len() as u64, Ordering::Relaxed);
        if let Err(e) = self.rewind(Reread::Unknown) {
            self.failure.fail_with(e);
            return false;
        }
        explained
    }
}
