#!/usr/bin/env bash
# The Java plugins the project writes for its tests (tests/tests/java_plugins/), compiled
# against the plugin host's Kafka jars (deploy/plugin-host.sh build first) into a plugin.path
# directory: .local/test-plugins/<plugin>/<plugin>.jar. Prints that plugin.path.
#
#   tests/java-plugins/build.sh        (javac; skipped when the sources did not change)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/java-plugins
out=${CONNECT_TEST_PLUGINS:-$root/.local/test-plugins}
host=$("$root/deploy/plugin-host.sh" build)

for plugin in recording-sink counting-source record-plugins; do
  src=$here/$plugin
  stamp=$( (cd "$src" && find . -type f | sort | xargs sha256sum) | sha256sum | cut -d' ' -f1)
  dir=$out/$plugin
  if [ -f "$dir/$plugin.jar" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then continue; fi
  rm -rf "$dir"; mkdir -p "$dir"
  classes=$(mktemp -d)
  javac --release 17 -nowarn -d "$classes" -cp "$host/lib/*" $(find "$src/src" -name '*.java') >&2
  cp -r "$src/META-INF" "$classes/"
  (cd "$classes" && jar --create --file "$dir/$plugin.jar" .)
  rm -rf "$classes"
  echo "$stamp" > "$dir/.stamp"
done
echo "$out"
