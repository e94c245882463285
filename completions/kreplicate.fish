# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kreplicate_global_optspecs
    string join \n from= to= topics= rename= config= X/from-property= to-property= guarantee= group= until-caught-up json start= on-gap= create-topics replication-factor= delivery-timeout= timeout= commit-interval= join-timeout= shard= no-origin-header sync-groups= sync-groups-interval= txn-max-records= txn-max-bytes= txn-max-time= q/quiet v/verbose h/help V/version
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
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l rename -d 'Target topic name; {topic} stands for the source topic\'s name [default: {topic}]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l config -d 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]' -r -F
complete -c kreplicate -n "__fish_kreplicate_needs_command" -s X -l from-property -d 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l to-property -d 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l guarantee -d 'Delivery guarantee [default: at-least-once]' -r -f -a "none\t'Fastest: offsets are committed as records are read; records may be lost on failure'
at-least-once\t'Commit only what the target acknowledged; duplicates possible after a failure'
exactly-once\t'Transactional copy; the target holds the positions; read_committed readers of the target see every record once'"
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l group -d 'Source consumer group holding the committed positions [default: kreplicate.<TO>]' -r
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l start -d 'Where a group with no committed position starts [default: earliest]' -r -f -a "earliest\t'The oldest record still in the source'
latest\t'Only records written after the run starts'"
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l on-gap -d 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]' -r -f -a "fail\t'Stop with exit 1 and name the partition and offsets'
earliest\t'Continue from the oldest record still in the source'
latest\t'Continue from the newest record of the source'"
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
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l until-caught-up -d 'Copy up to the end of every partition as seen at start, commit, and exit 0'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l json -d 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l create-topics -d 'Create missing target topics with the source\'s partition count'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -l no-origin-header -d 'Copy records without the kreplicate.origin header (byte-identical headers); without it the target cannot be resumed by exactly-once, groups cannot be translated and records copied back by an opposite run cannot be recognised'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -s q -l quiet -d 'No progress display and no summary line on stderr (errors are still printed)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -s v -l verbose -d 'Diagnostics on stderr, including librdkafka\'s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -s V -l version -d 'Print version'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "demo" -d 'Replicate sample records between two in-process mock clusters, with a broker fault injected mid-run, and check that every record arrived (no Kafka needed)'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "verify" -d 'Compare source and target partition by partition: counts, offset ranges and a digest of key, value, headers and timestamp in order; exit 0 when the target is an exact copy'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "groups" -d 'Translate the committed positions of the source\'s consumer groups to the target (exact, from the origin of every copied record) and commit them to the same-named target groups'
complete -c kreplicate -n "__fish_kreplicate_needs_command" -f -a "generate" -d 'Write the man page and shell completions (man/, completions/) under DIR'
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
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l rename -d 'Target topic name; {topic} stands for the source topic\'s name [default: {topic}]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l config -d 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]' -r -F
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -s X -l from-property -d 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l to-property -d 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l timeout -d 'Longest wait for a broker: metadata at start, and the next record or end of a partition while reading (e.g. 500ms, 30s, 2m) [default: defaults.timeout in the config file, else 30s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l json -d 'Print one JSON object on stdout instead of the table'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -l accept-duplicates -d 'Report duplicates (as left by at-least-once reruns) but still exit 0 when every source record is in the target and, keeping each record\'s last copy, in source order'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand verify" -s h -l help -d 'Print help'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l from -d 'Source cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l to -d 'Target cluster: a name from the config file, or host:port[,host:port]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l topics -d 'Source topics: a comma list, or a regex when it starts with \'^\' (resolved at start; internal topics \'__*\' never match a regex)' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l rename -d 'Target topic name; {topic} stands for the source topic\'s name [default: {topic}]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l config -d 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]' -r -F
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -s X -l from-property -d 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l to-property -d 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l groups -d 'Source consumer groups: a comma list, or a regex when it starts with \'^\' [default: every group with committed positions on --topics, except kreplicate\'s own (kreplicate*)]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l timeout -d 'Longest wait for a broker request or read (e.g. 500ms, 30s, 2m) [default: defaults.timeout in the config file, else 30s]' -r
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l dry-run -d 'Print the table (group, topic, partition, source and target position, status) and commit nothing'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l allow-rewind -d 'Also move a target group back when its committed position is past the translated one'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -l json -d 'Print one JSON object on stdout instead of the table'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand groups" -s h -l help -d 'Print help'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand generate" -s h -l help -d 'Print help'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify groups generate help" -f -a "demo" -d 'Replicate sample records between two in-process mock clusters, with a broker fault injected mid-run, and check that every record arrived (no Kafka needed)'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify groups generate help" -f -a "verify" -d 'Compare source and target partition by partition: counts, offset ranges and a digest of key, value, headers and timestamp in order; exit 0 when the target is an exact copy'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify groups generate help" -f -a "groups" -d 'Translate the committed positions of the source\'s consumer groups to the target (exact, from the origin of every copied record) and commit them to the same-named target groups'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify groups generate help" -f -a "generate" -d 'Write the man page and shell completions (man/, completions/) under DIR'
complete -c kreplicate -n "__fish_kreplicate_using_subcommand help; and not __fish_seen_subcommand_from demo verify groups generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
