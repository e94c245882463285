//! Whether the source's writers stopped, seen from the source alone: every partition's end
//! stays where it is for a while, and no producer holds a transaction open (a partition's last
//! stable offset equals its end).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};

use crate::error::{Error, Result};
use crate::kafka;
use crate::options::ClusterSpec;

/// One partition's ends at one moment: its last stable offset and its high watermark.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ends {
    pub stable: i64,
    pub high: i64,
}

pub type Snapshot = BTreeMap<(String, i32), Ends>;

/// Why the source is not quiet yet, one item per partition (pure): ends that moved since
/// `before`, and transactions open now.
pub fn unrest(before: &Snapshot, now: &Snapshot) -> Vec<String> {
    let mut why = Vec::new();
    for ((topic, p), e) in now {
        match before.get(&(topic.clone(), *p)) {
            Some(b) if b.high != e.high => {
                why.push(format!("{topic}[{p}] end {} → {}", b.high, e.high))
            }
            None => why.push(format!("{topic}[{p}] appeared")),
            _ if e.stable < e.high => why.push(format!(
                "{topic}[{p}] has a transaction open (stable offset {} < end {})",
                e.stable, e.high
            )),
            _ => {}
        }
    }
    why
}

/// Both ends of every partition, in two ListOffsets rounds (read_committed, read_uncommitted).
pub struct Reader {
    committed: BaseConsumer,
    uncommitted: BaseConsumer,
    parts: Vec<(String, i32)>,
    timeout: Duration,
}

impl Reader {
    pub fn new(spec: &ClusterSpec, parts: Vec<(String, i32)>, timeout: Duration) -> Result<Self> {
        let make = |isolation: &str| -> Result<BaseConsumer> {
            let mut c = kafka::reader_config(spec, "kreplicate.migrate", &[]);
            c.set("isolation.level", isolation);
            c.create().map_err(|e| kafka::creation_error("source", e))
        };
        Ok(Self {
            committed: make("read_committed")?,
            uncommitted: make("read_uncommitted")?,
            parts,
            timeout,
        })
    }

    pub fn read(&self) -> Result<Snapshot> {
        let stable = self.latest(&self.committed)?;
        let high = self.latest(&self.uncommitted)?;
        Ok(self
            .parts
            .iter()
            .filter_map(|k| {
                let (s, h) = (stable.get(k)?, high.get(k)?);
                Some((
                    k.clone(),
                    Ends {
                        stable: *s,
                        high: *h,
                    },
                ))
            })
            .collect())
    }

    /// ListOffsets LATEST for every partition in one request per leader, as `c`'s isolation
    /// level sees it.
    fn latest(&self, c: &BaseConsumer) -> Result<BTreeMap<(String, i32), i64>> {
        let mut tpl = TopicPartitionList::new();
        for (t, p) in &self.parts {
            tpl.add_partition_offset(t, *p, Offset::End)
                .map_err(|e| Error::failed(format!("{t}[{p}]: {e}")))?;
        }
        let found = c
            .offsets_for_times(tpl, self.timeout)
            .map_err(|e| Error::failed(format!("cannot read the source's end offsets: {e}")))?;
        let mut out = BTreeMap::new();
        for e in found.elements() {
            if let Some(err) = e.error().err() {
                return Err(Error::failed(format!(
                    "cannot read the end offset of {}[{}] on the source: {err}",
                    e.topic(),
                    e.partition()
                )));
            }
            if let Offset::Offset(o) = e.offset() {
                out.insert((e.topic().to_string(), e.partition()), o);
            }
        }
        Ok(out)
    }
}

/// How a wait for the writers ended.
pub enum Quiet {
    /// Nothing moved for the whole span: the ends the copy must reach.
    Still(Snapshot),
    /// Still moving when the wait gave up: what moved last.
    Moving(Vec<String>),
    /// A signal stopped the wait.
    Stopped,
}

/// Waits until the ends stay still and no transaction is open for `quiet_for`, for at most
/// `give_up`; `tell` hears what still moves, at most every few seconds.
pub fn wait(
    reader: &Reader,
    quiet_for: Duration,
    give_up: Duration,
    stop: &AtomicBool,
    tell: &dyn Fn(&[String]),
) -> Result<Quiet> {
    let deadline = Instant::now() + give_up;
    let mut last = reader.read()?;
    let mut since = Instant::now();
    let mut why = unrest(&last, &last);
    let mut told = Instant::now();
    if !why.is_empty() {
        since = Instant::now();
    }
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(Quiet::Stopped);
        }
        if why.is_empty() && since.elapsed() >= quiet_for {
            return Ok(Quiet::Still(last));
        }
        if Instant::now() >= deadline {
            return Ok(Quiet::Moving(why));
        }
        std::thread::sleep(Duration::from_millis(500));
        let now = reader.read()?;
        let moved = unrest(&last, &now);
        if !moved.is_empty() {
            since = Instant::now();
            why = moved;
            if told.elapsed() >= Duration::from_secs(5) {
                tell(&why);
                told = Instant::now();
            }
        } else {
            why.clear();
        }
        last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(parts: &[(&str, i32, i64, i64)]) -> Snapshot {
        parts
            .iter()
            .map(|(t, p, s, h)| {
                (
                    (t.to_string(), *p),
                    Ends {
                        stable: *s,
                        high: *h,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn issue_42_still_ends_without_open_transactions_are_quiet() {
        let a = snap(&[("orders", 0, 10, 10), ("orders", 1, 5, 5)]);
        assert!(unrest(&a, &a).is_empty());
    }

    #[test]
    fn issue_42_a_moving_end_and_an_open_transaction_are_named() {
        let before = snap(&[("orders", 0, 10, 10), ("orders", 1, 5, 5)]);
        let now = snap(&[("orders", 0, 10, 12), ("orders", 1, 3, 5)]);
        assert_eq!(
            unrest(&before, &now),
            [
                "orders[0] end 10 → 12",
                "orders[1] has a transaction open (stable offset 3 < end 5)"
            ]
        );
    }
}
