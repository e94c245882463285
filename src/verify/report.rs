//! The report `verify` prints: one [`PartitionReport`] row per partition, [`Totals`] and
//! the verdict in a [`Report`], rendered as an aligned table ([`Report::human`]) or, with
//! `--json`, serialized as one JSON object.

use serde::Serialize;

use super::compare::{Example, MAX_EXAMPLES};
use super::configs::Configs;
use super::fingerprint::{Digest, Fingerprint};
use crate::acl::sync::Acl;
use crate::table;
use crate::topics::TopicDrift;

/// First and last offset of the records read from a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OffsetRange {
    pub first: i64,
    pub last: i64,
}

/// Count, offsets and digest of one side of a partition.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SideStats {
    pub(super) count: u64,
    pub(super) offsets: Option<OffsetRange>,
    pub(super) digest: Digest,
}

impl SideStats {
    pub(super) fn add(&mut self, fp: &Fingerprint) {
        self.count += 1;
        self.offsets = Some(match self.offsets {
            None => OffsetRange {
                first: fp.offset,
                last: fp.offset,
            },
            Some(r) => OffsetRange {
                first: r.first,
                last: fp.offset,
            },
        });
        self.digest.add(fp);
    }

    pub(super) fn of(fps: &[Fingerprint]) -> SideStats {
        let mut s = SideStats::default();
        for fp in fps {
            s.add(fp);
        }
        s
    }
}

/// One row of the report.
#[derive(Clone, Debug, Serialize)]
pub struct PartitionReport {
    pub topic: String,
    pub target_topic: String,
    pub partition: i32,
    pub source_count: u64,
    pub target_count: u64,
    pub source_offsets: Option<OffsetRange>,
    pub target_offsets: Option<OffsetRange>,
    pub missing: u64,
    pub extra: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub altered: u64,
    pub status: PartitionStatus,
    /// Order-sensitive digest of the records (target without `kreplicate.*` headers); null
    /// when the partition does not exist on that side.
    pub source_digest: Option<String>,
    pub target_digest: Option<String>,
    /// Set when the partition exists on one side only.
    pub note: Option<String>,
    pub examples: Vec<Example>,
}

/// Whether a partition's copy is exact.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum PartitionStatus {
    Ok,
    Diff,
}

impl std::fmt::Display for PartitionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PartitionStatus::Ok => "OK",
            PartitionStatus::Diff => "DIFF",
        })
    }
}

impl PartitionReport {
    fn ok(&self) -> bool {
        self.status == PartitionStatus::Ok
    }
}

/// Totals over all partitions.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    pub partitions: u64,
    pub partitions_differing: u64,
    pub source_count: u64,
    pub target_count: u64,
    pub missing: u64,
    pub extra: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub altered: u64,
}

/// Everything `verify` prints, as one JSON object with `--json`.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// True when the target holds an exact copy (duplicates allowed with
    /// `--accept-duplicates`): exit 0.
    pub exact: bool,
    pub verdict: String,
    pub accept_duplicates: bool,
    pub from: String,
    pub to: String,
    pub totals: Totals,
    pub partitions: Vec<PartitionReport>,
    /// Copied topic configs that differ (see `configs`).
    pub configs: Configs,
    /// `--acls`: the copies of the source topics' ACLs the target lacks (null without it).
    pub acls_missing: Option<Vec<Acl>>,
}

impl Report {
    pub(super) fn new(
        from: &str,
        to: &str,
        accept_duplicates: bool,
        partitions: Vec<PartitionReport>,
    ) -> Report {
        let mut t = Totals::default();
        for p in &partitions {
            t.partitions += 1;
            t.partitions_differing += u64::from(!p.ok());
            t.source_count += p.source_count;
            t.target_count += p.target_count;
            t.missing += p.missing;
            t.extra += p.extra;
            t.duplicates += p.duplicates;
            t.reordered += p.reordered;
            t.altered += p.altered;
        }
        let exact = t.partitions_differing == 0;
        let verdict = if exact && t.duplicates > 0 {
            // Accepted duplicates: every record is there, in order, but the copy is not exact.
            format!(
                "COMPLETE: the target holds every one of {} in {}, in source order ({} accepted)",
                table::count(t.source_count, "record"),
                table::count(t.partitions, "partition"),
                table::count(t.duplicates, "duplicate")
            )
        } else if exact {
            format!(
                "EXACT: the target holds an exact copy of {} in {}",
                table::count(t.source_count, "record"),
                table::count(t.partitions, "partition")
            )
        } else {
            let mut what = Vec::new();
            for (n, name) in [
                (t.missing, "missing"),
                (t.extra, "extra"),
                (t.duplicates, "duplicates"),
                (t.reordered, "reordered"),
                (t.altered, "altered"),
            ] {
                if n > 0 {
                    what.push(format!("{n} {name}"));
                }
            }
            let what = if what.is_empty() {
                "partitions missing on the target".to_string()
            } else {
                what.join(", ")
            };
            format!(
                "DIFF: {} of {} partitions differ: {what}",
                t.partitions_differing, t.partitions
            )
        };
        Report {
            exact,
            verdict,
            accept_duplicates,
            from: from.to_string(),
            to: to.to_string(),
            totals: t,
            partitions,
            configs: Configs::default(),
            acls_missing: None,
        }
    }

