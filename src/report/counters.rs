//! Live counters: the engines publish, other threads read (the progress display, the metrics
//! exporter, the demo). Readers only ever take short locks, so a scrape never holds up the
//! loop or its final commit.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::group_sync::GroupSync;
use super::in_flight::{InFlight, Stall};
use super::partition::PartitionEnd;
use crate::topics::TargetChanges;

#[derive(Debug)]
pub struct Counters {
    /// Records acknowledged by the target.
    pub records: AtomicU64,
    /// Key + value bytes acknowledged by the target.
    pub bytes: AtomicU64,
    /// Source partitions assigned to this process.
    pub assigned: AtomicU64,
    /// Of those, partitions with a committed position.
    pub committed: AtomicU64,
    /// Source records not copied because their origin names the target cluster (loops).
    pub skipped: AtomicU64,
    /// Records copied without the origin header: with it they exceeded the target's size limit.
    pub unstamped: AtomicU64,
    /// Deliveries the target failed (each fails an at-least-once run, and aborts an
    /// exactly-once transaction).
    pub delivery_errors: AtomicU64,
    /// Produce requests librdkafka sent again (its statistics), while metrics are on.
    pub retries: AtomicU64,
    /// Partition assignments the consumer group handed this process.
    pub rebalances: AtomicU64,
    pub transactions_committed: AtomicU64,
    pub transactions_aborted: AtomicU64,
    /// Unix time in milliseconds of the last successful commit; 0 before the first.
    pub last_commit_ms: AtomicU64,
    /// Unix time in milliseconds of the last success (see [`Counters::note_covered`]); 0 when
    /// neither this run nor, with `--metrics-file`, an earlier one had one.
    pub last_success_ms: AtomicU64,
    /// Microseconds the read side waited for `--max-bytes-per-sec`/`--max-records-per-sec`.
    pub throttled_us: AtomicU64,
    /// The run holds its share of the source partitions: the group's assignment (or an
    /// empty share the group answered), a shard's, exactly-once's; false while it waits.
    pub holding: AtomicBool,
    /// Warnings raised while copying (e.g. a source topic deleted), not yet printed.
    notices: Mutex<Vec<String>>,
    /// What the run waits for before it can copy (e.g. a group's assignment), if anything.
    waiting: Mutex<Option<String>>,
    /// The source group once the run named it (a default one after the target's identity).
    group: Mutex<Option<String>>,
    /// Target topics created and partitions added (`--create-topics`), for the summary.
    changes: Mutex<TargetChanges>,
    /// `--sync-groups`: what the sync did so far.
    group_sync: Mutex<Option<GroupSync>>,
    live: Mutex<Live>,
    /// Records sent to the target and not yet acknowledged.
    in_flight: Mutex<InFlight>,
    /// Target partitions with a failed delivery, for the failure's message.
    undelivered: Mutex<BTreeMap<String, BTreeSet<i32>>>,
}

