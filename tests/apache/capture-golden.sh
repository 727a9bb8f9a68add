#!/usr/bin/env bash
# Records Apache Kafka Connect 4.4's REST answers into tests/golden/apache-4.4/*.json, the files
# the golden tests (tests/tests/golden_apache.rs; the status topic records also in
# worker/src/storage/status.rs) compare our answers with. Reproduce with (needs the shared local Kafka of deploy/kafka.sh, Java 17, Maven):
#
#   tests/apache/capture-golden.sh
#
# It starts Apache's worker with tests/apache/apache-connect.sh (random group and internal
# topics, REST on $APACHE_CONNECT_PORT, default 38083), runs the sequence below, and stops it.
# Bodies are stored as Apache sent them, only pretty-printed (key order kept); worker ids,
# generation-dependent values and the random topic name are normalized by the tests, not here.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${GOLDEN_DIR:-$root/tests/golden/apache-4.4}
bootstrap=${KAFKA_BOOTSTRAP_SERVERS:-127.0.0.1:39092}
mkdir -p "$out"

"$root/tests/apache/apache-connect.sh" start > /tmp/apache-connect-env.$$
# shellcheck disable=SC1090
. /tmp/apache-connect-env.$$
rm -f /tmp/apache-connect-env.$$
trap '"$root/tests/apache/apache-connect.sh" stop' EXIT
url=$APACHE_CONNECT_URL

pretty() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), indent=2, ensure_ascii=False))'; }
# save NAME EXPECTED_STATUS METHOD PATH [BODY]
save() {
  local name=$1 want=$2 method=$3 path=$4 body=${5:-} status
  if [ -n "$body" ]; then
    status=$(curl -sS -o "$out/$name.raw" -w '%{http_code}' -X "$method" -H 'Content-Type: application/json' --data "$body" "$url$path")
  else
    status=$(curl -sS -o "$out/$name.raw" -w '%{http_code}' -X "$method" "$url$path")
  fi
  [ "$status" = "$want" ] || { echo "capture-golden.sh: $method $path answered $status, expected $want: $(cat "$out/$name.raw")" >&2; exit 1; }
  pretty < "$out/$name.raw" > "$out/$name.json"
  rm -f "$out/$name.raw"
  echo "captured $name.json ($method $path -> $status)" >&2
}
wait_running() {
  local i
  for i in $(seq 1 60); do
    if curl -fsS "$url/connectors/golden-src/status" 2>/dev/null \
        | python3 -c 'import json,sys; s=json.load(sys.stdin); sys.exit(0 if s["connector"]["state"]=="RUNNING" and s["tasks"] and all(t["state"]=="RUNNING" for t in s["tasks"]) else 1)'; then
      return 0
    fi
    sleep 1
  done
  echo "capture-golden.sh: golden-src did not reach RUNNING" >&2; exit 1
}

topic=golden-verifiable-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
class=org.apache.kafka.connect.tools.VerifiableSourceConnector
config='{"connector.class":"'$class'","name":"golden-src","tasks.max":"1","topic":"'$topic'","throughput":"10"}'

# Item 8: the plugin listing.
save connector-plugins 200 GET /connector-plugins
# Item 7: config definitions and whole validate answers (valid, and with a bad tasks.max).
save config-def-verifiable-source 200 GET /connector-plugins/VerifiableSourceConnector/config
save validate-verifiable-source 200 PUT /connector-plugins/VerifiableSourceConnector/config/validate "$config"
save validate-verifiable-source-invalid 200 PUT /connector-plugins/VerifiableSourceConnector/config/validate \
  '{"connector.class":"'$class'","name":"golden-src","tasks.max":"many","topic":"'$topic'"}'
save validate-file-sink 200 PUT /connector-plugins/FileStreamSinkConnector/config/validate \
  '{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","name":"golden-sink","topics":"'$topic'"}'
# Item 10: status bodies of a running connector, then a restart's 202.
save create-connector 201 POST /connectors '{"name":"golden-src","config":'"$config"'}'
wait_running
save status-connector 200 GET /connectors/golden-src/status
save status-task 200 GET /connectors/golden-src/tasks/0/status
save connectors-expand-status 200 GET '/connectors?expand=status'
save restart-202 202 POST '/connectors/golden-src/restart?includeTasks=true'
wait_running
save status-after-restart 200 GET /connectors/golden-src/status
# What Apache wrote to its status topic (the format a mixed cluster reads).
java -cp "$root/.local/apache-connect/lib/*" "$root/tests/apache/DumpTopic.java" "$bootstrap" "$APACHE_CONNECT_STATUS_TOPIC" \
  2>/dev/null | python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in sys.stdin if l.strip()], indent=2))' \
  > "$out/status-topic-records.json"
echo "captured status-topic-records.json" >&2
curl -fsS -X DELETE "$url/connectors/golden-src" >/dev/null
