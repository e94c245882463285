//! `kreplicate groups`: translate the committed positions of the source's consumer groups to
//! the target, exactly, and commit them to the same-named target groups.
//!
//! For a source group at position X of partition p, the target position is the offset of the
//! first target record whose origin is ≥ X (see [`crate::trail`]), found through the positions
//! index the copy keeps on the target. A group is refused as a whole (nothing committed for
//! it) when it has active members on the target, or when one of its partitions cannot be
//! translated (ahead of the copy, no provenance). A target group further than the translation
//! keeps its position unless `--allow-rewind`.
//!
//! * `positions`: which groups, their positions on both sides, committing;
//! * `lookup`: the index and the target records it leaves to read;
//! * `table`: the rows, the table and the JSON.

mod lookup;
mod positions;
mod table;

use std::time::Duration;

use rdkafka::consumer::Consumer;

use self::lookup::Target;
use self::positions::Selection;
use self::table::{GroupOutcome, Report, Row, RowStatus};
use crate::cli::GroupsArgs;
use crate::config;
use crate::error::{Error, Exit, Result};
use crate::topics::{self, Route};
use crate::trail::Translation;

pub fn run(args: &GroupsArgs) -> Result<Exit> {
    let (path, required) = config::config_path(args.ends.config.as_deref());
    let file = config::load_file(path.as_deref(), required)?;
    let ends = config::endpoints(&args.ends, &file)?;
    let timeout = match args.timeout.as_ref().or(file.defaults.timeout.as_ref()) {
        Some(s) => {
            config::parse_duration(s).map_err(|e| Error::usage(format!("--timeout '{s}': {e}")))?
        }
        None => Duration::from_secs(30),
    };
    if timeout.is_zero() {
        return Err(Error::usage("--timeout must be greater than zero"));
    }
    let selection = Selection::parse(args.groups.as_deref())?;

    let (source, source_topics) = topics::metadata(&ends.from, "source", "--from", timeout)?;
    let (target, target_topics) = topics::metadata(&ends.to, "target", "--to", timeout)?;
    let routes = topics::select(&ends.topics, &ends.rename, &source_topics, &ends.from.name)?;
    if let Some(r) = routes
        .iter()
        .find(|r| !target_topics.contains_key(&r.target))
    {
        return Err(Error::usage(format!(
            "target topic '{}' does not exist on '{}': copy '{}' first",
            r.target, ends.to.name, r.source
        )));
    }
    // The origin headers name the source by its cluster id (the name given, without one).
    let cluster = source
        .client()
        .fetch_cluster_id(timeout.min(Duration::from_secs(5)))
        .unwrap_or_else(|| ends.from.name.clone());
    let listed = positions::listed(&source, "source", timeout)?;
    let groups = selection.choose(&listed, &ends.from.name)?;

    let reader = Target::new(&ends.to, timeout)?;
    let index = reader.index()?;
    let parts: Vec<(String, i32)> = routes
        .iter()
        .flat_map(|r| (0..r.partitions).map(move |p| (r.source.clone(), p)))
        .collect();
    let mut report = Report {
        from: ends.from.name.clone(),
        to: ends.to.name.clone(),
        dry_run: args.dry_run,
        groups: Vec::new(),
        partitions: Vec::new(),
    };
    for group in &groups {
        let at_source = positions::committed(
            &positions::client(&ends.from, group, "source")?,
            &parts,
            timeout,
        )?;
        let on_target = positions::client(&ends.to, group, "target")?;
        let target_parts: Vec<(String, i32)> = parts
            .iter()
            .map(|(t, p)| (target_of(&routes, t), *p))
            .collect();
        let before = positions::committed(&on_target, &target_parts, timeout)?;
        let mut rows = Vec::new();
        for (((topic, p), x), before) in parts.iter().zip(at_source).zip(before) {
            let Some(x) = x else { continue };
            let target_topic = target_of(&routes, topic);
            let key = (cluster.clone(), topic.clone(), *p, target_topic.clone());
            let (status, target_position, read) = match index.get(&key) {
                None => (RowStatus::NoProvenance, None, 0),
                Some(entries) => {
                    let subject = (cluster.as_str(), topic.as_str(), *p, target_topic.as_str());
                    let found = reader.translate(subject, entries, x)?;
                    let status = match (found.translation, before) {
                        (Translation::Ahead, _) => RowStatus::AheadOfTheCopy,
                        (Translation::At(t), Some(b)) if b == t => RowStatus::Unchanged,
                        (Translation::At(t), Some(b)) if b > t && !args.allow_rewind => {
                            RowStatus::KeptAhead
                        }
                        (Translation::At(_), _) => RowStatus::Translated,
                    };
                    let at = match found.translation {
                        Translation::At(t) => Some(t),
                        Translation::Ahead => None,
                    };
                    (status, at, found.records_read)
                }
            };
            rows.push(Row {
                group: group.clone(),
                topic: topic.clone(),
                partition: *p,
                target_topic,
                source_position: x,
                target_position,
                target_before: before,
                status,
                records_read: read,
            });
        }
        if rows.is_empty() && matches!(selection, Selection::All | Selection::Regex(_)) {
            // Consumes other topics than --topics: not ours to translate.
            continue;
        }
        let outcome = settle(group, &rows, &target, &on_target, args, timeout)?;
        report.groups.push(outcome);
        report.partitions.extend(rows);
    }
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

/// Refuses the group, or commits its translated rows (unless --dry-run).
fn settle(
    group: &str,
    rows: &[Row],
    target: &topics::Metadata,
    on_target: &rdkafka::consumer::BaseConsumer,
    args: &GroupsArgs,
    timeout: Duration,
) -> Result<GroupOutcome> {
    let refuse = |reason: String| GroupOutcome {
        group: group.to_string(),
        status: "refused",
        reason: Some(reason),
        committed: false,
    };
    if rows.is_empty() {
        return Ok(refuse(format!(
            "it has no committed position on --topics (of {})",
            args.ends.topics.as_deref().unwrap_or("the config's topics")
        )));
    }
    if let Some(r) = rows.iter().find(|r| !r.status.ok()) {
        return Ok(refuse(format!(
            "{}[{}] is {}: nothing committed for this group",
            r.topic,
            r.partition,
            r.status.text()
        )));
    }
    if let Some(why) = positions::active(target, group, timeout)? {
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
    if args.dry_run || moves.is_empty() {
        return Ok(GroupOutcome {
            group: group.to_string(),
            status: "translated",
            reason: None,
            committed: false,
        });
    }
    Ok(match positions::commit(on_target, &moves) {
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
