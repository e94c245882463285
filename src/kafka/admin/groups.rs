//! DescribeConsumerGroups for one group: librdkafka asks Kafka's ConsumerGroupDescribe for a
//! KIP-848 group and DescribeGroups for a classic one (the classic request alone, rust-rdkafka's
//! group list, shows no KIP-848 group at all: a running copy's group looked unknown). The
//! permission check reads the answer's authorised operations, `status` and `groups` its state
//! and live members.

use std::ffi::{CStr, CString};
use std::time::Duration;

use rdkafka_sys as sys;
use serde::Serialize;

use super::{text, Failure, Request};

/// One group's description, borrowed from the answer that owns it.
pub(crate) type Description = *const sys::rd_kafka_ConsumerGroupDescription_t;

/// Describes `group` and gives its description to `read` while the answer lives; `Ok(None)`
/// when the answer describes no group, `Err` with librdkafka's code when the request failed as
/// a whole (the permission check asks again after a timeout).
///
/// # Safety
/// `read` must not keep the description or anything read from it past its return.
pub(crate) unsafe fn describe<T>(
    request: &Request,
    group: &CStr,
    read: impl FnOnce(Description) -> T,
) -> Result<Option<T>, Failure> {
    let mut groups = [group.as_ptr()];
    let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS;
    // SAFETY: the call starts one DescribeConsumerGroups on the options and queue given;
    // `group` outlives it, and it copies the name.
    let event = unsafe {
        request.answer(op, |o, q| {
            sys::rd_kafka_DescribeConsumerGroups(request.rk(), groups.as_mut_ptr(), 1, o, q)
        })
    }?;
    // SAFETY: `event` is live; the result and its descriptions live as long as it does, and
    // `read` keeps nothing of them.
    unsafe {
        let result = sys::rd_kafka_event_DescribeConsumerGroups_result(event.ptr());
        let mut n = 0usize;
        let descs = sys::rd_kafka_DescribeConsumerGroups_result_groups(result, &mut n);
        if n == 0 || descs.is_null() {
            return Ok(None);
        }
        Ok(Some(read(*descs)))
    }
}

/// A consumer group as its coordinator describes it: its state and live members.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GroupView {
    pub state: String,
    pub members: Vec<Member>,
}

/// One live member of a group: who it says it is and where it connects from.
#[derive(Debug, Clone, Serialize)]
pub struct Member {
    pub client_id: String,
    pub host: String,
    pub member_id: String,
}

impl GroupView {
    /// Whether the group has live members. tansu shows a group with a live member as Stable
    /// with no member listed.
    pub fn busy(&self) -> bool {
        !self.members.is_empty()
            || matches!(
                self.state.as_str(),
                "Stable" | "PreparingRebalance" | "CompletingRebalance" | "AwaitingSync"
            )
    }
}

/// The state and members of `group` on the cluster of `rk` (any live client's handle);
/// `Ok(None)` when the cluster does not know the group, `Err` with the broker's or librdkafka's
/// reason otherwise.
pub(crate) fn view(
    rk: *mut sys::rd_kafka_t,
    group: &str,
    timeout: Duration,
) -> Result<Option<GroupView>, String> {
    let request = Request::new(rk, timeout).map_err(|f| f.message)?;
    let group = CString::new(group).map_err(|e| e.to_string())?;
    // SAFETY: the closure copies what it reads into owned values.
    let described = unsafe {
        describe(&request, &group, |d| {
            let error = sys::rd_kafka_ConsumerGroupDescription_error(d);
            if !error.is_null() {
                let code = sys::rd_kafka_error_code(error);
                if code == sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND {
                    return Ok(None);
                }
                return Err(text(sys::rd_kafka_error_string(error)));
            }
            let state = sys::rd_kafka_ConsumerGroupDescription_state(d);
            let state = text(sys::rd_kafka_consumer_group_state_name(state));
            let members = (0..sys::rd_kafka_ConsumerGroupDescription_member_count(d))
                .map(|i| sys::rd_kafka_ConsumerGroupDescription_member(d, i))
                .filter(|m| !m.is_null())
                .map(|m| Member {
                    client_id: text(sys::rd_kafka_MemberDescription_client_id(m)),
                    // Kafka writes the address as Java's InetAddress does: "/127.0.0.1".
                    host: text(sys::rd_kafka_MemberDescription_host(m))
                        .trim_start_matches('/')
                        .to_string(),
                    member_id: text(sys::rd_kafka_MemberDescription_consumer_id(m)),
                })
                .collect();
            // Kafka describes a group it never heard of as Dead with no member.
            Ok((state != "Dead").then_some(GroupView { state, members }))
        })
    };
    match described {
        Ok(Some(view)) => view,
        Ok(None) => Err(format!(
            "no description of group '{}'",
            group.to_string_lossy()
        )),
        Err(f) => Err(f.message),
    }
}
