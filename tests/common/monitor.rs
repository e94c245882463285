//! Real monitoring servers from Debian's packages (installed by scripts/install-deps.sh):
//! Prometheus scraping a running kreplicate, node_exporter reading a textfile directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::broker::{file_tail, free_port, scratch_dir};

/// A series: its labels and value.
pub type Sample = (BTreeMap<String, String>, f64);

/// GET `url`: status and body (any status, not only 2xx).
pub fn http_get(url: &str) -> Result<(u16, String), String> {
    let response = match ureq::get(url).timeout(Duration::from_secs(5)).call() {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => return Err(e.to_string()),
    };
    let status = response.status();
    let body = response.into_string().map_err(|e| e.to_string())?;
    Ok((status, body))
}

/// The samples of `metric` in a Prometheus text exposition.
pub fn scraped(text: &str, metric: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (name, labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            if name != metric {
                return None;
            }
            let labels = labels
                .split(',')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
                .collect();
            Some((labels, value.parse().ok()?))
        })
        .collect()
}

fn binary(name: &str) -> PathBuf {
    let path = Path::new("/usr/bin").join(name);
    assert!(
        path.is_file(),
        "{} not found: run scripts/install-deps.sh (it installs Debian's prometheus and prometheus-node-exporter)",
        path.display()
    );
    path
}

/// A server process, killed when dropped.
struct Process {
    child: Child,
    log: PathBuf,
}

impl Process {
    fn start(mut cmd: Command, log: PathBuf) -> Process {
        let out = std::fs::File::create(&log).expect("log file");
        let err = out.try_clone().expect("log file");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        Process { child, log }
    }

    fn wait_ready(&mut self, url: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok((200, _)) = http_get(url) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "{url}: the server exited ({status}): {}",
                    file_tail(&self.log, 4000)
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "{url} not ready within 30 s: {}",
            file_tail(&self.log, 4000)
        );
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = scratch_dir().join(format!("{name}-{}-{}", std::process::id(), free_port()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A Prometheus server scraping `target` (HOST:PORT) every second.
pub struct Prometheus {
    pub url: String,
    _process: Process,
}

impl Prometheus {
    pub fn start(target: &str) -> Prometheus {
        let bin = binary("prometheus");
        let dir = fresh_dir("prometheus");
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: kreplicate\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .expect("prometheus.yml");
        let listen = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(bin);
        cmd.arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={listen}"))
            .current_dir(&dir);
        let mut process = Process::start(cmd, dir.join("prometheus.log"));
        let url = format!("http://{listen}");
        process.wait_ready(&format!("{url}/-/ready"));
        Prometheus {
            url,
            _process: process,
        }
    }

    /// An instant query through the HTTP API: one sample per series.
    pub fn query(&self, expr: &str) -> Vec<Sample> {
        let response = ureq::get(&format!("{}/api/v1/query", self.url))
            .query("query", expr)
            .timeout(Duration::from_secs(5))
            .call()
            .unwrap_or_else(|e| panic!("query {expr}: {e}"));
        let body: serde_json::Value =
            serde_json::from_str(&response.into_string().expect("query body")).expect("query JSON");
        assert_eq!(body["status"], "success", "{body}");
        body["data"]["result"]
            .as_array()
            .expect("a vector result")
            .iter()
            .map(|r| {
                let labels = r["metric"]
                    .as_object()
                    .expect("labels")
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect();
                let value = r["value"][1]
                    .as_str()
                    .expect("value")
                    .parse()
                    .expect("number");
                (labels, value)
            })
            .collect()
    }

    /// Waits (bounded) until `expr` gives samples that `done` accepts; returns them.
    pub fn wait_for(&self, expr: &str, done: impl Fn(&[Sample]) -> bool) -> Vec<Sample> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let got = self.query(expr);
            if done(&got) {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "Prometheus never showed it: {expr} = {got:?}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// node_exporter with only its textfile collector, reading `dir`.
pub struct NodeExporter {
    pub url: String,
    _process: Process,
}

impl NodeExporter {
    pub fn start(dir: &Path) -> NodeExporter {
        let bin = binary("prometheus-node-exporter");
        let listen = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(bin);
        cmd.arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!("--collector.textfile.directory={}", dir.display()))
            .arg(format!("--web.listen-address={listen}"));
        let log = fresh_dir("node-exporter").join("node-exporter.log");
        let mut process = Process::start(cmd, log);
        let url = format!("http://{listen}");
        process.wait_ready(&format!("{url}/metrics"));
        NodeExporter {
            url,
            _process: process,
        }
    }

    pub fn metrics(&self) -> String {
        let (status, body) = http_get(&format!("{}/metrics", self.url)).expect("node_exporter");
        assert_eq!(status, 200, "{body}");
        body
    }

    pub fn dir() -> PathBuf {
        fresh_dir("textfile")
    }
}
