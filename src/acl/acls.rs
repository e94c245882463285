//! ACLs as a broker keeps them, read and written through librdkafka's C API (DescribeAcls,
//! CreateAcls and DescribeUserScramCredentials: rust-rdkafka 0.39 wraps none of them). Used
//! by [`super::sync`].

use std::collections::BTreeSet;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::time::Duration;

use rdkafka_sys as sys;
use serde::Serialize;

use super::authorized::{Failure, Op, Request};
use crate::topics::admin::Admin;

/// The resources whose ACLs `--sync-acls` copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Topic,
    Group,
}

impl Kind {
    fn to_sys(self) -> sys::rd_kafka_ResourceType_t {
        match self {
            Kind::Topic => sys::rd_kafka_ResourceType_t::RD_KAFKA_RESOURCE_TOPIC,
            Kind::Group => sys::rd_kafka_ResourceType_t::RD_KAFKA_RESOURCE_GROUP,
        }
    }

    /// As `kafka-acls` spells the resource flag.
    pub fn flag(self) -> &'static str {
        match self {
            Kind::Topic => "topic",
            Kind::Group => "group",
        }
    }
}

/// One ACL binding: who may (or may not) do what on which resource.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Acl {
    pub kind: Kind,
    pub name: String,
    /// A PREFIXED pattern (`name` is a prefix); else LITERAL.
    pub prefixed: bool,
    pub principal: String,
    pub host: String,
    #[serde(serialize_with = "op_name")]
    pub operation: Op,
    pub allow: bool,
}

fn op_name<S: serde::Serializer>(op: &Op, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(op.name())
}

impl Acl {
    /// `Allow 'User:alice' Read on topic 'orders' from host '*'`.
    pub fn describe(&self) -> String {
        format!(
            "{} '{}' {} on {}{} '{}' from host '{}'",
            if self.allow { "Allow" } else { "Deny" },
            self.principal,
            self.operation.name(),
            if self.prefixed { "prefixed " } else { "" },
            self.kind.flag(),
            self.name,
            self.host
        )
    }
}

