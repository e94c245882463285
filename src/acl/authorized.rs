//! What a broker says the run's principal may do: DescribeConsumerGroups, DescribeTopics and
//! DescribeCluster with authorised operations, through librdkafka's C API (rust-rdkafka 0.39
//! has none of the three). Used by [`super::access`].

use std::collections::{BTreeSet, HashMap};
use std::ffi::{CStr, CString};
use std::time::{Duration, Instant};

use rdkafka_sys as sys;

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
    let rk = admin.inner().native_ptr();
    let request = Request::new(rk, timeout);
    let Ok(group) = CString::new(group) else {
        return out;
    };
    let names: Vec<CString> = topics
        .iter()
        .filter_map(|t| CString::new(t.as_str()).ok())
        .collect();
    // A group coordinator that is still loading (a broker just started or moved the group)
    // is asked again until the timeout.
    let deadline = Instant::now() + timeout;
    let answer = loop {
        let answer = describe_group(&request, &group);
        let loading = answer.code.is_some_and(|c| {
            use sys::rd_kafka_resp_err_t as E;
            matches!(
                c,
                E::RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS
                    | E::RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE
                    | E::RD_KAFKA_RESP_ERR_NOT_COORDINATOR
            )
        });
        if !loading || Instant::now() >= deadline {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
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
    // SAFETY: `rk` is the admin client's live handle; the names outlive the calls that read
    // them, and results are read before the `Event` that owns them is dropped.
    unsafe {
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
        match request.answer(op, |o, q| sys::rd_kafka_DescribeCluster(rk, o, q)) {
            Ok(event) => {
                let result = sys::rd_kafka_event_DescribeCluster_result(event.0);
                let mut cnt = 0usize;
                let ops =
                    sys::rd_kafka_DescribeCluster_result_authorized_operations(result, &mut cnt);
                if let Some(ops) = operations(ops, cnt, std::ptr::null()) {
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
    let mut answer = GroupAnswer {
        ops: None,
        code: None,
    };
    let rk = request.rk;
    // SAFETY: `rk` is the admin client's live handle; `group` outlives the call that reads it,
    // and the results are read before the `Event` that owns them is dropped.
    unsafe {
        let mut groups = [group.as_ptr()];
        let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS;
        let Some(event) = request.send(op, |o, q| {
            sys::rd_kafka_DescribeConsumerGroups(rk, groups.as_mut_ptr(), 1, o, q)
        }) else {
            return answer;
        };
        let result = sys::rd_kafka_event_DescribeConsumerGroups_result(event.0);
        let mut n = 0usize;
        let descs = sys::rd_kafka_DescribeConsumerGroups_result_groups(result, &mut n);
        if n == 0 {
            return answer;
        }
        let d = *descs;
        let mut cnt = 0usize;
        let ops = sys::rd_kafka_ConsumerGroupDescription_authorized_operations(d, &mut cnt);
        let error = sys::rd_kafka_ConsumerGroupDescription_error(d);
        answer.code = (!error.is_null()).then(|| sys::rd_kafka_error_code(error));
        answer.ops = operations(ops, cnt, error);
    }
    answer
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

/// One admin request at a time on a queue of its own, with authorised operations asked for
/// (where the request has them).
pub(super) struct Request {
    rk: *mut sys::rd_kafka_t,
    queue: *mut sys::rd_kafka_queue_t,
    timeout_ms: i32,
}

/// An answer; destroyed (with every result it owns) on drop.
pub(super) struct Event(pub(super) *mut sys::rd_kafka_event_t);

/// Why a request as a whole failed: librdkafka's code and message.
#[derive(Debug)]
pub(super) struct Failure {
    pub code: sys::rd_kafka_resp_err_t,
    pub message: String,
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: the event came from rd_kafka_queue_poll and is destroyed once.
        unsafe { sys::rd_kafka_event_destroy(self.0) }
    }
}

impl Request {
    pub(super) fn new(rk: *mut sys::rd_kafka_t, timeout: Duration) -> Request {
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
        self.answer(op, call).ok()
    }

    /// As [`Request::send`], with why there is no answer.
    ///
    /// # Safety
    /// `call` must start one admin request of `op` on the queue it is given.
    pub(super) unsafe fn answer(
        &self,
        op: sys::rd_kafka_admin_op_t,
        call: impl FnOnce(*mut sys::rd_kafka_AdminOptions_t, *mut sys::rd_kafka_queue_t),
    ) -> Result<Event, Failure> {
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
            return Err(Failure {
                code: sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__TIMED_OUT,
                message: format!("no answer within {} ms", self.timeout_ms),
            });
        }
        let event = Event(event);
        let code = sys::rd_kafka_event_error(event.0);
        if code == sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            return Ok(event);
        }
        let text = sys::rd_kafka_event_error_string(event.0);
        let message = match text.is_null() {
            true => format!("{code:?}"),
            false => CStr::from_ptr(text).to_string_lossy().into_owned(),
        };
        Err(Failure { code, message })
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        // SAFETY: the queue was created in `new` and is destroyed once.
        unsafe { sys::rd_kafka_queue_destroy(self.queue) }
    }
}
