//! What a run would do before copying ([`inspect`], which writes nothing, so `kreplicate
//! plan` can show it; each topic admitted by [`admission`]), and doing it ([`apply`], through
//! `topics::realise`): create missing topics with the source's partitions and configs, set
//! differing configs with `--sync-configs`.

use std::collections::{BTreeMap, HashSet};

use super::admission::{self, admit, asks_own_records, Ground, Verdict};
use crate::acl::sync::{self as acl_sync, AclPlan};
use crate::error::{Error, Result};
use crate::options::{ClusterSpec, RunOptions};
use crate::origin::Stamp;
use crate::topics::drift::{compare_configs, LaterDrift};
use crate::topics::realise::realise;
use crate::topics::{
    cluster_ids, index, loops, metadata, same_cluster, select, Metadata, Route, TargetChanges,
    TopicCheck,
};
use crate::trail::INDEX_TOPIC;

/// Everything [`inspect`] found.
pub struct Inspection {
    pub topics: Vec<TopicCheck>,
    /// Why a real run would refuse to start (a usage error), if it would.
    pub refusal: Option<String>,
    /// The refusal is for want of permissions: the source group may not be readable either.
    pub denied: bool,
    /// What a real run would warn about at start.
    pub warnings: Vec<String>,
    /// `--sync-acls`: the ACLs a run would create on the target.
    pub acls: Option<AclPlan>,
    /// False when config drift is left to [`LaterDrift`].
    configs_compared: bool,
    target: Metadata,
    /// Both clusters' ids, where they report one (the origin stamp names them).
    ids: (Option<String>, Option<String>),
    index_exists: bool,
}

impl Inspection {
    /// The ids both clusters report (`None` where a broker reports none).
    pub fn reported_ids(&self) -> (Option<&str>, Option<&str>) {
        (self.ids.0.as_deref(), self.ids.1.as_deref())
    }

    /// Target partitions a run creates with `--create-topics` (of missing topics, and those a
    /// target with fewer partitions than its source lacks): empty once created.
    pub fn missing_partitions(&self) -> Vec<(String, i32)> {
        self.topics
            .iter()
            .flat_map(|t| {
                let have = t.target_partitions.unwrap_or(0);
                (have..t.route.partitions).map(|p| (t.route.target.clone(), p))
            })
            .collect()
    }

    /// Source topic → the partitions its target had before the run added some: the others
    /// start at their beginning, like partitions that appear while copying.
    pub fn grown(&self) -> Vec<(String, i32)> {
        self.topics
            .iter()
            .filter_map(|t| match t.target_partitions {
                Some(n) if n < t.route.partitions => Some((t.route.source.clone(), n)),
                _ => None,
            })
            .collect()
    }

    pub fn routes(&self) -> Vec<Route> {
        self.topics.iter().map(|t| t.route.clone()).collect()
    }

    /// Compares configs now if [`inspect`] left it for later (`plan` shows them at once).
    pub fn compare_configs(&mut self, opts: &RunOptions) -> Result<()> {
        if !self.configs_compared {
            let warnings = compare_configs(opts, &mut self.topics, false)?;
            self.warnings.extend(warnings);
            self.configs_compared = true;
        }
        Ok(())
    }
}

