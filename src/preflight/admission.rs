//! The one admission rule: whether a selected source topic is copied, and if not, why. The
//! start ([`super::inspect`], which `plan` prints and the run acts on) and discovery
//! ([`super::refresh`]) ask the same questions in the same order: is it a copy of this run's
//! own output or of the target's records (loops), a copy onto itself, is its target present
//! (or created with `--create-topics`) with enough partitions, and may the run's principals
//! read and write it ([`permissions`]). They differ only in what a "no" does: the start
//! refuses (exit 2) or leaves a loop out with a warning; discovery leaves the topic out with a
//! warning and looks again at the next refresh.

use std::collections::HashMap;
use std::time::Duration;

use rdkafka::consumer::Consumer;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::acl::access::{self, Need};
use crate::acl::authorized::{Op, Resource};
use crate::options::{RunOptions, TopicSelection};
use crate::table::count;
use crate::topics::{loops, Metadata, Route, TopicCheck};

/// What admission reads: the run's options, whether both sides are one cluster, and the
/// target's topics with their partition counts.
pub struct Ground<'a> {
    pub opts: &'a RunOptions,
    pub same_cluster: bool,
    pub target: &'a HashMap<String, i32>,
}

/// Whether one selected topic is copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Copy,
    /// On the same cluster, `--rename` makes it from a selected topic: copying it would copy
    /// copies.
    OwnOutput,
    /// It holds nothing but copies from the target cluster, or no record at all: its target
    /// is created once it holds a record of its own, so opposite runs never grow a chain.
    OnlyCopies,
    /// Same cluster, same name.
    OntoItself,
    /// The target topic has this many partitions, fewer than the source's (no
    /// `--create-topics`, which would add them).
    FewerPartitions(i32),
    /// The target topic does not exist (no `--create-topics`, which would create it).
    NoTarget,
}

/// Whether [`admit`] asks if `route`'s source topic holds a record of its own: a regex
/// creating target topics across clusters, for a target topic not there yet.
pub fn asks_own_records(ground: &Ground, route: &Route) -> bool {
    let opts = ground.opts;
    !ground.same_cluster
        && matches!(opts.topics, TopicSelection::Regex(_))
        && opts.create_topics
        && opts.origin_header
        && !ground.target.contains_key(&route.target)
}

/// The loop and target rules for `route`, in the order the start has always applied them.
/// `own_records` says whether the source topic holds a record of its own (it reads the
/// topic, so it is asked only where the answer matters).
pub fn admit(ground: &Ground, route: &Route, own_records: &dyn Fn(&Route) -> bool) -> Verdict {
    let opts = ground.opts;
    let have = ground.target.get(&route.target).copied();
    if ground.same_cluster
        && loops::own_output(
            &opts.rename,
            &opts.topics,
            opts.exclude.as_ref(),
            &route.source,
        )
    {
        return Verdict::OwnOutput;
    }
    if asks_own_records(ground, route) && !own_records(route) {
        return Verdict::OnlyCopies;
    }
    if ground.same_cluster && route.source == route.target {
        return Verdict::OntoItself;
    }
    match have {
        Some(n) if n < route.partitions && !opts.create_topics => Verdict::FewerPartitions(n),
        None if !opts.create_topics => Verdict::NoTarget,
        _ => Verdict::Copy,
    }
}

impl Verdict {
    /// Why a start naming this topic refuses to run (exit 2); `None` for a topic it copies
    /// and for loops, which it leaves out with one warning for all (see `start`).
    pub fn start_refusal(&self, r: &Route, opts: &RunOptions) -> Option<String> {
        Some(match self {
            Verdict::Copy | Verdict::OwnOutput | Verdict::OnlyCopies => return None,
            Verdict::OntoItself => format!(
                "refusing to copy topic '{}' onto itself (same cluster, same name): use --rename",
                r.source
            ),
            Verdict::FewerPartitions(n) => format!(
                "target topic '{}' has {}, fewer than the {} of source topic '{}': add partitions to the target, or pass --create-topics",
                r.target, count(*n as u64, "partition"), r.partitions, r.source
            ),
            Verdict::NoTarget => format!(
                "target topic '{}' does not exist on '{}': create it with {}, or pass --create-topics",
                r.target, opts.to.name, count(r.partitions as u64, "partition")
            ),
        })
    }

