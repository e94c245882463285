//! What a run did: live counters for the progress display, and the summary printed at exit
//! (the human line and the `--json` object).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::error::Exit;
use crate::options::RunOptions;

/// Live counters, readable from other threads (progress display, the demo).
#[derive(Debug)]
pub struct Counters {
    /// Records acknowledged by the target.
    pub records: AtomicU64,
    /// Key + value bytes acknowledged by the target.
    pub bytes: AtomicU64,
    /// Source partitions assigned to this process.
    pub assigned: AtomicU64,
    /// Of those, partitions with a committed position.
    pub committed: AtomicU64,
    /// Records between the read positions and the partition ends; -1 until known.
    pub lag: AtomicI64,
    /// What the run waits for before it can copy (e.g. a group's assignment), if anything.
    pub waiting: Mutex<Option<String>>,
}

impl Counters {
    pub fn set_waiting(&self, what: Option<String>) {
        *self.waiting.lock().unwrap_or_else(|e| e.into_inner()) = what;
    }

    pub fn waiting(&self) -> Option<String> {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            records: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            assigned: AtomicU64::new(0),
            committed: AtomicU64::new(0),
            lag: AtomicI64::new(-1),
            waiting: Mutex::new(None),
        }
    }
}

/// What a run did, for the human line on stderr and the `--json` object.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    pub guarantee: &'static str,
    /// Records acknowledged by the target in this run (committed, under exactly-once).
    pub records: u64,
    /// Key + value bytes of those records.
    pub bytes: u64,
    pub seconds: f64,
    /// `ok`, `failed`, or `stopped` (first signal: flushed, verified, committed).
    pub status: Status,
    pub error: Option<String>,
    pub partitions: Vec<PartitionSummary>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PartitionSummary {
    pub topic: String,
    pub partition: i32,
    pub target_topic: String,
    /// The committed source position (next offset to read) at exit, if any.
    pub committed: Option<i64>,
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
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Stopped => "stopped",
        })
    }
}

impl Summary {
    pub fn exit(&self) -> Exit {
        if self.error.is_some() {
            Exit::Failed
        } else {
            Exit::Done
        }
    }

    pub(crate) fn new(
        opts: &RunOptions,
        started: Instant,
        stopped: bool,
        failure: Option<String>,
        progress: &Counters,
        positions: BTreeMap<(String, i32), Option<i64>>,
    ) -> Self {
        let status = match (&failure, stopped) {
            (Some(_), _) => Status::Failed,
            (None, true) => Status::Stopped,
            (None, false) => Status::Ok,
        };
        Summary {
            guarantee: opts.guarantee.as_str(),
            records: progress.records.load(Ordering::Relaxed),
            bytes: progress.bytes.load(Ordering::Relaxed),
            seconds: started.elapsed().as_secs_f64(),
            status,
            error: failure,
            partitions: positions
                .into_iter()
                .map(|((topic, partition), committed)| PartitionSummary {
                    target_topic: opts.target_topic(&topic),
                    topic,
                    partition,
                    committed,
                })
                .collect(),
        }
    }
}
