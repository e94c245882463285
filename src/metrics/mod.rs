//! Live metrics of a copy run in Prometheus text format: served at `--metrics-addr`
//! (`/metrics`, `/healthz`, `/readyz`) and written to `--metrics-file` for node_exporter's textfile
//! collector. Both read the counters the engines publish; neither ever holds up the loop.

pub mod catalogue;
mod exposition;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use crate::error::Error;
use crate::options::Metrics;
use crate::report::{Counters, Identity, Status};
use crate::stop::Stop;

/// What the server, the file writer and the run share.
#[derive(Debug)]
struct Inner {
    counters: Arc<Counters>,
    who: Identity,
    started: SystemTime,
    delivery_timeout: Duration,
    /// Set once the run ended.
    status: Mutex<Option<Status>>,
    file: Option<PathBuf>,
    /// Serialises writes of the file (the periodic writer and the final one).
    writing: Mutex<()>,
}

impl Inner {
    fn status(&self) -> Option<Status> {
        *self.status.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn readiness(&self) -> exposition::Readiness {
        let c = &self.counters;
        exposition::Readiness {
            ended: self.status().is_some(),
            waiting: c.waiting(),
            starting: c.is_starting(),
            holding: c.holding.load(std::sync::atomic::Ordering::Relaxed),
            in_flight: c.in_flight(),
            delivery_timeout: self.delivery_timeout,
        }
    }

    fn write_file(&self, inner: &Arc<Inner>) -> std::io::Result<()> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let _one = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        write_atomically(path, exposition::render(inner).as_bytes())
    }
}

/// The running exporter; [`Exporter::finish`] writes the final file.
#[derive(Clone)]
pub struct Exporter {
    inner: Arc<Inner>,
    server: Option<Arc<tiny_http::Server>>,
    stop: Arc<Stop>,
    writer: Arc<Mutex<Option<JoinHandle<()>>>>,
}

/// Listens at `addr`; `:PORT` is every interface, as Prometheus exporters take it: IPv6's
/// (which takes IPv4 as well where the system maps it), else IPv4's where there is no IPv6.
fn listen(addr: &str) -> Result<tiny_http::Server, Box<dyn std::error::Error + Send + Sync>> {
    match addr.strip_prefix(':') {
        Some(port) => tiny_http::Server::http(format!("[::]:{port}"))
            .or_else(|_| tiny_http::Server::http(format!("0.0.0.0:{port}"))),
        None => tiny_http::Server::http(addr),
    }
}

/// Starts what `opts` asks for; nothing when it asks for nothing. A port that cannot be
/// bound or a file that cannot be written is a usage error, found before anything is copied.
pub fn start(
    opts: &Metrics,
    counters: Arc<Counters>,
    who: Identity,
    delivery_timeout: Duration,
) -> Result<Option<Exporter>, Error> {
    if !opts.enabled() {
        return Ok(None);
    }
    // The file outlives the run: keep the last success of an earlier one until this run has
    // its own, so that an alert sees how long ago any run last succeeded.
    let earlier = opts.file.as_ref().and_then(|path| {
        let text = std::fs::read_to_string(path).ok()?;
        exposition::last_success(&text)
    });
    if let Some(ms) = earlier {
        counters
            .last_success_ms
            .fetch_max(ms, std::sync::atomic::Ordering::Relaxed);
    }
    let inner = Arc::new(Inner {
        counters,
        who,
        started: SystemTime::now(),
        delivery_timeout,
        status: Mutex::new(None),
        file: opts.file.clone(),
        writing: Mutex::new(()),
    });
    let server = match &opts.addr {
        Some(addr) => {
            let server = listen(addr).map_err(|e| {
                Error::usage(format!(
                    "--metrics-addr {addr}: cannot listen there ({e}); give a free HOST:PORT"
                ))
            })?;
            Some(Arc::new(server))
        }
        None => None,
    };
    if let Some(path) = &opts.file {
        inner.write_file(&inner).map_err(|e| {
            Error::usage(format!(
                "--metrics-file {}: cannot write it ({e}); give a path in a writable folder",
                path.display()
            ))
        })?;
    }
    let stop = Arc::new(Stop::default());
    if let Some(server) = &server {
        let (server, inner) = (server.clone(), inner.clone());
        std::thread::spawn(move || serve(&server, &inner));
    }
    let writer = opts.file.as_ref().map(|_| {
        let (inner, stop, every) = (inner.clone(), stop.clone(), opts.file_interval);
        std::thread::spawn(move || rewrite(&inner, &stop, every))
    });
    Ok(Some(Exporter {
        inner,
        server,
        stop,
        writer: Arc::new(Mutex::new(writer)),
    }))
}

impl Exporter {
    /// Records how the run ended, writes the final file and stops serving.
    pub fn finish(&self, status: Status) {
        *self.inner.status.lock().unwrap_or_else(|e| e.into_inner()) = Some(status);
        self.stop.raise();
        let writer = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(w) = writer {
            let _ = w.join();
        }
        if let Err(e) = self.inner.write_file(&self.inner) {
            crate::progress::say(&format!(
                "kreplicate: warning: cannot write the metrics file: {e}"
            ));
        }
        if let Some(server) = &self.server {
            server.unblock();
        }
    }
}

fn serve(server: &tiny_http::Server, inner: &Arc<Inner>) {
    let text = |s: String| {
        let header = tiny_http::Header::from_bytes(
            &b"Content-Type"[..],
            &b"text/plain; version=0.0.4; charset=utf-8"[..],
        );
        let response = tiny_http::Response::from_string(s);
        match header {
            Ok(h) => response.with_header(h),
            Err(()) => response,
        }
    };
    for request in server.incoming_requests() {
        let path = request.url().split('?').next().unwrap_or_default();
        let response = match path {
            "/metrics" => text(exposition::render(inner)),
            "/healthz" => {
                let stalled = inner.counters.stalled_for();
                let ended = inner.status().is_some();
                if !ended && inner.counters.is_starting() {
                    text("starting\n".into())
                } else if exposition::healthy(stalled, inner.delivery_timeout, ended) {
                    text("ok\n".into())
                } else {
                    text(format!(
                        "stalled: the copy has not moved for {:.0} s, longer than --delivery-timeout {:?}, while records wait\n",
                        stalled.as_secs_f64(),
                        inner.delivery_timeout
                    ))
                    .with_status_code(503)
                }
            }
            "/readyz" => match inner.readiness().not_ready() {
                None => text("ready\n".into()),
                Some(why) => text(format!("not ready: {why}\n")).with_status_code(503),
            },
            _ => {
                text("not found: try /metrics, /healthz or /readyz\n".into()).with_status_code(404)
            }
        };
        // A client that went away is its own problem.
        let _ = request.respond(response);
    }
}

fn rewrite(inner: &Arc<Inner>, stop: &Stop, every: Duration) {
    while !stop.wait(every) {
        if let Err(e) = inner.write_file(inner) {
            log::warn!("cannot rewrite the metrics file: {e}");
        }
    }
}

/// Writes `bytes` to a temporary file beside `path` and renames it over `path`, so a reader
/// (node_exporter) never sees half a file. The temporary name does not end in `.prom`.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the path names a folder, not a file"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
