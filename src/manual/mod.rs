//! The man pages and shell completions, written by the hidden `kreplicate generate DIR` and
//! committed; a test checks that the committed copies match the binary. The main page adds
//! sections clap does not write (examples kept verbatim, exit status, signals, JSON output,
//! metrics, config file, headers) from code: the texts in `texts` and the metric catalogue,
//! which also fill docs/guide.md's generated blocks (`guide`).

mod guide;
mod texts;

use std::io::Write;
use std::path::Path;

use clap_mangen::Man;
use roff::{bold, roman, Roff};

use crate::cli::{self, EXAMPLES, EXIT_CODES};
use crate::metrics::catalogue::CATALOGUE;

use guide::GUIDE;

/// Writes `man/*.1` and `completions/*` under `dir`, and rewrites the generated blocks of
/// `dir/docs/guide.md` when `dir` is a source tree (a packager's staging folder has none).
pub fn generate(dir: &Path) -> std::io::Result<()> {
    use clap_complete::Shell;
    let man_dir = dir.join("man");
    let comp_dir = dir.join("completions");
    std::fs::create_dir_all(&man_dir)?;
    std::fs::create_dir_all(&comp_dir)?;
    let cmd = cli::command();
    std::fs::write(man_dir.join("kreplicate.1"), main_page(&cmd)?)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("kreplicate-{}", sub.get_name());
        let mut page = Vec::new();
        Man::new(sub.clone().name(&name)).render(&mut page)?;
        std::fs::write(man_dir.join(format!("{name}.1")), page)?;
    }
    for shell in [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::Elvish,
        Shell::PowerShell,
    ] {
        clap_complete::generate_to(shell, &mut cli::command(), "kreplicate", &comp_dir)?;
    }
    let guide = dir.join(GUIDE);
    if guide.exists() {
        let text = std::fs::read_to_string(&guide)?;
        let new = guide::regenerate(&text).map_err(std::io::Error::other)?;
        if new != text {
            std::fs::write(&guide, new)?;
        }
    }
    Ok(())
}

/// clap's sections, then ours instead of clap's reflowed "after help" text.
fn main_page(cmd: &clap::Command) -> std::io::Result<Vec<u8>> {
    let man = Man::new(cmd.clone());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    page.write_all(synopsis().to_roff().as_bytes())?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    man.render_subcommands_section(&mut page)?;
    page.write_all(sections().to_roff().as_bytes())?;
    man.render_version_section(&mut page)?;
    Ok(page)
}

/// One usage line per command, the command in bold (clap's synopsis is every flag on a line).
fn synopsis() -> Roff {
    let mut r = Roff::new();
    r.control("SH", ["SYNOPSIS"]).control("nf", []);
    for line in cli::USAGE.lines() {
        let rest = line.strip_prefix("kreplicate").unwrap_or(line);
        r.text([bold("kreplicate"), roman(rest)]);
    }
    r.control("fi", []);
    r
}

