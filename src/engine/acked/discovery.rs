//! Which source partitions the at-least-once engine reads, and following the source's topics
//! while it copies (`--refresh-topics`): new routes are added, deleted topics dropped, and
//! the consumer reads the new set. Under a group, a new subscription makes the group
//! rebalance (the revoke flushes, verifies and commits as always); under `--shard`, the
//! engine revokes its own assignment the same way and assigns the new one.

use std::time::{Duration, Instant};

use rdkafka::consumer::Consumer;
use rdkafka::TopicPartitionList;

use super::callbacks::SourceConsumer;
use super::state::Shared;
use super::Acked;
use crate::options::RunOptions;
use crate::target;
use crate::topics::{self, Route};

/// After a deleted topic was dropped, errors the consumer had already queued for it are
/// expected for this long.
const DELETED_ECHO: Duration = Duration::from_secs(10);

impl Acked {
    /// Subscribes to (group) or assigns (`--shard`) the source partitions of the routes.
    pub(super) fn read_routes(&self) {
        if let Some(shard) = self.opts.shard {
            let mut tpl = TopicPartitionList::new();
            // A shard may own none of the partitions left after a deletion: it then idles.
            for (r, p) in topics::owned(&shard, &self.routes).unwrap_or_default() {
                tpl.add_partition(&r.source, p);
            }
            self.consumer.context().assign(&self.consumer, &tpl);
            return;
        }
        if self.routes.is_empty() {
            self.consumer.unsubscribe();
            return;
        }
        let topics: Vec<&str> = self.routes.iter().map(|r| r.source.as_str()).collect();
        self.shared.lock().waiting_since = Some(Instant::now());
        if let Err(e) = self.consumer.subscribe(&topics) {
            self.shared
                .lock()
                .failure
                .fail(format!("cannot subscribe to the source topics: {e}"));
        }
    }

    /// Looks at the source's topics again and reads the new set when it changed. True when
    /// the source error just seen is explained by a deleted topic.
    pub(super) fn refresh_topics(&mut self) -> bool {
        let found = match topics::refresh(&self.opts, &self.routes, &mut self.skipped) {
            Ok(found) => found,
            Err(e) => {
                self.shared.lock().failure.fail_with(e);
                return false;
            }
        };
        crate::engine::announce(&self.shared.counters, found.changes);
        for w in found.warnings {
            self.shared.counters.notice(w);
        }
        if let Some(w) = target::outgrown(&self.producer, found.size_limit) {
            self.shared.counters.notice(w);
        }
        if !found.changed {
            return self
                .last_deleted
                .is_some_and(|at| at.elapsed() < DELETED_ECHO);
        }
        let deleted = self
            .routes
            .iter()
            .any(|r| !found.routes.iter().any(|x| x.source == r.source));
        if deleted {
            self.last_deleted = Some(Instant::now());
        }
        for r in &found.added {
            self.shared.add_route(&r.source, &r.target);
        }
        if !found.added.is_empty() {
            if let Err(e) = target::warm_up(&self.producer, &found.added, self.opts.timeout) {
                log::warn!("{e}");
            }
        }
        if self.opts.shard.is_some() {
            if let Ok(current) = self.consumer.assignment() {
                self.consumer.context().revoke(&self.consumer, &current);
            }
        }
        self.routes = found.routes;
        self.read_routes();
        deleted
            || self
                .last_deleted
                .is_some_and(|at| at.elapsed() < DELETED_ECHO)
    }
}

/// Runs the growth check for assigned source partitions beyond the routes' counts, and
/// follows them (the consumer already reads them: no new subscription). False when the run
/// failed.
pub(super) fn follow_assigned(
    consumer: &SourceConsumer,
    opts: &RunOptions,
    routes: &mut [Route],
    shared: &Shared,
) -> bool {
    let Ok(assigned) = consumer.assignment() else {
        return true;
    };
    let elements = assigned.elements();
    // Each route with at least as many partitions as the highest assigned one needs.
    let beyond: Vec<Route> = routes
        .iter()
        .filter_map(|r| {
            let need = elements
                .iter()
                .filter(|e| e.topic() == r.source)
                .map(|e| e.partition() + 1)
                .max()?;
            (need > r.partitions).then(|| Route {
                partitions: need,
                ..r.clone()
            })
        })
        .collect();
    if beyond.is_empty() {
        return true;
    }
    match topics::follow_assigned(opts, &beyond) {
        Ok((grown, notices, changes)) => {
            crate::engine::announce(&shared.counters, changes);
            for g in grown {
                if let Some(r) = routes.iter_mut().find(|r| r.source == g.source) {
                    r.partitions = g.partitions;
                }
            }
            for n in notices {
                shared.counters.notice(n);
            }
            true
        }
        Err(e) => {
            shared.lock().failure.fail_with(e);
            false
        }
    }
}
