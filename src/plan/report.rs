//! The plan as `kreplicate plan` prints it: an aligned table, or one JSON object.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::acl::sync::AclPlan;
use crate::kafka;
use crate::options::{RunOptions, StartPosition};
use crate::preflight::Inspection;
use crate::report::JSON_VERSION;
use crate::table;
use crate::topics::configs::{describe, Drift};

/// One source partition: where the group stands and what a run would copy.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionPlan {
    pub partition: i32,
    /// The group's committed position (next offset to read), if any.
    pub committed: Option<i64>,
    /// Where a run would start reading, and the partition's end; null when the source did
    /// not answer in time.
    pub start: Option<i64>,
    pub end_offset: Option<i64>,
    pub records_to_copy: Option<i64>,
    /// The committed position lies outside the source log: a run fails (see --on-gap).
    pub gap: bool,
    /// exactly-once: the target's origin headers decide; the group's position is a lower bound.
    #[serde(skip)]
    pub lower_bound: bool,
}

impl PartitionPlan {
    pub fn new(partition: i32, committed: Option<i64>) -> Self {
        PartitionPlan {
            partition,
            committed,
            start: None,
            end_offset: None,
            records_to_copy: None,
            gap: false,
            lower_bound: false,
        }
    }

    /// The partition's `(low, high)` from a fetch, and where a group without a position starts.
    pub fn set_bounds(&mut self, bounds: Option<(i64, i64)>, start: StartPosition) {
        let Some((low, high)) = bounds else { return };
        let from = match (self.committed, start) {
            (Some(n), _) => n,
            (None, StartPosition::Earliest) => low,
            (None, StartPosition::Latest) => high,
        };
        self.gap = from < low || from > high;
        self.start = Some(from);
        self.end_offset = Some(high);
        self.records_to_copy = Some((high - from.max(low)).max(0));
    }
}

#[derive(Debug, Serialize)]
pub struct TopicPlan {
    pub source: String,
    pub target: String,
    pub source_partitions: i32,
    /// Null when the target topic does not exist.
    pub target_partitions: Option<i32>,
    /// `create` (with `create_configs`), `missing` (the same without `--create-topics`: a run
    /// would refuse), `exists`, or `add_partitions` (`--create-topics`, the target has fewer
    /// partitions than the source).
    pub action: &'static str,
    pub create_configs: BTreeMap<String, String>,
    pub config_differences: Vec<Drift>,
    pub partitions: Vec<PartitionPlan>,
}

#[derive(Debug, Serialize)]
pub struct Plan {
    pub version: u32,
    /// A real run would start (exit 0); else `refusal` says why (exit 2).
    pub would_start: bool,
    pub refusal: Option<String>,
    pub guarantee: &'static str,
    pub from: String,
    pub to: String,
    pub group: String,
    /// The codec the target producer compresses batches with, and whether the target's
    /// properties (`--to-property`, the config file) chose it rather than kreplicate's default.
    pub compression: String,
    pub compression_from_properties: bool,
    pub sync_configs: bool,
    pub topics: Vec<TopicPlan>,
    /// `--sync-acls`: the ACLs a run would create on the target, and those it leaves out.
    pub acls: Option<AclPlan>,
    pub records_to_copy: i64,
    pub warnings: Vec<String>,
    /// The warnings that name target topics holding records that are not copies from this
    /// source (`migrate` refuses them; a copy run goes on).
    #[serde(skip)]
    pub foreign: Vec<String>,
}

impl Plan {
    pub fn new(
        opts: &RunOptions,
        found: &Inspection,
        mut positions: HashMap<(String, i32), PartitionPlan>,
    ) -> Self {
        let mut warnings = found.warnings.clone();
        let topics: Vec<TopicPlan> = found
            .topics
            .iter()
            .map(|t| {
                let r = &t.route;
                let partitions: Vec<PartitionPlan> = (0..r.partitions)
                    .filter_map(|p| positions.remove(&(r.source.clone(), p)))
                    .collect();
                for p in &partitions {
                    if p.gap {
                        warnings.push(format!(
                            "{}[{}] committed position {} is outside the source log: a run fails unless --on-gap says where to go on",
                            r.source,
                            p.partition,
                            p.committed.unwrap_or_default()
                        ));
                    } else if p.end_offset.is_none() {
                        warnings.push(format!(
                            "{}[{}]: the source did not answer with the partition's end in time",
                            r.source, p.partition
                        ));
                    }
                }
                TopicPlan {
                    source: r.source.clone(),
                    target: r.target.clone(),
                    source_partitions: r.partitions,
                    target_partitions: t.target_partitions,
                    action: match t.target_partitions {
                        Some(n) if n < r.partitions && opts.create_topics => "add_partitions",
                        Some(_) => "exists",
                        None if opts.create_topics => "create",
                        // Without --create-topics a run creates nothing: it would refuse.
                        None => "missing",
                    },
                    create_configs: t.create_configs.clone(),
                    config_differences: t.drift.clone(),
                    partitions,
                }
            })
            .collect();
        let records_to_copy = topics
            .iter()
            .flat_map(|t| &t.partitions)
            .filter_map(|p| p.records_to_copy)
            .sum();
        let (compression, compression_from_properties) = kafka::compression(&opts.to);
        Plan {
            version: JSON_VERSION,
            would_start: found.refusal.is_none(),
            refusal: found.refusal.clone(),
            guarantee: opts.guarantee.as_str(),
            from: opts.from.name.clone(),
            to: opts.to.name.clone(),
            group: opts.group.clone(),
            compression,
            compression_from_properties,
            sync_configs: opts.sync_configs,
            topics,
            acls: found.acls.clone(),
            records_to_copy,
            warnings,
            foreign: Vec::new(),
        }
    }

