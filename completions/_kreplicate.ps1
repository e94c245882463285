
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kreplicate' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kreplicate'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kreplicate' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Source cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Target cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--topics', '--topics', [CompletionResultType]::ParameterName, 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.''')
            [CompletionResult]::new('--rename', '--rename', [CompletionResultType]::ParameterName, 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]')
            [CompletionResult]::new('--flow', '--flow', [CompletionResultType]::ParameterName, 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both')
            [CompletionResult]::new('-X', '-X ', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--from-property', '--from-property', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--to-property', '--to-property', [CompletionResultType]::ParameterName, 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20')
            [CompletionResult]::new('--guarantee', '--guarantee', [CompletionResultType]::ParameterName, 'Delivery guarantee [default: at-least-once]')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'Source consumer group holding the committed positions [default: kreplicate.<TARGET CLUSTER ID>, plus .<RENAME> with --rename]')
            [CompletionResult]::new('--refresh-topics', '--refresh-topics', [CompletionResultType]::ParameterName, 'Without --until-caught-up: how often to look at the source''s topics again (e.g. 30s, 5m, or off). New topics matching --topics (less --exclude) are copied from their beginning (or --start), deleted ones stop being copied, and partitions added to a source topic are followed when the target has as many (--create-topics adds them). Refused with --until-caught-up, which copies the topics found at start [default: 60s]')
            [CompletionResult]::new('--start', '--start', [CompletionResultType]::ParameterName, 'Where a group with no committed position starts; partitions that appear while a run copies start at their beginning [default: earliest]')
            [CompletionResult]::new('--on-gap', '--on-gap', [CompletionResultType]::ParameterName, 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]')
            [CompletionResult]::new('--config-exclude', '--config-exclude', [CompletionResultType]::ParameterName, 'Config keys never copied to target topics, on top of the built-in list (min.insync.replicas, *.replication.throttled.replicas, ...); comma list or repeated, a trailing ''*'' matches a prefix, e.g. --config-exclude ''retention.*,segment.ms''')
            [CompletionResult]::new('--sync-group-acls', '--sync-group-acls', [CompletionResultType]::ParameterName, 'With --sync-acls: also create the LITERAL ACLs of these source consumer groups on the same-named target groups (the ones `kreplicate groups` commits to): a comma list, or a regex when it starts with ''^''')
            [CompletionResult]::new('--max-bytes-per-sec', '--max-bytes-per-sec', [CompletionResultType]::ParameterName, 'Read at most this many key + value bytes per second from the source (e.g. 20MB, 512KiB); time spent waiting shows as "throttled" [default: no limit]')
            [CompletionResult]::new('--max-records-per-sec', '--max-records-per-sec', [CompletionResultType]::ParameterName, 'Read at most this many records per second from the source [default: no limit]')
            [CompletionResult]::new('--replication-factor', '--replication-factor', [CompletionResultType]::ParameterName, 'Replication factor for topics made by --create-topics [default: the broker''s]')
            [CompletionResult]::new('--delivery-timeout', '--delivery-timeout', [CompletionResultType]::ParameterName, 'Longest wait for one record''s acknowledgement by the target before the run fails (e.g. 500ms, 30s, 2m) [default: 2m]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Longest wait for a broker request at start (metadata, topic checks) [default: 30s]')
            [CompletionResult]::new('--commit-interval', '--commit-interval', [CompletionResultType]::ParameterName, 'How often verified positions are committed to the source group [default: 5s]')
            [CompletionResult]::new('--join-timeout', '--join-timeout', [CompletionResultType]::ParameterName, 'Longest wait for the consumer group to assign partitions (at start and after a rebalance) before the run fails with exit 1; --shard needs no group join [default: 2m]')
            [CompletionResult]::new('--shard', '--shard', [CompletionResultType]::ParameterName, 'Own static shard I of N of the source partitions instead of sharing them through the consumer group: no group join to wait for and no rebalances; positions are still read from and committed to --group. Run each shard exactly once. exactly-once always owns a shard (default 1/1), and each shard has its own transactional identity')
            [CompletionResult]::new('--sync-groups', '--sync-groups', [CompletionResultType]::ParameterName, 'While copying, translate these source consumer groups'' positions to the target and commit them there, as `kreplicate groups` does (never moving a group back): a comma list, or a regex when it starts with ''^''')
            [CompletionResult]::new('--sync-groups-interval', '--sync-groups-interval', [CompletionResultType]::ParameterName, 'How often --sync-groups runs (and once more when the copy ends) [default: 30s]')
            [CompletionResult]::new('--txn-max-records', '--txn-max-records', [CompletionResultType]::ParameterName, 'exactly-once: commit a transaction after this many records [default: 200000]')
            [CompletionResult]::new('--txn-max-bytes', '--txn-max-bytes', [CompletionResultType]::ParameterName, 'exactly-once: commit a transaction after this many key + value bytes (e.g. 32MiB) [default: 128MiB]')
            [CompletionResult]::new('--txn-max-time', '--txn-max-time', [CompletionResultType]::ParameterName, 'exactly-once: commit a transaction after this long [default: 2s]')
            [CompletionResult]::new('--metrics-addr', '--metrics-addr', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics at http://HOST:PORT/metrics, a health check at /healthz (503 once the copy stalled for longer than --delivery-timeout) and a readiness check at /readyz; :PORT listens on every interface')
            [CompletionResult]::new('--metrics-file', '--metrics-file', [CompletionResultType]::ParameterName, 'Write the same metrics to PATH (atomically: a temporary file renamed over it) while running and at exit, for node_exporter''s textfile collector')
            [CompletionResult]::new('--metrics-file-interval', '--metrics-file-interval', [CompletionResultType]::ParameterName, 'How often --metrics-file is rewritten while the run copies [default: 15s]')
            [CompletionResult]::new('--trust-group-positions', '--trust-group-positions', [CompletionResultType]::ParameterName, 'Start from the group''s positions even where the target partition is empty or was just created (without it such a run refuses: the positions may belong to another copy)')
            [CompletionResult]::new('--until-caught-up', '--until-caught-up', [CompletionResultType]::ParameterName, 'Copy up to the end of every partition as seen at start, commit, and exit 0')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)')
            [CompletionResult]::new('--create-topics', '--create-topics', [CompletionResultType]::ParameterName, 'Create missing target topics with the source''s partition count and the configs set on the source topic (cleanup.policy, retention.*, segment.*, ...), less the excluded ones (see --config-exclude)')
            [CompletionResult]::new('--sync-configs', '--sync-configs', [CompletionResultType]::ParameterName, 'Set the source''s values of copied configs on existing target topics that differ (IncrementalAlterConfigs; excluded keys and keys set only on the target are left alone). Without it, differences are reported as warnings at start')
            [CompletionResult]::new('--sync-acls', '--sync-acls', [CompletionResultType]::ParameterName, 'Create the LITERAL ACLs of the copied topics on their target topics (renamed with --rename), as MirrorMaker 2 does: an ALLOW WRITE is never copied (the run is the copies'' one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is. Continuous runs follow new ACLs every --refresh-topics; ACLs removed from the source stay on the target. Needs DESCRIBE on the source cluster and DESCRIBE and ALTER on the target cluster')
            [CompletionResult]::new('--no-origin-header', '--no-origin-header', [CompletionResultType]::ParameterName, 'Copy records without the kreplicate.origin header (byte-identical headers); without it the target cannot be resumed by exactly-once, groups cannot be translated and records copied back by an opposite run cannot be recognised')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress display and no summary line on stderr (errors are still printed)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress display and no summary line on stderr (errors are still printed)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'Replicate sample records between two in-process mock clusters, with a broker fault injected mid-run, and check that every record arrived (no Kafka needed)')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Compare source and target partition by partition: counts, offset ranges and a digest of key, value, headers and timestamp in order; exit 0 when the target is an exact copy')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'Show what a copy run with the same flags would do, writing nothing: each source topic, its target and partitions, configs to create or that differ, the group''s positions, records to copy and the warnings; exit 0 when the run would start, 2 when it would refuse (prefix any copy command line with `plan`)')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Whether a copy with the same flags runs and how far behind it is, seen from outside: the source group''s live members, its committed positions against each partition''s end (exactly-once: also the position the target holds); every flow of the config file without --flow and --topics. Reads only; exit 0, 1 when a broker cannot be reached, 2 for bad input (prefix any copy command line with `status`)')
            [CompletionResult]::new('groups', 'groups', [CompletionResultType]::ParameterValue, 'Translate the committed positions of the source''s consumer groups to the target (exact, from the origin of every copied record) and commit them to the same-named target groups')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Move topics and their consumer groups from one cluster to another in stages that cannot be skipped: plan, copy, stop the writers, drain and verify, move the groups, report. The stage lives on the target, so a rerun anywhere goes on where the last one stopped; exit 3 when the operator must act')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Write the man page and shell completions (man/, completions/) under DIR, and the generated blocks of DIR/docs/guide.md when DIR holds one')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kreplicate;demo' {
            [CompletionResult]::new('--guarantee', '--guarantee', [CompletionResultType]::ParameterName, 'Delivery guarantee to demonstrate')
            [CompletionResult]::new('--records', '--records', [CompletionResultType]::ParameterName, 'Number of sample records')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the summary as one JSON object on stdout')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kreplicate;verify' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Source cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Target cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--topics', '--topics', [CompletionResultType]::ParameterName, 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.''')
            [CompletionResult]::new('--rename', '--rename', [CompletionResultType]::ParameterName, 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]')
            [CompletionResult]::new('--flow', '--flow', [CompletionResultType]::ParameterName, 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both')
            [CompletionResult]::new('-X', '-X ', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--from-property', '--from-property', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--to-property', '--to-property', [CompletionResultType]::ParameterName, 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20')
            [CompletionResult]::new('--config-exclude', '--config-exclude', [CompletionResultType]::ParameterName, 'Config keys not compared, on top of the built-in exclusions (as for a copy run)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Longest wait for a broker: metadata at start, and the next record or end of a partition while reading (e.g. 500ms, 30s, 2m); defaults.timeout in the config file when left out [default: 30s]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of the table')
            [CompletionResult]::new('--accept-duplicates', '--accept-duplicates', [CompletionResultType]::ParameterName, 'Report duplicates (as left by at-least-once reruns) but still exit 0 when every source record is in the target and, keeping each record''s last copy, in source order')
            [CompletionResult]::new('--configs', '--configs', [CompletionResultType]::ParameterName, 'Also fail (exit 1) when a copied topic config differs between source and target (differences are always reported)')
            [CompletionResult]::new('--acls', '--acls', [CompletionResultType]::ParameterName, 'Also compare the copied topics'' ACLs as --sync-acls copies them (renamed; no ALLOW WRITE; ALLOW ALL as READ): list those the target lacks and fail (exit 1) when any is missing. Needs DESCRIBE on both clusters')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kreplicate;plan' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Source cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Target cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--topics', '--topics', [CompletionResultType]::ParameterName, 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.''')
            [CompletionResult]::new('--rename', '--rename', [CompletionResultType]::ParameterName, 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]')
            [CompletionResult]::new('--flow', '--flow', [CompletionResultType]::ParameterName, 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both')
            [CompletionResult]::new('-X', '-X ', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--from-property', '--from-property', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--to-property', '--to-property', [CompletionResultType]::ParameterName, 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20')
            [CompletionResult]::new('--guarantee', '--guarantee', [CompletionResultType]::ParameterName, 'Delivery guarantee [default: at-least-once]')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'Source consumer group holding the committed positions [default: kreplicate.<TARGET CLUSTER ID>, plus .<RENAME> with --rename]')
            [CompletionResult]::new('--refresh-topics', '--refresh-topics', [CompletionResultType]::ParameterName, 'Without --until-caught-up: how often to look at the source''s topics again (e.g. 30s, 5m, or off). New topics matching --topics (less --exclude) are copied from their beginning (or --start), deleted ones stop being copied, and partitions added to a source topic are followed when the target has as many (--create-topics adds them). Refused with --until-caught-up, which copies the topics found at start [default: 60s]')
            [CompletionResult]::new('--start', '--start', [CompletionResultType]::ParameterName, 'Where a group with no committed position starts; partitions that appear while a run copies start at their beginning [default: earliest]')
            [CompletionResult]::new('--on-gap', '--on-gap', [CompletionResultType]::ParameterName, 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]')
            [CompletionResult]::new('--config-exclude', '--config-exclude', [CompletionResultType]::ParameterName, 'Config keys never copied to target topics, on top of the built-in list (min.insync.replicas, *.replication.throttled.replicas, ...); comma list or repeated, a trailing ''*'' matches a prefix, e.g. --config-exclude ''retention.*,segment.ms''')
            [CompletionResult]::new('--sync-group-acls', '--sync-group-acls', [CompletionResultType]::ParameterName, 'With --sync-acls: also create the LITERAL ACLs of these source consumer groups on the same-named target groups (the ones `kreplicate groups` commits to): a comma list, or a regex when it starts with ''^''')
            [CompletionResult]::new('--max-bytes-per-sec', '--max-bytes-per-sec', [CompletionResultType]::ParameterName, 'Read at most this many key + value bytes per second from the source (e.g. 20MB, 512KiB); time spent waiting shows as "throttled" [default: no limit]')
            [CompletionResult]::new('--max-records-per-sec', '--max-records-per-sec', [CompletionResultType]::ParameterName, 'Read at most this many records per second from the source [default: no limit]')
            [CompletionResult]::new('--replication-factor', '--replication-factor', [CompletionResultType]::ParameterName, 'Replication factor for topics made by --create-topics [default: the broker''s]')
            [CompletionResult]::new('--delivery-timeout', '--delivery-timeout', [CompletionResultType]::ParameterName, 'Longest wait for one record''s acknowledgement by the target before the run fails (e.g. 500ms, 30s, 2m) [default: 2m]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Longest wait for a broker request at start (metadata, topic checks) [default: 30s]')
            [CompletionResult]::new('--commit-interval', '--commit-interval', [CompletionResultType]::ParameterName, 'How often verified positions are committed to the source group [default: 5s]')
            [CompletionResult]::new('--join-timeout', '--join-timeout', [CompletionResultType]::ParameterName, 'Longest wait for the consumer group to assign partitions (at start and after a rebalance) before the run fails with exit 1; --shard needs no group join [default: 2m]')
            [CompletionResult]::new('--shard', '--shard', [CompletionResultType]::ParameterName, 'Own static shard I of N of the source partitions instead of sharing them through the consumer group: no group join to wait for and no rebalances; positions are still read from and committed to --group. Run each shard exactly once. exactly-once always owns a shard (default 1/1), and each shard has its own transactional identity')
            [CompletionResult]::new('--sync-groups', '--sync-groups', [CompletionResultType]::ParameterName, 'While copying, translate these source consumer groups'' positions to the target and commit them there, as `kreplicate groups` does (never moving a group back): a comma list, or a regex when it starts with ''^''')
            [CompletionResult]::new('--sync-groups-interval', '--sync-groups-interval', [CompletionResultType]::ParameterName, 'How often --sync-groups runs (and once more when the copy ends) [default: 30s]')
            [CompletionResult]::new('--txn-max-records', '--txn-max-records', [CompletionResultType]::ParameterName, 'exactly-once: commit a transaction after this many records [default: 200000]')
            [CompletionResult]::new('--txn-max-bytes', '--txn-max-bytes', [CompletionResultType]::ParameterName, 'exactly-once: commit a transaction after this many key + value bytes (e.g. 32MiB) [default: 128MiB]')
            [CompletionResult]::new('--txn-max-time', '--txn-max-time', [CompletionResultType]::ParameterName, 'exactly-once: commit a transaction after this long [default: 2s]')
            [CompletionResult]::new('--metrics-addr', '--metrics-addr', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics at http://HOST:PORT/metrics, a health check at /healthz (503 once the copy stalled for longer than --delivery-timeout) and a readiness check at /readyz; :PORT listens on every interface')
            [CompletionResult]::new('--metrics-file', '--metrics-file', [CompletionResultType]::ParameterName, 'Write the same metrics to PATH (atomically: a temporary file renamed over it) while running and at exit, for node_exporter''s textfile collector')
            [CompletionResult]::new('--metrics-file-interval', '--metrics-file-interval', [CompletionResultType]::ParameterName, 'How often --metrics-file is rewritten while the run copies [default: 15s]')
            [CompletionResult]::new('--trust-group-positions', '--trust-group-positions', [CompletionResultType]::ParameterName, 'Start from the group''s positions even where the target partition is empty or was just created (without it such a run refuses: the positions may belong to another copy)')
            [CompletionResult]::new('--until-caught-up', '--until-caught-up', [CompletionResultType]::ParameterName, 'Copy up to the end of every partition as seen at start, commit, and exit 0')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)')
            [CompletionResult]::new('--create-topics', '--create-topics', [CompletionResultType]::ParameterName, 'Create missing target topics with the source''s partition count and the configs set on the source topic (cleanup.policy, retention.*, segment.*, ...), less the excluded ones (see --config-exclude)')
            [CompletionResult]::new('--sync-configs', '--sync-configs', [CompletionResultType]::ParameterName, 'Set the source''s values of copied configs on existing target topics that differ (IncrementalAlterConfigs; excluded keys and keys set only on the target are left alone). Without it, differences are reported as warnings at start')
            [CompletionResult]::new('--sync-acls', '--sync-acls', [CompletionResultType]::ParameterName, 'Create the LITERAL ACLs of the copied topics on their target topics (renamed with --rename), as MirrorMaker 2 does: an ALLOW WRITE is never copied (the run is the copies'' one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is. Continuous runs follow new ACLs every --refresh-topics; ACLs removed from the source stay on the target. Needs DESCRIBE on the source cluster and DESCRIBE and ALTER on the target cluster')
            [CompletionResult]::new('--no-origin-header', '--no-origin-header', [CompletionResultType]::ParameterName, 'Copy records without the kreplicate.origin header (byte-identical headers); without it the target cannot be resumed by exactly-once, groups cannot be translated and records copied back by an opposite run cannot be recognised')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress display and no summary line on stderr (errors are still printed)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress display and no summary line on stderr (errors are still printed)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kreplicate;status' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Source cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Target cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--topics', '--topics', [CompletionResultType]::ParameterName, 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.''')
            [CompletionResult]::new('--rename', '--rename', [CompletionResultType]::ParameterName, 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]')
            [CompletionResult]::new('--flow', '--flow', [CompletionResultType]::ParameterName, 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both')
            [CompletionResult]::new('-X', '-X ', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--from-property', '--from-property', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--to-property', '--to-property', [CompletionResultType]::ParameterName, 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20')
            [CompletionResult]::new('--guarantee', '--guarantee', [CompletionResultType]::ParameterName, 'Delivery guarantee [default: at-least-once]')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'Source consumer group holding the committed positions [default: kreplicate.<TARGET CLUSTER ID>, plus .<RENAME> with --rename]')
            [CompletionResult]::new('--refresh-topics', '--refresh-topics', [CompletionResultType]::ParameterName, 'Without --until-caught-up: how often to look at the source''s topics again (e.g. 30s, 5m, or off). New topics matching --topics (less --exclude) are copied from their beginning (or --start), deleted ones stop being copied, and partitions added to a source topic are followed when the target has as many (--create-topics adds them). Refused with --until-caught-up, which copies the topics found at start [default: 60s]')
            [CompletionResult]::new('--start', '--start', [CompletionResultType]::ParameterName, 'Where a group with no committed position starts; partitions that appear while a run copies start at their beginning [default: earliest]')
            [CompletionResult]::new('--on-gap', '--on-gap', [CompletionResultType]::ParameterName, 'What to do when a committed position lies outside the source log (retention, a recreated topic): fail, or skip to the earliest or latest record [default: fail]')
            [CompletionResult]::new('--config-exclude', '--config-exclude', [CompletionResultType]::ParameterName, 'Config keys never copied to target topics, on top of the built-in list (min.insync.replicas, *.replication.throttled.replicas, ...); comma list or repeated, a trailing ''*'' matches a prefix, e.g. --config-exclude ''retention.*,segment.ms''')
            [CompletionResult]::new('--sync-group-acls', '--sync-group-acls', [CompletionResultType]::ParameterName, 'With --sync-acls: also create the LITERAL ACLs of these source consumer groups on the same-named target groups (the ones `kreplicate groups` commits to): a comma list, or a regex when it starts with ''^''')
            [CompletionResult]::new('--max-bytes-per-sec', '--max-bytes-per-sec', [CompletionResultType]::ParameterName, 'Read at most this many key + value bytes per second from the source (e.g. 20MB, 512KiB); time spent waiting shows as "throttled" [default: no limit]')
            [CompletionResult]::new('--max-records-per-sec', '--max-records-per-sec', [CompletionResultType]::ParameterName, 'Read at most this many records per second from the source [default: no limit]')
            [CompletionResult]::new('--replication-factor', '--replication-factor', [CompletionResultType]::ParameterName, 'Replication factor for topics made by --create-topics [default: the broker''s]')
            [CompletionResult]::new('--delivery-timeout', '--delivery-timeout', [CompletionResultType]::ParameterName, 'Longest wait for one record''s acknowledgement by the target before the run fails (e.g. 500ms, 30s, 2m) [default: 2m]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Longest wait for a broker request at start (metadata, topic checks) [default: 30s]')
            [CompletionResult]::new('--commit-interval', '--commit-interval', [CompletionResultType]::ParameterName, 'How often verified positions are committed to the source group [default: 5s]')
            [CompletionResult]::new('--join-timeout', '--join-timeout', [CompletionResultType]::ParameterName, 'Longest wait for the consumer group to assign partitions (at start and after a rebalance) before the run fails with exit 1; --shard needs no group join [default: 2m]')
            [CompletionResult]::new('--shard', '--shard', [CompletionResultType]::ParameterName, 'Own static shard I of N of the source partitions instead of sharing them through the consumer group: no group join to wait for and no rebalances; positions are still read from and committed to --group. Run each shard exactly once. exactly-once always owns a shard (default 1/1), and each shard has its own transactional identity')
            [CompletionResult]::new('--sync-groups', '--sync-groups', [CompletionResultType]::ParameterName, 'While copying, translate these source consumer groups'' positions to the target and commit them there, as `kreplicate groups` does (never moving a group back): a comma list, or a regex when it starts with ''^''')
            [CompletionResult]::new('--sync-groups-interval', '--sync-groups-interval', [CompletionResultType]::ParameterName, 'How often --sync-groups runs (and once more when the copy ends) [default: 30s]')
            [CompletionResult]::new('--txn-max-records', '--txn-max-records', [CompletionResultType]::ParameterName, 'exactly-once: commit a transaction after this many records [default: 200000]')
            [CompletionResult]::new('--txn-max-bytes', '--txn-max-bytes', [CompletionResultType]::ParameterName, 'exactly-once: commit a transaction after this many key + value bytes (e.g. 32MiB) [default: 128MiB]')
            [CompletionResult]::new('--txn-max-time', '--txn-max-time', [CompletionResultType]::ParameterName, 'exactly-once: commit a transaction after this long [default: 2s]')
            [CompletionResult]::new('--metrics-addr', '--metrics-addr', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics at http://HOST:PORT/metrics, a health check at /healthz (503 once the copy stalled for longer than --delivery-timeout) and a readiness check at /readyz; :PORT listens on every interface')
            [CompletionResult]::new('--metrics-file', '--metrics-file', [CompletionResultType]::ParameterName, 'Write the same metrics to PATH (atomically: a temporary file renamed over it) while running and at exit, for node_exporter''s textfile collector')
            [CompletionResult]::new('--metrics-file-interval', '--metrics-file-interval', [CompletionResultType]::ParameterName, 'How often --metrics-file is rewritten while the run copies [default: 15s]')
            [CompletionResult]::new('--trust-group-positions', '--trust-group-positions', [CompletionResultType]::ParameterName, 'Start from the group''s positions even where the target partition is empty or was just created (without it such a run refuses: the positions may belong to another copy)')
            [CompletionResult]::new('--until-caught-up', '--until-caught-up', [CompletionResultType]::ParameterName, 'Copy up to the end of every partition as seen at start, commit, and exit 0')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON summary object on stdout on every exit, errors included (human output stays on stderr)')
            [CompletionResult]::new('--create-topics', '--create-topics', [CompletionResultType]::ParameterName, 'Create missing target topics with the source''s partition count and the configs set on the source topic (cleanup.policy, retention.*, segment.*, ...), less the excluded ones (see --config-exclude)')
            [CompletionResult]::new('--sync-configs', '--sync-configs', [CompletionResultType]::ParameterName, 'Set the source''s values of copied configs on existing target topics that differ (IncrementalAlterConfigs; excluded keys and keys set only on the target are left alone). Without it, differences are reported as warnings at start')
            [CompletionResult]::new('--sync-acls', '--sync-acls', [CompletionResultType]::ParameterName, 'Create the LITERAL ACLs of the copied topics on their target topics (renamed with --rename), as MirrorMaker 2 does: an ALLOW WRITE is never copied (the run is the copies'' one writer), an ALLOW ALL becomes ALLOW READ, DENY is copied as is. Continuous runs follow new ACLs every --refresh-topics; ACLs removed from the source stay on the target. Needs DESCRIBE on the source cluster and DESCRIBE and ALTER on the target cluster')
            [CompletionResult]::new('--no-origin-header', '--no-origin-header', [CompletionResultType]::ParameterName, 'Copy records without the kreplicate.origin header (byte-identical headers); without it the target cannot be resumed by exactly-once, groups cannot be translated and records copied back by an opposite run cannot be recognised')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress display and no summary line on stderr (errors are still printed)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress display and no summary line on stderr (errors are still printed)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace (RUST_LOG=<level> works too)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kreplicate;groups' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Source cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Target cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--topics', '--topics', [CompletionResultType]::ParameterName, 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.''')
            [CompletionResult]::new('--rename', '--rename', [CompletionResultType]::ParameterName, 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]')
            [CompletionResult]::new('--flow', '--flow', [CompletionResultType]::ParameterName, 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both')
            [CompletionResult]::new('-X', '-X ', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--from-property', '--from-property', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--to-property', '--to-property', [CompletionResultType]::ParameterName, 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20')
            [CompletionResult]::new('--groups', '--groups', [CompletionResultType]::ParameterName, 'Source consumer groups: a comma list, or a regex when it starts with ''^'' [default: every group with committed positions on --topics, except kreplicate''s own (kreplicate*)]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Longest wait for a broker request or read (e.g. 500ms, 30s, 2m); defaults.timeout in the config file when left out [default: 30s]')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the table (group, topic, partition, source and target position, status) and commit nothing')
            [CompletionResult]::new('--allow-rewind', '--allow-rewind', [CompletionResultType]::ParameterName, 'Also move a target group back when its committed position is past the translated one')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of the table')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kreplicate;migrate' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Source cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Target cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--topics', '--topics', [CompletionResultType]::ParameterName, 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.''')
            [CompletionResult]::new('--rename', '--rename', [CompletionResultType]::ParameterName, 'Target topic name; {topic} stands for the source topic''s name [default: {topic}]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]')
            [CompletionResult]::new('--flow', '--flow', [CompletionResultType]::ParameterName, 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both')
            [CompletionResult]::new('-X', '-X ', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--from-property', '--from-property', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--to-property', '--to-property', [CompletionResultType]::ParameterName, 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20')
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'The migration''s name on the target, which keeps its stage [default: the --topics value]')
            [CompletionResult]::new('--groups', '--groups', [CompletionResultType]::ParameterName, 'Source consumer groups to move: a comma list, or a regex when it starts with ''^'' [default: every group with committed positions on --topics, except kreplicate''s own; with --failback: none]')
            [CompletionResult]::new('--guarantee', '--guarantee', [CompletionResultType]::ParameterName, 'Delivery guarantee of every copy of the migration, fixed at its start; without it, exactly-once, or at-least-once when the target refuses exactly-once (the run says why) [default: at-least-once]')
            [CompletionResult]::new('--max-lag', '--max-lag', [CompletionResultType]::ParameterName, 'The copy stage ends once at most this many records are left to copy [default: 10000]')
            [CompletionResult]::new('--quiet-for', '--quiet-for', [CompletionResultType]::ParameterName, 'How long every source partition''s end must stay still, with no transaction open, for the writers to count as stopped [default: 10s]')
            [CompletionResult]::new('--writers-timeout', '--writers-timeout', [CompletionResultType]::ParameterName, 'How long to wait for the writers to stop before exit 3 names the partitions still written to [default: 5m]')
            [CompletionResult]::new('--replication-factor', '--replication-factor', [CompletionResultType]::ParameterName, 'Replication factor for topics made by --create-topics and for the state topic [default: the broker''s]')
            [CompletionResult]::new('--delivery-timeout', '--delivery-timeout', [CompletionResultType]::ParameterName, 'Longest wait for one record''s acknowledgement by the target before a copy fails [default: 2m]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Longest wait for a broker request [default: 30s]')
            [CompletionResult]::new('--continue', '--continue', [CompletionResultType]::ParameterName, 'The operator stopped the writers: wait until the source is quiet, then go on')
            [CompletionResult]::new('--failback', '--failback', [CompletionResultType]::ParameterName, 'The reverse move, B to A, after the move A to B is done (same --from and --to as the move): copies what the applications wrote on B back to A (B''s copies of A''s records are not copied back) and moves the --groups back')
            [CompletionResult]::new('--create-topics', '--create-topics', [CompletionResultType]::ParameterName, 'Create missing target topics with the source''s partition count and configs')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout on every exit (human output stays on stderr)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress display (stage lines and errors are still printed)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress display (stage lines and errors are still printed)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Diagnostics on stderr, including librdkafka''s log: -v info, -vv debug, -vvv trace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show a migration''s stage and what it established, as the target keeps them; reads only')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kreplicate;migrate;status' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Source cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Target cluster: a name from the config file, or host:port[,host:port]')
            [CompletionResult]::new('--topics', '--topics', [CompletionResultType]::ParameterName, 'Source topics: a comma list, or a regex when it starts with ''^'' (resolved at start; internal topics ''__*'' never match a regex)')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Source topics to leave out of --topics: a comma list, or a regex when it starts with ''^'', e.g. --topics ''^orders\..*'' --exclude ''^orders\.tmp\.''')
            [CompletionResult]::new('--rename', '--rename', [CompletionResultType]::ParameterName, 'Target topic name; {topic} stands for the source topic''s name')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'YAML config file [default: $XDG_CONFIG_HOME/kreplicate/config.yaml]')
            [CompletionResult]::new('--flow', '--flow', [CompletionResultType]::ParameterName, 'A named flow of the config file (under flows:): that flow''s settings over the file''s defaults, and flags over both')
            [CompletionResult]::new('-X', '-X ', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--from-property', '--from-property', [CompletionResultType]::ParameterName, 'librdkafka property for the source clients (repeatable), e.g. -X fetch.max.bytes=1048576')
            [CompletionResult]::new('--to-property', '--to-property', [CompletionResultType]::ParameterName, 'librdkafka property for the target clients (repeatable), e.g. --to-property linger.ms=20')
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'The migration''s name on the target [default: the --topics value]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Longest wait for a broker request')
            [CompletionResult]::new('--failback', '--failback', [CompletionResultType]::ParameterName, 'Show the failback''s stage (kept on --from) instead of the move''s')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object on stdout instead of the text')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kreplicate;migrate;help' {
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show a migration''s stage and what it established, as the target keeps them; reads only')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kreplicate;migrate;help;status' {
            break
        }
        'kreplicate;migrate;help;help' {
            break
        }
        'kreplicate;generate' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kreplicate;help' {
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'Replicate sample records between two in-process mock clusters, with a broker fault injected mid-run, and check that every record arrived (no Kafka needed)')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Compare source and target partition by partition: counts, offset ranges and a digest of key, value, headers and timestamp in order; exit 0 when the target is an exact copy')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'Show what a copy run with the same flags would do, writing nothing: each source topic, its target and partitions, configs to create or that differ, the group''s positions, records to copy and the warnings; exit 0 when the run would start, 2 when it would refuse (prefix any copy command line with `plan`)')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Whether a copy with the same flags runs and how far behind it is, seen from outside: the source group''s live members, its committed positions against each partition''s end (exactly-once: also the position the target holds); every flow of the config file without --flow and --topics. Reads only; exit 0, 1 when a broker cannot be reached, 2 for bad input (prefix any copy command line with `status`)')
            [CompletionResult]::new('groups', 'groups', [CompletionResultType]::ParameterValue, 'Translate the committed positions of the source''s consumer groups to the target (exact, from the origin of every copied record) and commit them to the same-named target groups')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Move topics and their consumer groups from one cluster to another in stages that cannot be skipped: plan, copy, stop the writers, drain and verify, move the groups, report. The stage lives on the target, so a rerun anywhere goes on where the last one stopped; exit 3 when the operator must act')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Write the man page and shell completions (man/, completions/) under DIR, and the generated blocks of DIR/docs/guide.md when DIR holds one')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kreplicate;help;demo' {
            break
        }
        'kreplicate;help;verify' {
            break
        }
        'kreplicate;help;plan' {
            break
        }
        'kreplicate;help;status' {
            break
        }
        'kreplicate;help;groups' {
            break
        }
        'kreplicate;help;migrate' {
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show a migration''s stage and what it established, as the target keeps them; reads only')
            break
        }
        'kreplicate;help;migrate;status' {
            break
        }
        'kreplicate;help;generate' {
            break
        }
        'kreplicate;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
