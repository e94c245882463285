//! kreplicate: copy Kafka topics between clusters with a delivery contract.
//!
//! The binary is a thin wrapper over [`run_cli`]. The layers, top to bottom: a module imports
//! modules of its own layer or of layers below it, never one above (`tests/layers.rs` reads
//! each item's modules, before its dash, and checks every `crate::` path of src/):
//! 1. `lib`, `demo`, `plan`, `migrate`, `manual` — `lib` parses, dispatches, prints, maps the
//!    outcome to an exit code; nothing imports this layer, nor `verify` or `groups`. `plan`
//!    prints what `preflight` decides and a copy's status; `migrate` runs a move's stages
//!    (copies, `verify`, `groups`); `manual` writes the man pages.
//! 2. `engine`, `verify`, `groups` — `engine` picks one of two engines, `acked` (none,
//!    at-least-once) or `exactly_once` (exactly-once), which never import each other (what
//!    both do alike sits beneath them in `engine::shared`); `verify` compares the two sides
//!    and never imports an engine; `groups` translates consumer group positions through the
//!    positions index (`trail`) the engines write, and never imports an engine either.
//! 3. `preflight`, `source`, `target`, `report`, `progress`, `metrics` — `preflight` decides
//!    whether a copy may start and which topics it copies: one admission rule for the start,
//!    `plan` and `--refresh-topics`. `source` (assign, classify a poll, ends, gaps, lag) and
//!    `target` (record mapping, one send path, flush) serve the engines, `source` also
//!    `verify`; they never import each other. `report` counts and summarises a run;
//!    `progress` shows it on the terminal and `metrics` serves it to Prometheus.
//! 4. `acl`, `topics`, `kafka`, `config`, `cli`, `copy_flags`, `options` — `acl` holds the
//!    permissions a run needs and `--sync-acls`; `topics` reads and changes clusters' topics
//!    (metadata, selection, creation, configs, loops), both through `kafka` (client settings,
//!    consumer requests), which takes the run's vocabulary from `options`; `config` turns
//!    `cli` flags and the YAML into `options` by one rule (`config::setting`); `cli` imports
//!    only `options`; `copy_flags` reads `cli` to name misplaced copy flags.
//! 5. `error`, `exit`, `lines`, `offsets`, `origin`, `partmap`, `shard`, `stop`, `suggest`,
//!    `table`, `throttle`, `tick`, `mock`, `trail` — leaves import nothing of the crate but
//!    other leaves; `lines` prints a line on stderr above the progress bar; `exit` joins the
//!    threads that use librdkafka clients before the process exits, and watches the signals.
//!
//! Unit tests end their module (`mod tests`); past 450 lines it is a folder with a `tests.rs`.

mod acl;
mod cli;
mod config;
mod copy_flags;
mod demo;
mod engine;
pub mod error;
mod exit;
mod groups;
mod kafka;
mod lines;
mod manual;
mod metrics;
mod migrate;
pub mod mock;
mod offsets;
mod options;
mod origin;
mod partmap;
mod plan;
mod preflight;
mod progress;
mod report;
pub mod shard;
mod source;
mod stop;
mod suggest;
mod table;
mod target;
mod throttle;
mod tick;
mod topics;
mod trail;
mod verify;

/// The config file parser, for tests that check docs/guide.md's example.
pub use config::parse_file;

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use clap::FromArgMatches;

use cli::{Cli, Command};
use error::{Error, Exit};
use report::{Counters, Identity, Status, Summary};

/// Parses arguments, runs, prints, and returns the process exit code: the process's whole
/// life, called once from `main` (on its way out it joins the helper threads, see `exit`).
pub fn run_cli<I, T>(args: I) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let started = Instant::now();
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match cli::command()
        .try_get_matches_from(&args)
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => {
            let exit = clap_error(&e, &args);
            // A copy run's script that asked for JSON gets its line even when the flags are
            // wrong (verify and demo print other objects).
            let subcommand = args.get(1).is_some_and(|a| {
                ["verify", "demo", "plan", "status", "groups", "migrate"]
                    .iter()
                    .any(|s| *a == **s)
            });
            if exit == Exit::Usage && !subcommand && args.iter().any(|a| a == "--json") {
                let err =
                    Error::usage(spaced_unit(&args).unwrap_or_else(|| clap_line(&e.to_string())));
                print_json(&Summary::of_error(&Identity::default(), started, &err));
            }
            return exit;
        }
    };
    let result = match &cli.command {
        Some(Command::Demo(args)) => run_demo(args),
        // verify's 1 means "the target differs": any error of its own is 2.
        Some(Command::Verify(args)) => verify::run(args).map_err(Error::usage),
        Some(Command::Plan(args)) => plan::run(args),
        Some(Command::Status(args)) => plan::status(args),
        // Like verify's, groups' 1 is an outcome (some groups not translated).
        Some(Command::Groups(args)) => groups::run(args),
        Some(Command::Migrate(args)) => migrate::run(args),
        Some(Command::Generate { dir }) => manual::generate(dir)
            .map(|()| Exit::Done)
            .map_err(|e| Error::usage(format!("cannot write into {}: {e}", dir.display()))),
        None => run_copy(&cli.copy),
    };
    let exit = match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kreplicate: error: {}", one_line(&e.to_string()));
            e.exit()
        }
    };
    if !exit::settle() {
        exit::now(exit.code());
    }
    exit
}

