#!/usr/bin/env bash
# Apache Kafka Connect 4.4 (the reference implementation) as a single distributed (or
# standalone, below) worker: to
# compare its REST answers with ours (tests/golden/apache-4.4/ holds what capture-golden.sh
# recorded with it), for the side-by-side benchmark, and for tests/tests/migration.rs, which
# moves a cluster from it to our worker and back (so CI runs it: Java 17+ and Maven needed).
#
#   tests/apache/apache-connect.sh start   fetch jars (once), build plugins, start, wait for REST
#   tests/apache/apache-connect.sh stop    stop the worker started by `start`
#   tests/apache/apache-connect.sh status
#
# - Jars: connect-runtime, connect-json, connect-transforms, kafka-clients 4.4.0 from Maven
#   Central (tests/apache/pom.xml, `mvn dependency:copy-dependencies`), cached in the git-ignored
#   .local/apache-connect/lib.
# - Plugins: Maven Central serves neither connect-file nor connect-test-plugins, and this
#   repository carries none of Apache's code. Point APACHE_CONNECT_PLUGINS at a classpath
#   (jars or class folders, `:`-separated) holding Apache Kafka 4.4's
#   org.apache.kafka.connect.tools.VerifiableSource{Connector,Task} and
#   org.apache.kafka.connect.file.FileStream{Source,Sink}{Connector,Task}, e.g. the
#   connect-file and connect-test-plugins jars of your own Apache Kafka 4.4.0 build.
#   With APACHE_CONNECT_BENCH_PLUGIN=1 the project's own source connectors (tests/apache/bench/src,
#   written for this project: connectrs.bench.BenchSourceConnector, and
#   connectrs.bench.VerifiableSourceConnector, the stand-in for Apache's verifiable source that
#   the alias "VerifiableSource" resolves to) are compiled with javac against the jars into
#   .local/apache-connect/bench-classes and put on the classpath too; APACHE_CONNECT_PLUGINS is
#   then optional.
#   With APACHE_CONNECT_APICURIO_CONVERTER=1, Apicurio Registry's Kafka Connect converters
#   (io.apicurio.registry.utils.converter.AvroConverter, 2.6.13.Final: Maven Central has no 3.x
#   jar) and their runtime dependencies are fetched once (tests/apache/apicurio/pom.xml) into
#   .local/apache-connect/plugins/apicurio-converter, and the worker gets
#   plugin.path=.local/apache-connect/plugins: an isolated plugin, as users install it
#   (tests/src/bin/avro_bench.rs).
# - Worker: ConnectDistributed against $KAFKA_BOOTSTRAP_SERVERS (default 127.0.0.1:39092, the
#   shared local cluster of deploy/kafka.sh) with a random group id and random internal topics,
#   REST on 127.0.0.1:$APACHE_CONNECT_PORT (default 38083), the generated worker.properties and
#   the logs in the run directory, the JVM's pid in its file `pid`. The run directory is
#   $APACHE_CONNECT_RUN (default .local/apache-connect/run; emptied by `start`): a test that runs
#   its own worker beside others gives it its own directory and port (`stop` and `status` take the
#   same variables).
#   APACHE_CONNECT_WORKER_PROPS: extra worker properties, one `key=value` a line, appended to
#   the generated worker.properties (a key given again overrides the default), e.g.
#   $'exactly.once.source.support=enabled\nkey.converter.schemas.enable=false'; a group.id or
#   internal topic given there makes `start` join that cluster (tests/tests/migration.rs).
#   APACHE_CONNECT_HEAP_OPTS (default -Xmx512m) and APACHE_CONNECT_JVM_OPTS (default none) go on
#   the java command line; Apache's bin/connect-distributed.sh would use -Xms256M -Xmx2G, and its
#   kafka-run-class.sh -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 ... (side_by_side passes
#   those).
#
# - Standalone: with APACHE_CONNECT_MODE=standalone, `start` runs Apache's standalone worker
#   (org.apache.kafka.connect.cli.ConnectStandalone, same jars) instead: no group or internal
#   topics, source offsets in $APACHE_CONNECT_OFFSETS_FILE (default $run/connect.offsets; give
#   a path outside the run directory to keep it across starts), the connector files of
#   APACHE_CONNECT_CONNECTORS (space-separated paths) on its command line
#   (tests/tests/standalone.rs).
#
# `start` prints APACHE_CONNECT_URL=... and APACHE_CONNECT_STATUS_TOPIC=... as its last lines
# (the status topic the worker uses, APACHE_CONNECT_WORKER_PROPS' if it names one).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/apache
home=${APACHE_CONNECT_HOME:-$root/.local/apache-connect}
lib=$home/lib
classes=
run=${APACHE_CONNECT_RUN:-$home/run}
port=${APACHE_CONNECT_PORT:-38083}
bootstrap=${KAFKA_BOOTSTRAP_SERVERS:-127.0.0.1:39092}

fetch_jars() {
  [ -f "$lib/.complete" ] && return 0
  command -v mvn >/dev/null || { echo "apache-connect.sh: mvn is required" >&2; exit 1; }
  echo "apache-connect.sh: fetching Apache Kafka Connect jars into $lib" >&2
  rm -rf "$lib"; mkdir -p "$lib"
  mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$lib" >&2
  touch "$lib/.complete"
}

plugins_classpath() {
  if [ -z "${APACHE_CONNECT_PLUGINS:-}" ]; then
    echo "apache-connect.sh: set APACHE_CONNECT_PLUGINS to a classpath with Apache Kafka 4.4's" \
      "connect-file and connect-test-plugins classes (not on Maven Central; see this script's header)" >&2
    exit 1
  fi
  classes=$APACHE_CONNECT_PLUGINS
}

