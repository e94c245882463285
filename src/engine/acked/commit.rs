//! When at-least-once commits: every `--commit-interval` the verified prefixes, with their
//! positions index entries; at the end, after flushing and verifying, every one.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rdkafka::consumer::{CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::Producer;

use super::state::{commit_list, mark_committed};
use super::Acked;
use crate::engine::shared;
use crate::options::Guarantee;
use crate::target;

impl Acked {
    /// Every `--commit-interval`.
    pub(super) fn should_commit(&self) -> bool {
        self.last_commit.elapsed() >= self.opts.commit_interval
    }

    /// The commit of each `--commit-interval`, and the index entries that go with it.
    pub(super) fn commit_interval(&mut self, stop: &AtomicBool) {
        if self.commit(CommitMode::Async).is_none() && self.covered() {
            self.shared.counters.note_covered();
        }
        self.write_index(stop);
        self.last_commit = Instant::now();
    }

    /// Commits verified positions (at-least-once only: `none` relies on auto-commit).
    pub(super) fn commit(&self, mode: CommitMode) -> Option<KafkaError> {
        if self.opts.guarantee == Guarantee::None {
            return None;
        }
        let all = matches!(mode, CommitMode::Sync);
        let tpl = commit_list(&self.shared, None, all);
        if tpl.count() == 0 {
            return None;
        }
        match self.consumer.commit(&tpl, mode) {
            Ok(()) => {
                mark_committed(&self.shared, &tpl);
                None
            }
            Err(e) => Some(e),
        }
    }

    /// True when the committed positions cover every record the target acknowledged (`none`
    /// leaves commits to auto-commit: always).
    pub(super) fn covered(&self) -> bool {
        self.opts.guarantee == Guarantee::None
            || commit_list(&self.shared, None, false).count() == 0
    }

    /// Flush, verify, commit.
    pub(super) fn finish(&self) {
        log::info!("flushing, verifying and committing");
        // Serve reports already in, then wait (bounded) for the rest.
        target::serve_reports(&self.producer);
        let flush_timeout = shared::flush_timeout(&self.opts);
        if let Err(e) = target::flush(&self.producer, flush_timeout) {
            let pending = self.producer.in_flight_count();
            self.shared.lock().failure.fail(format!(
                "target cluster '{}' did not acknowledge {pending} records within {flush_timeout:?} ({e}); their source positions were not committed",
                self.opts.to.name
            ));
        }
        let err = match self.opts.guarantee {
            Guarantee::None => match self.consumer.commit_consumer_state(CommitMode::Sync) {
                Err(KafkaError::ConsumerCommit(RDKafkaErrorCode::NoOffset)) | Ok(()) => None,
                Err(e) => Some(e),
            },
            _ => self.commit(CommitMode::Sync),
        };
        if let Some(e) = err {
            use RDKafkaErrorCode as C;
            let hint = match (e.rdkafka_error_code(), self.opts.shard.is_some()) {
                (Some(C::UnknownMemberId | C::IllegalGeneration | C::RebalanceInProgress), false) => {
                    "; the group no longer counted this process as a member (its session expired or the group rebalanced), so the next run copies the records since the last commit again"
                }
                (Some(C::UnknownMemberId | C::IllegalGeneration), true) => {
                    "; a static shard commits without joining the group, which only works while the group has no members: give --shard runs a group of their own"
                }
                _ => "",
            };
            self.shared.lock().failure.fail(format!(
                "commit to the source group '{}' failed: {e}{hint}",
                self.opts.group
            ));
        }
        // The last entries, so that a lookup right after this run reads none of its tail.
        self.write_index(&AtomicBool::new(false));
        let _ = target::flush(&self.producer, self.opts.timeout);
    }
}
