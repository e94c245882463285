//! Whose positions a run starts from (issue 18), for both engines and `plan`.
//!
//! * The default group names the route: the target cluster's identity (its cluster id, else
//!   the config file's `id`, else its config name) and `--rename` when it is not `{topic}`. How
//!   `--to` is spelled no longer matters, and a copy under another name has positions of its own.
//! * A named flow (`--flow NAME`) has a default group of its own, the route's plus `.<NAME>`
//!   (issue 35): flows between the same clusters no longer share one group, where a cron
//!   flow's join rebalanced a continuous one (classic protocol).
//! * Migration: a default group with no positions on the run's partitions takes those of an
//!   older default group where the target partition holds records, so an existing copy does
//!   not start from nothing; they are committed to the new group first. A flow's group looks
//!   in the route's group (the default before flows had their own), then in the oldest one
//!   (`kreplicate.<TO as spelled>`).
//! * Positions past the source's start for a target partition that never held a record (empty,
//!   or just created) belong to another copy: the run refuses unless `--trust-group-positions`.
//! * A group with no positions while the target already holds copies of this source: said.

use std::collections::HashMap;

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{Offset, TopicPartitionList};

use crate::error::{Error, Result};
use crate::kafka;
use crate::options::{ClusterSpec, Guarantee, RunOptions};
use crate::source;
use crate::topics::Route;

/// The default group of a route: `kreplicate.<target identity>`, plus `.<rename>` unless the
/// topic keeps its name, plus `.<flow>` for a named flow. Kafka group ids take any character;
/// the identity is made safe to read (a config name or a bootstrap list may hold ':' and ',').
pub fn default_group(target: &str, rename: &str, flow: Option<&str>) -> String {
    let mut group = crate::options::kreplicate_group(target);
    if rename != "{topic}" {
        group = format!("{group}.{rename}");
    }
    match flow {
        Some(flow) => format!("{group}.{flow}"),
        None => group,
    }
}

/// The cluster's identity for the default group: the id its brokers report, else the config
/// file's `id`, else the name it was given by.
pub fn group_identity(spec: &ClusterSpec, reported: Option<&str>) -> String {
    reported
        .or(spec.id.as_deref())
        .unwrap_or(&spec.name)
        .to_string()
}

/// What [`settle`] found.
#[derive(Debug, Default)]
pub struct Settled {
    /// Why a run must not start (exit 2).
    pub refusal: Option<String>,
    pub warnings: Vec<String>,
    /// Target topics that hold records that are not copies from this source, said (also among
    /// the warnings) in one line each.
    pub foreign: Vec<String>,
    /// Positions of the old default group to commit to the new one before copying.
    pub(super) migrate: Vec<(String, i32, i64)>,
}

