//! Topics a run must not take as sources, so that no run grows a chain of copies (issue 18):
//!
//! * within one cluster, a topic this run's `--rename` could have made from a selected topic
//!   (`orders.bak` for `orders` under `{topic}.bak`): copying it would copy the copies, without
//!   end (`orders.bak.bak`, ...);
//! * across clusters, under a `--topics` regex with `--create-topics`, a source topic that holds
//!   no record but copies from the target (or nothing yet): its target is not created until it
//!   holds a record of its own, so active-active runs whose regexes match each other's renamed
//!   topics never create `a.orders`, `b.a.orders`, `a.b.a.orders`, ...

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use crate::kafka;
use crate::options::{RunOptions, TopicSelection};
use crate::origin::{Stamp, ORIGIN_HEADER};

/// True when `name` is what `rename` makes of another topic the run selects (pure).
pub fn own_output(
    rename: &str,
    topics: &TopicSelection,
    exclude: Option<&TopicSelection>,
    name: &str,
) -> bool {
    let parts: Vec<&str> = rename.split("{topic}").collect();
    let k = parts.len() - 1;
    let fixed: usize = parts.iter().map(|p| p.len()).sum();
    let source = if k == 0 {
        // A constant name: every selected topic is copied into it.
        None
    } else if name.len() < fixed || (name.len() - fixed) % k != 0 {
        return false;
    } else {
        let n = (name.len() - fixed) / k;
        let start = parts[0].len();
        match name.get(start..start + n) {
            Some(s) if rename.replace("{topic}", s) == name => Some(s),
            _ => return false,
        }
    };
    match source {
        None => name == rename,
        Some(s) => {
            s != name
                && !s.is_empty()
                && topics.matches(s)
                && !s.starts_with("__")
                && !exclude.is_some_and(|e| e.matches(s))
        }
    }
}

/// Of the source topics (name, partition count), those holding a record that is not a copy
/// from the target cluster, each read from its start up to its end as seen now, all with one
/// reader (one reader per topic took 20 s for 400 topics, issue 43). A topic not known
/// within `timeout` is left out: "not yet".
pub fn holding_own_records(
    opts: &RunOptions,
    topics: &[(&str, i32)],
    stamp: &Stamp,
) -> HashSet<String> {
    let mut own = HashSet::new();
    if topics.is_empty() {
        return own;
    }
    let Ok(reader) = kafka::reader_config(
        &opts.from,
        "kreplicate.loops",
        &[("fetch.wait.max.ms", "10")],
    )
    .create::<BaseConsumer>() else {
        return own;
    };
    let mut tpl = TopicPartitionList::new();
    for (topic, partitions) in topics {
        for p in 0..*partitions {
            if tpl
                .add_partition_offset(topic, p, Offset::Beginning)
                .is_err()
            {
                return own;
            }
        }
    }
    let assigned = kafka::consumer::assign_with_leaders(&reader, &tpl);
    // A list that went through librdkafka holds partition references until dropped.
    drop(tpl);
    if assigned.is_err() {
        return own;
    }
    // The topics still open, and how many of their partitions are not read to the end yet.
    let mut open: HashMap<&str, i32> = topics.iter().copied().collect();
    let deadline = Instant::now() + opts.timeout;
    let mut looked = Instant::now();
    while !open.is_empty() && Instant::now() < deadline {
        let polled = reader.poll(Duration::from_millis(100));
        match &polled {
            Some(Ok(m)) => {
                let origins = m.headers().map(|h| {
                    h.iter()
                        .filter(|x| x.key == ORIGIN_HEADER)
                        .filter_map(|x| x.value)
                        .collect::<Vec<_>>()
                });
                if open.contains_key(m.topic()) && !stamp.loops(origins.unwrap_or_default()) {
                    // Answered: its partitions are fetched no more.
                    let topic = m.topic().to_string();
                    open.remove(topic.as_str());
                    pause(&reader, &topic, topics);
                    own.insert(topic);
                }
                continue;
            }
            // An end, or nothing for a while: the positions say which topics were read to the
            // end (an end names its partition, not its topic); at most every 100 ms.
            Some(Err(KafkaError::PartitionEOF(_))) | None
                if looked.elapsed() >= Duration::from_millis(100) || polled.is_none() => {}
            _ => continue,
        }
        looked = Instant::now();
        for topic in read_to_end(&reader, &open) {
            open.remove(topic.as_str());
        }
    }
    kafka::consumer::close(&reader, opts.timeout);
    own
}

/// The open topics each of whose partitions the reader has read to the end the last fetch saw
/// (its position past any transaction marker there).
fn read_to_end(reader: &BaseConsumer, open: &HashMap<&str, i32>) -> Vec<String> {
    let Ok(positions) = reader.position() else {
        return Vec::new();
    };
    let mut left: HashMap<&str, i32> = open.clone();
    for e in positions.elements() {
        let Some(n) = left.get_mut(e.topic()) else {
            continue;
        };
        let Some((low, high)) =
            kafka::consumer::cached_watermarks(reader, e.topic(), e.partition())
        else {
            continue;
        };
        let at = match e.offset() {
            Offset::Offset(o) => o,
            _ => low,
        };
        if at >= high {
            *n -= 1;
        }
    }
    left.into_iter()
        .filter(|(_, n)| *n <= 0)
        .map(|(t, _)| t.to_string())
        .collect()
}

fn pause(reader: &BaseConsumer, topic: &str, topics: &[(&str, i32)]) {
    let mut tpl = TopicPartitionList::new();
    for (t, partitions) in topics.iter().filter(|(t, _)| *t == topic) {
        for p in 0..*partitions {
            tpl.add_partition(t, p);
        }
    }
    // Fetching on only costs reads.
    let _ = reader.pause(&tpl);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_18_a_topic_the_rename_makes_from_a_selected_one_is_its_own_output() {
        let re = TopicSelection::parse("^orders").unwrap();
        assert!(own_output("{topic}.bak", &re, None, "orders.bak"));
        assert!(own_output("{topic}.bak", &re, None, "orders.bak.bak"));
        assert!(!own_output("{topic}.bak", &re, None, "orders"));
        assert!(!own_output("{topic}.bak", &re, None, "payments.bak"));
        assert!(own_output("b.{topic}", &re, None, "b.orders"));
        assert!(!own_output("b.{topic}", &re, None, "orders.b"));
        // Copying a topic onto itself is refused elsewhere, not left out here.
        assert!(!own_output("{topic}", &re, None, "orders"));
        let ex = TopicSelection::parse("orders").unwrap();
        assert!(!own_output("{topic}.bak", &re, Some(&ex), "orders.bak"));
        let list = TopicSelection::parse("orders,orders.bak").unwrap();
        assert!(own_output("{topic}.bak", &list, None, "orders.bak"));
        assert!(own_output("{topic}-{topic}", &re, None, "orders-orders"));
        assert!(!own_output("{topic}-{topic}", &re, None, "orders-order"));
        assert!(own_output("all", &re, None, "all"));
        assert!(!own_output("all", &re, None, "orders"));
    }
}
