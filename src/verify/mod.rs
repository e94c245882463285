//! `kreplicate verify`: compare a source and a target topic partition by partition.
//!
//! For every selected topic and every partition, both sides are read from the beginning to
//! the end seen by a partition-EOF event (never ListOffsets LATEST, which tansu gets wrong),
//! with `isolation.level=read_committed`, and reduced to a [`Fingerprint`] per record: hashes
//! of key, value and headers, the timestamp, and the offset. Headers whose key starts with
//! `kreplicate.` are left out on both sides: kreplicate adds origin headers of its own, and a
//! chained copy (A → B → C) carries them in its source too.
//!
//! The comparison itself is the pure function [`compare`](fn@compare); this module's Kafka
//! part only produces fingerprint sequences for it.
//!
//! # Memory bound
//!
//! Records are never kept: each is turned into a 32-byte [`Fingerprint`] as it is read.
//! One partition is compared at a time, in two phases:
//!
//! 1. Both sides are streamed in lockstep. While they agree record for record nothing at all
//!    is kept per record, so a partition that is an exact copy costs O(1) memory whatever its
//!    size.
//! 2. At the first difference, both sides of that one partition are read again from the
//!    beginning (both at once) into fingerprint vectors and handed to [`compare`](fn@compare).
//!    Fingerprints plus the comparison's index arrays cost at most 48
//!    bytes per source record plus 48 bytes per target record of that one partition (up to
//!    64 for a moment while a vector grows), freed before the next partition. So the bound
//!    is 48 B × (source + target records) of the largest *differing* partition: about 1 GB
//!    for a partition of 10 million records on each side.
//!
//! Besides this, librdkafka's prefetch queue is bounded by `queued.max.messages.kbytes`
//! (16 MiB per side by default here; `-X`/`--to-property` may change it). Examples are at
//! most [`MAX_EXAMPLES`] per partition.
//!
//! # Layout
//!
//! * this module: the flags, their validation, the topic routes, and [`run`];
//! * `reader`: reading a partition as fingerprints, and one partition's verification;
//! * `fingerprint`: [`Fingerprint`] and the hashes and digest behind it;
//! * `compare`: the pure [`compare`](fn@compare) and its result types;
//! * `report`: the [`Report`], its table and its JSON.

use std::collections::HashMap;
use std::time::Duration;

use rdkafka::consumer::Consumer;

use crate::cli::VerifyArgs;
use crate::config;
use crate::error::{Error, Exit, Result};
use crate::options::{ClusterSpec, TopicSelection};
use crate::topics;

mod compare;
mod configs;
mod fingerprint;
mod reader;
mod report;

pub use report::Report;

use reader::{verify_partition, Reader};

/// Readers' properties kreplicate sets itself, and why the user may not.
const OWNED: &[(&str, &str)] = &[
    ("bootstrap.servers", "use --from / --to"),
    ("metadata.broker.list", "use --from / --to"),
    ("group.id", "verify never joins a group"),
    ("enable.partition.eof", "verify needs it to find the end"),
    (
        "isolation.level",
        "verify reads what a read_committed consumer sees",
    ),
    ("enable.auto.commit", "verify never commits"),
    ("enable.auto.offset.store", "verify never commits"),
    (
        "auto.offset.reset",
        "verify always reads from the beginning",
    ),
];

// ------------------------------------------------------------------------------------------------
// Options
// ------------------------------------------------------------------------------------------------

/// Validated flags.
#[derive(Clone, Debug)]
struct Options {
    from: ClusterSpec,
    to: ClusterSpec,
    topics: TopicSelection,
    exclude: Option<TopicSelection>,
    rename: String,
    timeout: Duration,
    accept_duplicates: bool,
    /// `--configs`: config differences count against an exact copy.
    configs: bool,
    config_exclude: Vec<String>,
    /// `--acls`: ACLs the target lacks count against an exact copy.
    acls: bool,
}

fn resolve(args: &VerifyArgs) -> Result<Options> {
    let file = config::load(&args.ends)?;
    let config::Endpoints {
        from,
        to,
        topics,
        exclude,
        rename,
    } = config::endpoints(&args.ends, &file)?;
    for (spec, flag) in [(&from, "--from-property"), (&to, "--to-property")] {
        for (key, _) in &spec.properties {
            if let Some((_, why)) = OWNED.iter().find(|(k, _)| k == key) {
                return Err(Error::usage(format!(
                    "verify: property '{key}' (from {flag} or the config file) is set by kreplicate: {why}"
                )));
            }
        }
    }
    let timeout = config::timeout(args.timeout.as_ref(), &file)?;
    Ok(Options {
        from,
        to,
        topics,
        exclude,
        rename,
        timeout,
        accept_duplicates: args.accept_duplicates,
        configs: args.configs,
        config_exclude: args.config_exclude.clone(),
        acls: args.acls,
    })
}

