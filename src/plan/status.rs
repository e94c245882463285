//! `kreplicate status`: whether a copy runs and how far behind it is, seen from outside (issue
//! 35, item 16): the source group's live members (who, from which host), its committed
//! positions against each partition's end ([`super::positions`], as `plan` reads them), and for
//! exactly-once the position the target holds, which is where the run resumes
//! ([`crate::engine::checkpoints`]). Nothing is joined, committed or written. Without `--flow`
//! and `--topics`, every flow of the config file that names its topics is shown.

use std::time::Duration;

use rdkafka::consumer::Consumer;
use serde::Serialize;

use crate::cli::CopyArgs;
use crate::config;
use crate::engine::{self, positions as default_group};
use crate::error::{Error, Exit, Result};
use crate::kafka::admin::groups::{self, Member};
use crate::options::{Guarantee, RunOptions};
use crate::report::JSON_VERSION;
use crate::table;
use crate::topics::{self, Route};

/// Longest wait for a cluster's id (it names the default group and the copies' origin).
const ID_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Serialize)]
struct Status {
    version: u32,
    flows: Vec<FlowStatus>,
}

/// One flow: its group, whether a copy of it runs, and per source partition where it stands.
#[derive(Debug, Serialize)]
struct FlowStatus {
    flow: Option<String>,
    from: String,
    to: String,
    group: String,
    guarantee: &'static str,
    /// A member of the group is alive (at-least-once and none; exactly-once joins no group,
    /// so false says nothing there).
    running: bool,
    /// The group as the source's coordinator describes it (absent: the broker knows no such
    /// group).
    state: Option<String>,
    members: Vec<Member>,
    partitions: Vec<PartitionStatus>,
    /// Records between each partition's position and its end, summed (partitions whose end
    /// the source did not give in time left out).
    lag: i64,
}

#[derive(Debug, Serialize)]
struct PartitionStatus {
    topic: String,
    partition: i32,
    /// The source group's committed position (exactly-once commits it after each transaction,
    /// for lag monitoring only).
    committed: Option<i64>,
    /// exactly-once: the position after the newest copy the target holds, for
    /// read_committed readers; where the run resumes.
    target_position: Option<i64>,
    end_offset: Option<i64>,
    /// Records from `target_position` under exactly-once, else from `committed` (without
    /// either, what a run would copy: from where --start says) to the end.
    lag: Option<i64>,
}

/// Runs `status`: a table per flow on stdout, or one JSON object with `--json`.
pub fn run(args: &CopyArgs) -> Result<Exit> {
    let (path, required) = config::config_path(args.ends.config.as_deref());
    let file = config::load_file(path.as_deref(), required)?;
    let every_flow = args.ends.flow.is_none()
        && args.ends.topics.is_none()
        && file.defaults.topics.is_none()
        && !file.flows.is_empty();
    let flows: Vec<Option<String>> = match every_flow {
        true => file.flows.keys().cloned().map(Some).collect(),
        false => vec![args.ends.flow.clone()],
    };
    let mut status = Status {
        version: JSON_VERSION,
        flows: Vec::new(),
    };
    for flow in flows {
        let file = config::load_file(path.as_deref(), required)?.with_flow(flow.as_deref())?;
        let mut opts = config::resolve(args, &file)?;
        status.flows.push(flow_status(&mut opts)?);
    }
    if args.json {
        let line = serde_json::to_string(&status)
            .map_err(|e| Error::failed(format!("cannot write the status as JSON: {e}")))?;
        println!("{line}");
    } else {
        for (i, f) in status.flows.iter().enumerate() {
            if i > 0 {
                println!();
            }
            print!("{}", f.human());
        }
    }
    Ok(Exit::Done)
}

