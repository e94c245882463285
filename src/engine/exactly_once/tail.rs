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

/// Where exactly-once stands on the target for some partitions of target topics (each with
/// the source topic and partitions it copies): per source partition, the position after the
/// newest origin a `read_committed` reader sees in the target partition's tail (absent where
/// the target holds no copy of it). The run resumes there; `status` shows it. The tail widens
/// until it finds an origin or covers the whole partition. One reader reads every tail at
/// once: one reader per topic took 40 s for 400 topics (issue 43). `reader`: the target, the
/// reader's group (never joined) and the timeout.
pub(crate) fn checkpoints(
    reader: (&ClusterSpec, &str, Duration),
    source_cluster: &str,
    targets: &[(&str, Vec<(&str, i32)>)],
) -> Result<HashMap<(String, i32), NextOffset>> {
    let mut found = HashMap::new();
    let mut todo: Vec<(&str, &str, i32)> = targets
        .iter()
        .flat_map(|(t, parts)| parts.iter().map(move |&(s, p)| (*t, s, p)))
        .collect();
    if todo.is_empty() {
        return Ok(found);
    }
    let (to, group, timeout) = reader;
    // A position outside the log is an error, never a jump to its end: that read as "the
    // target holds nothing of ours" and copied a trimmed partition again (issue 41).
    let consumer: BaseConsumer = kafka::reader_config(to, group, &[("fetch.wait.max.ms", "10")])
        .set("auto.offset.reset", "error")
        .create()
        .map_err(|e| Error::failed(format!("target reader: {e}")))?;
    // Metadata first: left to source::assign(), librdkafka 2.12's first metadata request went to
    // the bootstrap connection it was retiring, and the tail read waited ~0.45 s.
    consumer
        .fetch_metadata(None, timeout)
        .map_err(|e| Error::failed(format!("cannot read the target's topics: {e}")))?;
    // Small first: the newest record is ours unless another writer came after, and each
    // partition's window is fetched and decompressed (a first window of 1,000 records of
    // 1 KiB at 2,000 partitions cost 2 s of CPU and 40 MiB of peak RSS, issue 43).
    let mut tail = 64i64;
    while !todo.is_empty() {
        let read = read_tail(&consumer, timeout, &todo, tail)?;
        let mut next = Vec::new();
        for (target, source, p) in todo {
            let (origins, covered_all) = read
                .get(&(target.to_string(), p))
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
                None => next.push((target, source, p)),
            }
        }
        todo = next;
        tail = tail.saturating_mul(8);
    }
    source::close(&consumer, timeout);
    Ok(found)
}

