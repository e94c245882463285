//! A migration opened: the flags resolved, both clusters named, and the stored state found
//! (or begun) and checked against the flags.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::consumer::Consumer;

use super::outcome::Outcome;
use super::state::{Direction, Stage, State, Store, STATE_TOPIC};
use super::{selection_text, Migration, MAX_LAG, QUIET_FOR, WRITERS_TIMEOUT};
use crate::cli::{CopyArgs, EndpointArgs, MigrateArgs};
use crate::config;
use crate::error::{Error, Result};
use crate::options::Guarantee;
use crate::topics;

impl<'a> Migration<'a> {
    pub(super) fn open(
        args: &'a MigrateArgs,
        stop: Arc<AtomicBool>,
        at_once: Arc<AtomicBool>,
        out: &mut Outcome,
        shown: &Mutex<Outcome>,
    ) -> Result<Self> {
        if args.ends.flow.is_some() {
            return Err(Error::usage(
                "migrate takes --from, --to and --topics (clusters may be config-file names), not --flow",
            ));
        }
        let direction = out.direction;
        let file = config::load(&args.ends)?;
        let ends = config::endpoints(&args.ends, &file)?;
        let topics_text = selection_text(&ends.topics);
        let id = args.id.clone().unwrap_or_else(|| topics_text.clone());
        if id.is_empty() || id.contains('/') {
            return Err(Error::usage(format!(
                "--id '{id}': a migration id is not empty and has no '/'"
            )));
        }
        if direction == Direction::Failback && ends.rename != "{topic}" {
            return Err(Error::usage(
                "--failback copies back to the topics' own names: leave out --rename",
            ));
        }
        let key = State::key(&id, direction);
        // Clusters by the names the config knows them by; the failback's reversed.
        let mut ends_args = EndpointArgs {
            from: Some(ends.from.name.clone()),
            to: Some(ends.to.name.clone()),
            ..args.ends.clone()
        };
        if direction == Direction::Failback {
            std::mem::swap(&mut ends_args.from, &mut ends_args.to);
            std::mem::swap(&mut ends_args.from_property, &mut ends_args.to_property);
        }
        let copy_args = CopyArgs {
            ends: ends_args.clone(),
            guarantee: args.guarantee,
            group: Some(format!("kreplicate.migrate.{key}")),
            until_caught_up: true,
            create_topics: args.create_topics,
            replication_factor: args.replication_factor,
            delivery_timeout: args.delivery_timeout.clone(),
            timeout: args.timeout.clone(),
            quiet: args.quiet,
            verbose: args.verbose,
            ..CopyArgs::default()
        };
        let mut opts = config::resolve(&copy_args, &file)?;
        out.id = Some(id.clone());
        out.from = Some(opts.from.name.clone());
        out.to = Some(opts.to.name.clone());
        if let Ok(mut s) = shown.lock() {
            s.clone_from(out);
        }

        let (source, source_topics) =
            topics::metadata(&opts.from, "source", "--from", opts.timeout)?;
        let (target, target_topics) = topics::metadata(&opts.to, "target", "--to", opts.timeout)?;
        let wait = opts.timeout.min(Duration::from_secs(5));
        let source_id = crate::preflight::identity(
            &source.client().fetch_cluster_id(wait),
            &opts.from,
            "--from",
        )?;
        let target_id =
            crate::preflight::identity(&target.client().fetch_cluster_id(wait), &opts.to, "--to")?;
        if direction == Direction::Failback {
            // The move must be done: B's state says so.
            let forward = Store::new(&opts.from, opts.timeout)
                .read(&id, source_topics.contains_key(STATE_TOPIC))?;
            match forward {
                Some(f) if f.stage == Stage::Done => {}
                Some(f) => {
                    return Err(Error::usage(format!(
                        "migration '{id}' from '{}' to '{}' is at stage {}: fail back once it is done",
                        opts.to.name,
                        opts.from.name,
                        f.stage.as_str()
                    )))
                }
                None => {
                    return Err(Error::usage(format!(
                        "'{}' holds no migration '{id}': --failback reverses a migration that is done (check --id)",
                        opts.from.name
                    )))
                }
            }
        }
        let stored = target_topics.contains_key(STATE_TOPIC);
        let found = Store::new(&opts.to, opts.timeout).read(&key, stored)?;
        let exclude = ends.exclude.as_ref().map(selection_text);
        let state = match found {
            Some(s) => {
                if (s.source_cluster.as_str(), s.target_cluster.as_str())
                    != (source_id.as_str(), target_id.as_str())
                {
                    return Err(Error::usage(format!(
                        "migration '{id}' on '{}' belongs to the clusters {} → {}, not {source_id} → {target_id}: choose another --id",
                        opts.to.name, s.source_cluster, s.target_cluster
                    )));
                }
                if (&s.topics, &s.exclude, &s.rename) != (&topics_text, &exclude, &ends.rename) {
                    return Err(Error::usage(format!(
                        "migration '{id}' moves --topics '{}'{}{}: run it with the same flags, or choose another --id",
                        s.topics,
                        s.exclude.as_ref().map(|e| format!(" --exclude '{e}'")).unwrap_or_default(),
                        match s.rename.as_str() {
                            "{topic}" => String::new(),
                            r => format!(" --rename '{r}'"),
                        }
                    )));
                }
                if let Some(g) = args.guarantee.filter(|g| g.as_str() != s.guarantee) {
                    return Err(Error::usage(format!(
                        "migration '{id}' copies with --guarantee {}: it cannot change to {} halfway (leave out --guarantee)",
                        s.guarantee,
                        g.as_str()
                    )));
                }
                s
            }
            None => State::new(State {
                version: 0,
                id: id.clone(),
                direction,
                source_cluster: source_id,
                target_cluster: target_id,
                topics: topics_text,
                exclude,
                rename: ends.rename.clone(),
                guarantee: String::new(),
                group: opts.group.clone(),
                stage: Stage::Planned,
                updated: String::new(),
                final_ends: BTreeMap::new(),
                groups: Vec::new(),
            }),
        };
        if let Some(g) = [
            Guarantee::None,
            Guarantee::AtLeastOnce,
            Guarantee::ExactlyOnce,
        ]
        .into_iter()
        .find(|g| g.as_str() == state.guarantee)
        {
            opts.guarantee = g;
        }
        Ok(Self {
            args,
            opts,
            ends: ends_args,
            stored,
            state,
            stop,
            at_once,
            max_lag: args.max_lag.unwrap_or(MAX_LAG),
            quiet_for: duration("--quiet-for", args.quiet_for.as_ref(), QUIET_FOR)?,
            writers_timeout: duration(
                "--writers-timeout",
                args.writers_timeout.as_ref(),
                WRITERS_TIMEOUT,
            )?,
        })
    }
}

fn duration(flag: &str, value: Option<&String>, default: Duration) -> Result<Duration> {
    match value {
        None => Ok(default),
        Some(v) => humantime::parse_duration(v)
            .map_err(|_| Error::usage(format!("{flag} '{v}': a duration like 10s or 2m"))),
    }
}
