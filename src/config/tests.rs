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
        "defaults: unknown key `create-topic` at line 2 column 3: did you mean `create-topics`?"
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