    /// The table: topics, then partitions, then warnings and the verdict.
    pub fn human(&self) -> String {
        let mut out = format!(
            "plan: copy from {} to {} with --guarantee {}, group '{}' (nothing was written)\n",
            self.from, self.to, self.guarantee, self.group
        );
        out.push_str(&format!(
            "compression on the target: {} ({})\n\n",
            self.compression,
            match self.compression_from_properties {
                true => "from the target's properties",
                false => "kreplicate's default; --to-property compression.type=... to change",
            }
        ));
        let opt = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |n| n.to_string());
        let mut rows = vec![[
            "SOURCE TOPIC".to_string(),
            "TARGET TOPIC".into(),
            "PARTITIONS".into(),
            "TARGET".into(),
        ]];
        let mut lower_bound = false;
        for t in &self.topics {
            let target = match t.target_partitions {
                Some(n) if t.action == "add_partitions" => {
                    format!("exists, {n} partitions: add {}", t.source_partitions - n)
                }
                Some(1) => "exists, 1 partition".into(),
                Some(n) => format!("exists, {n} partitions"),
                None if t.action == "missing" => "missing: pass --create-topics".into(),
                None => "create".into(),
            };
            rows.push([
                t.source.clone(),
                t.target.clone(),
                t.source_partitions.to_string(),
                target,
            ]);
        }
        out.push_str(&table::aligned(&rows, &[]));
        for t in &self.topics {
            if !t.create_configs.is_empty() {
                let list: Vec<String> = t
                    .create_configs
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                out.push_str(&format!(
                    "\n{}: create with {}\n",
                    t.target,
                    list.join(", ")
                ));
            }
            for d in &t.config_differences {
                let verb = if self.sync_configs { "set" } else { "differs" };
                out.push_str(&format!("\n{}: config {verb}: {}\n", t.target, describe(d)));
            }
        }
        let mut rows = vec![[
            "PARTITION".to_string(),
            "COMMITTED".into(),
            "START".into(),
            "END".into(),
            "TO COPY".into(),
        ]];
        for t in &self.topics {
            for p in &t.partitions {
                lower_bound |= p.lower_bound;
                rows.push([
                    format!("{}[{}]", t.source, p.partition),
                    opt(p.committed),
                    opt(p.start),
                    opt(p.end_offset),
                    opt(p.records_to_copy),
                ]);
            }
        }
        out.push('\n');
        out.push_str(&table::aligned(&rows, &[]));
        if let Some(acls) = &self.acls {
            out.push_str(&format!(
                "\nACLs to create on the target (--sync-acls): {}\n",
                acls.missing.len()
            ));
            for a in &acls.missing {
                out.push_str(&format!("  create: {}\n", a.describe()));
            }
            for a in &acls.left_out_writes {
                out.push_str(&format!(
                    "  not copied (an ALLOW WRITE: the run is the copies' one writer): {}\n",
                    a.describe()
                ));
            }
        }
        out.push_str(&format!("\nrecords to copy: {}\n", self.records_to_copy));
        if lower_bound {
            out.push_str("(exactly-once resumes after the newest record the target holds: the group's positions are a lower bound)\n");
        }
        for w in &self.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        match &self.refusal {
            None => out.push_str("a real run would start (exit 0)\n"),
            Some(why) => out.push_str(&format!("a real run would refuse: {why} (exit 2)\n")),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_to_copy_follow_the_committed_position_or_the_start() {
        let mut p = PartitionPlan::new(0, Some(4));
        p.set_bounds(Some((0, 10)), StartPosition::Earliest);
        assert_eq!(
            (p.start, p.records_to_copy, p.gap),
            (Some(4), Some(6), false)
        );
        let mut p = PartitionPlan::new(0, None);
        p.set_bounds(Some((2, 10)), StartPosition::Earliest);
        assert_eq!((p.start, p.records_to_copy), (Some(2), Some(8)));
        p = PartitionPlan::new(0, None);
        p.set_bounds(Some((2, 10)), StartPosition::Latest);
        assert_eq!(p.records_to_copy, Some(0));
        // Committed past the end (a recreated topic): a gap, nothing to count.
        p = PartitionPlan::new(0, Some(20));
        p.set_bounds(Some((0, 3)), StartPosition::Earliest);
        assert!(p.gap);
        assert_eq!(p.records_to_copy, Some(0));
    }
}
