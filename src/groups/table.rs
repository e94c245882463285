//! What `kreplicate groups` decided per group and partition: the rows, the table on stdout
//! and the `--json` object.

use std::fmt::Write as _;

use crate::table;
use crate::trail::Translation;

/// One source partition of one group.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub target_topic: String,
    /// The group's committed position on the source.
    pub source_position: i64,
    /// The translated position on the target, when there is one.
    pub target_position: Option<i64>,
    /// The target group's committed position before this run, if any.
    pub target_before: Option<i64>,
    pub status: RowStatus,
    /// Target records read to translate it (the bound the positions index keeps).
    pub records_read: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowStatus {
    /// Translated; committed (or, with --dry-run, to be committed).
    Translated,
    /// The target group is already there.
    Unchanged,
    /// The target group is past the translation: kept (no --allow-rewind).
    KeptAhead,
    /// The source group is past what the copy has committed: nothing written.
    AheadOfTheCopy,
    /// The target holds no positions index for this partition (copied with
    /// --no-origin-header, or not by kreplicate).
    NoProvenance,
}

impl RowStatus {
    /// What one group-partition row does (pure), and the target position it names.
    /// `translation`: where the group's source position lands on the target (`None`: the
    /// target holds no positions index for the partition); `before`: the target group's
    /// committed position, if any.
    pub fn decide(
        translation: Option<Translation>,
        before: Option<i64>,
        allow_rewind: bool,
    ) -> (RowStatus, Option<i64>) {
        let at = match translation {
            None => return (RowStatus::NoProvenance, None),
            Some(Translation::Ahead) => return (RowStatus::AheadOfTheCopy, None),
            Some(Translation::At(t)) => t,
        };
        let status = match before {
            Some(b) if b == at => RowStatus::Unchanged,
            Some(b) if b > at && !allow_rewind => RowStatus::KeptAhead,
            _ => RowStatus::Translated,
        };
        (status, Some(at))
    }

    pub fn text(self) -> &'static str {
        match self {
            RowStatus::Translated => "translated",
            RowStatus::Unchanged => "unchanged",
            RowStatus::KeptAhead => "kept: target group is further",
            RowStatus::AheadOfTheCopy => "ahead of the copy",
            RowStatus::NoProvenance => "no provenance on the target",
        }
    }

    /// What to do about a row that refuses its group.
    pub fn action(self) -> &'static str {
        match self {
            RowStatus::AheadOfTheCopy => "copy first, then translate",
            RowStatus::NoProvenance => {
                "copy it with kreplicate (with its origin header), then translate"
            }
            _ => "",
        }
    }

    /// Whether the group can still be committed with this row.
    pub fn ok(self) -> bool {
        matches!(
            self,
            RowStatus::Translated | RowStatus::Unchanged | RowStatus::KeptAhead
        )
    }
}

/// Why a group's rows refuse it as a whole (pure): it has none, or one of them cannot be
/// committed. Active members on the target are the other refusal, asked of the cluster.
pub fn refusal(rows: &[Row]) -> Option<String> {
    if rows.is_empty() {
        return Some("it has no committed position on the selected topics".into());
    }
    let r = rows.iter().find(|r| !r.status.ok())?;
    Some(format!(
        "{}[{}] is {}: {} (nothing committed for this group)",
        r.topic,
        r.partition,
        r.status.text(),
        r.status.action()
    ))
}

/// One group: committed, or why not.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GroupOutcome {
    pub group: String,
    /// `translated` (committed, or would be with --dry-run) or `refused`.
    pub status: &'static str,
    /// Why the group was refused.
    pub reason: Option<String>,
    pub committed: bool,
}

/// The whole answer.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    pub from: String,
    pub to: String,
    pub dry_run: bool,
    pub groups: Vec<GroupOutcome>,
    pub partitions: Vec<Row>,
}

/// Rows of group, topic, partition, source position, target position and status under their
/// heads (`migrate`'s report shows the positions it moved the same way).
pub fn positions(rows: Vec<[String; 6]>) -> String {
    let head = [
        "GROUP",
        "TOPIC",
        "PARTITION",
        "SOURCE POSITION",
        "TARGET POSITION",
        "STATUS",
    ];
    let mut lines = vec![head.map(String::from)];
    lines.extend(rows);
    table::aligned(&lines, &[])
}

