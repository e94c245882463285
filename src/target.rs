//! The producing side, shared by both engines: the target record for a source record, one
//! send path with backpressure, serving delivery reports, and flushing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rdkafka::error::{KafkaError, KafkaResult, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, Header, Headers, Message, OwnedHeaders, ToBytes};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::util::IntoOpaque;

use crate::error::{Error, Result};
use crate::origin::{Stamp, ORIGIN_HEADER};
use crate::report::Counters;
use crate::topics::Route;

// Source offsets travel as the delivery opaque (`usize`).
const _: () = assert!(usize::BITS == 64, "kreplicate needs a 64-bit target");

/// Wait step for delivery reports and for leaving the group. rust-rdkafka's
/// `BaseProducer::poll(t)` keeps polling until `t` has passed even after reports arrived
/// (spinning through its last millisecond), and its `flush` and the consumer's drop wait in
/// 100 ms steps: about 0.2 s lost at the end of every run, and a busy thread whenever the
/// producer queue is full. Sleeping a step, then serving what arrived, does neither.
pub(crate) const STEP: Duration = Duration::from_millis(1);

/// A producer context holding the run's counters: the one send path and the serving of
/// delivery reports keep the records in flight there, for both engines.
pub(crate) trait Counted: ProducerContext {
    fn counters(&self) -> &Counters;
}

/// Called first by each engine's delivery callback: the record is no longer in flight,
/// acknowledged or not.
pub(crate) fn reported<'a, C: Counted>(context: &C, result: &'a DeliveryResult<'_>) -> &'a str {
    let (msg, failed) = match result {
        Ok(m) => (m, false),
        Err((_, m)) => (m, true),
    };
    // Its topic, for the caller: each `topic()` reads and checks the name again.
    let topic = msg.topic();
    context.counters().reported(topic, msg.partition());
    if failed {
        context.counters().failed_delivery(topic, msg.partition());
    }
    topic
}

/// Waits one step for delivery reports, then serves every one that arrived.
pub(crate) fn await_reports<C: Counted>(producer: &BaseProducer<C>) {
    std::thread::sleep(STEP);
    serve_reports(producer);
}

/// Serves every delivery report that arrived, without waiting. `poll` with a zero timeout
/// serves a single event, one produce batch's reports: called once per round of periodic
/// work, it let acknowledgements (and the at-least-once commits built from them) fall
/// seconds behind a steady copy of small batches (issue 18). Served reports leave the
/// producer's count, so the loop ends once a poll served none.
pub(crate) fn serve_reports<C: Counted>(producer: &BaseProducer<C>) {
    producer.context().counters().tick(Instant::now());
    loop {
        let before = producer.in_flight_count();
        producer.poll(Duration::ZERO);
        if producer.in_flight_count() >= before {
            return;
        }
    }
}

/// Shorter waits of a rate limit are left to add up in its bucket: a sleep costs more than
/// that, and the bucket's debt keeps the rate exact.
const MIN_WAIT: Duration = Duration::from_millis(1);

/// The read side waits `wait` for a rate limit, serving delivery reports meanwhile (so
/// acknowledgements and commits do not fall behind); returns early once `stop` is set.
/// Returns how long it waited (zero for a wait too short to sleep).
pub(crate) fn throttle_wait<C: Counted>(
    producer: &BaseProducer<C>,
    wait: Duration,
    stop: &AtomicBool,
) -> Duration {
    if wait < MIN_WAIT {
        return Duration::ZERO;
    }
    let start = Instant::now();
    let end = start + wait;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(10)));
        serve_reports(producer);
    }
    start.elapsed()
}

/// Key + value bytes of a record: what `--max-bytes-per-sec` and the summary count.
pub(crate) fn record_bytes(msg: &BorrowedMessage<'_>) -> u64 {
    (msg.payload_len() + msg.key().map_or(0, <[u8]>::len)) as u64
}

/// Why a record was not handed to the producer.
pub(crate) enum NotSent {
    /// The producer refused it for another reason than a full queue.
    Refused(KafkaError),
    /// The run was stopping or had failed while the queue was full.
    GaveUp,
}

/// How long a record for a partition the producer does not know yet waits for the target's
/// metadata to show it.
const NEW_PARTITION_WAIT: Duration = Duration::from_secs(30);