/// A source topic, its target, and both partition counts.
#[derive(Clone, Debug)]
struct Route {
    source: String,
    target: String,
    source_partitions: i32,
    target_partitions: i32,
}

/// Source topics with their targets and both partition counts; every target must exist.
fn routes(
    opts: &Options,
    source: &HashMap<String, i32>,
    target: &HashMap<String, i32>,
) -> Result<Vec<Route>> {
    let selected = topics::select(
        &opts.topics,
        opts.exclude.as_ref(),
        &opts.rename,
        source,
        &opts.from.name,
    )?;
    let absent: Vec<&str> = selected
        .iter()
        .filter(|r| !target.contains_key(&r.target))
        .map(|r| r.target.as_str())
        .collect();
    if !absent.is_empty() {
        return Err(Error::usage(format!(
            "target topic '{}' does not exist on '{}': check --to and --rename",
            absent.join("', '"),
            opts.to.name
        )));
    }
    Ok(selected
        .into_iter()
        .map(|r| Route {
            target_partitions: target.get(&r.target).copied().unwrap_or_default(),
            source_partitions: r.partitions,
            source: r.source,
            target: r.target,
        })
        .collect())
}

fn verify(opts: &Options) -> Result<Report> {
    let (_, source) = topics::metadata(&opts.from, "source", "--from", opts.timeout)?;
    let (_, target) = topics::metadata(&opts.to, "target", "--to", opts.timeout)?;
    let routes = routes(opts, &source, &target)?;
    let mut src = Reader::new(&opts.from, "source", opts.timeout)?;
    let mut tgt = Reader::new(&opts.to, "target", opts.timeout)?;
    let mut rows = Vec::new();
    for route in &routes {
        for p in 0..route.source_partitions.max(route.target_partitions) {
            rows.push(verify_partition(
                &mut src,
                &mut tgt,
                route,
                p,
                opts.accept_duplicates,
            )?);
        }
    }
    let _ = src.consumer.unassign();
    let _ = tgt.consumer.unassign();
    let pairs: Vec<(&str, &str)> = routes
        .iter()
        .map(|r| (r.source.as_str(), r.target.as_str()))
        .collect();
    let configs = topics::config_differences(
        &opts.from,
        &opts.to,
        &pairs,
        &opts.config_exclude,
        opts.timeout,
    );
    let mut report = Report::new(&opts.from.name, &opts.to.name, opts.accept_duplicates, rows);
    report.add_configs(configs, opts.configs);
    if opts.acls {
        let copied: Vec<topics::Route> = routes
            .iter()
            .map(|r| topics::Route {
                source: r.source.clone(),
                target: r.target.clone(),
                partitions: r.source_partitions,
            })
            .collect();
        let found = crate::acl::sync::compare(&opts.from, &opts.to, &copied, None, opts.timeout)?;
        report.add_acls(found.missing);
    }
    Ok(report)
}

/// Verifies every partition of the selected topics as `verify` does (configs and ACLs left
/// out): `migrate`'s check after the drain.
pub fn check(
    (from, to): (&ClusterSpec, &ClusterSpec),
    topics: &TopicSelection,
    exclude: Option<&TopicSelection>,
    rename: &str,
    timeout: Duration,
    accept_duplicates: bool,
) -> Result<Report> {
    verify(&Options {
        from: from.clone(),
        to: to.clone(),
        topics: topics.clone(),
        exclude: exclude.cloned(),
        rename: rename.to_string(),
        timeout,
        accept_duplicates,
        configs: false,
        config_exclude: Vec::new(),
        acls: false,
    })
}

/// Version of verify's `--json` object: bumped when a field changes meaning or goes away.
const JSON_VERSION: u32 = 1;

/// The `--json` object: the report with its version and wall-clock start and end (RFC 3339).
#[derive(serde::Serialize)]
struct Stamped<'a> {
    version: u32,
    started: String,
    ended: String,
    #[serde(flatten)]
    report: &'a Report,
}

/// `kreplicate verify`: exit 0 when the target holds an exact copy, 1 when it does not;
/// errors (bad flags, unknown cluster or topic, unreachable broker) exit 2.
pub fn run(args: &VerifyArgs) -> Result<Exit> {
    use std::io::Write;
    let opts = resolve(args)?;
    let started = std::time::SystemTime::now();
    let report = verify(&opts)?;
    let text = if args.json {
        let stamped = Stamped {
            version: JSON_VERSION,
            started: humantime::format_rfc3339_millis(started).to_string(),
            ended: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            report: &report,
        };
        let mut s = serde_json::to_string(&stamped)
            .map_err(|e| Error::usage(format!("cannot write the JSON report: {e}")))?;
        s.push('\n');
        s
    } else {
        report.human()
    };
    // A closed stdout (e.g. `| head`) does not change the verdict.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(if report.exact {
        Exit::Done
    } else {
        Exit::Failed
    })
}
