//! What a run did: live counters (for the progress display and the metrics), and the summary
//! printed at exit (the human line and the `--json` object).

mod counters;
mod group_sync;
mod in_flight;
mod partition;

pub use crate::topics::{AddedPartitions, CreatedTopic};
pub use counters::Counters;
pub use group_sync::GroupSync;
pub use in_flight::Stall;
pub use partition::{Copied, PartitionEnd};

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime};

use crate::error::{Error, Exit};
use crate::options::RunOptions;
use crate::table::count;

/// Version of the `--json` object: bumped when a field changes meaning or goes away.
pub const JSON_VERSION: u32 = 1;

/// Who ran what, as far as it is known: an early error may come before the config was read.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    pub from: Option<String>,
    pub to: Option<String>,
    pub group: Option<String>,
    pub guarantee: Option<&'static str>,
    /// `--flow NAME`, the config file's named flow.
    pub flow: Option<String>,
}

impl Identity {
    pub fn of(opts: &RunOptions) -> Self {
        Identity {
            from: Some(opts.from.name.clone()),
            to: Some(opts.to.name.clone()),
            // A default group is named once the target answered.
            group: (!opts.group_is_default).then(|| opts.group.clone()),
            guarantee: Some(opts.guarantee.as_str()),
            flow: opts.flow.clone(),
        }
    }
}

/// Who must act on a failure, as the exit code says it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorKind {
    /// Exit 2: change the command line or the config.
    Usage,
    /// Exit 1: the run failed; a rerun may succeed.
    Failed,
    /// Exit 130: a second signal.
    Interrupted,
}

impl ErrorKind {
    fn of(err: &Error) -> Self {
        match err.exit() {
            Exit::Usage => ErrorKind::Usage,
            _ => ErrorKind::Failed,
        }
    }
}

/// What a run did, for the human line on stderr and the `--json` object.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    pub version: u32,
    /// Null when the run ended before the config was read.
    pub guarantee: Option<&'static str>,
    /// Records acknowledged by the target in this run (committed, under exactly-once).
    pub records: u64,
    /// Key + value bytes of those records.
    pub bytes: u64,
    /// Source records not copied because they came from the target cluster (their origin
    /// header names it): what keeps two opposite runs A→B and B→A from looping.
    pub skipped: u64,
    /// Records copied without the origin header because with it they exceeded the size limit
    /// (none and at-least-once only).
    pub unstamped: u64,
    pub seconds: f64,
    /// Of those, seconds the read side waited for `--max-bytes-per-sec` or
    /// `--max-records-per-sec` (0 without a limit).
    pub throttled_seconds: f64,
    /// `ok`, `failed`, `stopped` (first signal: flushed, verified, committed) or
    /// `interrupted` (second signal).
    pub status: Status,
    pub error: Option<String>,
    pub error_kind: Option<ErrorKind>,
    /// Wall-clock start and end, RFC 3339 in UTC.
    pub started: String,
    pub ended: String,
    /// `--from` and `--to` as given (a config cluster name or a bootstrap list), and the source
    /// consumer group.
    pub from: Option<String>,
    pub to: Option<String>,
    pub group: Option<String>,
    /// Target topics this run created with `--create-topics` (at start or when
    /// `--refresh-topics` found a new source topic), with the configs it set.
    pub created_topics: Vec<CreatedTopic>,
    /// Partitions this run added to existing target topics (`--create-topics`).
    pub added_partitions: Vec<AddedPartitions>,
    pub partitions: Vec<PartitionSummary>,
    /// `--sync-groups` only: what the group sync did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_sync: Option<GroupSync>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PartitionSummary {
    pub topic: String,
    pub partition: i32,
    pub target_topic: String,
    /// The committed source position (next offset to read) at exit, if any.
    pub committed: Option<i64>,
    /// Records of this partition the target acknowledged in this run (under exactly-once, in
    /// committed transactions), and the first and last of their source offsets.
    pub records: u64,
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    /// The partition's end (high watermark) as the last fetch saw it, and the records between
    /// the committed position and it; null when not known (e.g. the partition was revoked).
    pub end_offset: Option<i64>,
    pub lag: Option<i64>,
    /// Seconds reading waited behind a transaction open on the source (its records past the
    /// last stable offset are not readable until it ends); absent when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_for_source_transaction_seconds: Option<f64>,
}

/// How a run ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// The run failed: `error` says why.
    Failed,
    /// A first signal stopped it after flushing, verifying and committing.
    Stopped,
    /// A second signal ended it at once.
    Interrupted,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Stopped => "stopped",
            Status::Interrupted => "interrupted",
        })
    }
}

