#!/usr/bin/env bash
# The whole test suite: installs what the tests need (idempotent), then runs unit tests and the
# integration tests (real tansu brokers + librdkafka's mock cluster) against the built binary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh
if command -v cargo-nextest >/dev/null 2>&1; then
    cargo nextest run --locked --no-fail-fast "$@"
else
    cargo test --locked --no-fail-fast "$@"
fi
