//! The two copy engines side by side, and the choice between them: `none` and
//! `at-least-once` ([`acked`]) commit acknowledged prefixes to the source group;
//! `exactly-once` ([`exactly_once`]) copies in transactions and the target is its own
//! checkpoint. They share the source and target sides and what sits beneath both loops
//! ([`shared`]: clock, rate limit, topic following, index entries), never each other.

mod acked;
mod exactly_once;
mod foreign;
pub mod positions;
mod shared;

/// Where exactly-once stands on the target, as its resume reads it (`status` shows it).
pub(crate) use exactly_once::checkpoints;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::exit;
use crate::kafka;
use crate::options::{Guarantee, RunOptions};
use crate::preflight;
use crate::report::{Counters, Summary};
use crate::topics;
use crate::{progress, trail};

/// The routes a run copies, and where their partitions without a position start.
pub(crate) struct Routes {
    pub routes: Vec<topics::Route>,
    pub start: crate::source::Start,
}

/// The two clients' settings, and the group protocol the source consumer joins with, as
/// [`kafka::choose_group_protocol`] decided it (none where the run joins no group: `--shard`,
/// exactly-once).
pub(crate) struct Clients {
    pub consumer: rdkafka::ClientConfig,
    pub producer: rdkafka::ClientConfig,
    pub protocol: Option<&'static str>,
}

/// A continuous run following a regex that matches no source topic yet waits for one,
/// looking again every `--refresh-topics` (issue 35, item 12). `--until-caught-up` and
/// `--refresh-topics off` would never copy anything: they are refused as before (exit 2).
fn wait_for_a_topic(opts: &RunOptions, counters: &Counters) -> Result<()> {
    let (crate::options::TopicSelection::Regex(re), Some(every)) =
        (&opts.topics, opts.refresh_topics)
    else {
        return Ok(());
    };
    let mut said = false;
    while !topics::any_selected(opts)? {
        if !said {
            progress::say(&format!(
                "kreplicate: no topic on '{}' matches --topics '{re}' yet: waiting for one, looking again every {} (--refresh-topics)",
                opts.from.name,
                humantime::format_duration(every)
            ));
            counters.set_waiting(Some(format!("a source topic matching '{re}'")));
            said = true;
        }
        std::thread::sleep(every);
    }
    if said {
        log::info!("a source topic matches --topics '{re}': starting");
        counters.set_waiting(Some("checking clusters and topics".into()));
    }
    Ok(())
}

/// The source consumer's group protocol, decided alike for a run and for `plan` (issue 41:
/// `plan` said a run would start that refused a static member under KIP-848's protocol).
/// Whether the source offers KIP-848 is asked while both clusters are checked: a connection
/// and two round trips that would otherwise come before the join.
pub struct GroupProtocol(Option<exit::Task<Option<bool>>>);

impl GroupProtocol {
    /// Starts asking the source, where the run joins a group and the answer matters.
    pub fn probe(opts: &RunOptions) -> GroupProtocol {
        let ask = joins(opts) && kafka::needs_offer(&opts.from);
        GroupProtocol(ask.then(|| {
            let (from, timeout) = (opts.from.clone(), opts.timeout);
            exit::spawn("protocol probe", move || {
                topics::consumer_protocol_offered(&from, timeout)
            })
        }))
    }

    /// The protocol the run's consumer joins with (none for a run that joins no group); a
    /// usage error where the user's properties cannot work with it.
    pub fn choose(self, opts: &RunOptions) -> Result<Option<&'static str>> {
        let offered = self.0.and_then(|p| p.join().flatten());
        joins(opts)
            .then(|| kafka::choose_group_protocol(&opts.from, offered))
            .transpose()
    }
}

/// Whether the run joins the source group (exactly-once and `--shard` assign partitions).
fn joins(opts: &RunOptions) -> bool {
    opts.guarantee != Guarantee::ExactlyOnce && opts.shard.is_none()
}

/// A run that passed every check and is ready to copy.
pub struct Replicator {
    engine: Engine,
    /// What the checks warn about (e.g. target topic configs that differ from the source's).
    pub warnings: Vec<String>,
}

// One engine per run, built once: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum Engine {
    Acked(acked::Acked),
    ExactlyOnce(exactly_once::ExactlyOnce),
}

