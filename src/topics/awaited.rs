//! A continuous run whose `--topics` regex matches no source topic yet (issue 35, item 12):
//! the start waits for one instead of exiting 2, which systemd's
//! `RestartPreventExitStatus=2` never restarts once the topics appear.

use super::metadata;
use crate::error::Result;
use crate::options::RunOptions;

/// Whether the source holds a topic the run selects (`--topics` less `--exclude`; internal
/// topics never). One metadata request.
pub fn any_selected(opts: &RunOptions) -> Result<bool> {
    let (_, topics) = metadata(&opts.from, "source", "--from", opts.timeout)?;
    Ok(topics.keys().any(|t| {
        !t.starts_with("__")
            && opts.topics.matches(t)
            && !opts.exclude.as_ref().is_some_and(|x| x.matches(t))
    }))
}
