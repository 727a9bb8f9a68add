#!/usr/bin/env bash
# Regenerates expected.json from cases.json with Apache Kafka Connect's own transforms
# (org.apache.kafka:connect-transforms from Maven Central; needs Java 17+ and Maven).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/generator"
mvn -q -B compile exec:java -Dexec.args="$here/cases.json $here/expected.json"
echo "wrote $here/expected.json"
