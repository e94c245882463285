//! Consumer groups on both clusters: which source groups to translate and where they stand,
//! whether a target group is in use, and committing translated positions.

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::{Offset, TopicPartitionList};
use regex::Regex;

use crate::error::{Error, Result};
use crate::kafka;
use crate::options::{ClusterSpec, TopicSelection};
use crate::topics::Metadata;

/// `--groups`: a comma list, or a regex when it starts with '^'.
pub enum Selection {
    All,
    List(Vec<String>),
    Regex(Regex),
}

impl Selection {
    /// `flag` names the option in errors.
    pub fn parse(spec: Option<&str>, flag: &str) -> Result<Selection> {
        let Some(spec) = spec.map(str::trim) else {
            return Ok(Selection::All);
        };
        Ok(match TopicSelection::parse_flag(spec, flag)? {
            TopicSelection::List(names) => Selection::List(names),
            TopicSelection::Regex(re) => Selection::Regex(re),
        })
    }

    /// The groups to translate among those the source lists (pure). kreplicate's own groups
    /// (their names start with `kreplicate`) only when named in a list. With `strict`, a
    /// named group the source does not know, or a selection that matches none, is a usage
    /// error; without (a copy's continuous sync), such groups are not there yet.
    pub fn choose(&self, listed: &[String], source: &str, strict: bool) -> Result<Vec<String>> {
        let own = |g: &str| g.starts_with("kreplicate");
        let mut out: Vec<String> = match self {
            Selection::All => listed.iter().filter(|g| !own(g)).cloned().collect(),
            Selection::Regex(re) => listed
                .iter()
                .filter(|g| !own(g) && re.is_match(g))
                .cloned()
                .collect(),
            Selection::List(names) if !strict => names
                .iter()
                .filter(|n| listed.contains(n))
                .cloned()
                .collect(),
            Selection::List(names) => {
                if let Some(unknown) = names.iter().find(|n| !listed.contains(n)) {
                    return Err(Error::usage(format!(
                        "--groups: consumer group '{unknown}' has no committed positions on '{source}': check its name"
                    )));
                }
                names.clone()
            }
        };
        out.sort();
        out.dedup();
        if strict && out.is_empty() && !matches!(self, Selection::All) {
            return Err(Error::usage(format!(
                "--groups matches no consumer group on '{source}'"
            )));
        }
        Ok(out)
    }
}

/// Consumer groups a cluster lists.
pub fn listed(client: &Metadata, side: &str, timeout: Duration) -> Result<Vec<String>> {
    let list = client
        .fetch_group_list(None, timeout)
        .map_err(|e| Error::failed(format!("cannot list the {side}'s consumer groups: {e}")))?;
    Ok(list.groups().iter().map(|g| g.name().to_string()).collect())
}

/// Whether a group has live members on a cluster, and how it shows it.
pub fn active(client: &Metadata, group: &str, timeout: Duration) -> Result<Option<String>> {
    let rk = client.client().native_ptr();
    let described = kafka::admin::groups::view(rk, group, timeout).map_err(|e| {
        Error::failed(format!(
            "cannot describe group '{group}' on the target: {e}"
        ))
    })?;
    let Some(g) = described.filter(|g| g.busy()) else {
        return Ok(None);
    };
    let members = g.members.len();
    Ok(Some(format!("it has active members on the target ({members} listed, state {}): stop its consumers first", g.state)))
}

/// A client of `group` on one cluster that never joins it: reads and commits its positions.
/// Close it with `source::close`: dropped as it is, it waits in 100 ms steps.
pub fn client(spec: &ClusterSpec, group: &str, side: &str) -> Result<BaseConsumer> {
    kafka::reader_config(spec, group, &[])
        .create()
        .map_err(|e| kafka::creation_error(side, e))
}

/// The group's committed positions for `parts` (topic, partition); absent where it has none.
pub fn committed(
    c: &BaseConsumer,
    parts: &[(String, i32)],
    timeout: Duration,
) -> Result<Vec<Option<i64>>> {
    let mut tpl = TopicPartitionList::new();
    for (t, p) in parts {
        tpl.add_partition(t, *p);
    }
    let got = crate::source::committed_positions(c, &tpl, timeout)
        .map_err(|e| Error::failed(format!("cannot read committed positions: {e}")))?;
    let out = parts
        .iter()
        .map(|(t, p)| {
            got.find_partition(t, *p).and_then(|e| match e.offset() {
                Offset::Offset(n) => Some(n),
                _ => None,
            })
        })
        .collect();
    // Dropping the consumer while a list from committed() is alive hangs (docs/brokers.md).
    drop(got);
    Ok(out)
}

/// Commits positions to the group as a non-member. `Err(Some(why))`: the group has members.
pub fn commit(
    c: &BaseConsumer,
    positions: &[(String, i32, i64)],
) -> std::result::Result<(), String> {
    let mut tpl = TopicPartitionList::new();
    for (t, p, n) in positions {
        tpl.add_partition_offset(t, *p, Offset::Offset(*n))
            .map_err(|e| e.to_string())?;
    }
    c.commit(&tpl, CommitMode::Sync).map_err(|e| {
        use RDKafkaErrorCode as C;
        match e {
            KafkaError::ConsumerCommit(
                C::UnknownMemberId | C::IllegalGeneration | C::RebalanceInProgress,
            ) => format!("it has active members on the target (the commit was refused: {e}): stop its consumers first"),
            e => format!("committing on the target failed: {e}"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn issue_11_group_selection() {
        let listed = names(&["billing", "kreplicate.dr", "audit", "billing-v2"]);
        let parse = |s| Selection::parse(s, "--groups");
        let all = parse(None).unwrap();
        let want = names(&["audit", "billing", "billing-v2"]);
        assert_eq!(all.choose(&listed, "A", true).unwrap(), want);
        let re = parse(Some("^billing")).unwrap();
        let want = names(&["billing", "billing-v2"]);
        assert_eq!(re.choose(&listed, "A", true).unwrap(), want);
        let named = parse(Some("kreplicate.dr, audit")).unwrap();
        let want = names(&["audit", "kreplicate.dr"]);
        assert_eq!(named.choose(&listed, "A", true).unwrap(), want);
        let unknown = parse(Some("nope,audit")).unwrap();
        let err = unknown.choose(&listed, "A", true).unwrap_err().to_string();
        assert!(err.contains("'nope'"), "{err}");
        // A copy's continuous sync waits for groups that do not exist yet.
        assert_eq!(
            unknown.choose(&listed, "A", false).unwrap(),
            names(&["audit"])
        );
        assert!(parse(Some("^(")).is_err());
        assert!(parse(Some(" , ")).is_err());
        let none = parse(Some("^zzz")).unwrap();
        assert!(none.choose(&listed, "A", true).is_err());
        assert!(none.choose(&listed, "A", false).unwrap().is_empty());
    }
}