/// clap prints help and version itself; errors become one line and exit 2.
fn clap_error(e: &clap::Error, args: &[OsString]) -> Exit {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            Exit::Done
        }
        // `verify --until-caught-up`: the copy flags, named, and the subcommand's help.
        ErrorKind::UnknownArgument => {
            match copy_flags::refusal(args) {
                Some(line) => eprintln!("kreplicate: error: {line}"),
                None => {
                    let line = spaced_unit(args).unwrap_or_else(|| clap_line(&e.to_string()));
                    eprintln!("kreplicate: error: {line} (see kreplicate --help)");
                }
            }
            Exit::Usage
        }
        _ => {
            let line = spaced_unit(args).unwrap_or_else(|| clap_line(&e.to_string()));
            eprintln!("kreplicate: error: {line} (see kreplicate --help)");
            Exit::Usage
        }
    }
}

/// `--delivery-timeout 5 min` makes clap take `min` for a subcommand and say so, which reads
/// as nonsense: name the flag and the spelling meant instead.
fn spaced_unit(args: &[OsString]) -> Option<String> {
    const UNITS: [&str; 16] = [
        "ms", "s", "sec", "m", "min", "h", "b", "kb", "mb", "gb", "kib", "mib", "gib", "seconds",
        "minutes", "hours",
    ];
    args.windows(3).find_map(|w| {
        let (flag, n, unit) = (w[0].to_str()?, w[1].to_str()?, w[2].to_str()?);
        let unit_word = UNITS.contains(&unit.to_ascii_lowercase().as_str());
        (flag.starts_with("--") && n.parse::<f64>().is_ok() && unit_word).then(|| {
            format!("{flag} '{n} {unit}': durations and sizes have no space: write {n}{unit}")
        })
    })
}

fn run_demo(args: &cli::DemoArgs) -> Result<Exit, Error> {
    let (summary, ok) = demo::run(args)?;
    if args.json {
        print_json(&summary);
    }
    Ok(if ok { Exit::Done } else { Exit::Failed })
}

/// A copy run; with `--json`, one JSON line on stdout however it ends.
fn run_copy(args: &cli::CopyArgs) -> Result<Exit, Error> {
    let started = Instant::now();
    let mut who = Identity {
        from: args.ends.from.clone(),
        to: args.ends.to.clone(),
        group: args.group.clone(),
        guarantee: args.guarantee.map(options::Guarantee::as_str),
        flow: args.ends.flow.clone(),
    };
    copy(args, started, &mut who).inspect_err(|e| {
        if args.json {
            print_json(&Summary::of_error(&who, started, e));
        }
    })
}

fn copy(args: &cli::CopyArgs, started: Instant, who: &mut Identity) -> Result<Exit, Error> {
    let file = config::load(&args.ends)?;
    let opts = config::resolve(args, &file)?;
    *who = Identity::of(&opts);
    let sync = match &opts.sync_groups {
        Some(spec) => Some(groups::Selection::parse(Some(spec), "--sync-groups")?),
        None => None,
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| Error::failed(format!("cannot start the runtime: {e}")))?;
    progress::init_logging(args.verbose);
    let progress = Arc::new(Counters::default());
    let exporter = metrics::start(
        &opts.metrics,
        progress.clone(),
        who.clone(),
        opts.delivery_timeout,
    )?;
    let signals = Signals {
        stop: Arc::new(AtomicBool::new(false)),
        copying: Arc::new(AtomicBool::new(false)),
        json: args.json.then(|| who.clone()),
        metrics: exporter.clone(),
        started,
    };
    let (stop, copying) = (signals.stop.clone(), signals.copying.clone());
    let quiet = args.quiet;
    let sync_opts = opts.clone();
    let result = runtime.block_on(async {
        watch_signals(signals)?;
        // librdkafka calls block: keep them off the async workers.
        tokio::task::spawn_blocking(move || {
            engine::with_progress(&opts, progress.clone(), quiet, |replicator| {
                copying.store(true, Ordering::SeqCst);
                let syncer = sync.map(|s| groups::Syncer::start(&sync_opts, s, progress.clone()));
                let mut summary = replicator.run(&stop);
                if let Some(s) = syncer {
                    // Its last round runs now that the positions are final.
                    s.finish();
                    summary.group_sync = progress.group_sync();
                }
                summary
            })
        })
        .await
        .map_err(|e| Error::failed(format!("the replication thread failed: {e}")))?
    });
    if let Some(m) = &exporter {
        m.finish(result.as_ref().map_or(Status::Failed, |s| s.status));
    }
    let mut summary = result?;
    summary.count_from(started);
    report(&summary, args.json, quiet);
    Ok(summary.exit())
}

