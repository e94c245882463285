//! Issue 44: the alerting rules (deploy/prometheus/kreplicate-alerts.yml, unit-tested by
//! kreplicate-alerts.test.yml) and the Grafana dashboard (deploy/grafana/kreplicate.json) that
//! ship with kreplicate. promtool checks and tests the rules; every metric either names is one
//! src/metrics/catalogue.rs lists; every dashboard query, and every rule's expression, runs on a
//! real Prometheus that scraped a real exactly-once run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use regex::Regex;
use serde_json::Value as Json;
use serde_yaml::Value as Yaml;

use crate::common::kr;
use crate::common::{self, Kafka, Prometheus};

const RULES: &str = "deploy/prometheus/kreplicate-alerts.yml";
const RULE_TESTS: &str = "deploy/prometheus/kreplicate-alerts.test.yml";
const DASHBOARD: &str = "deploy/grafana/kreplicate.json";
/// The metric Prometheus adds for each target; the rules and the dashboard read it too.
const PROMETHEUS_OWN: &[&str] = &["up"];

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

fn yaml(path: &str) -> Yaml {
    serde_yaml::from_str(&read(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn text(v: &Yaml) -> String {
    match v {
        Yaml::String(s) => s.clone(),
        Yaml::Null => String::new(),
        other => serde_yaml::to_string(other)
            .expect("YAML")
            .trim()
            .to_string(),
    }
}

/// One alerting rule of RULES.
#[derive(Debug)]
struct Alert {
    name: String,
    expr: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

fn alerts() -> Vec<Alert> {
    let map = |v: &Yaml| -> BTreeMap<String, String> {
        v.as_mapping()
            .map(|m| m.iter().map(|(k, v)| (text(k), text(v))).collect())
            .unwrap_or_default()
    };
    let rules = yaml(RULES);
    let groups = rules["groups"].as_sequence().expect("groups");
    let out: Vec<Alert> = groups
        .iter()
        .flat_map(|g| g["rules"].as_sequence().expect("rules").iter())
        .map(|r| Alert {
            name: text(&r["alert"]),
            expr: text(&r["expr"]),
            labels: map(&r["labels"]),
            annotations: map(&r["annotations"]),
        })
        .collect();
    assert!(out.len() >= 8, "{RULES} holds {} alerts", out.len());
    out
}

/// Every metric src/metrics/catalogue.rs lists, with its labels.
fn catalogue() -> BTreeMap<String, Vec<String>> {
    let source = read("src/metrics/catalogue.rs");
    let list = source
        .split("pub const CATALOGUE: &[Metric] = &[")
        .nth(1)
        .and_then(|s| s.split("\n];").next())
        .expect("src/metrics/catalogue.rs has `pub const CATALOGUE`");
    let entry = Regex::new(r#"m\("([a-z_]+)", (?:Counter|Gauge), (PARTITION|&\[[^\]]*\]),"#)
        .expect("regex");
    let quoted = Regex::new(r#""([a-z_]+)""#).expect("regex");
    let out: BTreeMap<String, Vec<String>> = entry
        .captures_iter(list)
        .map(|c| {
            let labels = match &c[2] {
                "PARTITION" => vec!["topic".to_string(), "partition".to_string()],
                l => quoted.captures_iter(l).map(|q| q[1].to_string()).collect(),
            };
            (c[1].to_string(), labels)
        })
        .collect();
    assert_eq!(
        out.len(),
        list.matches("    m(\"").count(),
        "an entry of CATALOGUE this test does not read: {list}"
    );
    assert!(
        out.contains_key("kreplicate_records_copied_total"),
        "{out:?}"
    );
    out
}

/// The metric names a PromQL expression selects (functions, keywords, labels, strings and
/// durations left out). Grafana's `label_values(SELECTOR, LABEL)` gives SELECTOR's.
fn metric_names(expr: &str) -> BTreeSet<String> {
    let expr = match expr.trim().strip_prefix("label_values(") {
        Some(rest) => rest.rsplit_once(',').map_or(rest, |(s, _)| s).to_string(),
        None => expr.to_string(),
    };
    let mut e = expr;
    for (pattern, with) in [
        (r#""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'"#, "\"\""),
        (r"\{[^}]*\}", ""),
        (r"\[[^\]]*\]", ""),
        (
            r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)",
            "",
        ),
    ] {
        e = Regex::new(pattern)
            .expect("regex")
            .replace_all(&e, with)
            .into_owned();
    }
    let keywords = [
        "and", "or", "unless", "by", "without", "on", "ignoring", "bool", "offset",
    ];
    let ident = Regex::new(r"\b[a-zA-Z_:][a-zA-Z0-9_:]*").expect("regex");
    ident
        .find_iter(&e)
        .filter(|m| !e[m.end()..].trim_start().starts_with('('))
        .map(|m| m.as_str().to_string())
        .filter(|w| !keywords.contains(&w.as_str()))
        .collect()
}

/// The selectors (metric and matchers) of an expression, e.g. `kreplicate_status{status="ok"}`.
fn selectors(expr: &str) -> BTreeSet<String> {
    Regex::new(r"\b(?:kreplicate_[a-z_]+|up)\b(?:\{[^}]*\})?")
        .expect("regex")
        .find_iter(expr)
        .map(|m| m.as_str().to_string())
        .collect()
}

/// One query of the dashboard: its panel, refId, expression, and whether Grafana runs it as an
/// instant query.
#[derive(Debug)]
struct Query {
    panel: String,
    ref_id: String,
    expr: String,
    instant: bool,
}

fn dashboard() -> Json {
    serde_json::from_str(&read(DASHBOARD)).unwrap_or_else(|e| panic!("{DASHBOARD}: {e}"))
}

fn queries(dash: &Json) -> Vec<Query> {
    fn walk(panels: &Json, out: &mut Vec<Query>) {
        for p in panels.as_array().into_iter().flatten() {
            walk(&p["panels"], out);
            for t in p["targets"].as_array().into_iter().flatten() {
                out.push(Query {
                    panel: p["title"].as_str().unwrap_or_default().to_string(),
                    ref_id: t["refId"].as_str().unwrap_or_default().to_string(),
                    expr: t["expr"].as_str().unwrap_or_default().to_string(),
                    instant: t["instant"].as_bool().unwrap_or(false),
                });
            }
        }
    }
    let mut out = Vec::new();
    walk(&dash["panels"], &mut out);
    out
}

/// The dashboard's query variables: name and `label_values(...)` query.
fn variables(dash: &Json) -> Vec<(String, String)> {
    dash["templating"]["list"]
        .as_array()
        .expect("templating.list")
        .iter()
        .filter(|v| v["type"] == "query")
        .map(|v| {
            let q = v["query"]["query"].as_str().or(v["query"].as_str());
            (
                v["name"].as_str().expect("name").to_string(),
                q.expect("a variable's query").to_string(),
            )
        })
        .collect()
}

/// What Grafana sends for `expr`: its interval variables, then each variable's value, escaped
/// as Grafana escapes the value of a multi-value variable inside a regex matcher.
fn substitute(expr: &str, values: &BTreeMap<String, String>) -> String {
    let mut e = expr
        .replace("$__rate_interval", "10s")
        .replace("${__rate_interval}", "10s")
        .replace("$__interval", "2s")
        .replace("$__range", "1m");
    // Longest names first: $instance before a variable named $i.
    let mut names: Vec<_> = values.keys().collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    for name in names {
        let escaped: String = values[name]
            .chars()
            .flat_map(|c| {
                let special = "\\^$*+?.()|{}[]".contains(c);
                special
                    .then_some(['\\', '\\'])
                    .into_iter()
                    .flatten()
                    .chain([c])
            })
            .collect();
        e = e
            .replace(&format!("${{{name}}}"), &escaped)
            .replace(&format!("${name}"), &escaped);
    }
    e
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64()
}

/// A GET of Prometheus' HTTP API: its `data`, or the error it answered.
fn api(prometheus: &Prometheus, path: &str, params: &[(&str, &str)]) -> Result<Json, String> {
    let mut req = ureq::get(&format!("{}{path}", prometheus.url)).timeout(Duration::from_secs(10));
    for (k, v) in params {
        req = req.query(k, v);
    }
    let body = match req.call() {
        Ok(r) => r.into_string().map_err(|e| e.to_string())?,
        Err(ureq::Error::Status(code, r)) => {
            return Err(format!(
                "HTTP {code}: {}",
                r.into_string().unwrap_or_default()
            ))
        }
        Err(e) => return Err(e.to_string()),
    };
    let json: Json = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
    if json["status"] != "success" {
        return Err(body);
    }
    Ok(json["data"].clone())
}

fn promtool(args: &[&str]) -> (bool, String) {
    let bin = Path::new("/usr/bin/promtool");
    assert!(
        bin.is_file(),
        "{} not found: run scripts/install-deps.sh (it installs Debian's prometheus)",
        bin.display()
    );
    let out = Command::new(bin)
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/prometheus"))
        .output()
        .expect("run promtool");
    let text = format!(
        "$ promtool {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{text}");
    (out.status.success(), text)
}

/// promtool accepts the rules and passes their unit tests; those test every alert both firing
/// and quiet; every alert has a severity and says where (the instance; the topic and partition
/// when it reads a partition's metric).
#[test]
fn issue_44_promtool_checks_and_unit_tests_every_alerting_rule() {
    let (ok, out) = promtool(&["check", "rules", "kreplicate-alerts.yml"]);
    assert!(ok && out.contains("SUCCESS"), "{out}");
    let (ok, out) = promtool(&["test", "rules", "kreplicate-alerts.test.yml"]);
    assert!(ok && out.contains("SUCCESS"), "{out}");

    let alerts = alerts();
    let names: BTreeSet<&str> = alerts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names.len(), alerts.len(), "an alert named twice");
    // alertname -> (a case where it fires, a case where it stays quiet).
    let mut cases: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    let tests = yaml(RULE_TESTS);
    for test in tests["tests"].as_sequence().expect("tests") {
        for case in test["alert_rule_test"].as_sequence().into_iter().flatten() {
            let name = text(&case["alertname"]);
            let fires = case["exp_alerts"]
                .as_sequence()
                .is_some_and(|a| !a.is_empty());
            let seen = cases.entry(name).or_default();
            seen.0 |= fires;
            seen.1 |= !fires;
        }
    }
    let mut wrong = Vec::new();
    for name in cases.keys() {
        if !names.contains(name.as_str()) {
            wrong.push(format!(
                "{RULE_TESTS} tests {name}, which {RULES} does not define"
            ));
        }
    }
    let catalogue = catalogue();
    for a in &alerts {
        match cases.get(&a.name) {
            Some((true, true)) => {}
            other => wrong.push(format!(
                "{}: (fires, quiet) tested = {other:?}; {RULE_TESTS} needs both",
                a.name
            )),
        }
        let severity = a.labels.get("severity").map(String::as_str);
        if !matches!(severity, Some("critical" | "warning")) {
            wrong.push(format!("{}: severity {severity:?}", a.name));
        }
        let (summary, description) = (
            a.annotations.get("summary").cloned().unwrap_or_default(),
            a.annotations
                .get("description")
                .cloned()
                .unwrap_or_default(),
        );
        let said = format!("{summary} {description}");
        let mut names_where = vec!["$labels.instance"];
        let per_partition = metric_names(&a.expr).iter().any(|m| {
            catalogue
                .get(m)
                .is_some_and(|labels| labels.iter().any(|l| l == "partition"))
        });
        if per_partition {
            names_where.extend(["$labels.topic", "$labels.partition"]);
        }
        for label in names_where {
            if summary.is_empty() || description.is_empty() || !said.contains(label) {
                wrong.push(format!(
                    "{}: its summary and description must name {label}: {said}",
                    a.name
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every metric the rules and the dashboard (panels and variables) select is one kreplicate
/// serves (src/metrics/catalogue.rs, which a unit test holds to the exposition) or Prometheus'
/// own `up`: a renamed metric fails here. And the dashboard shows every metric served.
#[test]
fn issue_44_the_rules_and_the_dashboard_use_only_metrics_kreplicate_serves() {
    let catalogue = catalogue();
    let known = |m: &str| catalogue.contains_key(m) || PROMETHEUS_OWN.contains(&m);
    let dash = dashboard();
    let mut used: Vec<(String, String)> = alerts()
        .into_iter()
        .map(|a| (format!("alert {}", a.name), a.expr))
        .collect();
    used.extend(
        queries(&dash)
            .into_iter()
            .map(|q| (format!("panel {:?} {}", q.panel, q.ref_id), q.expr)),
    );
    used.extend(
        variables(&dash)
            .into_iter()
            .map(|(name, q)| (format!("variable ${name}"), q)),
    );
    let mut unknown = Vec::new();
    let mut shown = BTreeSet::new();
    for (what, expr) in &used {
        let names = metric_names(expr);
        if names.is_empty() {
            unknown.push(format!("{what} selects no metric: {expr}"));
        }
        for m in names {
            if !known(&m) {
                unknown.push(format!("{what} uses {m}, which kreplicate does not serve"));
            }
            shown.insert(m);
        }
    }
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
    let missing: Vec<_> = catalogue.keys().filter(|m| !shown.contains(*m)).collect();
    assert!(
        missing.is_empty(),
        "{DASHBOARD} shows no panel of {missing:?}"
    );
    // The reader itself: a label, a function, a keyword and a variable are not metrics.
    assert_eq!(
        metric_names(
            r#"sum by (topic) (rate(kreplicate_records_copied_total{topic=~"$topic"}[$__rate_interval])) and on (job) up"#
        ),
        BTreeSet::from([
            "kreplicate_records_copied_total".to_string(),
            "up".to_string()
        ])
    );
}

/// The dashboard against a real run: an exactly-once copy with --sync-groups (so transactions
/// and the group sync have values) of records written while it runs, scraped every second by a
/// real Prometheus. Each variable's query lists the run's job, instance and topic; each panel's
/// each query, with those values and the interval variables substituted as Grafana does, parses
/// and returns series. Then, caught up, each rule's expression parses, each of its selectors
/// matches the run's series, and none would fire on this healthy run.
#[test]
fn issue_44_every_dashboard_query_returns_data_from_a_real_run() {
    let (a, b) = (Kafka::shared("a"), Kafka::shared("b"));
    let (ab, bb) = (a.bootstrap.as_str(), b.bootstrap.as_str());
    let topic = common::unique("dashboard");
    let (copier, app) = (format!("{topic}.copy"), format!("{topic}.app"));
    common::create_topic(ab, &topic, 2);
    common::create_topic(bb, &topic, 2);
    common::produce(ab, &topic, &kr::records(1000, 2, "before"));
    common::commit(ab, &app, &topic, &[(0, 100), (1, 100)]);
    let addr = format!("127.0.0.1:{}", common::free_port());
    let args = kr::Args::copy(ab, bb)
        .topics(&topic)
        .group(&copier)
        .guarantee("exactly-once")
        .with(&["--txn-max-time", "200ms", "--metrics-addr", &addr])
        .with(&["--sync-groups", &app, "--sync-groups-interval", "1s"])
        .fast_group()
        .build();
    let child = kr::spawn(&args);
    let prometheus = Prometheus::start(&addr);
    let from = unix_now();
    // Its first scrape comes seconds after it is ready (service discovery's first update).
    prometheus.wait_for("up", |s| !s.is_empty());
    let writer = kr::Writer::start(ab, &topic, 2);
    let positive = |s: &[common::monitor::Sample]| s.first().is_some_and(|x| x.1 > 0.0);
    prometheus.wait_for("kreplicate_transactions_committed_total", positive);
    prometheus.wait_for(
        "kreplicate_group_sync_last_success_timestamp_seconds",
        positive,
    );
    // Scrapes of the copy going on, a rate's window and more: rates over them.
    prometheus.wait_for("sum(count_over_time(up[1m]))", |s| {
        s.first().is_some_and(|x| x.1 >= 12.0)
    });
    drop(writer);
    let lag = format!("kreplicate_lag_records{{topic=\"{topic}\"}}");
    prometheus.wait_for(&lag, |s| s.len() == 2 && s.iter().all(|x| x.1 == 0.0));
    prometheus.wait_for("kreplicate_ready", |s| {
        s.first().is_some_and(|x| x.1 == 1.0)
    });
    let to = unix_now();
    let (start, end) = (format!("{from:.3}"), format!("{to:.3}"));

    let dash = dashboard();
    let values = BTreeMap::from([
        ("job".to_string(), "kreplicate".to_string()),
        ("instance".to_string(), addr.clone()),
        ("topic".to_string(), topic.clone()),
    ]);
    let mut results = Vec::new();
    let mut failed = Vec::new();
    for (name, query) in variables(&dash) {
        let Some(want) = values.get(&name) else {
            failed.push(format!("variable ${name}: no value for it in this test"));
            continue;
        };
        let q = substitute(&query, &values);
        let (selector, label) = q
            .strip_prefix("label_values(")
            .and_then(|r| r.strip_suffix(')'))
            .and_then(|r| r.rsplit_once(','))
            .map(|(s, l)| (s.trim().to_string(), l.trim().to_string()))
            .unwrap_or_else(|| panic!("variable ${name}: not label_values(SELECTOR, LABEL): {q}"));
        let got: BTreeSet<String> = match api(
            &prometheus,
            "/api/v1/series",
            &[("match[]", &selector), ("start", &start), ("end", &end)],
        ) {
            Ok(series) => series
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s[&label].as_str().map(str::to_string))
                .collect(),
            Err(e) => {
                failed.push(format!("variable ${name}: {q}: {e}"));
                continue;
            }
        };
        results.push(format!("variable ${name}: {q} -> {got:?}"));
        if !got.contains(want) {
            failed.push(format!("variable ${name}: {q} lists {got:?}, not {want}"));
        }
    }
    for q in queries(&dash) {
        let expr = substitute(&q.expr, &values);
        let what = format!("panel {:?} {}: {expr}", q.panel, q.ref_id);
        if expr.contains('$') {
            failed.push(format!("{what}: a variable this test does not know"));
            continue;
        }
        let answer = if q.instant {
            api(
                &prometheus,
                "/api/v1/query",
                &[("query", &expr), ("time", &end)],
            )
        } else {
            api(
                &prometheus,
                "/api/v1/query_range",
                &[
                    ("query", &expr),
                    ("start", &start),
                    ("end", &end),
                    ("step", "1"),
                ],
            )
        };
        match answer {
            Err(e) => failed.push(format!("{what}: {e}")),
            Ok(data) => {
                let series = data["result"].as_array().map_or(0, Vec::len);
                results.push(format!(
                    "{} {what} -> {series} series",
                    if q.instant { "instant" } else { "range" }
                ));
                if series == 0 {
                    failed.push(format!("{what}: no data"));
                }
            }
        }
    }
    // The copy moved: the throughput and transaction panels show more than zeros.
    for (panel, ref_id) in [
        ("Records copied per second", "A"),
        ("Transactions per second (exactly-once)", "A"),
    ] {
        let q = queries(&dash)
            .into_iter()
            .find(|q| q.panel == panel && q.ref_id == ref_id)
            .unwrap_or_else(|| panic!("{DASHBOARD} has no panel {panel:?} {ref_id}"));
        let expr = substitute(&q.expr, &values);
        let params = [
            ("query", expr.as_str()),
            ("start", &start),
            ("end", &end),
            ("step", "1"),
        ];
        let data = api(&prometheus, "/api/v1/query_range", &params).unwrap_or_default();
        let peak = data["result"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|s| s["values"].as_array().into_iter().flatten())
            .filter_map(|v| v[1].as_str()?.parse::<f64>().ok())
            .fold(0.0, f64::max);
        results.push(format!("panel {panel:?} {ref_id}: peak {peak}"));
        if peak <= 0.0 {
            failed.push(format!("panel {panel:?} {ref_id}: never above 0: {expr}"));
        }
    }
    // The rules on the same run, caught up and healthy.
    for alert in alerts() {
        match api(&prometheus, "/api/v1/query", &[("query", &alert.expr)]) {
            Err(e) => failed.push(format!("alert {}: {e}", alert.name)),
            Ok(data) if data["result"].as_array().is_some_and(|r| !r.is_empty()) => {
                failed.push(format!(
                    "alert {} fires on a healthy run: {}",
                    alert.name, data["result"]
                ))
            }
            Ok(_) => results.push(format!("alert {}: quiet", alert.name)),
        }
        for selector in selectors(&alert.expr) {
            match api(&prometheus, "/api/v1/query", &[("query", &selector)]) {
                Ok(data) if data["result"].as_array().is_some_and(|r| !r.is_empty()) => {}
                other => failed.push(format!(
                    "alert {}: {selector} matches no series of the run: {other:?}",
                    alert.name
                )),
            }
        }
    }
    eprintln!("{}", results.join("\n"));

    kr::signal(&child, "TERM");
    let run = kr::wait(child, Duration::from_secs(60));
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert_eq!(run.code, 0, "{run:?}");
}
