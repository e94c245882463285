//! Issue 18, item 8: a record within a few bytes of the size limit fits the source but not the
//! target once the origin header is added. none/at-least-once copy it without the header
//! (counted); exactly-once, whose checkpoint the header is, names the cause and the fix.

use std::time::Duration;

use crate::common::kr::{self, ORIGIN};
use crate::common::{self, Kafka, Rec};

/// A value that fits librdkafka's default message.max.bytes (1,000,000) with room for a small
/// key, but not for a ~60-byte origin header as well.
const BIG: usize = 999_940;

fn rec(i: usize, len: usize) -> Rec {
    Rec {
        partition: 0,
        key: Some(format!("k{i}").into_bytes()),
        value: Some(vec![b'a' + i as u8; len]),
        headers: vec![("seq".into(), Some(vec![i as u8]))],
        timestamp: Some(kr::recent() + i as i64),
    }
}

#[test]
fn issue_18_a_record_near_the_size_limit_is_copied_without_its_origin() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let n = common::unique("size");
    let big = &format!("{n}.big");
    let g = &format!("{n}.g-size");
    let g_eos = &format!("{n}.g-size-eos");
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    common::create_topic(ab, big, 1);
    common::produce(ab, big, &[rec(0, 10), rec(1, BIG), rec(2, 10)]);
    let metrics = common::scratch_dir().join(format!("size-{}.prom", std::process::id()));
    let m = metrics.to_str().unwrap();
    let mut args = kr::caught_up_args(ab, bb, big, g, "at-least-once", &[]);
    args.extend(["--create-topics", "--metrics-file", m]);
    let run = kr::run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    assert_eq!(json["records"], 3, "{json}");
    assert_eq!(json["unstamped"], 1, "{json}");
    assert!(
        run.stderr.contains(&format!(
            "{big}[0] offset 1 fits the target only without its kreplicate.origin header"
        )),
        "{run:?}"
    );
    let prom = std::fs::read_to_string(&metrics).unwrap();
    assert!(
        prom.contains("kreplicate_unstamped_records_total 1"),
        "{prom}"
    );
    let got = common::read_all(bb, big);
    let origins: Vec<bool> = got
        .iter()
        .map(|g| g.to_rec().headers.iter().any(|(k, _)| k == ORIGIN))
        .collect();
    assert_eq!(origins, [true, false, true]);
    kr::assert_complete(ab, bb, big, big, 1);

    // exactly-once cannot leave its checkpoint out: it says why and what to change.
    let mut args = kr::caught_up_args(ab, bb, big, g_eos, "exactly-once", &[]);
    args.extend(["--create-topics", "--rename", "eos.{topic}"]);
    let run = kr::run(&args);
    assert_eq!(run.code, 1, "{run:?}");
    let err = run.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(
        err.contains("kreplicate.origin header") && err.contains("max.message.bytes"),
        "{run:?}"
    );
}

/// Fits a 2000-byte topic alone in its batch, but not with a ~60-byte origin header as well.
const NEAR_2000: usize = 1900;

#[test]
fn issue_18_a_record_the_header_makes_too_large_for_the_target_topic_is_copied_without_it() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("near");
    // --create-topics copies the limit, which only the broker enforced before.
    common::create_topic_with(ab, &topic, 1, &[("max.message.bytes", "2000")]);
    let records = [rec(0, 10), rec(1, NEAR_2000), rec(2, 10)];
    let small_batches = [("batch.size", "1500")];
    common::produce_with(
        ab,
        &topic,
        &records,
        &small_batches,
        Duration::from_secs(30),
    )
    .unwrap_or_else(|e| panic!("produce: {e}"));
    let group = common::unique("g-near");
    let mut args = kr::caught_up_args(ab, bb, &topic, &group, "at-least-once", &[]);
    args.push("--create-topics");
    let run = kr::run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["unstamped"], 1, "{run:?}");
    let notice =
        format!("{topic}[0] offset 1 fits the target only without its kreplicate.origin header");
    assert!(run.stderr.contains(&notice), "{run:?}");
    let got = common::read_all(bb, &topic);
    let origins: Vec<bool> = got
        .iter()
        .map(|g| g.to_rec().headers.iter().any(|(k, _)| k == ORIGIN))
        .collect();
    assert_eq!(origins, [true, false, true]);
    kr::assert_complete(ab, bb, &topic, &topic, 1);

    let group = common::unique("g-near-eos");
    let mut args = kr::caught_up_args(ab, bb, &topic, &group, "exactly-once", &[]);
    args.extend(["--create-topics", "--rename", "eos.{topic}"]);
    let run = kr::run(&args);
    assert_eq!(run.code, 1, "{run:?}");
    let err = run.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(
        err.contains("kreplicate.origin header") && err.contains("max.message.bytes"),
        "{run:?}"
    );
}
