//! Reading: the [`Reader`] turns one partition at a time of one cluster into fingerprints
//! with bounded memory, and [`verify_partition`] drives the source and target readers through
//! one partition (lockstep first, then a full comparison where they differ).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use super::compare::{compare, Comparison, Example, Problem, MAX_EXAMPLES, MAX_RECORDS};
use super::fingerprint::{Fingerprint, OWN_HEADER_PREFIX};
use super::report::{PartitionReport, PartitionStatus, SideStats};
use super::Route;
use crate::error::{Error, Result};
use crate::kafka;
use crate::options::ClusterSpec;
use crate::source::{self, classify_groupless, Polled};

/// Reads one partition at a time of one cluster, as fingerprints, from the beginning to the
/// end marked by partition-EOF. Assign only: its throwaway `group.id` is never joined and
/// nothing is committed.
pub(super) struct Reader {
    pub(super) consumer: BaseConsumer,
    side: &'static str,
    cluster: String,
    timeout: Duration,
    topic: String,
    partition: i32,
    eof: bool,
}

impl Drop for Reader {
    fn drop(&mut self) {
        source::close(&self.consumer, self.timeout);
    }
}

impl Reader {
    pub(super) fn new(spec: &ClusterSpec, side: &'static str, timeout: Duration) -> Result<Reader> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let group = format!("kreplicate-verify-{}-{nanos}", std::process::id());
        let mut c = kafka::reader_config(
            spec,
            &group,
            &[
                // A bounded prefetch, and short empty fetches: Apache Kafka holds an empty
                // fetch for the full wait, and every partition end waits for one on each side
                // (at 100 ms, verify of 100 MB in 64 partitions took 14 s, at 10 ms 1.8 s; at
                // 10 ms, 2,000 partitions of 10 records took 52 s, at 1 ms 10.6 s).
                ("queued.max.messages.kbytes", "16384"),
                // The kbytes bound counts payload only: at librdkafka's default of 100,000
                // queued records, small records' overhead made the peak grow with the partition
                // (records of 100 B: 36 MB for 20,000, 121 MB for 2,000,000; now 33 and 37).
                ("queued.min.messages", "10000"),
                ("fetch.wait.max.ms", "1"),
                // Both sides are read in lockstep, so one side's queue is often full while the
                // other catches up: retry such a partition soon, not after librdkafka's second
                // (at 10 ms, a fresh partition waited for it too: 2,000 partitions 14.6 s).
                ("fetch.queue.backoff.ms", "1"),
            ],
        );
        // Records deleted under the reader (retention) must not be skipped silently.
        c.set("auto.offset.reset", "error");
        let consumer: BaseConsumer = c.create().map_err(|e| kafka::creation_error(side, e))?;
        Ok(Reader {
            consumer,
            side,
            cluster: spec.name.clone(),
            timeout,
            topic: String::new(),
            partition: -1,
            eof: true,
        })
    }

    /// Starts reading `topic[partition]` from its first record.
    fn open(&mut self, topic: &str, partition: i32) -> Result<()> {
        let mut tpl = TopicPartitionList::new();
        // Metadata once per topic: asked again, it waits behind the last partition's fetch.
        let first = topic != self.topic;
        tpl.add_partition_offset(topic, partition, Offset::Beginning)
            .and_then(|()| match first {
                true => source::assign_with_leaders(&self.consumer, &tpl),
                false => self.consumer.assign(&tpl),
            })
            .map_err(|e| {
                Error::usage(format!(
                    "{} cluster '{}': cannot read {topic}[{partition}]: {e}",
                    self.side, self.cluster
                ))
            })?;
        self.topic = topic.to_string();
        self.partition = partition;
        self.eof = false;
        Ok(())
    }

    fn error(&self, what: impl std::fmt::Display) -> Error {
        Error::usage(format!(
            "{} cluster '{}': reading {}[{}]: {what}",
            self.side, self.cluster, self.topic, self.partition
        ))
    }

