//! Continuous discovery: a run without `--until-caught-up` looks at the source's topics
//! again every `--refresh-topics`. New matching topics pass the start's admission rule
//! ([`admission`], permissions included; created with `--create-topics`), deleted ones stop being copied, and a partition count
//! that grew is followed only when the target has (or, with `--create-topics`, gets) as many
//! partitions: a record always keeps its partition number, so it is never copied into the
//! wrong one.
//!
//! The decision is the pure [`changes`]; [`refresh`] reads both clusters and acts on it.

use std::collections::{BTreeSet, HashMap};

use super::admission::{self, Ground};
use super::start::admit_all;
use crate::acl::sync as acl_sync;
use crate::error::{Error, Result};
use crate::options::{RunOptions, TopicSelection};
use crate::topics::drift::compare_configs;
use crate::topics::realise::{add_partitions, realise};
use crate::topics::{cluster_ids, metadata, same_cluster, Metadata, Route};
use crate::topics::{TargetChanges, TopicCheck};

/// How the source's topics moved since the last look.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Newly selected topics (their target not yet checked).
    pub added: Vec<Route>,
    /// Copied topics the source no longer has.
    pub deleted: Vec<Route>,
    /// Copied topics with more source partitions than before: the route with its new count.
    pub grown: Vec<Route>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.deleted.is_empty() && self.grown.is_empty()
    }
}

/// Compares the routes being copied with the source's topics now (pure). Targets named by
/// `rename` that another route already uses are not added (the start-up check refuses
/// such a pair; here the run goes on with the first).
pub fn changes(
    current: &[Route],
    source: &HashMap<String, i32>,
    topics: &TopicSelection,
    exclude: Option<&TopicSelection>,
    rename: &str,
) -> Changes {
    let mut names: BTreeSet<&String> = source
        .keys()
        .filter(|t| match topics {
            TopicSelection::List(l) => l.contains(t),
            TopicSelection::Regex(re) => !t.starts_with("__") && re.is_match(t),
        })
        .collect();
    if let Some(ex) = exclude {
        names.retain(|t| !ex.matches(t));
    }
    let mut out = Changes::default();
    let mut targets: BTreeSet<String> = BTreeSet::new();
    for r in current {
        match source.get(&r.source) {
            None => out.deleted.push(r.clone()),
            Some(&n) if n > r.partitions => out.grown.push(Route {
                partitions: n,
                ..r.clone()
            }),
            Some(_) => {}
        }
        targets.insert(r.target.clone());
    }
    for name in names {
        if current.iter().any(|r| &r.source == name) {
            continue;
        }
        let target = rename.replace("{topic}", name);
        if targets.insert(target.clone()) {
            out.added.push(Route {
                source: name.clone(),
                target,
                partitions: source.get(name).copied().unwrap_or_default(),
            });
        }
    }
    out
}

/// What to do about a source topic that grew to `grown.partitions`.
#[derive(Debug, PartialEq, Eq)]
pub enum Growth {
    /// The target has as many partitions: copy them all.
    Follow,
    /// `--create-topics`: add partitions to the target first.
    AddPartitions,
    /// The run stops (exit 1), saying why.
    Stop(String),
}

/// The decision for a grown source topic whose target has `have` partitions (pure).
pub fn growth(grown: &Route, have: i32, create_topics: bool) -> Growth {
    if have >= grown.partitions {
        Growth::Follow
    } else if create_topics {
        Growth::AddPartitions
    } else {
        Growth::Stop(format!(
            "source topic '{}' grew to {} partitions but target topic '{}' has {have}: add partitions to the target (or run with --create-topics), then run again; nothing was copied into another partition",
            grown.source, grown.partitions, grown.target
        ))
    }
}

/// What a refresh decided.
#[derive(Debug, Default)]
pub struct Refresh {
    /// Every route to copy from now on.
    pub routes: Vec<Route>,
    /// Of those, the new ones (their target topics exist now).
    pub added: Vec<Route>,
    /// Something changed: the source partitions to read must be set again.
    pub changed: bool,
    /// Lines for the user: what to act on, and news (a new topic copied).
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
    /// The smallest `max.message.bytes` of the new target topics, where the target says.
    pub size_limit: Option<u64>,
    /// Target topics created and partitions added (`--create-topics`).
    pub changes: TargetChanges,
}

/// Looks at both clusters and decides what to copy from now on. `skipped` holds topics
/// already warned about (a topic whose target is missing is warned about once, and picked
/// up at a later refresh once its target exists). An error ends the run with its own kind:
/// exit 2 for what a person must fix (a config the target refuses), else exit 1.
pub fn refresh(
    opts: &RunOptions,
    current: &[Route],
    skipped: &mut BTreeSet<String>,
) -> Result<Refresh> {
    let mut out = refresh_topics(opts, current, skipped)?;
    if opts.sync_acls {
        out.warnings.extend(follow_acls(opts, &out.routes));
    }
    Ok(out)
}