impl Replicator {
    /// Validates properties, checks both clusters and the topics (creating missing target
    /// topics when asked) and builds the clients. Any error is a usage error: nothing was
    /// consumed, produced or committed.
    pub fn prepare(opts: &RunOptions, counters: Arc<Counters>) -> Result<Self> {
        // Bad properties are refused before anything connects or any thread starts.
        kafka::check_properties(opts)?;
        let probe = GroupProtocol::probe(opts);
        wait_for_a_topic(opts, &counters)?;
        let found = preflight::inspect(opts)?;
        // Decided before anything is written: a refused protocol is bad input (issue 31).
        let protocol = probe.choose(opts)?;
        let mut opts = opts.clone();
        let settled = match found.refusal {
            Some(_) => positions::Settled::default(),
            None => {
                let (source_id, target_id) = found.reported_ids();
                let source_id = source_id.or(opts.from.id.as_deref()).map(String::from);
                let target_id = positions::group_identity(&opts.to, target_id);
                positions::settle(
                    &mut opts,
                    &target_id,
                    source_id.as_deref(),
                    &found.routes(),
                    &found.missing_partitions(),
                )?
            }
        };
        if let Some(why) = &settled.refusal {
            return Err(Error::usage(why.clone()));
        }
        let preflight::Applied {
            changes,
            routes,
            grown,
            mut warnings,
            later,
            stamp,
            index,
            size_limit,
        } = preflight::apply(&opts, found)?;
        announce(&counters, changes);
        log::debug!("target topics ready");
        positions::migrate(&opts, &settled)?;
        warnings.extend(settled.warnings);
        opts.group_is_default = false;
        counters.set_group(&opts.group);
        let opts = &opts;
        // The group is named now (a default one after the target's identity).
        let mut consumer_cfg = kafka::consumer_config(opts)?;
        if let Some(protocol) = protocol {
            if protocol == "consumer" {
                consumer_cfg.set("group.protocol", protocol);
            }
            log::info!("group '{}' joins with the {protocol} protocol", opts.group);
        }
        let mut producer_cfg = kafka::producer_config(opts)?;
        warnings.extend(kafka::fit_batches(&mut producer_cfg, size_limit));
        if let Some(later) = later {
            // Config drift is advice: reported while the copy starts, never delaying it.
            let (opts, counters) = (opts.clone(), counters.clone());
            exit::spawn("config drift", move || {
                for w in later.warnings(&opts) {
                    counters.notice(w);
                }
            });
        }
        let index = match (index, &stamp) {
            (Ok(()), _) => true,
            (Err(_), None) => {
                progress::say("kreplicate: note: --no-origin-header: records carry no origin, so `kreplicate groups` cannot translate positions on this target and an opposite run cannot recognise these records as copies");
                false
            }
            (Err(e), Some(_)) => {
                progress::say(&format!("kreplicate: warning: cannot create the positions index topic {} on '{}' ({e}): the copy goes on, but `kreplicate groups` cannot translate positions of what it copies", trail::INDEX_TOPIC, opts.to.name));
                false
            }
        };
        // Partitions this run added to the target start at their beginning (not `--start`).
        let start = crate::source::Start::new(
            opts.start,
            routes.iter().map(|r| {
                let had = grown.iter().find(|(t, _)| *t == r.source).map(|g| g.1);
                (r.source.as_str(), had.unwrap_or(r.partitions))
            }),
        );
        let routes = Routes { routes, start };
        let clients = Clients {
            consumer: consumer_cfg,
            producer: producer_cfg,
            protocol,
        };
        let engine = match opts.guarantee {
            Guarantee::ExactlyOnce => Engine::ExactlyOnce(exactly_once::ExactlyOnce::new(
                opts, routes, stamp, index, counters, clients,
            )?),
            _ => Engine::Acked(acked::Acked::new(
                opts, routes, stamp, index, counters, clients,
            )?),
        };
        Ok(Replicator { engine, warnings })
    }

    /// Copies until `stop` is set, a failure happens, or (with `--until-caught-up`) every
    /// assigned partition is caught up; then flushes, verifies and commits.
    pub fn run(self, stop: &AtomicBool) -> Summary {
        match self.engine {
            Engine::Acked(e) => e.run(stop),
            Engine::ExactlyOnce(e) => e.run(stop),
        }
    }
}

/// One copy with its progress on the terminal: the checks, then `copy` (which runs the
/// replicator, and whatever must run beside it), then the display's last line. A run that
/// never started prints no progress line, only its error.
pub fn with_progress(
    opts: &RunOptions,
    counters: Arc<Counters>,
    quiet: bool,
    copy: impl FnOnce(Replicator) -> Summary,
) -> Result<Summary> {
    counters.set_waiting(Some("checking clusters and topics".into()));
    let live = progress::start(
        counters.clone(),
        quiet,
        opts.commit_interval,
        opts.delivery_timeout,
    );
    let prepared = Replicator::prepare(opts, counters.clone());
    if prepared.is_ok() {
        counters.set_waiting(None);
    }
    for w in prepared.iter().flat_map(|r| &r.warnings) {
        progress::say(&format!("kreplicate: warning: {w}"));
    }
    let summary = prepared.map(copy);
    if let Some(live) = live {
        live.finish();
    }
    summary
}

/// One line per target topic created or grown (`--create-topics`), printed at once, and the
/// same for the summary.
pub(crate) fn announce(counters: &Counters, changes: topics::TargetChanges) {
    for line in changes.lines() {
        progress::say(&format!("kreplicate: {line}"));
    }
    counters.target_changed(changes);
}
