//! Ending a transaction: commit it (and the source group's positions, for lag), or abort it
//! and rewind to what the target holds, within bounds.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rdkafka::consumer::{CommitMode, Consumer};
use rdkafka::error::{KafkaError, KafkaResult, RDKafkaErrorCode};
use rdkafka::producer::{Producer, PurgeConfig};
use rdkafka::{Offset, TopicPartitionList};

use super::deliveries::{Refusal, MAX_ABORTS_IN_A_ROW};
use super::resume::Reread;
use super::{ExactlyOnce, Txn};
use crate::engine::shared::{self, index, refused_for_good};
use crate::offsets::NextOffset;
use crate::target::{self, NotSent};
use crate::trail::{Entry, Subject, INDEX_TOPIC};

/// How long a commit flushes before it asks again whether the transaction must abort.
const FLUSH_STEP: Duration = Duration::from_millis(500);

impl ExactlyOnce {
    /// Commits the open transaction; on success, also commits positions to the source group
    /// (for lag monitoring). Abortable errors abort and rewind; others end the run. True when
    /// the transaction was committed.
    pub(super) fn commit_txn(&mut self) -> bool {
        match self.commit_in_steps(shared::flush_timeout(&self.opts)) {
            Ok(()) => {
                log::debug!("committed a transaction of {} records", self.txn.records);
                self.counters
                    .records
                    .fetch_add(self.txn.records, Ordering::Relaxed);
                self.counters
                    .bytes
                    .fetch_add(self.txn.bytes, Ordering::Relaxed);
                self.txn = Txn::default();
                self.aborts_in_a_row = 0;
                self.counters
                    .transactions_committed
                    .fetch_add(1, Ordering::Relaxed);
                self.counters.note_commit();
                // Every record sent is committed on the target.
                self.counters.note_success();
                let mut tpl = TopicPartitionList::new();
                for ((t, p), o) in self.parts.iter_mut() {
                    let pending = std::mem::take(&mut o.pending);
                    o.copied.merge(&pending);
                    if let Some(sent) = o.sent.take() {
                        o.committed = Some(sent);
                        let _ = tpl.add_partition_offset(t, *p, Offset::Offset(sent.get()));
                    }
                }
                self.publish_committed();
                if tpl.count() > 0 {
                    // Lag monitoring only: a failed commit here loses nothing.
                    let _ = self.consumer.commit(&tpl, CommitMode::Async);
                }
                true
            }
            Err(KafkaError::Transaction(e)) if e.txn_requires_abort() => {
                // Every copy was delivered and the index entries went last: a refusal for
                // good now (e.g. adding the index partition to the transaction was not
                // authorised) is the index's, which must never stop the copy (issue 18).
                if self.txn.entries && refused_for_good(e.code()) {
                    self.drop_index(&e.to_string());
                }
                self.abort_and_rewind(&KafkaError::Transaction(e), None);
                false
            }
            Err(e) => {
                self.failure.fail(commit_failed(&self.transactional_id, &e));
                // Its end was asked for: not to be aborted on the way out.
                self.txn = Txn::default();
                false
            }
        }
    }