/// Reads both clusters and decides what a run would do; writes nothing. An unreachable
/// cluster is an error (exit 1); selection errors are usage errors.
/// The caller checked the properties first ([`crate::kafka::check_properties`]).
pub fn inspect(opts: &RunOptions) -> Result<Inspection> {
    // Both clusters at once: each answer takes a connection setup and a round trip.
    let (source, target) = std::thread::scope(|s| {
        let target = s.spawn(|| metadata(&opts.to, "target", "--to", opts.timeout));
        let source = metadata(&opts.from, "source", "--from", opts.timeout);
        (source, target.join())
    });
    log::debug!("read both clusters' metadata");
    let (source_meta, source_topics) = source?;
    let routes = select(
        &opts.topics,
        opts.exclude.as_ref(),
        &opts.rename,
        &source_topics,
        &opts.from.name,
    )?;
    let (target_meta, target_topics) =
        target.map_err(|_| Error::failed("the target check thread panicked"))??;
    let ids = cluster_ids(opts, &source_meta, &target_meta);
    let mut warnings = Vec::new();
    let ground = Ground {
        opts,
        same_cluster: same_cluster(opts, &ids),
        target: &target_topics,
    };
    let verdicts = admit_all(&ground, &ids, routes);
    let verdicts = not_loops(opts, verdicts, &mut warnings)?;
    // A copy onto itself is named first, then the first target that cannot take its topic
    // (every missing one at once).
    let missing: Vec<&Route> = verdicts
        .iter()
        .filter(|(_, v)| *v == Verdict::NoTarget)
        .map(|(r, _)| r)
        .collect();
    let refusals = |onto: bool| {
        verdicts
            .iter()
            .filter(|(_, v)| (*v == Verdict::OntoItself) == onto)
            .find_map(|(r, v)| match v {
                Verdict::NoTarget => admission::no_targets_refusal(&missing, opts),
                _ => v.start_refusal(r, opts),
            })
    };
    // A target missing without --create-topics refuses the start anyway: then ask whether the
    // broker only hides it, a round trip per topic.
    let absent: Vec<&str> = verdicts
        .iter()
        .filter(|(_, v)| *v == Verdict::NoTarget)
        .map(|(r, _)| r.target.as_str())
        .collect();
    let hidden = match refusals(true) {
        None if !absent.is_empty() => {
            admission::hidden_targets(&target_meta, &absent, opts.timeout)
        }
        _ => Vec::new(),
    };
    let mut refusal = refusals(true)
        .or_else(|| admission::hidden_refusal(opts, &hidden))
        .or_else(|| refusals(false));
    let mut topics: Vec<TopicCheck> = verdicts
        .into_iter()
        .map(|(route, _)| TopicCheck {
            target_partitions: target_topics.get(&route.target).copied(),
            route,
            create_configs: BTreeMap::new(),
            drift: Vec::new(),
        })
        .collect();
    let mut denied = !hidden.is_empty();
    if refusal.is_none() {
        refusal = admission::refusal(opts, &admission::permissions(opts, &topics));
        denied = refusal.is_some();
        log::debug!("checked the permissions");
    }
    if refusal.is_none() {
        refusal = crate::topics::txn_limit::refusal(opts, &target_meta);
    }
    let mut acls = None;
    if refusal.is_none() && opts.sync_acls {
        let routes: Vec<Route> = topics.iter().map(|t| t.route.clone()).collect();
        match acl_sync::plan(opts, &routes) {
            Ok(plan) => {
                warnings.extend(plan.warnings());
                acls = Some(plan);
            }
            Err(Error::Usage(why)) => refusal = Some(why),
            Err(e) => return Err(e),
        }
    }
    // Creating and syncing need the configs before copying; drift alone is reported while
    // the copy starts ([`LaterDrift`]): a broker slow to answer must not delay the copy.
    let creating = opts.create_topics && topics.iter().any(|t| t.target_partitions.is_none());
    let configs_compared = creating || opts.sync_configs;
    if configs_compared {
        warnings.extend(compare_configs(opts, &mut topics, false)?);
        log::debug!("compared the topics' configs");
    }
    Ok(Inspection {
        topics,
        refusal,
        denied,
        warnings,
        acls,
        configs_compared,
        target: target_meta,
        ids,
        index_exists: target_topics.contains_key(INDEX_TOPIC),
    })
}

/// Leaves out the routes that would grow a chain of copies (see [`loops`]), saying so.
fn not_loops(
    opts: &RunOptions,
    verdicts: Vec<(Route, Verdict)>,
    warnings: &mut Vec<String>,
) -> Result<Vec<(Route, Verdict)>> {
    let (mut keep, mut own, mut copies) = (Vec::new(), Vec::new(), Vec::new());
    for (r, v) in verdicts {
        match v {
            Verdict::OwnOutput => own.push(r.source),
            Verdict::OnlyCopies => copies.push(r.source),
            _ => keep.push((r, v)),
        }
    }
    if !own.is_empty() {
        warnings.push(format!(
            "left out source topics this run writes to on the same cluster (--rename makes them from selected topics; copying them would copy copies): {}",
            own.join(", ")
        ));
    }
    if !copies.is_empty() {
        warnings.push(format!(
            "not copied yet: source topics that hold nothing but copies from the target cluster, or no record at all: {} (their target topics are created once they hold a record of their own, so opposite runs never grow a chain of empty topics)",
            copies.join(", ")
        ));
    }
    if keep.is_empty() {
        return Err(Error::usage(format!(
            "nothing to copy from '{}': {}",
            opts.from.name,
            warnings.join("; ")
        )));
    }
    Ok(keep)
}

/// The verdicts of `routes`; the source topics [`admit`] asks about are read together first.
pub(super) fn admit_all(
    ground: &Ground,
    ids: &(Option<String>, Option<String>),
    routes: Vec<Route>,
) -> Vec<(Route, Verdict)> {
    let asked: Vec<&Route> = routes
        .iter()
        .filter(|r| asks_own_records(ground, r))
        .collect();
    let own = own_records(ground.opts, ids, &asked);
    routes
        .into_iter()
        .map(|r| {
            let v = admit(ground, &r, &|r| {
                own.as_ref().is_none_or(|o| o.contains(&r.source))
            });
            (r, v)
        })
        .collect()
}