fn flow_status(opts: &mut RunOptions) -> Result<FlowStatus> {
    let (source, source_topics) = topics::metadata(&opts.from, "source", "--from", opts.timeout)?;
    let (target, target_topics) = topics::metadata(&opts.to, "target", "--to", opts.timeout)?;
    let routes = topics::select(
        &opts.topics,
        opts.exclude.as_ref(),
        &opts.rename,
        &source_topics,
        &opts.from.name,
    )?;
    // The group a run of these flags uses, named as the run names it.
    if opts.group_is_default {
        let reported = target.client().fetch_cluster_id(ID_WAIT);
        let target_id = default_group::group_identity(&opts.to, reported.as_deref());
        opts.group = default_group::default_group(&target_id, &opts.rename, opts.flow.as_deref());
    }
    let rk = source.client().native_ptr();
    let view = groups::view(rk, &opts.group, opts.timeout).map_err(|e| {
        Error::failed(format!(
            "cannot describe group '{}' on the source: {e}",
            opts.group
        ))
    })?;
    let mut found = super::positions(opts, &routes)?;
    let held = match opts.guarantee {
        Guarantee::ExactlyOnce => {
            let reported = source.client().fetch_cluster_id(ID_WAIT);
            let copied: Vec<&Route> = routes
                .iter()
                .filter(|r| target_topics.contains_key(&r.target))
                .collect();
            target_positions(opts, reported.or(opts.from.id.clone()), &copied)?
        }
        _ => Default::default(),
    };
    let mut partitions = Vec::new();
    for r in &routes {
        for p in 0..r.partitions {
            let Some(plan) = found.remove(&(r.source.clone(), p)) else {
                continue;
            };
            let target_position = held.get(&(r.source.clone(), p)).copied();
            // What a run would copy from where it stands: exactly-once goes on after the copies
            // the target holds, the others from the group's position (plan's count).
            let lag = match (target_position, plan.end_offset) {
                (Some(at), Some(end)) => Some((end - at).max(0)),
                _ => plan.records_to_copy,
            };
            partitions.push(PartitionStatus {
                topic: r.source.clone(),
                partition: p,
                committed: plan.committed,
                target_position,
                end_offset: plan.end_offset,
                lag,
            });
        }
    }
    let view = view.unwrap_or_default();
    let running = opts.guarantee != Guarantee::ExactlyOnce && view.busy();
    Ok(FlowStatus {
        flow: opts.flow.clone(),
        from: opts.from.name.clone(),
        to: opts.to.name.clone(),
        group: opts.group.clone(),
        guarantee: opts.guarantee.as_str(),
        running,
        state: (!view.state.is_empty()).then(|| view.state.clone()),
        lag: partitions.iter().filter_map(|p| p.lag).sum(),
        members: view.members,
        partitions,
    })
}

/// Where exactly-once stands on each target partition, read as its resume reads it.
fn target_positions(
    opts: &RunOptions,
    source_id: Option<String>,
    routes: &[&Route],
) -> Result<std::collections::HashMap<(String, i32), i64>> {
    let mut out = std::collections::HashMap::new();
    // Without an id for the source, no copy stamped an origin the target could show.
    let Some(source_id) = source_id else {
        return Ok(out);
    };
    let group = format!("{}.status", opts.group);
    let targets: Vec<(&str, Vec<(&str, i32)>)> = routes
        .iter()
        .map(|r| {
            let parts = (0..r.partitions).map(|p| (r.source.as_str(), p)).collect();
            (r.target.as_str(), parts)
        })
        .collect();
    let reader = (&opts.to, group.as_str(), opts.timeout);
    let found = engine::checkpoints(reader, &source_id, &targets)?;
    out.extend(found.into_iter().map(|(k, v)| (k, v.get())));
    Ok(out)
}

/// `a copy is running: 1 active member, kreplicate.orders-dr on host 10.0.0.5` (`status`, and
/// `plan` of a copy that runs already).
pub(super) fn running(members: &[Member]) -> String {
    let who: Vec<String> = members
        .iter()
        .map(|m| format!("{} on host {}", m.client_id, m.host))
        .collect();
    format!(
        "a copy is running: {}, {}",
        table::count(members.len() as u64, "active member"),
        match who.is_empty() {
            true => "none listed".to_string(),
            false => who.join(", "),
        }
    )
}

impl FlowStatus {
    fn human(&self) -> String {
        let mut out = match &self.flow {
            Some(f) => format!("flow '{f}': "),
            None => String::new(),
        };
        out.push_str(&format!(
            "copy from {} to {} with --guarantee {}, group '{}'\n",
            self.from, self.to, self.guarantee, self.group
        ));
        let state = self.state.as_deref().unwrap_or("unknown to the source");
        if self.running {
            out.push_str(&format!(
                "{} (group state {state})\n",
                running(&self.members)
            ));
        } else if self.guarantee == Guarantee::ExactlyOnce.as_str() {
            out.push_str("exactly-once copies join no group: whether one runs is not seen here; the target's positions are where the next transaction goes on from\n");
        } else {
            out.push_str(&format!(
                "no copy is running: the group has no active member (group state {state})\n"
            ));
        }
        let opt = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |n| n.to_string());
        let eos = self.guarantee == Guarantee::ExactlyOnce.as_str();
        let mut header = vec!["PARTITION", "COMMITTED"];
        if eos {
            header.push("ON TARGET");
        }
        header.extend(["END", "LAG"]);
        let mut rows = vec![header.into_iter().map(String::from).collect::<Vec<_>>()];
        for p in &self.partitions {
            let mut row = vec![format!("{}[{}]", p.topic, p.partition), opt(p.committed)];
            if eos {
                row.push(opt(p.target_position));
            }
            row.extend([opt(p.end_offset), opt(p.lag)]);
            rows.push(row);
        }
        let right: Vec<usize> = (1..rows[0].len()).collect();
        out.push_str(&table::aligned(&rows, &right));
        out.push_str(&format!(
            "lag: {}\n",
            table::count(self.lag as u64, "record")
        ));
        out
    }
}
