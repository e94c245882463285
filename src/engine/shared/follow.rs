//! Following the source's topics while copying (`--refresh-topics`), what both engines do
//! alike: look, tell the user what changed on the target, take the new routes in, and know
//! for a while after a deletion that the source's errors about that topic are echoes. What
//! each engine then reads anew is its own (a new subscription, or a rewind).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use rdkafka::producer::{BaseProducer, ProducerContext};

use crate::error::Result;
use crate::options::RunOptions;
use crate::preflight::{self, Refresh};
use crate::report::Counters;
use crate::target;
use crate::topics::Route;

/// After a deleted topic was dropped, errors the consumer had already queued for it are
/// expected for this long.
const DELETED_ECHO: Duration = Duration::from_secs(10);

/// The routes a run copies, as discovery changes them.
pub(in crate::engine) struct Followed {
    pub(in crate::engine) routes: Vec<Route>,
    /// New source topics not copied (target missing), warned about once.
    skipped: BTreeSet<String>,
    /// When a deleted source topic was last dropped.
    last_deleted: Option<Instant>,
}

impl Followed {
    pub(in crate::engine) fn new(routes: Vec<Route>) -> Self {
        Followed {
            routes,
            skipped: BTreeSet::new(),
            last_deleted: None,
        }
    }

    /// Looks at both clusters again and tells the user what changed on the target and what
    /// to know of the new topics. `Some` when the routes changed: the caller reads them with
    /// [`Followed::adopt`]. An error ends the run with its own kind.
    pub(in crate::engine) fn look<C: ProducerContext>(
        &mut self,
        opts: &RunOptions,
        counters: &Counters,
        producer: &BaseProducer<C>,
    ) -> Result<Option<Refresh>> {
        let mut found = preflight::refresh(opts, &self.routes, &mut self.skipped)?;
        crate::engine::announce(counters, std::mem::take(&mut found.changes));
        for n in std::mem::take(&mut found.notes) {
            crate::progress::say(&format!("kreplicate: {n}"));
        }
        for w in std::mem::take(&mut found.warnings) {
            counters.notice(w);
        }
        if let Some(w) = target::outgrown(producer, found.size_limit) {
            counters.notice(w);
        }
        Ok(found.changed.then_some(found))
    }

    /// Copies `found`'s routes from now on (the producer learns the new target topics);
    /// `deleted` when a topic the engine read was dropped. True when a source error just
    /// seen is explained by a deleted topic.
    pub(in crate::engine) fn adopt<C: ProducerContext>(
        &mut self,
        found: Refresh,
        deleted: bool,
        producer: &BaseProducer<C>,
        timeout: Duration,
    ) -> bool {
        if deleted {
            self.last_deleted = Some(Instant::now());
        }
        if !found.added.is_empty() {
            if let Err(e) = target::warm_up(producer, &found.added, timeout) {
                log::warn!("{e}");
            }
        }
        self.routes = found.routes;
        deleted || self.echo()
    }

    /// True for a while after a deleted topic was dropped (see [`DELETED_ECHO`]).
    pub(in crate::engine) fn echo(&self) -> bool {
        self.last_deleted
            .is_some_and(|at| at.elapsed() < DELETED_ECHO)
    }
}