    /// The aligned table, the examples and the verdict line.
    pub fn human(&self) -> String {
        let range = |r: &Option<OffsetRange>| match r {
            Some(r) => format!("{}-{}", r.first, r.last),
            None => "-".to_string(),
        };
        let header = [
            "TOPIC",
            "PARTITION",
            "SOURCE",
            "TARGET",
            "SOURCE OFFSETS",
            "TARGET OFFSETS",
            "MISSING",
            "EXTRA",
            "DUPLICATES",
            "REORDERED",
            "ALTERED",
            "STATUS",
        ];
        let rows: Vec<[String; 12]> = self
            .partitions
            .iter()
            .map(|p| {
                let topic = if p.topic == p.target_topic {
                    p.topic.clone()
                } else {
                    format!("{} -> {}", p.topic, p.target_topic)
                };
                [
                    topic,
                    p.partition.to_string(),
                    p.source_count.to_string(),
                    p.target_count.to_string(),
                    range(&p.source_offsets),
                    range(&p.target_offsets),
                    p.missing.to_string(),
                    p.extra.to_string(),
                    p.duplicates.to_string(),
                    p.reordered.to_string(),
                    p.altered.to_string(),
                    p.status.to_string(),
                ]
            })
            .collect();
        let mut lines = vec![header.map(String::from)];
        lines.extend(rows);
        // Text left-aligned, numbers right-aligned.
        let mut out = table::aligned(&lines, &[1, 2, 3, 6, 7, 8, 9, 10]);
        let mut problems = String::new();
        for p in &self.partitions {
            if let Some(n) = &p.note {
                problems.push_str(&format!("  {}[{}]: {n}\n", p.target_topic, p.partition));
            }
            for e in &p.examples {
                let at = match (e.source_offset, e.target_offset) {
                    (Some(s), Some(t)) => format!("source offset {s}, target offset {t}"),
                    (Some(s), None) => format!("source offset {s}"),
                    (None, Some(t)) => format!("target offset {t}"),
                    (None, None) => String::new(),
                };
                problems.push_str(&format!(
                    "  {}[{}] {}: {at}: {}\n",
                    p.target_topic,
                    p.partition,
                    e.kind.as_str(),
                    e.detail
                ));
            }
        }
        if !problems.is_empty() {
            out.push_str(&format!(
                "\nExamples (up to {MAX_EXAMPLES} per partition):\n"
            ));
            out.push_str(&problems);
        }
        out.push_str(&self.configs.human());
        if let Some(missing) = &self.acls_missing {
            out.push_str(&format!(
                "\nACLs the target lacks (as --sync-acls copies them): {}\n",
                missing.len()
            ));
            for a in missing {
                out.push_str(&format!("  missing: {}\n", a.describe()));
            }
        }
        out.push('\n');
        out.push_str(&self.verdict);
        out.push('\n');
        out
    }
}

impl Report {
    /// Adds the ACLs the target lacks (`--acls`): any makes the copy inexact.
    pub(super) fn add_acls(&mut self, missing: Vec<Acl>) {
        if !missing.is_empty() {
            let what = format!("{} ACLs missing on the target", missing.len());
            if self.exact {
                self.verdict = format!("DIFF: the records match, but {what}");
            } else {
                self.verdict.push_str(&format!("; {what}"));
            }
            self.exact = false;
        }
        self.acls_missing = Some(missing);
    }

    /// Adds the config comparison; with `counted` (`--configs`) differences make the copy
    /// inexact.
    pub(super) fn add_configs(
        &mut self,
        found: std::result::Result<Vec<TopicDrift>, String>,
        counted: bool,
    ) {
        self.configs = match found {
            Ok(differences) => Configs {
                compared: true,
                note: None,
                counted,
                differences,
            },
            Err(why) => Configs {
                compared: false,
                note: Some(why),
                counted,
                differences: Vec::new(),
            },
        };
        if counted && !self.configs.differences.is_empty() {
            if self.exact {
                self.verdict = format!(
                    "DIFF: the records match, but {} copied topic configs differ",
                    self.configs.differences.len()
                );
            } else {
                self.verdict.push_str(&format!(
                    "; {} copied topic configs differ",
                    self.configs.differences.len()
                ));
            }
            self.exact = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::compare::compare;
    use crate::verify::fingerprint::fixtures::part;

    #[test]
    fn report_table_and_verdict() {
        let mut target = part(0..10);
        target[2].headers ^= 1;
        let c = compare(&part(0..10), &target);
        let row = PartitionReport {
            topic: "orders".into(),
            target_topic: "backup.orders".into(),
            partition: 0,
            source_count: 10,
            target_count: 10,
            source_offsets: Some(OffsetRange { first: 0, last: 9 }),
            target_offsets: Some(OffsetRange { first: 0, last: 9 }),
            missing: c.missing,
            extra: c.extra,
            duplicates: c.duplicates,
            reordered: c.reordered,
            altered: c.altered,
            status: PartitionStatus::Diff,
            source_digest: None,
            target_digest: None,
            note: None,
            examples: c.examples,
        };
        let r = Report::new("a", "b", false, vec![row]);
        assert!(!r.exact);
        let text = r.human();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("TOPIC"), "{text}");
        assert!(
            lines[1].contains("orders -> backup.orders") && lines[1].ends_with("DIFF"),
            "{text}"
        );
        // Aligned: text columns start under their header, number columns end under it.
        assert_eq!(lines[0].find("STATUS"), lines[1].find("DIFF"), "{text}");
        let end = lines[0].find("PARTITION").unwrap() + "PARTITION".len();
        assert!(lines[1][..end].ends_with(" 0"), "{text}");
        assert!(
            text.contains(
                "backup.orders[0] altered: source offset 2, target offset 2: headers differ"
            ),
            "{text}"
        );
        assert_eq!(
            lines.last(),
            Some(&"DIFF: 1 of 1 partitions differ: 1 altered")
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["exact"], false);
        assert_eq!(json["partitions"][0]["altered"], 1);
        assert_eq!(json["partitions"][0]["examples"][0]["kind"], "altered");
    }
}
