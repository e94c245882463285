//! Issue 44: the Debian package (`scripts/deb.sh`) and its systemd units (`deploy/systemd/`,
//! maintainer scripts in `deploy/debian/`). Each test builds the package from the tests' own
//! binary (target/debug/kreplicate; users package target/release/kreplicate) and, where it
//! needs it installed, installs it with `dpkg --root` into a throwaway root: dpkg's database,
//! the files and the maintainer scripts (run chrootless with `DPKG_ROOT`) change that folder
//! only, never the machine. `--force-depends` there: the throwaway root's database holds no
//! libc6; the Depends line is checked against `ldd` instead.
//!
//! The units are checked by `systemd-analyze verify` as installed (the root holds the package's
//! files, with systemd's own units copied beside them), and run: each unit's ExecStart line,
//! read from the installed unit, copies between the shared Kafka clusters with the installed
//! binary and the installed example config, under strace, whose trace is held against the
//! units' sandbox (system call filter, address families, no writable and executable memory).
//! No systemd runs as PID 1 in CI's machines, so the sandbox itself is never applied here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::kr;
use crate::common::{self, Kafka};

const UNITS: [&str; 3] = [
    "kreplicate@.service",
    "kreplicate-catchup@.service",
    "kreplicate-catchup@.timer",
];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// What a finished tool printed and returned.
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `program`; a tool that is missing fails the test and names the installer.
fn tool(program: &str, args: &[&str], env: &[(&str, &str)]) -> Out {
    let out = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {program} ({e}): scripts/install-deps.sh installs it")
        });
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// [`tool`], which must exit 0; its stdout.
#[track_caller]
fn ok(program: &str, args: &[&str]) -> String {
    let out = tool(program, args, &[]);
    assert_eq!(
        out.code, 0,
        "{program} {args:?}:\n{}{}",
        out.stdout, out.stderr
    );
    out.stdout
}

/// A scratch folder of this test's own, removed when the test passes (kept for a look when it
/// fails).
struct Scratch(PathBuf);

