//! Flags of the copy command given to `verify` or `groups` (an operator turned a copy command
//! into `verify` by changing one word): named in one line, with the subcommand's help to read.

use crate::cli::command;

/// Flags of the copy command given to `verify` or `groups`, which do not take them (an operator
/// turned a copy command into `verify` by changing one word): one line naming them all, so one
/// edit fixes the command. Refused rather than ignored: an ignored `--group` meant as
/// `--groups` would translate every group, an ignored `--shard` would read as a partial copy.
pub fn refusal(args: &[std::ffi::OsString]) -> Option<String> {
    let top = command();
    let name = args.get(1)?.to_str()?;
    if !["verify", "groups"].contains(&name) {
        return None;
    }
    let sub = top.find_subcommand(name)?;
    let takes_value = |a: &clap::Arg| a.get_action().takes_values();
    let long = |cmd: &clap::Command, l: &str| {
        cmd.get_arguments()
            .find(|a| a.get_long() == Some(l))
            .map(|a| (a.get_long().unwrap_or(l).to_string(), takes_value(a)))
    };
    let short = |cmd: &clap::Command, c: char| {
        cmd.get_arguments()
            .find(|a| a.get_short() == Some(c))
            .map(|a| (a.get_long().unwrap_or_default().to_string(), takes_value(a)))
    };
    let mut found: Vec<String> = Vec::new();
    let mut note = |flag: String| {
        if !found.contains(&flag) {
            found.push(flag);
        }
    };
    let mut rest = args[2..].iter().filter_map(|a| a.to_str());
    while let Some(arg) = rest.next() {
        if arg == "--" {
            break;
        }
        if let Some(flag) = arg.strip_prefix("--") {
            let (flag, inline) = flag
                .split_once('=')
                .map_or((flag, false), |(f, _)| (f, true));
            let (known, value) = match (long(sub, flag), long(&top, flag)) {
                (Some((_, v)), _) => (true, v),
                (None, Some((_, v))) => (false, v),
                (None, None) => continue,
            };
            if !known {
                note(format!("--{flag}"));
            }
            if value && !inline {
                rest.next();
            }
        } else if let Some(shorts) = arg.strip_prefix('-') {
            for (i, c) in shorts.char_indices() {
                let (known, l, value) = match (short(sub, c), short(&top, c)) {
                    (Some((l, v)), _) => (true, l, v),
                    (None, Some((l, v))) => (false, l, v),
                    (None, None) => break,
                };
                if !known {
                    note(format!("--{l}"));
                }
                if value {
                    // The value is the rest of this argument, or the next one.
                    if i + c.len_utf8() == shorts.len() {
                        rest.next();
                    }
                    break;
                }
            }
        }
    }
    let (last, first) = found.split_last()?;
    let names = match first {
        [] => last.clone(),
        _ => format!("{} and {last}", first.join(", ")),
    };
    let (are, them) = match first {
        [] => ("is a copy flag", "it"),
        _ => ("are copy flags", "them"),
    };
    // `--group` given to `groups` is more likely `--groups` misspelt: say so too.
    let longs: Vec<&str> = sub.get_arguments().filter_map(|a| a.get_long()).collect();
    let meant: Vec<String> = found
        .iter()
        .filter_map(|f| crate::suggest::nearest(&f[2..], longs.iter().copied()))
        .map(|m| format!("--{m}"))
        .collect();
    let meant = match meant.is_empty() {
        true => String::new(),
        false => format!("; did you mean {}?", meant.join(", ")),
    };
    Some(format!(
        "{names} {are}: {name} does not need {them}{meant} (see kreplicate {name} --help)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(args: &[&str]) -> Option<String> {
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        refusal(&args)
    }

    #[test]
    fn issue_22_copy_flags_given_to_verify_or_groups_are_named() {
        assert_eq!(
            named(&["kreplicate", "verify", "--from", "a", "--until-caught-up", "--topics", "t"])
                .unwrap(),
            "--until-caught-up is a copy flag: verify does not need it (see kreplicate verify --help)"
        );
        // All of them at once, values skipped, shorts by their long name.
        assert_eq!(
            named(&[
                "kreplicate", "verify", "--guarantee", "exactly-once", "--json", "-q",
                "--commit-interval=5s", "--create-topics", "-X", "a=b", "--guarantee", "none",
            ])
            .unwrap(),
            "--guarantee, --quiet, --commit-interval and --create-topics are copy flags: verify does not need them (see kreplicate verify --help)"
        );
        assert_eq!(
            named(&["kreplicate", "groups", "--group", "app", "--dry-run"]).unwrap(),
            "--group is a copy flag: groups does not need it; did you mean --groups? (see kreplicate groups --help)"
        );
        // Their own flags, unknown flags and other commands: clap's message.
        assert_eq!(
            named(&["kreplicate", "verify", "--configs", "--timeout", "5s"]),
            None
        );
        assert_eq!(named(&["kreplicate", "verify", "--colour"]), None);
        assert_eq!(named(&["kreplicate", "plan", "--until-caught-up"]), None);
        assert_eq!(named(&["kreplicate", "--until-caught-up"]), None);
    }
}
