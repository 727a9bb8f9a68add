#!/usr/bin/env bash
# Records Java's AvroData (Apicurio's copy of Confluent's, tests/registry/pom.xml) on the cases of
# tests/registry/AvroGolden.java into tests/golden/registry/avro-data.jsonl, the file
# registry/tests/avro_golden.rs compares our Avro mapping with. Needs Java 17+ and Maven (the jars
# are fetched once into the git-ignored .local/registry-golden/lib); no Kafka, no registry:
#
#   tests/registry/capture-avro-golden.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$root/.local/registry-golden/lib
if [ ! -f "$lib/.complete" ]; then
  command -v mvn >/dev/null || { echo "capture-avro-golden.sh: mvn is required" >&2; exit 1; }
  rm -rf "$lib"; mkdir -p "$lib"
  mvn -q -B -f "$root/tests/registry/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$lib" >&2
  touch "$lib/.complete"
fi
out=$root/tests/golden/registry/avro-data.jsonl
mkdir -p "$(dirname "$out")"
java -cp "$lib/*" "$root/tests/registry/AvroGolden.java" > "$out.tmp"
mv "$out.tmp" "$out"
echo "captured $(wc -l < "$out") cases into $out" >&2
