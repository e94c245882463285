//! Static shards: which source partitions a process owns without a consumer group, and the
//! stable hash that decides it.

use std::hash::Hasher;

/// A static shard: this process owns the source partitions whose shard number is `index`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: u32,
    pub count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 1, count: 1 }
    }
}

impl Shard {
    /// `i/n` with 1 ≤ i ≤ n.
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| "expected i/n, e.g. 1/3".to_string())?;
        let (index, count): (u32, u32) = (
            i.trim()
                .parse()
                .map_err(|_| "expected i/n, e.g. 1/3".to_string())?,
            n.trim()
                .parse()
                .map_err(|_| "expected i/n, e.g. 1/3".to_string())?,
        );
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard {index}/{count}: i must be between 1 and n"));
        }
        Ok(Shard { index, count })
    }

    /// Whether this shard owns a source partition. Stable when partitions are added: a
    /// partition's shard depends only on its topic name and number.
    pub fn owns(&self, topic: &str, partition: i32) -> bool {
        let mut h = Fnv::default();
        h.write(topic.as_bytes());
        let slot = h.finish().wrapping_add(partition as u64) % u64::from(self.count);
        slot == u64::from(self.index - 1)
    }

    /// The producer identity of this shard's writer.
    pub fn transactional_id(&self, group: &str) -> String {
        format!("{group}.shard-{}-of-{}", self.index, self.count)
    }
}

/// FNV-1a for the per-record topic lookups: topic names are short and not chosen by an
/// attacker, and SipHash cost more per record than the rest of the bookkeeping. Also fixed
/// across versions and platforms, which static shards rely on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_partitions() {
        let shards: Vec<Shard> = (1..=3).map(|i| Shard { index: i, count: 3 }).collect();
        for topic in ["orders", "payments", "a.b-c"] {
            for p in 0..50 {
                let owners = shards.iter().filter(|s| s.owns(topic, p)).count();
                assert_eq!(owners, 1, "{topic}[{p}]");
            }
        }
        assert!((0..10).all(|p| Shard::default().owns("x", p)));
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        assert!(Shard::parse("0/3").is_err());
        assert!(Shard::parse("4/3").is_err());
        assert!(Shard::parse("x").is_err());
        assert_eq!(
            Shard { index: 2, count: 3 }.transactional_id("g"),
            "g.shard-2-of-3"
        );
    }
}
