//! `kreplicate migrate`: a move from cluster A to cluster B in stages that cannot be skipped
//! (see [`Stage`]): plan, copy until the lag is small, wait for the writers to stop, drain
//! and verify, move the consumer groups, report. Each stage's outcome is stored on the target
//! (`state`) before the next begins, so a rerun anywhere goes on where the last one stopped;
//! a stage that ran halfway runs again whole, and each is idempotent (a copy resumes, verify
//! reads, `groups` never moves a group backwards). `--failback` is the same machine from B to
//! A, its state on A.
//!
//! * this module: the stages in their order, and what they print;
//! * `stages`: each stage;
//! * `open`: a migration opened: its flags checked against the stored state;
//! * `outcome`: the `--json` object;
//! * `state`: the stored state and its topic;
//! * `status`: `migrate status`;
//! * `writers`: whether the source's writers stopped.

mod open;
mod outcome;
mod stages;
mod state;
mod status;
mod writers;

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rdkafka::consumer::Consumer;

use self::outcome::Outcome;
use self::state::{Direction, MovedPosition, Stage, State, Store};
use self::writers::Quiet;
use crate::cli::{CopyArgs, EndpointArgs, MigrateArgs, MigrateCommand};
use crate::error::{Error, Exit, Result};
use crate::groups;
use crate::kafka;
use crate::options::{Guarantee, RunOptions, TopicSelection};
use crate::progress;
use crate::report::{Counters, Summary};
use crate::table;
use crate::topics;
use crate::verify;

const MAX_LAG: u64 = 10_000;
const QUIET_FOR: Duration = Duration::from_secs(10);
const WRITERS_TIMEOUT: Duration = Duration::from_secs(300);

/// `kreplicate migrate` and `kreplicate migrate status`.
pub fn run(args: &MigrateArgs) -> Result<Exit> {
    if let Some(MigrateCommand::Status(s)) = &args.command {
        return status::run(s);
    }
    let started = std::time::SystemTime::now();
    let mut out = Outcome::new(args.failback);
    let exit = match migrate(args, started, &mut out) {
        Ok(exit) => exit,
        Err(e) => {
            out.outcome = match e {
                Error::Usage(_) => "refused",
                Error::Failed(_) => "failed",
            };
            out.message = Some(e.to_string());
            if args.json {
                out.print(started, e.exit());
            }
            return Err(e);
        }
    };
    if args.json {
        out.print(started, exit);
    }
    Ok(exit)
}

/// One migration, opened: its options, its stored state, and how the operator is reached.
struct Migration<'a> {
    args: &'a MigrateArgs,
    /// The copies' options (the failback's: B to A).
    opts: RunOptions,
    /// `--from`, `--to` and the topics of every stage's copy (the failback's: B to A).
    ends: EndpointArgs,
    state: State,
    stored: bool,
    stop: Arc<AtomicBool>,
    /// Set while nothing runs that a stop would let end cleanly (the plan, the groups' move,
    /// a prompt on the terminal): a signal then ends the run at once.
    at_once: Arc<AtomicBool>,
    max_lag: u64,
    quiet_for: Duration,
    writers_timeout: Duration,
}

/// What a stage leads to.
enum Step {
    Next(Stage),
    /// The operator must act: the outcome's name, the line, and what is still busy.
    Wait(&'static str, String, Vec<String>),
    /// A signal stopped the stage; it runs again on the next run.
    Stopped,
}

fn migrate(args: &MigrateArgs, started: SystemTime, out: &mut Outcome) -> Result<Exit> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| Error::failed(format!("cannot start the runtime: {e}")))?;
    progress::init_logging(args.verbose);
    let stop = Arc::new(AtomicBool::new(false));
    let at_once = Arc::new(AtomicBool::new(true));
    // What a second signal's `--json` line says: the outcome as of the stage that runs.
    let shown = Arc::new(Mutex::new(out.clone()));
    {
        let _guard = runtime.enter();
        let json = args.json.then(|| (shown.clone(), started));
        watch_signals(stop.clone(), at_once.clone(), json)?;
    }
    let mut m = Migration::open(args, stop, at_once, out, &shown)?;
    let exit = m.run(out, &shown);
    drop(runtime);
    exit
}