/// Hands one record to the producer, the one send path of both engines. While the producer's
/// queue is full (backpressure) it serves delivery reports and tries again, unless `give_up`
/// says the run is stopping or has failed meanwhile: a record not sent is simply not covered by
/// any commit.
///
/// A partition the producer does not know yet belongs to a target topic that grew after the
/// producer last read its metadata (librdkafka reads it again only every 5 minutes): the
/// producer reads the topic's metadata again until the partition shows, then sends.
pub(crate) fn send<'a, C, K, P>(
    producer: &BaseProducer<C>,
    mut record: BaseRecord<'a, K, P, C::DeliveryOpaque>,
    give_up: impl Fn() -> bool,
) -> std::result::Result<(), NotSent>
where
    C: Counted,
    K: ToBytes + ?Sized,
    P: ToBytes + ?Sized,
{
    let mut unknown_since: Option<Instant> = None;
    loop {
        let (topic, partition) = (record.topic, record.partition.unwrap_or(-1));
        match producer.send(record) {
            Ok(()) => {
                producer.context().counters().sent(topic, partition);
                return Ok(());
            }
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                record = r;
                await_reports(producer);
                if give_up() {
                    return Err(NotSent::GaveUp);
                }
            }
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::UnknownPartition), r))
                if unknown_since.is_none_or(|t| t.elapsed() < NEW_PARTITION_WAIT) =>
            {
                record = r;
                if unknown_since.is_some() {
                    // The broker answered without it: its own metadata is catching up.
                    std::thread::sleep(Duration::from_millis(100));
                }
                unknown_since.get_or_insert_with(Instant::now);
                // A metadata answer updates the producer's view of the topic.
                let wait = Duration::from_secs(5);
                if let Err(e) = producer.client().fetch_metadata(Some(record.topic), wait) {
                    log::warn!("cannot read the metadata of '{}': {e}", record.topic);
                }
                if give_up() {
                    return Err(NotSent::GaveUp);
                }
            }
            Err((e, _)) => return Err(NotSent::Refused(e)),
        }
    }
}

/// Sends the copy of `msg` (none and at-least-once: its source offset is the opaque). A copy
/// that only its origin header made larger than the producer's limit goes without the header
/// rather than not at all (an opposite run may copy it back once; nothing is lost): true then.
pub(crate) fn send_copy<C>(
    producer: &BaseProducer<C>,
    (msg, target, headers): (&BorrowedMessage<'_>, &str, Option<OwnedHeaders>),
    offset: i64,
    give_up: impl Fn() -> bool,
) -> std::result::Result<bool, NotSent>
where
    C: Counted<DeliveryOpaque = usize>,
{
    // The origin is the one header a copy adds (counting is cheaper than looking for it).
    let count = |n: Option<usize>| n.unwrap_or(0);
    let stamped =
        count(headers.as_ref().map(|h| h.count())) > count(msg.headers().map(|h| h.count()));
    let record = copy_record(msg, target, headers, offset as usize);
    match send(producer, record, &give_up) {
        Err(NotSent::Refused(e)) if stamped && too_large(&e) => {
            let plain = msg.headers().map(|h| h.detach());
            let record = copy_record(msg, target, plain, offset as usize);
            send(producer, record, give_up).map(|()| true)
        }
        sent => sent.map(|()| false),
    }
}

/// Waits until every record sent was acknowledged (or failed) and its report served.
pub(crate) fn flush<C: Counted>(producer: &BaseProducer<C>, timeout: Duration) -> KafkaResult<()> {
    let deadline = Instant::now() + timeout;
    loop {
        // A non-blocking flush also sends lingering batches at once.
        match producer.flush(Duration::ZERO) {
            Err(KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut))
                if Instant::now() < deadline =>
            {
                await_reports(producer)
            }
            done => return done,
        }
    }
}

/// Connects the producer and caches the target topics' metadata before the first record.
/// Left to the first send, librdkafka 2.12 sent its first metadata request to the bootstrap
/// connection it was retiring and produced nothing for ~0.5 s while the queue filled.
/// Asked twice: the idempotent producer asks for its producer id when a metadata answer
/// arrives, and at the first one the bootstrap connection is retired and no broker is up
/// yet, so it waited its 500 ms retry timer; the second answer comes from a broker that is up.
pub(crate) fn warm_up<C: ProducerContext>(
    producer: &BaseProducer<C>,
    routes: &[Route],
    timeout: Duration,
) -> Result<()> {
    let only = match routes {
        [one] => Some(one.target.as_str()),
        _ => None,
    };
    for _ in 0..2 {
        producer
            .client()
            .fetch_metadata(only, timeout)
            .map_err(|e| Error::failed(format!("cannot reach the target cluster: {e}")))?;
    }
    Ok(())
}

/// The target record for a source record: same partition, key, value (null or not),
/// headers and timestamp.
pub(crate) fn copy_record<'a, D: IntoOpaque>(
    msg: &'a BorrowedMessage<'_>,
    target: &'a str,
    headers: Option<OwnedHeaders>,
    opaque: D,
) -> BaseRecord<'a, [u8], [u8], D> {
    let mut record = BaseRecord::with_opaque_to(target, opaque).partition(msg.partition());
    if let Some(k) = msg.key() {
        record = record.key(k);
    }
    if let Some(v) = msg.payload() {
        record = record.payload(v);
    }
    if let Some(ts) = msg.timestamp().to_millis() {
        record = record.timestamp(ts);
    }
    if let Some(h) = headers {
        record = record.headers(h);
    }
    record
}

/// Publishes the produce retries of librdkafka's statistics (every broker's `txretries`).
pub(crate) fn count_retries(stats: &rdkafka::statistics::Statistics, counters: &Counters) {
    let retries: u64 = stats.brokers.values().map(|b| b.txretries).sum();
    counters
        .retries
        .store(retries, std::sync::atomic::Ordering::Relaxed);
}

