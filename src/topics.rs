//! Checks made before anything is copied: both clusters reachable, topics selected and
//! mapped, target topics present (or created) with enough partitions, no copy onto itself.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::error::{Error, Result};
use crate::kafka;
use crate::options::{ClusterSpec, RunOptions, TopicSelection};
use crate::origin::Stamp;
use crate::shard::Shard;
use crate::trail::INDEX_TOPIC;

/// A source topic and where it goes.
#[derive(Debug, Clone)]
pub struct Route {
    pub source: String,
    pub target: String,
    pub partitions: i32,
}

/// What the checks found: the routes, and the origin stamp (both clusters' identities) unless
/// `--no-origin-header`.
pub struct Checked {
    pub routes: Vec<Route>,
    pub stamp: Option<Stamp>,
    /// The positions index topic exists on the target (created when missing), so commits
    /// write entries to it; else why not.
    pub index: std::result::Result<(), String>,
}

/// Everything that can be checked before copying. Any error is a usage error: nothing was
/// consumed, produced or committed. Creates missing target topics when asked.
pub fn check(opts: &RunOptions) -> Result<Checked> {
    // Both clusters at once: each answer takes a connection setup and a round trip.
    let (source, target) = std::thread::scope(|s| {
        let target = s.spawn(|| metadata(&opts.to, "target", "--to", opts.timeout));
        let source = metadata(&opts.from, "source", "--from", opts.timeout);
        (source, target.join())
    });
    let (source_meta, source_topics) = source?;
    let routes = select(&opts.topics, &opts.rename, &source_topics, &opts.from.name)?;
    let (target_meta, target_topics) =
        target.map_err(|_| Error::failed("the target check thread panicked"))??;
    let ids = cluster_ids(opts, &source_meta, &target_meta);
    if same_cluster(opts, &ids) {
        if let Some(r) = routes.iter().find(|r| r.source == r.target) {
            return Err(Error::usage(format!(
                "refusing to copy topic '{}' onto itself (same cluster, same name): use --rename",
                r.source
            )));
        }
    }
    let mut missing = Vec::new();
    for r in &routes {
        match target_topics.get(&r.target) {
            Some(&n) if n < r.partitions => {
                return Err(Error::usage(format!(
                    "target topic '{}' has {n} partitions, fewer than the {} of source topic '{}': add partitions to the target",
                    r.target, r.partitions, r.source
                )))
            }
            Some(_) => {}
            None if opts.create_topics => missing.push(r),
            None => {
                return Err(Error::usage(format!(
                    "target topic '{}' does not exist on '{}': create it with {} partitions, or pass --create-topics",
                    r.target, opts.to.name, r.partitions
                )))
            }
        }
    }
    if !missing.is_empty() {
        create_topics(opts, &missing, &target_meta)?;
    }
    let stamp = opts.origin_header.then(|| {
        let (source, target) = ids;
        Stamp {
            source: source.unwrap_or_else(|| opts.from.name.clone()),
            target: target.unwrap_or_else(|| opts.to.name.clone()),
        }
    });
    let index = match stamp {
        Some(_) => index_topic(opts, &target_topics, &target_meta),
        None => Err("--no-origin-header".into()),
    };
    Ok(Checked {
        routes,
        stamp,
        index,
    })
}

/// Makes sure the positions index topic exists on the target (one partition, compacted).
fn index_topic(
    opts: &RunOptions,
    existing: &HashMap<String, i32>,
    target: &Metadata,
) -> std::result::Result<(), String> {
    if existing.contains_key(INDEX_TOPIC) {
        return Ok(());
    }
    kafka::admin_config(&opts.to)
        .create::<AdminClient<DefaultClientContext>>()
        .map_err(|e| e.to_string())
        .and_then(|admin| {
            let rf = opts.replication_factor.unwrap_or(-1);
            let topic = NewTopic::new(INDEX_TOPIC, 1, TopicReplication::Fixed(rf))
                .set("cleanup.policy", "compact");
            // Bounded apart from --timeout: a cluster without the admin API must not hold
            // up every start for long.
            let timeout = opts.timeout.min(Duration::from_secs(5));
            let admin_opts = AdminOptions::new().operation_timeout(Some(timeout));
            match block_on(admin.create_topics([&topic], &admin_opts), timeout) {
                Some(Ok(r)) => match r.into_iter().next() {
                    Some(Err((_, code))) if code != RDKafkaErrorCode::TopicAlreadyExists => {
                        Err(code.to_string())
                    }
                    _ => Ok(()),
                },
                Some(Err(e)) => Err(e.to_string()),
                None => Err("timed out".into()),
            }
        })
        .and_then(|()| wait_for(target, &[INDEX_TOPIC], 1, opts.timeout))
}

