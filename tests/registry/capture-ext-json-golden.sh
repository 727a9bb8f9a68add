#!/usr/bin/env bash
# Records Apicurio's ExtJsonConverter (tests/registry/ext-json-golden) on the Connect values of
# tests/golden/registry/avro-data.jsonl into tests/golden/registry/ext-json.jsonl, the file
# registry/tests/ext_json_golden.rs compares ours with. Needs Java 17+, Maven (the jars are
# fetched once into the git-ignored .local/ext-json-golden/lib) and a running registry
# (deploy/registry.sh up; SCHEMA_REGISTRY_URL or REGISTRY_PORT say where):
#
#   tests/registry/capture-ext-json-golden.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$root/.local/ext-json-golden/lib
if [ ! -f "$lib/.complete" ]; then
  command -v mvn >/dev/null || { echo "capture-ext-json-golden.sh: mvn is required" >&2; exit 1; }
  rm -rf "$lib"; mkdir -p "$lib"
  mvn -q -B -f "$root/tests/registry/ext-json-golden/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$lib" >&2
  touch "$lib/.complete"
fi
url=${SCHEMA_REGISTRY_URL:-http://127.0.0.1:${REGISTRY_PORT:-38081}/apis/ccompat/v7}
base=${url%/apis/*}
out=$root/tests/golden/registry/ext-json.jsonl
java -cp "$lib/*" "$root/tests/registry/ext-json-golden/ExtJsonGolden.java" \
  "$root/tests/golden/registry/avro-data.jsonl" "$base" "ext-json-golden-$(date +%s)" > "$out.tmp"
mv "$out.tmp" "$out"
echo "captured $(wc -l < "$out") cases into $out" >&2
