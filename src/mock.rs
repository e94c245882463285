//! librdkafka's in-process mock cluster, for the `demo` and for fault-injection tests.

use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{BaseProducer, DefaultProducerContext, Producer};
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};

use crate::error::{Error, Result};
use crate::trail::INDEX_TOPIC;

/// A mock cluster owned by a producer handle (the handle keeps it alive).
pub struct MockKafka {
    owner: BaseProducer,
}

impl MockKafka {
    /// Starts `brokers` mock brokers on loopback TCP ports. Consumer groups rebalance at
    /// once (the mock's default waits 3 s before the first assignment).
    pub fn start(brokers: i32) -> Result<Self> {
        let owner: BaseProducer = ClientConfig::new()
            .set("test.mock.num.brokers", brokers.to_string())
            .create()
            .map_err(|e| Error::failed(format!("cannot start a mock cluster: {e}")))?;
        // SAFETY: the handle owns the mock cluster, which lives as long as `owner`.
        unsafe {
            let raw = rdkafka_sys::rd_kafka_handle_mock_cluster(owner.client().native_ptr());
            if raw.is_null() {
                return Err(Error::failed("librdkafka did not create a mock cluster"));
            }
            rdkafka_sys::rd_kafka_mock_group_initial_rebalance_delay_ms(raw, 0);
        }
        let mock = MockKafka { owner };
        // The mock has no admin API: a copy could not create its positions index there.
        mock.create_topic(INDEX_TOPIC, 1)?;
        Ok(mock)
    }

    /// The fault-injection handle.
    pub fn cluster(&self) -> Result<MockCluster<'_, DefaultProducerContext>> {
        self.owner
            .client()
            .mock_cluster()
            .ok_or_else(|| Error::failed("the mock cluster is gone"))
    }

    /// Answers the broker's next `api` request with `err` after `rtt` (other requests are
    /// answered at once): records stay in flight that long, then get that result.
    pub fn answer_next(
        &self,
        broker_id: i32,
        api: RDKafkaApiKey,
        err: RDKafkaRespErr,
        rtt: Duration,
    ) -> Result<()> {
        let rtt_ms = i32::try_from(rtt.as_millis())
            .map_err(|_| Error::failed(format!("mock: delay {rtt:?} is too long")))?;
        // SAFETY: the handle owns the mock cluster, which lives as long as `owner`; the
        // variadic part is the one (error, rtt in ms) pair that `cnt` = 1 announces.
        let res = unsafe {
            let raw = rdkafka_sys::rd_kafka_handle_mock_cluster(self.owner.client().native_ptr());
            if raw.is_null() {
                return Err(Error::failed("the mock cluster is gone"));
            }
            rdkafka_sys::rd_kafka_mock_broker_push_request_error_rtts(
                raw, broker_id, api as i16, 1, err as i32, rtt_ms,
            )
        };
        match res {
            RDKafkaRespErr::RD_KAFKA_RESP_ERR_NO_ERROR => Ok(()),
            e => Err(Error::failed(format!(
                "mock: cannot script broker {broker_id}: {e:?}"
            ))),
        }
    }

    pub fn bootstrap(&self) -> Result<String> {
        Ok(self.cluster()?.bootstrap_servers())
    }

    pub fn create_topic(&self, topic: &str, partitions: i32) -> Result<()> {
        self.cluster()?
            .create_topic(topic, partitions, 1)
            .map_err(|e| Error::failed(format!("mock: cannot create topic {topic}: {e}")))?;
        // Metadata on the mock is immediate, but give its broker threads a moment.
        std::thread::sleep(Duration::from_millis(50));
        Ok(())
    }
}
