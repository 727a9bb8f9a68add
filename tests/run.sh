#!/usr/bin/env bash
# The README's test command: brings up what the tests need (a local Apache Kafka, PostgreSQL
# and an S3-compatible server), runs the whole suite, and stops what it started. Exits non-zero on any failure.
#
#   tests/run.sh                 # everything
#   tests/run.sh -p connect-api  # extra arguments go to `cargo test`
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

"$root/deploy/build-deps.sh"

started=()
secure_started=0
cleanup() {
  local s
  declare -F cleanup_three_nodes >/dev/null && cleanup_three_nodes
  [ "$secure_started" = 1 ] && { "$root/deploy/kafka.sh" down --secure || true; }
  for s in "${started[@]}"; do "$root/deploy/$s.sh" down || true; done
}
trap cleanup EXIT

# Reuse a service that is already running (a developer's); start and later stop one that is not.
if ! "$root/deploy/kafka.sh" status | grep -q running; then started+=(kafka); fi
# The broker-failure test starts a three-node cluster itself (deploy/kafka.sh up --nodes 3).
three_nodes_before=$("$root/deploy/kafka.sh" status --nodes 3 | grep -c running || true)
# So does the transactions-v1 test (deploy/kafka.sh up --tv1: transaction.version=1).
tv1_before=$("$root/deploy/kafka.sh" status --tv1 | grep -c running || true)
cleanup_three_nodes() {
  [ "$three_nodes_before" = 0 ] && "$root/deploy/kafka.sh" down --nodes 3 >/dev/null 2>&1 || true
  [ "$tv1_before" = 0 ] && "$root/deploy/kafka.sh" down --tv1 >/dev/null 2>&1 || true
}
kafka_out=$("$root/deploy/kafka.sh" up)
export "${kafka_out##*$'\n'}"

# The secured cluster (TLS, SASL, mTLS; no plaintext listener): its secure.env is KAFKA_SECURE_ENV.
if ! "$root/deploy/kafka.sh" status --secure | grep -q running; then secure_started=1; fi
secure_out=$("$root/deploy/kafka.sh" up --secure)
export "${secure_out##*$'\n'}"

if ! "$root/deploy/postgres.sh" status | grep -q running; then started+=(postgres); fi
pg_out=$("$root/deploy/postgres.sh" up)
export "${pg_out##*$'\n'}"
# The CA of the server's TLS certificate (Postgres-over-TLS tests).
export "$(grep '^PG_CA=' <<<"$pg_out")"

# The object-store sink's S3 test: moto's S3-compatible server (any credentials are accepted).
if ! "$root/deploy/s3.sh" status | grep -q running; then started+=(s3); fi
s3_out=$("$root/deploy/s3.sh" up)
export "${s3_out##*$'\n'}"
export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-test} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-test}

echo "tests/run.sh: KAFKA_BOOTSTRAP_SERVERS=$KAFKA_BOOTSTRAP_SERVERS KAFKA_SECURE_ENV=$KAFKA_SECURE_ENV DATABASE_URL=$DATABASE_URL S3_ENDPOINT=$S3_ENDPOINT"

if [ "${CI:-}" = true ]; then
  cargo fmt --all -- --check
fi
# One test at a time within each binary: the exactly-once tests each run three workers (and one
# starts three more brokers); two of them at once on a 2-core machine made them time out.
RUST_TEST_THREADS=${RUST_TEST_THREADS:-1} cargo test --workspace --no-fail-fast "$@"

# The REST API against real clients: a Kafka Connect client from PyPI (kafka-connect-py) and a
# bounded schemathesis run against openapi.yaml, both against one worker started here.
rest_clients() {
  local venv="$root/.local/rest-client-venv" fuzz="$root/.local/schemathesis-venv"
  [ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q kafka-connect-py; }
  [ -x "$fuzz/bin/schemathesis" ] || { python3 -m venv "$fuzz" && "$fuzz/bin/pip" install -q schemathesis; }
  local dir port group pid rc=0
  dir=$(mktemp -d)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  group="rest-clients-$$-$RANDOM"
  cat >"$dir/worker.properties" <<PROPS
bootstrap.servers=$KAFKA_BOOTSTRAP_SERVERS
group.id=$group
config.storage.topic=$group-configs
offset.storage.topic=$group-offsets
status.storage.topic=$group-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
listeners=http://127.0.0.1:$port
PROPS
  cargo build -q -p connect-worker --bin connect-worker
  "${CARGO_TARGET_DIR:-$root/target}/debug/connect-worker" "$dir/worker.properties" >"$dir/worker.log" 2>&1 &
  pid=$!
  for _ in $(seq 60); do
    curl -sf "http://127.0.0.1:$port/health" | grep -q healthy && break
    sleep 1
  done
  echo "tests/run.sh: REST client check (kafka-connect-py) against http://127.0.0.1:$port"
  timeout 180 "$venv/bin/python" "$root/tests/rest_client_check.py" "http://127.0.0.1:$port" "$group-data" || rc=1
  echo "tests/run.sh: schemathesis against openapi.yaml (bounded: 15 examples per operation)"
  # Run from the scratch directory: schemathesis leaves a .schemathesis/ cache in its cwd.
  (cd "$dir" && timeout 300 "$fuzz/bin/schemathesis" run "$root/openapi.yaml" --url "http://127.0.0.1:$port" \
    --max-examples 15 --request-timeout 60 --no-color \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    >"$dir/schemathesis.log" 2>&1) || { rc=1; tail -80 "$dir/schemathesis.log"; }
  tail -3 "$dir/schemathesis.log"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ "$rc" = 0 ] || { echo "tests/run.sh: REST client checks failed; worker log: $dir/worker.log"; return 1; }
  echo "tests/run.sh: REST client checks passed"
}
rest_clients
