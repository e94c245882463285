//! The examples and reference texts the man page and docs/guide.md share: the guide's
//! generated blocks are written from these (`kreplicate generate .`), and tests parse the config
//! example, run the JSON example's command and compare the fields. Markdown; the man page
//! drops the backquotes and links.

/// The config file reference: every key (a test parses it and checks it sets every default).
pub const CONFIG_EXAMPLE: &str = r#"clusters:
  prod:
    bootstrap: "kafka-1.prod:9093,kafka-2.prod:9093"
    properties:                       # librdkafka properties, passed through as they are
      security.protocol: SASL_SSL
      sasl.mechanism: SCRAM-SHA-512
      sasl.username: replicator
      sasl.password: ${KAFKA_PROD_PASSWORD}   # ${VAR} is read from the environment
      ssl.ca.location: /etc/ssl/certs/prod-ca.pem
  dr:
    bootstrap: "kafka-1.dr:9093"
    id: dr-east                       # only for brokers that report no cluster id (see below)
defaults:                             # any flag below may be left off the command line
  from: prod
  to: dr
  topics: "^orders\\..*"
  exclude: "^orders\\.tmp\\."            # left out of topics
  guarantee: at-least-once            # none | at-least-once | exactly-once
  rename: "{topic}"
  group: kreplicate.dr
  trust-group-positions: false        # true: start from the group's positions on an empty target
  start: earliest                     # earliest | latest
  on-gap: fail                        # fail | earliest | latest
  delivery-timeout: 2m
  timeout: 30s
  commit-interval: 5s
  join-timeout: 2m
  refresh-topics: 60s                 # continuous runs only; off to disable
  create-topics: false
  replication-factor: 3
  config-exclude: [segment.ms]        # on top of the built-in exclusions
  sync-configs: false
  sync-acls: false                    # true: copy the copied topics' ACLs (needs an authorizer)
  sync-group-acls: "^billing"         # these groups' ACLs too (needs sync-acls: true)
  max-bytes-per-sec: 20MB             # no limit when left out
  max-records-per-sec: 50000
  shard: 1/1                          # static shard; without it none/at-least-once join the group
  txn-max-records: 200000
  txn-max-bytes: 128MiB
  txn-max-time: 2s
  metrics-addr: "127.0.0.1:9464"      # Prometheus /metrics, /healthz and /readyz
  metrics-file: /var/lib/prometheus/node-exporter/kreplicate.prom
  metrics-file-interval: 15s
  no-origin-header: false             # true: no kreplicate.origin header (no translation)
  sync-groups: "^billing"             # consumer groups to keep translated on the target
  sync-groups-interval: 30s
flows:                                # named flows: --flow NAME; each takes defaults' keys
  orders-dr:
    topics: "^orders\\..*"
  billing-back:
    from: dr
    to: prod
    topics: billing
    rename: "back.{topic}"
    guarantee: exactly-once"#;

/// A secured source and target, as `tests/secured.rs` runs them on Apache Kafka.
pub const SECURED_EXAMPLE: &str = r#"clusters:
  a:
    bootstrap: "localhost:9093"
    properties:
      security.protocol: SASL_SSL            # TLS + SASL; the host name is verified
      sasl.mechanism: SCRAM-SHA-512
      sasl.username: replicator
      sasl.password: ${file:/run/credentials/kreplicate.service/a-password}
      ssl.ca.location: /etc/kreplicate/a-ca.pem
  b:
    bootstrap: "dr-1:9094"
    properties:
      security.protocol: SASL_PLAINTEXT
      sasl.mechanism: PLAIN
      sasl.username: writer
      sasl.password: ${KAFKA_DR_PASSWORD}"#;

/// A `--json` summary (a test checks its fields against a real run's).
pub const JSON_EXAMPLE: &str = r#"{"version":1,"guarantee":"at-least-once","records":1201,"bytes":30214,"skipped":0,"unstamped":0,"seconds":2.4,"throttled_seconds":0.0,"status":"ok","error":null,"error_kind":null,"started":"2026-12-01T03:00:00.120Z","ended":"2026-12-01T03:00:02.520Z","from":"prod","to":"dr","group":"kreplicate.MkU3OEVBNTcwNTJENDM2Qk","created_topics":[{"topic":"orders","partitions":1,"configs":{"retention.ms":"7200000"}}],"added_partitions":[],"partitions":[{"topic":"orders","partition":0,"target_topic":"orders","committed":300,"records":120,"first_offset":180,"last_offset":299,"end_offset":300,"lag":0}]}"#;

