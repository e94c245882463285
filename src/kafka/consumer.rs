//! Assigning partitions and leaving the group: the consumer's requests beside the poll, with
//! the waits librdkafka 2.12 needs around them. Below `source` and `topics`, which both read.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaResult, RDKafkaErrorCode};
use rdkafka::TopicPartitionList;

/// Wait step while leaving the group: rust-rdkafka's drop waits in 100 ms steps.
const CLOSE_STEP: Duration = Duration::from_millis(1);

/// Leaves the group (serving the final revoke) before the consumer is dropped.
pub(crate) fn close<C: ConsumerContext>(consumer: &BaseConsumer<C>, timeout: Duration) {
    if consumer.close_queue().is_err() {
        return;
    }
    let deadline = Instant::now() + timeout;
    while !consumer.closed() && Instant::now() < deadline {
        // Records still prefetched are not ours to copy any more.
        let _ = consumer.poll(Duration::ZERO);
        std::thread::sleep(CLOSE_STEP);
    }
}

/// Assigns source partitions, reading each from scratch: librdkafka keeps an application
/// pause across assignments, so a partition `source::Ends::check` paused at its end would never be
/// fetched again after a lost assignment or an aborted transaction moved it back.
pub(crate) fn assign<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    tpl: &TopicPartitionList,
) -> KafkaResult<()> {
    consumer.assign(tpl)?;
    consumer.resume(tpl)
}

/// Moves the partitions of `tpl` to its offsets by a seek, when they are exactly the assigned
/// partitions and every one is fetching; false (some may have moved) when the caller must
/// [`assign`] instead. An assign that replaces an assignment stops each partition and starts
/// it again, and librdkafka 2.12 asks a partition whose stop is not answered yet to stop
/// twice when the assignment changes again (a second rewind, the close at exit); the second
/// answer failed its assertion `rktp->rktp_started` and aborted the process (librdkafka
/// #5573, fixed after 2.15). A seek stops nothing.
pub(crate) fn reposition<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    tpl: &TopicPartitionList,
    timeout: Duration,
) -> KafkaResult<bool> {
    let keys = |l: &TopicPartitionList| -> BTreeSet<(String, i32)> {
        let elements = l.elements();
        elements
            .iter()
            .map(|e| (e.topic().to_string(), e.partition()))
            .collect()
    };
    if keys(&consumer.assignment()?) != keys(tpl) {
        return Ok(false);
    }
    // Not fetching yet (a partition still starting) is answered per partition: assign then.
    let sought = consumer.seek_partitions(tpl.clone(), timeout)?;
    if sought.elements().iter().any(|e| e.error().is_err()) {
        return Ok(false);
    }
    // As in `assign`: an application pause outlives a seek too.
    consumer.resume(tpl)?;
    Ok(true)
}

/// Between tries of [`watermarks`].
const NOT_READY_STEP: Duration = Duration::from_millis(20);

/// One partition's (low, high) watermarks, asked again while its leader does not take requests
/// yet: Kafka answers CreateTopics, and shows the new partitions' leaders in its metadata,
/// before each leader takes requests. Asked at once, ListOffsets got "Not leader for
/// partition", which failed an exactly-once start onto 64 new partitions in four of fifteen.
/// Also while the leader's node restarts (a lost connection, a request timed out: issue 30).
pub(crate) fn watermarks<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    topic: &str,
    partition: i32,
    timeout: Duration,
) -> KafkaResult<(i64, i64)> {
    use RDKafkaErrorCode as C;
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match consumer.fetch_watermarks(topic, partition, left) {
            Err(e)
                if matches!(
                    e.rdkafka_error_code(),
                    Some(
                        C::NotLeaderForPartition
                            | C::LeaderNotAvailable
                            | C::BrokerTransportFailure
                            | C::RequestTimedOut
                            | C::NetworkException
                    )
                ) && Instant::now() + NOT_READY_STEP < deadline =>
            {
                std::thread::sleep(NOT_READY_STEP)
            }
            answer => return answer,
        }
    }
}

/// How long [`assign_with_leaders`] waits for the topics' metadata (then librdkafka finds the
/// leaders itself, later).
const LEADERS_WAIT: Duration = Duration::from_secs(5);

/// [`assign`], the topics' metadata read first. A consumer that assigns without a subscription
/// (a shard, exactly-once, `verify`'s and `plan`'s readers) knows no leader yet, and librdkafka
/// 2.12 then queries the start offset of each partition that starts at its beginning or end on
/// a timer, up to a second later ("no current leader for partition: (re)starting offset query
/// timer"): `verify` of ten records took 0.85 s.
pub(crate) fn assign_with_leaders<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    tpl: &TopicPartitionList,
) -> KafkaResult<()> {
    let topics: BTreeSet<String> = tpl
        .elements()
        .iter()
        .map(|e| e.topic().to_string())
        .collect();
    // A failure here only leaves the leaders to librdkafka.
    match topics.first() {
        Some(topic) if topics.len() == 1 => {
            let _ = consumer.fetch_metadata(Some(topic), LEADERS_WAIT);
        }
        _ => fetch_metadata_of(consumer, &topics, LEADERS_WAIT),
    }
    assign(consumer, tpl)
}