/// Waits until metadata shows `topics`, each with at least `partitions` partitions.
fn wait_for(
    target: &Metadata,
    topics: &[&str],
    partitions: i32,
    timeout: Duration,
) -> std::result::Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        let ready = topic_partitions(target, timeout)
            .map(|t| {
                topics
                    .iter()
                    .all(|name| t.get(*name).is_some_and(|&n| n >= partitions))
            })
            .unwrap_or(false);
        if ready {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err("it did not show up in the target's metadata in time".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Both clusters' ids, where they report one.
fn cluster_ids(opts: &RunOptions, a: &Metadata, b: &Metadata) -> (Option<String>, Option<String>) {
    let timeout = opts.timeout.min(Duration::from_secs(5));
    (
        a.client().fetch_cluster_id(timeout),
        b.client().fetch_cluster_id(timeout),
    )
}

/// The source partitions of `routes` this shard owns; a usage error when it owns none.
pub fn owned<'r>(shard: &Shard, routes: &'r [Route]) -> Result<Vec<(&'r Route, i32)>> {
    let owned: Vec<(&Route, i32)> = routes
        .iter()
        .flat_map(|r| (0..r.partitions).map(move |p| (r, p)))
        .filter(|(r, p)| shard.owns(&r.source, *p))
        .collect();
    if owned.is_empty() {
        let total: i32 = routes.iter().map(|r| r.partitions).sum();
        return Err(Error::usage(format!(
            "--shard {}/{} owns none of the {total} source partitions: use fewer shards",
            shard.index, shard.count
        )));
    }
    Ok(owned)
}

/// A client for metadata requests, which keeps librdkafka's error reasons.
pub type Metadata = BaseConsumer<kafka::Reasons>;

/// A metadata client for one side, and topic → partition count for every topic there.
pub fn metadata(
    spec: &ClusterSpec,
    side: &str,
    flag: &str,
    timeout: Duration,
) -> Result<(Metadata, HashMap<String, i32>)> {
    let client: Metadata = kafka::admin_config(spec)
        .create_with_context(kafka::Reasons::default())
        .map_err(|e| kafka::creation_error(side, e))?;
    let topics = topic_partitions(&client, timeout);
    kafka::serve_logs(&client);
    // A broker that is down or slow may be up at the next run: not a usage error.
    let topics = topics.map_err(|_| {
        Error::failed(format!(
            "cannot reach the {side} cluster '{}' within {timeout:?}: {}; check {flag}",
            spec.name,
            client.context().why()
        ))
    })?;
    Ok((client, topics))
}

/// Topic → partition count, for every topic of a cluster.
fn topic_partitions(
    client: &Metadata,
    timeout: Duration,
) -> std::result::Result<HashMap<String, i32>, KafkaError> {
    let md = client.fetch_metadata(None, timeout)?;
    Ok(md
        .topics()
        .iter()
        .filter(|t| t.error().is_none() && !t.partitions().is_empty())
        .map(|t| (t.name().to_string(), t.partitions().len() as i32))
        .collect())
}

/// Resolves `--topics` against the source's topics (`source_name` is the cluster as the
/// user named it) and applies `--rename`.
pub fn select(
    topics: &TopicSelection,
    rename: &str,
    source: &HashMap<String, i32>,
    source_name: &str,
) -> Result<Vec<Route>> {
    let mut names: Vec<String> = match topics {
        TopicSelection::List(list) => {
            for t in list {
                if !source.contains_key(t) {
                    return Err(Error::usage(format!(
                        "source topic '{t}' does not exist on '{source_name}': check --topics"
                    )));
                }
            }
            list.clone()
        }
        TopicSelection::Regex(re) => source
            .keys()
            .filter(|t| !t.starts_with("__") && re.is_match(t))
            .cloned()
            .collect(),
    };
    names.sort();
    names.dedup();
    if names.is_empty() {
        return Err(Error::usage(format!(
            "no topic on '{source_name}' matches --topics"
        )));
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut routes = Vec::new();
    for source_topic in names {
        let target = rename.replace("{topic}", &source_topic);
        if let Some(other) = seen.insert(target.clone(), source_topic.clone()) {
            return Err(Error::usage(format!(
                "--rename '{rename}' maps both '{other}' and '{source_topic}' to '{target}'"
            )));
        }
        // Every selected name comes from, or was checked against, the source's topics.
        let partitions = source.get(&source_topic).copied().unwrap_or_default();
        routes.push(Route {
            partitions,
            source: source_topic,
            target,
        });
    }
    Ok(routes)
}

/// Same cluster when both report the same cluster id, or share a bootstrap address.
fn same_cluster(opts: &RunOptions, ids: &(Option<String>, Option<String>)) -> bool {
    if let (Some(x), Some(y)) = ids {
        return x == y;
    }
    let addrs = |s: &str| -> Vec<String> {
        s.split(',')
            .map(|a| a.trim().to_ascii_lowercase())
            .filter(|a| !a.is_empty())
            .collect()
    };
    let (x, y) = (addrs(&opts.from.bootstrap), addrs(&opts.to.bootstrap));
    x.iter().any(|a| y.contains(a))
}

fn create_topics(opts: &RunOptions, missing: &[&Route], target: &Metadata) -> Result<()> {
    let admin: AdminClient<DefaultClientContext> = kafka::admin_config(&opts.to)
        .create()
        .map_err(|e| kafka::creation_error("target", e))?;
    let rf = opts.replication_factor.unwrap_or(-1);
    let new: Vec<NewTopic<'_>> = missing
        .iter()
        .map(|r| NewTopic::new(&r.target, r.partitions, TopicReplication::Fixed(rf)))
        .collect();
    let admin_opts = AdminOptions::new().operation_timeout(Some(opts.timeout));
    let results = block_on(admin.create_topics(&new, &admin_opts), opts.timeout)
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
                return Err(Error::usage(format!(
                    "cannot create target topic '{topic}': {code}"
                )));
            }
        }
    }
    // Wait until metadata shows every new topic with all its partitions.
    let deadline = Instant::now() + opts.timeout;
    loop {
        let ready = topic_partitions(target, opts.timeout)
            .map(|t| {
                missing
                    .iter()
                    .all(|r| t.get(&r.target).is_some_and(|&n| n >= r.partitions))
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

/// Runs an admin future to completion on a private runtime, bounded by `timeout`.
fn block_on<F: std::future::Future>(fut: F, timeout: Duration) -> Option<F::Output> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .ok()?;
    rt.block_on(async { tokio::time::timeout(timeout, fut).await.ok() })
}
