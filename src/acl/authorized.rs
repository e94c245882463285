//! What a broker says the run's principal may do: DescribeConsumerGroups, DescribeTopics and
//! DescribeCluster with authorised operations, through librdkafka's C API (rust-rdkafka 0.39
//! has none of the three). Used by [`super::access`].

use std::collections::{BTreeSet, HashMap};
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::time::{Duration, Instant};

use rdkafka_sys as sys;

use crate::kafka::admin::{groups, text, Native, Request};
use crate::topics::admin::Admin;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    All,
    Read,
    Write,
    Create,
    Delete,
    Alter,
    Describe,
    ClusterAction,
    DescribeConfigs,
    AlterConfigs,
    IdempotentWrite,
}

impl Op {
    /// As `kafka-acls --operation` spells it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Op::All => "All",
            Op::Read => "Read",
            Op::Write => "Write",
            Op::Create => "Create",
            Op::Delete => "Delete",
            Op::Alter => "Alter",
            Op::Describe => "Describe",
            Op::ClusterAction => "ClusterAction",
            Op::DescribeConfigs => "DescribeConfigs",
            Op::AlterConfigs => "AlterConfigs",
            Op::IdempotentWrite => "IdempotentWrite",
        }
    }

    const SYS: [(Op, sys::rd_kafka_AclOperation_t); 11] = {
        use sys::rd_kafka_AclOperation_t as A;
        [
            (Op::All, A::RD_KAFKA_ACL_OPERATION_ALL),
            (Op::Read, A::RD_KAFKA_ACL_OPERATION_READ),
            (Op::Write, A::RD_KAFKA_ACL_OPERATION_WRITE),
            (Op::Create, A::RD_KAFKA_ACL_OPERATION_CREATE),
            (Op::Delete, A::RD_KAFKA_ACL_OPERATION_DELETE),
            (Op::Alter, A::RD_KAFKA_ACL_OPERATION_ALTER),
            (Op::Describe, A::RD_KAFKA_ACL_OPERATION_DESCRIBE),
            (Op::ClusterAction, A::RD_KAFKA_ACL_OPERATION_CLUSTER_ACTION),
            (
                Op::DescribeConfigs,
                A::RD_KAFKA_ACL_OPERATION_DESCRIBE_CONFIGS,
            ),
            (Op::AlterConfigs, A::RD_KAFKA_ACL_OPERATION_ALTER_CONFIGS),
            (
                Op::IdempotentWrite,
                A::RD_KAFKA_ACL_OPERATION_IDEMPOTENT_WRITE,
            ),
        ]
    };

    pub(super) fn from_sys(op: sys::rd_kafka_AclOperation_t) -> Option<Op> {
        Op::SYS.iter().find(|(_, s)| *s == op).map(|(o, _)| *o)
    }

    pub(super) fn to_sys(self) -> sys::rd_kafka_AclOperation_t {
        Op::SYS.iter().find(|(o, _)| *o == self).map_or(
            sys::rd_kafka_AclOperation_t::RD_KAFKA_ACL_OPERATION_UNKNOWN,
            |(_, s)| *s,
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    Topic(String),
    Group(String),
    Cluster,
}

/// What a broker said the principal may do, per resource; a resource it said nothing about
/// is not in the map (not checked).
pub type Granted = HashMap<Resource, BTreeSet<Op>>;

/// Asks one cluster what the principal may do on `group`, `topics` and the cluster itself.
/// What the broker does not answer is left out (not checked).
pub fn granted(admin: &Admin, topics: &[String], group: &str, timeout: Duration) -> Granted {
    let mut out = Granted::new();
    let Ok(request) = Request::new(admin.inner().native_ptr(), timeout) else {
        return out;
    };
    let Ok(group) = CString::new(group) else {
        return out;
    };
    let answer = describe_group_patiently(&request, &group, timeout);
    let said = answer.broker_said();
    if let Some(ops) = answer.ops {
        out.insert(Resource::Group(group.to_string_lossy().into_owned()), ops);
    }
    // A broker that says nothing of the group, not even a Kafka error code (librdkafka's mock
    // cluster, which would also leave the other requests waiting for a controller), is not
    // checked. A group that does not exist yet (a first run) is answered with
    // GROUP_ID_NOT_FOUND and no operations, by a broker that checks the rest.
    if !said {
        return out;
    }
    if !topics.is_empty() {
        out.extend(describe_topics(&request, topics));
    }
    let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBECLUSTER;
    // SAFETY: the call starts one DescribeCluster on the options and queue given.
    let answer =
        unsafe { request.answer(op, |o, q| sys::rd_kafka_DescribeCluster(request.rk(), o, q)) };
    match answer {
        Ok(event) => {
            // SAFETY: `event` is live; the result and its operations live as long as it does.
            let ops = unsafe {
                let result = sys::rd_kafka_event_DescribeCluster_result(event.ptr());
                let mut cnt = 0usize;
                let ops =
                    sys::rd_kafka_DescribeCluster_result_authorized_operations(result, &mut cnt);
                operations(ops, cnt, std::ptr::null())
            };
            if let Some(ops) = ops {
                out.insert(Resource::Cluster, ops);
            }
        }
        // Not even allowed to describe the cluster: nothing is allowed on it.
        Err(f)
            if f.code
                == sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED =>
        {
            out.insert(Resource::Cluster, BTreeSet::new());
        }
        Err(_) => {}
    }
    out
}

/// [`describe_group`] asked again, until `timeout`, while the group's coordinator is loading
/// (a broker just started or moved the group). Not after a request that timed out: a
/// coordinator request of librdkafka 2.12 that outlives its admin request can abort the
/// process (librdkafka#4605, #5397), so the coordinator is found first by a consumer
/// ([`crate::kafka::find_group_coordinator`], see there why).
fn describe_group_patiently(request: &Request, group: &CStr, timeout: Duration) -> GroupAnswer {
    use sys::rd_kafka_resp_err_t as E;
    let deadline = Instant::now() + timeout;
    loop {
        let answer = describe_group(request, group);
        let loading = answer.code.is_some_and(|c| {
            matches!(
                c,
                E::RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS
                    | E::RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE
                    | E::RD_KAFKA_RESP_ERR_NOT_COORDINATOR
            )
        });
        if !loading || Instant::now() >= deadline {
            return answer;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// DescribeTopics for `topics`, with their authorised operations: those a broker said.
fn describe_topics(request: &Request, topics: &[String]) -> Granted {
    let mut out = Granted::new();
    let names: Vec<CString> = topics
        .iter()
        .filter_map(|t| CString::new(t.as_str()).ok())
        .collect();
    let mut ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    // SAFETY: the names outlive the call, which copies them; the collection is ours.
    let collection = unsafe {
        Native::from_ptr(sys::rd_kafka_TopicCollection_of_topic_names(
            ptrs.as_mut_ptr(),
            ptrs.len(),
        ))
    };
    let Some(collection) = collection else {
        return out;
    };
    let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBETOPICS;
    // SAFETY: the call starts one DescribeTopics on the options and queue given; the
    // collection is live and copied by the call.
    let answer = unsafe {
        request.answer(op, |o, q| {
            sys::rd_kafka_DescribeTopics(request.rk(), collection.ptr(), o, q)
        })
    };
    let Ok(event) = answer else {
        return out;
    };
    let mut n = 0usize;
    // SAFETY: `event` is live; the result and its descriptions live as long as it does.
    let descs = unsafe {
        let result = sys::rd_kafka_event_DescribeTopics_result(event.ptr());
        sys::rd_kafka_DescribeTopics_result_topics(result, &mut n)
    };
    for i in 0..n {
        // SAFETY: `descs` holds `n` descriptions, live while `event` is; the name is copied
        // and the operations read while they are.
        let (name, ops) = unsafe {
            let d = *descs.add(i);
            let mut cnt = 0usize;
            let ops = sys::rd_kafka_TopicDescription_authorized_operations(d, &mut cnt);
            let error = sys::rd_kafka_TopicDescription_error(d);
            (
                text(sys::rd_kafka_TopicDescription_name(d)),
                operations(ops, cnt, error),
            )
        };
        if let Some(ops) = ops {
            out.insert(Resource::Topic(name), ops);
        }
    }
    out
}

/// What a broker said of one group: its operations (empty when the principal may not
/// describe it), and the error code of its description, if any.
struct GroupAnswer {
    ops: Option<BTreeSet<Op>>,
    code: Option<sys::rd_kafka_resp_err_t>,
}

impl GroupAnswer {
    /// Whether a broker answered for the group: with operations, or with a Kafka error code
    /// (librdkafka's own errors are negative).
    fn broker_said(&self) -> bool {
        self.ops.is_some() || self.code.is_some_and(|c| (c as i32) > 0)
    }
}

/// DescribeConsumerGroups for `group`, with its authorised operations.
fn describe_group(request: &Request, group: &CStr) -> GroupAnswer {
    // SAFETY: the description's error and operations live as long as the answer, and are
    // read into owned values here.
    let read = unsafe {
        groups::describe(request, group, |d| {
            let mut cnt = 0usize;
            let ops = sys::rd_kafka_ConsumerGroupDescription_authorized_operations(d, &mut cnt);
            let error = sys::rd_kafka_ConsumerGroupDescription_error(d);
            GroupAnswer {
                code: (!error.is_null()).then(|| sys::rd_kafka_error_code(error)),
                ops: operations(ops, cnt, error),
            }
        })
    };
    match read {
        Ok(Some(answer)) => answer,
        Ok(None) => GroupAnswer {
            ops: None,
            code: None,
        },
        // A request that failed as a whole (timed out): its code says whether to ask again.
        Err(f) => GroupAnswer {
            ops: None,
            code: Some(f.code),
        },
    }
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
