//! ACLs as a broker keeps them, read and written through librdkafka's C API (DescribeAcls,
//! CreateAcls and DescribeUserScramCredentials: rust-rdkafka 0.39 wraps none of them). Used
//! by [`super::sync`].

use std::collections::BTreeSet;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::time::Duration;

use rdkafka_sys as sys;
use serde::Serialize;

use super::authorized::Op;
use crate::kafka::admin::{text, Failure, Native, Request};
use crate::topics::admin::Admin;

type Binding = Native<sys::rd_kafka_AclBinding_t>;

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
    let request = Request::new(admin.inner().native_ptr(), timeout)?;
    let mut out = Vec::new();
    let kinds: &[Kind] = if groups {
        &[Kind::Topic, Kind::Group]
    } else {
        &[Kind::Topic]
    };
    for kind in kinds {
        let filter = any_of(*kind)?;
        let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBEACLS;
        // SAFETY: the call starts one DescribeAcls on the options and queue given; the filter
        // is live and copied by the call.
        let event = unsafe {
            request.answer(op, |o, q| {
                sys::rd_kafka_DescribeAcls(request.rk(), filter.ptr(), o, q)
            })
        }?;
        let mut n = 0usize;
        // SAFETY: `event` is live; the result and its bindings live as long as it does.
        let acls = unsafe {
            let result = sys::rd_kafka_event_DescribeAcls_result(event.ptr());
            sys::rd_kafka_DescribeAcls_result_acls(result, &mut n)
        };
        for i in 0..n {
            // SAFETY: `acls` holds `n` bindings, live while `event` is.
            if let Some(acl) = unsafe { binding(*acls.add(i)) } {
                out.push(acl);
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// A filter matching every ACL of `kind`: any name, pattern, principal, host, operation and
/// permission.
fn any_of(kind: Kind) -> Result<Binding, Failure> {
    let mut errstr = [0 as c_char; 256];
    // SAFETY: null name, principal and host match any; `errstr` is writable for the length
    // given; the filter is ours.
    let filter = unsafe {
        Native::from_ptr(sys::rd_kafka_AclBindingFilter_new(
            kind.to_sys(),
            std::ptr::null(),
            sys::rd_kafka_ResourcePatternType_t::RD_KAFKA_RESOURCE_PATTERN_ANY,
            std::ptr::null(),
            std::ptr::null(),
            sys::rd_kafka_AclOperation_t::RD_KAFKA_ACL_OPERATION_ANY,
            sys::rd_kafka_AclPermissionType_t::RD_KAFKA_ACL_PERMISSION_TYPE_ANY,
            errstr.as_mut_ptr(),
            errstr.len(),
        ))
    };
    // SAFETY: librdkafka wrote a NUL-terminated message into `errstr` (zeroed before).
    filter.ok_or_else(|| Failure {
        code: sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__INVALID_ARG,
        message: unsafe { text(errstr.as_ptr()) },
    })
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
    let request = Request::new(admin.inner().native_ptr(), timeout).map_err(|f| f.message)?;
    let bindings = acls
        .iter()
        .map(new_binding)
        .collect::<Result<Vec<_>, _>>()?;
    let mut ptrs: Vec<*mut sys::rd_kafka_AclBinding_t> = bindings.iter().map(Native::ptr).collect();
    let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_CREATEACLS;
    // SAFETY: the call starts one CreateAcls on the options and queue given; `ptrs` holds that
    // many live bindings, which the call copies (they stay ours, freed with `bindings`).
    let event = unsafe {
        request.answer(op, |o, q| {
            sys::rd_kafka_CreateAcls(request.rk(), ptrs.as_mut_ptr(), ptrs.len(), o, q)
        })
    }
    .map_err(|f| f.message)?;
    let mut n = 0usize;
    // SAFETY: `event` is live; the result and its ACL results live as long as it does.
    let results = unsafe {
        let result = sys::rd_kafka_event_CreateAcls_result(event.ptr());
        sys::rd_kafka_CreateAcls_result_acls(result, &mut n)
    };
    // The results come in the order of the request.
    for (i, a) in acls.iter().enumerate().take(n) {
        // SAFETY: `results` holds `n` results, live while `event` is; the error's text is
        // copied while it is.
        let why = unsafe {
            let error = sys::rd_kafka_acl_result_error(*results.add(i));
            (!error.is_null()).then(|| text(sys::rd_kafka_error_string(error)))
        };
        if let Some(why) = why {
            return Err(format!("{}: {why}", a.describe()));
        }
    }
    Ok(())
}

/// One ACL as a binding to create; why librdkafka refused it otherwise.
fn new_binding(a: &Acl) -> Result<Binding, String> {
    let [name, principal, host] =
        [&a.name, &a.principal, &a.host].map(|s| CString::new(s.as_str()).unwrap_or_default());
    let pattern = match a.prefixed {
        true => sys::rd_kafka_ResourcePatternType_t::RD_KAFKA_RESOURCE_PATTERN_PREFIXED,
        false => sys::rd_kafka_ResourcePatternType_t::RD_KAFKA_RESOURCE_PATTERN_LITERAL,
    };
    let permission = match a.allow {
        true => sys::rd_kafka_AclPermissionType_t::RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW,
        false => sys::rd_kafka_AclPermissionType_t::RD_KAFKA_ACL_PERMISSION_TYPE_DENY,
    };
    let mut errstr = [0 as c_char; 256];
    // SAFETY: the strings are NUL-terminated and outlive the call, which copies them;
    // `errstr` is writable for the length given; the binding is ours.
    let binding = unsafe {
        Native::from_ptr(sys::rd_kafka_AclBinding_new(
            a.kind.to_sys(),
            name.as_ptr(),
            pattern,
            principal.as_ptr(),
            host.as_ptr(),
            a.operation.to_sys(),
            permission,
            errstr.as_mut_ptr(),
            errstr.len(),
        ))
    };
    // SAFETY: librdkafka wrote a NUL-terminated message into `errstr` (zeroed before).
    binding.ok_or_else(|| format!("{}: {}", a.describe(), unsafe { text(errstr.as_ptr()) }))
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
    let request = Request::new(admin.inner().native_ptr(), timeout).ok()?;
    let names: Vec<CString> = users
        .iter()
        .filter_map(|u| CString::new(u.as_str()).ok())
        .collect();
    let mut ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let op = sys::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_DESCRIBEUSERSCRAMCREDENTIALS;
    // SAFETY: the call starts one DescribeUserScramCredentials on the options and queue
    // given; the names outlive it, and it copies them.
    let event = unsafe {
        request.answer(op, |o, q| {
            let rk = request.rk();
            sys::rd_kafka_DescribeUserScramCredentials(rk, ptrs.as_mut_ptr(), ptrs.len(), o, q)
        })
    }
    .ok()?;
    let mut n = 0usize;
    // SAFETY: `event` is live; the result and its descriptions live as long as it does.
    let descs = unsafe {
        let result = sys::rd_kafka_event_DescribeUserScramCredentials_result(event.ptr());
        sys::rd_kafka_DescribeUserScramCredentials_result_descriptions(result, &mut n)
    };
    let mut out = BTreeSet::new();
    for i in 0..n {
        use sys::rd_kafka_resp_err_t as E;
        // SAFETY: `descs` holds `n` descriptions, live while `event` is; the user's name is
        // copied and the error and count read while they are.
        let (user, code, credentials) = unsafe {
            let d = *descs.add(i);
            let error = sys::rd_kafka_UserScramCredentialsDescription_error(d);
            let code = match error.is_null() {
                true => E::RD_KAFKA_RESP_ERR_NO_ERROR,
                false => sys::rd_kafka_error_code(error),
            };
            (
                text(sys::rd_kafka_UserScramCredentialsDescription_user(d)),
                code,
                sys::rd_kafka_UserScramCredentialsDescription_scramcredentialinfo_count(d),
            )
        };
        match code {
            E::RD_KAFKA_RESP_ERR_NO_ERROR if credentials > 0 => {}
            E::RD_KAFKA_RESP_ERR_NO_ERROR | E::RD_KAFKA_RESP_ERR_RESOURCE_NOT_FOUND => {
                out.insert(user);
            }
            // Not allowed to see them, or another failure: not known either way.
            _ => return None,
        }
    }
    Some(out)
}