    /// `commit_transaction` within `timeout`, flushing first in steps. A transaction that must
    /// abort no longer sends its queued records, and rust-rdkafka's commit flushes before asking
    /// librdkafka: one long flush would wait the whole timeout for records that never go. So
    /// between steps, ask librdkafka whether the transaction must abort.
    fn commit_in_steps(&mut self, timeout: Duration) -> KafkaResult<()> {
        let deadline = Instant::now() + timeout;
        let mut indexed = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match target::flush(&self.producer, left.min(FLUSH_STEP)) {
                // Every copy delivered: their target offsets are known. The index entries go
                // in the same transaction, then are flushed too.
                Ok(()) if !indexed => {
                    indexed = true;
                    // A transaction that must abort refuses the entries too: its commit below
                    // says so, and the abort rewinds (a lost entry only widens a lookup). Only
                    // a refusal for good stops the index: a failover's abort stopped it for
                    // the rest of the run (issue 30).
                    if let Err(e) = self.send_index() {
                        if e.rdkafka_error_code().is_some_and(refused_for_good) {
                            self.drop_index(&e.to_string());
                        }
                    }
                }
                Ok(()) => return self.producer.commit_transaction(left),
                Err(e) if left <= FLUSH_STEP => return Err(e),
                Err(_) => {}
            }
            // With a transaction open, begin_transaction only reports the state: a plain
            // "not valid in this state" while it is healthy, its error once it must abort.
            if let Err(KafkaError::Transaction(e)) = self.producer.begin_transaction() {
                if e.txn_requires_abort() || e.is_fatal() {
                    return Err(KafkaError::Transaction(e));
                }
            }
        }
    }

    /// Positions index entries for the partitions whose trail moved, inside the open
    /// transaction (see [`crate::trail`]).
    fn send_index(&mut self) -> KafkaResult<()> {
        if !self.index.on() {
            return Ok(());
        }
        for ((source, partition), part) in &self.parts {
            let key = (source.clone(), *partition);
            let entry = Entry {
                trail: self.producer.context().trail(&part.target, *partition),
                committed: part.sent.or(part.committed).map_or(-1, NextOffset::get),
            };
            if !index::moved(&entry, self.indexed.get(&key)) {
                continue;
            }
            let subject = Subject {
                cluster: &self.stamp.source,
                topic: source,
                partition: *partition,
                target: &part.target,
            };
            let (k, v) = index::key_value(&subject, &entry);
            let record = index::record(&k, &v);
            match target::send(&self.producer, record, || false) {
                Ok(()) => self.txn.entries = true,
                Err(NotSent::GaveUp) => {}
                Err(NotSent::Refused(e)) => return Err(e),
            }
            self.indexed.insert(key, entry);
        }
        Ok(())
    }

    /// Goes on without the positions index once the target refused an entry
    /// ([`index::Writing::refused`], at-least-once's rule too).
    fn drop_index(&self, error: &str) {
        self.index.refused(error);
    }

    /// An abortable error: abort the open transaction and continue from what the target shows,
    /// unless the target refused a record for good (it will again), or too many transactions in
    /// a row were aborted. `refused` is the record whose send failed, if any.
    pub(super) fn abort_and_rewind(&mut self, cause: &KafkaError, refused: Option<Refusal>) {
        let id = &self.transactional_id;
        if matches!(cause, KafkaError::Transaction(e) if e.is_fatal()) {
            self.failure.fail(format!(
                "exactly-once: fatal producer error as '{id}': {cause}{}",
                fenced_hint(cause)
            ));
            // Nothing more can be asked of this producer (the broker ends the transaction).
            self.txn = Txn::default();
            return;
        }
        crate::progress::say(&format!(
            "kreplicate: warning: aborting the open transaction after: {cause}; continuing from what the target holds"
        ));
        if self.txn.open {
            if let Err(e) = self.abort_open() {
                self.failure.fail(format!(
                    "exactly-once: aborting a transaction as '{id}' failed: {e}{}",
                    fenced_hint(&e)
                ));
                self.txn = Txn::default();
                return;
            }
        }
        self.txn = Txn::default();
        // Every report of the aborted transaction was served: the first failure is its cause.
        let first = self.producer.context().take().or(refused);
        if let Some(r) = first.as_ref().filter(|r| r.target == INDEX_TOPIC) {
            // The index never stops the copy (issue 18): copies were all delivered before its
            // entries were sent, so the next transaction, without entries, can commit.
            self.drop_index(&r.error);
            return self.rewind_after_abort();
        }
        if let Some(mut r) = first {
            if r.code.is_some_and(refused_for_good) {
                if r.source.is_empty() {
                    r.source = self
                        .parts
                        .iter()
                        .find(|((_, p), o)| *p == r.partition && o.target == r.target)
                        .map_or_else(|| r.target.clone(), |((t, _), _)| t.clone());
                }
                self.failure.fail(format!(
                    "exactly-once: the target refused {}[{}] offset {} (-> {}): {}; it will refuse that record every time (too large for the target, against its policy, or not authorised), so nothing from it on in that partition was committed. Fix the target (e.g. its message.max.bytes) and rerun",
                    r.source, r.partition, r.offset, r.target, r.error
                ));
                return;
            }
        }
        self.aborts_in_a_row += 1;
        if self.aborts_in_a_row >= MAX_ABORTS_IN_A_ROW {
            self.failure.fail(format!(
                "exactly-once: {MAX_ABORTS_IN_A_ROW} transactions in a row were aborted as '{id}' without one committed; the last after: {cause}"
            ));
            return;
        }
        self.rewind_after_abort();
    }

    /// Continues from what the target holds. The rewind sends again what the aborted
    /// transaction's failed deliveries held, so a run that fails later names a target partition
    /// only if a delivery to it failed again.
    fn rewind_after_abort(&mut self) {
        match self.rewind(Reread::Every) {
            Ok(()) => self.counters.forget_undelivered(),
            Err(e) => self.failure.fail_with(e),
        }
    }

    /// Aborts the open transaction: drops what was not sent yet, serves the reports of what
    /// was (within `--delivery-timeout`), then aborts (within `--timeout`, asked again while
    /// records are still in flight): at most `--delivery-timeout` + `--timeout` in all. Each
    /// call to the coordinator gets what is left: a coordinator that cannot answer (a target
    /// that lost its majority) held the way out for 70 s at 10 s + 30 s (issue 41).
    fn abort_open(&self) -> KafkaResult<()> {
        // abort_transaction waits until every outstanding record's report was served, and
        // serves none itself (reports are events here): drop what was not sent yet, serve
        // the reports of what was, then abort. Dropped again on every pass: a batch that
        // comes back for a retry after an epoch bump waits for this very abort, so one
        // flush waited for it until its delivery timeout (120 s in a CI run).
        let flushed = Instant::now() + self.opts.delivery_timeout;
        loop {
            self.producer.purge(PurgeConfig::default().queue());
            let pass =
                Duration::from_millis(100).min(flushed.saturating_duration_since(Instant::now()));
            if target::flush(&self.producer, pass).is_ok() || Instant::now() >= flushed {
                break;
            }
        }
        // An abort that timed out waiting for records in flight is resumed (librdkafka
        // says so): they end at their delivery timeout at the latest.
        let deadline = Instant::now() + self.opts.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.producer.abort_transaction(left) {
                Ok(()) => break,
                Err(KafkaError::Transaction(e))
                    if e.is_retriable() && Instant::now() < deadline =>
                {
                    let left = deadline.saturating_duration_since(Instant::now());
                    let _ = target::flush(&self.producer, left);
                }
                Err(e) => return Err(e),
            }
        }
        self.counters
            .transactions_aborted
            .fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// A run that fails with a transaction open (a source gap, a fatal source error) aborts
    /// it on the way out: left open, it holds the target partitions' last stable offset, and
    /// with it every read_committed reader of them, until the broker's transaction timeout
    /// (issue 31). Not after a commit that failed: that transaction's end was asked for.
    pub(super) fn abort_on_exit(&mut self) {
        if !self.failure.is_set() || !self.txn.open {
            return;
        }
        let records = self.txn.records;
        match self.abort_open() {
            Ok(()) => {
                log::info!("aborted the open transaction of {records} records on the way out");
                self.txn = Txn::default();
            }
            Err(e) => crate::progress::say(&format!(
                "kreplicate: warning: exactly-once: the open transaction could not be aborted on the way out ({e}): read_committed readers of the target partitions wait until the broker ends it (transaction.timeout.ms)"
            )),
        }
    }
}

