//! Reading the target's tail: where exactly-once stands on the target (the newest origin a
//! `read_committed` reader sees), for the run's resume and for `status`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use crate::error::{Error, Result};
use crate::kafka;
use crate::offsets::NextOffset;
use crate::options::ClusterSpec;
use crate::origin::{resume_position, ORIGIN_HEADER};
use crate::source::{self, classify, Polled};

/// Where exactly-once stands on the target for some partitions of one source topic's target
/// topic: per source partition, the position after the newest origin a `read_committed` reader
/// sees in the target partition's tail (absent where the target holds no copy of it). The run
/// resumes there; `status` shows it. The tail widens until it finds an origin or covers the
/// whole partition. `reader`: the target, the reader's group (never joined) and the timeout.
pub(crate) fn checkpoints(
    reader: (&ClusterSpec, &str, Duration),
    source_cluster: &str,
    target: &str,
    sources: Vec<(&str, i32)>,
) -> Result<HashMap<(String, i32), NextOffset>> {
    let mut found = HashMap::new();
    let mut todo = sources;
    let mut tail = 1000i64;
    while !todo.is_empty() {
        let read = read_tail(reader, target, &todo, tail)?;
        let mut next = Vec::new();
        for (source, p) in todo {
            let (origins, covered_all) = read
                .get(&p)
                .ok_or_else(|| Error::failed(format!("no tail read for {target}[{p}]")))?;
            match resume_position(
                origins.iter().map(|v| v.as_deref()),
                source_cluster,
                source,
                p,
            ) {
                Some(pos) => {
                    found.insert((source.to_string(), p), pos);
                }
                // A tail of 2^40 records covers any partition there is.
                None if *covered_all || tail >= 1 << 40 => {}
                None => next.push((source, p)),
            }
        }
        todo = next;
        tail = tail.saturating_mul(8);
    }
    Ok(found)
}

/// Origin header values of the last `tail` records of some partitions of one target topic,
/// and whether that reached the start of the partition.
#[allow(clippy::type_complexity)]
fn read_tail(
    (to, group, timeout): (&ClusterSpec, &str, Duration),
    target: &str,
    parts: &[(&str, i32)],
    tail: i64,
) -> Result<HashMap<i32, (Vec<Option<Vec<u8>>>, bool)>> {
    // Empty partitions answer only after fetch.wait.max.ms. A position outside the log is an
    // error, never a jump to its end: that read as "the target holds nothing of ours" and
    // copied a trimmed partition again (issue 41).
    let reader: BaseConsumer = kafka::reader_config(to, group, &[("fetch.wait.max.ms", "10")])
        .set("auto.offset.reset", "error")
        .create()
        .map_err(|e| Error::failed(format!("target reader: {e}")))?;
    // Metadata first: left to source::assign(), librdkafka 2.12's first metadata request went to
    // the bootstrap connection it was retiring, and the tail read waited ~0.45 s.
    reader
        .fetch_metadata(Some(target), timeout)
        .map_err(|e| Error::failed(format!("cannot read the target {target}: {e}")))?;
    // The window starts inside the log: at its start when the log is shorter than the tail
    // (a trimmed partition, or retention on a quiet one), which then covers all of it.
    let mut tpl = TopicPartitionList::new();
    let mut covered = HashMap::new();
    for (p, bounds) in bounds(&reader, target, parts, timeout) {
        let (low, high) = bounds.map_err(|e| {
            Error::failed(format!(
                "cannot read the bounds of target {target}[{p}]: {e}"
            ))
        })?;
        let from = low.max(high.saturating_sub(tail));
        covered.insert(p, from == low);
        tpl.add_partition_offset(target, p, Offset::Offset(from))
            .map_err(Error::failed)?;
    }
    reader
        .assign(&tpl)
        .map_err(|e| Error::failed(format!("cannot read the target {target}: {e}")))?;
    let mut out: HashMap<i32, (Vec<Option<Vec<u8>>>, bool)> = parts
        .iter()
        .map(|(_, p)| (*p, (Vec::new(), false)))
        .collect();
    let mut at_end: HashMap<i32, bool> = parts.iter().map(|(_, p)| (*p, false)).collect();
    let deadline = Instant::now() + timeout;
    let mut retried = Retried::default();
    while at_end.values().any(|e| !e) {
        if Instant::now() > deadline {
            return Err(Error::failed(format!(
                "reading the tail of target topic {target} took longer than {timeout:?}{}",
                retried.last()
            )));
        }
        match classify(reader.poll(Duration::from_millis(100))) {
            Polled::Record(m) => {
                let origin = m.headers().and_then(|h| {
                    h.iter()
                        .filter(|x| x.key == ORIGIN_HEADER)
                        .last()
                        .and_then(|x| x.value.map(<[u8]>::to_vec))
                });
                if let Some(e) = out.get_mut(&m.partition()) {
                    e.0.push(origin);
                }
            }
            Polled::End(p) => {
                at_end.insert(p, true);
            }
            Polled::Idle => {}
            Polled::Transient(e) => {
                retried.met(&format!("reading the tail of target topic {target}"), e)
            }
            Polled::Gap(code) => {
                return Err(Error::failed(format!(
                    "reading target topic {target}: {code}"
                )))
            }
            Polled::Fatal(msg) => {
                return Err(Error::failed(format!(
                    "reading target topic {target}: {msg}"
                )))
            }
        }
    }
    for (p, (_, all)) in out.iter_mut() {
        *all = covered.get(p).copied().unwrap_or(false);
    }
    drop(tpl);
    source::close(&reader, timeout);
    Ok(out)
}

/// Each partition's (low, high) watermarks, asked a few at a time: one after another, a
/// topic of thousands of partitions waited thousands of round trips.
fn bounds(
    reader: &BaseConsumer,
    target: &str,
    parts: &[(&str, i32)],
    timeout: Duration,
) -> Vec<(i32, rdkafka::error::KafkaResult<(i64, i64)>)> {
    const AT_ONCE: usize = 8;
    let share = parts.len().div_ceil(AT_ONCE).max(1);
    std::thread::scope(|s| {
        let asked: Vec<_> = parts
            .chunks(share)
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(_, p)| (*p, source::watermarks(reader, target, *p, timeout)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        asked
            .into_iter()
            .flat_map(|t| t.join().unwrap_or_default())
            .collect()
    })
}

/// Errors a target reader rides out: its client reconnects and fetches again by itself (a
/// node restarting in a rolling restart: BrokerTransportFailure), so a read fails only at its
/// deadline, naming the last one (issue 30).
#[derive(Default)]
pub(super) struct Retried(Option<KafkaError>);

impl Retried {
    pub(super) fn met(&mut self, what: &str, e: KafkaError) {
        if self.0.is_none() {
            log::info!("{what}: {e}; its client retries");
        }
        self.0 = Some(e);
    }

    /// `; the last error: ...`, or nothing.
    pub(super) fn last(&self) -> String {
        self.0
            .as_ref()
            .map_or_else(String::new, |e| format!("; the last error: {e}"))
    }
}
