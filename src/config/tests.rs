//! Unit tests of config resolution: YAML keys, clusters, properties and environment values.

use super::*;

#[test]
fn bootstrap_lists() {
    assert!(is_bootstrap_list("127.0.0.1:9092"));
    assert!(is_bootstrap_list("a:1,b:2"));
    assert!(is_bootstrap_list("SSL://broker:9093"));
    assert!(!is_bootstrap_list("prod"));
    assert!(!is_bootstrap_list("prod:x"));
}

#[test]
fn unknown_yaml_key_is_rejected_with_its_name() {
    let err = parse_file("clusters:\n  a:\n    bootstrap: x:1\n    bootstarp: y\n").unwrap_err();
    assert!(err.contains("bootstarp"), "{err}");
    let err = parse_file("defaults:\n  guarantee: sometimes\n").unwrap_err();
    assert!(err.contains("sometimes"), "{err}");
}

#[test]
fn properties_become_strings_and_expand_env() {
    std::env::set_var("KREPLICATE_TEST_SECRET", "s3cret");
    let f = parse_file(
        "clusters:\n  a:\n    bootstrap: h:1\n    properties:\n      socket.keepalive.enable: true\n      retries: 5\n      sasl.password: ${KREPLICATE_TEST_SECRET}\n",
    )
    .unwrap();
    let c = cluster(&f, "a", "--from").unwrap();
    assert_eq!(
        c.properties,
        vec![
            ("retries".to_string(), "5".to_string()),
            ("sasl.password".to_string(), "s3cret".to_string()),
            ("socket.keepalive.enable".to_string(), "true".to_string()),
        ]
    );
    let f = parse_file(
        "clusters:\n  a:\n    bootstrap: h:1\n    properties:\n      sasl.password: ${KREPLICATE_TEST_UNSET_VAR}\n",
    )
    .unwrap();
    let err = cluster(&f, "a", "--from").unwrap_err().to_string();
    assert!(err.contains("clusters.a.properties.sasl.password"), "{err}");
}

