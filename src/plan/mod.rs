//! `kreplicate plan`: what a copy run with the same flags would do, without writing anything.
//!
//! It resolves the flags like a run, checks the client properties, reads both clusters'
//! topics and configs ([`preflight::inspect`]: nothing is created or altered), and reads the
//! group's committed positions and each partition's end. The end comes from a Fetch
//! response (librdkafka's cached watermarks), never ListOffsets LATEST, which tansu gets
//! wrong: each partition is assigned at its start and polled until it answered; records
//! read on the way are dropped. Exit 0 when a real run would start, 2 when it would refuse.

mod report;
mod status;

pub use status::run as status;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};

use self::report::PartitionPlan;
pub use self::report::Plan;
use crate::cli::CopyArgs;
use crate::config;
use crate::engine::{positions, GroupProtocol};
use crate::error::{Error, Exit, Result};
use crate::kafka;
use crate::options::{Guarantee, RunOptions};
use crate::preflight;
use crate::source::{self, classify, Polled};
use crate::topics::Route;

/// Runs `plan`; prints the plan (table on stdout, or one JSON object with `--json`).
pub fn run(args: &CopyArgs) -> Result<Exit> {
    let plan = make(args)?;
    if args.json {
        let line = serde_json::to_string(&plan)
            .map_err(|e| Error::failed(format!("cannot write the plan as JSON: {e}")))?;
        println!("{line}");
    } else {
        print!("{}", plan.human());
    }
    Ok(if plan.refusal.is_some() {
        Exit::Usage
    } else {
        Exit::Done
    })
}

/// The plan of a copy run with these flags (its `refusal` says why a run would refuse).
pub fn make(args: &CopyArgs) -> Result<Plan> {
    let file = config::load(&args.ends)?;
    let mut opts = config::resolve(args, &file)?;
    // A real run refuses bad client properties before it connects.
    kafka::check_properties(&opts)?;
    let probe = GroupProtocol::probe(&opts);
    let mut found = preflight::inspect(&opts)?;
    // The run refuses a protocol before anything else it decides.
    if let Err(e) = probe.choose(&opts) {
        found.refusal = Some(e.to_string());
    }
    found.compare_configs(&opts)?;
    // As a run would: the group named, its positions checked (nothing committed).
    let (source_id, target_id) = found.reported_ids();
    let source_id = source_id.or(opts.from.id.as_deref()).map(String::from);
    let target_id = positions::group_identity(&opts.to, target_id);
    let mut foreign = Vec::new();
    if found.refusal.is_none() {
        let settled = positions::settle(
            &mut opts,
            &target_id,
            source_id.as_deref(),
            &found.routes(),
            &found.missing_partitions(),
        )?;
        found.refusal = settled.refusal;
        found.warnings.extend(settled.warnings);
        foreign = settled.foreign;
    } else if opts.group_is_default {
        // Named as a run names it, refusing or not: the positions shown are that group's.
        opts.group = positions::default_group(&target_id, &opts.rename, opts.flow.as_deref());
    }
    if let (None, true) = (&found.refusal, opts.origin_header) {
        let ids = found.reported_ids();
        let ids = (ids.0.map(String::from), ids.1.map(String::from));
        found.refusal = preflight::stamp(&opts, &ids).err().map(|e| e.to_string());
    }
    // A copy of this group that runs already: a real run would join it and share its
    // partitions (at-least-once, none; exactly-once joins no group). Not said when the group
    // cannot be described: the plan stands without it.
    if opts.guarantee != Guarantee::ExactlyOnce {
        if let Ok(source) = kafka::admin_config(&opts.from).create::<BaseConsumer>() {
            let rk = source.client().native_ptr();
            if let Ok(Some(g)) = kafka::admin::groups::view(rk, &opts.group, opts.timeout) {
                if g.busy() {
                    found.warnings.push(format!(
                        "{} (group '{}'): a real run would join that group and share its partitions; kreplicate status shows its lag",
                        status::running(&g.members),
                        opts.group
                    ));
                }
            }
        }
    }
    let positions = match found.denied {
        true => HashMap::new(),
        false => positions(&opts, &found.routes())?,
    };
    let mut plan = Plan::new(&opts, &found, positions);
    plan.foreign = foreign;
    Ok(plan)
}

/// The group's committed position and the partition's bounds, per source partition (`plan`,
/// and `status`).
fn positions(opts: &RunOptions, routes: &[Route]) -> Result<HashMap<(String, i32), PartitionPlan>> {
    let consumer: BaseConsumer = kafka::reader_config(&opts.from, &opts.group, &[])
        .create()
        .map_err(|e| kafka::creation_error("source", e))?;
    let mut all = TopicPartitionList::new();
    for r in routes {
        for p in 0..r.partitions {
            all.add_partition(&r.source, p);
        }
    }
    // OffsetFetch only: reading a group's positions does not join it.
    let committed =
        crate::source::committed_positions(&consumer, &all, opts.timeout).map_err(|e| {
            Error::failed(format!(
                "cannot read the group's committed positions on the source (group '{}'): {e}",
                opts.group
            ))
        })?;
    let mut start = TopicPartitionList::new();
    let mut out = HashMap::new();
    for e in committed.elements() {
        let pos = match e.offset() {
            Offset::Offset(n) => Some(n),
            _ => None,
        };
        let at = pos.map_or(Offset::Beginning, Offset::Offset);
        let _ = start.add_partition_offset(e.topic(), e.partition(), at);
        out.insert(
            (e.topic().to_string(), e.partition()),
            PartitionPlan::new(e.partition(), pos),
        );
    }
    drop(committed);
    source::assign_with_leaders(&consumer, &start)
        .map_err(|e| Error::failed(format!("cannot read the source partitions: {e}")))?;
    let mut pending: HashMap<(String, i32), ()> = out.keys().map(|k| (k.clone(), ())).collect();
    let deadline = Instant::now() + opts.timeout;
    while !pending.is_empty() && Instant::now() < deadline {
        let (topic, partition) = match classify(consumer.poll(Duration::from_millis(100))) {
            Polled::Record(m) => {
                use rdkafka::message::Message;
                (m.topic().to_string(), m.partition())
            }
            // A partition-EOF names only the partition: check every topic's cache.
            Polled::End(_) | Polled::Idle => {
                pending.retain(|(t, p), ()| source::cached_watermarks(&consumer, t, *p).is_none());
                continue;
            }
            Polled::Gap(_) | Polled::Fatal(_) | Polled::Transient(_) => continue,
        };
        if source::cached_watermarks(&consumer, &topic, partition).is_some() {
            pending.remove(&(topic, partition));
        }
    }
    for ((topic, partition), plan) in out.iter_mut() {
        let bounds = source::cached_watermarks(&consumer, topic, *partition);
        plan.set_bounds(bounds, opts.start);
    }
    source::close(&consumer, opts.timeout);
    if opts.guarantee == Guarantee::ExactlyOnce {
        // The target's origin headers decide where exactly-once resumes: the group's
        // positions (committed after each transaction) are a lower bound.
        for plan in out.values_mut() {
            plan.lower_bound = true;
        }
    }
    Ok(out)
}