/// The loop's last published view of its partitions.
#[derive(Debug)]
struct Live {
    partitions: BTreeMap<(String, i32), PartitionEnd>,
    /// `records` at the last publish that saw it move.
    seen: u64,
    /// When the loop last copied something or was idle with nothing to copy.
    progressed: Instant,
    /// While the engine's start steps run: the bound of their timeouts.
    starting_until: Option<Instant>,
    /// When this run last succeeded (at first, when it began).
    succeeded: Instant,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not turn every later read into another panic.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Counters {
    pub fn set_waiting(&self, what: Option<String>) {
        *lock(&self.waiting) = what;
    }

    /// The source group, once named: a default one is named only after the target answered,
    /// later than the run's identity (`Identity::of`) is taken.
    pub fn set_group(&self, group: &str) {
        *lock(&self.group) = Some(group.to_string());
    }

    pub fn group(&self) -> Option<String> {
        lock(&self.group).clone()
    }

    /// The last phase: committing what was copied (after a first signal: stopping).
    pub fn finishing(&self, stopped: bool) {
        self.set_waiting(Some(
            if stopped {
                "stopping: flushing, verifying and committing"
            } else {
                "committing"
            }
            .into(),
        ));
    }

    pub fn waiting(&self) -> Option<String> {
        lock(&self.waiting).clone()
    }

    /// A warning for the user, printed by the progress display's thread.
    pub fn notice(&self, line: String) {
        lock(&self.notices).push(line);
    }

    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.notices))
    }

    /// The run created target topics or added partitions.
    pub fn target_changed(&self, changes: TargetChanges) {
        lock(&self.changes).extend(changes);
    }

    pub fn target_changes(&self) -> TargetChanges {
        lock(&self.changes).clone()
    }

    /// The read side waited `d` for a rate limit.
    /// One `--sync-groups` round's outcome (see [`GroupSync::round`]).
    pub fn group_sync_round(&self, outcome: Result<Vec<(String, Option<String>)>, String>) {
        lock(&self.group_sync)
            .get_or_insert_with(GroupSync::default)
            .round(outcome);
    }

    pub fn group_sync(&self) -> Option<GroupSync> {
        lock(&self.group_sync).clone()
    }

    pub fn add_throttled(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.throttled_us.fetch_add(us, Ordering::Relaxed);
    }

    pub fn throttled_seconds(&self) -> f64 {
        self.throttled_us.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// The loop's view of its partitions, with `in_flight` records sent and not yet
    /// acknowledged. The loop counts as progressing when records were acknowledged since the
    /// last publish, or when it has nothing to copy and nothing in flight.
    pub fn publish(&self, partitions: BTreeMap<(String, i32), PartitionEnd>, in_flight: usize) {
        let records = self.records.load(Ordering::Relaxed);
        let idle = in_flight == 0 && partitions.values().all(|p| p.lag().unwrap_or(0) == 0);
        let mut live = lock(&self.live);
        if records != live.seen || idle {
            live.seen = records;
            live.progressed = Instant::now();
            live.starting_until = None;
        }
        live.partitions = partitions;
    }

    pub fn partitions(&self) -> BTreeMap<(String, i32), PartitionEnd> {
        lock(&self.live).partitions.clone()
    }

    /// How long since the loop last made progress (see [`Counters::publish`]).
    pub fn stalled_for(&self) -> Duration {
        lock(&self.live).progressed.elapsed()
    }

    /// The engine's start steps (exactly-once: fencing, reading the target's tail) may take
    /// until `until`: nothing moves meanwhile, and that is no stall (issue 18). The run is
    /// starting until it first moves (see [`Counters::publish`]) or `until` passed.
    pub fn starting(&self, until: Instant) {
        lock(&self.live).starting_until = Some(until);
    }

    /// The start failed: the run is ending.
    pub fn not_starting(&self) {
        lock(&self.live).starting_until = None;
    }

    /// True while the run starts, within the bound of its start steps.
    pub fn is_starting(&self) -> bool {
        lock(&self.live)
            .starting_until
            .is_some_and(|until| Instant::now() < until)
    }

    /// A record handed to the producer for `topic[partition]` of the target.
    pub fn sent(&self, topic: &str, partition: i32) {
        let mut f = lock(&self.in_flight);
        // The last tick may be long past when nothing was in flight (the start, a wait for an
        // assignment): a stall would count from it.
        if f.count() == 0 {
            f.tick(Instant::now());
        }
        f.sent(topic, partition);
    }

    /// The target's delivery report (acknowledged or failed) for a record it was sent.
    pub fn reported(&self, topic: &str, partition: i32) {
        lock(&self.in_flight).reported(topic, partition);
    }

    /// The time stamp of the records sent from now on.
    pub fn tick(&self, now: Instant) {
        lock(&self.in_flight).tick(now);
    }

    /// Records sent and not yet acknowledged, and how long the oldest of them has waited.
    pub fn in_flight(&self) -> (u64, Option<Duration>) {
        let f = lock(&self.in_flight);
        (f.count(), f.oldest(Instant::now()))
    }

    /// Once per stall: the oldest record in flight has waited `limit`; then, that it ended.
    /// A delivery to `topic[partition]` failed (rare: a lock is fine here; a topic's name is copied once).
    pub fn failed_delivery(&self, topic: &str, partition: i32) {
        let mut failed = lock(&self.undelivered);
        match failed.get_mut(topic) {
            Some(parts) => parts.insert(partition),
            None => failed
                .entry(topic.to_string())
                .or_default()
                .insert(partition),
        };
    }

    /// An exactly-once abort handled every failed delivery so far (its rewind sends them again).
    pub fn forget_undelivered(&self) {
        lock(&self.undelivered).clear();
    }

    /// The target partitions with a failed delivery, as `topic[partition]`.
    pub fn undelivered(&self) -> Vec<String> {
        lock(&self.undelivered)
            .iter()
            .flat_map(|(t, parts)| parts.iter().map(move |p| format!("{t}[{p}]")))
            .collect()
    }

    pub fn check_stall(&self, limit: Duration) -> Option<Stall> {
        lock(&self.in_flight).check(Instant::now(), limit)
    }

    pub fn note_commit(&self) {
        self.last_commit_ms.store(unix_ms(), Ordering::Relaxed);
    }

    /// The run's positions now cover every record the target acknowledged (a commit, or
    /// nothing new to commit): a success if the copy moved, or was idle with nothing to copy,
    /// since the last one (see [`Counters::publish`]). A stalled copy has none.
    pub fn note_covered(&self) {
        let mut live = lock(&self.live);
        if live.progressed > live.succeeded {
            live.succeeded = Instant::now();
            self.last_success_ms.store(unix_ms(), Ordering::Relaxed);
        }
    }

    /// The run ended without a failure: flushed, verified and committed.
    pub fn note_success(&self) {
        lock(&self.live).succeeded = Instant::now();
        self.last_success_ms.store(unix_ms(), Ordering::Relaxed);
    }
}

