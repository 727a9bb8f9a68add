#!/usr/bin/env bash
# Debezium 3.6.1's Postgres connector (io.debezium:debezium-connector-postgres:3.6.1.Final) on
# Apache Kafka Connect 4.3.2's standalone worker, against the project's PostgreSQL and Kafka: the
# reference the native connect_connectors::cdc::PostgresCdcSourceConnector is compared with
# (capture-golden.sh records tests/golden/cdc/debezium-3.6.1.jsonl with it; the CDC benchmark
# runs it). Connect 4.3.2, not 4.4: Debezium 3.6/3.7 call a class kafka-clients 4.4 removed.
#
#   tests/cdc/debezium.sh fetch                  fetch the jars (once) into .local/debezium/lib
#   tests/cdc/debezium.sh start <connector.properties>...
#                                                start the standalone worker with these connectors,
#                                                wait for its REST API
#   tests/cdc/debezium.sh stop                   stop it
#   tests/cdc/debezium.sh pid                    the JVM's pid (empty when stopped)
#   tests/cdc/debezium.sh dump <topic>           the topic's records, one JSON object a line:
#                                                {"key": <key as a JSON string|null>, "value": <value JSON|null>}
#
# - Jars: tests/cdc/pom.xml, `mvn dependency:copy-dependencies`, into the git-ignored
#   .local/debezium/lib (Java 17+ and Maven needed).
# - Worker: ConnectStandalone against $KAFKA_BOOTSTRAP_SERVERS (default 127.0.0.1:39092),
#   JsonConverter with schemas.enable=true for keys and values (schemas are compared too),
#   offsets in $DEBEZIUM_RUN/connect.offsets, REST on 127.0.0.1:$DEBEZIUM_PORT (default 38093),
#   logs in $DEBEZIUM_RUN (default .local/debezium/run; emptied by `start`).
#   DEBEZIUM_HEAP_OPTS (default -Xmx1g) and DEBEZIUM_JVM_OPTS go on the java command line.
# - Connector files: Debezium's keys; database.* from $DATABASE_URL
#   (default postgres://postgres@127.0.0.1:55432/postgres) via `tests/cdc/debezium.sh db-props`.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/cdc
home=${DEBEZIUM_HOME:-$root/.local/debezium}
lib=$home/lib
run=${DEBEZIUM_RUN:-$home/run}
port=${DEBEZIUM_PORT:-38093}
bootstrap=${KAFKA_BOOTSTRAP_SERVERS:-127.0.0.1:39092}

fetch() {
  [ -f "$lib/.complete" ] && return 0
  command -v mvn >/dev/null || { echo "debezium.sh: mvn is required" >&2; exit 1; }
  echo "debezium.sh: fetching Debezium 3.6.1 and Apache Kafka Connect 4.3.2 jars into $lib" >&2
  rm -rf "$lib"; mkdir -p "$lib"
  mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$lib" >&2
  touch "$lib/.complete"
}

# database.hostname/port/user/password/dbname of $DATABASE_URL, as connector properties.
db_props() {
  local url=${DATABASE_URL:-postgres://postgres@127.0.0.1:55432/postgres}
  python3 - "$url" <<'PY'
import sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
print(f"database.hostname={u.hostname}")
print(f"database.port={u.port or 5432}")
print(f"database.user={urllib.parse.unquote(u.username or 'postgres')}")
print(f"database.password={urllib.parse.unquote(u.password or '')}")
print(f"database.dbname={u.path.lstrip('/') or 'postgres'}")
PY
}

pid() { cat "$run/pid" 2>/dev/null || true; }
alive() { local p; p=$(pid); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

start() {
  if alive; then echo "debezium.sh: already running (pid $(pid))" >&2; return 1; fi
  command -v java >/dev/null || { echo "debezium.sh: java (17+) is required" >&2; exit 1; }
  fetch
  rm -rf "$run"; mkdir -p "$run"
  cat > "$run/worker.properties" <<EOF2
bootstrap.servers=$bootstrap
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=true
value.converter.schemas.enable=true
offset.storage.file.filename=$run/connect.offsets
offset.flush.interval.ms=1000
listeners=http://127.0.0.1:$port
rest.advertised.host.name=127.0.0.1
rest.advertised.port=$port
EOF2
  cat > "$run/log4j2.properties" <<EOF2
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $run/connect.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = org.apache.kafka.clients
logger.kafka.level = WARN
EOF2
  # shellcheck disable=SC2086 # the options are word lists
  nohup java ${DEBEZIUM_HEAP_OPTS:--Xmx1g} ${DEBEZIUM_JVM_OPTS:-} -cp "$lib/*" \
    -Dlog4j2.configurationFile="$run/log4j2.properties" \
    org.apache.kafka.connect.cli.ConnectStandalone "$run/worker.properties" "$@" \
    > "$run/stdout.log" 2>&1 &
  echo $! > "$run/pid"
  local i
  for i in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$port/connectors" >/dev/null 2>&1; then
      echo "DEBEZIUM_URL=http://127.0.0.1:$port"
      return 0
    fi
    alive || { echo "debezium.sh: worker exited; see $run/connect.log" >&2; tail -20 "$run/stdout.log" >&2; exit 1; }
    sleep 1
  done
  echo "debezium.sh: REST did not answer within 120 s; see $run/connect.log" >&2
  stop; exit 1
}

stop() {
  local p; p=$(pid)
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
    kill "$p"
    local i
    for i in $(seq 1 30); do kill -0 "$p" 2>/dev/null || break; sleep 1; done
    kill -0 "$p" 2>/dev/null && kill -9 "$p"
  fi
  rm -f "$run/pid"
}

case "${1:-}" in
  fetch) fetch ;;
  start) shift; start "$@" ;;
  stop) stop ;;
  pid) pid ;;
  db-props) db_props ;;
  dump) fetch; java -cp "$lib/*" "$root/tests/apache/DumpTopic.java" "$bootstrap" "$2" ;;
  *) echo "usage: $0 fetch|start <connector.properties>...|stop|pid|db-props|dump <topic>" >&2; exit 2 ;;
esac
