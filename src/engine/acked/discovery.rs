//! Which source partitions the at-least-once engine reads, and following the source's topics
//! while it copies (`--refresh-topics`): new routes are added, deleted topics dropped, and
//! the consumer reads the new set. Under a group, a new subscription makes the group
//! rebalance (the revoke flushes, verifies and commits as always); under `--shard`, the
//! engine revokes its own assignment the same way and assigns the new one.

use std::time::Instant;

use rdkafka::consumer::Consumer;
use rdkafka::TopicPartitionList;

use super::rebalance::SourceConsumer;
use super::state::Shared;
use super::Acked;
use crate::options::RunOptions;
use crate::topics::{self, Route};

impl Acked {
    /// Subscribes to (group) or assigns (`--shard`) the source partitions of the routes.
    pub(super) fn read_routes(&self) {
        if let Some(shard) = self.opts.shard {
            let mut tpl = TopicPartitionList::new();
            // A shard may own none of the partitions left after a deletion: it then idles.
            for (r, p) in topics::owned(&shard, &self.followed.routes).unwrap_or_default() {
                tpl.add_partition(&r.source, p);
            }
            self.consumer.context().assign(&self.consumer, &tpl);
            return;
        }
        if self.followed.routes.is_empty() {
            self.consumer.unsubscribe();
            return;
        }
        let topics: Vec<&str> = self
            .followed
            .routes
            .iter()
            .map(|r| r.source.as_str())
            .collect();
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
        let looked = self
            .followed
            .look(&self.opts, &self.shared.counters, &self.producer);
        let found = match looked {
            Ok(Some(found)) => found,
            Ok(None) => return self.followed.echo(),
            Err(e) => {
                self.shared.lock().failure.fail_with(e);
                return false;
            }
        };
        let deleted = self
            .followed
            .routes
            .iter()
            .any(|r| !found.routes.iter().any(|x| x.source == r.source));
        for r in &found.added {
            self.shared.add_route(&r.source, &r.target);
        }
        if self.opts.shard.is_some() {
            if let Ok(current) = self.consumer.assignment() {
                self.consumer.context().revoke(&self.consumer, &current);
            }
        }
        let explained = self
            .followed
            .adopt(found, deleted, &self.producer, self.opts.timeout);
        self.read_routes();
        explained
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
    match crate::preflight::follow_assigned(opts, &beyond) {
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
