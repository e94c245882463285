//! exactly-once: the target broker's `transaction.max.timeout.ms` against the transaction
//! timeout the run asks for, read before anything is created (a broker below it refuses
//! `init_transactions`, which comes after the target topics were created).

use std::time::Duration;

use rdkafka::admin::{AdminOptions, ResourceSpecifier};
use rdkafka::consumer::Consumer;

use super::admin;
use super::limits::{controller_known, WAIT};
use super::Metadata;
use crate::kafka;
use crate::options::{Guarantee, RunOptions};

/// Why exactly-once cannot start on this target, with the numbers; `None` under the other
/// guarantees, when the limit holds, or when the broker does not say (no DescribeConfigs, not
/// authorised: `init_transactions` then decides, after the topics are created).
pub fn refusal(opts: &RunOptions, target: &Metadata) -> Option<String> {
    if opts.guarantee != Guarantee::ExactlyOnce {
        return None;
    }
    let limit = match broker_limit(opts, target) {
        Ok(limit) => limit,
        Err(why) => {
            log::info!("the target's transaction.max.timeout.ms not read ({why})");
            return None;
        }
    };
    refusal_for(opts.txn_max_time, opts.delivery_timeout, limit)
}

/// The refusal for a broker limit of `limit`.
fn refusal_for(
    txn_max_time: Duration,
    delivery_timeout: Duration,
    limit: Duration,
) -> Option<String> {
    let asked = kafka::transaction_timeout(txn_max_time, delivery_timeout);
    if asked <= limit {
        return None;
    }
    let ms = |d: Duration| d.as_millis();
    let margin = kafka::TRANSACTION_MARGIN;
    let fix = match limit.checked_sub(margin) {
        Some(room) if room > Duration::from_millis(1) => format!(
            "raise the broker's transaction.max.timeout.ms to at least {}, or lower --txn-max-time plus --delivery-timeout below {} ms",
            ms(asked),
            ms(room)
        ),
        _ => format!(
            "raise the broker's transaction.max.timeout.ms to at least {} (no --txn-max-time and --delivery-timeout fit under {} ms with the {} s kreplicate adds)",
            ms(asked),
            ms(limit),
            margin.as_secs()
        ),
    };
    Some(format!(
        "the target's transaction.max.timeout.ms is {} ms, below the transaction timeout exactly-once needs: {} ms (--txn-max-time {:?} + --delivery-timeout {:?} + {} s for the commit): {fix}",
        ms(limit),
        ms(asked),
        txn_max_time,
        delivery_timeout,
        margin.as_secs()
    ))
}

/// One target broker's `transaction.max.timeout.ms` (DescribeConfigs).
fn broker_limit(opts: &RunOptions, target: &Metadata) -> Result<Duration, String> {
    let timeout = opts.timeout.min(WAIT);
    // librdkafka's mock cluster names a controller it does not list, and never answers.
    if !controller_known(target, None, timeout) {
        return Err("the target names no controller it lists".into());
    }
    let md = target
        .fetch_metadata(None, timeout)
        .map_err(|e| e.to_string())?;
    let broker = md.brokers().first().ok_or("no broker listed")?.id();
    let admin = admin::admin(&opts.to, "target").map_err(|e| e.to_string())?;
    let specs = [ResourceSpecifier::Broker(broker)];
    let request = AdminOptions::new().request_timeout(Some(timeout));
    let answer = admin::block_on(admin.describe_configs(&specs, &request), timeout)
        .ok_or("no answer in time")?
        .map_err(|e| e.to_string())?;
    let resource = answer
        .into_iter()
        .next()
        .ok_or("an empty answer")?
        .map_err(|code| code.to_string())?;
    resource
        .entries
        .into_iter()
        .find(|e| e.name == "transaction.max.timeout.ms")
        .and_then(|e| e.value?.trim().parse().ok())
        .map(Duration::from_millis)
        .ok_or_else(|| "not in the broker's answer".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_35_a_limit_below_the_transaction_timeout_names_the_numbers() {
        let refusal = |limit| refusal_for(Duration::from_secs(2), Duration::from_secs(120), limit);
        let five = refusal(Duration::from_secs(5)).unwrap_or_default();
        assert!(
            five.contains("is 5000 ms")
                && five.contains("152000 ms")
                && five.contains("at least 152000")
                && !five.contains("lower --txn-max-time"),
            "{five}"
        );
        let minute = refusal(Duration::from_secs(60)).unwrap_or_default();
        assert!(minute.contains("below 30000 ms"), "{minute}");
        assert_eq!(refusal(Duration::from_secs(152)), None);
        assert_eq!(refusal(Duration::from_secs(900)), None);
    }
}
