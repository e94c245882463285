//! The reads of a translation round, spread over a few threads: where every group stands on
//! both clusters, and the lookups, with one target reader per thread and each target partition
//! read by one thread only. A lookup is a round trip or two to the target; one after the other,
//! a thousand of them took a minute.

use std::collections::HashMap;
use std::time::Duration;

use super::lookup::{Found, Index, Target};
use super::positions;
use crate::error::{Error, Result};
use crate::options::ClusterSpec;
use crate::source;

/// Threads (and clients) at most per batch.
const THREADS: usize = 8;

/// Committed positions per partition (none where the group has none).
pub type Positions = Vec<Option<i64>>;

/// Each group's committed positions on the source, and on the target.
pub type Stands = Vec<(Positions, Positions)>;

/// Where each of `groups` stands on the source (`parts`) and on the target (`target_parts`).
pub fn stands(
    (from, to): (&ClusterSpec, &ClusterSpec),
    groups: &[String],
    parts: &[(String, i32)],
    target_parts: &[(String, i32)],
    timeout: Duration,
) -> Result<Stands> {
    let one = |group: &String| -> Result<(Positions, Positions)> {
        let source = positions::client(from, group, "source")?;
        let target = positions::client(to, group, "target")?;
        let stands = (
            positions::committed(&source, parts, timeout),
            positions::committed(&target, target_parts, timeout),
        );
        source::close(&source, timeout);
        source::close(&target, timeout);
        Ok((stands.0?, stands.1?))
    };
    spread(groups, one)
}

/// One lookup: source topic, partition, target topic, source position.
pub type Wanted = (String, i32, String, i64);

/// Translates every `wanted` position through `index`.
pub fn lookups(
    to: &ClusterSpec,
    cluster: &str,
    index: &Index,
    wanted: Vec<Wanted>,
    timeout: Duration,
) -> Result<HashMap<Wanted, Found>> {
    // Each target partition's lookups stay in one thread, in order of position.
    let mut by_part: HashMap<(String, i32), Vec<Wanted>> = HashMap::new();
    for w in wanted {
        by_part.entry((w.2.clone(), w.1)).or_default().push(w);
    }
    let mut work: Vec<Vec<Wanted>> = by_part.into_values().collect();
    for w in &mut work {
        w.sort_by_key(|w| w.3);
    }
    let per_thread = work.len().div_ceil(THREADS).max(1);
    let chunks: Vec<Vec<Wanted>> = work.chunks(per_thread).map(|c| c.concat()).collect();
    let one = |chunk: &Vec<Wanted>| -> Result<Vec<(Wanted, Found)>> {
        let reader = Target::new(to, timeout)?;
        let mut out = Vec::new();
        for w in chunk {
            let key = (cluster.to_string(), w.0.clone(), w.1, w.2.clone());
            let entries = index.get(&key).map_or(&[][..], Vec::as_slice);
            let found = reader.translate((cluster, &w.0, w.1, &w.2), entries, w.3)?;
            out.push((w.clone(), found));
        }
        Ok(out)
    };
    Ok(spread(&chunks, one)?.into_iter().flatten().collect())
}

/// `f` of every item, in order, on up to [`THREADS`] threads at a time.
fn spread<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> Result<R> + Sync) -> Result<Vec<R>> {
    let mut out = Vec::with_capacity(items.len());
    for batch in items.chunks(THREADS) {
        let results: Vec<Result<R>> = std::thread::scope(|s| {
            let handles: Vec<_> = batch.iter().map(|item| s.spawn(|| f(item))).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::failed("a translation thread panicked")))
                })
                .collect()
        });
        for r in results {
            out.push(r?);
        }
    }
    Ok(out)
}