/// One Metadata request for all of `topics` (rust-rdkafka asks for one topic or the whole
/// cluster: 400 topics took 400 requests, about a second). librdkafka asks for every topic it
/// holds a handle of (these, and those the client read before), so each gets one for the
/// request.
fn fetch_metadata_of<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    topics: &BTreeSet<String>,
    wait: Duration,
) {
    let rk = consumer.client().native_ptr();
    let names: Vec<std::ffi::CString> = topics
        .iter()
        .filter_map(|t| std::ffi::CString::new(t.as_str()).ok())
        .collect();
    // SAFETY: the client pointer is valid for the consumer's lifetime; every handle made here
    // is destroyed once below, and the metadata librdkafka returns is destroyed once.
    unsafe {
        let handles: Vec<_> = names
            .iter()
            .map(|n| rdkafka_sys::rd_kafka_topic_new(rk, n.as_ptr(), std::ptr::null_mut()))
            .filter(|h| !h.is_null())
            .collect();
        let mut md: *const rdkafka_sys::rd_kafka_metadata = std::ptr::null();
        let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
        let err = rdkafka_sys::rd_kafka_metadata(rk, 0, std::ptr::null_mut(), &mut md, ms);
        if err == rdkafka_sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR && !md.is_null() {
            rdkafka_sys::rd_kafka_metadata_destroy(md);
        }
        for h in handles {
            rdkafka_sys::rd_kafka_topic_destroy(h);
        }
    }
}

/// The consumer's member id in its group (empty before the group answered it).
pub(crate) fn member_id<C: ConsumerContext>(consumer: &BaseConsumer<C>) -> String {
    let rk = consumer.client().native_ptr();
    // SAFETY: librdkafka returns a copy of the id (or NULL), read here and freed once.
    unsafe {
        let id = rdkafka_sys::rd_kafka_memberid(rk);
        if id.is_null() {
            return String::new();
        }
        let out = std::ffi::CStr::from_ptr(id).to_string_lossy().into_owned();
        rdkafka_sys::rd_kafka_mem_free(rk, id.cast());
        out
    }
}

/// The consumer's group generation: under KIP-848 the member epoch of the coordinator's last
/// heartbeat answer, above 0 once the group counts the consumer as a member (also with an
/// empty share, which no rebalance callback reports). `None` outside a group.
pub(crate) fn group_generation<C: ConsumerContext>(consumer: &BaseConsumer<C>) -> Option<i32> {
    // SAFETY: the client pointer is valid for the consumer's lifetime; librdkafka returns a
    // copy of the group metadata (or NULL), read here and destroyed once.
    unsafe {
        let md = rdkafka_sys::rd_kafka_consumer_group_metadata(consumer.client().native_ptr());
        if md.is_null() {
            return None;
        }
        let generation = rdkafka_sys::rd_kafka_consumer_group_metadata_generation_id(md);
        rdkafka_sys::rd_kafka_consumer_group_metadata_destroy(md);
        Some(generation)
    }
}

/// The reading positions of the partitions `of`. rust-rdkafka's `position()` asks for the
/// whole assignment, and librdkafka finds each partition's topic in a list: asked on every
/// partition's end, 2,000 partitions in 400 topics cost seconds of CPU at the end of a run.
/// Asking for the partitions still open costs only theirs.
pub(crate) fn positions<'a, C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    of: impl IntoIterator<Item = (&'a str, i32)>,
) -> KafkaResult<TopicPartitionList> {
    let mut tpl = TopicPartitionList::new();
    for (topic, partition) in of {
        tpl.add_partition(topic, partition);
    }
    // SAFETY: the client pointer is valid for the consumer's lifetime, and `tpl` is a list
    // librdkafka fills in place (offsets and errors only).
    let err = unsafe { rdkafka_sys::rd_kafka_position(consumer.client().native_ptr(), tpl.ptr()) };
    match RDKafkaErrorCode::from(err) {
        RDKafkaErrorCode::NoError => Ok(tpl),
        code => Err(rdkafka::error::KafkaError::MetadataFetch(code)),
    }
}

/// librdkafka's cached watermarks for a partition, taken from the last Fetch response
/// (not ListOffsets). `None` until a fetch answered.
pub(crate) fn cached_watermarks<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    topic: &str,
    partition: i32,
) -> Option<(i64, i64)> {
    let topic = std::ffi::CString::new(topic).ok()?;
    let (mut low, mut high) = (-1i64, -1i64);
    // SAFETY: the client pointer is valid for the consumer's lifetime; the call only reads
    // librdkafka's partition state and writes the two integers.
    let err = unsafe {
        rdkafka_sys::rd_kafka_get_watermark_offsets(
            consumer.client().native_ptr(),
            topic.as_ptr(),
            partition,
            &mut low,
            &mut high,
        )
    };
    (err == rdkafka_sys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR && high >= 0)
        .then_some((low.max(0), high))
}
