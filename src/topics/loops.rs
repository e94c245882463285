//! Topics a run must not take as sources, so that no run grows a chain of copies (issue 18):
//!
//! * within one cluster, a topic this run's `--rename` could have made from a selected topic
//!   (`orders.bak` for `orders` under `{topic}.bak`): copying it would copy the copies, without
//!   end (`orders.bak.bak`, ...);
//! * across clusters, under a `--topics` regex with `--create-topics`, a source topic that holds
//!   no record but copies from the target (or nothing yet): its target is not created until it
//!   holds a record of its own, so active-active runs whose regexes match each other's renamed
//!   topics never create `a.orders`, `b.a.orders`, `a.b.a.orders`, ...

use std::time::{Duration, Instant};

use rdkafka::consumer::BaseConsumer;
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

/// Whether a source topic holds a record that is not a copy from the target cluster, read
/// from its start up to its end as seen now. `None` when that was not known within `timeout`
/// (the caller treats it as "not yet").
pub fn holds_own_records(
    opts: &RunOptions,
    topic: &str,
    partitions: i32,
    stamp: &Stamp,
) -> Option<bool> {
    let reader: BaseConsumer = kafka::reader_config(
        &opts.from,
        "kreplicate.loops",
        &[("fetch.wait.max.ms", "10")],
    )
    .create()
    .ok()?;
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition_offset(topic, p, Offset::Beginning).ok()?;
    }
    let assigned = kafka::consumer::assign_with_leaders(&reader, &tpl);
    // A list that went through librdkafka holds partition references until dropped.
    drop(tpl);
    assigned.ok()?;
    let mut open = partitions;
    let deadline = Instant::now() + opts.timeout;
    let mut answer = None;
    while Instant::now() < deadline {
        match reader.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                let origins = m.headers().map(|h| {
                    h.iter()
                        .filter(|x| x.key == ORIGIN_HEADER)
                        .filter_map(|x| x.value)
                        .collect::<Vec<_>>()
                });
                if !stamp.loops(origins.unwrap_or_default()) {
                    answer = Some(true);
                    break;
                }
            }
            Some(Err(KafkaError::PartitionEOF(_))) => {
                open -= 1;
                if open == 0 {
                    answer = Some(false);
                    break;
                }
            }
            _ => {}
        }
    }
    kafka::consumer::close(&reader, opts.timeout);
    answer
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
