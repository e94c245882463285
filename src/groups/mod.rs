//! `kreplicate groups`: translate the committed positions of the source's consumer groups to
//! the target, exactly, and commit them to the same-named target groups.
//!
//! For a source group at position X of partition p, the target position is the offset of the
//! first target record whose origin is ≥ X (see [`crate::trail`]), found through the positions
//! index the copy keeps on the target; in active-active, no later than the target position
//! of any source record from X on that was itself copied from the target (issue 18: such a
//! record is not copied back, its original is on the target). A group is refused as a whole (nothing committed for
//! it) when it has active members on the target, or when one of its partitions cannot be
//! translated (ahead of the copy, no provenance). A target group further than the translation
//! keeps its position unless `--allow-rewind`.
//!
//! * `positions`: which groups, their positions on both sides, committing;
//! * `lookup`: the index and the target records it leaves to read;
//! * `batch`: those reads spread over a few threads;
//! * `table`: the rows, the table and the JSON;
//! * `sync`: the same, every interval, during a copy run (`--sync-groups`).

mod batch;
mod lookup;
mod positions;
mod sync;
mod table;

use std::collections::HashMap;
use std::time::Duration;

use rdkafka::consumer::Consumer;

use self::lookup::Target;
pub use self::positions::{listed, Selection};
pub use self::sync::Syncer;
pub use self::table::{positions, Report};
use self::table::{GroupOutcome, Row, RowStatus};
use crate::cli::GroupsArgs;
use crate::config;
use crate::error::{Error, Exit, Result};
use crate::options::{ClusterSpec, TopicSelection};
use crate::topics::{self, Route};
use crate::trail::{self, Translation};

/// What to translate, from `groups` flags or a copy run's `--sync-groups`.
pub struct Request<'a> {
    pub from: &'a ClusterSpec,
    pub to: &'a ClusterSpec,
    pub topics: &'a TopicSelection,
    pub exclude: Option<&'a TopicSelection>,
    pub rename: &'a str,
    pub selection: &'a Selection,
    /// Named groups the source does not know are usage errors (else: not yet, skipped).
    pub strict: bool,
    pub dry_run: bool,
    pub allow_rewind: bool,
    pub timeout: Duration,
}

pub fn run(args: &GroupsArgs) -> Result<Exit> {
    let file = config::load(&args.ends)?;
    let ends = config::endpoints(&args.ends, &file)?;
    let timeout = config::timeout(args.timeout.as_ref(), &file)?;
    let selection = Selection::parse(args.groups.as_deref(), "--groups")?;
    let report = translate(&Request {
        from: &ends.from,
        to: &ends.to,
        topics: &ends.topics,
        exclude: ends.exclude.as_ref(),
        rename: &ends.rename,
        selection: &selection,
        strict: true,
        dry_run: args.dry_run,
        allow_rewind: args.allow_rewind,
        timeout,
    })?;
    if args.json {
        let line = serde_json::to_string(&report)
            .map_err(|e| Error::failed(format!("cannot write the JSON report: {e}")))?;
        println!("{line}");
    } else {
        print!("{}", report.table());
        if report.groups.is_empty() {
            eprintln!("kreplicate: no consumer group has committed positions on these topics");
        }
    }
    Ok(if report.all_translated() {
        Exit::Done
    } else {
        Exit::Failed
    })
}