/// `--sync-acls` in a continuous run: creates what the target lacks now (new ACLs, and those
/// of new topics). A failure is said and tried again at the next refresh: ACLs never stop
/// the copy.
fn follow_acls(opts: &RunOptions, routes: &[Route]) -> Vec<String> {
    let plan = match acl_sync::plan(opts, routes) {
        Ok(plan) => plan,
        Err(e) => {
            return vec![format!(
                "--sync-acls skipped: {e} (tried again at the next refresh)"
            )]
        }
    };
    // Prefixed ACLs were named at start; new principals are named when their ACLs appear.
    let named = acl_sync::AclPlan {
        prefixed: Vec::new(),
        ..plan.clone()
    };
    let mut out = named.warnings();
    match acl_sync::create(opts, &plan) {
        Ok(note) => out.extend(note),
        Err(e) => out.push(format!("{e} (tried again at the next refresh)")),
    }
    out
}

fn refresh_topics(
    opts: &RunOptions,
    current: &[Route],
    skipped: &mut BTreeSet<String>,
) -> Result<Refresh> {
    let mut out = Refresh {
        routes: current.to_vec(),
        ..Refresh::default()
    };
    let looked = metadata(&opts.from, "source", "--from", opts.timeout)
        .and_then(|s| Ok((s, metadata(&opts.to, "target", "--to", opts.timeout)?)));
    let ((source_meta, source), (target_meta, target)) = match looked {
        Ok(x) => x,
        Err(e) => {
            // A broker blip: the copy itself notices a real outage; look again next time.
            log::warn!("topic refresh skipped: {e}");
            return Ok(out);
        }
    };
    let mut found = changes(
        current,
        &source,
        &opts.topics,
        opts.exclude.as_ref(),
        &opts.rename,
    );
    // Each new topic passes the start's rule; one left out is said once (`skipped`) and looked
    // at again at the next refresh.
    let mut checks = Vec::new();
    if !found.added.is_empty() {
        let ids = cluster_ids(opts, &source_meta, &target_meta);
        let ground = Ground {
            opts,
            same_cluster: same_cluster(opts, &ids),
            target: &target,
        };
        for (r, verdict) in admit_all(&ground, &ids, std::mem::take(&mut found.added)) {
            match verdict.discovery_line(&r, opts) {
                Some(why) => skip(skipped, &mut out.warnings, &r, why),
                None => checks.push(TopicCheck {
                    target_partitions: target.get(&r.target).copied(),
                    route: r,
                    create_configs: Default::default(),
                    drift: Vec::new(),
                }),
            }
        }
        if !checks.is_empty() {
            let missing = admission::permissions(opts, &checks);
            checks.retain(
                |c| match admission::refusal_for_topic(opts, &missing, &c.route) {
                    Some(why) => {
                        let line = admission::left_out(&c.route, &why);
                        skip(skipped, &mut out.warnings, &c.route, line);
                        false
                    }
                    None => {
                        skipped.remove(&c.route.source);
                        true
                    }
                },
            );
        }
    }
    if found.is_empty() && checks.is_empty() {
        return Ok(out);
    }
    for r in &found.deleted {
        out.warnings.push(format!(
            "source topic '{}' was deleted: it is no longer copied (records copied so far stay on target topic '{}')",
            r.source, r.target
        ));
        out.routes.retain(|x| x.source != r.source);
        out.changed = true;
    }
    for r in &found.grown {
        let (notice, changes) = follow_growth(opts, r, &target, &target_meta)?;
        out.warnings.push(notice);
        out.changes.extend(changes);
        if let Some(x) = out.routes.iter_mut().find(|x| x.source == r.source) {
            x.partitions = r.partitions;
        }
        out.changed = true;
    }
    if !checks.is_empty() {
        out.warnings
            .extend(compare_configs(opts, &mut checks, false)?);
        out.changes.extend(realise(opts, &checks, &target_meta)?);
        let targets: Vec<&str> = checks.iter().map(|c| c.route.target.as_str()).collect();
        out.size_limit =
            crate::topics::limits::smallest(&opts.to, &target_meta, &targets, opts.timeout);
        for c in checks {
            // News, not a problem: said as the creation of its target is (issue 35).
            out.notes.push(format!(
                "new source topic '{}' ({}) is copied to '{}'{}",
                c.route.source,
                crate::table::count(c.route.partitions as u64, "partition"),
                c.route.target,
                if c.target_partitions.is_none() {
                    " (created)"
                } else {
                    ""
                }
            ));
            out.routes.push(c.route.clone());
            out.added.push(c.route);
        }
        out.changed = true;
    }
    Ok(out)
}

/// Leaves a new topic out, saying `why` the first time.
fn skip(skipped: &mut BTreeSet<String>, warnings: &mut Vec<String>, r: &Route, why: String) {
    if skipped.insert(r.source.clone()) {
        warnings.push(why);
    }
}

