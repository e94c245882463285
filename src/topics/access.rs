//! The permissions a run needs, checked before anything is read or written: each broker says
//! which operations the run's principal may perform (DescribeTopics, DescribeConsumerGroups and
//! DescribeCluster with authorised operations), and a missing one is refused as the
//! `kafka-acls` line that grants it. A broker that does not say (librdkafka's mock cluster, an
//! old broker) is not checked here; its refusals come from the copy itself.

use std::collections::{BTreeSet, HashMap};
use std::ffi::{CStr, CString};
use std::time::Duration;

use rdkafka_sys as sys;

use super::admin::Admin;
use crate::options::{ClusterSpec, Guarantee};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Read,
    Write,
    Create,
    Describe,
    DescribeConfigs,
}

impl Op {
    /// As `kafka-acls --operation` spells it.
    fn name(self) -> &'static str {
        match self {
            Op::Read => "Read",
            Op::Write => "Write",
            Op::Create => "Create",
            Op::Describe => "Describe",
            Op::DescribeConfigs => "DescribeConfigs",
        }
    }

    fn from_sys(op: sys::rd_kafka_AclOperation_t) -> Option<Op> {
        use sys::rd_kafka_AclOperation_t as A;
        Some(match op {
            A::RD_KAFKA_ACL_OPERATION_READ => Op::Read,
            A::RD_KAFKA_ACL_OPERATION_WRITE => Op::Write,
            A::RD_KAFKA_ACL_OPERATION_CREATE => Op::Create,
            A::RD_KAFKA_ACL_OPERATION_DESCRIBE => Op::Describe,
            A::RD_KAFKA_ACL_OPERATION_DESCRIBE_CONFIGS => Op::DescribeConfigs,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    Topic(String),
    Group(String),
    Cluster,
}

/// One operation on one resource of one side.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Need {
    pub source: bool,
    pub resource: Resource,
    pub op: Op,
}

/// What a broker said the principal may do, per resource; a resource it said nothing about
/// is not in the map (not checked).
pub type Granted = HashMap<Resource, BTreeSet<Op>>;

/// What a run needs: the source topics read (and described), the group its positions live
/// in, the target topics written (read too under exactly-once, which resumes from them),
/// created with `--create-topics`, and topic configs described where they are compared
/// (`--sync-configs`, or creating). `targets` pairs each target topic with whether the run
/// creates it.
pub fn needs(
    guarantee: Guarantee,
    group: &str,
    sync_configs: bool,
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

/// Asks one cluster what the principal may do on `group`, `topics` and the cluster itself.
/// What the broker does not answer is left out (not checked).
pub fn granted(admin: &Admin, topics: &[String], group: &str, timeout: Duration) -> Granted {
    let mut out = Granted::new();
    let rk = admin.inner().native_ptr();
    let request = Request::new(rk, timeout);
    let Ok(group) = CString::new(group) else {
        return out;
    };
    let names: Vec<CString> = topics
        .iter()
        .filter_map(|t| CString::new(t.as_str()).ok())
        .collect();
    // SAFETY: `rk` is the admin client's live handle; the names outlive the calls that read
    // them, and results are read before the `Event` that owns them is dropped.
    unsafe {
        let mut groups = [group.as_ptr()];
        let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS;
        if let Some(event) = request.send(op, |o, q| {
            sys::rd_kafka_DescribeConsumerGroups(rk, groups.as_mut_ptr(), 1, o, q)
        }) {
            let result = sys::rd_kafka_event_DescribeConsumerGroups_result(event.0);
            let mut n = 0usize;
            let descs = sys::rd_kafka_DescribeConsumerGroups_result_groups(result, &mut n);
            for i in 0..n {
                let d = *descs.add(i);
                let name = CStr::from_ptr(sys::rd_kafka_ConsumerGroupDescription_group_id(d));
                let mut cnt = 0usize;
                let ops = sys::rd_kafka_ConsumerGroupDescription_authorized_operations(d, &mut cnt);
                let error = sys::rd_kafka_ConsumerGroupDescription_error(d);
                if let Some(ops) = operations(ops, cnt, error) {
                    out.insert(Resource::Group(name.to_string_lossy().into_owned()), ops);
                }
            }
        }
        // A broker that says nothing of a group's operations (librdkafka's mock cluster, which
        // would also leave the other requests waiting for a controller) is not checked.
        if out.is_empty() {
            return out;
        }
        if !names.is_empty() {
            let mut ptrs: Vec<*const std::os::raw::c_char> =
                names.iter().map(|n| n.as_ptr()).collect();
            let collection =
                sys::rd_kafka_TopicCollection_of_topic_names(ptrs.as_mut_ptr(), ptrs.len());
            let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBETOPICS;
            let event = request.send(op, |o, q| {
                sys::rd_kafka_DescribeTopics(rk, collection, o, q)
            });
            sys::rd_kafka_TopicCollection_destroy(collection);
            if let Some(event) = event {
                let result = sys::rd_kafka_event_DescribeTopics_result(event.0);
                let mut n = 0usize;
                let descs = sys::rd_kafka_DescribeTopics_result_topics(result, &mut n);
                for i in 0..n {
                    let d = *descs.add(i);
                    let name = CStr::from_ptr(sys::rd_kafka_TopicDescription_name(d));
                    let mut cnt = 0usize;
                    let ops = sys::rd_kafka_TopicDescription_authorized_operations(d, &mut cnt);
                    let error = sys::rd_kafka_TopicDescription_error(d);
                    if let Some(ops) = operations(ops, cnt, error) {
                        out.insert(Resource::Topic(name.to_string_lossy().into_owned()), ops);
                    }
                }
            }
        }
        let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBECLUSTER;
        if let Some(event) = request.send(op, |o, q| sys::rd_kafka_DescribeCluster(rk, o, q)) {
            let result = sys::rd_kafka_event_DescribeCluster_result(event.0);
            let mut cnt = 0usize;
            let ops = sys::rd_kafka_DescribeCluster_result_authorized_operations(result, &mut cnt);
            if let Some(ops) = operations(ops, cnt, std::ptr::null()) {
                out.insert(Resource::Cluster, ops);
            }
        }
    }
    out
}

/// The operations of one answer: none at all when the broker refused to describe the
/// resource, unknown (`None`) when it did not say or failed otherwise.
///
/// # Safety
/// `ops` points at `cnt` operations (or is null), `error` is null or a live error.
unsafe fn operations(
    ops: *const sys::rd_kafka_AclOperation_t,
    cnt: usize,
    error: *const sys::rd_kafka_error_t,
) -> Option<BTreeSet<Op>> {
    use sys::rd_kafka_resp_err_t as E;
    if !error.is_null() {
        return match sys::rd_kafka_error_code(error) {
            E::RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED
            | E::RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED => Some(BTreeSet::new()),
            _ => None,
        };
    }
    if ops.is_null() {
        return None;
    }
    Some(
        std::slice::from_raw_parts(ops, cnt)
            .iter()
            .filter_map(|op| Op::from_sys(*op))
            .collect(),
    )
}

/// One admin request at a time on a queue of its own, with authorised operations asked for.
struct Request {
    rk: *mut sys::rd_kafka_t,
    queue: *mut sys::rd_kafka_queue_t,
    timeout_ms: i32,
}

/// An answer; destroyed (with every result it owns) on drop.
struct Event(*mut sys::rd_kafka_event_t);

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: the event came from rd_kafka_queue_poll and is destroyed once.
        unsafe { sys::rd_kafka_event_destroy(self.0) }
    }
}

