//! What a run would do to the target before copying ([`inspect`], which writes nothing, so
//! `kreplicate plan` can show it), and doing it ([`apply`]): create missing topics with the
//! source's partitions and configs, set differing configs with `--sync-configs`.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::error::RDKafkaErrorCode;

use super::admin::{self, Admin};
use super::configs::{self, Drift, Entry, Excludes};
use super::{metadata, same_cluster, select, topic_partitions, Metadata, Route};
use crate::error::{Error, Result};
use crate::options::{ClusterSpec, RunOptions};

/// One selected topic as a run would find it.
#[derive(Debug, Clone)]
pub struct TopicCheck {
    pub route: Route,
    /// The target topic's partition count; `None` when it does not exist.
    pub target_partitions: Option<i32>,
    /// Configs a missing target topic is created with (with `--create-topics`).
    pub create_configs: BTreeMap<String, String>,
    /// Copied configs an existing target topic differs in.
    pub drift: Vec<Drift>,
}

/// Everything [`inspect`] found.
pub struct Inspection {
    pub topics: Vec<TopicCheck>,
    /// Why a real run would refuse to start (a usage error), if it would.
    pub refusal: Option<String>,
    /// What a real run would warn about at start.
    pub warnings: Vec<String>,
    target: Metadata,
}

impl Inspection {
    pub fn routes(&self) -> Vec<Route> {
        self.topics.iter().map(|t| t.route.clone()).collect()
    }
}

/// Reads both clusters and decides what a run would do; writes nothing. An unreachable
/// cluster is an error (exit 1); selection errors are usage errors.
pub fn inspect(opts: &RunOptions) -> Result<Inspection> {
    // Both clusters at once: each answer takes a connection setup and a round trip.
    let (source, target) = std::thread::scope(|s| {
        let target = s.spawn(|| metadata(&opts.to, "target", "--to", opts.timeout));
        let source = metadata(&opts.from, "source", "--from", opts.timeout);
        (source, target.join())
    });
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
    let mut refusal = None;
    if same_cluster(opts, &source_meta, &target_meta) {
        if let Some(r) = routes.iter().find(|r| r.source == r.target) {
            refusal = Some(format!(
                "refusing to copy topic '{}' onto itself (same cluster, same name): use --rename",
                r.source
            ));
        }
    }
    let mut topics: Vec<TopicCheck> = routes
        .into_iter()
        .map(|route| TopicCheck {
            target_partitions: target_topics.get(&route.target).copied(),
            route,
            create_configs: BTreeMap::new(),
            drift: Vec::new(),
        })
        .collect();
    for t in &topics {
        let r = &t.route;
        let why = match t.target_partitions {
            Some(n) if n < r.partitions => format!(
                "target topic '{}' has {n} partitions, fewer than the {} of source topic '{}': add partitions to the target",
                r.target, r.partitions, r.source
            ),
            None if !opts.create_topics => format!(
                "target topic '{}' does not exist on '{}': create it with {} partitions, or pass --create-topics",
                r.target, opts.to.name, r.partitions
            ),
            _ => continue,
        };
        refusal.get_or_insert(why);
    }
    let warnings = compare_configs(opts, &mut topics)?;
    Ok(Inspection {
        topics,
        refusal,
        warnings,
        target: target_meta,
    })
}

/// A copied config that differs between a source topic and its target (`verify`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TopicDrift {
    pub topic: String,
    pub target_topic: String,
    #[serde(flatten)]
    pub drift: Drift,
}

/// The copied configs (less the built-in exclusions and `exclude`) that differ between each
/// `(source, target)` topic pair. An error says why they could not be compared.
pub fn config_differences(
    from: &ClusterSpec,
    to: &ClusterSpec,
    pairs: &[(&str, &str)],
    exclude: &[String],
    timeout: Duration,
) -> std::result::Result<Vec<TopicDrift>, String> {
    let excludes = Excludes::new(exclude);
    let describe = |spec: &ClusterSpec, side: &str, topics: Vec<&str>| {
        let admin = admin::admin(spec, side).map_err(|e| e.to_string())?;
        admin::describe(&admin, &topics, timeout).map_err(|e| e.message)
    };
    let source = describe(from, "source", pairs.iter().map(|p| p.0).collect())?;
    let target = describe(to, "target", pairs.iter().map(|p| p.1).collect())?;
    let empty: Vec<Entry> = Vec::new();
    let mut out = Vec::new();
    for (s, t) in pairs {
        let copied = configs::to_copy(source.get(*s).unwrap_or(&empty), &excludes);
        for drift in configs::drift(&copied, target.get(*t).unwrap_or(&empty)) {
            out.push(TopicDrift {
                topic: s.to_string(),
                target_topic: t.to_string(),
                drift,
            });
        }
    }
    Ok(out)
}