/// Makes the target follow a source topic that grew to `r.partitions` (it has as many, or
/// gets them with `--create-topics`), else the run stops; returns the notice and the
/// partitions added.
fn follow_growth(
    opts: &RunOptions,
    r: &Route,
    target: &HashMap<String, i32>,
    target_meta: &Metadata,
) -> Result<(String, TargetChanges)> {
    let have = target.get(&r.target).copied().unwrap_or_default();
    let mut changes = TargetChanges::default();
    match growth(r, have, opts.create_topics) {
        Growth::Follow => {}
        Growth::AddPartitions => changes.grown = add_partitions(opts, &[(r, have)], target_meta)?,
        Growth::Stop(why) => return Err(Error::failed(why)),
    }
    let notice = format!(
        "source topic '{}' grew to {} partitions: copying them all",
        r.source, r.partitions
    );
    Ok((notice, changes))
}

/// The growth check for source partitions the group assigned before a refresh saw them
/// (librdkafka's own metadata refresh rebalanced it): `routes` with more partitions than the
/// run knows (at least up to the assigned ones) are followed as at a refresh. Returns the
/// routes with their new counts, the notices and the partitions added; nothing when a cluster
/// does not answer (the record's send then waits for its target partition, as for a target
/// grown by hand).
pub fn follow_assigned(
    opts: &RunOptions,
    routes: &[Route],
) -> Result<(Vec<Route>, Vec<String>, TargetChanges)> {
    let looked = metadata(&opts.from, "source", "--from", opts.timeout)
        .and_then(|s| Ok((s, metadata(&opts.to, "target", "--to", opts.timeout)?)));
    let ((_, source), (target_meta, target)) = match looked {
        Ok(x) => x,
        Err(e) => {
            log::warn!("growth check skipped: {e}");
            return Ok(Default::default());
        }
    };
    let (mut grown, mut notices) = (Vec::new(), Vec::new());
    let mut changes = TargetChanges::default();
    for r in routes {
        let partitions = source
            .get(&r.source)
            .copied()
            .unwrap_or(0)
            .max(r.partitions);
        let r = Route {
            partitions,
            ..r.clone()
        };
        let (notice, added) = follow_growth(opts, &r, &target, &target_meta)?;
        notices.push(notice);
        changes.extend(added);
        grown.push(r);
    }
    Ok((grown, notices, changes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(source: &str, partitions: i32) -> Route {
        Route {
            source: source.into(),
            target: format!("b.{source}"),
            partitions,
        }
    }

    fn source(topics: &[(&str, i32)]) -> HashMap<String, i32> {
        topics.iter().map(|(t, n)| (t.to_string(), *n)).collect()
    }

    #[test]
    fn new_deleted_and_grown_topics() {
        let re = TopicSelection::parse("^ev\\..*").unwrap();
        let ex = TopicSelection::parse("ev.skip").unwrap();
        let current = [route("ev.a", 2), route("ev.gone", 1), route("ev.c", 1)];
        let now = source(&[
            ("ev.a", 2),
            ("ev.c", 3),
            ("ev.b", 4),
            ("ev.skip", 1),
            ("other", 1),
            ("__ev.internal", 1),
        ]);
        let c = changes(&current, &now, &re, Some(&ex), "b.{topic}");
        assert_eq!(c.added, vec![route("ev.b", 4)]);
        assert_eq!(c.deleted, vec![route("ev.gone", 1)]);
        assert_eq!(c.grown, vec![route("ev.c", 3)]);
    }

    #[test]
    fn nothing_moved_and_lists_never_grow() {
        let list = TopicSelection::parse("a,b").unwrap();
        let current = [route("a", 1)];
        let now = source(&[("a", 1), ("c", 1)]);
        assert!(changes(&current, &now, &list, None, "b.{topic}").is_empty());
        // A listed topic that appears (created after the start) is added.
        let now = source(&[("a", 1), ("b", 2)]);
        let c = changes(&current, &now, &list, None, "b.{topic}");
        assert_eq!(c.added, vec![route("b", 2)]);
    }

    #[test]
    fn a_grown_topic_is_followed_only_when_the_target_can_follow() {
        let r = route("ev.c", 3);
        assert_eq!(growth(&r, 3, false), Growth::Follow);
        assert_eq!(growth(&r, 4, false), Growth::Follow);
        assert_eq!(growth(&r, 2, true), Growth::AddPartitions);
        match growth(&r, 2, false) {
            Growth::Stop(why) => assert!(
                why.contains("'ev.c' grew to 3 partitions but target topic 'b.ev.c' has 2"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_target_name_in_use_is_not_added_twice() {
        let re = TopicSelection::parse("^x").unwrap();
        let current = [Route {
            source: "x1".into(),
            target: "one".into(),
            partitions: 1,
        }];
        let now = source(&[("x1", 1), ("x2", 1)]);
        assert!(changes(&current, &now, &re, None, "one").added.is_empty());
    }
}
