#!/usr/bin/env bash
# The whole test suite: installs what the tests need (idempotent), then runs the unit tests and
# the integration tests (Apache Kafka clusters from scripts/kafka.sh, tansu, librdkafka's mock
# cluster, Prometheus and node_exporter) with cargo-nextest, one process per test.
# Extra arguments go to `cargo nextest run` (a filter, --no-capture, ...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh

# Tests that do not stop or reconfigure a broker share two clusters (common::Kafka::shared),
# started by the first test that asks: fresh ones for every run, stopped at the end.
export KREPLICATE_KAFKA_HOME="$PWD/target/tmp/kreplicate-tests/kafka"
stop_shared() {
    for name in shared-a shared-b; do
        [ ! -d "$KREPLICATE_KAFKA_HOME/$name" ] || scripts/kafka.sh stop "$name" || true
    done
}
stop_shared
trap stop_shared EXIT

log="target/nextest.log"
mkdir -p target
status=0
cargo nextest run --locked --no-fail-fast "$@" 2>&1 | tee "$log" || status=$?
# Passing tests' evidence lines (issue 41): a report file, and a fault test without one fails.
python3 scripts/evidence.py target/nextest/default/junit.xml target/evidence.txt \
    multinode_faults multinode_proxy exits eos_abort faults::seed_ faults::issue_17_ \
    faults::issue_31_ faults::issue_41_ || status=1
# A test retried by its own override (nextest.toml says which and why) and passing the second
# time is FLAKY: it passes the run, and is listed here so that it is not forgotten.
if grep -q "FLAKY" "$log"; then
    echo "test.sh: FLAKY results (passed on a retry):"
    grep "FLAKY" "$log"
fi
exit "$status"
