//! Brokers a client lost and rides out. A broker restart (a rolling restart, a crash and a
//! restart) makes librdkafka log a connection failure per client, per coordinator role and per
//! retry, at error level, while the clients reconnect by themselves once it is back: that is not
//! an error of the run. [`Lost::note`] turns the first such line for a broker address into one
//! warning, and a probe says when the address accepts connections again. Failures that a rerun
//! cannot fix (TLS, SASL) are left as they are.

use std::collections::HashMap;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use regex::Regex;

/// What a line about a connection to a broker says.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Seen {
    /// The broker at this address refused, reset or timed out a connection: first time, since
    /// it was last back (say it).
    Lost { addr: String, why: String },
    /// More of the same about a broker already said lost (drop it).
    Again,
    /// Anything else.
    Other,
}

/// Addresses said lost and not back yet, with when.
static DOWN: Mutex<Option<HashMap<String, Instant>>> = Mutex::new(None);

/// A connection failure a broker restart causes, and the broker's `host:port`: librdkafka's
/// `FAIL` lines and the error events rust-rdkafka logs for them both read
/// `... NAME:PORT[/ID]: Connect to ipv4#ADDR failed: Connection refused (...)`.
fn lost_broker(msg: &str) -> Option<(String, String)> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?i)([^\s/]+:\d+)(?:/[^\s:]+)?: ((?:Connect to \S+ failed|Receive failed|Send failed|Disconnected): (?:Connection refused|Connection reset by peer|Broken pipe|Connection timed out))",
        )
        .ok()
    });
    if msg.contains("SSL") || msg.contains("SASL") || msg.contains("uthentication") {
        return None;
    }
    if let Some(c) = re.as_ref()?.captures(msg) {
        return Some((c[1].to_string(), c[2].to_string()));
    }
    // A coordinator's connection names no broker before it: `GroupCoordinator: Connect to
    // ipv4#ADDR failed: ...` (seen while a killed leader was down, issue 30).
    static BARE: OnceLock<Option<Regex>> = OnceLock::new();
    let bare = BARE.get_or_init(|| {
        Regex::new(
            r"(?i)(Connect to (?:ipv[46]#)?(\S+) failed: (?:Connection refused|Connection timed out))",
        )
        .ok()
    });
    let c = bare.as_ref()?.captures(msg)?;
    Some((c[2].to_string(), c[1].to_string()))
}

/// Whether `msg` (a log line, any target) is about a lost broker, and whether it is news.
pub(super) fn note(msg: &str) -> Seen {
    let Some((addr, why)) = lost_broker(msg) else {
        return Seen::Other;
    };
    let mut down = DOWN.lock().unwrap_or_else(|e| e.into_inner());
    let down = down.get_or_insert_with(HashMap::new);
    if down.contains_key(&addr) {
        return Seen::Again;
    }
    down.insert(addr.clone(), Instant::now());
    Seen::Lost { addr, why }
}

/// Calls `back(addr, how long)` once `addr` accepts a TCP connection again (its listener is up) (librdkafka's clients
/// reconnect on their next try, within `reconnect.backoff.max.ms`), and forgets it was lost.
pub(super) fn watch(addr: String, back: fn(&str, Duration)) {
    let probed = addr.clone();
    let spawned = std::thread::Builder::new()
        .name("broker-probe".into())
        .spawn(move || loop {
            let addr = &probed;
            std::thread::sleep(Duration::from_millis(500));
            let up = addr
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .is_some_and(|a| TcpStream::connect_timeout(&a, Duration::from_secs(1)).is_ok());
            if up {
                let since = DOWN
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .as_mut()
                    .and_then(|d| d.remove(addr));
                back(addr, since.map_or(Duration::ZERO, |t| t.elapsed()));
                return;
            }
        });
    // Without a thread no "back" line: the next failure of it is then said again, never lost.
    if spawned.is_err() {
        if let Some(d) = DOWN.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            d.remove(&addr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_30_a_restarted_broker_is_said_once_until_it_is_back() {
        let fail = "FAIL [thrd:GroupCoordinator]: GroupCoordinator: 127.0.0.1:1: Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms in state CONNECT)";
        let event = "Global error: BrokerTransportFailure (Local: Broker transport failure): TxnCoordinator: 127.0.0.1:1: Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms in state CONNECT, 1 identical error(s) suppressed)";
        assert_eq!(
            note(fail),
            Seen::Lost {
                addr: "127.0.0.1:1".into(),
                why: "Connect to ipv4#127.0.0.1:1 failed: Connection refused".into()
            }
        );
        assert_eq!(note(event), Seen::Again);
        assert_eq!(note(fail), Seen::Again);
        let bare = "FAIL [thrd:GroupCoordinator]: GroupCoordinator: Connect to ipv4#127.0.0.1:2 failed: Connection refused (after 0ms in state CONNECT)";
        assert_eq!(
            note(bare),
            Seen::Lost {
                addr: "127.0.0.1:2".into(),
                why: "Connect to ipv4#127.0.0.1:2 failed: Connection refused".into()
            }
        );
        let event = "Global error: BrokerTransportFailure (Local: Broker transport failure): GroupCoordinator: Connect to ipv4#127.0.0.1:2 failed: Connection refused (after 0ms in state CONNECT)";
        assert_eq!(note(event), Seen::Again);
        let reset = "FAIL [thrd:sasl_plaintext://h:9/2]: sasl_plaintext://h:9/2: Receive failed: Connection reset by peer (after 5ms in state UP)";
        assert!(matches!(note(reset), Seen::Lost { addr, .. } if addr == "h:9"));
        // Not a restart: the answer is a failure a person fixes, or librdkafka's summary.
        assert_eq!(note("FAIL [thrd:ssl://h:9/bootstrap]: ssl://h:9/bootstrap: SSL handshake failed: Connection refused"), Seen::Other);
        assert_eq!(note("Global error: AllBrokersDown (Local: All broker connections are down): 3/3 brokers are down"), Seen::Other);
        assert_eq!(
            note("127.0.0.1:1/2: Disconnected (after 600000ms in state UP)"),
            Seen::Other
        );
    }
}