impl Report {
    pub fn all_translated(&self) -> bool {
        self.groups.iter().all(|g| g.status == "translated")
    }

    /// The table: one line per partition, then one line per refused group.
    pub fn table(&self) -> String {
        let mut lines = Vec::new();
        for r in &self.partitions {
            let refused = self
                .groups
                .iter()
                .any(|g| g.group == r.group && g.status == "refused");
            let mut status = match (r.status, self.dry_run) {
                (RowStatus::Translated, true) => "would translate".to_string(),
                (s, _) => s.text().to_string(),
            };
            if r.status == RowStatus::KeptAhead {
                let _ = write!(status, " ({})", r.target_before.unwrap_or_default());
            }
            if refused && r.status.ok() {
                status.push_str(", not committed");
            }
            lines.push([
                r.group.clone(),
                r.topic.clone(),
                r.partition.to_string(),
                r.source_position.to_string(),
                r.target_position
                    .map_or_else(|| "-".into(), |t| t.to_string()),
                status,
            ]);
        }
        let mut out = positions(lines);
        for g in &self.groups {
            if let Some(why) = &g.reason {
                let _ = writeln!(out, "group '{}' refused: {why}", g.group);
            }
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// The last line: what was (or, in a dry run, would be) committed, and what was refused.
    pub fn summary(&self) -> String {
        let refused = self.groups.iter().filter(|g| g.status == "refused").count();
        let ok: Vec<&str> = self
            .groups
            .iter()
            .filter(|g| g.status != "refused")
            .map(|g| g.group.as_str())
            .collect();
        let moved = self
            .partitions
            .iter()
            .filter(|r| r.status == RowStatus::Translated && ok.contains(&r.group.as_str()))
            .count();
        let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        format!(
            "{} {} of {} on '{}', {} refused{}",
            if self.dry_run {
                "would commit"
            } else {
                "committed"
            },
            plural(moved, "partition position"),
            plural(ok.len(), "group"),
            self.to,
            plural(refused, "group"),
            if self.dry_run {
                " (dry run: nothing committed)"
            } else {
                ""
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_11_the_table_lines_up_and_names_refusals() {
        let row = |group: &str, status, target| Row {
            group: group.into(),
            topic: "orders".into(),
            partition: 0,
            target_topic: "orders".into(),
            source_position: 120,
            target_position: target,
            target_before: Some(200),
            status,
            records_read: 3,
        };
        let report = Report {
            from: "A".into(),
            to: "B".into(),
            dry_run: true,
            groups: vec![
                GroupOutcome {
                    group: "billing".into(),
                    status: "translated",
                    reason: None,
                    committed: false,
                },
                GroupOutcome {
                    group: "late".into(),
                    status: "refused",
                    reason: Some("orders[0] is ahead of the copy".into()),
                    committed: false,
                },
            ],
            partitions: vec![
                row("billing", RowStatus::KeptAhead, Some(131)),
                row("late", RowStatus::AheadOfTheCopy, None),
            ],
        };
        let t = report.table();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "GROUP    TOPIC   PARTITION  SOURCE POSITION  TARGET POSITION  STATUS"
        );
        assert_eq!(
            lines[1],
            "billing  orders  0          120              131              kept: target group is further (200)"
        );
        assert_eq!(
            lines[2],
            "late     orders  0          120              -                ahead of the copy"
        );
        assert_eq!(
            lines[3],
            "group 'late' refused: orders[0] is ahead of the copy"
        );
        // Issue 22: a dry run says what it would commit, and every run ends with one line.
        assert_eq!(
            lines[4],
            "would commit 0 partition positions of 1 group on 'B', 1 group refused (dry run: nothing committed)"
        );
        let mut moved = report.clone();
        moved.partitions[0].status = RowStatus::Translated;
        assert!(moved
            .table()
            .lines()
            .nth(1)
            .unwrap()
            .ends_with("  would translate"));
        moved.dry_run = false;
        let t = moved.table();
        assert!(t.lines().nth(1).unwrap().ends_with("  translated"));
        assert_eq!(
            t.lines().last().unwrap(),
            "committed 1 partition position of 1 group on 'B', 1 group refused"
        );
        assert!(!report.all_translated());
    }

    #[test]
    fn issue_21_a_non_ascii_topic_keeps_the_columns_aligned() {
        let row = |topic: &str| Row {
            group: "billing".into(),
            topic: topic.into(),
            partition: 0,
            target_topic: topic.into(),
            source_position: 7,
            target_position: Some(7),
            target_before: None,
            status: RowStatus::Translated,
            records_read: 0,
        };
        let report = Report {
            from: "A".into(),
            to: "B".into(),
            dry_run: false,
            groups: vec![GroupOutcome {
                group: "billing".into(),
                status: "translated",
                reason: None,
                committed: true,
            }],
            // 'é' is two bytes and one column.
            partitions: vec![row("commandes-été"), row("orders")],
        };
        let t = report.table();
        let lines: Vec<&str> = t.lines().collect();
        let column = |line: &str| {
            line.find("PARTITION")
                .or_else(|| line.find("0  "))
                .map(|at| line[..at].chars().count())
        };
        assert_eq!(column(lines[0]), Some(24), "{t}");
        assert_eq!(column(lines[1]), Some(24), "{t}");
        assert_eq!(column(lines[2]), Some(24), "{t}");
    }

    #[test]
    fn issue_21_each_row_decision() {
        use RowStatus::*;
        let decide = RowStatus::decide;
        let at = |t| Some(Translation::At(t));
        // No positions index on the target for the partition: no provenance, nothing to move.
        assert_eq!(decide(None, Some(5), false), (NoProvenance, None));
        // The copy has not reached the group's position.
        assert_eq!(
            decide(Some(Translation::Ahead), None, true),
            (AheadOfTheCopy, None)
        );
        // A target group without a position, or behind the translation: moved.
        assert_eq!(decide(at(40), None, false), (Translated, Some(40)));
        assert_eq!(decide(at(40), Some(39), false), (Translated, Some(40)));
        // Already there.
        assert_eq!(decide(at(40), Some(40), false), (Unchanged, Some(40)));
        assert_eq!(decide(at(40), Some(40), true), (Unchanged, Some(40)));
        // Further than the translation: kept, unless --allow-rewind.
        assert_eq!(decide(at(40), Some(41), false), (KeptAhead, Some(40)));
        assert_eq!(decide(at(40), Some(41), true), (Translated, Some(40)));
        // What each outcome means for its group.
        let ok: Vec<RowStatus> = [
            NoProvenance,
            AheadOfTheCopy,
            Translated,
            Unchanged,
            KeptAhead,
        ]
        .into_iter()
        .filter(|s| s.ok())
        .collect();
        assert_eq!(ok, [Translated, Unchanged, KeptAhead]);
    }

    #[test]
    fn issue_21_a_group_is_refused_by_its_first_row_that_cannot_commit() {
        let row = |partition, status| Row {
            group: "billing".into(),
            topic: "orders".into(),
            partition,
            target_topic: "orders".into(),
            source_position: 9,
            target_position: None,
            target_before: None,
            status,
            records_read: 0,
        };
        assert_eq!(
            refusal(&[]).as_deref(),
            Some("it has no committed position on the selected topics")
        );
        let fine = [
            row(0, RowStatus::Translated),
            row(1, RowStatus::KeptAhead),
            row(2, RowStatus::Unchanged),
        ];
        assert_eq!(refusal(&fine), None);
        let ahead = [
            row(0, RowStatus::Translated),
            row(1, RowStatus::AheadOfTheCopy),
            row(2, RowStatus::NoProvenance),
        ];
        assert_eq!(
            refusal(&ahead).as_deref(),
            Some("orders[1] is ahead of the copy: copy first, then translate (nothing committed for this group)")
        );
        assert_eq!(
            refusal(&ahead[2..]).as_deref(),
            Some("orders[2] is no provenance on the target: copy it with kreplicate (with its origin header), then translate (nothing committed for this group)")
        );
    }
}
