//! The steady-state benchmark's one external sampler (`bench/run.sh --steady`, issue 32): it
//! starts a copier (kreplicate, the raw copy or MirrorMaker 2 alike), then every
//! `--interval-ms` reads from outside how many records the target topic holds (the sum of its
//! partitions' end offsets) and the CPU time of the copier's process and of each `--pid` (the
//! brokers) from /proc. It ends when the target holds `--records` and the copier exited (with
//! `--stop`: it sends the copier SIGTERM then, for MirrorMaker 2, which never exits; with
//! `--stop-file`, once that file exists). The end offsets of a transactional target also count
//! its commit markers (one per partition and transaction): a fraction of a percent of the
//! records here, and the window's ends move by as much.
//!
//! Prints one JSON object: the start-up (seconds to the first record on the target, to the
//! first commit of `--group` on the source), and the window between 20 % and 80 % of the
//! records (seconds, records/s, MB/s, CPU seconds of the copier and of each pid over it, and
//! each pid's kernel part, each interpolated between the samples around the window's ends).
//! `--samples FILE` keeps every sample (JSON lines).
//!
//! ```text
//! cargo run --release --example sample -- --bootstrap 127.0.0.1:9093 --topic copy \
//!     --records 2000000 --bytes-per-record 1040 --pid 1234,1235 -- kreplicate --from ...
//! ```

use std::fs::File;
use std::io::Write;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::json;

