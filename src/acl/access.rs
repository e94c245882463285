//! The permissions a run needs, checked before anything is read or written: each broker says
//! which operations the run's principal may perform ([`super::authorized`]), and a missing one
//! is refused as the `kafka-acls` line that grants it. A broker that does not say (librdkafka's
//! mock cluster, an old broker) is not checked here; its refusals come from the copy itself.

use super::authorized::{self, Granted, Op, Resource};
use crate::options::{ClusterSpec, Guarantee, RunOptions};
use crate::topics::{admin, TopicCheck};

/// One operation on one resource of one side.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Need {
    pub source: bool,
    pub resource: Resource,
    pub op: Op,
}

/// What a run needs: the source topics read (and described), the group its positions live
/// in, the target topics written (read too under exactly-once, which resumes from them),
/// created with `--create-topics`, and topic configs described where they are compared
/// (`--sync-configs`, or creating). `targets` pairs each target topic with whether the run
/// creates it.
pub fn needs(
    guarantee: Guarantee,
    group: &str,
    sync_configs: bool,
    sync_acls: bool,
    sources: &[String],
    targets: &[(String, bool)],
) -> Vec<Need> {
    let configs = sync_configs || targets.iter().any(|(_, create)| *create);
    let mut out = Vec::new();
    let mut add = |source: bool, resource: Resource, op: Op| {
        out.push(Need {
            source,
            resource,
            op,
        })
    };
    for t in sources {
        add(true, Resource::Topic(t.clone()), Op::Describe);
        add(true, Resource::Topic(t.clone()), Op::Read);
        if configs {
            add(true, Resource::Topic(t.clone()), Op::DescribeConfigs);
        }
    }
    add(true, Resource::Group(group.to_string()), Op::Read);
    // --sync-acls: DescribeAcls on both sides, CreateAcls on the target.
    if sync_acls {
        add(true, Resource::Cluster, Op::Describe);
        add(false, Resource::Cluster, Op::Describe);
        add(false, Resource::Cluster, Op::Alter);
    }
    for (t, create) in targets {
        let topic = || Resource::Topic(t.clone());
        if *create {
            add(false, topic(), Op::Create);
            continue;
        }
        add(false, topic(), Op::Describe);
        add(false, topic(), Op::Write);
        if guarantee == Guarantee::ExactlyOnce {
            add(false, topic(), Op::Read);
        }
        if sync_configs {
            add(false, topic(), Op::DescribeConfigs);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The needs a broker said no to. Creating a topic is allowed by CREATE on the cluster or on
/// the topic: it is missing only when the broker denied both.
pub fn missing<'n>(needs: &'n [Need], source: &Granted, target: &Granted) -> Vec<&'n Need> {
    let denied = |granted: &Granted, resource: &Resource, op: Op| {
        granted.get(resource).is_some_and(|ops| !ops.contains(&op))
    };
    needs
        .iter()
        .filter(|n| {
            let granted = if n.source { source } else { target };
            match (&n.resource, n.op) {
                (Resource::Topic(_), Op::Create) => {
                    denied(granted, &n.resource, Op::Create)
                        && denied(granted, &Resource::Cluster, Op::Create)
                }
                (resource, op) => denied(granted, resource, op),
            }
        })
        .collect()
}

/// The `kafka-acls` command that grants `need` to the principal of `spec`'s credentials.
pub fn grant_line(need: &Need, spec: &ClusterSpec) -> String {
    let principal = spec
        .properties
        .iter()
        .find(|(k, _)| k == "sasl.username")
        .map_or("<the principal of this run>".to_string(), |(_, u)| {
            u.clone()
        });
    let resource = match &need.resource {
        Resource::Topic(t) => format!("--topic '{t}'"),
        Resource::Group(g) => format!("--group '{g}'"),
        Resource::Cluster => "--cluster".to_string(),
    };
    format!(
        "kafka-acls --bootstrap-server {} --add --allow-principal 'User:{principal}' --operation {} {resource}",
        spec.bootstrap,
        need.op.name()
    )
}

/// Why a run would be refused for want of permissions: one line, each missing grant as the
/// command to run.
pub fn refusal(from: &ClusterSpec, to: &ClusterSpec, missing: &[&Need]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    let lines: Vec<String> = missing
        .iter()
        .map(|n| {
            let (side, spec) = match n.source {
                true => ("source", from),
                false => ("target", to),
            };
            format!(
                "on the {side} cluster '{}': {}",
                spec.name,
                grant_line(n, spec)
            )
        })
        .collect();
    Some(format!(
        "the run lacks {} permission{} (ACLs): {}",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" },
        lines.join("; ")
    ))
}

/// What the run's principals may not do to copy `topics`, where a broker says so.
pub fn missing_for(opts: &RunOptions, topics: &[TopicCheck]) -> Vec<Need> {
    let sources: Vec<String> = topics.iter().map(|t| t.route.source.clone()).collect();
    let targets: Vec<(String, bool)> = topics
        .iter()
        .map(|t| (t.route.target.clone(), t.target_partitions.is_none()))
        .collect();
    let needs = needs(
        opts.guarantee,
        &opts.group,
        opts.sync_configs,
        opts.sync_acls,
        &sources,
        &targets,
    );
    // The group also asks the target whether it says what is allowed.
    let ask = |spec: &ClusterSpec, side: &str, topics: Vec<String>| {
        crate::kafka::find_group_coordinator(spec, &opts.group, opts.timeout);
        admin::admin(spec, side)
            .map(|a| authorized::granted(&a, &topics, &opts.group, opts.timeout))
            .unwrap_or_default()
    };
    let target_topics = targets.iter().map(|(t, _)| t.clone()).collect();
    let (source, target) = std::thread::scope(|s| {
        let target = s.spawn(|| ask(&opts.to, "target", target_topics));
        let source = ask(&opts.from, "source", sources.clone());
        (source, target.join().unwrap_or_default())
    });
    // --sync-acls's Describe on each cluster is known from the cluster's authorised operations
    // only: librdkafka 2.12 drops DescribeAcls' own CLUSTER_AUTHORIZATION_FAILED (the answer
    // reads as "no ACLs"), so a refused DescribeAcls cannot be told from an empty one.
    let mut gone: Vec<Need> = missing(&needs, &source, &target)
        .into_iter()
        .cloned()
        .collect();
    gone.sort();
    gone
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn spec(name: &str, bootstrap: &str, properties: &[(&str, &str)]) -> ClusterSpec {
        ClusterSpec {
            name: name.into(),
            bootstrap: bootstrap.into(),
            properties: properties
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            id: None,
        }
    }

    fn topic(t: &str) -> Resource {
        Resource::Topic(t.into())
    }

    #[test]
    fn issue_19_a_run_needs_what_it_reads_writes_and_creates() {
        let targets = [("t".into(), false), ("u".into(), true)];
        let got = needs(
            Guarantee::ExactlyOnce,
            "g",
            false,
            false,
            &["s".into()],
            &targets,
        );
        let have: Vec<(bool, Resource, Op)> = got
            .iter()
            .map(|n| (n.source, n.resource.clone(), n.op))
            .collect();
        assert_eq!(
            have,
            vec![
                (false, topic("t"), Op::Read),
                (false, topic("t"), Op::Write),
                (false, topic("t"), Op::Describe),
                (false, topic("u"), Op::Create),
                (true, topic("s"), Op::Read),
                (true, topic("s"), Op::Describe),
                (true, topic("s"), Op::DescribeConfigs),
                (true, Resource::Group("g".into()), Op::Read),
            ]
        );
        // At-least-once never reads the target, nor compares configs without creating.
        let got = needs(
            Guarantee::AtLeastOnce,
            "g",
            false,
            false,
            &["s".into()],
            &[("t".into(), false)],
        );
        assert!(!got.iter().any(|n| n.op == Op::DescribeConfigs));
        assert!(!got.iter().any(|n| !n.source && n.op == Op::Read));
    }

    #[test]
    fn issue_19_sync_acls_needs_to_describe_both_clusters_and_alter_the_target() {
        let got = needs(
            Guarantee::AtLeastOnce,
            "g",
            false,
            true,
            &["s".into()],
            &[("t".into(), false)],
        );
        let cluster: Vec<(bool, Op)> = got
            .iter()
            .filter(|n| n.resource == Resource::Cluster)
            .map(|n| (n.source, n.op))
            .collect();
        assert_eq!(
            cluster,
            vec![
                (false, Op::Alter),
                (false, Op::Describe),
                (true, Op::Describe)
            ]
        );
        let to = spec("dr", "k2:9093", &[("sasl.username", "writer")]);
        let need = Need {
            source: false,
            resource: Resource::Cluster,
            op: Op::Alter,
        };
        assert_eq!(
            grant_line(&need, &to),
            "kafka-acls --bootstrap-server k2:9093 --add --allow-principal 'User:writer' --operation Alter --cluster"
        );
    }

    #[test]
    fn issue_19_only_what_a_broker_denied_is_missing() {
        let targets = [("t".into(), false), ("new".into(), true)];
        let all = needs(
            Guarantee::AtLeastOnce,
            "g",
            false,
            false,
            &["s".into()],
            &targets,
        );
        let ops = |o: &[Op]| o.iter().copied().collect::<BTreeSet<Op>>();
        let mut source = Granted::new();
        source.insert(
            topic("s"),
            ops(&[Op::Describe, Op::Read, Op::DescribeConfigs]),
        );
        // The group's answer is unknown: not checked.
        let mut target = Granted::new();
        target.insert(topic("t"), ops(&[Op::Describe]));
        target.insert(topic("new"), ops(&[]));
        target.insert(Resource::Cluster, ops(&[Op::Create]));
        let gone = missing(&all, &source, &target);
        assert_eq!(gone.len(), 1, "{gone:?}");
        assert_eq!(
            (gone[0].resource.clone(), gone[0].op),
            (topic("t"), Op::Write)
        );
        // CREATE denied on the cluster and on the topic: missing.
        target.insert(Resource::Cluster, ops(&[Op::Describe]));
        let gone = missing(&all, &source, &target);
        assert!(gone
            .iter()
            .any(|n| n.resource == topic("new") && n.op == Op::Create));
        // Nothing said: nothing missing.
        assert!(missing(&all, &Granted::new(), &Granted::new()).is_empty());
    }

    #[test]
    fn issue_19_a_missing_permission_is_the_command_that_grants_it() {
        let from = spec(
            "prod",
            "k1:9093",
            &[
                ("sasl.username", "replicator"),
                ("sasl.password", "hunter2"),
            ],
        );
        let to = spec("dr", "k2:9093", &[]);
        let need = Need {
            source: true,
            resource: topic("orders"),
            op: Op::Read,
        };
        let why = refusal(&from, &to, &[&need]).unwrap();
        assert_eq!(
            why,
            "the run lacks 1 permission (ACLs): on the source cluster 'prod': kafka-acls --bootstrap-server k1:9093 --add --allow-principal 'User:replicator' --operation Read --topic 'orders'"
        );
        assert!(!why.contains("hunter2"));
    }
}
