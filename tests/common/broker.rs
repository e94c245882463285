//! The broker fixture: [`Tansu`], one real tansu broker process (memory storage) on a free
//! loopback port, killed on drop and guarded by a watchdog; plus the scratch folder and log
//! helpers it uses.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a broker may take to accept TCP connections after spawn.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// A running tansu broker (memory storage). Killed (and reaped) on drop, also when the test panics.
/// If the test process itself dies without unwinding (SIGKILL, abort), a small watchdog `sh`
/// notices its stdin closing and kills the broker, so no broker outlives the test binary.
pub struct Tansu {
    /// `127.0.0.1:PORT`, ready for `bootstrap.servers`.
    pub bootstrap: String,
    pub port: u16,
    pub name: String,
    /// stdout+stderr of the broker.
    pub log_path: PathBuf,
    child: Child,
    watchdog: Option<Child>,
    frozen: bool,
}

/// Path of the tansu binary: `$KREPLICATE_TANSU`, else `<repo>/.cache/tansu/tansu`.
pub fn tansu_path() -> PathBuf {
    match std::env::var_os("KREPLICATE_TANSU") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/tansu/tansu"),
    }
}

/// Folder for broker logs and other test scratch files (Cargo's target tmp dir when known).
pub fn scratch_dir() -> PathBuf {
    let base = option_env!("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join("kreplicate-tests");
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local_addr").port()
}

/// Last `max` bytes of a file, lossily decoded (for panic messages).
pub fn file_tail(path: &Path, max: u64) -> String {
    let Ok(mut f) = File::open(path) else {
        return format!("<no log at {}>", path.display());
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(max)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

fn signal(pid: u32, sig: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Process state letter from /proc/PID/stat ('T' = stopped), None if gone.
pub(super) fn proc_state(pid: u32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Format: "pid (comm) S ..."; comm may contain spaces/parens, so split after the last ')'.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

enum StartOutcome {
    Ready,
    PortTaken,
}

impl Tansu {
    /// Start a broker whose cluster id and memory store are `name`. Panics (with the log tail) if it
    /// is not accepting connections within 10 s; retries on another port if the chosen one was taken.
    pub fn start(name: &str) -> Tansu {
        let bin = tansu_path();
        if !bin.is_file() {
            panic!(
                "tansu not found at {}; run scripts/install-deps.sh (or set KREPLICATE_TANSU)",
                bin.display()
            );
        }
        let mut last_log = String::new();
        for attempt in 1..=5 {
            let port = free_port();
            let log_path =
                scratch_dir().join(format!("tansu-{name}-{port}-{}.log", std::process::id()));
            let log = File::create(&log_path)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", log_path.display()));
            let url = format!("tcp://127.0.0.1:{port}");
            let child = Command::new(&bin)
                .arg("broker")
                .args(["--listener-url", &url])
                .args(["--advertised-listener-url", &url])
                .args(["--storage-engine", &format!("memory://{name}/")])
                .args(["--cluster-id", name])
                // Its flags all have env fallbacks; make sure none leaks in from the caller.
                .env_remove("CLUSTER_ID")
                .env_remove("LISTENER_URL")
                .env_remove("ADVERTISED_LISTENER_URL")
                .env_remove("STORAGE_ENGINE")
                .env_remove("SCHEMA_REGISTRY")
                .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("clone log handle"))
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
            let watchdog = spawn_watchdog(child.id());
            let mut t = Tansu {
                bootstrap: format!("127.0.0.1:{port}"),
                port,
                name: name.to_string(),
                log_path,
                child,
                watchdog,
                frozen: false,
            };
            match t.wait_ready() {
                StartOutcome::Ready => return t,
                StartOutcome::PortTaken => {
                    last_log = t.log_tail();
                    eprintln!("tansu {name}: port {port} taken (attempt {attempt}), retrying");
                    drop(t);
                }
            }
        }
        panic!("tansu {name}: could not get a free port after 5 attempts; last log:\n{last_log}");
    }

    /// Ready = our process is alive, logged "ready", and the port accepts TCP. A port that accepts
    /// while our process died or logged AddrInUse belongs to someone else: PortTaken.
    fn wait_ready(&mut self) -> StartOutcome {
        let deadline = Instant::now() + START_TIMEOUT;
        let addr: SocketAddr = self.bootstrap.parse().unwrap();
        loop {
            let log = fs::read_to_string(&self.log_path).unwrap_or_default();
            if log.contains("AddrInUse") || log.contains("Address in use") {
                return StartOutcome::PortTaken;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "tansu {} exited early ({status}) on port {}; log {}:\n{}",
                    self.name,
                    self.port,
                    self.log_path.display(),
                    self.log_tail()
                );
            }
            if log.contains("ready in")
                && TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
            {
                return StartOutcome::Ready;
            }
            if Instant::now() > deadline {
                panic!(
                    "tansu {} not accepting connections on {} after {:?}; log {}:\n{}",
                    self.name,
                    self.bootstrap,
                    START_TIMEOUT,
                    self.log_path.display(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Last 4 KiB of the broker's log.
    pub fn log_tail(&self) -> String {
        file_tail(&self.log_path, 4096)
    }

    /// SIGSTOP: the broker hangs with its sockets open (clients time out, data is kept).
    pub fn freeze(&mut self) {
        assert!(
            signal(self.pid(), "STOP"),
            "kill -STOP {} failed",
            self.pid()
        );
        self.frozen = true;
        self.wait_state(|s| s == 'T', "stopped");
    }

    /// SIGCONT: resume a frozen broker.
    pub fn thaw(&mut self) {
        assert!(
            signal(self.pid(), "CONT"),
            "kill -CONT {} failed",
            self.pid()
        );
        self.frozen = false;
        self.wait_state(|s| s != 'T', "running");
    }

    pub fn is_frozen(&self) -> bool {
        self.frozen
    }

    fn wait_state(&self, ok: impl Fn(char) -> bool, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match proc_state(self.pid()) {
                Some(s) if ok(s) => return,
                None => panic!("tansu {} (pid {}) is gone", self.name, self.pid()),
                Some(s) if Instant::now() > deadline => {
                    panic!(
                        "tansu {} (pid {}) not {what}: state {s}",
                        self.name,
                        self.pid()
                    )
                }
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

/// `sh` that kills the broker when its stdin (a pipe whose only writer is this test process)
/// reaches EOF, i.e. when the test process is gone without running Drop.
pub(super) fn spawn_watchdog(pid: u32) -> Option<Child> {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "read _ignored; kill -CONT {pid} 2>/dev/null; kill -KILL {pid} 2>/dev/null"
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

impl Drop for Tansu {
    fn drop(&mut self) {
        // The watchdog goes first, so it can never signal a recycled pid.
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        let pid = self.pid();
        let _ = signal(pid, "CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
