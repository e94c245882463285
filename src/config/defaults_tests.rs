//! The built-in defaults (`options::defaults`) against what `--help` and the guide state and
//! what a run resolves to, per flag as ripgrep's flag tests do (issue 34).

use clap::FromArgMatches;

use super::*;
use crate::cli::{self, Cli};
use crate::options::defaults::{self, TABLE};

/// A copy run's flags, resolved without a config file.
fn resolved(extra: &[&str]) -> String {
    let mut argv = vec![
        "kreplicate",
        "--from",
        "a:1",
        "--to",
        "b:1",
        "--topics",
        "t",
    ];
    argv.extend_from_slice(extra);
    let matches = cli::command().try_get_matches_from(argv).unwrap();
    let cli = Cli::from_arg_matches(&matches).unwrap();
    format!("{:?}", resolve(&cli.copy, &FileConfig::default()).unwrap())
}

/// `[default: VALUE]` in each flag's help, per command (the top one is "").
fn stated(cmd: &clap::Command, path: &str, out: &mut Vec<(String, String, String)>) {
    for arg in cmd.get_arguments() {
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        if let (Some(long), Some((_, rest))) = (arg.get_long(), help.split_once("[default: ")) {
            let value = rest.split_once(']').map_or(rest, |(v, _)| v);
            out.push((path.to_string(), long.to_string(), value.to_string()));
        }
    }
    for sub in cmd.get_subcommands() {
        stated(sub, sub.get_name(), out);
    }
}

#[test]
fn issue_34_each_default_help_states_is_the_one_a_run_resolves_to() {
    let mut help = Vec::new();
    stated(&cli::command(), "", &mut help);
    let without = resolved(&[]);
    let mut checked = 0;
    for (path, flag, value) in &help {
        let Some(builtin) = defaults::of(flag) else {
            // Not a value (`no limit`, `the broker's`, a path): said in words only.
            continue;
        };
        assert_eq!(value, builtin, "{path} --{flag}: help and table differ");
        match path.as_str() {
            "" | "plan" => {
                let with = resolved(&[&format!("--{flag}"), value]);
                assert_eq!(
                    with, without,
                    "--{flag} {value} is not what leaving it out gives"
                );
            }
            "verify" | "groups" if flag == "timeout" => {
                let file = FileConfig::default();
                let given = value.to_string();
                assert_eq!(
                    timeout(Some(&given), &file).unwrap(),
                    timeout(None, &file).unwrap()
                );
            }
            _ => {}
        }
        checked += 1;
    }
    for (flag, _) in TABLE {
        assert!(
            help.iter().any(|(p, f, _)| p.is_empty() && f == flag),
            "--{flag} has a built-in default that the copy's --help does not state"
        );
    }
    assert!(checked >= TABLE.len(), "{help:?}");
    // `demo` keeps clap's own defaults; its --guarantee agrees with the copy's.
    let cmd = cli::command();
    let demo = cmd.find_subcommand("demo").unwrap();
    let guarantee = demo
        .get_arguments()
        .find(|a| a.get_id() == "guarantee")
        .unwrap();
    let shown: Vec<_> = guarantee.get_default_values().iter().collect();
    assert_eq!(shown, [defaults::of("guarantee").unwrap()]);
}

#[test]
fn issue_34_the_guides_flag_tables_state_the_built_in_defaults() {
    let guide = include_str!("../../docs/guide.md");
    let flags = regex::Regex::new(r"--[a-z][a-z-]*").unwrap();
    for (flag, value) in TABLE {
        let mut stated = 0;
        for row in guide.lines().filter(|l| l.starts_with("| `-")) {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").collect();
            let (Some(first), Some(last)) = (cells.first(), cells.last()) else {
                continue;
            };
            let named = flags
                .find_iter(first)
                .any(|m| m.as_str() == format!("--{flag}"));
            if !named || cells.len() < 3 || last.trim().is_empty() {
                continue;
            }
            assert!(
                last.contains(&format!("`{value}`")),
                "docs/guide.md's row of --{flag} says its default is {last:?}, the code's is {value}"
            );
            stated += 1;
        }
        assert!(
            stated > 0,
            "docs/guide.md's flag tables do not state --{flag}'s default"
        );
    }
}
