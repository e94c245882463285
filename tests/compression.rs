//! Issue 35, item 1: the target producer compresses by default. librdkafka's default codec is
//! none, so a zstd source partition of 120 KB became 21 MB of log segments on the target; the
//! copy now takes kreplicate's default codec unless `--to-property compression.type` says
//! otherwise, and `plan` says which.

use std::path::Path;

use crate::common::kr;
use crate::common::{self, Kafka, Rec};

/// Records like most topics hold: JSON events whose fields repeat from record to record.
fn events(n: usize) -> Vec<Rec> {
    let mut x: u64 = 35;
    let mut next = move |m: u64| {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (x >> 33) % m
    };
    let states = ["CREATED", "PAID", "PACKED", "SHIPPED", "DELIVERED"];
    let regions = ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2"];
    (0..n)
        .map(|i| {
            let value = format!(
                r#"{{"order_id":"ord-{:09}","customer":"cust-{:06}","status":"{}","region":"{}","currency":"EUR","items":[{{"sku":"SKU-{:05}","qty":{},"price":{}.{:02}}}],"channel":"web"}}"#,
                next(1_000_000_000),
                next(1_000_000),
                states[next(5) as usize],
                regions[next(4) as usize],
                next(100_000),
                next(4) + 1,
                next(300),
                next(100)
            );
            Rec {
                partition: 0,
                key: Some(format!("ord-{i}").into_bytes()),
                value: Some(value.into_bytes()),
                headers: vec![],
                timestamp: Some(kr::recent() + i as i64),
            }
        })
        .collect()
}

/// The bytes of a partition's log segments, as the broker wrote them.
fn segment_bytes(kafka: &Kafka, topic: &str, partition: i32) -> u64 {
    let dir = kafka.dir.join("data").join(format!("{topic}-{partition}"));
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .filter(|e| Path::new(&e.file_name()).extension() == Some("log".as_ref()))
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}

#[test]
fn issue_35_a_zstd_topic_is_copied_compressed_unless_the_target_property_says_none() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("zstd");
    common::create_topic(ab, &topic, 1);
    let records = events(20_000);
    common::produce_with(
        ab,
        &topic,
        &records,
        &[("compression.type", "zstd"), ("linger.ms", "50")],
        std::time::Duration::from_secs(60),
    )
    .unwrap_or_else(|e| panic!("produce: {e}"));
    let source = segment_bytes(&a, &topic, 0);
    let raw: usize = records
        .iter()
        .map(|r| r.value.as_ref().map_or(0, Vec::len))
        .sum();
    assert!(
        source * 3 < raw as u64,
        "the source is compressed: {source} of {raw} bytes"
    );

    // plan names the codec, and who chose it.
    let copy = format!("{topic}.copy");
    let group = common::unique("g-zstd");
    let mut plan = vec!["plan"];
    plan.extend(kr::caught_up_args(
        ab,
        bb,
        &topic,
        &group,
        "at-least-once",
        &[],
    ));
    plan.retain(|a| *a != "--until-caught-up" && *a != "--json");
    plan.extend(["--create-topics", "--rename", copy.as_str()]);
    let out = kr::run(&plan);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("compression on the target: zstd (kreplicate's default"),
        "{out:?}"
    );

    let mut args = kr::caught_up_args(ab, bb, &topic, &group, "at-least-once", &[]);
    args.extend(["--create-topics", "--rename", copy.as_str()]);
    let run = kr::run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["records"], 20_000, "{run:?}");
    let target = segment_bytes(&b, &copy, 0);
    eprintln!("source {source} bytes, copy with the defaults {target} bytes (values {raw})");
    // The copy adds an origin header to every record; within 10 % of the source all the same.
    assert!(
        target as f64 <= source as f64 * 1.1,
        "the copy takes {target} bytes on disk, the zstd source {source}"
    );

    // The user's property decides over the default.
    let plain = format!("{topic}.plain");
    let group = common::unique("g-plain");
    let none = ["--to-property", "compression.type=none"];
    let mut plan = vec!["plan"];
    plan.extend(kr::caught_up_args(
        ab,
        bb,
        &topic,
        &group,
        "at-least-once",
        &none,
    ));
    plan.retain(|a| *a != "--until-caught-up" && *a != "--json");
    plan.extend(["--create-topics", "--rename", plain.as_str()]);
    let out = kr::run(&plan);
    assert!(
        out.stdout
            .contains("compression on the target: none (from the target's properties)"),
        "{out:?}"
    );
    let mut args = kr::caught_up_args(ab, bb, &topic, &group, "at-least-once", &none);
    args.extend(["--create-topics", "--rename", plain.as_str()]);
    let run = kr::run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    let uncompressed = segment_bytes(&b, &plain, 0);
    eprintln!("copy with compression.type=none: {uncompressed} bytes");
    assert!(
        uncompressed > source * 4,
        "compression.type=none: {uncompressed} bytes, the source {source}"
    );
}
