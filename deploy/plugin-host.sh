#!/usr/bin/env bash
# The Java plugin host (java/plugin-host): the JVM the worker starts when `plugin.path` is set.
#
#   deploy/plugin-host.sh build     fetch its jars (Maven Central, once) and compile it into
#                                   .local/plugin-host/ (skipped when the sources did not change)
#   deploy/plugin-host.sh path      print the host's directory (what the worker's
#                                   CONNECT_PLUGIN_HOST_DIR names)
#
# Layout of .local/plugin-host/: lib/*.jar (connect-api, connect-json, connect-transforms and
# kafka-clients 4.3.2, SLF4J + log4j2: the classes every plugin shares) and plugin-host.jar.
# Needs Java 17+ (javac) and Maven.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/java/plugin-host
out=${CONNECT_PLUGIN_HOST_DIR:-$root/.local/plugin-host}

stamp() {
  (cd "$src" && find pom.xml src -type f | sort | xargs sha256sum) | sha256sum | cut -d' ' -f1
}

build() {
  local want; want=$(stamp)
  if [ -f "$out/plugin-host.jar" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  command -v javac >/dev/null || { echo "plugin-host.sh: javac (Java 17+) is required" >&2; exit 1; }
  command -v mvn >/dev/null || { echo "plugin-host.sh: mvn is required" >&2; exit 1; }
  mkdir -p "$out"
  if [ ! -f "$out/lib/.complete" ] || [ "$(cat "$out/lib/.pom" 2>/dev/null)" != "$(sha256sum < "$src/pom.xml")" ]; then
    echo "plugin-host.sh: fetching the host's jars into $out/lib" >&2
    rm -rf "$out/lib"; mkdir -p "$out/lib"
    # Offline first (a warm ~/.m2 needs no network), else from Maven Central.
    local args=(-q -B -f "$src/pom.xml" dependency:copy-dependencies -DincludeScope=runtime
      -DoutputDirectory="$out/lib")
    mvn -o "${args[@]}" >/dev/null 2>&1 || mvn "${args[@]}" >&2
    sha256sum < "$src/pom.xml" > "$out/lib/.pom"
    touch "$out/lib/.complete"
  fi
  local classes=$out/classes
  rm -rf "$classes"; mkdir -p "$classes"
  javac --release 17 -nowarn -d "$classes" -cp "$out/lib/*" \
    $(find "$src/src/main/java" -name '*.java') >&2
  cp -r "$src/src/main/resources/." "$classes/"
  (cd "$classes" && jar --create --file "$out/plugin-host.jar.tmp" .)
  mv "$out/plugin-host.jar.tmp" "$out/plugin-host.jar"
  echo "$want" > "$out/.stamp"
  echo "plugin-host.sh: built $out/plugin-host.jar" >&2
}

case "${1:-}" in
  build) build; echo "$out" ;;
  path) echo "$out" ;;
  *) echo "usage: $0 build|path" >&2; exit 2 ;;
esac