#[test]
fn issue_19_file_references_read_one_value_and_never_show_it() {
    let dir = std::env::temp_dir().join(format!("kreplicate-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret = dir.join("password");
    std::fs::write(&secret, "pa55-in-a-file\n").unwrap();
    let windows = dir.join("crlf");
    std::fs::write(&windows, "crlf-secret\r\n").unwrap();
    let yaml = |v: &str| {
        format!(
            "clusters:\n  a:\n    bootstrap: h:1\n    properties:\n      sasl.password: \"{v}\"\n"
        )
    };
    let read = |v: &str| cluster(&parse_file(&yaml(v)).unwrap(), "a", "--from");
    let props = read(&format!("${{file:{}}}", secret.display()))
        .unwrap()
        .properties;
    assert_eq!(props[0].1, "pa55-in-a-file");
    let props = read(&format!("x-${{file:{}}}", windows.display()))
        .unwrap()
        .properties;
    assert_eq!(props[0].1, "x-crlf-secret");
    let missing = dir.join("absent");
    let err = read(&format!("${{file:{}}}", missing.display()))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("clusters.a.properties.sasl.password")
            && err.contains(&format!(
                "${{file:{}}}, which cannot be read: ",
                missing.display()
            ))
            && !err.contains('\n'),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn issue_13_yaml_type_errors_never_show_the_value() {
    let err = parse_file(
        "clusters:\n  src:\n    bootstrap: h:1\n    properties: \"sasl.password=kp-secret, expected x\"\n",
    )
    .unwrap_err();
    assert!(!err.contains("kp-secret"), "{err}");
    assert!(
        err.contains("clusters.src.properties") && err.contains("line 4"),
        "{err}"
    );
    assert!(err.contains("expected a map"), "{err}");
    let err = parse_file("clusters:\n  src:\n    bootstrap: 1234567\n    properties: 987654321\n")
        .unwrap_err();
    assert!(!err.contains("987654321"), "{err}");
    // Unknown keys and enum variants are names, not values: still shown.
    let err = parse_file("defaults:\n  guarantee: sometimes\n").unwrap_err();
    assert!(err.contains("sometimes"), "{err}");
}

#[test]
fn issue_22_a_misspelt_key_names_the_one_meant() {
    let err = parse_file("defaults:\n  create-topic: true\n").unwrap_err();
    assert_eq!(
        err,
        "defaults.create-topic (line 2): unknown key: did you mean `create-topics`?"
    );
    let err = parse_file("clusters:\n  a:\n    bootstrp: h:1\n").unwrap_err();
    assert!(err.ends_with("did you mean `bootstrap`?"), "{err}");
    // Nothing near: the known keys, as serde lists them.
    let err = parse_file("defaults:\n  colour: blue\n").unwrap_err();
    assert!(err.contains("expected one of `from`"), "{err}");
}

#[test]
fn unknown_cluster_names_the_known_ones() {
    let f = parse_file("clusters:\n  prod:\n    bootstrap: h:1\n").unwrap();
    let err = cluster(&f, "prdo", "--from").unwrap_err().to_string();
    assert!(err.contains("prdo") && err.contains("prod"), "{err}");
}

#[test]
fn issue_22_the_line_of_a_key_as_the_yaml_parser_sees_it() {
    let text = "# comment\nclusters:\n  a:\n    bootstrap: h:1\n    properties: {linger.ms: 5,\n      acks: all}\ndefaults:\n  \"timeout\": 5 seconds\n  topics: [a, b]\nflows:\n  x: {timeout: 1s}\n";
    let at = |path: &[&str]| file::line_of(text, path);
    assert_eq!(at(&["clusters", "a", "bootstrap"]), Some(4));
    assert_eq!(at(&["clusters", "a", "properties", "acks"]), Some(6));
    assert_eq!(at(&["defaults", "timeout"]), Some(8));
    assert_eq!(at(&["defaults", "topics"]), Some(9));
    assert_eq!(at(&["flows", "x", "timeout"]), Some(11));
    assert_eq!(at(&["defaults", "group"]), None);
    assert_eq!(at(&["clusters", "a", "bootstrap", "deeper"]), None);
}

#[test]
fn issue_22_values_from_the_file_are_named_by_key_and_line() {
    let text = "clusters:\n  prod:\n    bootstrap: h:1\ndefaults:\n  from: prod\n  to: prod\n  topics: t\n  commit-interval: 5 seconds\n  max-bytes-per-sec: 20 furlongs\n";
    let f = parse_file(text).unwrap();
    let err = resolve(&crate::cli::CopyArgs::default(), &f).unwrap_err();
    assert_eq!(
        err.to_string(),
        "config: defaults.commit-interval (line 8): '5 seconds': unknown unit 'seconds' (use ms, s, m or h)"
    );
    assert_eq!(err.exit(), crate::error::Exit::Usage);
    let mut args = crate::cli::CopyArgs {
        commit_interval: Some("5s".into()),
        ..Default::default()
    };
    let err = resolve(&args, &f).unwrap_err().to_string();
    assert_eq!(
        err,
        "config: defaults.max-bytes-per-sec (line 9): '20 furlongs': unknown unit 'furlongs' (use KiB, MiB, GiB, KB, MB or GB)"
    );
    // A flag is named as a flag.
    args.max_bytes_per_sec = Some("3 furlongs".into());
    let err = resolve(&args, &f).unwrap_err().to_string();
    assert!(
        err.starts_with("--max-bytes-per-sec '3 furlongs': "),
        "{err}"
    );
}

#[test]
fn issue_22_a_flow_inherits_defaults_and_flags_win() {
    let text = "clusters:\n  east:\n    bootstrap: e:1\n  west:\n    bootstrap: w:1\ndefaults:\n  from: east\n  to: west\n  guarantee: exactly-once\n  commit-interval: 7s\n  topics: t\nflows:\n  back:\n    from: west\n    to: east\n    topics: billing\n    rename: \"b.{topic}\"\n    commit-interval: 0s\n  orders-dr:\n    topics: orders\n";
    let f = parse_file(text)
        .unwrap()
        .with_flow(Some("orders-dr"))
        .unwrap();
    let opts = resolve(&crate::cli::CopyArgs::default(), &f).unwrap();
    assert_eq!(
        (opts.from.name.as_str(), opts.to.name.as_str()),
        ("east", "west")
    );
    assert_eq!(opts.guarantee, crate::options::Guarantee::ExactlyOnce);
    assert_eq!(opts.commit_interval, std::time::Duration::from_secs(7));
    assert!(opts.topics.matches("orders") && !opts.topics.matches("t"));
    let f = parse_file(text).unwrap().with_flow(Some("back")).unwrap();
    let mut args = crate::cli::CopyArgs::default();
    let err = resolve(&args, &f).unwrap_err().to_string();
    assert_eq!(
        err,
        "config: flows.back.commit-interval (line 18): must be greater than zero"
    );
    args.commit_interval = Some("1s".into());
    args.ends.rename = Some("flag.{topic}".into());
    let opts = resolve(&args, &f).unwrap();
    assert_eq!(
        (opts.from.name.as_str(), opts.rename.as_str()),
        ("west", "flag.{topic}")
    );
    assert!(opts.topics.matches("billing"));
    // An unknown flow: the known ones, and the one meant.
    let err = parse_file(text)
        .unwrap()
        .with_flow(Some("orders_dr"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "--flow 'orders_dr': no such flow in the config file (known: back, orders-dr); did you mean 'orders-dr'?"
    );
    let err = parse_file("defaults:\n  topics: t\n")
        .unwrap()
        .with_flow(Some("x"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("defines no flows"), "{err}");
}

#[test]
fn issue_35_a_sasl_mechanism_typo_is_named_where_written_with_the_one_meant() {
    let f = parse_file(
        "clusters:\n  a:\n    bootstrap: h:1\n    properties:\n      security.protocol: SASL_SSL\n      sasl.mechanism: SCRAM-SHA-265\n",
    )
    .unwrap();
    let err = cluster(&f, "a", "--from").unwrap_err();
    assert_eq!(err.exit(), crate::error::Exit::Usage);
    assert_eq!(
        err.to_string(),
        "config: clusters.a.properties.sasl.mechanism (line 6): 'SCRAM-SHA-265' is not a SASL mechanism (GSSAPI, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER); did you mean 'SCRAM-SHA-256'?"
    );
    let flag = parse_properties(&["sasl.mechanism=plain".into()], "--to-property")
        .unwrap_err()
        .to_string();
    assert!(
        flag.starts_with("--to-property sasl.mechanism: 'plain' is not a SASL mechanism"),
        "{flag}"
    );
    assert!(flag.ends_with("did you mean 'PLAIN'?"), "{flag}");
    assert!(parse_properties(&["sasl.mechanism=PLAIN".into()], "-X").is_ok());
}
