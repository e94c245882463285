//! man/, completions/ and docs/guide.md's generated blocks are written by the binary and
//! committed: they must not drift. Regenerate with `cargo run -- generate .`. The guide's
//! examples and flag tables are checked against the parser, a real run and `--help`.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common;
use crate::common::kr;

fn files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn man_page_and_completions_match_the_binary() {
    let out = common::scratch_dir().join(format!("generated-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // A guide whose generated metric table went stale is rewritten to the committed one.
    let guide = std::fs::read_to_string(repo.join("docs/guide.md")).unwrap();
    let stale = guide.replacen(
        "| `kreplicate_lag_records` | gauge |",
        "| `kreplicate_lag_records` | counter |",
        1,
    );
    assert_ne!(
        stale, guide,
        "the guide's metric table has kreplicate_lag_records"
    );
    std::fs::create_dir_all(out.join("docs")).unwrap();
    std::fs::write(out.join("docs/guide.md"), stale).unwrap();
    let run = kr::run(&["generate", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        std::fs::read_to_string(out.join("docs/guide.md")).unwrap() == guide,
        "generate rewrites docs/guide.md's blocks: run `cargo run -- generate .`"
    );
    for sub in ["man", "completions"] {
        let (want, have) = (out.join(sub), repo.join(sub));
        assert_eq!(
            files(&want),
            files(&have),
            "{sub}/: run `cargo run -- generate .`"
        );
        for f in files(&want) {
            let (w, h) = (
                std::fs::read(want.join(&f)).unwrap(),
                std::fs::read(have.join(&f)).unwrap(),
            );
            assert!(
                w == h,
                "{sub}/{f} drifted from the binary: run `cargo run -- generate .`"
            );
        }
    }
}

/// The operators' guide, whose reference blocks `kreplicate generate .` writes from the code.
fn guide() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide.md"))
        .expect("docs/guide.md")
}

/// The guide's config reference is the parser's: its example must parse (unknown keys are
/// errors) and set every default the config file can hold.
#[test]
fn guide_config_reference_matches_the_parser() {
    let guide = guide();
    let section = guide
        .split("## Config file")
        .nth(1)
        .expect("the guide has a '## Config file' section");
    let yaml = section
        .split("```yaml")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("the config section has a yaml example");
    std::env::set_var("KAFKA_PROD_PASSWORD", "secret");
    let file = kreplicate::parse_file(yaml).unwrap_or_else(|e| panic!("the guide's example: {e}"));
    assert!(!file.clusters.is_empty());
    let defaults = serde_yaml::to_value(&file.defaults).unwrap();
    let unset: Vec<String> = defaults
        .as_mapping()
        .unwrap()
        .iter()
        .filter(|(_, v)| v.is_null())
        .map(|(k, _)| k.as_str().unwrap().to_string())
        .collect();
    assert!(
        unset.is_empty(),
        "the guide's config example leaves out defaults: {unset:?}"
    );
}

/// Issue 10: the guide's `--json` example has exactly the fields a real run prints, and the
/// field table documents each of them.
#[test]
fn issue_10_the_documented_json_matches_the_real_output() {
    let guide = guide();
    let section = guide
        .split("## JSON output")
        .nth(1)
        .expect("a JSON output section");
    let example = section
        .split("```json")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("a json example");
    let documented: serde_json::Value = serde_json::from_str(example).expect("the example parses");
    let run = kr::run(&["demo", "--records", "60", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let real = run.json();
    let keys = |v: &serde_json::Value| -> BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    };
    assert_eq!(keys(&documented), keys(&real), "top-level fields");
    assert_eq!(
        keys(&documented["partitions"][0]),
        keys(&real["partitions"][0]),
        "partition fields"
    );
    for key in keys(&real).iter().chain(&keys(&real["partitions"][0])) {
        assert!(
            section.contains(&format!("`{key}`")),
            "the field table documents `{key}`"
        );
    }
    assert_eq!(real["version"], 1);
    for t in ["started", "ended"] {
        let text = real[t].as_str().unwrap();
        humantime::parse_rfc3339(text).unwrap_or_else(|e| panic!("{t} {text}: {e}"));
    }
}

/// Help and version, which every command has: the flag tables need not list them.
const GENERIC: [&str; 4] = ["-h", "--help", "-V", "--version"];

/// The flags `kreplicate [SUB] --help` lists under "Options:" (short and long).
fn help_flags(sub: &[&str]) -> BTreeSet<String> {
    let args: Vec<&str> = sub.iter().copied().chain(["--help"]).collect();
    let help = kr::run(&args);
    assert_eq!(help.code, 0, "{help:?}");
    let mut flags = BTreeSet::new();
    let mut options = false;
    for line in help.stdout.lines() {
        if !line.is_empty() && !line.starts_with(' ') {
            options = line == "Options:";
            continue;
        }
        // An option's own line is indented by at most 6 columns; its wrapped help, deeper.
        let indent = line.len() - line.trim_start().len();
        if !options || indent > 6 {
            continue;
        }
        for token in line.split_whitespace() {
            let flag = token.trim_end_matches(',').trim_end_matches("...");
            if !flag.starts_with('-') || flag.len() < 2 {
                break;
            }
            flags.insert(flag.to_string());
        }
    }
    flags.retain(|f| !GENERIC.contains(&f.as_str()));
    assert!(
        !flags.is_empty(),
        "no flags found in {args:?}: {}",
        help.stdout
    );
    flags
}

/// The flags the first column of the flag table under `heading` names (`--a`, `-X`/`--b N`).
fn guide_flags(guide: &str, heading: &str) -> BTreeSet<String> {
    let section = guide
        .split(&format!("\n{heading}"))
        .nth(1)
        .unwrap_or_else(|| panic!("docs/guide.md has no '{heading}'"));
    let table = section
        .split("\n| flag |")
        .nth(1)
        .unwrap_or_else(|| panic!("no flag table under '{heading}'"));
    let mut flags = BTreeSet::new();
    for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let first = row
            .trim_start_matches('|')
            .split(" | ")
            .next()
            .unwrap_or_default();
        for span in first.split('`').skip(1).step_by(2) {
            let flag = span.split_whitespace().next().unwrap_or_default();
            if flag.starts_with('-') {
                flags.insert(flag.to_string());
            }
        }
    }
    flags.retain(|f| !GENERIC.contains(&f.as_str()));
    flags
}

/// Issue 21: the guide's flag tables list every flag `--help` shows, for the copy run and each
/// subcommand, and no flag that does not exist.
#[test]
fn issue_21_the_flag_tables_match_help() {
    let guide = guide();
    let tables: [(&[&str], &str); 8] = [
        (&[], "### Flags of a copy run"),
        (&["plan"], "### Flags of a copy run"),
        (&["status"], "### Flags of a copy run"),
        (&["verify"], "### Flags of verify"),
        (&["groups"], "### Flags of groups"),
        (&["demo"], "### Flags of demo"),
        (&["migrate"], "### Flags of migrate"),
        (&["migrate", "status"], "### Flags of migrate status"),
    ];
    let mut wrong = Vec::new();
    for (sub, heading) in tables {
        let help = help_flags(sub);
        let documented = guide_flags(&guide, heading);
        let missing: Vec<_> = help.difference(&documented).collect();
        let unknown: Vec<_> = documented.difference(&help).collect();
        if !missing.is_empty() || !unknown.is_empty() {
            wrong.push(format!(
                "kreplicate {} ('{heading}'): not documented {missing:?}, documented but not in --help {unknown:?}",
                sub.join(" ")
            ));
        }
    }
    // Every subcommand `--help` lists has a table above.
    let help = kr::run(&["--help"]).stdout;
    let commands = help
        .split("Commands:\n")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .expect("a Commands section");
    for line in commands.lines() {
        let name = line.split_whitespace().next().unwrap_or_default();
        if line.starts_with("  ") && !line.starts_with("   ") && name != "help" {
            assert!(
                tables.iter().any(|(sub, _)| sub == &[name]),
                "subcommand {name} has no flag table in docs/guide.md"
            );
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Issue 10: the man page has the sections users look for, and neither it nor `--help` wraps
/// an example command in the middle (the cron line's redirect landed on another line).
#[test]
fn issue_10_man_page_sections_and_examples_are_verbatim() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("man/kreplicate.1"))
            .expect("man/kreplicate.1");
    for section in [
        "EXAMPLES",
        "\"EXIT STATUS\"",
        "SIGNALS",
        "\"JSON OUTPUT\"",
        "\"CONFIG FILE\"",
        "HEADERS",
    ] {
        assert!(
            page.contains(&format!(".SH {section}\n")),
            "no {section} section"
        );
    }
    let cron = "*/10 * * * * kreplicate --until-caught-up --json >>/var/log/kr.jsonl";
    let examples = page
        .split(".SH EXAMPLES\n")
        .nth(1)
        .and_then(|s| s.split(".fi\n").next())
        .expect("an EXAMPLES block");
    assert!(examples.contains("\n.nf\n"), "examples are not filled");
    assert!(
        examples
            .lines()
            .any(|l| l.trim() == cron.replace('-', "\\-")),
        "the cron example is one line: {examples}"
    );
    for key in ["join-timeout:", "txn-max-time:", "sasl.password:"] {
        assert!(
            page.contains(&key.replace('-', "\\-")),
            "CONFIG FILE shows {key}"
        );
    }
    assert!(page.contains("kreplicate.origin"));
    let help = kr::run(&["--help"]);
    assert_eq!(help.code, 0);
    assert!(
        help.stdout.lines().any(|l| l.trim() == cron),
        "--help keeps the cron example on one line: {}",
        help.stdout
    );
    for line in help.stdout.lines() {
        assert!(line.chars().count() <= 100, "--help line too long: {line}");
    }
    // Issue 35: the first line under each heading is indented as the others are.
    for (heading, first) in [
        ("Examples:", "  Copy two topics once"),
        ("Exit codes:", "  0    done"),
    ] {
        let after = help.stdout.split(&format!("\n{heading}\n")).nth(1);
        assert!(
            after.is_some_and(|a| a.starts_with(first)),
            "--help's {heading} starts with {first:?}: {}",
            help.stdout
        );
    }
    // Issue 35: the SYNOPSIS is one usage line per command, not every flag on one line.
    let synopsis = page
        .split(".SH SYNOPSIS\n")
        .nth(1)
        .and_then(|s| s.split(".fi\n").next())
        .expect("a SYNOPSIS block");
    for command in ["plan", "status", "verify", "groups", "demo"] {
        assert!(
            synopsis.contains(&format!("\\fBkreplicate\\fR {command} ")),
            "no usage line for {command}: {synopsis}"
        );
    }
    assert!(!synopsis.contains("sync\\-groups"), "{synopsis}");
}
