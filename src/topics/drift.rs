//! Topic configs that differ between a source topic and its target: for the warnings of a
//! run (at start when it creates or syncs, else while the copy starts: [`LaterDrift`]),
//! `plan` and `verify`.

use std::time::Duration;

use super::admin;
use super::configs::{self, Drift, Entry, Excludes};
use super::TopicCheck;
use crate::error::{Error, Result};
use crate::options::{ClusterSpec, RunOptions};

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
///
/// `background`: the run is already copying; a broker that cannot answer (in time, or at
/// all: librdkafka's mock cluster has no DescribeConfigs) is then logged, not warned about.
pub(crate) fn compare_configs(
    opts: &RunOptions,
    topics: &mut [TopicCheck],
    background: bool,
) -> Result<Vec<String>> {
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
            if background && e.quiet {
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

/// Config drift of existing target topics, compared off the start-up path.
pub struct LaterDrift(pub(crate) Vec<TopicCheck>);

impl LaterDrift {
    /// The warnings a start-up check would give.
    pub fn warnings(mut self, opts: &RunOptions) -> Vec<String> {
        compare_configs(opts, &mut self.0, true)
            .unwrap_or_else(|e| vec![format!("topic configs not compared: {e}")])
    }
}
