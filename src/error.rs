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
