//! The long texts of `--help` and the man page.

/// Examples for `--help` and the man page: each line fits 80 columns, so neither wraps a
/// command in the middle. No `"\` before the first line: it would eat its indentation too.
pub const EXAMPLES: &str = "  Copy two topics once, up to their current end, and exit:
    kreplicate --from prod --to dr --topics orders,payments --until-caught-up

  Copy every topic matching a regex under a new name, continuously:
    kreplicate --from 10.0.0.1:9092 --to 10.1.0.1:9092 \\
      --topics '^orders\\..*' --rename 'backup.{topic}'

  Cron, every 10 minutes, one JSON line per run (clusters and topics from the
  config file's defaults):
    */10 * * * * kreplicate --until-caught-up --json >>/var/log/kr.jsonl

  A script that acts on the outcome:
    kreplicate --from prod --to dr --topics orders --until-caught-up
    case $? in
      0) echo 'caught up; positions committed' ;;
      1) echo 'failed; a rerun resumes from the last commit' >&2 ;;
      2) echo 'fix the command line or the config' >&2; exit 2 ;;
    esac

  Try it without Kafka:
    kreplicate demo";

/// The man page's SYNOPSIS: one usage line per command (clap's lists every flag of a copy run
/// on one line).
pub const USAGE: &str = "\
kreplicate --from CLUSTER --to CLUSTER --topics LIST|^REGEX [OPTIONS]
kreplicate plan [the options of a copy run]
kreplicate status [the options of a copy run]
kreplicate verify --from CLUSTER --to CLUSTER --topics LIST|^REGEX [OPTIONS]
kreplicate groups --from CLUSTER --to CLUSTER --topics LIST|^REGEX [OPTIONS]
kreplicate migrate --from CLUSTER --to CLUSTER --topics LIST|^REGEX [OPTIONS]
kreplicate migrate status --from CLUSTER --to CLUSTER --topics LIST|^REGEX
kreplicate [plan|status|verify|groups] --flow NAME [OPTIONS]
kreplicate demo [OPTIONS]";

/// Exit codes, by who must act.
pub const EXIT_CODES: &str =
    "  0    done: caught up, or stopped by a first SIGINT/SIGTERM after committing
  1    the run failed and a rerun may succeed: a broker unreachable or timing
       out (also at start), delivery error, fencing, source gap
  2    fix the command line or the config: nothing was consumed, produced or
       committed
  3    migrate only: waiting for the operator (stop the writers, or the consumers
       of a group still active on the source), then rerun with --continue
  130  interrupted by a second signal: exited at once, nothing more committed";

/// `groups --help`: why a group is refused, and the exit codes.
pub const GROUPS_AFTER_HELP: &str = "\
A group is refused as a whole (nothing committed for it), with a line saying why
and what to do, when:
  - it has active members on the target: stop its consumers on the target first
  - a partition is ahead of the copy (the source group is past what the copy has
    committed): copy first, then translate
  - a partition has no provenance on the target (copied with --no-origin-header,
    or not by kreplicate): copy it with kreplicate, then translate
  - it has no committed position on the selected topics
A target group further than the translation keeps its position (kept), unless
--allow-rewind.

Exit codes:
  0    every selected group translated (or would be, with --dry-run)
  1    some group refused, or a broker failed: a rerun may succeed
  2    fix the command line or the config: an unknown group in --groups, a bad
       regex, a missing topic; nothing was committed";

/// `migrate --help`: the stages, and the exit codes.
pub const MIGRATE_AFTER_HELP: &str = "\
Stages (kept in __kreplicate.migrations on the target; a rerun goes on at the
stage stored there, from any machine):
  1 planned       the copy's checks pass; the backlog and groups are shown
  2 copying       copies until at most --max-lag records are left
  3 waiting-for-writers
                  says which producers to stop, waits until every source end
                  stays still for --quiet-for with no transaction open (on a
                  terminal after Enter; in scripts with --continue)
  4 draining      copies to the ends the writers left, then verifies every
                  partition record by record
  5 verified      moves the consumer groups (refused while one has live
                  members on the source; never moves one backwards)
  6 done          reports what moved; point the consumers, then the producers,
                  at the target

Exit codes:
  0    done: every stage passed (a rerun prints the report again)
  1    a stage failed and a rerun may pass (a broker unreachable, a copy that
       failed, a target that differs after the drain)
  2    fix the command line, the config or the clusters: nothing moved (the id
       belongs to other clusters or topics, a topic is missing, the target holds
       records that are not copies of the source)
  3    waiting for the operator: stop the writers (or the consumers the line
       names), then run again with --continue
  130  stopped by a signal: the stage runs again on the next run";