/// Every TOPIC (and, with `groups`, GROUP) ACL of a cluster, whatever its pattern; other
/// resource types are never copied and not asked for.
pub fn describe(admin: &Admin, groups: bool, timeout: Duration) -> Result<Vec<Acl>, Failure> {
    let rk = admin.inner().native_ptr();
    let request = Request::new(rk, timeout);
    let mut out = Vec::new();
    let kinds: &[Kind] = if groups {
        &[Kind::Topic, Kind::Group]
    } else {
        &[Kind::Topic]
    };
    for kind in kinds {
        let mut errstr = [0 as c_char; 256];
        // SAFETY: `rk` is the admin client's live handle; null name, principal and host match
        // any; the filter is destroyed once, after the request that copied it was sent, and
        // the bindings are read before the `Event` that owns them is dropped.
        unsafe {
            let filter = sys::rd_kafka_AclBindingFilter_new(
                kind.to_sys(),
                std::ptr::null(),
                sys::rd_kafka_ResourcePatternType_t::RD_KAFKA_RESOURCE_PATTERN_ANY,
                std::ptr::null(),
                std::ptr::null(),
                sys::rd_kafka_AclOperation_t::RD_KAFKA_ACL_OPERATION_ANY,
                sys::rd_kafka_AclPermissionType_t::RD_KAFKA_ACL_PERMISSION_TYPE_ANY,
                errstr.as_mut_ptr(),
                errstr.len(),
            );
            if filter.is_null() {
                return Err(Failure {
                    code: sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__INVALID_ARG,
                    message: CStr::from_ptr(errstr.as_ptr()).to_string_lossy().into(),
                });
            }
            let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBEACLS;
            let answer = request.answer(op, |o, q| sys::rd_kafka_DescribeAcls(rk, filter, o, q));
            sys::rd_kafka_AclBinding_destroy(filter);
            let event = answer?;
            let result = sys::rd_kafka_event_DescribeAcls_result(event.0);
            let mut n = 0usize;
            let acls = sys::rd_kafka_DescribeAcls_result_acls(result, &mut n);
            for i in 0..n {
                if let Some(acl) = binding(*acls.add(i)) {
                    out.push(acl);
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// One binding of a DescribeAcls answer; `None` for a resource, pattern, operation or
/// permission that is never copied.
///
/// # Safety
/// `b` is a live binding.
unsafe fn binding(b: *const sys::rd_kafka_AclBinding_t) -> Option<Acl> {
    use sys::rd_kafka_AclPermissionType_t as P;
    use sys::rd_kafka_ResourcePatternType_t as Pattern;
    use sys::rd_kafka_ResourceType_t as R;
    let text = |p: *const c_char| match p.is_null() {
        true => String::new(),
        false => CStr::from_ptr(p).to_string_lossy().into_owned(),
    };
    let kind = match sys::rd_kafka_AclBinding_restype(b) {
        R::RD_KAFKA_RESOURCE_TOPIC => Kind::Topic,
        R::RD_KAFKA_RESOURCE_GROUP => Kind::Group,
        _ => return None,
    };
    let prefixed = match sys::rd_kafka_AclBinding_resource_pattern_type(b) {
        Pattern::RD_KAFKA_RESOURCE_PATTERN_LITERAL => false,
        Pattern::RD_KAFKA_RESOURCE_PATTERN_PREFIXED => true,
        _ => return None,
    };
    let allow = match sys::rd_kafka_AclBinding_permission_type(b) {
        P::RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW => true,
        P::RD_KAFKA_ACL_PERMISSION_TYPE_DENY => false,
        _ => return None,
    };
    Some(Acl {
        kind,
        name: text(sys::rd_kafka_AclBinding_name(b)),
        prefixed,
        principal: text(sys::rd_kafka_AclBinding_principal(b)),
        host: text(sys::rd_kafka_AclBinding_host(b)),
        operation: Op::from_sys(sys::rd_kafka_AclBinding_operation(b))?,
        allow,
    })
}

/// Creates `acls` (an ACL the cluster has already is no error: creating is idempotent).
/// The first refusal, as `(the ACL, why)`, or the request's failure.
pub fn create(admin: &Admin, acls: &[Acl], timeout: Duration) -> Result<(), String> {
    if acls.is_empty() {
        return Ok(());
    }
    let rk = admin.inner().native_ptr();
    let request = Request::new(rk, timeout);
    let texts: Vec<[CString; 3]> = acls
        .iter()
        .map(|a| {
            [&a.name, &a.principal, &a.host].map(|s| CString::new(s.as_str()).unwrap_or_default())
        })
        .collect();
    let mut errstr = [0 as c_char; 256];
    let mut bindings: Vec<*mut sys::rd_kafka_AclBinding_t> = Vec::with_capacity(acls.len());
    // SAFETY: `rk` is the admin client's live handle; the strings outlive the calls that copy
    // them; each binding made here is destroyed once, after the request copied them; results
    // are read before the `Event` that owns them is dropped.
    unsafe {
        for (a, [name, principal, host]) in acls.iter().zip(&texts) {
            let b = sys::rd_kafka_AclBinding_new(
                a.kind.to_sys(),
                name.as_ptr(),
                match a.prefixed {
                    true => sys::rd_kafka_ResourcePatternType_t::RD_KAFKA_RESOURCE_PATTERN_PREFIXED,
                    false => sys::rd_kafka_ResourcePatternType_t::RD_KAFKA_RESOURCE_PATTERN_LITERAL,
                },
                principal.as_ptr(),
                host.as_ptr(),
                a.operation.to_sys(),
                match a.allow {
                    true => sys::rd_kafka_AclPermissionType_t::RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW,
                    false => sys::rd_kafka_AclPermissionType_t::RD_KAFKA_ACL_PERMISSION_TYPE_DENY,
                },
                errstr.as_mut_ptr(),
                errstr.len(),
            );
            if b.is_null() {
                sys::rd_kafka_AclBinding_destroy_array(bindings.as_mut_ptr(), bindings.len());
                let why = CStr::from_ptr(errstr.as_ptr()).to_string_lossy();
                return Err(format!("{}: {why}", a.describe()));
            }
            bindings.push(b);
        }
        let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_CREATEACLS;
        let answer = request.answer(op, |o, q| {
            sys::rd_kafka_CreateAcls(rk, bindings.as_mut_ptr(), bindings.len(), o, q)
        });
        sys::rd_kafka_AclBinding_destroy_array(bindings.as_mut_ptr(), bindings.len());
        let event = answer.map_err(|f| f.message)?;
        let result = sys::rd_kafka_event_CreateAcls_result(event.0);
        let mut n = 0usize;
        let results = sys::rd_kafka_CreateAcls_result_acls(result, &mut n);
        // The results come in the order of the request.
        for (i, a) in acls.iter().enumerate().take(n) {
            let error = sys::rd_kafka_acl_result_error(*results.add(i));
            if !error.is_null() {
                let why = CStr::from_ptr(sys::rd_kafka_error_string(error)).to_string_lossy();
                return Err(format!("{}: {why}", a.describe()));
            }
        }
    }
    Ok(())
}

/// Of `users`, those the cluster holds no SCRAM credential for; `None` when it would not say
/// (no SCRAM, no permission to describe the cluster, an old broker).
pub fn without_scram(
    admin: &Admin,
    users: &[String],
    timeout: Duration,
) -> Option<BTreeSet<String>> {
    if users.is_empty() {
        return Some(BTreeSet::new());
    }
    let rk = admin.inner().native_ptr();
    let request = Request::new(rk, timeout);
    let names: Vec<CString> = users
        .iter()
        .filter_map(|u| CString::new(u.as_str()).ok())
        .collect();
    let mut ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let mut out = BTreeSet::new();
    // SAFETY: `rk` is the admin client's live handle; the names outlive the call that copies
    // them; descriptions are read before the `Event` that owns them is dropped.
    unsafe {
        let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBEUSERSCRAMCREDENTIALS;
        let event = request
            .answer(op, |o, q| {
                sys::rd_kafka_DescribeUserScramCredentials(rk, ptrs.as_mut_ptr(), ptrs.len(), o, q)
            })
            .ok()?;
        let result = sys::rd_kafka_event_DescribeUserScramCredentials_result(event.0);
        let mut n = 0usize;
        let descs = sys::rd_kafka_DescribeUserScramCredentials_result_descriptions(result, &mut n);
        for i in 0..n {
            let d = *descs.add(i);
            let user = CStr::from_ptr(sys::rd_kafka_UserScramCredentialsDescription_user(d));
            let error = sys::rd_kafka_UserScramCredentialsDescription_error(d);
            let code = match error.is_null() {
                true => sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR,
                false => sys::rd_kafka_error_code(error),
            };
            match code {
                sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR
                    if sys::rd_kafka_UserScramCredentialsDescription_scramcredentialinfo_count(
                        d,
                    ) > 0 => {}
                sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR
                | sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_RESOURCE_NOT_FOUND => {
                    out.insert(user.to_string_lossy().into_owned());
                }
                // Not allowed to see them, or another failure: not known either way.
                _ => return None,
            }
        }
    }
    Some(out)
}