/// The `--json` summary's fields: (names, meaning); a test checks every real field is here.
pub const JSON_FIELDS: &[(&[&str], &str)] = &[
    (
        &["version"],
        r#"`1`; raised when a field changes meaning or goes away (new fields may appear without it)"#,
    ),
    (
        &["guarantee"],
        r#"`none`, `at-least-once` or `exactly-once`; null when the run ended before the flags were read"#,
    ),
    (
        &["records", "bytes"],
        r#"records (key + value bytes) the target acknowledged in this run; under `exactly-once`, in committed transactions"#,
    ),
    (
        &["skipped"],
        r#"source records not copied because their origin header names the target cluster (they came from it: see [No loops](#provenance-group-translation-and-loops))"#,
    ),
    (
        &["unstamped"],
        r#"records copied without the origin header because with it they exceeded the size limit (`none` and `at-least-once`; see [Provenance](#provenance-group-translation-and-loops))"#,
    ),
    (&["seconds"], r#"wall time of the run"#),
    (
        &["throttled_seconds"],
        r#"of those, the time the read side waited for `--max-bytes-per-sec`/`--max-records-per-sec` (0 without a limit)"#,
    ),
    (
        &["status"],
        r#"`ok`, `stopped` (first signal: flushed, verified, committed), `failed` or `interrupted` (second signal)"#,
    ),
    (&["error"], r#"the error line's text, or null"#),
    (
        &["error_kind"],
        r#"who must act, as the exit code says: `usage` (2), `failed` (1), `interrupted` (130); null on success"#,
    ),
    (
        &["started", "ended"],
        r#"RFC 3339 times in UTC, to the millisecond"#,
    ),
    (
        &["from", "to", "group"],
        r#"the clusters as given (config name or bootstrap list) and the source consumer group; null when not known yet"#,
    ),
    (
        &["created_topics"],
        r#"target topics this run created with `--create-topics` (at start, or found by `--refresh-topics`): `topic`, `partitions` and `configs` (the configs it set, key to value); empty when none"#,
    ),
    (
        &["added_partitions"],
        r#"partitions this run added to existing target topics (`--create-topics`): `topic`, `added` (how many) and `partitions` (the count now); empty when none"#,
    ),
    (
        &["group_sync"],
        r#"with `--sync-groups` only: `rounds` (translation rounds run), `synced` (groups a round translated: committed on the target or already there), `refused` (the last round's refused groups: `group`, `reason`), `waiting` (of those, groups ahead of the copy: they wait for it), `error` (the last round's failure as a whole, or null) and `last_success` (when a round last translated every group, RFC 3339, or null)"#,
    ),
    (
        &["partitions"],
        r#"one object per source partition of the run, with the fields below"#,
    ),
    (
        &["topic", "partition", "target_topic"],
        r#"the source partition and the topic it is copied to (same partition number)"#,
    ),
    (
        &["committed"],
        r#"the committed source position (the next offset to read) at exit, or null"#,
    ),
    (
        &["records", "first_offset", "last_offset"],
        r#"records of this partition the target acknowledged in this run (under `exactly-once`, in committed transactions), and the lowest and highest of their source offsets (null when none)"#,
    ),
    (
        &["end_offset", "lag"],
        r#"the partition's end (high watermark) as the last fetch saw it, and the records from `committed` to it; null when not known (the partition was revoked, or never fetched). A `--until-caught-up` run commits past a transaction marker that follows a partition's last record, so its lag there is 0"#,
    ),
    (
        &["waited_for_source_transaction_seconds"],
        r#"only where reading waited behind a transaction open on the source (its records past the last stable offset are not readable until it commits or aborts): how long, in seconds"#,
    ),
];

/// What `verify --json` prints.
pub const VERIFY_JSON: &str = r#"The `--json` object has `version` (1), `started` and `ended` (RFC 3339), `exact` (the verdict as a boolean), `verdict`, `accept_duplicates`, `from`, `to`, `totals` (the sums of the per-partition counts, and `partitions` and `partitions_differing`) and `partitions`: per partition `topic`, `target_topic`, `partition`, `source_count`, `target_count`, `source_offsets` and `target_offsets` (`{"first","last"}` or null), `missing`, `extra`, `duplicates`, `reordered`, `altered`, `status` (`OK` or `DIFF`), `source_digest`, `target_digest`, `note` and `examples`."#;

/// What `groups --dry-run` and `groups --json` print.
pub const GROUPS_OUTPUT: &str = r#"`--dry-run` prints the table (`would translate`) and commits nothing; both end with one line saying what was (or would be) committed and how many groups were refused, and a refusal ends with what to do (`orders[0] is ahead of the copy: copy first, then translate`); `--json` prints one JSON object (`groups` with `status`, `reason` and `committed` per group; `partitions` with `source_position`, `target_position`, `target_before`, `status` and `records_read` per row)."#;

/// The cut-over recipe (`tests/cutover.rs` runs its commands as written).
pub const CUTOVER: &str = r#"# 1. Stop the producers writing to A (the consumers may go on until the next step).
# 2. Copy what is left, and stop the consumers on A.
kreplicate --from A --to B --topics orders --until-caught-up
# 3. See, then commit, the consumer groups' positions on B.
kreplicate groups --from A --to B --topics orders --dry-run
kreplicate groups --from A --to B --topics orders
# 4. Check the copy.
kreplicate verify --from A --to B --topics orders --accept-duplicates
# 5. Point the producers and consumers at B: each group resumes where it stopped on A."#;
