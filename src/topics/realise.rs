//! Changing the target before (or, for discovered topics, during) a run: create the missing
//! topics with the source's partitions and configs, add the partitions a target topic lacks,
//! and with `--sync-configs` set the source's values of differing configs.

use std::collections::BTreeMap;

use rdkafka::admin::{AdminOptions, NewPartitions, NewTopic, TopicReplication};
use rdkafka::error::RDKafkaErrorCode;

use super::admin::{self, Admin};
use super::alter;
use super::{wait_for, AddedPartitions, CreatedTopic, Metadata, Route, TargetChanges, TopicCheck};
use crate::error::{Error, Result};
use crate::options::RunOptions;

/// Creates the missing target topics of `topics` and adds the partitions the others lack
/// and, with `--sync-configs`, sets the source's values of differing configs. Returns what
/// it created and added.
pub(crate) fn realise(
    opts: &RunOptions,
    topics: &[TopicCheck],
    target: &Metadata,
) -> Result<TargetChanges> {
    let mut changes = TargetChanges::default();
    let missing: Vec<&TopicCheck> = topics
        .iter()
        .filter(|t| t.target_partitions.is_none())
        .collect();
    if !missing.is_empty() {
        changes.created = create_topics(opts, &missing, target)?;
    }
    let short: Vec<(&Route, i32)> = topics
        .iter()
        .filter_map(|t| match t.target_partitions {
            Some(n) if n < t.route.partitions => Some((&t.route, n)),
            _ => None,
        })
        .collect();
    if !short.is_empty() {
        changes.grown = add_partitions(opts, &short, target)?;
    }
    if opts.sync_configs {
        let changes: BTreeMap<String, BTreeMap<String, String>> = topics
            .iter()
            .filter(|t| !t.drift.is_empty())
            .map(|t| {
                let set = t.drift.iter().map(|d| (d.key.clone(), d.source.clone()));
                (t.route.target.clone(), set.collect())
            })
            .collect();
        if !changes.is_empty() {
            let admin = admin::admin(&opts.to, "target")?;
            alter::alter_incremental(&admin, &changes, opts.timeout)?;
            log::info!(
                "set the source's configs on {} target topics",
                changes.len()
            );
        }
    }
    Ok(changes)
}

/// Creates `missing`; returns the topics this run created (not those another client created
/// meanwhile).
fn create_topics(
    opts: &RunOptions,
    missing: &[&TopicCheck],
    target: &Metadata,
) -> Result<Vec<CreatedTopic>> {
    let admin: Admin = admin::admin(&opts.to, "target")?;
    let rf = opts.replication_factor.unwrap_or(-1);
    let new: Vec<NewTopic<'_>> = missing
        .iter()
        .map(|t| {
            let r = &t.route;
            t.create_configs.iter().fold(
                NewTopic::new(&r.target, r.partitions, TopicReplication::Fixed(rf)),
                |nt, (k, v)| nt.set(k, v),
            )
        })
        .collect();
    let admin_opts = AdminOptions::new().operation_timeout(Some(opts.timeout));
    let mut results = Vec::new();
    for batch in batches(&new, |t| t.num_partitions) {
        let answered = admin::block_on(admin.create_topics(batch, &admin_opts), opts.timeout)
            .ok_or_else(|| {
                Error::failed(format!(
                    "creating target topics timed out after {:?}",
                    opts.timeout
                ))
            })?
            .map_err(|e| Error::failed(format!("cannot create target topics: {e}")))?;
        results.extend(answered);
    }
    let mut created = Vec::new();
    for r in results {
        let topic = match r {
            Ok(topic) => topic,
            Err((topic, RDKafkaErrorCode::TopicAlreadyExists)) => {
                log::info!("target topic '{topic}' was created meanwhile by another client");
                continue;
            }
            Err((topic, code)) => {
                let configs = missing
                    .iter()
                    .find(|t| t.route.target == topic)
                    .map(|t| {
                        let list: Vec<String> = t
                            .create_configs
                            .iter()
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect();
                        list.join(", ")
                    })
                    .filter(|l| !l.is_empty())
                    .map_or_else(String::new, |l| {
                        format!(" (with configs {l}; leave a key out with --config-exclude)")
                    });
                return Err(Error::usage(format!(
                    "cannot create target topic '{topic}': {code}{configs}"
                )));
            }
        };
        if let Some(t) = missing.iter().find(|t| t.route.target == topic) {
            created.push(CreatedTopic {
                topic,
                partitions: t.route.partitions,
                configs: t.create_configs.clone(),
            });
        }
    }
    // Wait until metadata shows every new topic with all its partitions.
    let want: Vec<(&str, i32)> = missing
        .iter()
        .map(|m| (m.route.target.as_str(), m.route.partitions))
        .collect();
    wait_for(target, &want, opts.timeout)
        .map_err(|e| Error::failed(format!("created target topics: {e}")))?;
    Ok(created)
}

