#!/usr/bin/env bash
# A private schema registry for development and tests: Apicurio Registry 3.x, which serves the
# Confluent Schema Registry REST API under /apis/ccompat/v7 (subjects, versions, ids, config,
# compatibility; AVRO, JSON and PROTOBUF schemas). Its distribution comes from Maven Central
# (deploy/registry/pom.xml, ~150 MB, unpacked into .local/registry on first use) and runs on
# Java 21+ (a JDK under /usr/lib/jvm is picked if `java` is older).
#
#   deploy/registry.sh up      start (or reuse) it; the last line printed is SCHEMA_REGISTRY_URL=...
#   deploy/registry.sh down    stop it
#   deploy/registry.sh status  prints `running` or `stopped`
#   deploy/registry.sh reset   stop it and delete its folder (the unpacked registry, log); data is in memory
#
# It listens on 127.0.0.1:${REGISTRY_PORT:-38081}, plain http, no authentication, storage in an
# in-memory H2 database (gone when it stops). Its management interface (/health, /metrics) is on
# a random loopback port, named in the log. Unlike Apicurio's defaults and like Confluent's,
# the default compatibility is BACKWARD and subjects can be deleted (soft and ?permanent=true).
# Log and pid live in .local/registry (git-ignored).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
port=${REGISTRY_PORT:-38081}
home=${REGISTRY_HOME_DIR:-$root/.local/registry}
pom=$root/deploy/registry/pom.xml
version=${APICURIO_VERSION:-$(sed -n 's:.*<apicurio.version>\(.*\)</apicurio.version>.*:\1:p' "$pom")}
dist=$home/apicurio-registry-$version
pidfile=$home/registry.pid
log=$home/registry.log
base="http://127.0.0.1:$port"
url="$base/apis/ccompat/v7"

pid() { [ -f "$pidfile" ] && cat "$pidfile"; }
alive() { local p; p=$(pid) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
# Something listens on the port: any answer, or a connection that does not answer in time.
# curl's exit code 7 is "connection refused".
taken() { local rc=0; curl -s -o /dev/null -m 2 "$base/" || rc=$?; [ "$rc" != 7 ]; }
answers() { curl -sf -o /dev/null -m 2 "$url/subjects"; }
running() { alive && answers; }

# A `java` of version 21 or newer: REGISTRY_JAVA_HOME, JAVA_HOME, `java` on PATH, else the
# newest JDK under /usr/lib/jvm.
java_major() { "$1" -version 2>&1 | sed -n '1s/^[^"]*"\([0-9]*\).*/\1/p'; }
find_java() {
  local j v best="" best_v=0
  for j in ${REGISTRY_JAVA_HOME:+"$REGISTRY_JAVA_HOME/bin/java"} ${JAVA_HOME:+"$JAVA_HOME/bin/java"} \
           "$(command -v java || true)"; do
    if [ -z "$j" ] || [ ! -x "$j" ]; then continue; fi
    v=$(java_major "$j")
    [ "${v:-0}" -ge 21 ] && { echo "$j"; return 0; }
  done
  for j in /usr/lib/jvm/*/bin/java; do
    [ -x "$j" ] || continue
    v=$(java_major "$j")
    if [ "${v:-0}" -ge 21 ] && [ "$v" -gt "$best_v" ]; then best=$j; best_v=$v; fi
  done
  [ -n "$best" ] && { echo "$best"; return 0; }
  return 1
}

fetch_registry() {
  [ -f "$dist/.complete" ] && return 0
  command -v mvn >/dev/null || { echo "registry.sh: mvn is required to fetch Apicurio Registry" >&2; exit 1; }
  echo "registry.sh: fetching Apicurio Registry $version from Maven Central into $dist" >&2
  rm -rf "$dist" "$home/build"
  mkdir -p "$home"
  mvn -q -B -f "$pom" -Dapicurio.version="$version" \
    -Dregistry.build.dir="$home/build" -Dregistry.dist.dir="$dist" package >"$home/mvn.log" 2>&1 \
    || { cat "$home/mvn.log" >&2; echo "registry.sh: mvn failed (log: $home/mvn.log)" >&2; exit 1; }
  [ -f "$dist/quarkus-run.jar" ] || { echo "registry.sh: no quarkus-run.jar in $dist" >&2; exit 1; }
  rm -rf "$home/build"
  touch "$dist/.complete"
}

up() {
  if running; then
    echo "registry.sh: reusing the running Apicurio Registry on port $port" >&2
  else
    local java
    java=$(find_java) || {
      echo "registry.sh: Apicurio Registry $version needs Java 21 or newer; none found (REGISTRY_JAVA_HOME," \
        "JAVA_HOME, java on PATH, /usr/lib/jvm/*): install a JDK 21+ or set REGISTRY_JAVA_HOME" >&2
      exit 1
    }
    fetch_registry
    if alive; then kill "$(pid)" 2>/dev/null || true; sleep 1; fi
    if taken; then
      echo "registry.sh: something else answers on port $port (set REGISTRY_PORT)" >&2
      exit 1
    fi
    mkdir -p "$home"
    # Started in its own folder: Quarkus also reads config/application.properties and .env from
    # the working directory. setsid: it outlives the calling shell and its terminal;
    # stdout/stderr to the log so a caller reading our output (`$(deploy/registry.sh up)`) does
    # not wait for it. C1 only, serial GC and a small pool: a test service that starts fast.
    (cd "$home" && exec setsid "$java" -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
      -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" \
      -Dquarkus.management.host=127.0.0.1 -Dquarkus.management.port=0 \
      -Dapicurio.storage.kind=sql -Dapicurio.storage.sql.kind=h2 \
      -Dapicurio.authn.enabled=false \
      -Dapicurio.rules.global.compatibility=BACKWARD \
      -Dapicurio.rest.deletion.artifact.enabled=true \
      -Dapicurio.rest.deletion.artifact-version.enabled=true \
      -Dapicurio.rest.deletion.group.enabled=true \
      -Dapicurio.datasource.jdbc.initial-size=2 -Dapicurio.datasource.jdbc.min-size=2 \
      -Dapicurio.datasource.jdbc.max-size=20 \
      -Dapicurio.storage.snapshot.location="$home" -Dapicurio.import.work-dir="$home" \
      '-Dquarkus.log.console.format=%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p [%c{3.}] (%t) %s%e%n' \
      -jar "$dist/quarkus-run.jar" </dev/null >"$log" 2>&1) &
    echo $! >"$pidfile"
    for _ in $(seq 1 240); do
      answers && break
      alive || { tail -n 30 "$log" >&2; echo "registry.sh: Apicurio Registry exited" >&2; exit 1; }
      sleep 0.5
    done
    answers || { tail -n 30 "$log" >&2; echo "registry.sh: Apicurio Registry did not answer on port $port" >&2; exit 1; }
    echo "registry.sh: started Apicurio Registry $version ($("$java" -version 2>&1 | head -n 1)) on port $port" >&2
  fi
  echo "SCHEMA_REGISTRY_URL=$url"
}

down() {
  if alive; then
    local p
    p=$(pid)
    kill "$p" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$p" 2>/dev/null; then kill -9 "$p" 2>/dev/null || true; fi
  fi
  rm -f "$pidfile"
  echo "registry.sh: stopped" >&2
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) if running; then echo running; else echo stopped; fi ;;
  reset) down; rm -rf "$home" ;;
  *) echo "usage: deploy/registry.sh up|down|status|reset" >&2; exit 2 ;;
esac
