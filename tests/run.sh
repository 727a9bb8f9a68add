#!/usr/bin/env bash
# The README's test command: brings up what the tests need (a local Apache Kafka and
# PostgreSQL), runs the whole suite, and stops what it started. Exits non-zero on any failure.
#
#   tests/run.sh                 # everything
#   tests/run.sh -p connect-api  # extra arguments go to `cargo test`
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

started=()
cleanup() {
  local s
  for s in "${started[@]}"; do "$root/deploy/$s.sh" down || true; done
}
trap cleanup EXIT

# Reuse a service that is already running (a developer's); start and later stop one that is not.
if ! "$root/deploy/kafka.sh" status | grep -q running; then started+=(kafka); fi
kafka_out=$("$root/deploy/kafka.sh" up)
export "${kafka_out##*$'\n'}"

if ! "$root/deploy/postgres.sh" status | grep -q running; then started+=(postgres); fi
pg_out=$("$root/deploy/postgres.sh" up)
export "${pg_out##*$'\n'}"

echo "tests/run.sh: KAFKA_BOOTSTRAP_SERVERS=$KAFKA_BOOTSTRAP_SERVERS DATABASE_URL=$DATABASE_URL"

if [ "${CI:-}" = true ]; then
  cargo fmt --all -- --check
fi
cargo test --workspace "$@"
