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
    /// their source topic from this source (`parts` name each target's source): a line for each
    /// of the first three, and one for the rest when there are more than four (400 topics were
    /// 400 lines).
    pub(super) fn foreign_warnings(&self, parts: &[(&Route, i32)]) -> Vec<String> {
        const NAMED: usize = 3;
        const WHY: &str =
            "written there by another producer or another copy (or copied with --no-origin-header)";
        let source_of = |t: &str| {
            parts
                .iter()
                .find(|(r, _)| r.target == t)
                .map_or("", |(r, _)| r.source.as_str())
        };
        let holding: Vec<(&String, u64, u64)> = self
            .topics
            .iter()
            .filter(|(_, (_, foreign))| *foreign > 0)
            .map(|(t, (read, foreign))| (t, *read, *foreign))
            .collect();
        // A line each for up to four: a summary of one topic would say no less.
        let lines = if holding.len() > NAMED + 1 {
            NAMED
        } else {
            holding.len()
        };
        let (first, rest) = holding.split_at(lines);
        let mut out: Vec<String> = first
            .iter()
            .map(|(t, read, foreign)| {
                format!(
                    "target topic '{t}' already holds records that are not copies of '{}' from this source ({foreign} of the last {read} read): {WHY}; readers of '{t}' read them too, and verify counts them as extra",
                    source_of(t)
                )
            })
            .collect();
        if !rest.is_empty() {
            let names: Vec<String> = rest
                .iter()
                .take(NAMED)
                .map(|(t, ..)| format!("'{t}'"))
                .collect();
            let mut names = names.join(", ");
            if rest.len() > NAMED {
                names.push_str(&format!(" and {} more", rest.len() - NAMED));
            }
            let (read, foreign) = rest
                .iter()
                .fold((0, 0), |(r, f), (_, read, foreign)| (r + read, f + foreign));
            out.push(format!(
                "{} more target topics ({names}) already hold records that are not copies of their source topics from this source ({foreign} of the last {read} read): {WHY}; their readers read them too, and verify counts them as extra",
                rest.len()
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tails(foreign: &[(&str, u64)]) -> Tails {
        Tails {
            topics: foreign
                .iter()
                .map(|&(t, f)| (t.to_string(), (16, f)))
                .collect(),
        }
    }

    #[test]
    fn issue_43_foreign_records_past_three_topics_are_one_line() {
        let names = ["t1", "t2", "t3", "t4", "t5", "t6", "t7"];
        let routes: Vec<Route> = names
            .iter()
            .map(|t| Route {
                source: format!("s{t}"),
                target: t.to_string(),
                partitions: 1,
            })
            .collect();
        let parts: Vec<(&Route, i32)> = routes.iter().map(|r| (r, 0)).collect();
        // t0 holds only copies of ours: not named.
        let said = tails(&[
            ("t0", 0),
            ("t1", 1),
            ("t2", 2),
            ("t3", 3),
            ("t4", 4),
            ("t5", 5),
            ("t6", 6),
            ("t7", 7),
        ])
        .foreign_warnings(&parts);
        assert_eq!(said.len(), 4, "{said:#?}");
        assert!(said[0].starts_with(
            "target topic 't1' already holds records that are not copies of 'st1' from this source (1 of the last 16 read)"
        ));
        assert!(said[2].starts_with("target topic 't3' "));
        assert!(said[3].starts_with(
            "4 more target topics ('t4', 't5', 't6' and 1 more) already hold records that are not copies of their source topics from this source (22 of the last 64 read): "
        ));
        // Up to three: a line each, no summary.
        assert_eq!(
            tails(&[("t1", 1), ("t2", 1)])
                .foreign_warnings(&parts)
                .len(),
            2
        );
        let four = tails(&[("t4", 1), ("t5", 1), ("t6", 1), ("t7", 1)]).foreign_warnings(&parts);
        assert_eq!(four.len(), 4, "{four:#?}");
        assert!(four[3].starts_with("target topic 't7' "));
    }
}