impl Default for Counters {
    fn default() -> Self {
        let now = Instant::now();
        Counters {
            records: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            assigned: AtomicU64::new(0),
            committed: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            unstamped: AtomicU64::new(0),
            delivery_errors: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            rebalances: AtomicU64::new(0),
            transactions_committed: AtomicU64::new(0),
            transactions_aborted: AtomicU64::new(0),
            last_commit_ms: AtomicU64::new(0),
            last_success_ms: AtomicU64::new(0),
            throttled_us: AtomicU64::new(0),
            holding: AtomicBool::new(false),
            notices: Mutex::new(Vec::new()),
            waiting: Mutex::new(None),
            group: Mutex::new(None),
            changes: Mutex::new(TargetChanges::default()),
            group_sync: Mutex::new(None),
            live: Mutex::new(Live {
                partitions: BTreeMap::new(),
                seen: 0,
                progressed: now,
                starting_until: None,
                succeeded: now,
            }),
            in_flight: Mutex::new(InFlight::new(Instant::now())),
            undelivered: Mutex::new(BTreeMap::new()),
        }
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_30_a_first_send_waits_from_when_it_was_sent_not_from_the_runs_start() {
        let c = Counters::default();
        // The run's start: checking the clusters, a wait for the group (35 s in a loaded
        // three-node test, told as a stall of the target's).
        std::thread::sleep(Duration::from_millis(1200));
        c.sent("t", 0);
        assert_eq!(c.check_stall(Duration::from_secs(1)), None);
        let (n, oldest) = c.in_flight();
        assert!(
            n == 1 && oldest < Some(Duration::from_secs(1)),
            "{oldest:?}"
        );
    }

    #[test]
    fn issue_22_a_success_needs_a_copy_that_moved_or_had_nothing_to_copy() {
        let c = Counters::default();
        let parts = |p: PartitionEnd| BTreeMap::from([(("t".to_string(), 0), p)]);
        let behind = PartitionEnd {
            position: Some(0),
            end_offset: Some(5),
            ..PartitionEnd::default()
        };
        let success = || c.last_success_ms.load(Ordering::Relaxed);
        // Records wait and none moved: covered positions are no success.
        c.publish(parts(behind), 3);
        c.note_covered();
        assert_eq!(success(), 0, "stalled from the start");
        // Records moved.
        c.records.store(2, Ordering::Relaxed);
        c.publish(parts(behind), 3);
        c.note_covered();
        let first = success();
        assert!(first > 0);
        // Stalled since: no new success however often positions are covered.
        std::thread::sleep(Duration::from_millis(5));
        c.publish(parts(behind), 3);
        c.note_covered();
        assert_eq!(success(), first);
        // Idle with nothing to copy is a success.
        let done = PartitionEnd {
            position: Some(5),
            ..behind
        };
        c.publish(parts(done), 0);
        c.note_covered();
        assert!(success() > first);
        // The end of a run without a failure is one, whatever came before.
        let before = success();
        std::thread::sleep(Duration::from_millis(5));
        c.note_success();
        assert!(success() > before);
    }

    #[test]
    fn the_loop_progresses_when_records_move_or_nothing_is_left() {
        let c = Counters::default();
        let behind = PartitionEnd {
            position: Some(0),
            end_offset: Some(5),
            ..PartitionEnd::default()
        };
        let parts = |p: PartitionEnd| BTreeMap::from([(("t".to_string(), 0), p)]);
        std::thread::sleep(Duration::from_millis(20));
        c.publish(parts(behind), 3);
        assert!(
            c.stalled_for() >= Duration::from_millis(20),
            "nothing moved"
        );
        c.records.store(2, Ordering::Relaxed);
        c.publish(parts(behind), 3);
        assert!(c.stalled_for() < Duration::from_millis(20), "records moved");
        std::thread::sleep(Duration::from_millis(20));
        let done = PartitionEnd {
            position: Some(5),
            ..behind
        };
        c.publish(parts(done), 0);
        assert!(
            c.stalled_for() < Duration::from_millis(20),
            "idle at the end"
        );
    }

    #[test]
    fn issue_18_a_run_is_starting_until_it_first_moves_or_its_bound_passed() {
        let c = Counters::default();
        assert!(!c.is_starting());
        c.starting(Instant::now() + Duration::from_secs(60));
        assert!(c.is_starting());
        let behind = PartitionEnd {
            position: Some(1),
            end_offset: Some(5),
            ..PartitionEnd::default()
        };
        let parts = |p: PartitionEnd| BTreeMap::from([(("t".to_string(), 0), p)]);
        c.publish(parts(behind), 3);
        assert!(c.is_starting(), "nothing moved yet");
        c.records.store(1, Ordering::Relaxed);
        c.publish(parts(behind), 3);
        assert!(!c.is_starting(), "the first record");
        c.starting(Instant::now());
        assert!(!c.is_starting(), "past its bound");
    }
}
