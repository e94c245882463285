#!/usr/bin/env bash
# The version matrix (issue 33): a named subset of the suite run with both clusters of every
# test on another Apache Kafka version, one version after the other, then a table of version ×
# test (PASS, or the failure's first line: a refusal names the cluster, its version and the
# missing feature). Not part of CI (.ci/run): 10 to 15 minutes per version here. The crash
# campaign runs 12 rounds (KREPLICATE_CAMPAIGN_ROUNDS), not 24.
#
#   scripts/matrix.sh [V[,V...]]     default: 2.8.2,3.9.1-zk,3.9.1,4.4.0
#       V: a Kafka version install-deps.sh fetches (2.8.2, 3.9.1, 4.1.2, 4.4.0); a -zk suffix
#       runs 3.x in ZooKeeper mode (2.8.2 always is). Each run: KREPLICATE_KAFKA_VERSION=V
#       scripts/test.sh -E SUBSET (its own shared clusters, stopped at the end).
# Output: the table on stdout (Markdown) and in target/matrix/table.md; each version's nextest
# log in target/matrix/V.log. Exit 1 if any test failed.
# Env: KREPLICATE_MATRIX_TESTS overrides the subset (a nextest filter expression).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# name|test: the faithful copy, the crash campaign, group translation and --sync-groups, topic
# configs and --sync-configs, partition growth, --sync-acls, SASL/SCRAM (with plan, verify and
# groups over it), verify, plan.
SUBSET=(
    "copy|copy::faithful_copy_of_several_topics_until_caught_up_then_nothing"
    "crash campaign|exactly_once::exactly_once_crash_campaign"
    "groups|translate::issue_11_groups_translate_exactly_over_foreign_records_and_duplicates"
    "--sync-groups|sync_groups::issue_11_sync_groups_follows_an_application_group_while_copying"
    "configs, --sync-configs|topic_configs::issue_12_configs_travel_drift_is_warned_then_synced"
    "growth|growth::issue_18_a_grown_source_is_followed_with_create_topics_exactly_once"
    "--sync-acls|secured_acls::issue_19_sync_acls_copies_topic_acls_renamed_without_write_and_follows_changes"
    "SASL/SCRAM, plan, verify|secured::issue_19_copy_plan_verify_and_groups_over_sasl_ssl_and_sasl_plaintext"
    "verify|verify::verify_exact_copy_exits_0_also_renamed_with_origin_headers"
    "plan|default_group::issue_35_plan_of_a_refused_run_shows_the_default_group_and_its_positions"
)
filter=""
for row in "${SUBSET[@]}"; do filter+="${filter:+ | }test(=${row#*|})"; done
filter="${KREPLICATE_MATRIX_TESTS:-$filter}"

IFS=, read -r -a versions <<<"${1:-2.8.2,3.9.1-zk,3.9.1,4.4.0}"
out=target/matrix
mkdir -p "$out"
status=0
export KREPLICATE_KAFKA_START_TIMEOUT="${KREPLICATE_KAFKA_START_TIMEOUT:-180}" # starts under load
export KREPLICATE_CAMPAIGN_ROUNDS="${KREPLICATE_CAMPAIGN_ROUNDS:-12}" # the short crash campaign
for v in "${versions[@]}"; do
    zk=0
    [[ $v != *-zk ]] || zk=1
    echo "matrix: Kafka $v" >&2
    started=$SECONDS
    KREPLICATE_KAFKA_VERSION="${v%-zk}" KREPLICATE_KAFKA_ZOOKEEPER=$zk \
        scripts/test.sh -E "$filter" >"$out/$v.log" 2>&1 || status=1
    echo "matrix: Kafka $v took $((SECONDS - started)) s" >&2
done

# A test's cell: PASS, or the first line of its panic message.
cell() { # LOG TEST
    if grep -qE "PASS \[.*\] .* $2\$" "$1"; then
        echo PASS
    elif grep -qE "TIMEOUT \[.*\] .* $2\$" "$1"; then
        echo "TIMEOUT (nextest's 10 minutes)"
    elif grep -qE "FAIL \[.*\] .* $2\$" "$1"; then
        local why
        why=$(awk -v t="$2" '$0 ~ "thread .*" t ".* panicked at" {getline; print; exit}' "$1" | cut -c1-160)
        echo "FAIL: ${why:-see log}" | tr '|' '/'
    else
        echo "not run"
    fi
}
{
    printf '| test |'
    for v in "${versions[@]}"; do printf ' %s |' "$v"; done
    printf '\n|---|'
    for v in "${versions[@]}"; do printf -- '---|'; done
    printf '\n'
    for row in "${SUBSET[@]}"; do
        printf '| %s |' "${row%%|*}"
        for v in "${versions[@]}"; do printf ' %s |' "$(cell "$out/$v.log" "${row#*|}")"; done
        printf '\n'
    done
} | tee "$out/table.md"
exit "$status"
