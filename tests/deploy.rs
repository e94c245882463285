//! Issue 44, where it runs in production: the container image (deploy/container/Containerfile,
//! built by scripts/image.sh) and the Kubernetes manifests (deploy/kubernetes/*.yaml).
//!
//! The manifests are checked by deploy/kubernetes/validate, a Go program decoding every document
//! strictly into the official API types (k8s.io/api) and checking what kreplicate needs (probes,
//! grace period, shards, secrets as files); the validator must also refuse broken copies of
//! them, so it cannot pass vacuously. The image is built from the debug binary and runs under
//! podman (runc, cgroupfs, host network: /work/shared/design/topologies.md) with the
//! Deployment's own command line, config file and secret files, against two SASL_SSL clusters of
//! the test's own: records arrive, `--json` works, `/metrics`, `/healthz` and `/readyz` answer,
//! and `podman stop` (SIGTERM to kreplicate as PID 1) exits 0 with every copied record committed.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::{self, kr, unique, Kafka};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

fn manifests_dir() -> PathBuf {
    Path::new(REPO).join("deploy/kubernetes")
}

/// Every manifest file, sorted.
fn manifests() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(manifests_dir())
        .expect("deploy/kubernetes")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 4,
        "deploy/kubernetes holds {files:?}: the ConfigMap, Secret, Deployment and StatefulSet are missing"
    );
    files
}

/// The Go toolchain: the machine's /usr/local/go (scripts/install-deps.sh checks it), else `go`.
fn go() -> PathBuf {
    let local = Path::new("/usr/local/go/bin/go");
    if local.is_file() {
        local.to_path_buf()
    } else {
        PathBuf::from("go")
    }
}

/// deploy/kubernetes/validate, built once per test process (Go's build cache makes a rebuild
/// a link).
fn validator() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let bin = common::scratch_dir().join(format!("kreplicate-validate-{}", std::process::id()));
        let started = Instant::now();
        let out = Command::new(go())
            .args(["build", "-o"])
            .arg(&bin)
            .arg(".")
            .current_dir(manifests_dir().join("validate"))
            .env("GOTOOLCHAIN", "local")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run go ({e}): run scripts/install-deps.sh (it checks for Go)")
            });
        assert!(
            out.status.success(),
            "go build of deploy/kubernetes/validate failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("built the validator in {:.1?}", started.elapsed());
        bin
    })
}

fn validate(args: &[&str], files: &[PathBuf]) -> Output {
    Command::new(validator())
        .args(args)
        .args(files)
        .stdin(Stdio::null())
        .output()
        .expect("run the validator")
}

