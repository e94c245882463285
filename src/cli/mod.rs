//! Command-line definitions (clap derive) for every subcommand, with their examples and exit
//! codes. Imports only the run's vocabulary (`options`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::options::{defaults, GapPolicy, Guarantee, StartPosition};

mod texts;
pub use texts::{EXAMPLES, EXIT_CODES, GROUPS_AFTER_HELP, MIGRATE_AFTER_HELP, USAGE};

/// Environment variable naming the config file (below `--config`, above the default path).
pub const CONFIG_ENV: &str = "KREPLICATE_CONFIG";

#[derive(Debug, Parser)]
#[command(
    name = "kreplicate",
    about = "Copy Kafka topics from one cluster to another without losing data",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub copy: CopyArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replicate sample records between two in-process mock clusters, with a broker fault
    /// injected mid-run, and check that every record arrived (no Kafka needed)
    Demo(DemoArgs),
    /// Compare source and target partition by partition: counts, offset ranges and a digest
    /// of key, value, headers and timestamp in order; exit 0 when the target is an exact copy
    Verify(Box<VerifyArgs>),
    /// Show what a copy run with the same flags would do, writing nothing: each source topic,
    /// its target and partitions, configs to create or that differ, the group's positions,
    /// records to copy and the warnings; exit 0 when the run would start, 2 when it would
    /// refuse (prefix any copy command line with `plan`)
    Plan(Box<CopyArgs>),
    /// Whether a copy with the same flags runs and how far behind it is, seen from outside:
    /// the source group's live members, its committed positions against each partition's end
    /// (exactly-once: also the position the target holds); every flow of the config file
    /// without --flow and --topics. Reads only; exit 0, 1 when a broker cannot be reached, 2
    /// for bad input (prefix any copy command line with `status`)
    Status(Box<CopyArgs>),
    /// Translate the committed positions of the source's consumer groups to the target (exact,
    /// from the origin of every copied record) and commit them to the same-named target groups
    #[command(after_help = GROUPS_AFTER_HELP)]
    Groups(Box<GroupsArgs>),
    /// Move topics and their consumer groups from one cluster to another in stages that cannot
    /// be skipped: plan, copy, stop the writers, drain and verify, move the groups, report. The
    /// stage lives on the target, so a rerun anywhere goes on where the last one stopped; exit
    /// 3 when the operator must act
    #[command(
        after_help = MIGRATE_AFTER_HELP,
        args_conflicts_with_subcommands = true,
        subcommand_negates_reqs = true
    )]
    Migrate(Box<MigrateArgs>),
    /// Write the man page and shell completions (man/, completions/) under DIR, and the
    /// generated blocks of DIR/docs/guide.md when DIR holds one
    #[command(hide = true)]
    Generate {
        /// Folder that receives man/ and completions/ (the repository root: `generate .`)
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Delivery guarantee to demonstrate
    #[arg(long, value_enum, default_value_t = Guarantee::AtLeastOnce)]
    pub guarantee: Guarantee,

    /// Number of sample records
    #[arg(long, default_value_t = 3000)]
    pub records: usize,

    /// Print the summary as one JSON object on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Default, Args)]
pub struct CopyArgs {
    #[command(flatten)]
    pub ends: EndpointArgs,

    /// Delivery guarantee
    #[arg(long, value_enum)]
    pub guarantee: Option<Guarantee>,

    /// Source consumer group holding the committed positions [default: kreplicate.<TARGET
    /// CLUSTER ID>, plus .<RENAME> with --rename]
    #[arg(long, value_name = "ID")]
    pub group: Option<String>,

    /// Start from the group's positions even where the target partition is empty or was just
    /// created (without it such a run refuses: the positions may belong to another copy)
    #[arg(long)]
    pub trust_group_positions: bool,

    /// Copy up to the end of every partition as seen at start, commit, and exit 0
    #[arg(long)]
    pub until_caught_up: bool,

    /// Without --until-caught-up: how often to look at the source's topics again (e.g. 30s,
    /// 5m, or off). New topics matching --topics (less --exclude) are copied from their
    /// beginning (or --start), deleted ones stop being copied, and partitions added to a source
    /// topic are followed when the target has as many (--create-topics adds them). Refused
    /// with --until-caught-up, which copies the topics found at start
    #[arg(long, value_name = "DURATION")]
    pub refresh_topics: Option<String>,

    /// Print one JSON summary object on stdout on every exit, errors included (human output
    /// stays on stderr)
    #[arg(long)]
    pub json: bool,

    /// Where a group with no committed position starts; partitions that appear while a run
    /// copies start at their beginning
    #[arg(long, value_enum)]
    pub start: Option<StartPosition>,

    /// What to do when a committed position lies outside the source log (retention, a
    /// recreated topic): fail, or skip to the earliest or latest record
    #[arg(long, value_enum)]
    pub on_gap: Option<GapPolicy>,

    /// Create missing target topics with the source's partition count and the configs set
    /// on the source topic (cleanup.policy, retention.*, segment.*, ...), less the excluded
    /// ones (see --config-exclude)
    #[arg(long)]
    pub create_topics: bool,

    /// Config keys never copied to target topics, on top of the built-in list
    /// (min.insync.replicas, *.replication.throttled.replicas, ...); comma list or repeated, a
    /// trailing '*' matches a prefix, e.g. --config-exclude 'retention.*,segment.ms'
    #[arg(long, value_name = "KEYS", value_delimiter = ',')]
    pub config_exclude: Vec<String>,

    /// Set the source's values of copied configs on existing target topics that differ
    /// (IncrementalAlterConfigs; excluded keys and keys set only on the target are left
    /// alone). Without it, differences are reported as warnings at start
    #[arg(long)]
    pub sync_configs: bool,

    /// Create the LITERAL ACLs of the copied topics on their target topics (renamed with
    /// --rename), as MirrorMaker 2 does: an ALLOW WRITE is never copied (the run is the copies'
    /// one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is. Continuous runs
    /// follow new ACLs every --refresh-topics; ACLs removed from the source stay on the target.
    /// Needs DESCRIBE on the source cluster and DESCRIBE and ALTER on the target cluster
    #[arg(long)]
    pub sync_acls: bool,

    /// With --sync-acls: also create the LITERAL ACLs of these source consumer groups on the
    /// same-named target groups (the ones `kreplicate groups` commits to): a comma list, or a
    /// regex when it starts with '^'
    #[arg(long, value_name = "LIST|^REGEX")]
    pub sync_group_acls: Option<String>,

    /// Read at most this many key + value bytes per second from the source (e.g. 20MB,
    /// 512KiB); time spent waiting shows as "throttled" [default: no limit]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub max_bytes_per_sec: Option<String>,

    /// Read at most this many records per second from the source [default: no limit]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub max_records_per_sec: Option<String>,

    /// Replication factor for topics made by --create-topics [default: the broker's]
    #[arg(long, value_name = "N")]
    pub replication_factor: Option<i32>,

    /// Longest wait for one record's acknowledgement by the target before the run fails
    /// (e.g. 500ms, 30s, 2m)
    #[arg(long, value_name = "DURATION")]
    pub delivery_timeout: Option<String>,

    /// Longest wait for a broker request at start (metadata, topic checks)
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,

    /// How often verified positions are committed to the source group
    #[arg(long, value_name = "DURATION")]
    pub commit_interval: Option<String>,

    /// Longest wait for the consumer group to assign partitions (at start and after a
    /// rebalance) before the run fails with exit 1; --shard needs no group join
    #[arg(long, value_name = "DURATION")]
    pub join_timeout: Option<String>,

    /// Own static shard I of N of the source partitions instead of sharing them through the
    /// consumer group: no group join to wait for and no rebalances; positions are still read
    /// from and committed to --group. Run each shard exactly once. exactly-once always owns a
    /// shard (default 1/1), and each shard has its own transactional identity
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,

    /// Copy records without the kreplicate.origin header (byte-identical headers); without it
    /// the target cannot be resumed by exactly-once, groups cannot be translated and records
    /// copied back by an opposite run cannot be recognised
    #[arg(long)]
    pub no_origin_header: bool,

    /// While copying, translate these source consumer groups' positions to the target and
    /// commit them there, as `kreplicate groups` does (never moving a group back): a comma list,
    /// or a regex when it starts with '^'
    #[arg(long, value_name = "LIST|^REGEX")]
    pub sync_groups: Option<String>,

    /// How often --sync-groups runs (and once more when the copy ends)
    #[arg(long, value_name = "DURATION")]
    pub sync_groups_interval: Option<String>,

    /// exactly-once: commit a transaction after this many records
    #[arg(long, value_name = "N")]
    pub txn_max_records: Option<u64>,

    /// exactly-once: commit a transaction after this many key + value bytes (e.g. 32MiB)
    #[arg(long, value_name = "SIZE")]
    pub txn_max_bytes: Option<String>,

    /// exactly-once: commit a transaction after this long
    #[arg(long, value_name = "DURATION")]
    pub txn_max_time: Option<String>,

    #[command(flatten)]
    pub metrics: MetricsArgs,

    /// No progress display and no summary line on stderr (errors are still printed)
    #[arg(short, long)]
    pub quiet: bool,

    /// Diagnostics on stderr, including librdkafka's log: -v info, -vv debug, -vvv trace
    /// (RUST_LOG=<level> works too)
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// Which clusters and topics: the flags `kreplicate` and `kreplicate verify` share. Each falls
/// back to the config file's `defaults`.
#[derive(Debug, Default, Clone, Args)]
pub struct EndpointArgs {
    /// Source cluster: a name from the config file, or host:port[,host:port]
    #[arg(long, value_name = "CLUSTER")]
    pub from: Option<String>,

    /// Target cluster: a name from the config file, or host:port[,host:port]
    #[arg(long, value_name = "CLUSTER")]
    pub to: Option<String>,

    /// Source topics: a comma list, or a regex when it starts with '^' (resolved at start;
    /// internal topics '__*' never match a regex)
    #[arg(long, value_name = "LIST|^REGEX")]
    pub topics: Option<String>,

    /// Source topics to leave out of --topics: a comma list, or a regex when it starts with
    /// '^', e.g. --topics '^orders\..*' --exclude '^orders\.tmp\.'
    #[arg(long, value_name = "LIST|^REGEX")]
    pub exclude: Option<String>,

    /// Target topic name; {topic} stands for the source topic's name
    #[arg(long, value_name = "TEMPLATE")]
    pub rename: Option<String>,

    /// YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]
    #[arg(long, value_name = "FILE", env = CONFIG_ENV, hide_env_values = true)]
    pub config: Option<PathBuf>,

    /// A named flow of the config file (under flows:): that flow's settings over the file's
    /// defaults, and flags over both
    #[arg(long, value_name = "NAME")]
    pub flow: Option<String>,

    /// librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576
    #[arg(short = 'X', long = "from-property", value_name = "KEY=VALUE")]
    pub from_property: Vec<String>,

    /// librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20
    #[arg(long = "to-property", value_name = "KEY=VALUE")]
    pub to_property: Vec<String>,
}

/// Flags of `kreplicate verify`.
#[derive(Debug, Default, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub ends: EndpointArgs,

    /// Print one JSON object on stdout instead of the table
    #[arg(long)]
    pub json: bool,

    /// Report duplicates (as left by at-least-once reruns) but still exit 0 when every source
    /// record is in the target and, keeping each record's last copy, in source order
    #[arg(long)]
    pub accept_duplicates: bool,

    /// Also fail (exit 1) when a copied topic config differs between source and target
    /// (differences are always reported)
    #[arg(long)]
    pub configs: bool,

    /// Also compare the copied topics' ACLs as --sync-acls copies them (renamed; no ALLOW
    /// WRITE; ALLOW ALL as READ): list those the target lacks and fail (exit 1) when any is
    /// missing. Needs DESCRIBE on both clusters
    #[arg(long)]
    pub acls: bool,

    /// Config keys not compared, on top of the built-in exclusions (as for a copy run)
    #[arg(long, value_name = "KEYS", value_delimiter = ',')]
    pub config_exclude: Vec<String>,

    /// Longest wait for a broker: metadata at start, and the next record or end of a
    /// partition while reading (e.g. 500ms, 30s, 2m); defaults.timeout in the config file
    /// when left out
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

/// Flags of `kreplicate groups`.
#[derive(Debug, Default, Args)]
pub struct GroupsArgs {
    #[command(flatten)]
    pub ends: EndpointArgs,

    /// Source consumer groups: a comma list, or a regex when it starts with '^' [default: every
    /// group with committed positions on --topics, except kreplicate's own (kreplicate*)]
    #[arg(long, value_name = "LIST|^REGEX")]
    pub groups: Option<String>,

    /// Print the table (group, topic, partition, source and target position, status) and
    /// commit nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Also move a target group back when its committed position is past the translated one
    #[arg(long)]
    pub allow_rewind: bool,

    /// Print one JSON object on stdout instead of the table
    #[arg(long)]
    pub json: bool,

    /// Longest wait for a broker request or read (e.g. 500ms, 30s, 2m); defaults.timeout in
    /// the config file when left out
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

/// Flags of `kreplicate migrate`.
#[derive(Debug, Default, Args)]
pub struct MigrateArgs {
    #[command(subcommand)]
    pub command: Option<MigrateCommand>,

    #[command(flatten)]
    pub ends: EndpointArgs,

    /// The migration's name on the target, which keeps its stage [default: the --topics value]
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,

    /// Source consumer groups to move: a comma list, or a regex when it starts with '^'
    /// [default: every group with committed positions on --topics, except kreplicate's own;
    /// with --failback: none]
    #[arg(long, value_name = "LIST|^REGEX")]
    pub groups: Option<String>,

    /// Delivery guarantee of every copy of the migration, fixed at its start; without it,
    /// exactly-once, or at-least-once when the target refuses exactly-once (the run says why)
    #[arg(long, value_enum)]
    pub guarantee: Option<Guarantee>,

    /// The operator stopped the writers: wait until the source is quiet, then go on
    #[arg(long = "continue")]
    pub go_on: bool,

    /// The reverse move, B to A, after the move A to B is done (same --from and --to as the
    /// move): copies what the applications wrote on B back to A (B's copies of A's records
    /// are not copied back) and moves the --groups back
    #[arg(long)]
    pub failback: bool,

    /// The copy stage ends once at most this many records are left to copy [default: 10000]
    #[arg(long, value_name = "N")]
    pub max_lag: Option<u64>,

    /// How long every source partition's end must stay still, with no transaction open, for
    /// the writers to count as stopped [default: 10s]
    #[arg(long, value_name = "DURATION")]
    pub quiet_for: Option<String>,

    /// How long to wait for the writers to stop before exit 3 names the partitions still
    /// written to [default: 5m]
    #[arg(long, value_name = "DURATION")]
    pub writers_timeout: Option<String>,

    /// Create missing target topics with the source's partition count and configs
    #[arg(long)]
    pub create_topics: bool,

    /// Replication factor for topics made by --create-topics and for the state topic
    /// [default: the broker's]
    #[arg(long, value_name = "N")]
    pub replication_factor: Option<i32>,

    /// Longest wait for one record's acknowledgement by the target before a copy fails
    #[arg(long, value_name = "DURATION")]
    pub delivery_timeout: Option<String>,

    /// Longest wait for a broker request
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,

    /// Print one JSON object on stdout on every exit (human output stays on stderr)
    #[arg(long)]
    pub json: bool,

    /// No progress display (stage lines and errors are still printed)
    #[arg(short, long)]
    pub quiet: bool,

    /// Diagnostics on stderr, including librdkafka's log: -v info, -vv debug, -vvv trace
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum MigrateCommand {
    /// Show a migration's stage and what it established, as the target keeps them; reads only
    Status(MigrateStatusArgs),
}

/// Flags of `kreplicate migrate status`.
#[derive(Debug, Default, Args)]
pub struct MigrateStatusArgs {
    #[command(flatten)]
    pub ends: EndpointArgs,

    /// The migration's name on the target [default: the --topics value]
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,

    /// Show the failback's stage (kept on --from) instead of the move's
    #[arg(long)]
    pub failback: bool,

    /// Longest wait for a broker request
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,

    /// Print one JSON object on stdout instead of the text
    #[arg(long)]
    pub json: bool,
}

/// `--version` text: ours and the librdkafka we are built with.
pub fn long_version() -> String {
    let (_, rdkafka) = rdkafka::util::get_rdkafka_version();
    format!("{} (librdkafka {rdkafka})", env!("CARGO_PKG_VERSION"))
}

/// The clap command, as parsed and as documented: each flag with a built-in default
/// ([`defaults::TABLE`]) says it at the end of its help.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let cmd = Cli::command().version(long_version()).after_help(format!(
        "Examples:\n{EXAMPLES}\n\nExit codes:\n{EXIT_CODES}"
    ));
    // `demo` takes clap's own defaults (its flags have no config-file key).
    with_defaults(cmd).mut_subcommands(|sub| match sub.get_name() {
        "demo" => sub,
        _ => with_defaults(sub),
    })
}

/// Appends `[default: VALUE]` to the help of each flag of `cmd` in [`defaults::TABLE`].
fn with_defaults(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        let Some(value) = arg.get_long().and_then(defaults::of) else {
            return arg;
        };
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        arg.help(format!("{help} [default: {value}]"))
    })
}

/// Live metrics of a copy run, in Prometheus text format.
#[derive(Debug, Default, Args)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics at http://HOST:PORT/metrics, a health check at /healthz (503
    /// once the copy stalled for longer than --delivery-timeout) and a readiness check at
    /// /readyz; :PORT listens on every interface
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,

    /// Write the same metrics to PATH (atomically: a temporary file renamed over it) while
    /// running and at exit, for node_exporter's textfile collector
    #[arg(long, value_name = "PATH")]
    pub metrics_file: Option<std::path::PathBuf>,

    /// How often --metrics-file is rewritten while the run copies
    #[arg(long, value_name = "DURATION")]
    pub metrics_file_interval: Option<String>,
}

#[cfg(test)]
mod tests;