/// Fills in the configs to create and the drift of existing targets; returns warnings.
/// Reading configs is needed to create topics; for drift alone, a broker that cannot answer
/// is a warning, not a reason to refuse the copy.
pub(super) fn compare_configs(opts: &RunOptions, topics: &mut [TopicCheck]) -> Result<Vec<String>> {
    let creating = opts.create_topics && topics.iter().any(|t| t.target_partitions.is_none());
    let mut warnings = Vec::new();
    let excludes = Excludes::new(&opts.config_exclude);
    let sources: Vec<&str> = topics.iter().map(|t| t.route.source.as_str()).collect();
    let existing: Vec<&str> = topics
        .iter()
        .filter(|t| t.target_partitions.is_some())
        .map(|t| t.route.target.as_str())
        .collect();
    let described = admin::admin(&opts.from, "source").and_then(|a| {
        let timeout = opts.timeout;
        let source = admin::describe(&a, &sources, timeout);
        let target = match &source {
            Ok(_) => {
                let b = admin::admin(&opts.to, "target")?;
                Some(admin::describe(&b, &existing, timeout))
            }
            Err(_) => None,
        };
        Ok((source, target))
    })?;
    let (source, target) = match described {
        (Ok(s), Some(Ok(t))) => (s, t),
        (Err(e), _) | (_, Some(Err(e))) => {
            if creating || opts.sync_configs {
                return Err(Error::failed(e.message));
            }
            if e.unsupported {
                log::info!("topic configs not compared: {}", e.message);
            } else {
                warnings.push(format!("topic configs not compared: {}", e.message));
            }
            return Ok(warnings);
        }
        (Ok(_), None) => return Ok(warnings),
    };
    let empty: Vec<Entry> = Vec::new();
    for t in topics.iter_mut() {
        let copied = configs::to_copy(source.get(&t.route.source).unwrap_or(&empty), &excludes);
        match t.target_partitions {
            None => t.create_configs = copied,
            Some(_) => {
                t.drift = configs::drift(&copied, target.get(&t.route.target).unwrap_or(&empty));
                if !opts.sync_configs {
                    for d in &t.drift {
                        warnings.push(format!(
                            "target topic '{}' config {} (pass --sync-configs to set the source's value)",
                            t.route.target,
                            configs::describe(d)
                        ));
                    }
                }
            }
        }
    }
    Ok(warnings)
}

/// Does what [`inspect`] found to do: refuses, creates missing target topics, sets drifted
/// configs with `--sync-configs`. Returns the routes and the warnings to show.
pub fn apply(opts: &RunOptions, found: Inspection) -> Result<(Vec<Route>, Vec<String>)> {
    if let Some(why) = found.refusal {
        return Err(Error::usage(why));
    }
    realise(opts, &found.topics, &found.target)?;
    Ok((found.routes(), found.warnings))
}

/// Creates the missing target topics of `topics` and, with `--sync-configs`, sets the
/// source's values of differing configs.
pub(super) fn realise(opts: &RunOptions, topics: &[TopicCheck], target: &Metadata) -> Result<()> {
    let missing: Vec<&TopicCheck> = topics
        .iter()
        .filter(|t| t.target_partitions.is_none())
        .collect();
    if !missing.is_empty() {
        create_topics(opts, &missing, target)?;
    }
    if opts.sync_configs {
        let changes: BTreeMap<String, BTreeMap<String, String>> = topics
            .iter()
            .filter(|t| !t.drift.is_empty())
            .map(|t| {
                let set = t.drift.iter().map(|d| (d.key.clone(), d.source.clone()));
                (t.route.target.clone(), set.collect())
            })
            .collect();
        if !changes.is_empty() {
            let admin = admin::admin(&opts.to, "target")?;
            admin::alter_incremental(&admin, &changes, opts.timeout)?;
            log::info!(
                "set the source's configs on {} target topics",
                changes.len()
            );
        }
    }
    Ok(())
}

fn create_topics(opts: &RunOptions, missing: &[&TopicCheck], target: &Metadata) -> Result<()> {
    let admin: Admin = admin::admin(&opts.to, "target")?;
    let rf = opts.replication_factor.unwrap_or(-1);
    let new: Vec<NewTopic<'_>> = missing
        .iter()
        .map(|t| {
            let r = &t.route;
            t.create_configs.iter().fold(
                NewTopic::new(&r.target, r.partitions, TopicReplication::Fixed(rf)),
                |nt, (k, v)| nt.set(k, v),
            )
        })
        .collect();
    let admin_opts = AdminOptions::new().operation_timeout(Some(opts.timeout));
    let results = admin::block_on(admin.create_topics(&new, &admin_opts), opts.timeout)
        .ok_or_else(|| {
            Error::failed(format!(
                "creating target topics timed out after {:?}",
                opts.timeout
            ))
        })?
        .map_err(|e| Error::failed(format!("cannot create target topics: {e}")))?;
    for r in results {
        if let Err((topic, code)) = r {
            if code != RDKafkaErrorCode::TopicAlreadyExists {
                let configs = missing
                    .iter()
                    .find(|t| t.route.target == topic)
                    .map(|t| {
                        let list: Vec<String> = t
                            .create_configs
                            .iter()
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect();
                        list.join(", ")
                    })
                    .filter(|l| !l.is_empty())
                    .map_or_else(String::new, |l| {
                        format!(" (with configs {l}; leave a key out with --config-exclude)")
                    });
                return Err(Error::usage(format!(
                    "cannot create target topic '{topic}': {code}{configs}"
                )));
            }
        }
    }
    // Wait until metadata shows every new topic with all its partitions.
    let deadline = Instant::now() + opts.timeout;
    loop {
        let ready = topic_partitions(target, opts.timeout)
            .map(|t: HashMap<String, i32>| {
                missing.iter().all(|m| {
                    t.get(&m.route.target)
                        .is_some_and(|&n| n >= m.route.partitions)
                })
            })
            .unwrap_or(false);
        if ready {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(Error::failed(
                "created target topics did not show up in the target's metadata in time",
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
