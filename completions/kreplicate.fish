# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kreplicate_global_optspecs
    string join \n from= to= topics= exclude= rename= config= flow= X/from-property= to-property= guarantee= group= trust-group-positions until-caught-up refresh-topics= json start= on-gap= create-topics config-exclude= sync-configs sync-acls sync-group-acls= max-bytes-per-sec= max-records-per-sec= replication-factor= delivery-timeout= timeout= commit-interval= join-timeout= shard= no-origin-header sync-groups= sync-groups-interval= txn-max-records= txn-max-bytes= txn-max-time= metrics-addr= metrics-file= metrics-file-interval= q/quiet v/verbose h/help V/version
end

function __fish_kreplicate_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kreplicate_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kreplicate_using_subcommand
    set -l cmd (__fish_kreplicate_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kreplicate -n "__fish_kreplicate_needs_command" -l from -d 'Source cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l to -d 'Target cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l topics -d 'Source topics: a comma list, or a regex when it starts with \'^\' (resolved at start; internal topics \'__*\' never match a regex)' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l exclude -d 'Source topics to leave out of --topics: a comma list, or a regex when it starts with \'^\', e.g. --topics \'^orders\\..*\' --exclude \'^orders\\.tmp\\.\'' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l rename -d 'Target topic name; {topic} stands for the source topic\'s name [default: {topic}]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l config -d 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]' -r -F
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l flow -d 'A named flow of the config file (under flows:): that flow\'s settings over the file\'s defaults, and flags over both' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -s X -l from-property -d 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l to-property -d 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l guarantee -d 'Delivery guarantee [default: at-least-once]' -r -f -a "none\t'Fastest: offsets are committed as records are read; records may be lost on failure'
at-least-once\t'Commit only what the target acknowledged; duplicates possible after a failure'
exactly-once\t'Transactional copy; the target holds the positions; read_committed readers of the target see every record once'"
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l group -d 'Source consumer group holding the committed positions [default: kreplicate.<TARGET CLUSTER ID>, plus .<RENAME> with --rename]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l refresh-topics -d 'Without --until-caught-up: how often to look at the source\'s topics again (e.g. 30s, 5m, or off). New topics matching --topics (less --exclude) are copied from their beginning (or --start), deleted ones stop being copied, and partitions added to a source topic are followed when the target has as many (--create-topics adds them). Refused with --until-caught-up, which copies the topics found at start [default: 60s]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l start -d 'Where a group with no committed position starts; partitions that appear while a run copies start at their beginning [default: earliest]' -r -f -a "earliest\t'The oldest record still in the source'
latest\t'Only records written after the run starts'"
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l on-gap -d 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]' -r -f -a "fail\t'Stop with exit 1 and name the partition and offsets'
earliest\t'Continue from the oldest record still in the source'
latest\t'Continue from the newest record of the source'"
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l config-exclude -d 'Config keys never copied to target topics, on top of the built-in list (min.insync.replicas, *.replication.throttled.replicas, ...); comma list or repeated, a trailing \'*\' matches a prefix, e.g. --config-exclude \'retention.*,segment.ms\'' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l sync-group-acls -d 'With --sync-acls: also create the LITERAL ACLs of these source consumer groups on the same-named target groups (the ones `kreplicate groups` commits to): a comma list, or a regex when it starts with \'^\'' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l max-bytes-per-sec -d 'Read at most this many key + value bytes per second from the source (e.g. 20MB, 512KiB); time spent waiting shows as "throttled" [default: no limit]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l max-records-per-sec -d 'Read at most this many records per second from the source [default: no limit]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l replication-factor -d 'Replication factor for topics made by --create-topics [default: the broker\'s]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l delivery-timeout -d 'Longest wait for one record\'s acknowledgement by the target before the run fails (e.g. 500ms, 30s, 2m) [default: 2m]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l timeout -d 'Longest wait for a broker request at start (metadata, topic checks) [default: 30s]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l commit-interval -d 'How often verified positions are committed to the source group [default: 5s]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l join-timeout -d 'Longest wait for the consumer group to assign partitions (at start and after a rebalance) before the run fails with exit 1; --shard needs no group join [default: 2m]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l shard -d 'Own static shard I of N of the source partitions instead of sharing them through the consumer group: no group join to wait for and no rebalances; positions are still read from and committed to --group. Run each shard exactly once. exactly-once always owns a shard (default 1/1), and each shard has its own transactional identity' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l sync-groups -d 'While copying, translate these source consumer groups\' positions to the target and commit them there, as `kreplicate groups` does (never moving a group back): a comma list, or a regex when it starts with \'^\'' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l sync-groups-interval -d 'How often --sync-groups runs (and once more when the copy ends) [default: 30s]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l txn-max-records -d 'exactly-once: commit a transaction after this many records [default: 200000]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l txn-max-bytes -d 'exactly-once: commit a transaction after this many key + value bytes (e.g. 32MiB) [default: 128MiB]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l txn-max-time -d 'exactly-once: commit a transaction after this long [default: 2s]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l metrics-addr -d 'Serve Prometheus metrics at http://HOST:PORT/metrics, a health check at /healthz (503 once the copy stalled for longer than --delivery-timeout) and a readiness check at /readyz; :PORT listens on every interface' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l metrics-file -d 'Write the same metrics to PATH (atomically: a temporary file renamed over it) while running and at exit, for node_exporter\'s textfile collector' -r -F
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l metrics-file-interval -d 'How often --metrics-file is rewritten while the run copies [default: 15s]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l trust-group-positions -d 'Start from the group\'s positions even where the target partition is empty or was just created (without it such a run refuses: the positions may belong to another copy)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l until-caught-up -d 'Copy up to the end of every partition as seen at start, commit, and exit 0'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l json -d 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l create-topics -d 'Create missing target topics with the source\'s partition count and the configs set on the source topic (cleanup.policy, retention.*, segment.*, ...), less the excluded ones (see --config-exclude)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l sync-configs -d 'Set the source\'s values of copied configs on existing target topics that differ (IncrementalAlterConfigs; excluded keys and keys set only on the target are left alone). Without it, differences are reported as warnings at start'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l sync-acls -d 'Create the LITERAL ACLs of the copied topics on their target topics (renamed with --rename), as MirrorMaker 2 does: an ALLOW WRITE is never copied (the run is the copies\' one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is. Continuous runs follow new ACLs every --refresh-topics; ACLs removed from the source stay on the target. Needs DESCRIBE on the source cluster and DESCRIBE and ALTER on the target cluster'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l no-origin-header -d 'Copy records without the kreplicate.origin header (byte-identical headers); without it the target cannot be resumed by exactly-once, groups cannot be translated and records copied back by an opposite run cannot be recognised'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -s q -l quiet -d 'No progress display and no summary line on stderr (errors are still printed)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -s v -l verbose -d 'Diagnostics on stderr, including librdkafka\'s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -s V -l version -d 'Print version'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "demo" -d 'Replicate sample records between two in-process mock clusters, with a broker fault injected mid-run, and check that every record arrived (no Kafka needed)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "verify" -d 'Compare source and target partition by partition: counts, offset ranges and a digest of key, value, headers and timestamp in order; exit 0 when the target is an exact copy'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "plan" -d 'Show what a copy run with the same flags would do, writing nothing: each source topic, its target and partitions, configs to create or that differ, the group\'s positions, records to copy and the warnings; exit 0 when the run would start, 2 when it would refuse (prefix any copy command line with `plan`)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "status" -d 'Whether a copy with the same flags runs and how far behind it is, seen from outside: the source group\'s live members, its committed positions against each partition\'s end (exactly-once: also the position the target holds); every flow of the config file without --flow and --topics. Reads only; exit 0, 1 when a broker cannot be reached, 2 for bad input (prefix any copy command line with `status`)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "groups" -d 'Translate the committed positions of the source\'s consumer groups to the target (exact, from the origin of every copied record) and commit them to the same-named target groups'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "generate" -d 'Write the man page and shell completions (man/, completions/) under DIR, and the generated blocks of DIR/docs/guide.md when DIR holds one'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand demo" -l guarantee -d 'Delivery guarantee to demonstrate' -r -f -a "none\t'Fastest: offsets are committed as records are read; records may be lost on failure'
at-least-once\t'Commit only what the target acknowledged; duplicates possible after a failure'
exactly-once\t'Transactional copy; the target holds the positions; read_committed readers of the target see every record once'"
complete -c kreplicate -n "__fish_kreplicate_using_subcommand demo" -l records -d 'Number of sample records' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand demo" -l json -d 'Print the summary as one JSON object on stdout'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand demo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l from -d 'Source cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l to -d 'Target cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l topics -d 'Source topics: a comma list, or a regex when it starts with \'^\' (resolved at start; internal topics \'__*\' never match a regex)' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l exclude -d 'Source topics to leave out of --topics: a comma list, or a regex when it starts with \'^\', e.g. --topics \'^orders\\..*\' --exclude \'^orders\\.tmp\\.\'' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l rename -d 'Target topic name; {topic} stands for the source topic\'s name [default: {topic}]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l config -d 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]' -r -F
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l flow -d 'A named flow of the config file (under flows:): that flow\'s settings over the file\'s defaults, and flags over both' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -s X -l from-property -d 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l to-property -d 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l config-exclude -d 'Config keys not compared, on top of the built-in exclusions (as for a copy run)' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l timeout -d 'Longest wait for a broker: metadata at start, and the next record or end of a partition while reading (e.g. 500ms, 30s, 2m); defaults.timeout in the config file when left out [default: 30s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l json -d 'Print one JSON object on stdout instead of the table'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l accept-duplicates -d 'Report duplicates (as left by at-least-once reruns) but still exit 0 when every source record is in the target and, keeping each record\'s last copy, in source order'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l configs -d 'Also fail (exit 1) when a copied topic config differs between source and target (differences are always reported)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l acls -d 'Also compare the copied topics\' ACLs as --sync-acls copies them (renamed; no ALLOW WRITE; ALLOW ALL as READ): list those the target lacks and fail (exit 1) when any is missing. Needs DESCRIBE on both clusters'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -s h -l help -d 'Print help'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l from -d 'Source cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l to -d 'Target cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l topics -d 'Source topics: a comma list, or a regex when it starts with \'^\' (resolved at start; internal topics \'__*\' never match a regex)' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l exclude -d 'Source topics to leave out of --topics: a comma list, or a regex when it starts with \'^\', e.g. --topics \'^orders\\..*\' --exclude \'^orders\\.tmp\\.\'' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l rename -d 'Target topic name; {topic} stands for the source topic\'s name [default: {topic}]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l config -d 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]' -r -F
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l flow -d 'A named flow of the config file (under flows:): that flow\'s settings over the file\'s defaults, and flags over both' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -s X -l from-property -d 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l to-property -d 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l guarantee -d 'Delivery guarantee [default: at-least-once]' -r -f -a "none\t'Fastest: offsets are committed as records are read; records may be lost on failure'
at-least-once\t'Commit only what the target acknowledged; duplicates possible after a failure'
exactly-once\t'Transactional copy; the target holds the positions; read_committed readers of the target see every record once'"
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l group -d 'Source consumer group holding the committed positions [default: kreplicate.<TARGET CLUSTER ID>, plus .<RENAME> with --rename]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l refresh-topics -d 'Without --until-caught-up: how often to look at the source\'s topics again (e.g. 30s, 5m, or off). New topics matching --topics (less --exclude) are copied from their beginning (or --start), deleted ones stop being copied, and partitions added to a source topic are followed when the target has as many (--create-topics adds them). Refused with --until-caught-up, which copies the topics found at start [default: 60s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l start -d 'Where a group with no committed position starts; partitions that appear while a run copies start at their beginning [default: earliest]' -r -f -a "earliest\t'The oldest record still in the source'
latest\t'Only records written after the run starts'"
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l on-gap -d 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]' -r -f -a "fail\t'Stop with exit 1 and name the partition and offsets'
earliest\t'Continue from the oldest record still in the source'
latest\t'Continue from the newest record of the source'"
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l config-exclude -d 'Config keys never copied to target topics, on top of the built-in list (min.insync.replicas, *.replication.throttled.replicas, ...); comma list or repeated, a trailing \'*\' matches a prefix, e.g. --config-exclude \'retention.*,segment.ms\'' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l sync-group-acls -d 'With --sync-acls: also create the LITERAL ACLs of these source consumer groups on the same-named target groups (the ones `kreplicate groups` commits to): a comma list, or a regex when it starts with \'^\'' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l max-bytes-per-sec -d 'Read at most this many key + value bytes per second from the source (e.g. 20MB, 512KiB); time spent waiting shows as "throttled" [default: no limit]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l max-records-per-sec -d 'Read at most this many records per second from the source [default: no limit]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l replication-factor -d 'Replication factor for topics made by --create-topics [default: the broker\'s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l delivery-timeout -d 'Longest wait for one record\'s acknowledgement by the target before the run fails (e.g. 500ms, 30s, 2m) [default: 2m]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l timeout -d 'Longest wait for a broker request at start (metadata, topic checks) [default: 30s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l commit-interval -d 'How often verified positions are committed to the source group [default: 5s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l join-timeout -d 'Longest wait for the consumer group to assign partitions (at start and after a rebalance) before the run fails with exit 1; --shard needs no group join [default: 2m]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l shard -d 'Own static shard I of N of the source partitions instead of sharing them through the consumer group: no group join to wait for and no rebalances; positions are still read from and committed to --group. Run each shard exactly once. exactly-once always owns a shard (default 1/1), and each shard has its own transactional identity' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l sync-groups -d 'While copying, translate these source consumer groups\' positions to the target and commit them there, as `kreplicate groups` does (never moving a group back): a comma list, or a regex when it starts with \'^\'' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l sync-groups-interval -d 'How often --sync-groups runs (and once more when the copy ends) [default: 30s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l txn-max-records -d 'exactly-once: commit a transaction after this many records [default: 200000]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l txn-max-bytes -d 'exactly-once: commit a transaction after this many key + value bytes (e.g. 32MiB) [default: 128MiB]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l txn-max-time -d 'exactly-once: commit a transaction after this long [default: 2s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l metrics-addr -d 'Serve Prometheus metrics at http://HOST:PORT/metrics, a health check at /healthz (503 once the copy stalled for longer than --delivery-timeout) and a readiness check at /readyz; :PORT listens on every interface' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l metrics-file -d 'Write the same metrics to PATH (atomically: a temporary file renamed over it) while running and at exit, for node_exporter\'s textfile collector' -r -F
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l metrics-file-interval -d 'How often --metrics-file is rewritten while the run copies [default: 15s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l trust-group-positions -d 'Start from the group\'s positions even where the target partition is empty or was just created (without it such a run refuses: the positions may belong to another copy)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l until-caught-up -d 'Copy up to the end of every partition as seen at start, commit, and exit 0'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l json -d 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l create-topics -d 'Create missing target topics with the source\'s partition count and the configs set on the source topic (cleanup.policy, retention.*, segment.*, ...), less the excluded ones (see --config-exclude)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l sync-configs -d 'Set the source\'s values of copied configs on existing target topics that differ (IncrementalAlterConfigs; excluded keys and keys set only on the target are left alone). Without it, differences are reported as warnings at start'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l sync-acls -d 'Create the LITERAL ACLs of the copied topics on their target topics (renamed with --rename), as MirrorMaker 2 does: an ALLOW WRITE is never copied (the run is the copies\' one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is. Continuous runs follow new ACLs every --refresh-topics; ACLs removed from the source stay on the target. Needs DESCRIBE on the source cluster and DESCRIBE and ALTER on the target cluster'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -l no-origin-header -d 'Copy records without the kreplicate.origin header (byte-identical headers); without it the target cannot be resumed by exactly-once, groups cannot be translated and records copied back by an opposite run cannot be recognised'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -s q -l quiet -d 'No progress display and no summary line on stderr (errors are still printed)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -s v -l verbose -d 'Diagnostics on stderr, including librdkafka\'s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l from -d 'Source cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l to -d 'Target cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l topics -d 'Source topics: a comma list, or a regex when it starts with \'^\' (resolved at start; internal topics \'__*\' never match a regex)' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l exclude -d 'Source topics to leave out of --topics: a comma list, or a regex when it starts with \'^\', e.g. --topics \'^orders\\..*\' --exclude \'^orders\\.tmp\\.\'' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l rename -d 'Target topic name; {topic} stands for the source topic\'s name [default: {topic}]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l config -d 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]' -r -F
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l flow -d 'A named flow of the config file (under flows:): that flow\'s settings over the file\'s defaults, and flags over both' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -s X -l from-property -d 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l to-property -d 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l guarantee -d 'Delivery guarantee [default: at-least-once]' -r -f -a "none\t'Fastest: offsets are committed as records are read; records may be lost on failure'
at-least-once\t'Commit only what the target acknowledged; duplicates possible after a failure'
exactly-once\t'Transactional copy; the target holds the positions; read_committed readers of the target see every record once'"
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l group -d 'Source consumer group holding the committed positions [default: kreplicate.<TARGET CLUSTER ID>, plus .<RENAME> with --rename]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l refresh-topics -d 'Without --until-caught-up: how often to look at the source\'s topics again (e.g. 30s, 5m, or off). New topics matching --topics (less --exclude) are copied from their beginning (or --start), deleted ones stop being copied, and partitions added to a source topic are followed when the target has as many (--create-topics adds them). Refused with --until-caught-up, which copies the topics found at start [default: 60s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l start -d 'Where a group with no committed position starts; partitions that appear while a run copies start at their beginning [default: earliest]' -r -f -a "earliest\t'The oldest record still in the source'
latest\t'Only records written after the run starts'"
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l on-gap -d 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]' -r -f -a "fail\t'Stop with exit 1 and name the partition and offsets'
earliest\t'Continue from the oldest record still in the source'
latest\t'Continue from the newest record of the source'"
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l config-exclude -d 'Config keys never copied to target topics, on top of the built-in list (min.insync.replicas, *.replication.throttled.replicas, ...); comma list or repeated, a trailing \'*\' matches a prefix, e.g. --config-exclude \'retention.*,segment.ms\'' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l sync-group-acls -d 'With --sync-acls: also create the LITERAL ACLs of these source consumer groups on the same-named target groups (the ones `kreplicate groups` commits to): a comma list, or a regex when it starts with \'^\'' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l max-bytes-per-sec -d 'Read at most this many key + value bytes per second from the source (e.g. 20MB, 512KiB); time spent waiting shows as "throttled" [default: no limit]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l max-records-per-sec -d 'Read at most this many records per second from the source [default: no limit]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l replication-factor -d 'Replication factor for topics made by --create-topics [default: the broker\'s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l delivery-timeout -d 'Longest wait for one record\'s acknowledgement by the target before the run fails (e.g. 500ms, 30s, 2m) [default: 2m]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l timeout -d 'Longest wait for a broker request at start (metadata, topic checks) [default: 30s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l commit-interval -d 'How often verified positions are committed to the source group [default: 5s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l join-timeout -d 'Longest wait for the consumer group to assign partitions (at start and after a rebalance) before the run fails with exit 1; --shard needs no group join [default: 2m]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l shard -d 'Own static shard I of N of the source partitions instead of sharing them through the consumer group: no group join to wait for and no rebalances; positions are still read from and committed to --group. Run each shard exactly once. exactly-once always owns a shard (default 1/1), and each shard has its own transactional identity' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l sync-groups -d 'While copying, translate these source consumer groups\' positions to the target and commit them there, as `kreplicate groups` does (never moving a group back): a comma list, or a regex when it starts with \'^\'' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l sync-groups-interval -d 'How often --sync-groups runs (and once more when the copy ends) [default: 30s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l txn-max-records -d 'exactly-once: commit a transaction after this many records [default: 200000]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l txn-max-bytes -d 'exactly-once: commit a transaction after this many key + value bytes (e.g. 32MiB) [default: 128MiB]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l txn-max-time -d 'exactly-once: commit a transaction after this long [default: 2s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l metrics-addr -d 'Serve Prometheus metrics at http://HOST:PORT/metrics, a health check at /healthz (503 once the copy stalled for longer than --delivery-timeout) and a readiness check at /readyz; :PORT listens on every interface' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l metrics-file -d 'Write the same metrics to PATH (atomically: a temporary file renamed over it) while running and at exit, for node_exporter\'s textfile collector' -r -F
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l metrics-file-interval -d 'How often --metrics-file is rewritten while the run copies [default: 15s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l trust-group-positions -d 'Start from the group\'s positions even where the target partition is empty or was just created (without it such a run refuses: the positions may belong to another copy)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l until-caught-up -d 'Copy up to the end of every partition as seen at start, commit, and exit 0'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l json -d 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l create-topics -d 'Create missing target topics with the source\'s partition count and the configs set on the source topic (cleanup.policy, retention.*, segment.*, ...), less the excluded ones (see --config-exclude)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l sync-configs -d 'Set the source\'s values of copied configs on existing target topics that differ (IncrementalAlterConfigs; excluded keys and keys set only on the target are left alone). Without it, differences are reported as warnings at start'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l sync-acls -d 'Create the LITERAL ACLs of the copied topics on their target topics (renamed with --rename), as MirrorMaker 2 does: an ALLOW WRITE is never copied (the run is the copies\' one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is. Continuous runs follow new ACLs every --refresh-topics; ACLs removed from the source stay on the target. Needs DESCRIBE on the source cluster and DESCRIBE and ALTER on the target cluster'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -l no-origin-header -d 'Copy records without the kreplicate.origin header (byte-identical headers); without it the target cannot be resumed by exactly-once, groups cannot be translated and records copied back by an opposite run cannot be recognised'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -s q -l quiet -d 'No progress display and no summary line on stderr (errors are still printed)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -s v -l verbose -d 'Diagnostics on stderr, including librdkafka\'s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l from -d 'Source cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l to -d 'Target cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l topics -d 'Source topics: a comma list, or a regex when it starts with \'^\' (resolved at start; internal topics \'__*\' never match a regex)' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l exclude -d 'Source topics to leave out of --topics: a comma list, or a regex when it starts with \'^\', e.g. --topics \'^orders\\..*\' --exclude \'^orders\\.tmp\\.\'' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l rename -d 'Target topic name; {topic} stands for the source topic\'s name [default: {topic}]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l config -d 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]' -r -F
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l flow -d 'A named flow of the config file (under flows:): that flow\'s settings over the file\'s defaults, and flags over both' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -s X -l from-property -d 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l to-property -d 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l groups -d 'Source consumer groups: a comma list, or a regex when it starts with \'^\' [default: every group with committed positions on --topics, except kreplicate\'s own (kreplicate*)]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l timeout -d 'Longest wait for a broker request or read (e.g. 500ms, 30s, 2m); defaults.timeout in the config file when left out [default: 30s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l dry-run -d 'Print the table (group, topic, partition, source and target position, status) and commit nothing'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l allow-rewind -d 'Also move a target group back when its committed position is past the translated one'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l json -d 'Print one JSON object on stdout instead of the table'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -s h -l help -d 'Print help'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand generate" -s h -l help -d 'Print help'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify plan status groups generate help" -f -a "demo" -d 'Replicate sample records between two in-process mock clusters, with a broker fault injected mid-run, and check that every record arrived (no Kafka needed)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify plan status groups generate help" -f -a "verify" -d 'Compare source and target partition by partition: counts, offset ranges and a digest of key, value, headers and timestamp in order; exit 0 when the target is an exact copy'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify plan status groups generate help" -f -a "plan" -d 'Show what a copy run with the same flags would do, writing nothing: each source topic, its target and partitions, configs to create or that differ, the group\'s positions, records to copy and the warnings; exit 0 when the run would start, 2 when it would refuse (prefix any copy command line with `plan`)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify plan status groups generate help" -f -a "status" -d 'Whether a copy with the same flags runs and how far behind it is, seen from outside: the source group\'s live members, its committed positions against each partition\'s end (exactly-once: also the position the target holds); every flow of the config file without --flow and --topics. Reads only; exit 0, 1 when a broker cannot be reached, 2 for bad input (prefix any copy command line with `status`)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify plan status groups generate help" -f -a "groups" -d 'Translate the committed positions of the source\'s consumer groups to the target (exact, from the origin of every copied record) and commit them to the same-named target groups'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify plan status groups generate help" -f -a "generate" -d 'Write the man page and shell completions (man/, completions/) under DIR, and the generated blocks of DIR/docs/guide.md when DIR holds one'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify plan status groups generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
