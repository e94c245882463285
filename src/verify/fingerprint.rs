//! What `verify` keeps of a record: the 32-byte [`Fingerprint`], its field hashes, and the
//! order-sensitive [`Digest`] of a partition shown in the JSON report.

use std::hash::{Hash, Hasher};

/// Prefix of header keys kreplicate itself adds to target records; ignored on both sides.
pub const OWN_HEADER_PREFIX: &str = "kreplicate.";

/// What verify keeps of one record: 32 bytes, whatever the record's size.
///
/// Two records are the same record when key, value, headers and timestamp match; the offset
/// only says where the record is. Each field hash is 32 bits, so a mismatch between two
/// records goes unnoticed with probability 2^-32 per field, and two different records share
/// all three hashes and the timestamp with probability 2^-96.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    pub offset: i64,
    /// Milliseconds; -1 when the record has none (Kafka's own encoding).
    pub timestamp: i64,
    pub key: u32,
    pub value: u32,
    pub headers: u32,
}

impl Fingerprint {
    /// Fingerprint of a record's fields. Null and empty keys/values differ; header order
    /// matters; headers for which `skip_header` is true are left out.
    pub fn of<'a>(
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: impl IntoIterator<Item = (&'a str, Option<&'a [u8]>)>,
        timestamp: Option<i64>,
        skip_header: impl Fn(&str) -> bool,
    ) -> Fingerprint {
        let mut h = hasher(3);
        let mut n = 0u64;
        for (k, v) in headers {
            if skip_header(k) {
                continue;
            }
            k.hash(&mut h);
            v.hash(&mut h);
            n += 1;
        }
        n.hash(&mut h);
        Fingerprint {
            offset,
            timestamp: timestamp.unwrap_or(-1),
            key: hash32(1, &key),
            value: hash32(2, &value),
            headers: fold(h.finish()),
        }
    }

    /// The record's identity: everything but the offset.
    pub(super) fn identity(&self) -> (u32, u32, u32, i64) {
        (self.key, self.value, self.headers, self.timestamp)
    }

    pub(super) fn same_record(&self, other: &Fingerprint) -> bool {
        self.identity() == other.identity()
    }

    /// Which fields differ, for an example line.
    pub(super) fn differences(&self, target: &Fingerprint) -> String {
        let mut d = Vec::new();
        if self.key != target.key {
            d.push("key differs".to_string());
        }
        if self.value != target.value {
            d.push("value differs".to_string());
        }
        if self.headers != target.headers {
            d.push("headers differ".to_string());
        }
        if self.timestamp != target.timestamp {
            d.push(format!(
                "timestamp differs ({} vs {})",
                self.timestamp, target.timestamp
            ));
        }
        if d.is_empty() {
            "identical".into()
        } else {
            d.join(", ")
        }
    }
}

fn hasher(domain: u8) -> std::collections::hash_map::DefaultHasher {
    // Fixed keys: the same in both reads of one process, which is all verify needs.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    domain.hash(&mut h);
    h
}

fn hash32<T: Hash>(domain: u8, v: &T) -> u32 {
    let mut h = hasher(domain);
    v.hash(&mut h);
    fold(h.finish())
}

fn fold(x: u64) -> u32 {
    (x ^ (x >> 32)) as u32
}

/// Order-sensitive digest of a fingerprint sequence (shown as hex in the JSON report).
#[derive(Clone, Copy, Debug)]
pub(super) struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0x6b72_6570_6c69_6361)
    }
}

impl Digest {
    pub(super) fn add(&mut self, fp: &Fingerprint) {
        let mut h = hasher(4);
        self.0.hash(&mut h);
        fp.identity().hash(&mut h);
        self.0 = h.finish();
    }

    pub(super) fn hex(self) -> String {
        format!("{:016x}", self.0)
    }
}

/// Synthetic fingerprints for the unit tests of `compare` and `report`.
#[cfg(test)]
pub(super) mod fixtures {
    use super::Fingerprint;
    /// Record `id` at offset `offset`: distinct ids are distinct records.
    pub(in crate::verify) fn rec(offset: i64, id: u32) -> Fingerprint {
        Fingerprint {
            offset,
            timestamp: 1_000 + i64::from(id),
            key: id,
            value: id.wrapping_mul(7),
            headers: id.wrapping_mul(13),
        }
    }

    /// A partition holding records `ids`, at offsets 0, 1, 2, ...
    pub(in crate::verify) fn part(ids: impl IntoIterator<Item = u32>) -> Vec<Fingerprint> {
        ids.into_iter()
            .enumerate()
            .map(|(o, id)| rec(o as i64, id))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints() {
        let none = |_: &str| false;
        let h = |k: &'static str, v: Option<&'static [u8]>| (k, v);
        let base = Fingerprint::of(
            0,
            Some(b"k"),
            Some(b"v"),
            [h("a", Some(b"1"))],
            Some(5),
            none,
        );
        let same = Fingerprint::of(
            9,
            Some(b"k"),
            Some(b"v"),
            [h("a", Some(b"1"))],
            Some(5),
            none,
        );
        assert!(base.same_record(&same));
        let null_key = Fingerprint::of(0, None, Some(b"v"), [h("a", Some(b"1"))], Some(5), none);
        let empty_key = Fingerprint::of(
            0,
            Some(b""),
            Some(b"v"),
            [h("a", Some(b"1"))],
            Some(5),
            none,
        );
        assert_ne!(null_key.key, empty_key.key);
        let tombstone = Fingerprint::of(0, Some(b"k"), None, [h("a", Some(b"1"))], Some(5), none);
        assert_ne!(tombstone.value, base.value);
        let null_header = Fingerprint::of(0, Some(b"k"), Some(b"v"), [h("a", None)], Some(5), none);
        assert_ne!(null_header.headers, base.headers);
        let two = [h("a", Some(b"1")), h("b", Some(b"2"))];
        let swapped = [h("b", Some(b"2")), h("a", Some(b"1"))];
        let x = Fingerprint::of(0, None, None, two, None, none);
        let y = Fingerprint::of(0, None, None, swapped, None, none);
        assert_ne!(x.headers, y.headers, "header order matters");
        assert_eq!(x.timestamp, -1);
        // The target's own headers are left out.
        let own = |k: &str| k.starts_with(OWN_HEADER_PREFIX);
        let with_origin = Fingerprint::of(
            0,
            Some(b"k"),
            Some(b"v"),
            [h("a", Some(b"1")), h("kreplicate.origin", Some(b"a/t/0/0"))],
            Some(5),
            own,
        );
        assert!(base.same_record(&with_origin));
        assert_eq!(std::mem::size_of::<Fingerprint>(), 32);
    }
}