/// The source topics of `routes` that hold a record of their own (not a copy from the target
/// cluster). Without both clusters' ids nothing is known to be a copy (`None`): every one does.
fn own_records(
    opts: &RunOptions,
    ids: &(Option<String>, Option<String>),
    routes: &[&Route],
) -> Option<HashSet<String>> {
    let stamp = stamp(opts, ids).ok()?;
    let topics: Vec<(&str, i32)> = routes
        .iter()
        .map(|r| (r.source.as_str(), r.partitions))
        .collect();
    Some(loops::holding_own_records(opts, &topics, &stamp))
}

/// Does what [`inspect`] found to do: refuses, creates missing target topics, sets drifted
/// configs with `--sync-configs`.
pub fn apply(opts: &RunOptions, found: Inspection) -> Result<Applied> {
    if let Some(why) = found.refusal {
        return Err(Error::usage(why));
    }
    let stamp = match opts.origin_header {
        true => Some(stamp(opts, &found.ids)?),
        false => None,
    };
    let changes = realise(opts, &found.topics, &found.target)?;
    let (routes, grown) = (found.routes(), found.grown());
    let mut warnings = found.warnings;
    if let Some(plan) = &found.acls {
        warnings.extend(acl_sync::create(opts, plan)?);
    }
    let later = (!found.configs_compared).then(|| LaterDrift(found.topics.clone()));
    let targets: Vec<&str> = found
        .topics
        .iter()
        .map(|t| t.route.target.as_str())
        .collect();
    // The size limits are read while the index is checked: a round trip each.
    let (size_limit, index) = std::thread::scope(|s| {
        let limits = s.spawn(|| {
            crate::topics::limits::smallest(&opts.to, &found.target, &targets, opts.timeout)
        });
        let index = match stamp {
            Some(_) => index::ensure(opts, found.index_exists, &found.target),
            None => Err("--no-origin-header".into()),
        };
        (limits.join().ok().flatten(), index)
    });
    Ok(Applied {
        changes,
        routes,
        grown,
        warnings,
        later,
        stamp,
        index,
        size_limit,
    })
}

/// The origin stamp: both clusters' ids, or the config file's `id` where a broker reports
/// none. A name as spelled on the command line is no identity (two spellings would make two
/// clusters for loop prevention, resume and translation): without an id the run refuses.
pub fn stamp(opts: &RunOptions, ids: &(Option<String>, Option<String>)) -> Result<Stamp> {
    Ok(Stamp {
        source: identity(&ids.0, &opts.from, "--from")?,
        target: identity(&ids.1, &opts.to, "--to")?,
    })
}

/// One cluster's identity in origins: the id it reports, else the config file's `id`.
pub fn identity(reported: &Option<String>, spec: &ClusterSpec, flag: &str) -> Result<String> {
    reported.clone().or_else(|| spec.id.clone()).ok_or_else(|| {
        Error::usage(format!(
            "the {flag} cluster '{}' reports no cluster id, which the origin header needs: name it in the config file (clusters.<NAME>.id) and pass that NAME to {flag}, or run with --no-origin-header",
            spec.name
        ))
    })
}

/// What [`apply`] leaves to the run.
pub struct Applied {
    /// Target topics created and partitions added (`--create-topics`).
    pub changes: TargetChanges,
    pub routes: Vec<Route>,
    /// Source topic → the partitions its target had before this run added the others.
    pub grown: Vec<(String, i32)>,
    /// Warnings to show at start.
    pub warnings: Vec<String>,
    /// Config drift to report while the copy starts.
    pub later: Option<LaterDrift>,
    /// The origin stamp (both clusters' identities), unless `--no-origin-header`.
    pub stamp: Option<Stamp>,
    /// The positions index topic exists on the target (created when missing), so commits
    /// write entries to it; else why not.
    pub index: std::result::Result<(), String>,
    /// The smallest `max.message.bytes` of the target topics, where the target says.
    pub size_limit: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_18_origins_need_a_real_cluster_id() {
        let spec = |id: Option<&str>| ClusterSpec {
            name: "127.0.0.1:9092".into(),
            bootstrap: "127.0.0.1:9092".into(),
            properties: vec![],
            id: id.map(String::from),
        };
        let reported = Some("MkU3OEVBNTcw".to_string());
        assert_eq!(
            identity(&reported, &spec(None), "--from").unwrap(),
            "MkU3OEVBNTcw"
        );
        assert_eq!(
            identity(&None, &spec(Some("east")), "--to").unwrap(),
            "east"
        );
        let err = identity(&None, &spec(None), "--to")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the --to cluster '127.0.0.1:9092' reports no cluster id")
                && err.contains("clusters.<NAME>.id")
                && !err.contains('\n'),
            "{err}"
        );
    }
}
