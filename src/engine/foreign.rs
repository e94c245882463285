//! The last records of each target partition, read once at start (and by `plan`): those whose
//! origin header does not name this source's cluster and topic are said (issue 35, item 13), so
//! the run and `plan` tell what only a later `verify` reported (`500 extra`); and a group's
//! first run says when the target already holds copies of ours.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rdkafka::consumer::BaseConsumer;
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use crate::error::{Error, Result};
use crate::kafka;
use crate::options::RunOptions;
use crate::origin::{parse_origin, ORIGIN_HEADER};
use crate::source::{self, classify, Polled};
use crate::topics::Route;

/// Target records read from the end of each partition.
const TAIL: i64 = 16;

/// What the last records of each target topic's partitions say: per target topic, the records
/// read and how many are not copies of its source topic from this source.
pub(super) struct Tails {
    topics: BTreeMap<String, (u64, u64)>,
}

/// Reads the last [`TAIL`] records of each target partition of `parts` (`bounds`: (low, high)
/// of every target partition), once for both questions a start asks of them: does the target
/// hold copies of ours (a group's first run) and records of others (the foreign-record warning).
pub(super) fn read_tails(
    opts: &RunOptions,
    source_id: &str,
    parts: &[(&Route, i32)],
    bounds: &HashMap<(String, i32), (i64, i64)>,
) -> Result<Tails> {
    let mut tails = Tails {
        topics: BTreeMap::new(),
    };
    let mut tpl = TopicPartitionList::new();
    let mut ends: BTreeMap<(String, i32), i64> = BTreeMap::new();
    let mut source_of: HashMap<&str, &str> = HashMap::new();
    for (r, p) in parts {
        if let Some(&(low, high)) = bounds.get(&(r.target.clone(), *p)) {
            if high > low {
                let _ =
                    tpl.add_partition_offset(&r.target, *p, Offset::Offset(low.max(high - TAIL)));
                ends.insert((r.target.clone(), *p), high);
                source_of.insert(&r.target, &r.source);
            }
        }
    }
    if ends.is_empty() {
        return Ok(tails);
    }
    // read_uncommitted: a tail behind another writer's open transaction would otherwise hold
    // the start here, silently, up to --timeout (exactly-once's resume waits for it, and says so).
    let mut config = kafka::reader_config(&opts.to, &format!("{}.check", opts.group), &[]);
    config
        .set("fetch.wait.max.ms", "10")
        .set("isolation.level", "read_uncommitted");
    let reader: BaseConsumer = config
        .create()
        .map_err(|e| kafka::creation_error("target", e))?;
    let assigned = source::assign(&reader, &tpl);
    drop(tpl);
    assigned.map_err(|e| Error::failed(format!("cannot read the target partitions: {e}")))?;
    let deadline = Instant::now() + opts.timeout;
    let mut looked = Instant::now();
    while !ends.is_empty() && Instant::now() < deadline {
        let polled = classify(reader.poll(Duration::from_millis(100)));
        let quiet = matches!(polled, Polled::End(_) | Polled::Idle);
        if let Polled::Record(m) = polled {
            let key = (m.topic().to_string(), m.partition());
            let ours = m.headers().is_some_and(|h| {
                h.iter()
                    .filter(|h| h.key == ORIGIN_HEADER)
                    .filter_map(|h| h.value.and_then(parse_origin))
                    .any(|o| {
                        o.cluster == Some(source_id)
                            && source_of.get(key.0.as_str()) == Some(&o.topic)
                    })
            });
            let counts = tails.topics.entry(key.0.clone()).or_default();
            counts.0 += 1;
            counts.1 += u64::from(!ours);
            if m.offset() + 1 >= ends.get(&key).copied().unwrap_or(0) {
                ends.remove(&key);
            }
        }
        // A partition's end names its partition, not its topic (taken as every topic's, the
        // first end of partition 0 ended the read of partition 0 of every other topic): the
        // positions say which partitions were read to their end, past any transaction marker.
        let since = looked.elapsed();
        if (quiet && since >= Duration::from_millis(10)) || since >= Duration::from_millis(100) {
            looked = Instant::now();
            let asked = ends.keys().map(|(t, p)| (t.as_str(), *p));
            if let Ok(at) = kafka::consumer::positions(&reader, asked) {
                for e in at.elements() {
                    let key = (e.topic().to_string(), e.partition());
                    if let (Offset::Offset(o), Some(&end)) = (e.offset(), ends.get(&key)) {
                        if o >= end {
                            ends.remove(&key);
                        }
                    }
                }
            }
        }
    }
    source::close(&reader, opts.timeout);
    Ok(tails)
}

impl Tails {
    /// Target topics whose last records include copies of their source topic from this source,
    /// as the subject of "... already hold(s) copies": `None` when there is none.
    pub(super) fn holding_copies(&self) -> Option<String> {
        let names: Vec<String> = self
            .topics
            .iter()
            .filter(|(_, (read, foreign))| read > foreign)
            .map(|(t, _)| format!("'{t}'"))
            .collect();
        Some(match names.len() {
            0 => return None,
            1 => format!("target topic {} already holds", names[0]),
            2..=3 => format!("target topics {} already hold", names.join(", ")),
            n => format!(
                "target topics {} and {} more already hold",
                names[..3].join(", "),
                n - 3
            ),
        })
    }

    /// Warnings naming target topics whose last records include records that are not copies of
    /// their source topic from this source (`parts` name each target's source).
    pub(super) fn foreign_warnings(&self, parts: &[(&Route, i32)]) -> Vec<String> {
        let source_of = |t: &str| {
            parts
                .iter()
                .find(|(r, _)| r.target == t)
                .map_or("", |(r, _)| r.source.as_str())
        };
        self.topics
            .iter()
            .filter(|(_, (_, foreign))| *foreign > 0)
            .map(|(t, (read, foreign))| {
                format!(
                    "target topic '{t}' already holds records that are not copies of '{}' from this source ({foreign} of the last {read} read): written there by another producer or another copy (or copied with --no-origin-header); readers of '{t}' read them too, and verify counts them as extra",
                    source_of(t)
                )
            })
            .collect()
    }
}
