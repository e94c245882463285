//! One error type for the whole tool; its variant decides the exit code.

use std::fmt;

/// Everything that can end a run early.
#[derive(Debug, Clone, thiserror::Error)]
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

    pub fn exit(&self) -> Exit {
        match self {
            Error::Usage(_) => Exit::Usage,
            Error::Failed(_) => Exit::Failed,
        }
    }

    /// The same error, its message led by where it happened.
    pub fn within(self, place: impl fmt::Display) -> Self {
        match self {
            Error::Usage(m) => Error::Usage(format!("{place}: {m}")),
            Error::Failed(m) => Error::Failed(format!("{place}: {m}")),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The failure that ends a copy run, the same rule in both engines: the first one wins, since
/// what fails after it is mostly its consequence (a flush after a refused record, an abort
/// after a fenced commit), and the first names what to fix. Its kind ([`Error`]'s variant)
/// decides the exit code.
#[derive(Debug, Default)]
pub struct Failure(Option<Error>);

impl Failure {
    /// The run failed and a rerun may pass (exit 1), unless it already failed.
    pub fn fail(&mut self, msg: impl fmt::Display) {
        self.fail_with(Error::failed(msg));
    }

    /// Like [`Failure::fail`], keeping the error's kind (a usage error is exit 2).
    pub fn fail_with(&mut self, e: Error) {
        if self.0.is_none() {
            self.0 = Some(e);
        }
    }

    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// The failure, for the summary.
    pub fn get(&self) -> Option<&Error> {
        self.0.as_ref()
    }
}

/// Exit codes, by who must act.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Done: caught up, stopped by a first signal after committing, or an exact copy (verify).
    Done = 0,
    /// The run failed and a rerun may succeed (or verify found differences).
    Failed = 1,
    /// A person must change the command line or the config; nothing was copied or committed.
    Usage = 2,
    /// `migrate` only: a person must act (stop the writers, or a group's consumers) and run
    /// it again with `--continue`.
    WaitingForOperator = 3,
    /// A second SIGINT/SIGTERM: exited at once, nothing more committed.
    Interrupted = 130,
}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// A library's message with every double-quoted part except `keep` replaced by `"…"`:
/// librdkafka quotes property values (`Invalid value "x" for configuration property "k"`),
/// and a value may be a secret.
pub fn redact_quoted(msg: &str, keep: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        let inner = &rest[open + 1..];
        let Some(close) = inner.find('"') else {
            out.push('…');
            return out;
        };
        let quoted = &inner[..close];
        out.push_str(if !keep.is_empty() && quoted == keep {
            quoted
        } else {
            "…"
        });
        out.push('"');
        rest = &inner[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_21_the_first_failure_wins_with_its_kind() {
        let mut f = Failure::default();
        assert!(!f.is_set());
        f.fail_with(Error::usage("the broker refused the transaction timeout"));
        f.fail("a consequence");
        f.fail_with(Error::failed("another"));
        let first = f.get().expect("set");
        assert_eq!(
            first.to_string(),
            "the broker refused the transaction timeout"
        );
        assert_eq!(first.exit(), Exit::Usage);
    }

    #[test]
    fn issue_13_quoted_values_are_redacted_but_the_key_is_kept() {
        assert_eq!(
            redact_quoted(
                r#"Invalid value "hunter2" for configuration property "sasl.mechanism""#,
                "sasl.mechanism"
            ),
            r#"Invalid value "…" for configuration property "sasl.mechanism""#
        );
        assert_eq!(redact_quoted(r#"a "b" c "d"#, ""), r#"a "…" c "…"#);
        assert_eq!(redact_quoted("no quotes", "k"), "no quotes");
    }
}