    /// The next record's fingerprint, or None at the end of the partition. Errors when the
    /// broker gives neither a record nor the end within the timeout.
    fn next(&mut self) -> Result<Option<Fingerprint>> {
        if self.eof {
            return Ok(None);
        }
        let mut deadline: Option<Instant> = None;
        let mut last_error: Option<String> = None;
        loop {
            match classify_groupless(self.consumer.poll(Duration::from_millis(100))) {
                Polled::Record(m) => {
                    if m.partition() != self.partition || m.topic() != self.topic {
                        continue;
                    }
                    let headers = m.headers();
                    let fp = Fingerprint::of(
                        m.offset(),
                        m.key(),
                        m.payload(),
                        headers
                            .into_iter()
                            .flat_map(|h| h.iter().map(|h| (h.key, h.value))),
                        m.timestamp().to_millis(),
                        |k| k.starts_with(OWN_HEADER_PREFIX),
                    );
                    return Ok(Some(fp));
                }
                Polled::End(p) if p == self.partition => {
                    self.eof = true;
                    return Ok(None);
                }
                Polled::End(_) | Polled::Idle => {}
                Polled::Gap(code) => {
                    return Err(self.error(format!(
                        "{code}: records were deleted while verify read them (retention?); run it again"
                    )));
                }
                Polled::Fatal(why) => return Err(self.error(why)),
                Polled::Transient(e) => last_error = Some(e.to_string()),
            }
            let deadline = *deadline.get_or_insert_with(|| Instant::now() + self.timeout);
            if Instant::now() >= deadline {
                let why = last_error.map_or(String::new(), |e| format!(" (last error: {e})"));
                return Err(self.error(format!(
                    "no record and no end of partition within {:?}{why}; check the cluster or raise --timeout",
                    self.timeout
                )));
            }
        }
    }

    /// Every fingerprint of `topic[partition]`.
    fn read_all(&mut self, topic: &str, partition: i32) -> Result<Vec<Fingerprint>> {
        self.open(topic, partition)?;
        let mut out = Vec::new();
        while let Some(fp) = self.next()? {
            if out.len() >= MAX_RECORDS {
                return Err(self.error(format!(
                    "more than {MAX_RECORDS} records in one partition differ, more than verify can compare"
                )));
            }
            out.push(fp);
        }
        out.shrink_to_fit();
        Ok(out)
    }

    /// Count, offsets and digest of `topic[partition]`, plus its first few fingerprints.
    fn scan(&mut self, topic: &str, partition: i32) -> Result<(SideStats, Vec<Fingerprint>)> {
        self.open(topic, partition)?;
        let mut stats = SideStats::default();
        let mut first = Vec::new();
        while let Some(fp) = self.next()? {
            stats.add(&fp);
            if first.len() < MAX_EXAMPLES {
                first.push(fp);
            }
        }
        Ok((stats, first))
    }
}

/// Compares one partition (see the [`verify`](super) module doc for the two phases and their
/// memory).
pub(super) fn verify_partition(
    src: &mut Reader,
    tgt: &mut Reader,
    route: &Route,
    partition: i32,
    accept_duplicates: bool,
) -> Result<PartitionReport> {
    let in_source = partition < route.source_partitions;
    let in_target = partition < route.target_partitions;
    match (in_source, in_target) {
        (true, true) => on_both_sides(src, tgt, route, partition, accept_duplicates),
        (true, false) => only_in_source(src, route, partition),
        (false, _) => only_in_target(tgt, route, partition),
    }
}

/// Both sides have the partition: lockstep while they agree, the full comparison once they
/// differ.
fn on_both_sides(
    src: &mut Reader,
    tgt: &mut Reader,
    route: &Route,
    partition: i32,
    accept_duplicates: bool,
) -> Result<PartitionReport> {
    if let Some((s, t)) = lockstep(src, tgt, route, partition)? {
        let same = Comparison::default();
        return Ok(row(route, partition, Some(s), Some(t), same, true, None));
    }
    let (s, t) = read_both(src, tgt, route, partition)?;
    let c = compare(&s, &t);
    let ok = c.is_exact(accept_duplicates);
    let (s, t) = (SideStats::of(&s), SideStats::of(&t));
    Ok(row(route, partition, Some(s), Some(t), c, ok, None))
}