    /// The warning for a topic discovery found and does not copy (yet); `None` to copy it.
    pub fn discovery_line(&self, r: &Route, opts: &RunOptions) -> Option<String> {
        let why = match self {
            Verdict::Copy => return None,
            Verdict::OwnOutput => {
                "this run writes to it on the same cluster (--rename makes it from a selected topic)"
                    .to_string()
            }
            Verdict::OnlyCopies => {
                return Some(format!(
                    "new source topic '{}' is not copied yet: it holds nothing but copies from the target cluster, or no record at all (its target is created once it holds a record of its own)",
                    r.source
                ))
            }
            Verdict::OntoItself => {
                "it would be copied onto itself (same cluster, same name): use --rename".to_string()
            }
            Verdict::FewerPartitions(n) => format!(
                "target topic '{}' has {}, fewer than its {}; add partitions to the target",
                r.target, count(*n as u64, "partition"), r.partitions
            ),
            Verdict::NoTarget => format!(
                "target topic '{}' does not exist on '{}'; create it with {} (it is picked up at the next refresh), or run with --create-topics",
                r.target, opts.to.name, count(r.partitions as u64, "partition")
            ),
        };
        Some(left_out(r, &why))
    }
}

/// The start's refusal for target topics that do not exist (no `--create-topics`): every one
/// named in one line, so a person fixes them all at once rather than one per run (issue 35).
pub fn no_targets_refusal(missing: &[&Route], opts: &RunOptions) -> Option<String> {
    match missing {
        [] => None,
        [one] => Verdict::NoTarget.start_refusal(one, opts),
        many => {
            let named: Vec<String> = many
                .iter()
                .map(|r| {
                    format!(
                        "'{}' ({})",
                        r.target,
                        count(r.partitions as u64, "partition")
                    )
                })
                .collect();
            Some(format!(
                "{} target topics do not exist on '{}': {}; create them with those partitions, or pass --create-topics",
                many.len(),
                opts.to.name,
                named.join(", ")
            ))
        }
    }
}

/// The warning for a topic discovery does not copy: `why` after its name.
pub fn left_out(r: &Route, why: &str) -> String {
    format!("new source topic '{}' is not copied: {why}", r.source)
}

/// The permission rule for topics that passed [`admit`]: the needs both brokers said no to,
/// asked of each broker once for all `checks`.
pub fn permissions(opts: &RunOptions, checks: &[TopicCheck]) -> Vec<Need> {
    access::missing_for(opts, checks)
}

/// Why the run may not copy these topics: one line naming each missing grant (the start's
/// refusal), `None` when nothing is missing.
pub fn refusal(opts: &RunOptions, missing: &[Need]) -> Option<String> {
    let all: Vec<&Need> = missing.iter().collect();
    access::refusal(&opts.from, &opts.to, &all)
}

/// The same line for one topic: the grants it misses and those the run misses whatever it
/// copies (its group, the clusters), so a topic found by discovery is refused with the line a
/// start naming it alone would refuse with.
pub fn refusal_for_topic(opts: &RunOptions, missing: &[Need], r: &Route) -> Option<String> {
    let mine: Vec<&Need> = missing
        .iter()
        .filter(|n| match &n.resource {
            Resource::Topic(t) => match n.source {
                true => *t == r.source,
                false => *t == r.target,
            },
            Resource::Group(_) | Resource::Cluster => true,
        })
        .collect();
    access::refusal(&opts.from, &opts.to, &mine)
}

/// Of the target topics missing from the target's listing, those the broker hides from the
/// run: Kafka lists no topic the principal may not describe, and answers a topic asked for by
/// name with TOPIC_AUTHORIZATION_FAILED, so "create it" would be the wrong advice (issue 35).
pub fn hidden_targets(client: &Metadata, missing: &[&str], timeout: Duration) -> Vec<String> {
    let denied = |c: RDKafkaErrorCode| c == RDKafkaErrorCode::TopicAuthorizationFailed;
    missing
        .iter()
        .filter(|t| match client.fetch_metadata(Some(t), timeout) {
            Ok(md) => md
                .topics()
                .iter()
                .any(|m| m.name() == **t && m.error().is_some_and(|e| denied(e.into()))),
            Err(KafkaError::MetadataFetch(c)) => denied(c),
            Err(_) => false,
        })
        .map(|t| t.to_string())
        .collect()
}

