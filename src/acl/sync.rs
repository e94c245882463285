//! `--sync-acls`: the ACLs of the copied topics (and, with `--sync-group-acls`, of the named
//! consumer groups) made on the target, renamed with the topic, as MirrorMaker 2's
//! `MirrorSourceConnector` does, with its safety rule:
//!
//! * only LITERAL patterns are copied: a PREFIXED one cannot follow `--rename` (it is named
//!   in a warning instead), and the wildcard `*` is no copied topic;
//! * an ALLOW WRITE is never copied: the run is the one writer of the target's copies;
//! * an ALLOW ALL becomes ALLOW READ on the target; DENY entries are copied as they are.
//!
//! Adds only: an ACL removed from the source stays on the target (the target's own ACLs
//! cannot be told from copies). The decision is pure ([`wanted`], [`missing`]); [`plan`]
//! reads both clusters and [`create`] writes the target.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::Serialize;

use super::access::{self, Need};
pub use super::acls::{Acl, Kind};

use super::acls;
use super::authorized::{Op, Resource};
use crate::error::{Error, Result};
use crate::kafka::admin::Failure;
use crate::options::{ClusterSpec, RunOptions, TopicSelection};
use crate::topics::{admin, Route};

use rdkafka_sys::rd_kafka_resp_err_t as E;

/// What `--sync-acls` found to do on the target.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AclPlan {
    /// The target's copies of source ACLs that the target lacks: what a run creates.
    pub missing: Vec<Acl>,
    /// Source ALLOW WRITE ACLs of copied topics: never copied.
    pub left_out_writes: Vec<Acl>,
    /// Source PREFIXED ACLs covering a copied topic: not copied.
    pub prefixed: Vec<Acl>,
    /// Principals of `missing` the target holds no SCRAM credentials for.
    pub unknown_principals: Vec<String>,
}

impl AclPlan {
    /// What a run should say about the plan at start (creating aside).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.prefixed.is_empty() {
            let list: Vec<String> = self.prefixed.iter().map(Acl::describe).collect();
            out.push(format!(
                "--sync-acls copies LITERAL ACLs only; these PREFIXED source ACLs cover copied topics and are not copied (add them on the target by hand): {}",
                list.join("; ")
            ));
        }
        if !self.unknown_principals.is_empty() {
            out.push(format!(
                "--sync-acls: ACLs are copied as they are for principals the target cluster holds no SCRAM credentials for: {} (users the target authenticates otherwise, e.g. PLAIN, TLS or OAuth, cannot be checked)",
                self.unknown_principals.join(", ")
            ));
        }
        out
    }
}

/// The target's copy of a source ACL, on `target` (pure): `None` for an ALLOW WRITE; an
/// ALLOW ALL becomes an ALLOW READ.
pub fn mirror(acl: &Acl, target: &str) -> Option<Acl> {
    if acl.allow && acl.operation == Op::Write {
        return None;
    }
    let operation = match (acl.allow, acl.operation) {
        (true, Op::All) => Op::Read,
        (_, op) => op,
    };
    Some(Acl {
        name: target.to_string(),
        operation,
        ..acl.clone()
    })
}

/// The source ACLs' copies the target should hold (pure), with the ALLOW WRITE ACLs left
/// out and the PREFIXED ones that cover a copied topic.
pub fn wanted(
    source: &[Acl],
    routes: &[Route],
    groups: Option<&TopicSelection>,
) -> (Vec<Acl>, Vec<Acl>, Vec<Acl>) {
    let (mut want, mut writes, mut prefixed) = (Vec::new(), Vec::new(), Vec::new());
    for acl in source {
        let covers = |name: &str| match acl.prefixed {
            true => name.starts_with(&acl.name),
            false => name == acl.name,
        };
        let target = match acl.kind {
            Kind::Topic => routes
                .iter()
                .find(|r| covers(&r.source))
                .map(|r| r.target.as_str()),
            // Groups keep their names: `kreplicate groups` commits to the same-named group.
            Kind::Group => groups
                .filter(|g| !acl.prefixed && g.matches(&acl.name))
                .map(|_| acl.name.as_str()),
        };
        let Some(target) = target else { continue };
        if acl.prefixed {
            prefixed.push(acl.clone());
            continue;
        }
        match mirror(acl, target) {
            Some(copy) => want.push(copy),
            None => writes.push(acl.clone()),
        }
    }
    want.sort();
    want.dedup();
    (want, writes, prefixed)
}

/// Of `wanted`, those the target does not hold (pure).
pub fn missing(wanted: Vec<Acl>, target: &[Acl]) -> Vec<Acl> {
    let have: BTreeSet<&Acl> = target.iter().collect();
    wanted.into_iter().filter(|a| !have.contains(a)).collect()
}

/// Reads both clusters' ACLs and decides what the target lacks. A cluster that refuses
/// (no permission, no authorizer) is a usage error naming what to fix.
pub fn plan(opts: &RunOptions, routes: &[Route]) -> Result<AclPlan> {
    let groups = opts.sync_group_acls.as_ref();
    compare(&opts.from, &opts.to, routes, groups, opts.timeout)
}