/// Names the group (a default one after the target's identity and the rename), reads its
/// positions (or the old default group's), and checks that they belong to this route.
/// `source_id` names the source in origin headers; `empty` lists target partitions known to
/// be empty (just created, or missing for `plan`).
pub fn settle(
    opts: &mut RunOptions,
    target_id: &str,
    source_id: Option<&str>,
    routes: &[Route],
    empty: &[(String, i32)],
) -> Result<Settled> {
    let spelled = opts.group.clone();
    // Older default groups, newest first, with what they were.
    let mut older = Vec::new();
    if opts.group_is_default {
        opts.group = default_group(target_id, &opts.rename, opts.flow.as_deref());
        if opts.flow.is_some() {
            older.push((
                default_group(target_id, &opts.rename, None),
                "the route's default group before each named flow had its own",
            ));
        }
        // Before issue 18: `kreplicate.<TO as spelled>` (config names it so).
        older.push((
            spelled.clone(),
            "the default group before it was named after the target cluster",
        ));
        older.retain(|(g, _)| *g != opts.group);
    }
    let parts: Vec<(&Route, i32)> = routes
        .iter()
        .flat_map(|r| (0..r.partitions).map(move |p| (r, p)))
        .collect();
    let mut out = Settled::default();
    if parts.is_empty() {
        return Ok(out);
    }
    let mut positions = committed(opts, &opts.group, &parts)?;
    let target_bounds = target_bounds(opts, &parts, empty)?;
    let holds_records = |r: &Route, p: i32| {
        target_bounds
            .get(&(r.target.clone(), p))
            .is_none_or(|(_, high)| *high > 0)
    };
    for (legacy, what) in &older {
        if !positions.is_empty() {
            break;
        }
        let old = committed(opts, legacy, &parts)?;
        // The old group named no route (or flow): its positions count only where this target
        // holds records (an empty target is another copy's, started afresh).
        for (r, p) in &parts {
            if let Some(&n) = old.get(&(r.source.clone(), *p)) {
                if holds_records(r, *p) {
                    positions.insert((r.source.clone(), *p), n);
                    out.migrate.push((r.source.clone(), *p, n));
                }
            }
        }
        if !out.migrate.is_empty() {
            out.warnings.push(format!(
                "group '{}' has no positions yet: starting from those of '{legacy}', {what}, for {} (committed to '{}' first)",
                opts.group,
                crate::table::count(out.migrate.len() as u64, "partition"),
                opts.group
            ));
        }
    }
    // The target's tails answer two questions; read once for both.
    let first_run = positions.is_empty() && opts.guarantee != Guarantee::ExactlyOnce;
    let tails = match source_id {
        Some(id) if opts.origin_header || first_run => Some(super::foreign::read_tails(
            opts,
            id,
            &parts,
            &target_bounds,
        )?),
        _ => None,
    };
    if let (Some(tails), true) = (&tails, opts.origin_header) {
        out.foreign = tails.foreign_warnings(&parts);
        out.warnings.extend(out.foreign.iter().cloned());
    }
    if positions.is_empty() {
        if let (Some(tails), true) = (&tails, first_run) {
            if let Some(copied) = tails.holding_copies() {
                out.warnings.push(format!(
                    "group '{}' has no positions, but {copied} copies of this source (made under another group: another --group, or the default group before it was named after the target cluster): this run copies from --start {} again; to resume instead, stop it and pass that group with --group",
                    opts.group,
                    match opts.start {
                        crate::options::StartPosition::Earliest => "earliest",
                        crate::options::StartPosition::Latest => "latest",
                    }
                ));
            }
        }
    } else if !opts.trust_group_positions && !told_to_skip(opts) {
        out.refusal = foreign_positions(opts, &parts, &positions, &target_bounds)?;
    }
    Ok(out)
}

/// `--start latest` and `--on-gap latest` commit positions past records the target never
/// received (the run's own decision to skip them): an empty target behind such positions is
/// what they leave, not another copy's.
fn told_to_skip(opts: &RunOptions) -> bool {
    opts.start == crate::options::StartPosition::Latest
        || opts.on_gap == crate::options::GapPolicy::Latest
}

/// Commits the old default group's positions to the new one (no group join: an OffsetCommit
/// for a group without members).
pub fn migrate(opts: &RunOptions, settled: &Settled) -> Result<()> {
    if settled.migrate.is_empty() {
        return Ok(());
    }
    let mut tpl = TopicPartitionList::new();
    for (t, p, n) in &settled.migrate {
        let _ = tpl.add_partition_offset(t, *p, Offset::Offset(*n));
    }
    let consumer: BaseConsumer = kafka::reader_config(&opts.from, &opts.group, &[])
        .create()
        .map_err(|e| kafka::creation_error("source", e))?;
    let done = consumer.commit(&tpl, CommitMode::Sync);
    // A list that went through librdkafka holds partition references: the client's destroy
    // would wait for them forever.
    drop(tpl);
    let done = done.map_err(|e| {
        Error::failed(format!(
            "cannot commit the old default group's positions to '{}': {e}",
            opts.group
        ))
    });
    source::close(&consumer, opts.timeout);
    done
}

/// A group's committed positions on some source partitions (OffsetFetch: no join).
fn committed(
    opts: &RunOptions,
    group: &str,
    parts: &[(&Route, i32)],
) -> Result<HashMap<(String, i32), i64>> {
    let consumer: BaseConsumer = kafka::reader_config(&opts.from, group, &[])
        .create()
        .map_err(|e| kafka::creation_error("source", e))?;
    let mut tpl = TopicPartitionList::new();
    for (r, p) in parts {
        tpl.add_partition(&r.source, *p);
    }
    let got = source::group_positions(&consumer, &tpl, group, opts.timeout);
    source::close(&consumer, opts.timeout);
    got
}

