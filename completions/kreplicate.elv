
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
            cand --exclude 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.'''
            cand --rename 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]'
            cand --config 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]'
            cand --flow 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both'
            cand -X 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --from-property 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --to-property 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20'
            cand --guarantee 'Delivery guarantee [default: at-least-once]'
            cand --group 'Source consumer group holding the committed positions [default: kreplicate.<TARGET CLUSTER ID>, plus .<RENAME> with --rename]'
            cand --refresh-topics 'Without --until-caught-up: how often to look at the source''s topics again (e.g. 30s, 5m, or off). New topics matching --topics (less --exclude) are copied from their beginning (or --start), deleted ones stop being copied, and partitions added to a source topic are followed when the target has as many (--create-topics adds them). Refused with --until-caught-up, which copies the topics found at start [default: 60s]'
            cand --start 'Where a group with no committed position starts; partitions that appear while a run copies start at their beginning [default: earliest]'
            cand --on-gap 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]'
            cand --config-exclude 'Config keys never copied to target topics, on top of the built-in list (min.insync.replicas, *.replication.throttled.replicas, ...); comma list or repeated, a trailing ''*'' matches a prefix, e.g. --config-exclude ''retention.*,segment.ms'''
            cand --sync-group-acls 'With --sync-acls: also create the LITERAL ACLs of these source consumer groups on the same-named target groups (the ones `kreplicate groups` commits to): a comma list, or a regex when it starts with ''^'''
            cand --max-bytes-per-sec 'Read at most this many key + value bytes per second from the source (e.g. 20MB, 512KiB); time spent waiting shows as "throttled" [default: no limit]'
            cand --max-records-per-sec 'Read at most this many records per second from the source [default: no limit]'
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
            cand --metrics-addr 'Serve Prometheus metrics at http://HOST:PORT/metrics, a health check at /healthz (503 once the copy stalled for longer than --delivery-timeout) and a readiness check at /readyz; :PORT listens on every interface'
            cand --metrics-file 'Write the same metrics to PATH (atomically: a temporary file renamed over it) while running and at exit, for node_exporter''s textfile collector'
            cand --metrics-file-interval 'How often --metrics-file is rewritten while the run copies [default: 15s]'
            cand --trust-group-positions 'Start from the group''s positions even where the target partition is empty or was just created (without it such a run refuses: the positions may belong to another copy)'
            cand --until-caught-up 'Copy up to the end of every partition as seen at start, commit, and exit 0'
            cand --json 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)'
            cand --create-topics 'Create missing target topics with the source''s partition count and the configs set on the source topic (cleanup.policy, retention.*, segment.*, ...), less the excluded ones (see --config-exclude)'
            cand --sync-configs 'Set the source''s values of copied configs on existing target topics that differ (IncrementalAlterConfigs; excluded keys and keys set only on the target are left alone). Without it, differences are reported as warnings at start'
            cand --sync-acls 'Create the LITERAL ACLs of the copied topics on their target topics (renamed with --rename), as MirrorMaker 2 does: an ALLOW WRITE is never copied (the run is the copies'' one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is. Continuous runs follow new ACLs every --refresh-topics; ACLs removed from the source stay on the target. Needs DESCRIBE on the source cluster and DESCRIBE and ALTER on the target cluster'
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
            cand plan 'Show what a copy run with the same flags would do, writing nothing: each source topic, its target and partitions, configs to create or that differ, the group''s positions, records to copy and the warnings; exit 0 when the run would start, 2 when it would refuse (prefix any copy command line with `plan`)'
            cand status 'Whether a copy with the same flags runs and how far behind it is, seen from outside: the source group''s live members, its committed positions against each partition''s end (exactly-once: also the position the target holds); every flow of the config file without --flow and --topics. Reads only; exit 0, 1 when a broker cannot be reached, 2 for bad input (prefix any copy command line with `status`)'
            cand groups 'Translate the committed positions of the source''s consumer groups to the target (exact, from the origin of every copied record) and commit them to the same-named target groups'
            cand migrate 'Move topics and their consumer groups from one cluster to another in stages that cannot be skipped: plan, copy, stop the writers, drain and verify, move the groups, report. The stage lives on the target, so a rerun anywhere goes on where the last one stopped; exit 3 when the operator must act'
            cand generate 'Write the man page and shell completions (man/, completions/) under DIR, and the generated blocks of DIR/docs/guide.md when DIR holds one'
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
            cand --exclude 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.'''
            cand --rename 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]'
            cand --config 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]'
            cand --flow 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both'
            cand -X 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --from-property 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --to-property 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20'
            cand --config-exclude 'Config keys not compared, on top of the built-in exclusions (as for a copy run)'
            cand --timeout 'Longest wait for a broker: metadata at start, and the next record or end of a partition while reading (e.g. 500ms, 30s, 2m); defaults.timeout in the config file when left out [default: 30s]'
            cand --json 'Print one JSON object on stdout instead of the table'
            cand --accept-duplicates 'Report duplicates (as left by at-least-once reruns) but still exit 0 when every source record is in the target and, keeping each record''s last copy, in source order'
            cand --configs 'Also fail (exit 1) when a copied topic config differs between source and target (differences are always reported)'
            cand --acls 'Also compare the copied topics'' ACLs as --sync-acls copies them (renamed; no ALLOW WRITE; ALLOW ALL as READ): list those the target lacks and fail (exit 1) when any is missing. Needs DESCRIBE on both clusters'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kreplicate;plan'= {
            cand --from 'Source cluster: a name from the config file, or host:port[,host:port]'
            cand --to 'Target cluster: a name from the config file, or host:port[,host:port]'
            cand --topics 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)'
            cand --exclude 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.'''
            cand --rename 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]'
            cand --config 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]'
            cand --flow 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both'
            cand -X 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --from-property 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --to-property 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20'
            cand --guarantee 'Delivery guarantee [default: at-least-once]'
            cand --group 'Source consumer group holding the committed positions [default: kreplicate.<TARGET CLUSTER ID>, plus .<RENAME> with --rename]'
            cand --refresh-topics 'Without --until-caught-up: how often to look at the source''s topics again (e.g. 30s, 5m, or off). New topics matching --topics (less --exclude) are copied from their beginning (or --start), deleted ones stop being copied, and partitions added to a source topic are followed when the target has as many (--create-topics adds them). Refused with --until-caught-up, which copies the topics found at start [default: 60s]'
            cand --start 'Where a group with no committed position starts; partitions that appear while a run copies start at their beginning [default: earliest]'
            cand --on-gap 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]'
            cand --config-exclude 'Config keys never copied to target topics, on top of the built-in list (min.insync.replicas, *.replication.throttled.replicas, ...); comma list or repeated, a trailing ''*'' matches a prefix, e.g. --config-exclude ''retention.*,segment.ms'''
            cand --sync-group-acls 'With --sync-acls: also create the LITERAL ACLs of these source consumer groups on the same-named target groups (the ones `kreplicate groups` commits to): a comma list, or a regex when it starts with ''^'''
            cand --max-bytes-per-sec 'Read at most this many key + value bytes per second from the source (e.g. 20MB, 512KiB); time spent waiting shows as "throttled" [default: no limit]'
            cand --max-records-per-sec 'Read at most this many records per second from the source [default: no limit]'
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
            cand --metrics-addr 'Serve Prometheus metrics at http://HOST:PORT/metrics, a health check at /healthz (503 once the copy stalled for longer than --delivery-timeout) and a readiness check at /readyz; :PORT listens on every interface'
            cand --metrics-file 'Write the same metrics to PATH (atomically: a temporary file renamed over it) while running and at exit, for node_exporter''s textfile collector'
            cand --metrics-file-interval 'How often --metrics-file is rewritten while the run copies [default: 15s]'
            cand --trust-group-positions 'Start from the group''s positions even where the target partition is empty or was just created (without it such a run refuses: the positions may belong to another copy)'
            cand --until-caught-up 'Copy up to the end of every partition as seen at start, commit, and exit 0'
            cand --json 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)'
            cand --create-topics 'Create missing target topics with the source''s partition count and the configs set on the source topic (cleanup.policy, retention.*, segment.*, ...), less the excluded ones (see --config-exclude)'
            cand --sync-configs 'Set the source''s values of copied configs on existing target topics that differ (IncrementalAlterConfigs; excluded keys and keys set only on the target are left alone). Without it, differences are reported as warnings at start'
            cand --sync-acls 'Create the LITERAL ACLs of the copied topics on their target topics (renamed with --rename), as MirrorMaker 2 does: an ALLOW WRITE is never copied (the run is the copies'' one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is. Continuous runs follow new ACLs every --refresh-topics; ACLs removed from the source stay on the target. Needs DESCRIBE on the source cluster and DESCRIBE and ALTER on the target cluster'
            cand --no-origin-header 'Copy records without the kreplicate.origin header (byte-identical headers); without it the target cannot be resumed by exactly-once, groups cannot be translated and records copied back by an opposite run cannot be recognised'
            cand -q 'No progress display and no summary line on stderr (errors are still printed)'
            cand --quiet 'No progress display and no summary line on stderr (errors are still printed)'
            cand -v 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)'
            cand --verbose 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kreplicate;status'= {
            cand --from 'Source cluster: a name from the config file, or host:port[,host:port]'
            cand --to 'Target cluster: a name from the config file, or host:port[,host:port]'
            cand --topics 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)'
            cand --exclude 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.'''
            cand --rename 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]'
            cand --config 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]'
            cand --flow 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both'
            cand -X 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --from-property 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --to-property 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20'
            cand --guarantee 'Delivery guarantee [default: at-least-once]'
            cand --group 'Source consumer group holding the committed positions [default: kreplicate.<TARGET CLUSTER ID>, plus .<RENAME> with --rename]'
            cand --refresh-topics 'Without --until-caught-up: how often to look at the source''s topics again (e.g. 30s, 5m, or off). New topics matching --topics (less --exclude) are copied from their beginning (or --start), deleted ones stop being copied, and partitions added to a source topic are followed when the target has as many (--create-topics adds them). Refused with --until-caught-up, which copies the topics found at start [default: 60s]'
            cand --start 'Where a group with no committed position starts; partitions that appear while a run copies start at their beginning [default: earliest]'
            cand --on-gap 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]'
            cand --config-exclude 'Config keys never copied to target topics, on top of the built-in list (min.insync.replicas, *.replication.throttled.replicas, ...); comma list or repeated, a trailing ''*'' matches a prefix, e.g. --config-exclude ''retention.*,segment.ms'''
            cand --sync-group-acls 'With --sync-acls: also create the LITERAL ACLs of these source consumer groups on the same-named target groups (the ones `kreplicate groups` commits to): a comma list, or a regex when it starts with ''^'''
            cand --max-bytes-per-sec 'Read at most this many key + value bytes per second from the source (e.g. 20MB, 512KiB); time spent waiting shows as "throttled" [default: no limit]'
            cand --max-records-per-sec 'Read at most this many records per second from the source [default: no limit]'
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
            cand --metrics-addr 'Serve Prometheus metrics at http://HOST:PORT/metrics, a health check at /healthz (503 once the copy stalled for longer than --delivery-timeout) and a readiness check at /readyz; :PORT listens on every interface'
            cand --metrics-file 'Write the same metrics to PATH (atomically: a temporary file renamed over it) while running and at exit, for node_exporter''s textfile collector'
            cand --metrics-file-interval 'How often --metrics-file is rewritten while the run copies [default: 15s]'
            cand --trust-group-positions 'Start from the group''s positions even where the target partition is empty or was just created (without it such a run refuses: the positions may belong to another copy)'
            cand --until-caught-up 'Copy up to the end of every partition as seen at start, commit, and exit 0'
            cand --json 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)'
            cand --create-topics 'Create missing target topics with the source''s partition count and the configs set on the source topic (cleanup.policy, retention.*, segment.*, ...), less the excluded ones (see --config-exclude)'
            cand --sync-configs 'Set the source''s values of copied configs on existing target topics that differ (IncrementalAlterConfigs; excluded keys and keys set only on the target are left alone). Without it, differences are reported as warnings at start'
            cand --sync-acls 'Create the LITERAL ACLs of the copied topics on their target topics (renamed with --rename), as MirrorMaker 2 does: an ALLOW WRITE is never copied (the run is the copies'' one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is. Continuous runs follow new ACLs every --refresh-topics; ACLs removed from the source stay on the target. Needs DESCRIBE on the source cluster and DESCRIBE and ALTER on the target cluster'
            cand --no-origin-header 'Copy records without the kreplicate.origin header (byte-identical headers); without it the target cannot be resumed by exactly-once, groups cannot be translated and records copied back by an opposite run cannot be recognised'
            cand -q 'No progress display and no summary line on stderr (errors are still printed)'
            cand --quiet 'No progress display and no summary line on stderr (errors are still printed)'
            cand -v 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)'
            cand --verbose 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kreplicate;groups'= {
            cand --from 'Source cluster: a name from the config file, or host:port[,host:port]'
            cand --to 'Target cluster: a name from the config file, or host:port[,host:port]'
            cand --topics 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)'
            cand --exclude 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.'''
            cand --rename 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]'
            cand --config 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]'
            cand --flow 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both'
            cand -X 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --from-property 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --to-property 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20'
            cand --groups 'Source consumer groups: a comma list, or a regex when it starts with ''^'' [default: every group with committed positions on --topics, except kreplicate''s own (kreplicate*)]'
            cand --timeout 'Longest wait for a broker request or read (e.g. 500ms, 30s, 2m); defaults.timeout in the config file when left out [default: 30s]'
            cand --dry-run 'Print the table (group, topic, partition, source and target position, status) and commit nothing'
            cand --allow-rewind 'Also move a target group back when its committed position is past the translated one'
            cand --json 'Print one JSON object on stdout instead of the table'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kreplicate;migrate'= {
            cand --from 'Source cluster: a name from the config file, or host:port[,host:port]'
            cand --to 'Target cluster: a name from the config file, or host:port[,host:port]'
            cand --topics 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)'
            cand --exclude 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.'''
            cand --rename 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]'
            cand --config 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]'
            cand --flow 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both'
            cand -X 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --from-property 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --to-property 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20'
            cand --id 'The migration''s name on the target, which keeps its stage [default: the --topics value]'
            cand --groups 'Source consumer groups to move: a comma list, or a regex when it starts with ''^'' [default: every group with committed positions on --topics, except kreplicate''s own; with --failback: none]'
            cand --guarantee 'Delivery guarantee of every copy of the migration, fixed at its start; without it, exactly-once, or at-least-once when the target refuses exactly-once (the run says why) [default: at-least-once]'
            cand --max-lag 'The copy stage ends once at most this many records are left to copy [default: 10000]'
            cand --quiet-for 'How long every source partition''s end must stay still, with no transaction open, for the writers to count as stopped [default: 10s]'
            cand --writers-timeout 'How long to wait for the writers to stop before exit 3 names the partitions still written to [default: 5m]'
            cand --replication-factor 'Replication factor for topics made by --create-topics and for the state topic [default: the broker''s]'
            cand --delivery-timeout 'Longest wait for one record''s acknowledgement by the target before a copy fails [default: 2m]'
            cand --timeout 'Longest wait for a broker request [default: 30s]'
            cand --continue 'The operator stopped the writers: wait until the source is quiet, then go on'
            cand --failback 'The reverse move, B to A, after the move A to B is done (same --from and --to as the move): copies what the applications wrote on B back to A (B''s copies of A''s records are not copied back) and moves the --groups back'
            cand --create-topics 'Create missing target topics with the source''s partition count and configs'
            cand --json 'Print one JSON object on stdout on every exit (human output stays on stderr)'
            cand -q 'No progress display (stage lines and errors are still printed)'
            cand --quiet 'No progress display (stage lines and errors are still printed)'
            cand -v 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace'
            cand --verbose 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand status 'Show a migration''s stage and what it established, as the target keeps them; reads only'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kreplicate;migrate;status'= {
            cand --from 'Source cluster: a name from the config file, or host:port[,host:port]'
            cand --to 'Target cluster: a name from the config file, or host:port[,host:port]'
            cand --topics 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)'
            cand --exclude 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.'''
            cand --rename 'Target topic name; {topic} stands for the source topic''s name'
            cand --config 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]'
            cand --flow 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both'
            cand -X 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --from-property 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576'
            cand --to-property 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20'
            cand --id 'The migration''s name on the target [default: the --topics value]'
            cand --timeout 'Longest wait for a broker request'
            cand --failback 'Show the failback''s stage (kept on --from) instead of the move''s'
            cand --json 'Print one JSON object on stdout instead of the text'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kreplicate;migrate;help'= {
            cand status 'Show a migration''s stage and what it established, as the target keeps them; reads only'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kreplicate;migrate;help;status'= {
        }
        &'kreplicate;migrate;help;help'= {
        }
        &'kreplicate;generate'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kreplicate;help'= {
            cand demo 'Replicate sample records between two in-process mock clusters, with a broker fault injected mid-run, and check that every record arrived (no Kafka needed)'
            cand verify 'Compare source and target partition by partition: counts, offset ranges and a digest of key, value, headers and timestamp in order; exit 0 when the target is an exact copy'
            cand plan 'Show what a copy run with the same flags would do, writing nothing: each source topic, its target and partitions, configs to create or that differ, the group''s positions, records to copy and the warnings; exit 0 when the run would start, 2 when it would refuse (prefix any copy command line with `plan`)'
            cand status 'Whether a copy with the same flags runs and how far behind it is, seen from outside: the source group''s live members, its committed positions against each partition''s end (exactly-once: also the position the target holds); every flow of the config file without --flow and --topics. Reads only; exit 0, 1 when a broker cannot be reached, 2 for bad input (prefix any copy command line with `status`)'
            cand groups 'Translate the committed positions of the source''s consumer groups to the target (exact, from the origin of every copied record) and commit them to the same-named target groups'
            cand migrate 'Move topics and their consumer groups from one cluster to another in stages that cannot be skipped: plan, copy, stop the writers, drain and verify, move the groups, report. The stage lives on the target, so a rerun anywhere goes on where the last one stopped; exit 3 when the operator must act'
            cand generate 'Write the man page and shell completions (man/, completions/) under DIR, and the generated blocks of DIR/docs/guide.md when DIR holds one'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kreplicate;help;demo'= {
        }
        &'kreplicate;help;verify'= {
        }
        &'kreplicate;help;plan'= {
        }
        &'kreplicate;help;status'= {
        }
        &'kreplicate;help;groups'= {
        }
        &'kreplicate;help;migrate'= {
            cand status 'Show a migration''s stage and what it established, as the target keeps them; reads only'
        }
        &'kreplicate;help;migrate;status'= {
        }
        &'kreplicate;help;generate'= {
        }
        &'kreplicate;help;help'= {
        }
    ]
    $completions[$command]
}