/// Reads both sides record by record while they agree, keeping nothing per record: both
/// sides' stats when they agree to the end, `None` at the first difference.
fn lockstep(
    src: &mut Reader,
    tgt: &mut Reader,
    route: &Route,
    partition: i32,
) -> Result<Option<(SideStats, SideStats)>> {
    src.open(&route.source, partition)?;
    tgt.open(&route.target, partition)?;
    let (mut s, mut t) = (SideStats::default(), SideStats::default());
    loop {
        match (src.next()?, tgt.next()?) {
            (None, None) => return Ok(Some((s, t))),
            (Some(a), Some(b)) if a.same_record(&b) => {
                s.add(&a);
                t.add(&b);
            }
            _ => return Ok(None),
        }
    }
}

/// Both sides' fingerprints, read again from the start, at the same time.
fn read_both(
    src: &mut Reader,
    tgt: &mut Reader,
    route: &Route,
    partition: i32,
) -> Result<(Vec<Fingerprint>, Vec<Fingerprint>)> {
    let (s, t) = std::thread::scope(|scope| {
        let source = scope.spawn(|| src.read_all(&route.source, partition));
        let t = tgt.read_all(&route.target, partition);
        let s = source
            .join()
            .unwrap_or_else(|_| Err(Error::usage("internal error: the source reader failed")));
        (s, t)
    });
    Ok((s?, t?))
}

/// The target lacks the partition: every source record is missing.
fn only_in_source(src: &mut Reader, route: &Route, partition: i32) -> Result<PartitionReport> {
    let (s, first) = src.scan(&route.source, partition)?;
    let c = Comparison {
        missing: s.count,
        examples: examples(&first, Problem::Missing, "not in the target"),
        ..Comparison::default()
    };
    let note = format!(
        "partition {partition} does not exist on the target ('{}' has {} partitions, '{}' has {})",
        route.target, route.target_partitions, route.source, route.source_partitions
    );
    // A missing partition is a difference even when the source partition is empty.
    Ok(row(route, partition, Some(s), None, c, false, Some(note)))
}

/// The source lacks the partition: every target record is extra, so it must be empty.
fn only_in_target(tgt: &mut Reader, route: &Route, partition: i32) -> Result<PartitionReport> {
    let (t, first) = tgt.scan(&route.target, partition)?;
    let c = Comparison {
        extra: t.count,
        examples: examples(
            &first,
            Problem::Extra,
            "in a partition the source does not have",
        ),
        ..Comparison::default()
    };
    let note = format!(
        "partition {partition} exists only on the target ('{}' has {} partitions, '{}' has {}); it must be empty",
        route.target, route.target_partitions, route.source, route.source_partitions
    );
    let ok = t.count == 0;
    Ok(row(route, partition, None, Some(t), c, ok, Some(note)))
}

/// The first records of a partition one side lacks, as examples of `kind`.
fn examples(first: &[Fingerprint], kind: Problem, detail: &str) -> Vec<Example> {
    let (on_source, on_target) = (kind == Problem::Missing, kind == Problem::Extra);
    first
        .iter()
        .map(|fp| Example {
            kind,
            source_offset: on_source.then_some(fp.offset),
            target_offset: on_target.then_some(fp.offset),
            detail: detail.into(),
        })
        .collect()
}

/// One partition's row of the report.
fn row(
    route: &Route,
    partition: i32,
    s: Option<SideStats>,
    t: Option<SideStats>,
    c: Comparison,
    ok: bool,
    note: Option<String>,
) -> PartitionReport {
    PartitionReport {
        topic: route.source.clone(),
        target_topic: route.target.clone(),
        partition,
        source_count: s.map_or(0, |s| s.count),
        target_count: t.map_or(0, |t| t.count),
        source_offsets: s.and_then(|s| s.offsets),
        target_offsets: t.and_then(|t| t.offsets),
        missing: c.missing,
        extra: c.extra,
        duplicates: c.duplicates,
        reordered: c.reordered,
        altered: c.altered,
        status: if ok {
            PartitionStatus::Ok
        } else {
            PartitionStatus::Diff
        },
        source_digest: s.map(|s| s.digest.hex()),
        target_digest: t.map(|t| t.digest.hex()),
        note,
        examples: c.examples,
    }
}
