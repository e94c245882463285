//! A small TCP fault proxy between a client and a broker, for faults that land exactly where a
//! test says. A broker frozen with SIGSTOP keeps accepting bytes on its open sockets and applies
//! them on thaw; behind this proxy, a held connection forwards nothing, and a cut one drops what
//! it held, so the broker never sees it.
//!
//! The broker advertises the proxy's address (`Kafka::behind_proxy`), so every connection a
//! client opens after bootstrap goes through it too.
//!
//! [`Proxy::hold_requests`] holds one direction only: requests wait, answers still flow. A
//! request forwarded before the hold is appended and answered, a later one never reaches the
//! broker, so the target then holds exactly what the client saw acknowledged.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
struct State {
    /// Nothing is forwarded (both directions) while set.
    held: AtomicBool,
    /// Nothing is forwarded from the client to the broker while set; answers still flow.
    requests_held: AtomicBool,
    /// Added before each forwarded chunk, in milliseconds.
    latency_ms: AtomicU64,
    /// Added before each chunk of answers (broker → client) only, in milliseconds.
    answer_latency_ms: AtomicU64,
    /// Connections accepted so far.
    accepted: AtomicU64,
    /// Every socket of every live connection, to cut them.
    sockets: Mutex<Vec<TcpStream>>,
    closed: AtomicBool,
}

pub struct Proxy {
    /// `127.0.0.1:PORT`, where clients connect.
    pub addr: String,
    pub port: u16,
    state: Arc<State>,
}

impl Proxy {
    /// Listens on `listener` and forwards each connection to `127.0.0.1:upstream`.
    pub fn start(listener: TcpListener, upstream: u16) -> Proxy {
        let port = listener.local_addr().expect("local addr").port();
        let state = Arc::new(State::default());
        let st = state.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if st.closed.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(client) = client else { continue };
                st.accepted.fetch_add(1, Ordering::Relaxed);
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                if let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) {
                    st.sockets.lock().unwrap().extend([c2, s2]);
                }
                for (from, to, request) in [(&client, &server, true), (&server, &client, false)] {
                    let (from, to, st) = (from.try_clone(), to.try_clone(), st.clone());
                    if let (Ok(from), Ok(to)) = (from, to) {
                        std::thread::spawn(move || pump(from, to, request, &st));
                    }
                }
            }
        });
        Proxy {
            addr: format!("127.0.0.1:{port}"),
            port,
            state,
        }
    }

    /// Stop forwarding: bytes wait (in the proxy or the kernel) until [`Proxy::resume`], or are
    /// dropped by [`Proxy::cut`].
    pub fn hold(&self) {
        self.state.held.store(true, Ordering::SeqCst);
    }

    /// Stop forwarding requests (client → broker) only; answers to requests already
    /// forwarded still reach the client. Undone by [`Proxy::resume`].
    pub fn hold_requests(&self) {
        self.state.requests_held.store(true, Ordering::SeqCst);
    }

    /// Forward again, both ways.
    pub fn resume(&self) {
        self.state.held.store(false, Ordering::SeqCst);
        self.state.requests_held.store(false, Ordering::SeqCst);
    }

    /// Close every live connection: what was held is never forwarded. New connections work.
    pub fn cut(&self) {
        for s in self.state.sockets.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Delays every chunk, both ways, by `d` (zero: none).
    pub fn latency(&self, d: Duration) {
        self.state
            .latency_ms
            .store(d.as_millis() as u64, Ordering::SeqCst);
    }

    /// Delays answers (broker → client) only by `d`: a request reaches the broker at once and
    /// is applied, its answer is late (zero: none).
    pub fn delay_answers(&self, d: Duration) {
        self.state
            .answer_latency_ms
            .store(d.as_millis() as u64, Ordering::SeqCst);
    }

    /// Connections accepted so far (a flap's reconnects show here).
    pub fn accepted(&self) -> u64 {
        self.state.accepted.load(Ordering::Relaxed)
    }
}

/// Copies `from` to `to` chunk by chunk (`request`: client → broker). A reader takes each
/// chunk as it arrives and a writer forwards it once its latency passed since its arrival, so
/// latency delays every chunk by the same time instead of adding up chunk after chunk. While
/// held, a chunk already read waits, and is dropped if the connection is cut meanwhile.
fn pump(mut from: TcpStream, mut to: TcpStream, request: bool, st: &Arc<State>) {
    let (tx, rx) = std::sync::mpsc::channel::<(std::time::Instant, Vec<u8>)>();
    let st2 = st.clone();
    let writer = std::thread::spawn(move || {
        for (read_at, chunk) in rx {
            let held = || {
                st2.held.load(Ordering::SeqCst)
                    || request && st2.requests_held.load(Ordering::SeqCst)
            };
            let mut latency = st2.latency_ms.load(Ordering::Relaxed);
            if !request {
                latency += st2.answer_latency_ms.load(Ordering::Relaxed);
            }
            let due = read_at + Duration::from_millis(latency);
            let now = std::time::Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            // Checked once its latency passed: a hold set while a chunk waits out its latency
            // holds it too (an answer delayed on purpose can be caught before it is forwarded).
            while held() && !st2.closed.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if tx
            .send((std::time::Instant::now(), buf[..n].to_vec()))
            .is_err()
        {
            break;
        }
    }
    drop(tx);
    let _ = writer.join();
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.closed.store(true, Ordering::SeqCst);
        self.resume();
        self.cut();
        // Wake the accept loop so its thread ends.
        let _ = TcpStream::connect(&self.addr);
    }
}
