
use builtin;
use str;

set edit:completion:arg-completer[kreplicate] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'kreplicate'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'kreplicate'= {
            cand --from 'Source cluster: a name from the config file, or host:port[,host:port]'
            cand --to 'Target cluster: a name from the config file, or host:port[,host:port]'
            cand --topics 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)'
            cand --rename 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]'
            cand --config 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]'
            cand -X 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --from-property 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --to-property 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20'
            cand --guarantee 'Delivery guarantee [default: at-least-once]'
            cand --group 'Source consumer group holding the committed positions [default: kreplicate.<TO>]'
            cand --start 'Where a group with no committed position starts [default: earliest]'
            cand --on-gap 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]'
            cand --replication-factor 'Replication factor for topics made by --create-topics [default: the broker''s]'
            cand --delivery-timeout 'Longest wait for one record''s acknowledgement by the target before the run fails (e.g. 500ms, 30s, 2m) [default: 2m]'
            cand --timeout 'Longest wait for a broker request at start (metadata, topic checks) [default: 30s]'
            cand --commit-interval 'How often verified positions are committed to the source group [default: 5s]'
            cand --join-timeout 'Longest wait for the consumer group to assign partitions (at start and after a rebalance) before the run fails with exit 1; --shard needs no group join [default: 2m]'
            cand --shard 'Own static shard I of N of the source partitions instead of sharing them through the consumer group: no group join to wait for and no rebalances; positions are still read from and committed to --group. Run each shard exactly once. exactly-once always owns a shard (default 1/1), and each shard has its own transactional identity'
            cand --sync-groups 'While copying, translate these source consumer groups'' positions to the target and commit them there, as `kreplicate groups` does (never moving a group back): a comma list, or a regex when it starts with ''^'''
            cand --sync-groups-interval 'How often --sync-groups runs (and once more when the copy ends) [default: 30s]'
            cand --txn-max-records 'exactly-once: commit a transaction after this many records [default: 200000]'
            cand --txn-max-bytes 'exactly-once: commit a transaction after this many key + value bytes (e.g. 32MiB) [default: 128MiB]'
            cand --txn-max-time 'exactly-once: commit a transaction after this long [default: 2s]'
            cand --until-caught-up 'Copy up to the end of every partition as seen at start, commit, and exit 0'
            cand --json 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)'
            cand --create-topics 'Create missing target topics with the source''s partition count'
            cand --no-origin-header 'Copy records without the kreplicate.origin header (byte-identical headers); without it the target cannot be resumed by exactly-once, groups cannot be translated and records copied back by an opposite run cannot be recognised'
            cand -q 'No progress display and no summary line on stderr (errors are still printed)'
            cand --quiet 'No progress display and no summary line on stderr (errors are still printed)'
            cand -v 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)'
            cand --verbose 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand demo 'Replicate sample records between two in-process mock clusters, with a broker fault injected mid-run, and check that every record arrived (no Kafka needed)'
            cand verify 'Compare source and target partition by partition: counts, offset ranges and a digest of key, value, headers and timestamp in order; exit 0 when the target is an exact copy'
            cand groups 'Translate the committed positions of the source''s consumer groups to the target (exact, from the origin of every copied record) and commit them to the same-named target groups'
            cand generate 'Write the man page and shell completions (man/, completions/) under DIR'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kreplicate;demo'= {
            cand --guarantee 'Delivery guarantee to demonstrate'
            cand --records 'Number of sample records'
            cand --json 'Print the summary as one JSON object on stdout'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kreplicate;verify'= {
            cand --from 'Source cluster: a name from the config file, or host:port[,host:port]'
            cand --to 'Target cluster: a name from the config file, or host:port[,host:port]'
            cand --topics 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)'
            cand --rename 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]'
            cand --config 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]'
            cand -X 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --from-property 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --to-property 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20'
            cand --timeout 'Longest wait for a broker: metadata at start, and the next record or end of a partition while reading (e.g. 500ms, 30s, 2m) [default: defaults.timeout in the config file, else 30s]'
            cand --json 'Print one JSON object on stdout instead of the table'
            cand --accept-duplicates 'Report duplicates (as left by at-least-once reruns) but still exit 0 when every source record is in the target and, keeping each record''s last copy, in source order'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kreplicate;groups'= {
            cand --from 'Source cluster: a name from the config file, or host:port[,host:port]'
            cand --to 'Target cluster: a name from the config file, or host:port[,host:port]'
            cand --topics 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)'
            cand --rename 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]'
            cand --config 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]'
            cand -X 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --from-property 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --to-property 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20'
            cand --groups 'Source consumer groups: a comma list, or a regex when it starts with ''^'' [default: every group with committed positions on --topics, except kreplicate''s own (kreplicate*)]'
            cand --timeout 'Longest wait for a broker request or read (e.g. 500ms, 30s, 2m) [default: defaults.timeout in the config file, else 30s]'
            cand --dry-run 'Print the table (group, topic, partition, source and target position, status) and commit nothing'
            cand --allow-rewind 'Also move a target group back when its committed position is past the translated one'
            cand --json 'Print one JSON object on stdout instead of the table'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kreplicate;generate'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kreplicate;help'= {
            cand demo 'Replicate sample records between two in-process mock clusters, with a broker fault injected mid-run, and check that every record arrived (no Kafka needed)'
            cand verify 'Compare source and target partition by partition: counts, offset ranges and a digest of key, value, headers and timestamp in order; exit 0 when the target is an exact copy'
            cand groups 'Translate the committed positions of the source''s consumer groups to the target (exact, from the origin of every copied record) and commit them to the same-named target groups'
            cand generate 'Write the man page and shell completions (man/, completions/) under DIR'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kreplicate;help;demo'= {
        }
        &'kreplicate;help;verify'= {
        }
        &'kreplicate;help;groups'= {
        }
        &'kreplicate;help;generate'= {
        }
        &'kreplicate;help;help'= {
        }
    ]
    $completions[$command]
}