/// The start's refusal for target topics the run may not see: the Describe grants, as lines.
pub fn hidden_refusal(opts: &RunOptions, hidden: &[String]) -> Option<String> {
    let needs: Vec<Need> = hidden
        .iter()
        .map(|t| Need {
            source: false,
            resource: Resource::Topic(t.clone()),
            op: Op::Describe,
        })
        .collect();
    let all: Vec<&Need> = needs.iter().collect();
    let names: Vec<String> = hidden.iter().map(|t| format!("'{t}'")).collect();
    access::refusal(&opts.from, &opts.to, &all).map(|why| {
        format!(
            "target topic {} on '{}' cannot be seen by the run (Kafka hides a topic its principal may not describe): {why}",
            names.join(", "),
            opts.to.name
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(topics: &str, rename: &str, create: bool) -> RunOptions {
        let mut args = crate::cli::CopyArgs::default();
        args.ends.from = Some("a:9092".into());
        args.ends.to = Some("b:9092".into());
        args.ends.topics = Some(topics.into());
        args.ends.rename = Some(rename.into());
        let mut o = crate::config::resolve(&args, &Default::default()).unwrap();
        o.create_topics = create;
        o
    }

    fn route(source: &str, target: &str, partitions: i32) -> Route {
        Route {
            source: source.into(),
            target: target.into(),
            partitions,
        }
    }

    #[test]
    fn issue_34_one_rule_for_loops_and_targets() {
        let target: HashMap<String, i32> = [("b.x".to_string(), 2)].into_iter().collect();
        let o = opts("^x.*", "b.{topic}", false);
        let ground = Ground {
            opts: &o,
            same_cluster: false,
            target: &target,
        };
        let never = |_: &Route| panic!("read only for a topic that may be a copy");
        assert_eq!(admit(&ground, &route("x", "b.x", 2), &never), Verdict::Copy);
        assert_eq!(
            admit(&ground, &route("x", "b.x", 3), &never),
            Verdict::FewerPartitions(2)
        );
        assert_eq!(
            admit(&ground, &route("xy", "b.xy", 1), &never),
            Verdict::NoTarget
        );
        // With --create-topics a missing target is created, unless the topic holds only copies.
        let o = opts("^x.*", "b.{topic}", true);
        let ground = Ground { opts: &o, ..ground };
        assert_eq!(admit(&ground, &route("x", "b.x", 3), &never), Verdict::Copy);
        assert_eq!(
            admit(&ground, &route("xy", "b.xy", 1), &|_| false),
            Verdict::OnlyCopies
        );
        assert_eq!(
            admit(&ground, &route("xy", "b.xy", 1), &|_| true),
            Verdict::Copy
        );
        // On one cluster: this run's own output, and a copy onto itself.
        let o = opts("^x.*", "x.copy.{topic}", true);
        let ground = Ground {
            opts: &o,
            same_cluster: true,
            target: &target,
        };
        assert_eq!(
            admit(&ground, &route("x.copy.x", "x.copy.x.copy.x", 1), &never),
            Verdict::OwnOutput
        );
        let o = opts("x", "{topic}", true);
        let ground = Ground { opts: &o, ..ground };
        assert_eq!(
            admit(&ground, &route("x", "x", 1), &never),
            Verdict::OntoItself
        );
    }

    #[test]
    fn issue_34_a_topic_is_refused_for_its_own_missing_grants() {
        let o = opts("^x.*", "{topic}", false);
        let need = |source: bool, resource: Resource, op: Op| Need {
            source,
            resource,
            op,
        };
        let missing = vec![
            need(true, Resource::Topic("x1".into()), Op::Read),
            need(false, Resource::Topic("x2".into()), Op::Write),
        ];
        let one = refusal_for_topic(&o, &missing, &route("x1", "x1", 1)).unwrap();
        assert!(one.starts_with("the run lacks 1 permission (ACLs): on the source cluster"));
        assert!(one.contains("--operation Read --topic 'x1'"), "{one}");
        assert_eq!(refusal_for_topic(&o, &missing, &route("x3", "x3", 1)), None);
        // A topic alone gets the line a start naming it alone refuses with.
        assert_eq!(Some(one), refusal(&o, &missing[..1]));
    }

    #[test]
    fn issue_35_every_missing_target_is_named_in_one_line() {
        let o = opts("a,b", "{topic}", false);
        let (a, b) = (route("a", "a", 2), route("b", "b", 1));
        assert_eq!(no_targets_refusal(&[], &o), None);
        assert_eq!(
            no_targets_refusal(&[&a], &o).unwrap(),
            "target topic 'a' does not exist on 'b:9092': create it with 2 partitions, or pass --create-topics"
        );
        assert_eq!(
            no_targets_refusal(&[&a, &b], &o).unwrap(),
            "2 target topics do not exist on 'b:9092': 'a' (2 partitions), 'b' (1 partition); create them with those partitions, or pass --create-topics"
        );
    }
}
