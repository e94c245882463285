//! Every metric the exporter serves, as users query it: the man page's METRICS section and
//! the table in docs/guide.md are generated from this list (`kreplicate generate .`), and a
//! test renders the exposition and checks it serves exactly these names, types and labels.

/// Prometheus metric type, as `# TYPE` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// One metric: its full name (counters with `_total`), type, labels and meaning (Markdown).
#[derive(Debug)]
pub struct Metric {
    pub name: &'static str,
    pub kind: Kind,
    pub labels: &'static [&'static str],
    pub meaning: &'static str,
}

const PARTITION: &[&str] = &["topic", "partition"];

const fn m(
    name: &'static str,
    kind: Kind,
    labels: &'static [&'static str],
    meaning: &'static str,
) -> Metric {
    Metric {
        name,
        kind,
        labels,
        meaning,
    }
}

use Kind::{Counter, Gauge};

#[rustfmt::skip]
pub const CATALOGUE: &[Metric] = &[
    m("kreplicate_records_copied_total", Counter, PARTITION, "records of the source partition the target acknowledged (exactly-once: in committed transactions)"),
    m("kreplicate_bytes_copied_total", Counter, PARTITION, "their key + value bytes"),
    m("kreplicate_lag_records", Gauge, PARTITION, "records between what the target holds and the partition's end"),
    m("kreplicate_lag_seconds", Gauge, PARTITION, "now minus the time stamp of the last copied record; 0 when caught up"),
    m("kreplicate_committed_offset", Gauge, PARTITION, "the committed source position"),
    m("kreplicate_last_copied_offset", Gauge, PARTITION, "the highest source offset copied in this run"),
    m("kreplicate_source_end_offset", Gauge, PARTITION, "the partition's end as the last fetch saw it"),
    m("kreplicate_last_commit_timestamp_seconds", Gauge, &[], "when positions (or a transaction) were last committed"),
    m("kreplicate_last_success_timestamp_seconds", Gauge, &[], "when a run last succeeded (see below); with `--metrics-file`, kept from earlier runs until this one succeeds"),
    m("kreplicate_delivery_errors_total", Counter, &[], "deliveries the target failed"),
    m("kreplicate_delivery_retries_total", Counter, &[], "produce requests librdkafka sent again (from its statistics)"),
    m("kreplicate_skipped_records_total", Counter, &[], "source records not copied because their origin names the target cluster (loops)"),
    m("kreplicate_unstamped_records_total", Counter, &[], "records copied without the origin header: with it they exceeded the target's size limit"),
    m("kreplicate_rebalances_total", Counter, &[], "partition assignments this process received: one per group rebalance (a static `--shard` assigns once)"),
    m("kreplicate_transactions_committed_total", Counter, &[], "exactly-once transactions committed"),
    m("kreplicate_transactions_aborted_total", Counter, &[], "exactly-once transactions aborted (and copied again)"),
    m("kreplicate_throttled_seconds_total", Counter, &[], "time the read side waited for `--max-bytes-per-sec`/`--max-records-per-sec`"),
    m("kreplicate_group_sync_last_success_timestamp_seconds", Gauge, &[], "`--sync-groups`: when a round last translated every selected group (none refused); absent before the first"),
    m("kreplicate_assigned_partitions", Gauge, &[], "source partitions this process copies"),
    m("kreplicate_ready", Gauge, &[], "1 while `/readyz` answers 200 (the run holds its share of the partitions, the target acknowledges, and it copies or is caught up), else 0"),
    m("kreplicate_stalled_seconds", Gauge, &[], "seconds since the copy last moved (or was idle with nothing to copy)"),
    m("kreplicate_records_in_flight", Gauge, &[], "records sent to the target and not yet acknowledged"),
    m("kreplicate_oldest_unacknowledged_seconds", Gauge, &[], "how long the oldest of them has waited for the target's acknowledgement; 0 when none waits"),
    m("kreplicate_status", Gauge, &["status"], "1 for the current one of `running`, `ok`, `failed`, `stopped`, `interrupted`"),
    m("kreplicate_run_info", Gauge, &["version", "guarantee", "from", "to", "group", "flow"], "always 1; `flow` is `--flow`'s name, empty without one"),
    m("kreplicate_start_time_seconds", Gauge, &[], "when the run started"),
];

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::atomic::Ordering;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, SystemTime};

    use super::CATALOGUE;
    use crate::report::{Copied, Counters, Identity, PartitionEnd};

    /// Name (as queried), type and label names of every family a scrape serves, with every
    /// optional series present (a partition with all its figures, a commit, a success).
    fn served() -> BTreeSet<(String, String, Vec<String>)> {
        let counters = Arc::new(Counters::default());
        counters.last_commit_ms.store(1, Ordering::Relaxed);
        counters.last_success_ms.store(1, Ordering::Relaxed);
        counters.group_sync_round(Ok(vec![]));
        let part = PartitionEnd {
            committed: Some(3),
            position: Some(4),
            copied: Copied {
                records: 4,
                bytes: 40,
                first: Some(0),
                last: Some(3),
                last_time: Some(1),
            },
            end_offset: Some(9),
            released: false,
            behind_transaction: None,
        };
        counters.publish(BTreeMap::from([(("t".to_string(), 0), part)]), 0);
        let inner = Arc::new(super::super::Inner {
            counters,
            who: Identity::default(),
            started: SystemTime::now(),
            delivery_timeout: Duration::from_secs(1),
            status: Mutex::new(None),
            file: None,
            writing: Mutex::new(()),
        });
        let text = super::super::exposition::render(&inner);
        let mut out = BTreeSet::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("# TYPE ") else {
                continue;
            };
            let (family, kind) = rest.split_once(' ').expect("# TYPE name kind");
            // prometheus_client names a counter family with its `_total` already.
            let name = family.to_string();
            // The labels of the family's first sample.
            let sample = text
                .lines()
                .find(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("{name} has no sample in {text}"));
            let labels = sample
                .split_once('{')
                .map(|(_, l)| {
                    l.split(',')
                        .filter_map(|kv| kv.split_once('=').map(|(k, _)| k.to_string()))
                        .collect()
                })
                .unwrap_or_default();
            out.insert((name, kind.to_string(), labels));
        }
        out
    }

    #[test]
    fn the_catalogue_is_what_a_scrape_serves() {
        let documented: BTreeSet<(String, String, Vec<String>)> = CATALOGUE
            .iter()
            .map(|m| {
                let labels = m.labels.iter().map(|l| l.to_string()).collect();
                (m.name.to_string(), m.kind.as_str().to_string(), labels)
            })
            .collect();
        assert_eq!(
            documented.len(),
            CATALOGUE.len(),
            "a metric is listed twice"
        );
        let served = served();
        let missing: Vec<_> = served.difference(&documented).collect();
        let stale: Vec<_> = documented.difference(&served).collect();
        assert!(
            missing.is_empty() && stale.is_empty(),
            "served but not in the catalogue: {missing:?}; in the catalogue but not served: {stale:?}"
        );
    }
}