/// The headers of the copy of `msg` (of source topic `topic`: each `msg.topic()` reads and
/// checks the name again): its own, then (unless `--no-origin-header`) its origin, written
/// through `buf`, a buffer reused for every record. A record without headers and without a
/// stamp costs nothing.
pub(crate) fn headers_for(
    msg: &BorrowedMessage<'_>,
    topic: &str,
    stamp: Option<&Stamp>,
    buf: &mut String,
) -> Option<OwnedHeaders> {
    let own = msg.headers();
    let Some(stamp) = stamp else {
        return own.map(|h| h.detach());
    };
    stamp.write(buf, topic, msg.partition(), msg.offset());
    // Sized for the origin too: detach() and then insert() would grow the list again.
    let mut headers = OwnedHeaders::new_with_capacity(own.map_or(0, |h| h.count()) + 1);
    for h in own.iter().flat_map(|h| h.iter()) {
        headers = headers.insert(h);
    }
    Some(headers.insert(Header {
        key: ORIGIN_HEADER,
        value: Some(buf.as_bytes()),
    }))
}

/// A notice when target topics found while copying have a `max.message.bytes` (`limit`) below
/// what the producer, configured at start, may batch: a client's limits are fixed when it is
/// created, so batches to them may be refused until the next run fits them.
pub(crate) fn outgrown<C: ProducerContext>(
    producer: &BaseProducer<C>,
    limit: Option<u64>,
) -> Option<String> {
    let limit = limit?;
    let mut buf = [0 as std::os::raw::c_char; 32];
    let mut size = buf.len();
    // SAFETY: the client pointer is valid for the producer's lifetime; librdkafka writes at
    // most `size` bytes, NUL-terminated, into `buf`.
    let have: u64 = unsafe {
        let conf = rdkafka_sys::rd_kafka_conf(producer.client().native_ptr());
        let key = c"message.max.bytes";
        let ok = rdkafka_sys::rd_kafka_conf_get(conf, key.as_ptr(), buf.as_mut_ptr(), &mut size);
        if ok != rdkafka_sys::rd_kafka_conf_res_t::RD_KAFKA_CONF_OK {
            return None;
        }
        std::ffi::CStr::from_ptr(buf.as_ptr())
            .to_str()
            .ok()?
            .parse()
            .ok()?
    };
    let (fits, _) = crate::kafka::batch_bounds(limit, have, have);
    (fits < have).then(|| format!("a new target topic's max.message.bytes ({limit}) is below what this run's producer may batch (its message.max.bytes, fitted to the topics found at start): batches to it may be refused; the next run fits it"))
}

/// True when the producer refused a record as larger than its `message.max.bytes`.
pub(crate) fn too_large(e: &KafkaError) -> bool {
    matches!(
        e,
        KafkaError::MessageProduction(RDKafkaErrorCode::MessageSizeTooLarge)
    )
}

/// A failed delivery; a batch the broker refused as too large says what to change.
pub(crate) fn delivery_error(e: &KafkaError) -> String {
    if !too_large(e) {
        return e.to_string();
    }
    format!("{e}: the batch, or the record with its kreplicate.origin header, exceeds the target topic's max.message.bytes; a run keeps its batches within the limits the target reports at start (DescribeConfigs): rerun (allowing DescribeConfigs on the target topics), or set batch.size and message.max.bytes below the limit with --to-property")
}

/// The warning, once per partition, about a record copied without its origin header.
pub(crate) fn unstamped_notice(topic: &str, partition: i32, offset: i64) -> String {
    format!("{topic}[{partition}] offset {offset} fits the target only without its kreplicate.origin header: copied without it (counted as unstamped; raise the target's max.message.bytes and the producer's message.max.bytes to keep the header)")
}

/// True when `msg` was copied from the target cluster (an origin header names it): copying it
/// back would loop between two runs A→B and B→A.
pub(crate) fn copied_back(msg: &BorrowedMessage<'_>, stamp: Option<&Stamp>) -> bool {
    let (Some(stamp), Some(headers)) = (stamp, msg.headers()) else {
        return false;
    };
    stamp.loops(
        headers
            .iter()
            .filter(|h| h.key == ORIGIN_HEADER)
            .filter_map(|h| h.value),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::producer::DefaultProducerContext;
    use rdkafka::ClientConfig;

    #[test]
    fn issue_18_a_new_topic_below_the_producers_limit_is_noticed() {
        let producer: BaseProducer<DefaultProducerContext> = match ClientConfig::new()
            .set("bootstrap.servers", "127.0.0.1:1")
            .set("message.max.bytes", "1958")
            .create()
        {
            Ok(p) => p,
            Err(e) => panic!("producer: {e}"),
        };
        assert_eq!(outgrown(&producer, None), None);
        // The limit the producer was fitted to, or a larger one: nothing to say.
        assert_eq!(outgrown(&producer, Some(2000)), None);
        assert_eq!(outgrown(&producer, Some(1_048_588)), None);
        let note = outgrown(&producer, Some(1500)).unwrap_or_default();
        assert!(note.contains("(1500)") && !note.contains("1958"), "{note}");
    }
}
