#!/usr/bin/env bash
# The README's test command: brings up what the tests need (a local Apache Kafka, PostgreSQL,
# an S3-compatible server and a schema registry), runs the whole suite, and stops what it started. Exits non-zero on any failure.
#
#   tests/run.sh                 # everything: every test binary built once, the tests run in
#                                # parallel by tests/runner.py (one process per test, weighted
#                                # slots from tests/weights.tsv), then the REST client checks
#   tests/run.sh --long          # the same, plus the tests marked long (#[ignore = "long: ..."])
#   tests/run.sh -p connect-api  # other arguments go to `cargo test` (run as before, one test at a
#                                # time), e.g. one package or one test binary
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

"$root/deploy/build-deps.sh"

# The services' ports (deploy/*.sh: Kafka's clusters from 39092, S3 39900, the registry 38081,
# PostgreSQL 55432; the shifted bases CI may use sit at 40000-41999 and 57432) lie in Linux's
# ephemeral range, so a client socket of an earlier test can hold one when a cluster starts
# (seen in CI: the ACL cluster's 39692 "Address already in use", twice). Where the kernel lets
# this run, they are reserved from ephemeral use for its duration (explicit binds still work),
# with the block the tests hand their workers (tests/src/worker.rs `TEST_PORTS`).
reserved_file=/proc/sys/net/ipv4/ip_local_reserved_ports
reserved_before=
if [ -w "$reserved_file" ]; then
  reserved_before=$(cat "$reserved_file" 2>/dev/null || true)
  echo "${reserved_before:+$reserved_before,}38000-41999,43000-46999,${PG_PORT:-55432},57432" > "$reserved_file" 2>/dev/null \
    || reserved_file=
else
  reserved_file=
fi

started=()
secure_started=0
cleanup() {
  local s
  [ -n "$reserved_file" ] && { echo "$reserved_before" > "$reserved_file" 2>/dev/null || true; }
  declare -F cleanup_three_nodes >/dev/null && cleanup_three_nodes
  [ "$secure_started" = 1 ] && { "$root/deploy/kafka.sh" down --secure || true; }
  for s in "${started[@]}"; do "$root/deploy/$s.sh" down || true; done
}
trap cleanup EXIT

long=0
cargo_args=()
for a in "$@"; do
  if [ "$a" = --long ]; then long=1; else cargo_args+=("$a"); fi
done

# Reuse a service that is already running (a developer's); start and later stop one that is not.
if ! "$root/deploy/kafka.sh" status | grep -q running; then started+=(kafka); fi
# The broker-failure test starts a three-node cluster itself (deploy/kafka.sh up --nodes 3).
three_nodes_before=$("$root/deploy/kafka.sh" status --nodes 3 | grep -c running || true)
# So does the transactions-v1 test (deploy/kafka.sh up --tv1: transaction.version=1).
tv1_before=$("$root/deploy/kafka.sh" status --tv1 | grep -c running || true)
# And MirrorMaker's ACL sync test (deploy/kafka.sh up --acl: a cluster with an authorizer).
acl_before=$("$root/deploy/kafka.sh" status --acl | grep -c running || true)
cleanup_three_nodes() {
  [ "$three_nodes_before" = 0 ] && "$root/deploy/kafka.sh" down --nodes 3 >/dev/null 2>&1 || true
  [ "$tv1_before" = 0 ] && "$root/deploy/kafka.sh" down --tv1 >/dev/null 2>&1 || true
  [ "$acl_before" = 0 ] && "$root/deploy/kafka.sh" down --acl >/dev/null 2>&1 || true
}
# The REST client checks' Python clients (at the end) and the registry tests' Avro client,
# installed from PyPI while the tests build.
rest_client_venvs() {
  local venv="$root/.local/rest-client-venv" fuzz="$root/.local/schemathesis-venv"
  [ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q kafka-connect-py; }
  [ -x "$fuzz/bin/schemathesis" ] || { python3 -m venv "$fuzz" && "$fuzz/bin/pip" install -q schemathesis; }
  # The independent Avro client of tests/tests/registry.rs (the test makes it too if missing).
  local avro="$root/.local/fastavro-venv"
  [ -x "$avro/bin/python" ] || { python3 -m venv "$avro" && "$avro/bin/pip" install -q --disable-pip-version-check 'fastavro>=1.9'; }
  # The independent Parquet and Avro readers of tests/tests/sink_s3.rs (idem).
  local readers="$root/.local/s3-readers-venv"
  "$readers/bin/python" -c 'import pyarrow, fastavro, cramjam' 2>/dev/null || { { [ -x "$readers/bin/python" ] || python3 -m venv "$readers"; } && "$readers/bin/pip" install -q --disable-pip-version-check 'pyarrow>=15' 'fastavro>=1.9' cramjam; }
}

