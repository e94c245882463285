//! A value per (topic, partition), found by name on every record sent and every delivery
//! report (issue 32). A topic's partitions are a vector indexed by partition number, and
//! the topic of the last lookup is compared before any hashing: a copy reads records of one
//! topic after another, so most lookups are one string comparison and one index (a hash
//! lookup of the name and a tree search of the partition cost more than the rest of the
//! bookkeeping per record).

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::shard::Fnv;

#[derive(Debug)]
pub struct PartitionMap<V> {
    /// Topics in the order first seen: name, and the value of each partition (by number).
    topics: Vec<(Box<str>, Vec<Option<V>>)>,
    index: HashMap<Box<str>, usize, BuildHasherDefault<Fnv>>,
    /// The topic of the last lookup, tried first.
    last: Cell<usize>,
}

impl<V> Default for PartitionMap<V> {
    fn default() -> Self {
        PartitionMap {
            topics: Vec::new(),
            index: HashMap::default(),
            last: Cell::new(0),
        }
    }
}

impl<V> PartitionMap<V> {
    fn topic(&self, name: &str) -> Option<usize> {
        let last = self.last.get();
        if self.topics.get(last).is_some_and(|(n, _)| **n == *name) {
            return Some(last);
        }
        let i = *self.index.get(name)?;
        self.last.set(i);
        Some(i)
    }

    pub fn get(&self, topic: &str, partition: i32) -> Option<&V> {
        let t = self.topic(topic)?;
        self.topics[t]
            .1
            .get(usize::try_from(partition).ok()?)?
            .as_ref()
    }

    pub fn get_mut(&mut self, topic: &str, partition: i32) -> Option<&mut V> {
        let t = self.topic(topic)?;
        self.topics[t]
            .1
            .get_mut(usize::try_from(partition).ok()?)?
            .as_mut()
    }

    /// The place of `topic[partition]`'s value, the topic added when new; `None` for a
    /// negative partition (no partition).
    fn slot(&mut self, topic: &str, partition: i32) -> Option<&mut Option<V>> {
        let p = usize::try_from(partition).ok()?;
        let t = match self.topic(topic) {
            Some(t) => t,
            None => {
                // Allocates once per topic, not per record.
                self.topics.push((topic.into(), Vec::new()));
                let t = self.topics.len() - 1;
                self.index.insert(topic.into(), t);
                self.last.set(t);
                t
            }
        };
        let parts = &mut self.topics[t].1;
        if parts.len() <= p {
            parts.resize_with(p + 1, || None);
        }
        Some(&mut parts[p])
    }

    /// The value of `topic[partition]`, made by `make` when it has none; `None` for a
    /// negative partition.
    pub fn get_or_insert_with(
        &mut self,
        topic: &str,
        partition: i32,
        make: impl FnOnce() -> V,
    ) -> Option<&mut V> {
        Some(self.slot(topic, partition)?.get_or_insert_with(make))
    }

    /// Sets the value of `topic[partition]`, returning the one it replaces (a negative
    /// partition holds nothing).
    pub fn insert(&mut self, topic: &str, partition: i32, value: V) -> Option<V> {
        self.slot(topic, partition)?.replace(value)
    }

    pub fn remove(&mut self, topic: &str, partition: i32) -> Option<V> {
        let t = self.topic(topic)?;
        self.topics[t]
            .1
            .get_mut(usize::try_from(partition).ok()?)?
            .take()
    }

    /// Every value: topics in the order first seen, partitions in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i32, &V)> {
        self.topics.iter().flat_map(|(name, parts)| {
            parts
                .iter()
                .enumerate()
                .filter_map(move |(p, v)| Some((&**name, p as i32, v.as_ref()?)))
        })
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, i32, &mut V)> {
        self.topics
            .iter_mut()
            .flat_map(|&mut (ref name, ref mut parts)| {
                parts
                    .iter_mut()
                    .enumerate()
                    .filter_map(move |(p, v)| Some((&**name, p as i32, v.as_mut()?)))
            })
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.iter().map(|(_, _, v)| v)
    }

    /// Forgets every value (the topics' names stay known).
    pub fn clear(&mut self) {
        for (_, parts) in &mut self.topics {
            parts.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_32_values_by_topic_and_partition() {
        let mut m: PartitionMap<u32> = PartitionMap::default();
        assert_eq!(m.get("a", 0), None);
        assert_eq!(m.insert("a", 3, 30), None);
        assert_eq!(m.insert("b", 0, 1), None);
        assert_eq!(m.insert("a", 1, 10), None);
        // Partitions never set read as none, whatever the vector holds.
        assert_eq!(
            (m.get("a", 0), m.get("a", 2), m.get("a", 4)),
            (None, None, None)
        );
        assert_eq!(
            (m.get("a", 1), m.get("a", 3), m.get("b", 0)),
            (Some(&10), Some(&30), Some(&1))
        );
        assert_eq!(m.get("c", 0), None);
        assert_eq!(m.insert("a", 3, 31), Some(30));
        *m.get_mut("b", 0).unwrap() += 1;
        *m.get_or_insert_with("b", 0, || 99).unwrap() += 1;
        assert_eq!(m.get_or_insert_with("b", 2, || 7).copied(), Some(7));
        let all: Vec<_> = m.iter().map(|(t, p, v)| (t.to_string(), p, *v)).collect();
        let want = [("a", 1, 10), ("a", 3, 31), ("b", 0, 3), ("b", 2, 7)];
        let want: Vec<_> = want
            .iter()
            .map(|(t, p, v)| (t.to_string(), *p, *v))
            .collect();
        assert_eq!(all, want);
        assert_eq!(m.remove("a", 3), Some(31));
        assert_eq!(m.remove("a", 3), None);
        assert_eq!(m.get("a", 3), None);
        for (_, _, v) in m.iter_mut() {
            *v *= 2;
        }
        assert_eq!(m.values().copied().collect::<Vec<_>>(), vec![20, 6, 14]);
        m.clear();
        assert_eq!((m.values().count(), m.get("b", 0)), (0, None));
    }

    #[test]
    fn issue_32_a_negative_partition_holds_nothing() {
        let mut m: PartitionMap<u32> = PartitionMap::default();
        assert_eq!(m.insert("a", -1, 1), None);
        assert_eq!(m.get_or_insert_with("a", -1, || 1), None);
        assert_eq!(m.get("a", -1), None);
        assert_eq!(m.get_mut("a", -1), None);
        assert_eq!(m.remove("a", -1), None);
        assert_eq!(m.values().count(), 0);
    }

    #[test]
    fn issue_32_lookups_alternate_between_many_topics() {
        // The last topic is tried first; any other is found by its name's hash.
        let mut m: PartitionMap<usize> = PartitionMap::default();
        let names: Vec<String> = (0..50).map(|i| format!("topic-{i}")).collect();
        for (i, n) in names.iter().enumerate() {
            m.insert(n, (i % 3) as i32, i);
        }
        for round in 0..3 {
            for (i, n) in names.iter().enumerate().rev() {
                assert_eq!(m.get(n, (i % 3) as i32), Some(&i), "round {round}");
                assert_eq!(m.get(n, ((i + 1) % 3) as i32), None);
            }
        }
        // A name that shares a prefix with a known one is another topic.
        assert_eq!(m.get("topic-1", 1), Some(&1));
        assert_eq!(m.get("topic-10", 1), Some(&10));
        assert_eq!(m.get("topic-", 1), None);
    }
}
