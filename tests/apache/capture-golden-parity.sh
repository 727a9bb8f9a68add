#!/usr/bin/env bash
# Records Apache Kafka Connect 4.4's validate answers for the 4.2-4.4 features of issue 41 into
# tests/golden/apache-4.4/ (compared by tests/tests/golden_apache.rs, `parity_*` tests):
#
#   validate-schema-content.json  a connector's own JsonConverter with `schema.content`
#                                 (KIP-1054): the prefixed converter entries Apache 4.4 adds
#   validate-allowlist.json       the Allowlist override policy (KIP-1188) with
#                                 `connector.client.config.override.allowlist=linger.ms`: an
#                                 allowed and a refused `producer.override.*` key
#
# Unlike capture-golden.sh it needs no Apache jar beyond Maven Central's: the connector is the
# project's stand-in (tests/apache/bench, `connectrs.bench.VerifiableSourceConnector`, named by
# its alias `VerifiableSourceConnector`, which is also ours). Needs the shared local Kafka of
# deploy/kafka.sh, Java 17 and Maven:
#
#   tests/apache/capture-golden-parity.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${GOLDEN_DIR:-$root/tests/golden/apache-4.4}
mkdir -p "$out"

APACHE_CONNECT_BENCH_PLUGIN=1 \
APACHE_CONNECT_WORKER_PROPS=$'connector.client.config.override.policy=Allowlist\nconnector.client.config.override.allowlist=linger.ms' \
  "$root/tests/apache/apache-connect.sh" start > /tmp/apache-connect-env.$$
# shellcheck disable=SC1090
. /tmp/apache-connect-env.$$
rm -f /tmp/apache-connect-env.$$
trap '"$root/tests/apache/apache-connect.sh" stop' EXIT
url=$APACHE_CONNECT_URL

pretty() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), indent=2, ensure_ascii=False))'; }
save() { # NAME BODY: PUT .../VerifiableSourceConnector/config/validate, which must answer 200
  local name=$1 body=$2 status
  status=$(curl -sS -o "$out/$name.raw" -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
    --data "$body" "$url/connector-plugins/VerifiableSourceConnector/config/validate")
  [ "$status" = 200 ] || { echo "capture-golden-parity.sh: validate answered $status: $(cat "$out/$name.raw")" >&2; exit 1; }
  pretty < "$out/$name.raw" > "$out/$name.json"
  rm -f "$out/$name.raw"
  echo "captured $name.json" >&2
}

# The request bodies are the tests' too (golden_apache.rs reads them from here).
save validate-schema-content "$(cat "$root/tests/golden/apache-4.4/validate-schema-content.request.json")"
save validate-allowlist "$(cat "$root/tests/golden/apache-4.4/validate-allowlist.request.json")"