/// Translates and (unless a dry run) commits the selected groups' positions.
pub fn translate(req: &Request<'_>) -> Result<Report> {
    let timeout = req.timeout;
    let (source, source_topics) = topics::metadata(req.from, "source", "--from", timeout)?;
    let (target, target_topics) = topics::metadata(req.to, "target", "--to", timeout)?;
    let routes = topics::select(
        req.topics,
        req.exclude,
        req.rename,
        &source_topics,
        &req.from.name,
    )?;
    if let Some(r) = routes
        .iter()
        .find(|r| !target_topics.contains_key(&r.target))
    {
        return Err(Error::usage(format!(
            "target topic '{}' does not exist on '{}': copy '{}' first",
            r.target, req.to.name, r.source
        )));
    }
    // The origin headers name each cluster as the copies did: its id, else the config file's
    // `id` (a copy refuses to run without one, so a spelling of `--from` is never it).
    let id_wait = timeout.min(Duration::from_secs(5));
    let cluster = crate::preflight::identity(&source.client().fetch_cluster_id(id_wait), req.from, "--from")
        .map_err(|_| {
            Error::usage(format!(
                "the --from cluster '{}' reports no cluster id, which names it in the copies' origins: name it in the config file (clusters.<NAME>.id), as for the copy",
                req.from.name
            ))
        })?;
    let listed = positions::listed(&source, "source", timeout)?;
    let groups = req.selection.choose(&listed, &req.from.name, req.strict)?;

    let index = Target::new(req.to, timeout)?.index()?;
    let parts: Vec<(String, i32)> = routes
        .iter()
        .flat_map(|r| (0..r.partitions).map(move |p| (r.source.clone(), p)))
        .collect();
    let target_parts: Vec<(String, i32)> = parts
        .iter()
        .map(|(t, p)| (target_of(&routes, t), *p))
        .collect();
    let stands = batch::stands((req.from, req.to), &groups, &parts, &target_parts, timeout)?;
    // Every position to look up, once however many groups stand there.
    let mut wanted: Vec<batch::Wanted> = Vec::new();
    let mut unindexed: Vec<batch::Wanted> = Vec::new();
    for (at_source, _) in &stands {
        for ((topic, p), x) in parts.iter().zip(at_source) {
            let Some(x) = *x else { continue };
            let target_topic = target_of(&routes, topic);
            let key = (cluster.clone(), topic.clone(), *p, target_topic.clone());
            // A partition the copy never wrote to (empty on the source) has no entry of its
            // own; a group that consumed nothing there (X = 0) still translates exactly, by
            // reading that partition, once the copy is known to have run for the topic.
            let copied_topic = || {
                index
                    .keys()
                    .any(|k| k.0 == cluster && k.1 == *topic && k.3 == target_topic)
            };
            if index.contains_key(&key) || (x == 0 && copied_topic()) {
                wanted.push((topic.clone(), *p, target_topic, x));
            } else {
                unindexed.push((topic.clone(), *p, target_topic, x));
            }
        }
    }
    wanted.sort();
    wanted.dedup();
    let mut found = batch::lookups(req.to, &cluster, &index, wanted, timeout)?;
    // Without an identity for the target, no copy from it stamped the source's records.
    if let Ok(back) =
        crate::preflight::identity(&target.client().fetch_cluster_id(id_wait), req.to, "--to")
    {
        returned(req.from, &back, &mut found, timeout)?;
        unindexed.sort();
        unindexed.dedup();
        homecoming(req.from, &back, unindexed, &mut found, timeout)?;
    }

    let mut report = Report {
        from: req.from.name.clone(),
        to: req.to.name.clone(),
        dry_run: req.dry_run,
        groups: Vec::new(),
        partitions: Vec::new(),
    };
    for (group, (at_source, before)) in groups.iter().zip(stands) {
        let mut rows = Vec::new();
        for (((topic, p), x), before) in parts.iter().zip(at_source).zip(before) {
            let Some(x) = x else { continue };
            let target_topic = target_of(&routes, topic);
            let lookup = (topic.clone(), *p, target_topic.clone(), x);
            let hit = found.get(&lookup);
            let (status, target_position) =
                RowStatus::decide(hit.map(|f| f.translation), before, req.allow_rewind);
            rows.push(Row {
                group: group.clone(),
                topic: topic.clone(),
                partition: *p,
                target_topic,
                source_position: x,
                target_position,
                target_before: before,
                status,
                records_read: hit.map_or(0, |f| f.records_read),
            });
        }
        if rows.is_empty() && !matches!(req.selection, Selection::List(_)) {
            // Consumes other topics than --topics: not ours to translate.
            continue;
        }
        let outcome = settle(group, &rows, &target, req)?;
        report.groups.push(outcome);
        report.partitions.extend(rows);
    }
    Ok(report)
}

