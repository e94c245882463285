#!/usr/bin/env bash
# Issue 42's version pairs: `kreplicate migrate` moving Kafka's own Java clients
# (VerifiableProducer, two VerifiableConsumer groups) from each source version to 4.4.0 and
# back, under both guarantees (tests/migrate.rs; CI runs 2.8.2 under exactly-once only).
# Prints, per pair and guarantee, what the clients' own output showed: acknowledged, read on
# each side, missing, read twice.
#
#   scripts/migrate-matrix.sh [V[,V...]]     default: 2.8.2,3.9.1 (ZooKeeper mode both)
# Each version's nextest log in target/migrate-matrix/V.log. Exit 1 if any run failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

IFS=, read -r -a versions <<<"${1:-2.8.2,3.9.1}"
out=target/migrate-matrix
mkdir -p "$out"
status=0
for v in "${versions[@]}"; do
    echo "migrate-matrix: Kafka $v → 4.4.0 and back" >&2
    started=$SECONDS
    KREPLICATE_MIGRATE_FROM="$v" KREPLICATE_MIGRATE_GUARANTEES=exactly-once,at-least-once scripts/test.sh --no-capture \
        -E 'test(=migrate::issue_42_migrate_moves_kafkas_own_clients_to_4_4_and_back)' \
        >"$out/$v.log" 2>&1 || status=1
    echo "migrate-matrix: Kafka $v took $((SECONDS - started)) s" >&2
    # The clients' figures, as the test printed them.
    grep -E '^(billing|audit)-(eos|alo): |acknowledged records on A' "$out/$v.log" | sed "s/^/$v: /" || true
    grep -qE "PASS \[.*\] .*issue_42_migrate_moves_kafkas_own_clients_to_4_4_and_back" "$out/$v.log" ||
        { echo "$v: FAIL (see $out/$v.log)"; status=1; }
done
exit "$status"