/// (low, high) of every target partition, from a Fetch; partitions in `empty` are (0, 0).
fn target_bounds(
    opts: &RunOptions,
    parts: &[(&Route, i32)],
    empty: &[(String, i32)],
) -> Result<HashMap<(String, i32), (i64, i64)>> {
    let mut out = HashMap::new();
    let mut tpl = TopicPartitionList::new();
    for (r, p) in parts {
        if empty.iter().any(|(t, n)| *t == r.target && n == p) {
            out.insert((r.target.clone(), *p), (0, 0));
        } else {
            // At the end: the Fetch made there carries the bounds and no records (reading from
            // the first offset fetched and decompressed up to 1 MB a partition).
            let _ = tpl.add_partition_offset(&r.target, *p, Offset::End);
        }
    }
    if tpl.count() == 0 {
        return Ok(out);
    }
    let reader = target_reader(opts)?;
    let found = source::fetched_bounds(&reader, &tpl, opts.timeout);
    drop(tpl);
    source::close(&reader, opts.timeout);
    let found =
        found.map_err(|e| Error::failed(format!("cannot read the target partitions: {e}")))?;
    out.extend(found);
    Ok(out)
}

fn target_reader(opts: &RunOptions) -> Result<BaseConsumer> {
    let group = format!("{}.check", opts.group);
    kafka::reader_config(&opts.to, &group, &[("fetch.wait.max.ms", "10")])
        .create()
        .map_err(|e| kafka::creation_error("target", e))
}

/// Source partitions whose group position is past the source's start while their target
/// partition never held a record: the refusal, naming a few of them.
fn foreign_positions(
    opts: &RunOptions,
    parts: &[(&Route, i32)],
    positions: &HashMap<(String, i32), i64>,
    target_bounds: &HashMap<(String, i32), (i64, i64)>,
) -> Result<Option<String>> {
    let suspects: Vec<(&Route, i32, i64)> = parts
        .iter()
        .filter_map(|(r, p)| {
            let pos = *positions.get(&(r.source.clone(), *p))?;
            let (_, high) = *target_bounds.get(&(r.target.clone(), *p))?;
            (high == 0 && pos > 0).then_some((*r, *p, pos))
        })
        .collect();
    if suspects.is_empty() {
        return Ok(None);
    }
    let consumer: BaseConsumer = kafka::reader_config(&opts.from, &opts.group, &[])
        .create()
        .map_err(|e| kafka::creation_error("source", e))?;
    let mut named = Vec::new();
    for (r, p, pos) in suspects {
        // The source's first offset (ListOffsets EARLIEST); a position at it skips nothing.
        let low = consumer.fetch_watermarks(&r.source, p, opts.timeout);
        let (low, _) = low.map_err(|e| {
            source::close(&consumer, opts.timeout);
            Error::failed(format!("cannot read the start of {}[{p}]: {e}", r.source))
        })?;
        if pos > low {
            named.push(format!(
                "{}[{p}] at {pos} (source {}[{p}] starts at {low})",
                r.target, r.source
            ));
        }
    }
    source::close(&consumer, opts.timeout);
    if named.is_empty() {
        return Ok(None);
    }
    let n = named.len();
    named.truncate(3);
    let more = if n > 3 {
        format!(" and {} more", n - 3)
    } else {
        String::new()
    };
    Ok(Some(format!(
        "group '{}' holds positions past the source's start for target partitions that hold no record: {}{more}; they belong to another copy, and starting there would never copy the records before them. Use another --group (or leave it out: the default names the target cluster and --rename), or pass --trust-group-positions to start there anyway",
        opts.group,
        named.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_18_the_default_group_names_the_target_and_the_rename() {
        assert_eq!(
            default_group("MkU3OEVBNTcw", "{topic}", None),
            "kreplicate.MkU3OEVBNTcw"
        );
        assert_eq!(
            default_group("MkU3OEVBNTcw", "backup.{topic}", None),
            "kreplicate.MkU3OEVBNTcw.backup.{topic}"
        );
        assert_eq!(
            default_group("b1:9092,b2:9092", "{topic}", None),
            "kreplicate.b1_9092_b2_9092"
        );
        // Issue 35: a named flow has a group of its own.
        assert_eq!(
            default_group("MkU3OEVBNTcw", "backup.{topic}", Some("orders-dr")),
            "kreplicate.MkU3OEVBNTcw.backup.{topic}.orders-dr"
        );
        let spec = |id: Option<&str>| ClusterSpec {
            name: "prod".into(),
            bootstrap: "h:1".into(),
            properties: vec![],
            id: id.map(String::from),
        };
        assert_eq!(group_identity(&spec(None), Some("X")), "X");
        assert_eq!(group_identity(&spec(Some("east")), Some("X")), "X");
        assert_eq!(group_identity(&spec(Some("east")), None), "east");
        assert_eq!(group_identity(&spec(None), None), "prod");
    }
}
