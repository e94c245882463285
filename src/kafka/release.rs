//! Which Kafka release a cluster runs, as far as its ApiVersions answer tells: a refusal for
//! want of a feature names it (issue 33). One ApiVersions v0 request on a plain TCP connection
//! to the first bootstrap broker, asked only on the way to such a refusal. Brokers answer
//! ApiVersions before any SASL handshake, so PLAINTEXT and SASL_PLAINTEXT listeners tell; a TLS
//! listener does not (the refusal then names no release).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::options::ClusterSpec;

const API_VERSIONS: i16 = 18;
const FETCH: i16 = 1;
/// Kafka 2.8 added DescribeCluster, 3.0 DescribeTransactions (KIP-700, KIP-664).
const DESCRIBE_CLUSTER: i16 = 60;
const DESCRIBE_TRANSACTIONS: i16 = 65;

/// `api key, min version, max version` as a broker lists them.
pub type Api = (i16, i16, i16);

/// The oldest release line that offers `apis`: Kafka 4.0 dropped Fetch v0-v3 (KIP-896).
pub fn label(apis: &[Api]) -> &'static str {
    let has = |key: i16| apis.iter().any(|a| a.0 == key);
    let fetch_min = apis.iter().find(|a| a.0 == FETCH).map_or(0, |a| a.1);
    if fetch_min >= 4 {
        "Kafka 4.x"
    } else if has(DESCRIBE_TRANSACTIONS) {
        "Kafka 3.x"
    } else if has(DESCRIBE_CLUSTER) {
        "Kafka 2.8"
    } else {
        "Kafka 2.7 or older"
    }
}

/// ` (Kafka 3.x, by its ApiVersions)` for a refusal's cluster, or nothing where the cluster
/// cannot be asked in plain text (TLS) or does not answer within `timeout`.
pub fn release_of(spec: &ClusterSpec, timeout: Duration) -> String {
    let tls = spec
        .properties
        .iter()
        .rev()
        .find(|(k, _)| k == "security.protocol");
    if tls.is_some_and(|(_, v)| v.to_ascii_lowercase().contains("ssl")) {
        return String::new();
    }
    let first = spec.bootstrap.split(',').next().unwrap_or_default().trim();
    api_versions(first, timeout).map_or_else(String::new, |apis| {
        format!(" ({}, by its ApiVersions)", label(&apis))
    })
}

fn api_versions(addr: &str, timeout: Duration) -> Option<Vec<Api>> {
    let addr = addr.to_socket_addrs().ok()?.next()?;
    let mut s = TcpStream::connect_timeout(&addr, timeout).ok()?;
    s.set_read_timeout(Some(timeout)).ok()?;
    s.set_write_timeout(Some(timeout)).ok()?;
    // Request header v1: api key, version 0, correlation id, client id.
    let client = b"kreplicate";
    let mut req = Vec::new();
    req.extend_from_slice(&API_VERSIONS.to_be_bytes());
    req.extend_from_slice(&0i16.to_be_bytes());
    req.extend_from_slice(&1i32.to_be_bytes());
    req.extend_from_slice(&(client.len() as i16).to_be_bytes());
    req.extend_from_slice(client);
    s.write_all(&(req.len() as i32).to_be_bytes()).ok()?;
    s.write_all(&req).ok()?;
    let mut size = [0u8; 4];
    s.read_exact(&mut size).ok()?;
    let size = usize::try_from(i32::from_be_bytes(size)).ok()?;
    if size > 1 << 16 {
        return None;
    }
    let mut body = vec![0u8; size];
    s.read_exact(&mut body).ok()?;
    parse(&body)
}

/// ApiVersions v0 response: correlation id, error code, then `[key, min, max]`.
fn parse(body: &[u8]) -> Option<Vec<Api>> {
    let i16_at = |at: usize| Some(i16::from_be_bytes(body.get(at..at + 2)?.try_into().ok()?));
    if i16_at(4)? != 0 {
        return None;
    }
    let n = i32::from_be_bytes(body.get(6..10)?.try_into().ok()?);
    (0..usize::try_from(n).ok()?)
        .map(|i| {
            let at = 10 + 6 * i;
            Some((i16_at(at)?, i16_at(at + 2)?, i16_at(at + 4)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_33_release_lines_told_apart_by_what_their_brokers_listed() {
        // Keys and Fetch versions as Kafka 2.8.2, 3.9.1 (either mode) and 4.4.0 listed them.
        let k282 = [(0, 0, 9), (1, 0, 12), (18, 0, 3), (60, 0, 0), (61, 0, 0)];
        let k391 = [(0, 0, 11), (1, 0, 17), (60, 0, 1), (65, 0, 0), (68, 0, 0)];
        let k440 = [(0, 0, 13), (1, 4, 18), (60, 0, 2), (65, 0, 0), (94, 0, 0)];
        assert_eq!(label(&k282), "Kafka 2.8");
        assert_eq!(label(&k391), "Kafka 3.x");
        assert_eq!(label(&k440), "Kafka 4.x");
        assert_eq!(label(&[(0, 0, 8), (1, 0, 11)]), "Kafka 2.7 or older");
        let mut body = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 1];
        body.extend_from_slice(&[0, 1, 0, 4, 0, 18]);
        assert_eq!(parse(&body), Some(vec![(1, 4, 18)]));
        assert_eq!(parse(&[0, 0, 0, 1, 0, 35]), None, "an error code");
    }
}
