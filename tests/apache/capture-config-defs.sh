#!/usr/bin/env bash
# Records Apache Kafka Connect 4.4's configuration definitions (worker, connector configs,
# built-in converters, the Allowlist override policy) into
# tests/golden/apache-4.4/config-defs.json, which worker/src/config/apache_config_defs_tests.rs compares
# with the keys this worker knows. Needs Java 17+ and Maven (the jars are fetched once into
# .local/apache-connect/lib, as tests/apache/apache-connect.sh does); no Kafka:
#
#   tests/apache/capture-config-defs.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$root/.local/apache-connect/lib
if [ ! -f "$lib/.complete" ]; then
  command -v mvn >/dev/null || { echo "capture-config-defs.sh: mvn is required" >&2; exit 1; }
  rm -rf "$lib"; mkdir -p "$lib"
  mvn -q -B -f "$root/tests/apache/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$lib" >&2
  touch "$lib/.complete"
fi
out=$root/tests/golden/apache-4.4/config-defs.json
java -cp "$lib/*" "$root/tests/apache/DumpConfigDefs.java" > "$out.tmp"
mv "$out.tmp" "$out"
echo "captured $out" >&2