impl Request {
    fn new(rk: *mut sys::rd_kafka_t, timeout: Duration) -> Request {
        // SAFETY: `rk` is a live client handle.
        let queue = unsafe { sys::rd_kafka_queue_new(rk) };
        let timeout_ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        Request {
            rk,
            queue,
            timeout_ms,
        }
    }

    /// Sends with `call(options, queue)` and waits for its answer; `None` when there is none
    /// in time or the request failed as a whole (an API the broker does not have).
    ///
    /// # Safety
    /// `call` must start one admin request of `op` on the queue it is given.
    unsafe fn send(
        &self,
        op: sys::rd_kafka_admin_op_t,
        call: impl FnOnce(*mut sys::rd_kafka_AdminOptions_t, *mut sys::rd_kafka_queue_t),
    ) -> Option<Event> {
        let options = sys::rd_kafka_AdminOptions_new(self.rk, op);
        let mut errstr = [0 as std::os::raw::c_char; 256];
        sys::rd_kafka_AdminOptions_set_request_timeout(
            options,
            self.timeout_ms,
            errstr.as_mut_ptr(),
            errstr.len(),
        );
        let err = sys::rd_kafka_AdminOptions_set_include_authorized_operations(options, 1);
        if !err.is_null() {
            sys::rd_kafka_error_destroy(err);
        }
        call(options, self.queue);
        sys::rd_kafka_AdminOptions_destroy(options);
        let event = sys::rd_kafka_queue_poll(self.queue, self.timeout_ms.saturating_add(1000));
        if event.is_null() {
            return None;
        }
        let event = Event(event);
        (sys::rd_kafka_event_error(event.0) == sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR)
            .then_some(event)
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        // SAFETY: the queue was created in `new` and is destroyed once.
        unsafe { sys::rd_kafka_queue_destroy(self.queue) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let got = needs(Guarantee::ExactlyOnce, "g", false, &["s".into()], &targets);
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
            &["s".into()],
            &[("t".into(), false)],
        );
        assert!(!got.iter().any(|n| n.op == Op::DescribeConfigs));
        assert!(!got.iter().any(|n| !n.source && n.op == Op::Read));
    }

    #[test]
    fn issue_19_only_what_a_broker_denied_is_missing() {
        let targets = [("t".into(), false), ("new".into(), true)];
        let all = needs(Guarantee::AtLeastOnce, "g", false, &["s".into()], &targets);
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