/// [`plan`] for `from` and `to` (`kreplicate verify --acls` too).
pub fn compare(
    from: &ClusterSpec,
    to: &ClusterSpec,
    routes: &[Route],
    groups: Option<&TopicSelection>,
    timeout: Duration,
) -> Result<AclPlan> {
    let read = |source: bool| -> Result<Vec<Acl>> {
        let (spec, side) = match source {
            true => (from, "source"),
            false => (to, "target"),
        };
        let admin = admin::admin(spec, side)?;
        acls::describe(&admin, groups.is_some(), timeout).map_err(|f| refused(from, to, source, &f))
    };
    let (source, target) = std::thread::scope(|s| {
        let target = s.spawn(|| read(false));
        (read(true), target.join())
    });
    let source = source?;
    let target = target.map_err(|_| Error::failed("the ACL check thread panicked"))??;
    let (want, left_out_writes, prefixed) = wanted(&source, routes, groups);
    let missing = missing(want, &target);
    let users: BTreeSet<String> = missing
        .iter()
        .filter_map(|a| a.principal.strip_prefix("User:"))
        .filter(|u| *u != "*")
        .map(String::from)
        .collect();
    let users: Vec<String> = users.into_iter().collect();
    let unknown = admin::admin(to, "target")
        .ok()
        .and_then(|a| acls::without_scram(&a, &users, timeout))
        .unwrap_or_default();
    Ok(AclPlan {
        missing,
        left_out_writes,
        prefixed,
        unknown_principals: unknown.into_iter().map(|u| format!("User:{u}")).collect(),
    })
}

/// Why a cluster's ACLs could not be read: what to fix (exit 2), or a failure (exit 1).
fn refused(from: &ClusterSpec, to: &ClusterSpec, source: bool, f: &Failure) -> Error {
    let (spec, side) = match source {
        true => (from, "source"),
        false => (to, "target"),
    };
    match f.code {
        E::RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED => {
            let need = Need {
                source,
                resource: Resource::Cluster,
                op: Op::Describe,
            };
            let why = access::refusal(from, to, &[&need]).unwrap_or_default();
            Error::usage(format!("--sync-acls cannot read ACLs: {why}"))
        }
        E::RD_KAFKA_RESP_ERR_SECURITY_DISABLED => Error::usage(format!(
            "--sync-acls: the {side} cluster '{}' has no authorizer, so it has no ACLs to {}: leave --sync-acls out, or turn on its authorizer",
            spec.name,
            if source { "copy" } else { "hold copies" }
        )),
        _ => Error::failed(format!(
            "cannot read the ACLs of the {side} cluster '{}': {}",
            spec.name, f.message
        )),
    }
}

/// Creates the missing ACLs on the target; the notice saying what was created.
pub fn create(opts: &RunOptions, plan: &AclPlan) -> Result<Option<String>> {
    if plan.missing.is_empty() {
        return Ok(None);
    }
    let admin = admin::admin(&opts.to, "target")?;
    acls::create(&admin, &plan.missing, opts.timeout).map_err(|why| {
        Error::failed(format!(
            "--sync-acls cannot create an ACL on the target cluster '{}': {why}",
            opts.to.name
        ))
    })?;
    let list: Vec<String> = plan.missing.iter().map(Acl::describe).collect();
    Ok(Some(format!(
        "--sync-acls created {} ACL{} on the target cluster '{}': {}",
        list.len(),
        if list.len() == 1 { "" } else { "s" },
        opts.to.name,
        list.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl(kind: Kind, name: &str, principal: &str, op: Op, allow: bool) -> Acl {
        Acl {
            kind,
            name: name.into(),
            prefixed: false,
            principal: principal.into(),
            host: "*".into(),
            operation: op,
            allow,
        }
    }

    fn route(source: &str, target: &str) -> Route {
        Route {
            source: source.into(),
            target: target.into(),
            partitions: 1,
        }
    }

    #[test]
    fn issue_19_acls_follow_the_rename_without_write_and_with_all_as_read() {
        let t = Kind::Topic;
        let source = vec![
            acl(t, "orders", "User:reader", Op::Read, true),
            acl(t, "orders", "User:writer", Op::Write, true),
            acl(t, "orders", "User:owner", Op::All, true),
            acl(t, "orders", "User:banned", Op::Write, false),
            acl(t, "orders", "User:banned", Op::All, false),
            acl(t, "other", "User:reader", Op::Read, true),
            acl(Kind::Group, "app", "User:reader", Op::Read, true),
            Acl {
                prefixed: true,
                ..acl(t, "ord", "User:reader", Op::Describe, true)
            },
        ];
        let routes = [route("orders", "dr.orders")];
        let (want, writes, prefixed) = wanted(&source, &routes, None);
        assert_eq!(
            want,
            vec![
                acl(t, "dr.orders", "User:banned", Op::All, false),
                acl(t, "dr.orders", "User:banned", Op::Write, false),
                acl(t, "dr.orders", "User:owner", Op::Read, true),
                acl(t, "dr.orders", "User:reader", Op::Read, true),
            ]
        );
        assert_eq!(
            writes,
            vec![acl(t, "orders", "User:writer", Op::Write, true)]
        );
        assert_eq!(prefixed.len(), 1);
        // Groups only when named, under their own name.
        let groups = TopicSelection::parse("app").unwrap();
        let (want, _, _) = wanted(&source, &routes, Some(&groups));
        assert!(want.contains(&acl(Kind::Group, "app", "User:reader", Op::Read, true)));
        // What the target has already is not missing.
        let have = [acl(t, "dr.orders", "User:reader", Op::Read, true)];
        let gone = missing(want, &have);
        assert_eq!(gone.len(), 4);
        assert!(!gone.contains(&have[0]));
    }
}
