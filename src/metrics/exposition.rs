//! The metrics in Prometheus text format, read from the run's counters at each scrape.

use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::Inner;
use crate::report::{PartitionEnd, Status};

/// The name of the last success's metric, without the `kreplicate_` prefix.
pub(super) const LAST_SUCCESS: &str = "last_success_timestamp_seconds";

/// The last success an earlier run wrote into a metrics file's `text`, in Unix milliseconds.
pub(super) fn last_success(text: &str) -> Option<u64> {
    let name = format!("kreplicate_{LAST_SUCCESS} ");
    let value: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix(&name))?
        .trim()
        .parse()
        .ok()?;
    (value.is_finite() && value > 0.0).then(|| (value * 1000.0).round() as u64)
}

/// The text a scrape or the file gets.
pub(super) fn render(inner: &std::sync::Arc<Inner>) -> String {
    let mut registry = Registry::with_prefix("kreplicate");
    registry.register_collector(Box::new(Scrape(inner.clone())));
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry);
    out
}

#[derive(Debug)]
struct Scrape(std::sync::Arc<Inner>);

type Labels = [(&'static str, String); 2];

fn labels((topic, partition): &(String, i32)) -> Labels {
    [
        ("topic", topic.clone()),
        ("partition", partition.to_string()),
    ]
}

fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Seconds between now and the time stamp of the last copied record; 0 when nothing is
/// left to copy (a caught-up copy is not behind, however old its last record).
pub(super) fn lag_seconds(p: &PartitionEnd, now_ms: i64) -> Option<f64> {
    match p.lag()? {
        0 => Some(0.0),
        _ => p
            .copied
            .last_time
            .map(|t| ((now_ms - t).max(0) as f64) / 1000.0),
    }
}

impl Collector for Scrape {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let inner = &self.0;
        let c = &inner.counters;
        let parts = c.partitions();
        let now = SystemTime::now();
        let now_ms = (unix_seconds(now) * 1000.0) as i64;

        let info: [(&str, String); 6] = [
            ("version", env!("CARGO_PKG_VERSION").to_string()),
            (
                "guarantee",
                inner.who.guarantee.unwrap_or_default().to_string(),
            ),
            ("from", inner.who.from.clone().unwrap_or_default()),
            ("to", inner.who.to.clone().unwrap_or_default()),
            (
                "group",
                inner
                    .counters
                    .group()
                    .or_else(|| inner.who.group.clone())
                    .unwrap_or_default(),
            ),
            ("flow", inner.who.flow.clone().unwrap_or_default()),
        ];
        let mut m = enc.encode_descriptor(
            "run_info",
            "The run: kreplicate's version, the guarantee, source and target cluster, source group and named flow (always 1)",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(1i64).encode(m.encode_family(&info)?)?;

        let current = inner.status();
        let mut m = enc.encode_descriptor(
            "status",
            "1 for the run's current status (running, ok, failed, stopped, interrupted), 0 for the others",
            None,
            MetricType::Gauge,
        )?;
        for (name, s) in [
            ("running", None),
            ("ok", Some(Status::Ok)),
            ("failed", Some(Status::Failed)),
            ("stopped", Some(Status::Stopped)),
            ("interrupted", Some(Status::Interrupted)),
        ] {
            let v = i64::from(current == s);
            ConstGauge::new(v).encode(m.encode_family(&[("status", name)])?)?;
        }

        gauge(
            &mut enc,
            "start_time_seconds",
            "When the run started, in Unix seconds",
            unix_seconds(inner.started),
        )?;
        let stalled = c.stalled_for().as_secs_f64();
        gauge(
            &mut enc,
            "stalled_seconds",
            "Seconds since the copy last moved or was idle with nothing to copy; /healthz fails past --delivery-timeout",
            stalled,
        )?;
        let (in_flight, oldest) = c.in_flight();
        gauge(
            &mut enc,
            "records_in_flight",
            "Records sent to the target and not yet acknowledged",
            in_flight as f64,
        )?;
        gauge(
            &mut enc,
            "oldest_unacknowledged_seconds",
            "How long the oldest record in flight has waited for the target's acknowledgement; 0 when none waits",
            oldest.map_or(0.0, |d| d.as_secs_f64()),
        )?;
        let last_commit = c.last_commit_ms.load(Ordering::Relaxed);
        if last_commit > 0 {
            gauge(
                &mut enc,
                "last_commit_timestamp_seconds",
                "When positions were last committed (at-least-once) or a transaction committed (exactly-once), in Unix seconds",
                last_commit as f64 / 1000.0,
            )?;
        }
        let last_success = c.last_success_ms.load(Ordering::Relaxed);
        if last_success > 0 {
            gauge(
                &mut enc,
                LAST_SUCCESS,
                "When a run last succeeded, in Unix seconds: it ended without a failure, or (continuous) committed all the target acknowledged while the copy moved or had nothing to copy; kept from earlier runs in --metrics-file",
                last_success as f64 / 1000.0,
            )?;
        }
        if let Some(ms) = c
            .group_sync()
            .map(|s| s.last_success_ms)
            .filter(|ms| *ms > 0)
        {
            gauge(
                &mut enc,
                "group_sync_last_success_timestamp_seconds",
                "When a --sync-groups round last translated every selected group, in Unix seconds",
                ms as f64 / 1000.0,
            )?;
        }
        gauge(
            &mut enc,
            "ready",
            "1 while /readyz answers 200 (the run holds its share of the partitions, the target acknowledges, and it copies or is caught up), else 0",
            if inner.readiness().not_ready().is_none() { 1.0 } else { 0.0 },
        )?;
        gauge(
            &mut enc,
            "assigned_partitions",
            "Source partitions this process copies",
            c.assigned.load(Ordering::Relaxed) as f64,
        )?;
        let m = enc.encode_descriptor(
            "throttled_seconds",
            "Time the read side waited for --max-bytes-per-sec or --max-records-per-sec",
            None,
            MetricType::Counter,
        )?;
        ConstCounter::new(c.throttled_seconds()).encode(m)?;
        for (name, help, v) in [
            (
                "delivery_errors",
                "Deliveries the target failed",
                &c.delivery_errors,
            ),
            (
                "delivery_retries",
                "Produce requests librdkafka sent to the target again",
                &c.retries,
            ),
            (
                "skipped_records",
                "Source records not copied because their origin names the target cluster (loops)",
                &c.skipped,
            ),
            (
                "unstamped_records",
                "Records copied without the origin header: with it they exceeded the target's size limit",
                &c.unstamped,
            ),
            (
                "rebalances",
                "Partition assignments this process received: one per group rebalance (a static --shard assigns once)",
                &c.rebalances,
            ),
            (
                "transactions_committed",
                "exactly-once: transactions committed on the target",
                &c.transactions_committed,
            ),
            (
                "transactions_aborted",
                "exactly-once: transactions aborted (and copied again)",
                &c.transactions_aborted,
            ),
        ] {
            let m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
            ConstCounter::new(v.load(Ordering::Relaxed)).encode(m)?;
        }

        let per_partition: [(&str, &str, MetricType, PartitionValue); 7] = [
            (
                "records_copied",
                "Records of the source partition the target acknowledged (exactly-once: in committed transactions)",
                MetricType::Counter,
                |p, _| Some(p.copied.records as f64),
            ),
            (
                "bytes_copied",
                "Key and value bytes of those records",
                MetricType::Counter,
                |p, _| Some(p.copied.bytes as f64),
            ),
            (
                "lag_records",
                "Records between what the target holds and the source partition's end",
                MetricType::Gauge,
                |p, _| p.lag().map(|l| l as f64),
            ),
            (
                "lag_seconds",
                "Now minus the time stamp of the last copied record; 0 when caught up",
                MetricType::Gauge,
                lag_seconds,
            ),
            (
                "committed_offset",
                "The committed source position (next offset to read)",
                MetricType::Gauge,
                |p, _| p.committed.map(|o| o as f64),
            ),
            (
                "last_copied_offset",
                "The highest source offset copied in this run",
                MetricType::Gauge,
                |p, _| p.copied.last.map(|o| o as f64),
            ),
            (
                "source_end_offset",
                "The source partition's end (high watermark) as the last fetch saw it",
                MetricType::Gauge,
                |p, _| p.end_offset.map(|o| o as f64),
            ),
        ];
        for (name, help, kind, value) in per_partition {
            let mut m = enc.encode_descriptor(name, help, None, kind)?;
            for (key, p) in &parts {
                // A partition given up in a rebalance keeps its counters, not its gauges.
                let gauge = !matches!(kind, MetricType::Counter);
                if gauge && p.released {
                    continue;
                }
                let Some(v) = value(p, now_ms) else { continue };
                let l = labels(key);
                match kind {
                    MetricType::Counter => ConstCounter::new(v).encode(m.encode_family(&l)?)?,
                    _ => ConstGauge::new(v).encode(m.encode_family(&l)?)?,
                }
            }
        }
        Ok(())
    }
}

type PartitionValue = fn(&PartitionEnd, i64) -> Option<f64>;

fn gauge(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    v: f64,
) -> Result<(), std::fmt::Error> {
    let m = enc.encode_descriptor(name, help, None, MetricType::Gauge)?;
    ConstGauge::new(v).encode(m)
}

/// `/healthz`: healthy while the copy moves or idles with nothing to copy, and once the run
/// ended; not after a stall longer than the delivery timeout.
pub(super) fn healthy(stalled: Duration, delivery_timeout: Duration, ended: bool) -> bool {
    ended || stalled <= delivery_timeout
}

/// What `/readyz` and `kreplicate_ready` are decided from.
#[derive(Debug, Default)]
pub(super) struct Readiness {
    pub(super) ended: bool,
    /// What the run waits for (`Counters::waiting`): clusters being checked, a group's join,
    /// the final commit.
    pub(super) waiting: Option<String>,
    /// An exactly-once run's start steps.
    pub(super) starting: bool,
    /// The run holds its share of the partitions (`Counters::holding`).
    pub(super) holding: bool,
    /// Records in flight, and how long the oldest has waited for the target.
    pub(super) in_flight: (u64, Option<Duration>),
    pub(super) delivery_timeout: Duration,
}

impl Readiness {
    /// `None` when ready: the run holds its share, the target acknowledges, and it copies or
    /// is caught up. Otherwise why not, in a few words. The target counts as not
    /// acknowledging from half of --delivery-timeout, when the progress line warns of it.
    pub(super) fn not_ready(&self) -> Option<String> {
        if self.ended {
            return Some("the run ended".into());
        }
        if let Some(what) = &self.waiting {
            return Some(what.clone());
        }
        if self.starting {
            return Some("starting".into());
        }
        if !self.holding {
            return Some("waiting for the group to assign partitions".into());
        }
        match self.in_flight {
            (n, Some(waited)) if waited >= self.delivery_timeout / 2 => Some(format!(
                "the target has not acknowledged {n} records for {} s",
                waited.as_secs()
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Readiness;

    #[test]
    fn issue_44_ready_only_holding_a_share_with_the_target_acknowledging() {
        let ready = Readiness {
            holding: true,
            in_flight: (40, Some(Duration::from_millis(9_999))),
            delivery_timeout: Duration::from_secs(20),
            ..Readiness::default()
        };
        assert_eq!(ready.not_ready(), None);
        let not = |r: Readiness| r.not_ready().unwrap_or_default();
        assert_eq!(
            not(Readiness {
                in_flight: (40, Some(Duration::from_secs(10))),
                ..ready
            }),
            "the target has not acknowledged 40 records for 10 s"
        );
        let ready = || Readiness {
            holding: true,
            delivery_timeout: Duration::from_secs(20),
            ..Readiness::default()
        };
        assert_eq!(
            not(Readiness {
                holding: false,
                ..ready()
            }),
            "waiting for the group to assign partitions"
        );
        assert_eq!(
            not(Readiness {
                waiting: Some("joining group 'g'".into()),
                ..ready()
            }),
            "joining group 'g'"
        );
        assert_eq!(
            not(Readiness {
                starting: true,
                ..ready()
            }),
            "starting"
        );
        assert_eq!(
            not(Readiness {
                ended: true,
                ..ready()
            }),
            "the run ended"
        );
    }

    #[test]
    fn issue_22_the_last_success_is_read_back_from_an_earlier_file() {
        let text = "# HELP kreplicate_last_success_timestamp_seconds When.\n# TYPE kreplicate_last_success_timestamp_seconds gauge\nkreplicate_last_success_timestamp_seconds 1764633600.25\nkreplicate_assigned_partitions 2\n";
        assert_eq!(super::last_success(text), Some(1_764_633_600_250));
        assert_eq!(
            super::last_success("kreplicate_assigned_partitions 2\n"),
            None
        );
        assert_eq!(
            super::last_success("kreplicate_last_success_timestamp_seconds NaN\n"),
            None
        );
        assert_eq!(super::last_success(""), None);
    }
}