# The services start in the background while the tests build; each writes its last line
# (NAME=value) to a file the tests' environment is read from.
svc_dir=$(mktemp -d)
if ! "$root/deploy/kafka.sh" status --secure | grep -q running; then secure_started=1; fi
if ! "$root/deploy/postgres.sh" status | grep -q running; then started+=(postgres); fi
if ! "$root/deploy/s3.sh" status | grep -q running; then started+=(s3); fi
if ! "$root/deploy/registry.sh" status | grep -q running; then started+=(registry); fi
start_service() { # name, command...: runs it, keeps its output, its last line in $svc_dir/name.env
  local name=$1; shift
  if "$@" >"$svc_dir/$name.out" 2>"$svc_dir/$name.err"; then
    tail -n 1 "$svc_dir/$name.out" >"$svc_dir/$name.env"
  else
    echo "tests/run.sh: starting $name failed:" >&2; cat "$svc_dir/$name.err" >&2
  fi
}
# Kafka's clusters one after another (the first fetches the broker jars the others use): the
# plain one, the secured one (TLS, SASL, mTLS; no plaintext listener), and the two the
# exactly-once tests use (three nodes; transaction.version=1), which they would otherwise start.
(
  start_service kafka "$root/deploy/kafka.sh" up
  start_service kafka-secure "$root/deploy/kafka.sh" up --secure
  start_service kafka-n3 "$root/deploy/kafka.sh" up --nodes 3
  start_service kafka-tv1 "$root/deploy/kafka.sh" up --tv1
  # The schema registry (Apicurio) last: its Maven fetch does not race the broker jars'.
  start_service registry "$root/deploy/registry.sh" up
) &
kafka_pid=$!
# PostgreSQL, then moto's S3-compatible server for the object-store sink's S3 test (any
# credentials are accepted): one after the other, as both may install Debian packages.
(
  start_service postgres "$root/deploy/postgres.sh" up
  start_service s3 "$root/deploy/s3.sh" up
  rest_client_venvs >"$svc_dir/venvs.out" 2>&1 || cat "$svc_dir/venvs.out" >&2
) &
pg_pid=$!
# The Java plugin host (cached in .local/plugin-host) and Debezium's Postgres connector laid out
# as a plugin.path directory (.local/plugins), and the project's own test plugins
# (.local/test-plugins), for tests/tests/java_plugins/: Maven Central, once; seconds when cached.
(
  "$root/deploy/plugin-host.sh" build && "$root/tests/cdc/debezium-plugin.sh" \
    && "$root/tests/java-plugins/build.sh"
) >"$svc_dir/plugins.out" 2>"$svc_dir/plugins.err" &
plugins_pid=$!

if [ "${CI:-}" = true ]; then
  cargo fmt --all -- --check
  # A clean clone builds everything once: no incremental caches to write.
  export CARGO_INCREMENTAL=0
fi
if [ "${#cargo_args[@]}" = 0 ]; then
  build_start=$(date +%s)
  # Every test binary and the worker binary (built for the worker's own integration tests),
  # once: tests/runner.py finds them built.
  cargo test --workspace --no-run -q
  echo "tests/run.sh: build finished in $(( $(date +%s) - build_start ))s"
fi

wait "$kafka_pid" "$pg_pid"
wait "$plugins_pid" || { echo "tests/run.sh: building the Java plugin host failed:" >&2; cat "$svc_dir/plugins.err" >&2; exit 1; }
for s in kafka kafka-secure kafka-n3 kafka-tv1 postgres s3 registry; do
  [ -s "$svc_dir/$s.env" ] || { echo "tests/run.sh: $s did not start" >&2; exit 1; }
  cat "$svc_dir/$s.err" >&2
done
export "$(cat "$svc_dir/kafka.env")"
export "$(cat "$svc_dir/kafka-secure.env")"
export "$(cat "$svc_dir/postgres.env")"
# The CA of the server's TLS certificate (Postgres-over-TLS tests).
export "$(grep '^PG_CA=' "$svc_dir/postgres.out")"
export "$(cat "$svc_dir/s3.env")"
export "$(cat "$svc_dir/registry.env")"
export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-test} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-test}

echo "tests/run.sh: KAFKA_BOOTSTRAP_SERVERS=$KAFKA_BOOTSTRAP_SERVERS KAFKA_SECURE_ENV=$KAFKA_SECURE_ENV DATABASE_URL=$DATABASE_URL S3_ENDPOINT=$S3_ENDPOINT SCHEMA_REGISTRY_URL=$SCHEMA_REGISTRY_URL"

rc=0
if [ "${#cargo_args[@]}" = 0 ]; then
  # The worker the black-box tests start: the one `cargo test --no-run` built.
  export CONNECT_WORKER_BIN=${CONNECT_WORKER_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/connect-worker}
  runner_args=()
  [ "$long" = 1 ] && runner_args+=(--long)
  python3 "$root/tests/check_docs.py" || rc=1
  python3 "$root/tests/runner.py" "${runner_args[@]}" || rc=1
else
  # One test at a time within each binary: the exactly-once tests each run three workers.
  RUST_TEST_THREADS=${RUST_TEST_THREADS:-1} cargo test --no-fail-fast "${cargo_args[@]}" || rc=1
fi

# The REST API against real clients: a Kafka Connect client from PyPI (kafka-connect-py) and a
# bounded schemathesis run against openapi.yaml, both against one worker started here.
rest_clients() {
  local venv="$root/.local/rest-client-venv" fuzz="$root/.local/schemathesis-venv"
  rest_client_venvs
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
  [ -x "${CONNECT_WORKER_BIN:-}" ] || cargo build -q -p connect-worker --bin connect-worker
  "${CONNECT_WORKER_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/connect-worker}" "$dir/worker.properties" >"$dir/worker.log" 2>&1 &
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
rest_clients || rc=1
exit "$rc"
