//! Every built-in default of a setting that the command line, the chosen flow and the config
//! file's `defaults` may all leave out: the one table that `--help` shows (`cli::command` adds
//! each `[default: ...]`), that the guide's flag tables state (a test compares them) and that
//! `config` resolves to (flag, then flow, then file defaults, then this: `config::setting`).
//! The enums' defaults are their `#[default]` variants; a test checks each against this table.

/// Flag name (without `--`, as the config file's key) and its built-in value, spelled as a
/// user would write it.
pub const TABLE: &[(&str, &str)] = &[
    ("guarantee", "at-least-once"),
    ("rename", "{topic}"),
    ("refresh-topics", "60s"),
    ("start", "earliest"),
    ("on-gap", "fail"),
    ("delivery-timeout", "2m"),
    ("timeout", "30s"),
    ("commit-interval", "5s"),
    ("join-timeout", "2m"),
    ("sync-groups-interval", "30s"),
    ("txn-max-records", "200000"),
    ("txn-max-bytes", "128MiB"),
    ("txn-max-time", "2s"),
    ("metrics-file-interval", "15s"),
];

/// The built-in default of flag `name`, if it has one.
pub fn of(name: &str) -> Option<&'static str> {
    TABLE.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}
