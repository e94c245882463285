//! A migration's state, kept on its target cluster in the compacted topic [`STATE_TOPIC`] (one
//! record per migration, keyed by its id): whichever machine runs `migrate` next reads where
//! the last run stopped, so a `kill -9` at any stage resumes there.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Message, Offset, TopicPartitionList};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kafka::{self, consumer::close};
use crate::options::ClusterSpec;
use crate::topics::admin;

/// The compacted topic on the target that holds every migration's state (`__`: never matched
/// by a `--topics` regex, so no copy takes it along).
pub const STATE_TOPIC: &str = "__kreplicate.migrations";

/// Bumped when a field changes meaning; a newer state is refused rather than misread.
const STATE_VERSION: u32 = 1;

/// The stages, in order; a run starts at the stored one and never skips one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Checked and recorded; nothing copied yet.
    Planned,
    /// Copying while the writers still write, until the lag is under `--max-lag`.
    Copying,
    /// The operator must stop the producers writing to the source topics.
    WaitingForWriters,
    /// The writers stopped at `final_ends`: copying to them, then verifying.
    Draining,
    /// The target holds every record up to `final_ends`: the groups move next.
    Verified,
    /// The groups moved: the applications may follow.
    Done,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Planned => "planned",
            Stage::Copying => "copying",
            Stage::WaitingForWriters => "waiting-for-writers",
            Stage::Draining => "draining",
            Stage::Verified => "verified",
            Stage::Done => "done",
        }
    }

    /// Its place among the stages, for `stage 3/6`.
    pub fn number(self) -> usize {
        self as usize + 1
    }
}

/// Which way a migration copies: A → B, or back (`--failback`) after A → B was done.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    Forward,
    Failback,
}

/// One consumer group's position as the groups stage moved it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovedPosition {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub source_position: Option<i64>,
    pub target_position: Option<i64>,
    pub status: String,
}

/// Everything a later run needs to go on: the facts each stage established.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub version: u32,
    pub id: String,
    pub direction: Direction,
    /// The clusters' ids (or config-file ids): a migration belongs to one pair.
    pub source_cluster: String,
    pub target_cluster: String,
    /// `--topics`, `--exclude` and `--rename` as first given: a rerun must move the same.
    pub topics: String,
    pub exclude: Option<String>,
    pub rename: String,
    /// The guarantee chosen at the start; every stage copies with it.
    pub guarantee: String,
    /// The copy's source consumer group (at-least-once keeps its positions there).
    pub group: String,
    pub stage: Stage,
    /// When a stage last ended, RFC 3339.
    pub updated: String,
    /// `topic/partition` → the source's end once the writers stopped (from `draining` on).
    pub final_ends: BTreeMap<String, i64>,
    /// What the groups stage committed (from `done` on).
    pub groups: Vec<MovedPosition>,
}

impl State {
    /// The record's key: one migration of an id each way.
    pub fn key(id: &str, direction: Direction) -> String {
        match direction {
            Direction::Forward => id.to_string(),
            Direction::Failback => format!("{id}/failback"),
        }
    }

    pub fn new(base: State) -> Self {
        Self {
            version: STATE_VERSION,
            ..base
        }
    }

    pub fn stamp(&mut self) {
        self.updated = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    }
}

/// The state topic of one cluster.
pub struct Store<'a> {
    spec: &'a ClusterSpec,
    timeout: Duration,
}

impl<'a> Store<'a> {
    pub fn new(spec: &'a ClusterSpec, timeout: Duration) -> Self {
        Self { spec, timeout }
    }