/// What the signal handler needs to know about the run.
struct Signals {
    /// Set by the first signal: the engines stop consuming, flush, verify and commit.
    stop: Arc<AtomicBool>,
    /// Set once the checks passed and the copy began.
    copying: Arc<AtomicBool>,
    /// With `--json`: who runs, for the line printed on an early exit.
    json: Option<Identity>,
    /// With `--metrics-file`: the final file to write on an early exit.
    metrics: Option<metrics::Exporter>,
    started: Instant,
}

/// First SIGINT/SIGTERM: stop consuming, flush, verify, commit (during the checks before the
/// copy there is nothing to flush or commit: exit 0 at once). Second: exit 130 at once,
/// committing nothing more.
fn watch_signals(s: Signals) -> Result<(), Error> {
    exit::on_signals(move || {
        if s.stop.swap(true, Ordering::SeqCst) {
            progress::say("kreplicate: second signal: exiting now without committing");
            if let Some(m) = &s.metrics {
                m.finish(Status::Interrupted);
            }
            if let Some(who) = &s.json {
                print_json(&Summary::interrupted(who, s.started));
            }
            exit::now(Exit::Interrupted.code());
        }
        if !s.copying.load(Ordering::SeqCst) {
            progress::say(
                "kreplicate: stopped before copying: nothing was consumed, produced or committed",
            );
            if let Some(m) = &s.metrics {
                m.finish(Status::Stopped);
            }
            if let Some(who) = &s.json {
                print_json(&Summary::stopped_before_copying(who, s.started));
            }
            // The checks' threads are still at work: no exit handler may run under them.
            exit::now(Exit::Done.code());
        }
        progress::say(
            "kreplicate: stopping: flushing, verifying and committing (signal again to exit at once)",
        );
    })
}

fn report(summary: &Summary, json: bool, quiet: bool) {
    if !quiet {
        let committed = summary
            .partitions
            .iter()
            .filter(|p| p.committed.is_some())
            .count();
        let skipped = match summary.skipped {
            0 => String::new(),
            n => format!(", skipped {n} that came from the target"),
        };
        eprintln!(
            "kreplicate: {}: copied {} ({}){skipped} in {:.1} s with --guarantee {}; committed positions for {committed} of {}",
            summary.status,
            table::count(summary.records, "record"),
            progress::size(summary.bytes),
            summary.seconds,
            summary.guarantee.unwrap_or_default(),
            table::count(summary.partitions.len() as u64, "partition")
        );
        if let Some(sync) = &summary.group_sync {
            eprintln!("kreplicate: {}", sync.line());
        }
    }
    if let Some(e) = &summary.error {
        eprintln!("kreplicate: error: {}", one_line(e));
    }
    if json {
        print_json(summary);
    }
}

/// clap's error as one line: the error itself, then its value list and "did you mean" tip.
fn clap_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("bad arguments");
    let mut out = first.strip_prefix("error: ").unwrap_or(first).to_string();
    for l in lines {
        if let Some(values) = l.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.push_str("; ");
            out.push_str(values);
        } else if l.starts_with("tip:") {
            out.push_str("; ");
            out.push_str(l);
        }
    }
    out
}

/// Errors are one line, whatever a library put in them.
fn one_line(s: &str) -> String {
    s.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

fn print_json(summary: &Summary) {
    match serde_json::to_string(summary) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("kreplicate: error: cannot write the JSON summary: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage_line(args: &[&str]) -> String {
        let err = cli::command()
            .try_get_matches_from(args.iter().copied())
            .expect_err("a usage error");
        clap_line(&err.to_string())
    }

    #[test]
    fn issue_22_a_duration_with_a_space_names_the_spelling_meant() {
        let args: Vec<OsString> = [
            "kreplicate",
            "--delivery-timeout",
            "5",
            "min",
            "--topics",
            "t",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        assert_eq!(
            spaced_unit(&args).unwrap(),
            "--delivery-timeout '5 min': durations and sizes have no space: write 5min"
        );
        let args: Vec<OsString> = ["kreplicate", "--topics", "5", "--group", "m"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(spaced_unit(&args), None);
    }

    #[test]
    fn clap_errors_keep_their_tip_and_values_on_one_line() {
        let line = usage_line(&["kreplicate", "--topic", "t"]);
        assert!(
            line.contains("'--topic'") && line.contains("tip:") && line.contains("'--topics'"),
            "{line}"
        );
        let line = usage_line(&["kreplicate", "--guarantee", "exactly_once"]);
        assert!(
            line.contains("invalid value 'exactly_once'")
                && line.contains("possible values: none, at-least-once, exactly-once"),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }
}
