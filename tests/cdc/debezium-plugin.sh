#!/usr/bin/env bash
# Lays out Debezium 3.6.1's Postgres connector as a user unpacks it into a plugin.path
# directory: .local/plugins/debezium-connector-postgres/*.jar (the connector and its own
# dependencies from Maven Central, without the Kafka, SLF4J and log4j jars a Connect worker
# provides). Prints the plugin.path to use (.local/plugins).
#
#   tests/cdc/debezium-plugin.sh        (Maven; fetched once, cached under .local/)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
plugins=${CONNECT_TEST_PLUGIN_PATH:-$root/.local/plugins}
dir=$plugins/debezium-connector-postgres

if [ ! -f "$dir/.complete" ]; then
  command -v mvn >/dev/null || { echo "debezium-plugin.sh: mvn is required" >&2; exit 1; }
  echo "debezium-plugin.sh: fetching Debezium 3.6.1's Postgres connector into $dir" >&2
  rm -rf "$dir"; mkdir -p "$dir"
  # Offline first (a warm ~/.m2 needs no network), else from Maven Central.
  args=(-q -B -f "$root/tests/cdc/plugin-pom.xml" dependency:copy-dependencies
    -DincludeScope=runtime -DexcludeGroupIds=org.apache.kafka,org.slf4j,org.apache.logging.log4j
    -DoutputDirectory="$dir")
  mvn -o "${args[@]}" >/dev/null 2>&1 || mvn "${args[@]}" >&2
  touch "$dir/.complete"
fi
echo "$plugins"