/// First signal: the stage stops (a copy flushes and commits) and its state stays stored.
/// Second, or any while no stage can stop cleanly (`at_once`): exit at once, with the `--json`
/// line if asked for. Every stage is idempotent: one cut short runs again whole.
fn watch_signals(
    stop: Arc<AtomicBool>,
    at_once: Arc<AtomicBool>,
    json: Option<(Arc<Mutex<Outcome>>, SystemTime)>,
) -> Result<()> {
    crate::exit::on_signals(move || {
        if stop.swap(true, Ordering::SeqCst) || at_once.load(Ordering::SeqCst) {
            let line = "interrupted; the stage is kept on the target";
            progress::say(&format!("kreplicate: migrate: {line}"));
            if let Some((shown, started)) = &json {
                let mut out = shown
                    .lock()
                    .map(|o| o.clone())
                    .unwrap_or_else(|e| e.into_inner().clone());
                out.outcome = "stopped";
                out.message = Some(line.to_string());
                out.print(*started, Exit::Interrupted);
            }
            crate::exit::now(Exit::Interrupted.code());
        }
        progress::say(
            "kreplicate: migrate: stopping this stage (a copy flushes and commits); the stage is kept on the target (signal again to exit at once)",
        );
    })
}

fn selection_text(s: &TopicSelection) -> String {
    match s {
        TopicSelection::List(names) => names.join(","),
        TopicSelection::Regex(re) => re.as_str().to_string(),
    }
}

impl Migration<'_> {
    fn run(&mut self, out: &mut Outcome, shown: &Mutex<Outcome>) -> Result<Exit> {
        self.say(&format!(
            "'{}' → '{}', at stage {}/6 {}",
            self.opts.from.name,
            self.opts.to.name,
            self.state.stage.number(),
            self.state.stage.as_str()
        ));
        loop {
            out.stage = Some(self.state.stage.as_str());
            if let Ok(mut s) = shown.lock() {
                s.clone_from(out);
            }
            // The copies and the watch of the writers stop cleanly at a signal; the rest ends.
            let stoppable = matches!(
                self.state.stage,
                Stage::Copying | Stage::WaitingForWriters | Stage::Draining
            );
            self.at_once.store(!stoppable, Ordering::SeqCst);
            let stage = self.state.stage;
            let step = match stage {
                Stage::Planned => self.plan(),
                Stage::Copying => self.copy(out),
                Stage::WaitingForWriters => self.writers(),
                Stage::Draining => self.drain(out),
                Stage::Verified => self.move_groups(),
                Stage::Done => {
                    self.report(out);
                    out.outcome = "done";
                    return Ok(Exit::Done);
                }
            };
            let step = step.map_err(|e| {
                e.within(format_args!(
                    "migration '{}' at stage {}/6 {}",
                    self.state.id,
                    stage.number(),
                    stage.as_str()
                ))
            })?;
            out.guarantee = Some(self.state.guarantee.clone()).filter(|g| !g.is_empty());
            match step {
                Step::Next(stage) => {
                    self.state.stage = stage;
                    self.save()?;
                    self.say(&format!("stage {}/6 {}", stage.number(), stage.as_str()));
                }
                Step::Wait(outcome, line, busy) => {
                    out.outcome = outcome;
                    out.waiting_for = busy;
                    self.say(&line);
                    out.message = Some(line);
                    return Ok(Exit::WaitingForOperator);
                }
                Step::Stopped => {
                    out.outcome = "stopped";
                    out.message = Some(format!(
                        "stopped by a signal at stage {}: run again to go on",
                        self.state.stage.as_str()
                    ));
                    return Ok(Exit::Interrupted);
                }
            }
        }
    }

    fn say(&self, line: &str) {
        progress::say(&format!("kreplicate: migrate '{}': {line}", self.state.id));
    }

    fn save(&mut self) -> Result<()> {
        self.state.stamp();
        Store::new(&self.opts.to, self.opts.timeout).write(
            &self.state,
            self.stored,
            self.args.replication_factor,
        )?;
        self.stored = true;
        Ok(())
    }

    /// The copy flags of one stage: a copy to the end as it stands at its start.
    fn copy_args(&self, guarantee: Guarantee) -> CopyArgs {
        CopyArgs {
            ends: self.ends.clone(),
            guarantee: Some(guarantee),
            group: Some(self.opts.group.clone()),
            until_caught_up: true,
            create_topics: self.args.create_topics,
            replication_factor: self.args.replication_factor,
            delivery_timeout: self.args.delivery_timeout.clone(),
            timeout: self.args.timeout.clone(),
            quiet: self.args.quiet,
            verbose: self.args.verbose,
            ..CopyArgs::default()
        }
    }
}

/// At most five of many items, and how many more.
fn shortened(items: &[String]) -> String {
    match items.len() {
        0..=5 => items.join(", "),
        n => format!("{}, and {} more", items[..5].join(", "), n - 5),
    }
}