/// Why the run ends after a commit that failed for good. A commit that timed out may still
/// complete on the broker (Kafka), or be tansu's answer to a fenced producer: what readers
/// see is not known, so the message says so (issue 18).
fn commit_failed(id: &str, e: &KafkaError) -> String {
    use RDKafkaErrorCode as C;
    let code = match e {
        KafkaError::Transaction(t) => Some(t.code()),
        _ => e.rdkafka_error_code(),
    };
    if matches!(code, Some(C::OperationTimedOut | C::RequestTimedOut)) {
        return format!(
            "exactly-once: committing a transaction on the target as '{id}' timed out: {e}; the transaction's outcome is unknown (it may still commit, or another instance with the same identity, from --group and --shard, may have taken over); the next run resumes from what the target shows"
        );
    }
    format!(
        "exactly-once: committing a transaction on the target as '{id}' failed: {e}{}; nothing of it is visible to read_committed readers",
        fenced_hint(e)
    )
}

/// What a fatal producer error adds: a fencing code means a newer producer with the same
/// `transactional.id` took over (whatever call saw it first); another fatal error (e.g.
/// INVALID_TXN_STATE on an abort after a leader's failover, issue 30) only ends this producer.
fn fenced_hint(e: &KafkaError) -> &'static str {
    use RDKafkaErrorCode as C;
    let code = match e {
        KafkaError::Transaction(t) => Some(t.code()),
        _ => e.rdkafka_error_code(),
    };
    match code {
        Some(C::ProducerFenced | C::Fenced | C::InvalidProducerEpoch) => {
            "; another instance with the same identity (from --group and --shard) took over"
        }
        _ if matches!(e, KafkaError::Transaction(t) if t.is_fatal()) => {
            "; the transactional producer cannot go on after a fatal error: the next run resumes from what the target shows"
        }
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fencing_code_says_another_instance_took_over_another_code_not() {
        let took_over = "another instance with the same identity";
        let fenced = KafkaError::Flush(RDKafkaErrorCode::ProducerFenced);
        assert!(fenced_hint(&fenced).contains(took_over));
        let invalid = KafkaError::Flush(RDKafkaErrorCode::InvalidTransactionalState);
        assert_eq!(fenced_hint(&invalid), "");
    }

    #[test]
    fn issue_18_a_commit_that_timed_out_has_an_unknown_outcome() {
        let timed_out = commit_failed(
            "g.shard-1-of-1",
            &KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut),
        );
        assert!(
            timed_out.contains("the transaction's outcome is unknown"),
            "{timed_out}"
        );
        assert!(
            timed_out.contains("the next run resumes from what the target shows"),
            "{timed_out}"
        );
        assert!(
            !timed_out.contains("nothing of it is visible"),
            "{timed_out}"
        );
    }
}
