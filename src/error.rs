//! One error type for the whole tool; its variant decides the exit code.

use std::fmt;

/// Everything that can end a run early.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad flags, config, names or properties: nothing was consumed, produced or committed.
    #[error("{0}")]
    Usage(String),
    /// Replication started and failed (delivery error, timeout, source gap, broker error).
    #[error("{0}")]
    Failed(String),
}

impl Error {
    pub fn usage(msg: impl fmt::Display) -> Self {
        Error::Usage(msg.to_string())
    }

    pub fn failed(msg: impl fmt::Display) -> Self {
        Error::Failed(msg.to_string())
    }

    /// Exit codes of design §2: 1 replication failed, 2 usage or configuration error.
    /// (0 is success, 130 an interrupt by a second signal: neither is an `Error`.)
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            Error::Failed(_) => 1,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Exit code for a run stopped by a second SIGINT/SIGTERM.
pub const EXIT_INTERRUPTED: i32 = 130;
