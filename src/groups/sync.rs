//! A copy run's continuous group sync (`--sync-groups`): while the copy runs, every
//! `--sync-groups-interval` and once more when it ends, the selected groups are translated and
//! committed on the target as `kreplicate groups` does (never moving one back), so that in a
//! failover the target's groups are within one interval of where the applications stopped.

use std::sync::Arc;
use std::thread::JoinHandle;

use super::{translate, Request, Selection};
use crate::options::RunOptions;
use crate::progress;
use crate::report::Counters;
use crate::stop::Stop;

/// The sync thread of a copy run.
pub struct Syncer {
    done: Arc<Stop>,
    handle: Option<JoinHandle<()>>,
}

impl Syncer {
    /// Starts syncing `selection` every `opts.sync_groups_interval`.
    /// Each round's outcome goes to `counters` (the summary, the JSON, the metric).
    pub fn start(opts: &RunOptions, selection: Selection, counters: Arc<Counters>) -> Syncer {
        let done = Arc::new(Stop::default());
        let (opts, flag) = (opts.clone(), done.clone());
        let handle = std::thread::spawn(move || {
            let mut said = String::new();
            loop {
                let last = flag.wait(opts.sync_groups_interval);
                said = round(&opts, &selection, said, &counters);
                if last {
                    return;
                }
            }
        });
        Syncer {
            done,
            handle: Some(handle),
        }
    }

    /// One last round now that the copy ended (its positions are final), then stop.
    pub fn finish(mut self) {
        self.done.raise();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// One translation round; says what went wrong when it differs from the last round's
/// (`said`), so that a group refused for an hour is one line, not one every interval.
fn round(opts: &RunOptions, selection: &Selection, said: String, counters: &Counters) -> String {
    let req = Request {
        from: &opts.from,
        to: &opts.to,
        topics: &opts.topics,
        exclude: opts.exclude.as_ref(),
        rename: &opts.rename,
        selection,
        strict: false,
        dry_run: false,
        allow_rewind: false,
        timeout: opts.timeout,
    };
    let translated = translate(&req);
    counters.group_sync_round(match &translated {
        Ok(report) => Ok(report
            .groups
            .iter()
            .map(|g| (g.group.clone(), g.reason.clone()))
            .collect()),
        Err(e) => Err(e.to_string()),
    });
    let now = match translated {
        Ok(report) => {
            let moved = report.groups.iter().filter(|g| g.committed).count();
            log::info!("--sync-groups: committed {moved} groups on the target");
            report
                .groups
                .iter()
                .filter_map(|g| {
                    g.reason
                        .as_ref()
                        .map(|r| format!("group '{}' not synced: {r}", g.group))
                })
                .collect::<Vec<_>>()
                .join("; ")
        }
        Err(e) => format!("cannot sync groups: {e}"),
    };
    if !now.is_empty() && now != said {
        progress::say(&format!("kreplicate: warning: --sync-groups: {now}"));
    }
    now
}