/// The verdict on `files` with one manifest replaced by `text`: its output and exit code.
fn verdict_with(name: &str, text: &str) -> (String, i32) {
    let dir = common::scratch_dir().join(unique("manifests"));
    fs::create_dir_all(&dir).expect("scratch dir");
    let files: Vec<PathBuf> = manifests()
        .into_iter()
        .map(|f| {
            let to = dir.join(f.file_name().expect("name"));
            if f.file_name().is_some_and(|n| n == name) {
                fs::write(&to, text).expect("write");
            } else {
                fs::copy(&f, &to).expect("copy");
            }
            to
        })
        .collect();
    let out = validate(&["check"], &files);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// `from` replaced by `to` in manifest `name`, which must contain it once.
#[track_caller]
fn broken(name: &str, from: &str, to: &str) -> String {
    let text = fs::read_to_string(manifests_dir().join(name)).expect("manifest");
    assert_eq!(
        text.matches(from).count(),
        1,
        "{name} should hold {from:?} once"
    );
    text.replacen(from, to, 1)
}

#[test]
fn issue_44_the_manifests_decode_strictly_and_keep_what_kreplicate_needs() {
    let files = manifests();
    let out = validate(&["check"], &files);
    let said = String::from_utf8_lossy(&out.stdout);
    eprintln!("{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "the validator refused the manifests:\n{said}"
    );
    for f in &files {
        let line = format!("{}: ok: ", f.display());
        assert!(
            said.contains(&line),
            "no verdict ok for {}:\n{said}",
            f.display()
        );
    }
    for want in [
        "Deployment/kreplicate-orders-dr (flow orders-dr, at-least-once",
        "StatefulSet/kreplicate-payments-dr (flow payments-dr, exactly-once",
        "--shard $(POD_INDEX)/3 from ordinal 1",
        "PodDisruptionBudget/kreplicate-orders-dr",
        "PodDisruptionBudget/kreplicate-payments-dr",
        "ConfigMap/kreplicate-config",
        "Secret/kreplicate-credentials",
    ] {
        assert!(
            said.contains(want),
            "the verdict does not say {want:?}:\n{said}"
        );
    }

    // The same validator refuses broken copies: it decodes and checks, it does not just pass.
    let cases = [
        (
            "deployment.yaml",
            broken(
                "deployment.yaml",
                "  replicas: 3\n",
                "  replicas: 3\n  replicaz: 3\n",
            ),
            "unknown field \"replicaz\"",
        ),
        (
            "deployment.yaml",
            broken(
                "deployment.yaml",
                "kind: PodDisruptionBudget",
                "kind: PodDisruptionBuget",
            ),
            "unknown kind \"PodDisruptionBuget\"",
        ),
        (
            "deployment.yaml",
            broken("deployment.yaml", "path: /readyz", "path: /healthz"),
            "readiness probe gets /healthz, not /readyz",
        ),
        (
            "deployment.yaml",
            broken(
                "deployment.yaml",
                "terminationGracePeriodSeconds: 180",
                "terminationGracePeriodSeconds: 120",
            ),
            "terminationGracePeriodSeconds 120 does not exceed the stop's bound 2m35s",
        ),
        (
            "statefulset.yaml",
            broken(
                "statefulset.yaml",
                "--shard=$(POD_INDEX)/3",
                "--shard=$(POD_INDEX)/2",
            ),
            "--shard is \"$(POD_INDEX)/2\", not \"$(POD_INDEX)/3\"",
        ),
        (
            "statefulset.yaml",
            broken("statefulset.yaml", "    start: 1\n", "    start: 0\n"),
            "spec.ordinals.start is not 1",
        ),
        (
            "configmap.yaml",
            broken(
                "configmap.yaml",
                "${file:/var/run/secrets/kreplicate/dr-password}",
                "${file:/etc/kreplicate/dr-password}",
            ),
            "${file:/etc/kreplicate/dr-password} is not in a mounted Secret",
        ),
    ];
    for (name, text, want) in cases {
        let (said, code) = verdict_with(name, &text);
        assert_eq!(code, 1, "a broken {name} passed (wanted {want:?}):\n{said}");
        assert!(
            said.contains(want),
            "a broken {name}: wanted {want:?}, got:\n{said}"
        );
        eprintln!("evidence: refused a broken {name}: {want}");
    }
}

/// podman's global flags on these machines (topologies.md): runc (crun refuses the hybrid
/// cgroup layout) and cgroupfs.
const PODMAN_FLAGS: [&str; 4] = ["--runtime", "runc", "--cgroup-manager", "cgroupfs"];

/// A containers.conf without default ulimits (they cannot be set in these VMs).
fn containers_conf() -> PathBuf {
    let path = common::scratch_dir().join("containers.conf");
    fs::write(&path, "[containers]\ndefault_ulimits = []\n").expect("containers.conf");
    path
}

fn podman() -> Command {
    assert!(
        Path::new("/usr/bin/podman").is_file(),
        "podman not found: run scripts/install-deps.sh (it installs podman and runc)"
    );
    let mut c = Command::new("/usr/bin/podman");
    c.env("CONTAINERS_CONF", containers_conf())
        .args(PODMAN_FLAGS)
        .stdin(Stdio::null());
    c
}

#[track_caller]
fn podman_ok(args: &[&str]) -> String {
    let out = podman().args(args).output().expect("run podman");
    assert!(
        out.status.success(),
        "podman {}: {}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The test's image and containers, removed when the test ends (also when it fails).
struct Podman {
    image: String,
    containers: Vec<String>,
}

impl Drop for Podman {
    fn drop(&mut self) {
        for c in &self.containers {
            let _ = podman().args(["rm", "-f", "-t", "0", c]).output();
        }
        // Without -f: only this test's tag goes when another tag names the same image.
        let _ = podman().args(["rmi", &self.image]).output();
    }
}

/// The pod spec's container, as the validator reads it.
fn pod_container(workload: &str) -> serde_json::Value {
    let out = validate(&["container", workload, "kreplicate"], &manifests());
    assert!(
        out.status.success(),
        "validator container {workload}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the validator's JSON")
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

#[test]
fn issue_44_the_image_runs_the_deployments_command_line_and_stops_on_sigterm() {
    // The image, from the binary the tests run.
    let image = format!("localhost/kreplicate:test-{}", std::process::id());
    let mut guard = Podman {
        image: image.clone(),
        containers: Vec::new(),
    };
    let started = Instant::now();
    let out = Command::new("bash")
        .arg(Path::new(REPO).join("scripts/image.sh"))
        .args([env!("CARGO_BIN_EXE_kreplicate"), image.as_str()])
        .env("CONTAINERS_CONF", containers_conf())
        .env("KREPLICATE_PODMAN_FLAGS", PODMAN_FLAGS.join(" "))
        .stdin(Stdio::null())
        .output()
        .expect("run scripts/image.sh");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/image.sh failed: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "evidence: built in {:.1?}: {}",
        started.elapsed(),
        said.trim()
    );

    // What the image holds: no shell, the user, the libraries, the CA bundle.
    let config = podman_ok(&[
        "image",
        "inspect",
        "--format",
        "{{.Config.User}} {{json .Config.Entrypoint}}",
        &image,
    ]);
    assert_eq!(config.trim(), "65532:65532 [\"/usr/local/bin/kreplicate\"]");
    let created = podman_ok(&["create", &image]);
    guard.containers.push(created.trim().to_string());
    let export = podman()
        .args(["export", created.trim()])
        .output()
        .expect("podman export");
    assert!(export.status.success(), "podman export failed");
    let list = tar_list(&export.stdout);
    for want in [
        "usr/local/bin/kreplicate",
        "etc/ssl/certs/ca-certificates.crt",
        "usr/lib/ssl/cert.pem",
        "lib64/ld-linux-x86-64.so.2",
        "lib/x86_64-linux-gnu/libssl.so.3",
        "lib/x86_64-linux-gnu/libc.so.6",
        "etc/passwd",
        "etc/group",
    ] {
        assert!(
            list.iter().any(|f| f == want),
            "the image has no {want}: {list:?}"
        );
    }
    for never in ["bin/sh", "usr/bin/sh", "bin/bash"] {
        assert!(!list.iter().any(|f| f == never), "the image has {never}");
    }
    let files = list.iter().filter(|f| !f.ends_with('/')).count();
    eprintln!("evidence: the image holds {files} files: {list:?}");

    // The Deployment's container, from the manifests.
    let pod = pod_container("Deployment/kreplicate-orders-dr");
    let args = strings(&pod["args"]);
    assert!(
        strings(&pod["command"]).is_empty(),
        "the pod spec sets a command: {pod}"
    );
    let port = pod["metricsPort"].as_u64().expect("metricsPort");
    let user = pod["runAsUser"].as_i64().expect("runAsUser");
    assert_eq!(pod["readOnlyRootFilesystem"], true);

    // Two SASL_SSL clusters with users, as the ConfigMap's properties expect.
    let (prod_pw, dr_pw) = ("prod-secret-44", "dr-secret-44");
    let (a, b) = std::thread::scope(|s| {
        let b = s.spawn(|| {
            Kafka::start_with(
                "k8s-dr",
                &[
                    "--protocol",
                    "SASL_SSL",
                    "--user",
                    &format!("replicator:{dr_pw}"),
                ],
            )
        });
        let a = Kafka::start_with(
            "k8s-prod",
            &[
                "--protocol",
                "SASL_SSL",
                "--user",
                &format!("replicator:{prod_pw}"),
            ],
        );
        (a, b.join().expect("start dr"))
    });

    // The mounts: the ConfigMap's config file with the test's bootstrap addresses, the Secret's
    // files with the test's credentials and CA, and dr's CA in place of the image's bundle
    // (the ConfigMap checks dr's certificates against that bundle).
    let dir = common::scratch_dir().join(unique("pod"));
    let mut volumes: Vec<String> = Vec::new();
    for (i, m) in pod["mounts"].as_array().expect("mounts").iter().enumerate() {
        let host = dir.join(format!("mount-{i}"));
        fs::create_dir_all(&host).expect("mount dir");
        let path = m["path"].as_str().expect("path");
        for (key, value) in m["files"].as_object().expect("files") {
            let text = if m.get("configMap").is_some() {
                assert_eq!(key, "config.yaml", "an unexpected ConfigMap key");
                with_bootstrap(value.as_str().expect("text"), &a, &b)
            } else {
                match key.as_str() {
                    "prod-username" | "dr-username" => "replicator\n".to_string(),
                    "prod-password" => format!("{prod_pw}\n"),
                    "dr-password" => format!("{dr_pw}\n"),
                    "prod-ca.pem" => fs::read_to_string(a.dir.join("ca.pem")).expect("prod CA"),
                    other => panic!("the Secret has a key the test does not know: {other}"),
                }
            };
            fs::write(host.join(key), text).expect("mount file");
        }
        volumes.push(format!("{}:{path}:ro", host.display()));
    }
    let bundle = dir.join("ca-certificates.crt");
    fs::copy(b.dir.join("ca.pem"), &bundle).expect("dr CA");
    volumes.push(format!(
        "{}:/etc/ssl/certs/ca-certificates.crt:ro",
        bundle.display()
    ));

    let topic = format!("orders.{}", unique("k8s"));
    common::create_topic(&a.internal(), &topic, 3);
    common::produce(&a.internal(), &topic, &kr::records(600, 3, "first"));

    let run_args = |name: &str, args: &[&str]| -> Child {
        let user = format!("{user}:{user}");
        let mut cmd = podman();
        cmd.args(["run", "--rm", "--name", name, "--network", "host"])
            .args([
                "--read-only",
                "--read-only-tmpfs=false",
                "--cap-drop",
                "all",
            ])
            .args(["--security-opt", "no-new-privileges", "--user", &user]);
        for v in &volumes {
            cmd.args(["-v", v]);
        }
        cmd.arg(&image).args(args);
        eprintln!("running podman {:?}", cmd.get_args().collect::<Vec<_>>());
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("podman run")
    };
    let run = |name: &str, extra: &[&str]| -> Child {
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend_from_slice(extra);
        run_args(name, &all)
    };
    let metrics_free = || TcpListener::bind(("0.0.0.0", port as u16)).is_ok();
    assert!(
        metrics_free(),
        "port {port} (the pod's metrics port) is taken on this machine: the container test needs it"
    );

    // 1. A cron-style run from inside: the pod's command line plus --until-caught-up --json.
    let name = unique("kr-once");
    guard.containers.push(name.clone());
    let once = kr::wait(
        run(&name, &["--until-caught-up", "--json"]),
        Duration::from_secs(180),
    );
    assert_eq!(
        once.code, 0,
        "the run in the container failed: {}",
        once.stderr
    );
    let json = once.json();
    assert_eq!(json["status"], "ok", "{json}");
    assert_eq!(json["records"], 600, "{json}");
    assert_eq!(json["from"], "prod", "{json}");
    let group = json["group"].as_str().expect("group").to_string();
    assert!(
        group.ends_with(".orders-dr"),
        "the flow's own group: {group}"
    );
    kr::assert_complete(&a.internal(), &b.internal(), &topic, &topic, 3);
    eprintln!(
        "evidence: --until-caught-up --json in the container: {}",
        once.stdout.trim()
    );

    // 2. The Deployment's command line as it is, continuously.
    common::produce(&a.internal(), &topic, &kr::records(300, 3, "second"));
    let name = unique("kr-pod");
    guard.containers.push(name.clone());
    let mut child = Some(run(&name, &[]));
    kr::wait_for_records(
        &b.internal(),
        &topic,
        900,
        Duration::from_secs(120),
        &mut child,
    );
    let base = format!("http://127.0.0.1:{port}");
    let mut last = String::new();
    common::wait_until("/readyz answers 200 ready", Duration::from_secs(60), || {
        last = format!("{:?}", common::http_get(&format!("{base}/readyz")));
        last == "Ok((200, \"ready\"))" || last == "Ok((200, \"ready\\n\"))"
    });
    eprintln!("evidence: GET /readyz from the host: {last}");
    let healthz = common::http_get(&format!("{base}/healthz")).expect("/healthz");
    assert_eq!(healthz.0, 200, "/healthz: {healthz:?}");
    eprintln!("evidence: GET /healthz from the host: {healthz:?}");
    let mut copied = 0.0;
    common::wait_until(
        "the metrics count the 300 records",
        Duration::from_secs(30),
        || {
            let text = common::http_get(&format!("{base}/metrics"))
                .map(|r| r.1)
                .unwrap_or_default();
            copied = common::scraped(&text, "kreplicate_records_copied_total")
                .iter()
                .map(|s| s.1)
                .sum();
            copied == 300.0
        },
    );
    let text = common::http_get(&format!("{base}/metrics"))
        .expect("/metrics")
        .1;
    let ready = common::scraped(&text, "kreplicate_ready");
    assert_eq!(
        ready.first().map(|s| s.1),
        Some(1.0),
        "kreplicate_ready: {ready:?}"
    );
    let info = common::scraped(&text, "kreplicate_run_info");
    assert!(
        info.iter()
            .any(|(l, _)| l.get("flow").is_some_and(|f| f == "orders-dr")),
        "kreplicate_run_info: {info:?}"
    );
    eprintln!("evidence: /metrics from the host: kreplicate_records_copied_total sums to {copied}, kreplicate_ready {ready:?}");

    // 3. podman stop: SIGTERM to kreplicate as PID 1 (then SIGKILL after 60 s, which would be
    // exit 137): flush, commit, exit 0.
    let stopping = Instant::now();
    podman_ok(&["stop", "-t", "60", &name]);
    let took = stopping.elapsed();
    let stopped = kr::wait(child.take().expect("the pod"), Duration::from_secs(30));
    assert_eq!(
        stopped.code, 0,
        "podman stop: the container exited {} after {took:?}: {}",
        stopped.code, stopped.stderr
    );
    assert!(took < Duration::from_secs(50), "the stop took {took:?}");
    assert!(
        !stopped.stderr.contains("error"),
        "the stopped run said: {}",
        stopped.stderr
    );
    eprintln!(
        "evidence: podman stop (SIGTERM) ended the container in {took:.1?}, exit 0; it said {:?} (--quiet)",
        stopped.stderr.trim()
    );

    let committed =
        kr::assert_committed_is_covered(&a.internal(), &b.internal(), &group, &topic, &topic, 3);
    let ends = common::ends(&a.internal(), &topic, 3, "read_uncommitted");
    assert_eq!(committed, ends, "the stop committed every copied record");
    kr::assert_complete(&a.internal(), &b.internal(), &topic, &topic, 3);
    eprintln!("evidence: group {group} committed {committed:?} = the source's ends after the stop");

    // 4. The StatefulSet's command line, each pod's: $(POD_INDEX) expanded as Kubernetes does
    // from the pod-index label (1, 2, 3), plus --until-caught-up --json. The three exactly-once
    // shards together copy every partition once.
    let sts = pod_container("StatefulSet/kreplicate-payments-dr");
    let replicas = sts["replicas"].as_u64().expect("replicas");
    let env = sts["env"].as_array().expect("env").clone();
    let payments = format!("payments.{}", unique("k8s"));
    common::create_topic(&a.internal(), &payments, 5);
    common::produce(&a.internal(), &payments, &kr::records(500, 5, "eos"));
    let mut total = 0;
    for index in 1..=replicas {
        let expanded: Vec<String> = strings(&sts["args"])
            .iter()
            .map(|arg| {
                env.iter().fold(arg.clone(), |arg, e| {
                    let value = match e["fieldPath"].as_str() {
                        Some("metadata.labels['apps.kubernetes.io/pod-index']") => {
                            index.to_string()
                        }
                        Some(other) => {
                            panic!("a downward API field the test does not know: {other}")
                        }
                        None => e["value"].as_str().unwrap_or_default().to_string(),
                    };
                    arg.replace(&format!("$({})", e["name"].as_str().expect("name")), &value)
                })
            })
            .collect();
        let shard = format!("--shard={index}/{replicas}");
        assert!(expanded.contains(&shard), "pod {index}: {expanded:?}");
        let name = unique("kr-shard");
        guard.containers.push(name.clone());
        let mut with: Vec<&str> = expanded.iter().map(String::as_str).collect();
        with.extend(["--until-caught-up", "--json"]);
        let shard_run = kr::wait(run_args(&name, &with), Duration::from_secs(180));
        assert_eq!(shard_run.code, 0, "pod {index}: {}", shard_run.stderr);
        let json = shard_run.json();
        assert_eq!(json["guarantee"], "exactly-once", "{json}");
        let copied = json["records"].as_u64().expect("records");
        let partitions: Vec<u64> = json["partitions"]
            .as_array()
            .expect("partitions")
            .iter()
            .map(|p| p["partition"].as_u64().expect("partition"))
            .collect();
        eprintln!(
            "evidence: pod {index} ({shard}) copied {copied} records of partitions {partitions:?}"
        );
        total += copied;
    }
    assert_eq!(total, 500, "the shards together copied every record once");
    let dups = kr::assert_complete(&a.internal(), &b.internal(), &payments, &payments, 5);
    assert_eq!(dups, 0, "exactly-once shards left duplicates");

    let size = podman_ok(&["image", "ls", "--format", "{{.Size}}", &image]);
    eprintln!("evidence: image {image} (debug binary): {}", size.trim());
}

/// The ConfigMap's config file with each cluster's bootstrap pointed at the test's clusters
/// (their TLS certificates name localhost); everything else as the manifest has it.
fn with_bootstrap(text: &str, prod: &Kafka, dr: &Kafka) -> String {
    let mut cfg: serde_yaml::Value =
        serde_yaml::from_str(text).expect("the ConfigMap's config.yaml");
    let clusters = cfg
        .get_mut("clusters")
        .and_then(|c| c.as_mapping_mut())
        .expect("clusters");
    assert_eq!(clusters.len(), 2, "the ConfigMap's clusters: prod and dr");
    for (name, k) in [("prod", prod), ("dr", dr)] {
        let cluster = clusters
            .get_mut(name)
            .unwrap_or_else(|| panic!("no cluster {name} in the ConfigMap"));
        cluster["bootstrap"] = serde_yaml::Value::from(format!("localhost:{}", k.port));
    }
    serde_yaml::to_string(&cfg).expect("yaml")
}

/// The paths of a tar stream.
fn tar_list(tar: &[u8]) -> Vec<String> {
    let mut child = Command::new("tar")
        .arg("-t")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("tar");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = tar.to_vec();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().expect("tar -t");
    let _ = writer.join();
    assert!(out.status.success(), "tar -t failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_start_matches("./").to_string())
        .collect()
}