fn sections() -> Roff {
    let mut r = Roff::new();
    r.control("SH", ["EXAMPLES"]);
    verbatim(&mut r, EXAMPLES);
    r.control("SH", ["EXIT STATUS"]);
    verbatim(&mut r, EXIT_CODES);
    para(
        &mut r,
        "Under systemd, RestartPreventExitStatus=2 restarts the unit after an outage (exit 1) but not after a configuration error (exit 2).",
    );
    r.control("SH", ["SIGNALS"]);
    item(
        &mut r,
        "first SIGINT or SIGTERM",
        "Stop consuming, flush, verify every delivery, commit, exit 0. During the checks before the copy there is nothing to flush or commit: exit 0 at once.",
    );
    item(
        &mut r,
        "second SIGINT or SIGTERM",
        "Exit 130 at once, committing nothing more; records after the last commit are copied again by the next run.",
    );
    r.control("SH", ["JSON OUTPUT"]);
    para(
        &mut r,
        "With --json, one JSON object on stdout on every exit (0, 1, 2 and 130), errors included; human output stays on stderr. Example, then every field:",
    );
    verbatim(&mut r, texts::JSON_EXAMPLE);
    for (names, text) in texts::JSON_FIELDS {
        item(&mut r, &names.join(", "), &plain(text));
    }
    item(&mut r, "verify --json", &plain(texts::VERIFY_JSON));
    item(&mut r, "groups --json", &plain(texts::GROUPS_OUTPUT));
    r.control("SH", ["METRICS"]);
    para(
        &mut r,
        "--metrics-addr HOST:PORT serves Prometheus text format at /metrics and a health check at /healthz: 200 while the copy moves or is idle with nothing to copy, 503 once records wait and none was acknowledged for longer than --delivery-timeout; 200 starting while an exactly-once run starts, until the copy first moves or its start steps' timeouts passed. /readyz answers 200 ready while the run holds its share of the partitions (a group's assignment or an empty share it answered, a shard's, exactly-once's), the target acknowledges (no record waits longer than half of --delivery-timeout) and it copies or is caught up; 503 with the reason while it checks the clusters, joins its group, starts, waits for the target, commits at the end or has ended. --metrics-file PATH writes the same text atomically every --metrics-file-interval and at exit, for node_exporter's textfile collector. Partition series carry the labels topic and partition.",
    );
    for m in CATALOGUE {
        let text = format!("{}: {}", m.kind.as_str(), plain(m.meaning));
        item(&mut r, m.name, &text);
    }
    r.control("SH", ["CONFIG FILE"]);
    para(
        &mut r,
        "YAML, from --config, $KREPLICATE_CONFIG, or $XDG_CONFIG_HOME/kreplicate/config.yaml (~/.config/kreplicate/config.yaml). Every key (unknown keys are errors); a flag on the command line wins over defaults; ${VAR} in a property value is read from the environment and ${file:PATH} from a file (without its trailing newline); one that cannot be read is exit 2, and property values are never printed:",
    );
    verbatim(&mut r, texts::CONFIG_EXAMPLE);
    r.control("SH", ["SECURED CLUSTERS"]);
    para(
        &mut r,
        "TLS and SASL are librdkafka's settings, per cluster. A SASL_SSL source with SCRAM-SHA-512 and a SASL_PLAINTEXT target with PLAIN, as tested on Apache Kafka:",
    );
    verbatim(&mut r, texts::SECURED_EXAMPLE);
    para(
        &mut r,
        "Refused credentials (a wrong password or user), a broker certificate that ssl.ca.location does not trust, or a security.protocol the listener does not speak: one line naming the cluster, the cause and the setting to check, exit 2, within about a second. Passwords appear in no output, also at -vv with debug=security,broker.",
    );
    para(
        &mut r,
        "Before copying, each cluster says what the run's principal may do; a missing permission (Describe and Read on the source topics, Read on the group, Write and Describe on the target topics, Create where topics are created, DescribeConfigs where configs are compared; with --sync-acls Describe on both clusters and Alter on the target cluster) is refused with exit 2 and the kafka-acls command that grants it. A permission revoked while copying ends the run with exit 1, nothing committed past what the target acknowledged.",
    );
    para(
        &mut r,
        "--sync-acls creates the copied topics' LITERAL ACLs on their copies, renamed with --rename, under MirrorMaker 2's rule: an ALLOW WRITE is never copied (the run is the copies' one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is; PREFIXED ACLs are not copied (named in a warning). --sync-group-acls LIST|^REGEX adds the LITERAL ACLs of those consumer groups, under the same names. Continuous runs create new ACLs every --refresh-topics; an ACL removed from the source stays on the target. Principals the target holds no SCRAM credentials for are named in one warning. plan lists the ACLs a run would create; verify --acls lists those the target lacks (exit 1).",
    );
    r.control("SH", ["HEADERS"]);
    para(
        &mut r,
        "Under every guarantee each copied record carries one added header, kreplicate.origin, whose value is <source cluster id>/<source topic>/<partition>/<offset> of the record it copies (the config file's clusters.NAME.id when the source reports none; without either a copy refuses to write origins). Exactly-once runs before this version wrote <source topic>/<partition>/<offset>; both are read. Exactly-once resumes after the origin of the last record it copied, in target order, at the end of each target partition; kreplicate groups translates consumer group positions through it, and a record whose origin names the target cluster is not copied back (counted as skipped). --no-origin-header leaves the header out (and with it translation and loop prevention; exactly-once refuses it). verify ignores headers starting with kreplicate.; the other headers, keys, values and timestamps are copied unchanged.",
    );
    para(
        &mut r,
        "The copy also writes a positions index to the compacted topic __kreplicate.index on the target, with each commit, so that a translation reads at most one interval of target records.",
    );
    r.control("SH", ["CUT-OVER"]);
    verbatim(&mut r, texts::CUTOVER);
    r
}

fn para(r: &mut Roff, text: &str) {
    r.control("PP", []).text([roman(text)]);
}

fn item(r: &mut Roff, tag: &str, text: &str) {
    r.control("TP", []).text([bold(tag)]).text([roman(text)]);
}

/// Lines kept as they are: a man viewer must not reflow a command.
fn verbatim(r: &mut Roff, text: &str) {
    r.control("PP", []).control("nf", []);
    for line in text.lines() {
        r.text([roman(line)]);
    }
    r.control("fi", []);
}

/// Markdown to man text: no backquotes, links as their text.
fn plain(md: &str) -> String {
    let mut out = String::new();
    let mut rest = md;
    // `[text](#anchor)` -> `text`
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    out.push_str(rest);
    out.replace('`', "").replace("\\|", "|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_man_text() {
        assert_eq!(
            plain("see [No loops](#provenance) and `--json` \\| x"),
            "see No loops and --json | x"
        );
        for (_, text) in texts::JSON_FIELDS {
            let man = plain(text);
            assert!(!man.contains('`') && !man.contains("]("), "{man}");
        }
    }
}