/// Per target partition (of `parts`: target topic, source topic, partition), the origin header
/// values of its last `tail` records and whether that reached the start of the partition.
/// Read to the stable end seen at the start: a partition is done once the reader's position
/// (past any transaction marker) reaches it, as the copy's own check (a partition's end event
/// names no topic).
#[allow(clippy::type_complexity)]
fn read_tail(
    reader: &BaseConsumer,
    timeout: Duration,
    parts: &[(&str, &str, i32)],
    tail: i64,
) -> Result<HashMap<(String, i32), (Vec<Option<Vec<u8>>>, bool)>> {
    // What the read is of, for its messages: `target topic t`, `target topics a, b, ...`.
    let mut topics: Vec<&str> = parts.iter().map(|&(t, _, _)| t).collect();
    topics.sort_unstable();
    topics.dedup();
    let what = match topics.len() {
        1 => format!("target topic {}", topics[0]),
        2..=3 => format!("target topics {}", topics.join(", ")),
        n => format!(
            "target topics {}, and {} more",
            topics[..3].join(", "),
            n - 3
        ),
    };
    // The window starts inside the log: at its start when the log is shorter than the tail
    // (a trimmed partition, or retention on a quiet one), which then covers all of it.
    let mut tpl = TopicPartitionList::new();
    let mut out: HashMap<(String, i32), (Vec<Option<Vec<u8>>>, bool)> = HashMap::new();
    // The partitions not read to their end yet, and that end.
    let mut open: HashMap<(String, i32), i64> = HashMap::new();
    let keys: Vec<(&str, i32)> = parts.iter().map(|&(t, _, p)| (t, p)).collect();
    for ((target, p), bounds) in bounds(reader, &keys, timeout) {
        let (low, high) = bounds.map_err(|e| {
            Error::failed(format!(
                "cannot read the bounds of target {target}[{p}]: {e}"
            ))
        })?;
        let from = low.max(high.saturating_sub(tail));
        out.insert((target.to_string(), p), (Vec::new(), from == low));
        if from < high {
            open.insert((target.to_string(), p), high);
            tpl.add_partition_offset(target, p, Offset::Offset(from))
                .map_err(Error::failed)?;
        }
    }
    if open.is_empty() {
        return Ok(out);
    }
    reader
        .assign(&tpl)
        .map_err(|e| Error::failed(format!("cannot read {what}: {e}")))?;
    drop(tpl);
    let deadline = Instant::now() + timeout;
    let mut retried = Retried::default();
    let mut looked = Instant::now();
    while !open.is_empty() {
        if Instant::now() > deadline {
            let mut left: Vec<String> = open.keys().map(|(t, p)| format!("{t}[{p}]")).collect();
            left.sort();
            return Err(Error::failed(format!(
                "reading the tail of {what} took longer than {timeout:?} (partitions {}){}",
                left.join(", "),
                retried.last()
            )));
        }
        let polled = classify(reader.poll(Duration::from_millis(100)));
        let quiet = matches!(polled, Polled::End(_) | Polled::Idle);
        match polled {
            Polled::Record(m) => {
                let origin = m.headers().and_then(|h| {
                    h.iter()
                        .filter(|x| x.key == ORIGIN_HEADER)
                        .last()
                        .and_then(|x| x.value.map(<[u8]>::to_vec))
                });
                if let Some(e) = out.get_mut(&(m.topic().to_string(), m.partition())) {
                    e.0.push(origin);
                }
            }
            Polled::End(_) | Polled::Idle => {}
            Polled::Transient(e) => retried.met(&format!("reading the tail of {what}"), e),
            Polled::Gap(code) => return Err(Error::failed(format!("reading {what}: {code}"))),
            Polled::Fatal(msg) => return Err(Error::failed(format!("reading {what}: {msg}"))),
        }
        // Every partition's end comes as an event: looking on each is thousands of looks.
        let since = looked.elapsed();
        if (quiet && since >= Duration::from_millis(10)) || since >= Duration::from_millis(100) {
            looked = Instant::now();
            let asked = open.keys().map(|(t, p)| (t.as_str(), *p));
            let positions = kafka::consumer::positions(reader, asked)
                .map_err(|e| Error::failed(format!("cannot read {what}: {e}")))?;
            for e in positions.elements() {
                let key = (e.topic().to_string(), e.partition());
                if let (Some(&end), Offset::Offset(at)) = (open.get(&key), e.offset()) {
                    if at >= end {
                        open.remove(&key);
                    }
                }
            }
        }
    }
    // The next, wider read starts from nothing queued.
    reader
        .unassign()
        .map_err(|e| Error::failed(format!("cannot read {what}: {e}")))?;
    for _ in 0..100_000 {
        if reader.poll(Duration::ZERO).is_none() {
            break;
        }
    }
    Ok(out)
}

type WatermarksRead = rdkafka::error::KafkaResult<(i64, i64)>;

/// Each partition's (low, high) watermarks, asked a few at a time: one after another, a
/// topic of thousands of partitions waited thousands of round trips.
fn bounds<'a>(
    reader: &BaseConsumer,
    parts: &[(&'a str, i32)],
    timeout: Duration,
) -> Vec<((&'a str, i32), WatermarksRead)> {
    const AT_ONCE: usize = 8;
    let share = parts.len().div_ceil(AT_ONCE).max(1);
    std::thread::scope(|s| {
        let asked: Vec<_> = parts
            .chunks(share)
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|&(t, p)| ((t, p), source::watermarks(reader, t, p, timeout)))
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