/// Partitions one CreateTopics request may create: Apache Kafka refuses a request of 10,000 or
/// more with POLICY_VIOLATION (issue 43: 1,000 topics of 10 partitions were refused at once).
const PARTITIONS_PER_REQUEST: i32 = 5_000;

/// `items` in order, in runs whose partitions add up to at most [`PARTITIONS_PER_REQUEST`]
/// (an item above it alone).
fn batches<T>(items: &[T], partitions: impl Fn(&T) -> i32) -> Vec<&[T]> {
    let mut out = Vec::new();
    let (mut start, mut sum) = (0, 0);
    for (i, item) in items.iter().enumerate() {
        let n = partitions(item);
        if i > start && sum + n > PARTITIONS_PER_REQUEST {
            out.push(&items[start..i]);
            (start, sum) = (i, 0);
        }
        sum += n;
    }
    if start < items.len() {
        out.push(&items[start..]);
    }
    out
}

/// CreatePartitions on the target up to each route's count from the count it has (`grow`
/// pairs them; Apache Kafka; tansu answers UNSUPPORTED_FEATURE), then waits until the
/// target's metadata shows them. An error is exit 1: a rerun after the target was grown by
/// hand succeeds.
pub(crate) fn add_partitions(
    opts: &RunOptions,
    grow: &[(&Route, i32)],
    target: &Metadata,
) -> Result<Vec<AddedPartitions>> {
    let failed = |r: &Route, why: &dyn std::fmt::Display| {
        Error::failed(format!(
            "source topic '{}' has {} partitions and target topic '{}' could not follow: {why}; add partitions to the target, then run again",
            r.source, r.partitions, r.target
        ))
    };
    let Some((first, _)) = grow.first() else {
        return Ok(Vec::new());
    };
    let admin = admin::admin(&opts.to, "target")?;
    let new: Vec<NewPartitions<'_>> = grow
        .iter()
        .map(|(r, _)| NewPartitions::new(&r.target, r.partitions as usize))
        .collect();
    let admin_opts = AdminOptions::new().operation_timeout(Some(opts.timeout));
    let results = admin::block_on(admin.create_partitions(&new, &admin_opts), opts.timeout)
        .ok_or_else(|| failed(first, &format!("no answer within {:?}", opts.timeout)))?
        .map_err(|e| failed(first, &e))?;
    for res in results {
        if let Err((topic, code)) = res {
            let r = grow
                .iter()
                .find(|(r, _)| r.target == topic)
                .map_or(*first, |(r, _)| *r);
            return Err(failed(r, &code));
        }
    }
    let want: Vec<(&str, i32)> = grow
        .iter()
        .map(|(r, _)| (r.target.as_str(), r.partitions))
        .collect();
    wait_for(target, &want, opts.timeout).map_err(|e| failed(first, &e))?;
    Ok(grow
        .iter()
        .map(|(r, had)| AddedPartitions {
            topic: r.target.clone(),
            added: r.partitions - had,
            partitions: r.partitions,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_43_topics_are_created_at_most_5000_partitions_a_request() {
        let sizes = |items: &[i32]| -> Vec<Vec<i32>> {
            batches(items, |n| *n).iter().map(|b| b.to_vec()).collect()
        };
        assert_eq!(sizes(&[]), Vec::<Vec<i32>>::new());
        assert_eq!(sizes(&[10; 3]), vec![vec![10; 3]]);
        let thousand = sizes(&[10; 1000]);
        assert_eq!(thousand.len(), 2);
        assert!(thousand.iter().all(|b| b.iter().sum::<i32>() == 5000));
        assert_eq!(
            sizes(&[4000, 2000, 6000, 1]),
            vec![vec![4000], vec![2000], vec![6000], vec![1]]
        );
        assert_eq!(sizes(&[2500, 2500, 1]), vec![vec![2500, 2500], vec![1]]);
    }
}
