#!/usr/bin/env bash
# Records Apache Kafka Connect 4.4's answers for Debezium 3.6.1's Postgres connector found in its
# plugin.path into tests/golden/apache-4.4/ (compared by
# tests/tests/java_plugins/apache_answers.rs with this worker's, Debezium in its plugin.path):
#
#   debezium-config.json            GET /connector-plugins/<PostgresConnector>/config
#   debezium-validate.json          PUT .../config/validate of debezium-validate.request.json
#                                   (a valid config with Debezium's ExtractNewRecordState)
#   debezium-validate-invalid.json  the same of debezium-validate-invalid.request.json
#
# Debezium's tasks do not run on Connect 4.4 (kafka-clients 4.4 removed a class they use), but
# its connector's definition and validation do. The validation of the valid config connects to
# the project's PostgreSQL (deploy/postgres.sh up; its port is in the request, 55432 by default).
# Needs the shared local Kafka of deploy/kafka.sh, Java 17 and Maven:
#
#   tests/apache/capture-golden-debezium.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${GOLDEN_DIR:-$root/tests/golden/apache-4.4}
plugins=$("$root/tests/cdc/debezium-plugin.sh")
class=io.debezium.connector.postgresql.PostgresConnector

APACHE_CONNECT_BENCH_PLUGIN=1 APACHE_CONNECT_WORKER_PROPS="plugin.path=$plugins" \
  "$root/tests/apache/apache-connect.sh" start > /tmp/apache-connect-env.$$
# shellcheck disable=SC1090
. /tmp/apache-connect-env.$$
rm -f /tmp/apache-connect-env.$$
trap '"$root/tests/apache/apache-connect.sh" stop' EXIT
url=$APACHE_CONNECT_URL

pretty() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), indent=2, ensure_ascii=False))'; }
save() { # NAME METHOD PATH [BODY]: the answer, which must be 200
  local name=$1 method=$2 path=$3 body=${4:-} status
  status=$(curl -sS -o "$out/$name.raw" -w '%{http_code}' -X "$method" -H 'Content-Type: application/json' \
    ${body:+--data "$body"} "$url$path")
  [ "$status" = 200 ] || { echo "capture-golden-debezium.sh: $path answered $status: $(cat "$out/$name.raw")" >&2; exit 1; }
  pretty < "$out/$name.raw" > "$out/$name.json"
  rm -f "$out/$name.raw"
  echo "captured $name.json" >&2
}

save debezium-config GET "/connector-plugins/$class/config"
for name in debezium-validate debezium-validate-invalid; do
  save "$name" PUT "/connector-plugins/$class/config/validate" "$(cat "$out/$name.request.json")"
done