/// Active-active (issue 18): lowers each translation to the target position of the source's
/// records, from the group's position on, that were copied from the target (cluster id
/// `back`). Only where a copy from the target wrote into that source partition: its positions
/// index on the source names it (a copy without an index cannot be seen, and said so when it
/// started).
fn returned(
    from: &ClusterSpec,
    back: &str,
    found: &mut HashMap<batch::Wanted, lookup::Found>,
    timeout: Duration,
) -> Result<()> {
    let on_source = Target::new(from, timeout)?;
    let copies_back = on_source.index()?;
    for ((topic, p, target_topic, x), f) in found.iter_mut() {
        let Translation::At(t) = f.translation else {
            continue;
        };
        let written_back = copies_back
            .keys()
            .any(|k| k.0 == back && k.1 == *target_topic && k.2 == *p && k.3 == *topic);
        if !written_back {
            continue;
        }
        let (least, read) = on_source.returned((topic, *p, *x), (back, target_topic), t)?;
        f.translation = trail::with_returned(f.translation, least);
        f.records_read += read;
    }
    Ok(())
}

/// Failback (issue 42): a source partition without an index entry on the target (the copy
/// back never wrote to it) whose records a copy from the target wrote (its index on the source
/// names it) translates by their origins: they are the target's own records.
fn homecoming(
    from: &ClusterSpec,
    back: &str,
    unindexed: Vec<batch::Wanted>,
    found: &mut HashMap<batch::Wanted, lookup::Found>,
    timeout: Duration,
) -> Result<()> {
    if unindexed.is_empty() {
        return Ok(());
    }
    let on_source = Target::new(from, timeout)?;
    let copies_back = on_source.index()?;
    for (topic, p, target_topic, x) in unindexed {
        let from_target = copies_back
            .keys()
            .any(|k| k.0 == back && k.1 == target_topic && k.2 == p && k.3 == topic);
        if !from_target {
            continue;
        }
        let (home, read) = on_source.home((&topic, p, x), (back, &target_topic))?;
        if let Some(translation) = home {
            let found_at = lookup::Found {
                translation,
                records_read: read,
            };
            found.insert((topic, p, target_topic, x), found_at);
        }
    }
    Ok(())
}

/// Refuses the group, or commits its translated rows (unless --dry-run).
fn settle(
    group: &str,
    rows: &[Row],
    target: &topics::Metadata,
    req: &Request<'_>,
) -> Result<GroupOutcome> {
    let refuse = |reason: String| GroupOutcome {
        group: group.to_string(),
        status: "refused",
        reason: Some(reason),
        committed: false,
    };
    if let Some(why) = table::refusal(rows) {
        return Ok(refuse(why));
    }
    if let Some(why) = positions::active(target, group, req.timeout)? {
        return Ok(refuse(why));
    }
    let moves: Vec<(String, i32, i64)> = rows
        .iter()
        .filter(|r| r.status == RowStatus::Translated)
        .filter_map(|r| {
            r.target_position
                .map(|t| (r.target_topic.clone(), r.partition, t))
        })
        .collect();
    if req.dry_run || moves.is_empty() {
        return Ok(GroupOutcome {
            group: group.to_string(),
            status: "translated",
            reason: None,
            committed: false,
        });
    }
    let on_target = positions::client(req.to, group, "target")?;
    let committed = positions::commit(&on_target, &moves);
    crate::source::close(&on_target, req.timeout);
    Ok(match committed {
        Ok(()) => GroupOutcome {
            group: group.to_string(),
            status: "translated",
            reason: None,
            committed: true,
        },
        Err(why) => refuse(why),
    })
}

fn target_of(routes: &[Route], source: &str) -> String {
    routes
        .iter()
        .find(|r| r.source == source)
        .map_or_else(|| source.to_string(), |r| r.target.clone())
}