#[derive(Parser)]
#[command(about = "Start a copier and sample its progress and CPU from outside")]
struct Args {
    /// Target bootstrap servers
    #[arg(long)]
    bootstrap: String,
    /// Target topic
    #[arg(long)]
    topic: String,
    /// Records the copy is complete with
    #[arg(long)]
    records: i64,
    /// Key + value bytes per record (for MB/s)
    #[arg(long)]
    bytes_per_record: u64,
    /// Other processes whose CPU time to sample (the brokers), comma-separated
    #[arg(long, value_delimiter = ',')]
    pid: Vec<u32>,
    /// With --group and --source-topic: the source cluster, to see the copier's first commit
    #[arg(long)]
    source: Option<String>,
    #[arg(long)]
    group: Option<String>,
    #[arg(long)]
    source_topic: Option<String>,
    #[arg(long, default_value_t = 200)]
    interval_ms: u64,
    /// Send the copier SIGTERM once the target holds every record (it never exits by itself)
    #[arg(long)]
    stop: bool,
    /// Send the copier SIGTERM once this file exists instead (a reader counted every record:
    /// a transactional target's end offsets also count its commit markers)
    #[arg(long)]
    stop_file: Option<String>,
    /// Give up (and stop the copier) after this many seconds
    #[arg(long, default_value_t = 1800)]
    timeout: u64,
    /// Every sample as a JSON line
    #[arg(long)]
    samples: Option<String>,
    /// The copier's stdout and stderr
    #[arg(long)]
    out: String,
    #[arg(long)]
    err: String,
    /// The copier's command line
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

/// One look from outside.
#[derive(Clone, Copy)]
struct Sample {
    t: f64,
    records: i64,
    cpu: f64,
    /// The kernel's part of `cpu`: a broker's writes into the page cache are most of it.
    sys: f64,
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sample: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// User + system CPU seconds of a live process, and the system part (fields 14 and 15 of
/// /proc/PID/stat).
fn cpu_seconds(pid: u32, hz: f64) -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: count from its closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let user: f64 = f.get(11)?.parse().ok()?;
    let sys: f64 = f.get(12)?.parse().ok()?;
    Some(((user + sys) / hz, sys / hz))
}

/// Peak resident set of a live process, KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Records the target topic holds: the sum of its partitions' end offsets (0 while it does
/// not exist yet).
fn target_records(c: &BaseConsumer, topic: &str, parts: &mut Option<TopicPartitionList>) -> i64 {
    if parts.is_none() {
        let Ok(md) = c.fetch_metadata(Some(topic), Duration::from_secs(5)) else {
            return 0;
        };
        let Some(t) = md
            .topics()
            .iter()
            .find(|t| t.name() == topic && t.error().is_none())
        else {
            return 0;
        };
        if t.partitions().is_empty() {
            return 0;
        }
        let mut tpl = TopicPartitionList::new();
        for p in t.partitions() {
            // ListOffsets at timestamp -1: the end offset (high watermark).
            let _ = tpl.add_partition_offset(topic, p.id(), Offset::End);
        }
        *parts = Some(tpl);
    }
    let Some(tpl) = parts.as_ref() else {
        return 0;
    };
    match c.offsets_for_times(tpl.clone(), Duration::from_secs(5)) {
        Ok(got) => got
            .elements()
            .iter()
            .map(|e| match e.offset() {
                Offset::Offset(o) => o,
                _ => 0,
            })
            .sum(),
        Err(_) => 0,
    }
}

/// Linear interpolation of the samples at the moment the target reached `records`.
fn at(samples: &[Sample], records: f64, pick: impl Fn(&Sample) -> f64) -> Option<(f64, f64)> {
    let i = samples.iter().position(|s| s.records as f64 >= records)?;
    if i == 0 {
        return Some((samples[0].t, pick(&samples[0])));
    }
    let (a, b) = (&samples[i - 1], &samples[i]);
    let f = (records - a.records as f64) / (b.records - a.records) as f64;
    Some((a.t + f * (b.t - a.t), pick(a) + f * (pick(b) - pick(a))))
}

fn run(args: &Args) -> Result<()> {
    let hz = clock_ticks();
    let target: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &args.bootstrap)
        .set("isolation.level", "read_uncommitted")
        .create()?;
    let source: Option<BaseConsumer> = match (&args.source, &args.group) {
        (Some(s), Some(g)) => Some(
            ClientConfig::new()
                .set("bootstrap.servers", s)
                .set("group.id", g)
                .set("enable.auto.commit", "false")
                .create()?,
        ),
        _ => None,
    };
    let mut samples_out = match &args.samples {
        Some(p) => Some(File::create(p).with_context(|| format!("cannot create {p}"))?),
        None => None,
    };
    let started = Instant::now();
    let mut child = Command::new(&args.command[0])
        .args(&args.command[1..])
        .stdin(Stdio::null())
        .stdout(File::create(&args.out)?)
        .stderr(File::create(&args.err)?)
        .spawn()
        .with_context(|| format!("cannot start {}", args.command[0]))?;
    let pid = child.id();
    let mut parts = None;
    let (mut first_record, mut first_commit) = (None, None);
    let mut copier: Vec<Sample> = Vec::new();
    let mut others: Vec<Vec<Sample>> = vec![Vec::new(); args.pid.len()];
    let (mut exit, mut rss, mut stopped) = (None, 0u64, false);
    let mut commit_tpl = TopicPartitionList::new();
    if let (Some(t), Some(_)) = (&args.source_topic, &source) {
        // The first partitions are enough to see a first commit.
        for p in 0..64 {
            let _ = commit_tpl.add_partition(t, p);
        }
    }
    loop {
        let t = started.elapsed().as_secs_f64();
        let records = target_records(&target, &args.topic, &mut parts);
        if exit.is_none() {
            exit = child.try_wait()?;
        }
        let cpu = if exit.is_none() {
            rss = peak_rss_kib(pid).unwrap_or(rss);
            cpu_seconds(pid, hz)
        } else {
            None
        };
        // After the copier exited its last figure stands.
        let (cpu, sys) = cpu
            .or(copier.last().map(|s| (s.cpu, s.sys)))
            .unwrap_or((0.0, 0.0));
        copier.push(Sample {
            t,
            records,
            cpu,
            sys,
        });
        for (i, p) in args.pid.iter().enumerate() {
            let (cpu, sys) = cpu_seconds(*p, hz).unwrap_or((0.0, 0.0));
            others[i].push(Sample {
                t,
                records,
                cpu,
                sys,
            });
        }
        if first_record.is_none() && records > 0 {
            first_record = Some(t);
        }
        if let (None, Some(c)) = (first_commit, &source) {
            if commit_tpl.count() > 0 {
                if let Ok(got) = c.committed_offsets(commit_tpl.clone(), Duration::from_secs(5)) {
                    if got
                        .elements()
                        .iter()
                        .any(|e| matches!(e.offset(), Offset::Offset(o) if o > 0))
                    {
                        first_commit = Some(started.elapsed().as_secs_f64());
                    }
                }
            }
        }
        if let Some(f) = samples_out.as_mut() {
            let brokers: Vec<f64> = others
                .iter()
                .map(|s| s.last().map_or(0.0, |s| s.cpu))
                .collect();
            let brokers_sys: Vec<f64> = others
                .iter()
                .map(|s| s.last().map_or(0.0, |s| s.sys))
                .collect();
            writeln!(
                f,
                "{}",
                json!({"t": t, "records": records, "cpu": cpu, "pids": brokers, "pids_sys": brokers_sys})
            )?;
        }
        let done = records >= args.records;
        let stop_due = match &args.stop_file {
            Some(f) => std::path::Path::new(f).exists(),
            None => args.stop && done,
        };
        if stop_due && !stopped && exit.is_none() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            stopped = true;
        }
        if exit.is_some() && (done || stopped) {
            break;
        }
        if exit.is_some() && !done {
            // Exited before the target held every record: what it holds is read once more.
            if target_records(&target, &args.topic, &mut parts) < args.records {
                bail!(
                    "the copier exited ({:?}) with {records} of {} records on the target",
                    exit,
                    args.records
                );
            }
        }
        if t > args.timeout as f64 {
            let _ = child.kill();
            bail!(
                "{records} of {} records after {} s",
                args.records,
                args.timeout
            );
        }
        std::thread::sleep(Duration::from_millis(args.interval_ms));
    }
    let code = exit.and_then(|e| e.code());
    let n = args.records as f64;
    let (t20, c20) = at(&copier, 0.2 * n, |s| s.cpu).context("no sample at 20 %")?;
    let (t80, c80) = at(&copier, 0.8 * n, |s| s.cpu).context("no sample at 80 %")?;
    let window = t80 - t20;
    let over_window = |pick: fn(&Sample) -> f64| -> Vec<f64> {
        others
            .iter()
            .map(|s| {
                let a = at(s, 0.2 * n, pick).map_or(0.0, |v| v.1);
                let b = at(s, 0.8 * n, pick).map_or(0.0, |v| v.1);
                b - a
            })
            .collect()
    };
    let brokers = over_window(|s| s.cpu);
    let brokers_sys = over_window(|s| s.sys);
    let done_at = copier
        .iter()
        .find(|s| s.records >= args.records)
        .map(|s| s.t);
    let win_records = 0.6 * n;
    let win_gb = win_records * args.bytes_per_record as f64 / 1e9;
    println!(
        "{}",
        json!({
            "exit": code,
            "stopped": stopped,
            "seconds": done_at,
            "first_record_s": first_record,
            "first_commit_s": first_commit,
            "samples": copier.len(),
            "window": {
                "from_s": t20, "to_s": t80, "seconds": window,
                "records_per_s": win_records / window,
                "mb_per_s": win_gb * 1e3 / window,
                "copier_cpu_s": c80 - c20,
                "copier_cpu_s_per_gb": (c80 - c20) / win_gb,
                "pids_cpu_s": brokers,
                "pids_cpu_s_per_gb": brokers.iter().map(|c| c / win_gb).collect::<Vec<_>>(),
                "pids_sys_cpu_s": brokers_sys,
                "pids_sys_cpu_s_per_gb": brokers_sys.iter().map(|c| c / win_gb).collect::<Vec<_>>(),
            },
            "copier_cpu_s": copier.last().map_or(0.0, |s| s.cpu),
            "peak_rss_kib": rss,
        })
    );
    Ok(())
}