impl Summary {
    pub fn exit(&self) -> Exit {
        match (&self.error, self.error_kind) {
            (Some(_), Some(ErrorKind::Usage)) => Exit::Usage,
            (Some(_), _) => Exit::Failed,
            (None, _) => Exit::Done,
        }
    }

    pub(crate) fn new(
        opts: &RunOptions,
        started: Instant,
        stopped: bool,
        failure: Option<Error>,
        progress: &Counters,
        positions: BTreeMap<(String, i32), PartitionEnd>,
    ) -> Self {
        let status = match (&failure, stopped) {
            (Some(_), _) => Status::Failed,
            (None, true) => Status::Stopped,
            (None, false) => Status::Ok,
        };
        let error_kind = failure.as_ref().map(ErrorKind::of);
        // Whatever ended the run, the failure names every target partition that refused a
        // record or never acknowledged one in time (a cluster that lost a majority: all).
        let undelivered = progress.undelivered();
        let failure = failure.map(|e| match undelivered.len() {
            0 => e.to_string(),
            n => format!(
                "{e}; deliveries failed to {}: {}",
                count(n as u64, "target partition"),
                undelivered.join(", ")
            ),
        });
        let mut summary = Summary::ended(&Identity::of(opts), started, status, failure, error_kind);
        summary.records = progress.records.load(Ordering::Relaxed);
        summary.bytes = progress.bytes.load(Ordering::Relaxed);
        summary.throttled_seconds = progress.throttled_seconds();
        summary.skipped = progress.skipped.load(Ordering::Relaxed);
        summary.unstamped = progress.unstamped.load(Ordering::Relaxed);
        let changes = progress.target_changes();
        summary.created_topics = changes.created;
        summary.added_partitions = changes.grown;
        summary.partitions = positions
            .into_iter()
            .map(|((topic, partition), end)| PartitionSummary {
                target_topic: opts.target_topic(&topic),
                topic,
                partition,
                committed: end.committed,
                records: end.copied.records,
                first_offset: end.copied.first,
                last_offset: end.copied.last,
                end_offset: end.end_offset,
                lag: end
                    .end_offset
                    .zip(end.committed)
                    .map(|(high, pos)| (high - pos).max(0)),
                waited_for_source_transaction_seconds: end
                    .behind_transaction
                    .map(|d| (d.as_secs_f64() * 10.0).round() / 10.0),
            })
            .collect();
        summary
    }

    /// A run that ended with `err` before it copied anything.
    pub fn of_error(who: &Identity, started: Instant, err: &Error) -> Self {
        Summary::ended(
            who,
            started,
            Status::Failed,
            Some(err.to_string()),
            Some(ErrorKind::of(err)),
        )
    }

    /// A run that a first signal stopped during the checks, before it copied anything.
    pub fn stopped_before_copying(who: &Identity, started: Instant) -> Self {
        Summary::ended(who, started, Status::Stopped, None, None)
    }

    /// A run that a second signal ended at once.
    pub fn interrupted(who: &Identity, started: Instant) -> Self {
        let error = "interrupted by a second signal: exited at once, nothing more committed";
        Summary::ended(
            who,
            started,
            Status::Interrupted,
            Some(error.to_string()),
            Some(ErrorKind::Interrupted),
        )
    }

    /// Counts the run from `started`, when the command began: the checks, the topics created and
    /// the wait for the clusters are in `started` and `seconds` (as they are in a failure's),
    /// not only the copy.
    pub fn count_from(&mut self, started: Instant) {
        let elapsed = started.elapsed();
        let now = SystemTime::now();
        let began = now.checked_sub(elapsed).unwrap_or(now);
        self.seconds = elapsed.as_secs_f64();
        self.started = humantime::format_rfc3339_millis(began).to_string();
        self.ended = humantime::format_rfc3339_millis(now).to_string();
    }

    fn ended(
        who: &Identity,
        started: Instant,
        status: Status,
        error: Option<String>,
        error_kind: Option<ErrorKind>,
    ) -> Self {
        let elapsed = started.elapsed();
        let now = SystemTime::now();
        let began = now.checked_sub(elapsed).unwrap_or(now);
        Summary {
            version: JSON_VERSION,
            guarantee: who.guarantee,
            records: 0,
            bytes: 0,
            skipped: 0,
            unstamped: 0,
            seconds: elapsed.as_secs_f64(),
            throttled_seconds: 0.0,
            status,
            error,
            error_kind,
            started: humantime::format_rfc3339_millis(began).to_string(),
            ended: humantime::format_rfc3339_millis(now).to_string(),
            from: who.from.clone(),
            to: who.to.clone(),
            group: who.group.clone(),
            created_topics: Vec::new(),
            added_partitions: Vec::new(),
            partitions: Vec::new(),
            group_sync: None,
        }
    }
}