impl Scratch {
    fn new(base: &str) -> Scratch {
        let dir = common::scratch_dir().join(common::unique(base));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `scripts/deb.sh -o DIR -Z gzip target/debug/kreplicate` (gzip: xz would take 7 s of the
/// test's time for the same check); the .deb's path.
fn build_deb(dir: &Path) -> PathBuf {
    let started = Instant::now();
    let out = ok(
        "bash",
        &[
            repo().join("scripts/deb.sh").to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
            "-Z",
            "gzip",
            env!("CARGO_BIN_EXE_kreplicate"),
        ],
    );
    let deb = PathBuf::from(out.trim());
    let want = format!(
        "kreplicate_{}_{}.deb",
        env!("CARGO_PKG_VERSION"),
        ok("dpkg", &["--print-architecture"]).trim()
    );
    assert_eq!(deb.file_name().unwrap().to_str().unwrap(), want, "{out}");
    assert!(deb.is_file(), "{}", deb.display());
    eprintln!("built {} in {:?}", deb.display(), started.elapsed());
    deb
}

/// dpkg's arguments for the throwaway root `root`.
fn dpkg_in(root: &Path) -> Vec<String> {
    vec![
        format!("--root={}", root.display()),
        "--force-not-root".into(),
        "--force-script-chrootless".into(),
        "--log=/dev/null".into(),
    ]
}

/// The package built and installed into a fresh root (an /etc and an empty dpkg database, as
/// on any Debian system).
fn installed(scratch: &Scratch) -> PathBuf {
    let deb = build_deb(&scratch.0);
    let root = scratch.0.join("root");
    for d in ["etc", "var/lib/dpkg/info", "var/lib/dpkg/updates"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
    let mut args = dpkg_in(&root);
    args.extend([
        "--force-depends".into(),
        "-i".into(),
        deb.display().to_string(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = ok("dpkg", &args);
    assert!(out.contains("Setting up kreplicate"), "{out}");
    root
}

/// Copies systemd's own units (sysinit.target, network-online.target, ...) into `root`'s
/// /lib/systemd/system, which systemd searches beside /usr/lib/systemd/system where the
/// package puts its units: `systemd-analyze verify --root` loads the units' dependencies.
fn add_systemd_units(root: &Path) {
    let to = root.join("lib/systemd/system");
    std::fs::create_dir_all(&to).unwrap();
    ok(
        "cp",
        &["-a", "/usr/lib/systemd/system/.", to.to_str().unwrap()],
    );
}

/// `systemd-analyze verify` of `units` in `root`, man pages looked up in the root (the units'
/// Documentation=man:kreplicate(1)). Its exit code and everything it printed.
fn verify(root: &Path, units: &[&str]) -> (i32, String) {
    let root_arg = format!("--root={}", root.display());
    let manpath = root.join("usr/share/man");
    let mut args = vec!["verify", root_arg.as_str()];
    args.extend_from_slice(units);
    let out = tool(
        "systemd-analyze",
        &args,
        &[("MANPATH", manpath.to_str().unwrap())],
    );
    (out.code, format!("{}{}", out.stdout, out.stderr))
}

/// A unit file's `Key=value` lines of `section`, in order.
fn unit_values(text: &str, section: &str, key: &str) -> Vec<String> {
    let mut current = String::new();
    let mut values = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            current = line.to_string();
        } else if current == format!("[{section}]") {
            if let Some(v) = line.strip_prefix(&format!("{key}=")) {
                values.push(v.to_string());
            }
        }
    }
    values
}

#[track_caller]
fn unit_value(text: &str, section: &str, key: &str) -> String {
    let v = unit_values(text, section, key);
    assert_eq!(v.len(), 1, "one {key}= in [{section}]: {v:?}\n{text}");
    v[0].clone()
}

/// A `[default: X]` duration of `kreplicate --help`.
fn help_default(help: &str, flag: &str) -> Duration {
    let block = help
        .split(&format!("      {flag} <"))
        .nth(1)
        .unwrap_or_else(|| panic!("{flag} in --help"));
    let block = block.split("\n\n").next().unwrap();
    let value = block
        .split("[default: ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .unwrap_or_else(|| panic!("no [default: ...] for {flag}: {block}"));
    humantime::parse_duration(value).unwrap()
}

#[test]
fn issue_44_the_units_verify_as_installed_and_a_broken_unit_is_refused() {
    let scratch = Scratch::new("deb-units");
    let root = installed(&scratch);
    add_systemd_units(&root);
    let instances = [
        "kreplicate@orders-dr.service",
        "kreplicate-catchup@billing-back.service",
        "kreplicate-catchup@billing-back.timer",
    ];
    let (code, said) = verify(&root, &instances);
    println!(
        "systemd-analyze verify {}: exit {code}, output:\n{said}",
        instances.join(" ")
    );
    // Clean: exit 0 and not a word (a warning, e.g. an unknown key, is ignored by systemd
    // with exit 0: it is a defect all the same).
    assert!(code == 0 && said.trim().is_empty(), "exit {code}:\n{said}");

    // The same check refuses broken units, so its silence above means something: a unit whose
    // ExecStart names no installed program fails it, a misspelt key is said.
    let units = root.join("usr/lib/systemd/system");
    let good = std::fs::read_to_string(units.join("kreplicate@.service")).unwrap();
    let bad = good.replace(
        "ExecStart=/usr/bin/kreplicate ",
        "ExecStart=/usr/bin/kreplicat ",
    );
    assert_ne!(bad, good);
    std::fs::write(units.join("broken-exec@.service"), bad).unwrap();
    let (code, said) = verify(&root, &["broken-exec@x.service"]);
    assert!(
        code != 0 && said.contains("/usr/bin/kreplicat is not executable"),
        "exit {code}: {said}"
    );
    let typo = good.replace("\nRestart=on-failure", "\nRestrat=on-failure");
    assert_ne!(typo, good);
    std::fs::write(units.join("typo@.service"), typo).unwrap();
    let (code, said) = verify(&root, &["typo@x.service"]);
    assert!(
        said.contains("Unknown key name 'Restrat'") || said.contains("Unknown key 'Restrat'"),
        "exit {code}: {said}"
    );

    // The sandbox, as systemd scores it offline: "OK" (at most 2 of 10); without its sandbox
    // lines the same unit scores above that, and the threshold says so.
    let root_arg = format!("--root={}", root.display());
    let security = |units: &[&str]| {
        let mut args = vec!["security", "--offline=yes", &root_arg, "--threshold=20"];
        args.extend_from_slice(units);
        tool("systemd-analyze", &args, &[])
    };
    let out = security(&instances[..2]);
    let overall: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("Overall exposure level"))
        .collect();
    println!("{}", overall.join("\n"));
    assert!(
        out.code == 0 && overall.len() == 2,
        "exit {}: {}{}",
        out.code,
        out.stdout,
        out.stderr
    );
    let sandbox = good.find("# Sandbox:").expect("a sandbox section");
    let install = good.find("[Install]").expect("an [Install] section");
    let bare = format!("{}{}", &good[..sandbox], &good[install..]);
    std::fs::write(units.join("bare@.service"), bare).unwrap();
    let out = security(&["bare@x.service"]);
    assert!(
        out.code != 0,
        "an unsandboxed unit passed the threshold:\n{}",
        out.stdout
    );

    // What the units promise: each flow is an instance (--flow %i of the packaged config
    // file), exit 2 never restarts, and a stop has time to flush and commit: TimeoutStopSec
    // above the flush's bound (--delivery-timeout + 5 s) plus the final commit's (--timeout),
    // with the defaults of --help and with the example config's values.
    let help = kr::run(&["--help"]).stdout;
    let example: serde_yaml::Value = serde_yaml::from_str(
        &std::fs::read_to_string(root.join("usr/share/doc/kreplicate/examples/kreplicate.yaml"))
            .unwrap(),
    )
    .unwrap();
    let setting = |key: &str| {
        let text = example["defaults"][key]
            .as_str()
            .unwrap_or_else(|| panic!("defaults.{key}"));
        humantime::parse_duration(text).unwrap()
    };
    let bounds = [
        help_default(&help, "--delivery-timeout") + help_default(&help, "--timeout"),
        setting("delivery-timeout") + setting("timeout"),
    ];
    for (unit, until_caught_up) in [
        ("kreplicate@.service", false),
        ("kreplicate-catchup@.service", true),
    ] {
        let text = std::fs::read_to_string(units.join(unit)).unwrap();
        let exec = unit_value(&text, "Service", "ExecStart");
        assert!(
            exec.starts_with(
                "/usr/bin/kreplicate --config /etc/kreplicate/kreplicate.yaml --flow %i"
            ),
            "{unit}: {exec}"
        );
        assert_eq!(
            exec.contains(" --until-caught-up"),
            until_caught_up,
            "{unit}: {exec}"
        );
        assert_eq!(unit_value(&text, "Service", "User"), "kreplicate", "{unit}");
        let stop = Duration::from_secs(
            unit_value(&text, "Service", "TimeoutStopSec")
                .parse()
                .unwrap(),
        );
        for bound in bounds {
            assert!(
                stop > bound + Duration::from_secs(5),
                "{unit}: TimeoutStopSec {stop:?} does not cover a flush and commit of {bound:?} + 5 s"
            );
        }
        if until_caught_up {
            assert_eq!(unit_value(&text, "Service", "Type"), "oneshot", "{unit}");
        } else {
            assert_eq!(
                unit_value(&text, "Service", "Restart"),
                "on-failure",
                "{unit}"
            );
            assert_eq!(
                unit_value(&text, "Service", "RestartPreventExitStatus"),
                "2",
                "{unit}"
            );
        }
    }
    // The guide's excerpt of the unit is the shipped unit's: every line of it is one of its.
    let guide = std::fs::read_to_string(repo().join("docs/guide.md")).unwrap();
    let excerpt = guide
        .split("### Under systemd")
        .nth(1)
        .and_then(|s| s.split("```ini\n").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("an ini block under '### Under systemd'");
    let shipped = std::fs::read_to_string(units.join("kreplicate@.service")).unwrap();
    let lines: Vec<&str> = excerpt
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(lines.len() > 10, "{excerpt}");
    let differ: Vec<&&str> = lines
        .iter()
        .filter(|l| !shipped.lines().any(|u| u == **l))
        .collect();
    assert!(
        differ.is_empty(),
        "lines of the guide's unit excerpt that the shipped kreplicate@.service lacks: {differ:?}"
    );
    let timer = std::fs::read_to_string(units.join("kreplicate-catchup@.timer")).unwrap();
    assert_eq!(unit_value(&timer, "Install", "WantedBy"), "timers.target");
    assert!(
        !unit_values(&timer, "Timer", "OnCalendar").is_empty(),
        "{timer}"
    );
}

/// `dpkg-deb -c`'s lines as (mode, owner, path), sizes and dates left out.
fn contents(deb: &Path) -> BTreeSet<(String, String, String)> {
    ok("dpkg-deb", &["-c", deb.to_str().unwrap()])
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 6, "{l}");
            (f[0].to_string(), f[1].to_string(), f[5].to_string())
        })
        .collect()
}

#[test]
fn issue_44_the_package_holds_its_files_and_depends_on_the_binarys_libraries() {
    let scratch = Scratch::new("deb-contents");
    let deb = build_deb(&scratch.0);
    let have = contents(&deb);
    println!(
        "dpkg-deb -c:\n{}",
        ok("dpkg-deb", &["-c", deb.to_str().unwrap()])
    );

    // Every man page of man/ (gzipped), the bash, zsh and fish completions where Debian's
    // shells look, the units, the sysusers.d file and the docs; every folder on the way.
    let mut files: Vec<(&str, String)> = vec![
        ("-rwxr-xr-x", "./usr/bin/kreplicate".into()),
        (
            "-rw-r--r--",
            "./usr/share/bash-completion/completions/kreplicate".into(),
        ),
        (
            "-rw-r--r--",
            "./usr/share/zsh/vendor-completions/_kreplicate".into(),
        ),
        (
            "-rw-r--r--",
            "./usr/share/fish/vendor_completions.d/kreplicate.fish".into(),
        ),
        ("-rw-r--r--", "./usr/lib/sysusers.d/kreplicate.conf".into()),
        ("-rw-r--r--", "./usr/share/doc/kreplicate/copyright".into()),
        (
            "-rw-r--r--",
            "./usr/share/doc/kreplicate/guide.md.gz".into(),
        ),
        (
            "-rw-r--r--",
            "./usr/share/doc/kreplicate/examples/kreplicate.yaml".into(),
        ),
    ];
    for unit in UNITS {
        files.push(("-rw-r--r--", format!("./usr/lib/systemd/system/{unit}")));
    }
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(repo().join("man")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        files.push(("-rw-r--r--", format!("./usr/share/man/man1/{name}.gz")));
        pages.push(name);
    }
    assert!(pages.len() >= 6, "man/: {pages:?}");
    let mut want = BTreeSet::new();
    for (mode, path) in &files {
        want.insert((mode.to_string(), "root/root".to_string(), path.clone()));
        for dir in Path::new(path.as_str()).ancestors().skip(1) {
            let dir = match dir.to_str().unwrap() {
                "" => continue,
                "." => "./".to_string(),
                d => format!("{d}/"),
            };
            want.insert(("drwxr-xr-x".into(), "root/root".into(), dir));
        }
    }
    let missing: Vec<_> = want.difference(&have).collect();
    let extra: Vec<_> = have.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:#?}\nextra {extra:#?}"
    );

    // The files are the repository's: the completions, units and man pages the binary
    // generated and the tests check against it; the binary stripped, and it runs.
    let x = scratch.0.join("x");
    ok(
        "dpkg-deb",
        &["-x", deb.to_str().unwrap(), x.to_str().unwrap()],
    );
    let same = |packaged: &str, source: &Path| {
        assert!(
            std::fs::read(x.join(packaged)).unwrap() == std::fs::read(source).unwrap(),
            "{packaged} differs from {}",
            source.display()
        );
    };
    same(
        "usr/share/bash-completion/completions/kreplicate",
        &repo().join("completions/kreplicate.bash"),
    );
    same(
        "usr/share/zsh/vendor-completions/_kreplicate",
        &repo().join("completions/_kreplicate"),
    );
    same(
        "usr/share/fish/vendor_completions.d/kreplicate.fish",
        &repo().join("completions/kreplicate.fish"),
    );
    for unit in UNITS {
        same(
            &format!("usr/lib/systemd/system/{unit}"),
            &repo().join("deploy/systemd").join(unit),
        );
    }
    for page in &pages {
        let gz = x.join(format!("usr/share/man/man1/{page}.gz"));
        let text = ok("gzip", &["-dc", gz.to_str().unwrap()]);
        assert!(
            text.as_bytes() == std::fs::read(repo().join("man").join(page)).unwrap(),
            "{page}"
        );
    }
    let bin = x.join("usr/bin/kreplicate");
    let sections = ok("readelf", &["-S", "-W", bin.to_str().unwrap()]);
    assert!(
        // (.debug_gdb_scripts is loaded with the program: strip keeps it.)
        [" .symtab ", " .debug_info ", " .debug_line "]
            .iter()
            .all(|s| !sections.contains(s)),
        "not stripped:\n{sections}"
    );
    let version = ok(bin.to_str().unwrap(), &["--version"]);
    let want = format!("kreplicate {} (librdkafka ", env!("CARGO_PKG_VERSION"));
    assert!(version.starts_with(&want), "{version}");

    // The control file: Cargo.toml's version, this machine's architecture, and a Depends that
    // names the package of every shared library the binary loads (ldd, dpkg -S).
    let field = |name: &str| {
        ok("dpkg-deb", &["-f", deb.to_str().unwrap(), name])
            .trim()
            .to_string()
    };
    assert_eq!(field("Package"), "kreplicate");
    assert_eq!(field("Version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(
        field("Architecture"),
        ok("dpkg", &["--print-architecture"]).trim()
    );
    let depends = field("Depends");
    println!("Depends: {depends}");
    let named: BTreeSet<String> = depends
        .split([',', '|'])
        .map(|d| d.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    let mut libraries = BTreeMap::new();
    for line in ok("ldd", &[bin.to_str().unwrap()]).lines() {
        let path = match line.split("=>").nth(1) {
            Some(rest) => rest.split_whitespace().next().unwrap_or(""),
            None => line.split_whitespace().next().unwrap_or(""),
        };
        if !path.starts_with('/') {
            continue; // linux-vdso: the kernel's
        }
        // dpkg's database names /lib paths, ldd may say /usr/lib (merged /usr) or the reverse.
        let owner = [
            path.to_string(),
            path.replacen("/usr/lib", "/lib", 1),
            path.replacen("/lib", "/usr/lib", 1),
        ]
        .iter()
        .map(|p| tool("dpkg", &["-S", p], &[]))
        .find(|o| o.code == 0)
        .unwrap_or_else(|| panic!("no package holds {path}"))
        .stdout;
        let package = owner.split(':').next().unwrap().trim().to_string();
        libraries.insert(path.to_string(), package);
    }
    println!("libraries: {libraries:?}");
    for want in ["libc6", "libssl3", "zlib1g"] {
        assert!(
            libraries.values().any(|p| p == want),
            "ldd names no {want}: {libraries:?}"
        );
    }
    for (path, package) in &libraries {
        assert!(
            named.contains(package),
            "{path} ({package}) is not in Depends: {depends}"
        );
    }
    assert!(
        named.contains("adduser") && named.contains("systemd-sysusers"),
        "{depends}"
    );

    // The maintainer scripts are there and executable; no conffile (the config is the
    // administrator's to write).
    let info = ok("dpkg-deb", &["-I", deb.to_str().unwrap()]);
    for script in ["postinst", "prerm", "postrm"] {
        assert!(
            info.lines()
                .any(|l| l.contains(&format!("*  {script} ")) && l.contains("#!/bin/bash")),
            "{script} missing or not executable:\n{info}"
        );
    }
    assert!(!info.contains("conffiles"), "{info}");
}

/// A run of a unit's ExecStart line against the installed root: its program and absolute paths
/// inside `root`, `%i` the flow, `extra` flags after it, under strace (`trace`).
fn unit_command(root: &Path, unit: &str, flow: &str, extra: &[&str], trace: &Path) -> Command {
    let text = std::fs::read_to_string(root.join("usr/lib/systemd/system").join(unit)).unwrap();
    let exec = unit_value(&text, "Service", "ExecStart");
    assert!(
        !exec.contains(['"', '\'', '$']),
        "{unit}: a plain command line: {exec}"
    );
    let mut words: Vec<String> = exec
        .split_whitespace()
        .map(|w| match w {
            "%i" => flow.to_string(),
            w if w.starts_with('/') => root.join(&w[1..]).display().to_string(),
            w => w.to_string(),
        })
        .collect();
    words.extend(extra.iter().map(|s| s.to_string()));
    eprintln!("{unit}: {}", words.join(" "));
    let mut c = Command::new("strace");
    // -f: librdkafka's and tokio's threads; -qq: no attach/exit notes in the trace.
    c.args(["-f", "-qq", "-o", trace.to_str().unwrap(), "--"])
        .args(&words)
        .env_remove("KREPLICATE_CONFIG")
        .env("XDG_CONFIG_HOME", root.join("nonexistent"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// The process strace runs (the one to signal: strace itself holds fatal signals back).
fn traced_pid(strace: u32) -> u32 {
    let mut pid = None;
    common::wait_until(
        "strace to start kreplicate",
        Duration::from_secs(10),
        || {
            pid = std::fs::read_dir(format!("/proc/{strace}/task"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
                .flat_map(|c| c.split_whitespace().map(str::to_string).collect::<Vec<_>>())
                // Once the child has exec'd kreplicate: before that it is strace's fork.
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/comm"))
                        .is_ok_and(|c| c.trim() == "kreplicate")
                })
                .find_map(|p| p.parse().ok());
            pid.is_some()
        },
    );
    pid.unwrap()
}

/// `systemd-analyze syscall-filter`'s groups, each expanded to its system calls.
fn syscall_groups() -> BTreeMap<String, BTreeSet<String>> {
    let mut raw: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in ok("systemd-analyze", &["syscall-filter"]).lines() {
        let word = line.trim();
        if word.is_empty() || word.starts_with('#') {
            continue;
        }
        if !line.starts_with(' ') && word.starts_with('@') {
            current = Some(word.to_string());
            raw.insert(word.to_string(), Vec::new());
        } else if let Some(g) = &current {
            raw.get_mut(g).unwrap().push(word.to_string());
        }
    }
    fn expand(g: &str, raw: &BTreeMap<String, Vec<String>>) -> BTreeSet<String> {
        raw.get(g)
            .unwrap_or_else(|| panic!("no syscall group {g}"))
            .iter()
            .flat_map(|m| {
                if m.starts_with('@') {
                    expand(m, raw)
                } else {
                    BTreeSet::from([m.clone()])
                }
            })
            .collect()
    }
    raw.keys().map(|g| (g.clone(), expand(g, &raw))).collect()
}

/// The trace of both runs against the sandbox both units declare (the same lines): every
/// system call allowed by SystemCallFilter=, every socket of an allowed family, no memory
/// both writable and executable (MemoryDenyWriteExecute=).
fn assert_within_sandbox(unit: &str, traces: &[PathBuf]) {
    let filters = unit_values(unit, "Service", "SystemCallFilter");
    let groups = syscall_groups();
    let names = |list: &str| -> BTreeSet<String> {
        list.split_whitespace()
            .flat_map(|n| {
                if n.starts_with('@') {
                    groups[n].clone()
                } else {
                    BTreeSet::from([n.to_string()])
                }
            })
            .collect()
    };
    let mut allowed = BTreeSet::new();
    let mut denied = BTreeSet::new();
    for f in &filters {
        match f.strip_prefix('~') {
            Some(list) => denied.extend(names(list)),
            None => allowed.extend(names(f)),
        }
    }
    assert!(!allowed.is_empty() && !denied.is_empty(), "{filters:?}");
    let families: BTreeSet<String> = unit_value(unit, "Service", "RestrictAddressFamilies")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert_eq!(unit_value(unit, "Service", "MemoryDenyWriteExecute"), "yes");

    let mut calls = BTreeMap::<String, usize>::new();
    for trace in traces {
        let text = std::fs::read_to_string(trace).unwrap();
        for line in text.lines() {
            // "PID name(args) = result"; resumed calls ("<... name resumed>") were counted at
            // their start, signals ("--- SIG") and exits ("+++") are no calls.
            let call = line
                .split_once(' ')
                .map(|(_, c)| c.trim_start())
                .unwrap_or("");
            let Some((name, args)) = call.split_once('(') else {
                continue;
            };
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                continue;
            }
            *calls.entry(name.to_string()).or_default() += 1;
            if name == "socket" || name == "socketpair" {
                let family = args.split([',', ')']).next().unwrap().trim();
                assert!(
                    families.contains(family),
                    "{line}: {family} is not in {families:?}"
                );
            }
            let exec = args.contains("PROT_EXEC");
            assert!(
                !(exec && (name.ends_with("mprotect") || args.contains("PROT_WRITE"))),
                "MemoryDenyWriteExecute refuses {line}"
            );
        }
    }
    println!("system calls of both runs: {calls:?}");
    assert!(
        calls.contains_key("connect"),
        "no connection to a broker traced: {calls:?}"
    );
    let refused: Vec<&String> = calls
        .keys()
        .filter(|c| !allowed.contains(*c) || denied.contains(*c))
        .collect();
    assert!(
        refused.is_empty(),
        "SystemCallFilter= refuses {refused:?} (allowed {} calls)",
        allowed.len()
    );
}

#[test]
fn issue_44_the_installed_package_copies_with_its_units_command_lines() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let scratch = Scratch::new("deb-run");
    let root = installed(&scratch);

    // The postinst made the system user the units run as (in the root's /etc/passwd only).
    let passwd = std::fs::read_to_string(root.join("etc/passwd")).unwrap();
    let user: Vec<&str> = passwd
        .lines()
        .find(|l| l.starts_with("kreplicate:"))
        .unwrap_or_else(|| panic!("no user kreplicate in\n{passwd}"))
        .split(':')
        .collect();
    let uid: u32 = user[2].parse().unwrap();
    assert!(
        uid < 1000 && user[6] == "/usr/sbin/nologin",
        "a system user: {user:?}"
    );
    let group = std::fs::read_to_string(root.join("etc/group")).unwrap();
    assert!(
        group
            .lines()
            .any(|l| l.starts_with(&format!("kreplicate:x:{}:", user[3]))),
        "{group}"
    );

    // The administrator's config: the packaged example with this test's clusters (prod: a,
    // dr: b) and its metrics file in the root.
    let example =
        std::fs::read_to_string(root.join("usr/share/doc/kreplicate/examples/kreplicate.yaml"))
            .unwrap();
    let state = root.join("var/lib/kreplicate");
    std::fs::create_dir_all(&state).unwrap(); // StateDirectory= would make it
    let mut config = example.clone();
    for (from, to) in [
        ("\"kafka-1.prod:9092,kafka-2.prod:9092\"", ab.to_string()),
        ("\"kafka-1.dr:9092\"", bb.to_string()),
        ("/var/lib/kreplicate/", format!("{}/", state.display())),
    ] {
        assert!(config.contains(from), "the example has {from}");
        config = config.replace(from, &to);
    }
    std::fs::create_dir_all(root.join("etc/kreplicate")).unwrap();
    std::fs::write(root.join("etc/kreplicate/kreplicate.yaml"), config).unwrap();

    // kreplicate-catchup@billing-back: dr → prod renamed back.{topic}, once to the end. The
    // flow's topics (billing) would be every test's: --topics names this test's.
    let billing = common::unique("billing");
    let back = format!("back.{billing}");
    common::create_topic(bb, &billing, 2);
    common::create_topic(ab, &back, 2);
    common::produce(bb, &billing, &kr::records(40, 2, "deb1"));
    let traces = [
        scratch.0.join("catchup.trace"),
        scratch.0.join("continuous.trace"),
    ];
    let started = Instant::now();
    let child = unit_command(
        &root,
        "kreplicate-catchup@.service",
        "billing-back",
        &["--topics", &billing, "--json"],
        &traces[0],
    )
    .spawn()
    .expect("strace");
    let run = kr::wait(child, Duration::from_secs(120));
    println!(
        "installed catch-up run: exit {} in {:?}\n{}{}",
        run.code,
        started.elapsed(),
        run.stdout,
        run.stderr
    );
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(
        (json["status"].as_str(), json["records"].as_u64()),
        (Some("ok"), Some(40)),
        "{json}"
    );
    assert_eq!(kr::assert_complete(bb, ab, &billing, &back, 2), 0);
    let group = json["group"].as_str().unwrap();
    assert!(
        group.ends_with(".billing-back"),
        "the flow's own group: {group}"
    );
    assert_eq!(common::committed(bb, group, &billing, 2), [20, 20]);
    let metrics = std::fs::read_to_string(state.join("billing-back.prom")).unwrap();
    assert!(
        metrics.contains("kreplicate_last_success_timestamp_seconds "),
        "{metrics}"
    );

    // kreplicate@orders-dr: prod → dr continuously until SIGTERM, which flushes, commits and
    // exits 0 (well within TimeoutStopSec). Its metrics port is this test's.
    let orders = common::unique("orders");
    common::create_topic(ab, &orders, 1);
    common::produce(ab, &orders, &kr::records(30, 1, "deb2"));
    let port = common::free_port().to_string();
    let addr = format!("127.0.0.1:{port}");
    let child = unit_command(
        &root,
        "kreplicate@.service",
        "orders-dr",
        &[
            "--topics",
            &orders,
            "--metrics-addr",
            &addr,
            "--json",
            "--commit-interval",
            "200ms",
        ],
        &traces[1],
    )
    .spawn()
    .expect("strace");
    let pid = traced_pid(child.id());
    let mut running = Some(child);
    kr::wait_for_records(bb, &orders, 30, Duration::from_secs(60), &mut running);
    let stopping = Instant::now();
    let ok_kill = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    let run = kr::wait(running.take().unwrap(), Duration::from_secs(180));
    assert!(
        ok_kill.success(),
        "kreplicate {pid} was gone before SIGTERM: {run:?}"
    );
    println!(
        "installed continuous run: exit {} after SIGTERM in {:?}\n{}{}",
        run.code,
        stopping.elapsed(),
        run.stdout,
        run.stderr
    );
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(
        (json["status"].as_str(), json["records"].as_u64()),
        (Some("stopped"), Some(30)),
        "{json}"
    );
    assert_eq!(
        common::committed(ab, json["group"].as_str().unwrap(), &orders, 1),
        [30]
    );
    assert_eq!(kr::assert_complete(ab, bb, &orders, &orders, 1), 0);

    let unit =
        std::fs::read_to_string(root.join("usr/lib/systemd/system/kreplicate@.service")).unwrap();
    let catchup =
        std::fs::read_to_string(root.join("usr/lib/systemd/system/kreplicate-catchup@.service"))
            .unwrap();
    // Both units' sandbox lines are the same (the trace of both runs is held against one).
    let sandbox = |text: &str| {
        let from = text.find("# Sandbox:").expect("a sandbox section");
        let to = text.find("[Install]").unwrap_or(text.len());
        text[from..to.max(from)].trim_end().to_string()
    };
    assert_eq!(
        sandbox(&unit),
        sandbox(&catchup),
        "one sandbox for both units"
    );
    assert_within_sandbox(&unit, &traces);

    // Purge: the package's files, its user and group and its state folder go; the
    // administrator's config stays.
    let mut args = dpkg_in(&root);
    args.extend(["--purge".into(), "kreplicate".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok("dpkg", &args);
    assert!(!root.join("usr/bin/kreplicate").exists() && !state.exists());
    for file in ["etc/passwd", "etc/group"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(!text.contains("kreplicate"), "{file}: {text}");
    }
    assert!(root.join("etc/kreplicate/kreplicate.yaml").exists());
}

#[test]
fn issue_44_the_installed_man_pages_render_and_the_bash_completion_completes() {
    let scratch = Scratch::new("deb-docs");
    let root = installed(&scratch);
    let manpath = root.join("usr/share/man");
    let man1 = manpath.join("man1");
    let pages: Vec<PathBuf> = std::fs::read_dir(&man1)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(pages.len() >= 6, "{pages:?}");
    for page in &pages {
        // man -l renders the installed file as `man` does; --warnings: groff's complaints.
        let out = tool(
            "man",
            &["--warnings", "-l", page.to_str().unwrap()],
            &[("MANWIDTH", "80"), ("MAN_KEEP_FORMATTING", "")],
        );
        assert!(
            out.code == 0 && out.stderr.is_empty(),
            "{}: exit {}: {}",
            page.display(),
            out.code,
            out.stderr
        );
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION"] {
            assert!(
                out.stdout.lines().any(|l| l == heading),
                "{}: no {heading}:\n{}",
                page.display(),
                out.stdout
            );
        }
    }
    // `man kreplicate` finds the installed page where the package put it.
    let out = tool(
        "man",
        &["-w", "kreplicate"],
        &[("MANPATH", manpath.to_str().unwrap())],
    );
    assert_eq!(
        out.stdout.trim(),
        man1.join("kreplicate.1.gz").to_str().unwrap(),
        "{}",
        out.stderr
    );
    let rendered = tool(
        "man",
        &["-l", man1.join("kreplicate.1.gz").to_str().unwrap()],
        &[("MANWIDTH", "80")],
    )
    .stdout;
    assert!(
        rendered.contains("EXIT STATUS") && rendered.contains("--until-caught-up"),
        "{rendered}"
    );

    // The bash completion, sourced as bash-completion's loader does, registers itself and
    // completes a flag and a flag's values.
    let script = r#"set -euo pipefail
source "$1"
complete -p kreplicate
complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
  COMPREPLY=(); _kreplicate kreplicate "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"; echo "${COMPREPLY[*]}"; }
complete_words kreplicate --until
complete_words kreplicate --guarantee ''"#;
    let file = root.join("usr/share/bash-completion/completions/kreplicate");
    let out = tool(
        "bash",
        &[
            "--norc",
            "--noprofile",
            "-c",
            script,
            "bash",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "complete -o bashdefault -o default -o nosort -F _kreplicate kreplicate",
            "--until-caught-up",
            "none at-least-once exactly-once"
        ],
        "{}",
        out.stderr
    );
}