    /// The latest state stored under `key`; `None` when there is none (or no state topic yet).
    pub fn read(&self, key: &str, topic_exists: bool) -> Result<Option<State>> {
        if !topic_exists {
            return Ok(None);
        }
        let consumer: BaseConsumer = kafka::reader_config(self.spec, "kreplicate.migrate", &[])
            .create()
            .map_err(|e| kafka::creation_error("target", e))?;
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(STATE_TOPIC, 0, Offset::Beginning)
            .map_err(|e| Error::failed(format!("cannot read {STATE_TOPIC}: {e}")))?;
        consumer
            .assign(&tpl)
            .map_err(|e| Error::failed(format!("cannot read {STATE_TOPIC}: {e}")))?;
        let deadline = Instant::now() + self.timeout;
        let mut found: Option<Vec<u8>> = None;
        let outcome = loop {
            if Instant::now() > deadline {
                break Err(Error::failed(format!(
                    "cannot read the migration state ({STATE_TOPIC} on '{}') within {:?}",
                    self.spec.name, self.timeout
                )));
            }
            match consumer.poll(Duration::from_millis(100)) {
                None => {}
                Some(Err(KafkaError::PartitionEOF(_))) => break Ok(()),
                Some(Err(e)) => {
                    break Err(Error::failed(format!(
                        "cannot read the migration state ({STATE_TOPIC} on '{}'): {e}",
                        self.spec.name
                    )))
                }
                // A tombstone forgets the migration.
                Some(Ok(m)) if m.key() == Some(key.as_bytes()) => {
                    found = m.payload().map(<[u8]>::to_vec);
                }
                Some(Ok(_)) => {}
            }
        };
        close(&consumer, Duration::from_secs(1));
        outcome?;
        let Some(bytes) = found else {
            return Ok(None);
        };
        let state: State = serde_json::from_slice(&bytes).map_err(|e| {
            Error::usage(format!(
                "the migration state of '{key}' in {STATE_TOPIC} on '{}' is not one kreplicate {} reads: {e}",
                self.spec.name,
                env!("CARGO_PKG_VERSION")
            ))
        })?;
        if state.version > STATE_VERSION {
            return Err(Error::usage(format!(
                "the migration state of '{key}' was written by a newer kreplicate (state version {}): run that one",
                state.version
            )));
        }
        Ok(Some(state))
    }

    /// Stores `state` (acknowledged by every in-sync replica) before the run goes on.
    pub fn write(&self, state: &State, topic_exists: bool, replication: Option<i32>) -> Result<()> {
        if !topic_exists {
            self.create(replication)?;
        }
        let value = serde_json::to_vec(state)
            .map_err(|e| Error::failed(format!("cannot encode the migration state: {e}")))?;
        let key = State::key(&state.id, state.direction);
        let producer: FutureProducer = kafka::admin_config(self.spec)
            .set("acks", "all")
            .set("enable.idempotence", "true")
            .set("message.timeout.ms", self.timeout.as_millis().to_string())
            .create()
            .map_err(|e| kafka::creation_error("target", e))?;
        let record = FutureRecord::to(STATE_TOPIC)
            .key(&key)
            .payload(&value)
            .partition(0);
        let delivered = match producer.send_result(record) {
            Ok(delivery) => {
                match admin::block_on(delivery, self.timeout + Duration::from_secs(1)) {
                    Some(Ok(Ok(_))) => Ok(()),
                    Some(Ok(Err((e, _)))) => Err(e.to_string()),
                    _ => Err(format!("no acknowledgement within {:?}", self.timeout)),
                }
            }
            Err((e, _)) => Err(e.to_string()),
        };
        delivered.map_err(|why| {
            Error::failed(format!(
                "cannot store the migration state in {STATE_TOPIC} on '{}': {why}",
                self.spec.name
            ))
        })
    }

    fn create(&self, replication: Option<i32>) -> Result<()> {
        let admin = admin::admin(self.spec, "target")?;
        let topic = NewTopic::new(
            STATE_TOPIC,
            1,
            TopicReplication::Fixed(replication.unwrap_or(-1)),
        )
        .set("cleanup.policy", "compact");
        let opts = AdminOptions::new().operation_timeout(Some(self.timeout));
        let made = admin::block_on(admin.create_topics([&topic], &opts), self.timeout);
        let refused = |why: String| {
            Error::failed(format!(
                "cannot create {STATE_TOPIC} on '{}' for the migration state: {why}",
                self.spec.name
            ))
        };
        match made {
            Some(Ok(r)) => match r.into_iter().next() {
                Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) | Some(Ok(_)) | None => Ok(()),
                Some(Err((_, RDKafkaErrorCode::TopicAuthorizationFailed)))
                | Some(Err((_, RDKafkaErrorCode::ClusterAuthorizationFailed))) => {
                    Err(Error::usage(format!(
                        "the target cluster '{}' does not let kreplicate create {STATE_TOPIC} (the migration state): grant CREATE on it, or create it (1 partition, cleanup.policy=compact)",
                        self.spec.name
                    )))
                }
                Some(Err((_, code))) => Err(refused(code.to_string())),
            },
            Some(Err(e)) => Err(refused(e.to_string())),
            None => Err(refused("timed out".into())),
        }
    }
}
