//! The `--json` object of a `migrate` run: one line on stdout however it ends.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde::Serialize;

use super::state::{Direction, MovedPosition};
use crate::error::Exit;

/// Version of the `--json` object.
const JSON_VERSION: u32 = 1;

/// What the `--json` object says, filled in as the stages go.
#[derive(Clone, Serialize)]
pub struct Outcome {
    version: u32,
    pub id: Option<String>,
    pub direction: Direction,
    pub from: Option<String>,
    pub to: Option<String>,
    /// `done`, `waiting-for-writers`, `writers-active`, `group-active`, `stopped`, `failed`
    /// (a rerun may pass) or `refused` (fix the command line, the config or the clusters).
    pub outcome: &'static str,
    exit: u8,
    /// The stage the migration is at (stored on the target).
    pub stage: Option<&'static str>,
    pub guarantee: Option<String>,
    /// The line that says what happened, or what the operator must do.
    pub message: Option<String>,
    /// Partitions still written to, or groups still consumed, when the operator must act.
    pub waiting_for: Vec<String>,
    /// Records the copies of this run acknowledged.
    pub records_copied: u64,
    pub final_ends: BTreeMap<String, i64>,
    pub groups: Vec<MovedPosition>,
    started: String,
    ended: String,
}

impl Outcome {
    pub fn new(failback: bool) -> Self {
        Self {
            version: JSON_VERSION,
            id: None,
            direction: if failback {
                Direction::Failback
            } else {
                Direction::Forward
            },
            from: None,
            to: None,
            outcome: "failed",
            exit: 1,
            stage: None,
            guarantee: None,
            message: None,
            waiting_for: Vec::new(),
            records_copied: 0,
            final_ends: BTreeMap::new(),
            groups: Vec::new(),
            started: String::new(),
            ended: String::new(),
        }
    }

    pub fn print(mut self, started: SystemTime, exit: Exit) {
        self.exit = exit.code();
        self.started = humantime::format_rfc3339_millis(started).to_string();
        self.ended = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
        if let Ok(line) = serde_json::to_string(&self) {
            println!("{line}");
        }
    }
}