# The project's benchmark connector, compiled once (again when a source is newer).
bench_plugin() {
  local src=$here/bench/src out=$home/bench-classes
  if [ ! -f "$out/.complete" ] || [ -n "$(find "$src" -newer "$out/.complete" -type f | head -1)" ]; then
    command -v javac >/dev/null || { echo "apache-connect.sh: javac (17+) is required" >&2; exit 1; }
    echo "apache-connect.sh: compiling the benchmark connector into $out" >&2
    rm -rf "$out"; mkdir -p "$out"
    # shellcheck disable=SC2046 # file names without spaces
    javac -nowarn -d "$out" -cp "$lib/*" $(find "$src" -name '*.java') >&2
    cp -r "$src/META-INF" "$out/"
    touch "$out/.complete"
  fi
  classes=$out${classes:+:$classes}
}

# Apicurio's converter as a plugin directory under $home/plugins, fetched once.
apicurio_plugin() {
  local out=$home/plugins/apicurio-converter
  [ -f "$out/.complete" ] && return 0
  command -v mvn >/dev/null || { echo "apache-connect.sh: mvn is required" >&2; exit 1; }
  echo "apache-connect.sh: fetching Apicurio's converter into $out" >&2
  rm -rf "$out"; mkdir -p "$out"
  mvn -q -B -f "$here/apicurio/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$out" >&2
  touch "$out/.complete"
}

pid() { cat "$run/pid" 2>/dev/null || true; }
alive() { local p; p=$(pid); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

start() {
  if alive; then echo "apache-connect.sh: already running (pid $(pid))" >&2; tail -2 "$run/env"; return 0; fi
  command -v java >/dev/null || { echo "apache-connect.sh: java (17+) is required" >&2; exit 1; }
  fetch_jars
  if [ "${APACHE_CONNECT_BENCH_PLUGIN:-0}" = 1 ]; then
    classes=${APACHE_CONNECT_PLUGINS:-}
    bench_plugin
  else
    plugins_classpath
  fi
  rm -rf "$run"; mkdir -p "$run"
  local id; id=$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
  local main=org.apache.kafka.connect.cli.ConnectDistributed connectors=
  if [ "${APACHE_CONNECT_MODE:-distributed}" = standalone ]; then
    main=org.apache.kafka.connect.cli.ConnectStandalone
    connectors=${APACHE_CONNECT_CONNECTORS:-}
    cat > "$run/worker.properties" <<EOF
bootstrap.servers=$bootstrap
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.storage.file.filename=${APACHE_CONNECT_OFFSETS_FILE:-$run/connect.offsets}
offset.flush.interval.ms=1000
listeners=http://127.0.0.1:$port
rest.advertised.host.name=127.0.0.1
rest.advertised.port=$port
EOF
  else
    cat > "$run/worker.properties" <<EOF
bootstrap.servers=$bootstrap
group.id=apache-golden-$id
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.storage.topic=apache-golden-$id-offsets
offset.storage.replication.factor=1
offset.storage.partitions=1
config.storage.topic=apache-golden-$id-configs
config.storage.replication.factor=1
status.storage.topic=apache-golden-$id-status
status.storage.replication.factor=1
status.storage.partitions=1
offset.flush.interval.ms=1000
listeners=http://127.0.0.1:$port
rest.advertised.host.name=127.0.0.1
rest.advertised.port=$port
scheduled.rebalance.max.delay.ms=0
EOF
  fi
  if [ "${APACHE_CONNECT_APICURIO_CONVERTER:-0}" = 1 ]; then
    apicurio_plugin
    echo "plugin.path=$home/plugins" >> "$run/worker.properties"
  fi
  if [ -n "${APACHE_CONNECT_WORKER_PROPS:-}" ]; then
    printf '%s\n' "$APACHE_CONNECT_WORKER_PROPS" >> "$run/worker.properties"
  fi
  cat > "$run/log4j2.properties" <<EOF
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
EOF
  # The plugin classes go first: classpath plugins are discovered by scanning it.
  # shellcheck disable=SC2086 # the options are word lists
  nohup java ${APACHE_CONNECT_HEAP_OPTS:--Xmx512m} ${APACHE_CONNECT_JVM_OPTS:-} -cp "$classes:$lib/*" \
    -Dlog4j2.configurationFile="$run/log4j2.properties" \
    "$main" "$run/worker.properties" $connectors \
    > "$run/stdout.log" 2>&1 &
  echo $! > "$run/pid"
  local i
  for i in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$port/connectors" >/dev/null 2>&1; then
      local status_topic
      status_topic=$(sed -n 's/^status\.storage\.topic=//p' "$run/worker.properties" | tail -1)
      { echo "APACHE_CONNECT_URL=http://127.0.0.1:$port"
        echo "APACHE_CONNECT_STATUS_TOPIC=$status_topic"; } > "$run/env"
      cat "$run/env"
      return 0
    fi
    alive || { echo "apache-connect.sh: worker exited; see $run/connect.log" >&2; tail -20 "$run/stdout.log" >&2; exit 1; }
    sleep 1
  done
  echo "apache-connect.sh: REST did not answer within 120 s; see $run/connect.log" >&2
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
  start) start ;;
  stop) stop ;;
  status) if alive; then echo "running (pid $(pid))"; cat "$run/env" 2>/dev/null; else echo "stopped"; fi ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
