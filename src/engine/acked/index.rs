//! The at-least-once engine's entries in the positions index on the target (see
//! [`crate::trail`]), written with each commit.

use std::sync::atomic::{AtomicBool, Ordering};

use super::state::index_entries;
use super::Acked;
use crate::engine::shared::index;
use crate::target::{self, NotSent};

impl Acked {
    /// Tells the positions index on the target where this run's acknowledged records are
    /// (entries go out with the next deliveries; a lost entry only widens a later lookup).
    pub(super) fn write_index(&self, stop: &AtomicBool) {
        let Some(stamp) = self.stamp.as_ref().filter(|_| self.shared.index.on()) else {
            return;
        };
        for (key, value) in index_entries(&self.shared, &stamp.source) {
            let record = index::record(&key, &value);
            let give_up = || stop.load(Ordering::Relaxed) || self.shared.lock().failure.is_set();
            if let Err(NotSent::Refused(e)) = target::send(&self.producer, record, give_up) {
                self.shared.index.refused(&e.to_string());
                return;
            }
        }
    }
}
