#!/usr/bin/env bash
# Local Apache Kafka (KRaft) for development and tests, without Docker.
#
#   deploy/kafka.sh up [--nodes N]    start (or reuse) a cluster of N combined broker+controller nodes
#   deploy/kafka.sh down [--nodes N]  stop it; no process is left behind
#   deploy/kafka.sh status [--nodes N]
#   deploy/kafka.sh reset [--nodes N] stop it and delete its data
#   deploy/kafka.sh kill-node I [--nodes N]   SIGKILL node I (broker-failure tests; `up` restarts it)
#   deploy/kafka.sh up|down|status|reset --secure   the secured cluster (TLS, SASL, mTLS; see below)
#   deploy/kafka.sh up|down|status|reset --tv1      a one-node cluster formatted with
#                                     transaction.version=1 (transactions v1, no KIP-890), data in
#                                     .local/kafka/cluster-tv1, ports from KAFKA_TV1_PORT_BASE (39592)
#   deploy/kafka.sh up|down|status|reset --acl      a one-node plaintext cluster with an ACL authorizer
#                                     (StandardAuthorizer; every plaintext client is User:ANONYMOUS,
#                                     a super user, so ACLs are stored and listed but bind nobody
#                                     who connects), data in .local/kafka/cluster-acl, ports from
#                                     KAFKA_ACL_PORT_BASE (39692)
#   deploy/kafka.sh tool CLASS [ARGS...]      run one of Kafka's own tools from the same jars, e.g.
#       deploy/kafka.sh tool org.apache.kafka.tools.ConsoleProducer --bootstrap-server 127.0.0.1:39092 \
#         --topic t --compression-codec zstd < lines.txt
#
# The broker jars come from Maven Central (deploy/kafka/pom.xml, `mvn dependency:copy-dependencies`)
# and are cached in .local/kafka/jars-<version>. Each cluster size has its own data, logs and
# ports, so the default single-node cluster and a three-node cluster (for broker-failure tests)
# can run side by side:
#
#   nodes=1: broker 127.0.0.1:39092, controller 39093
#   nodes=3: brokers 127.0.0.1:39192,39193,39194, controllers 39292,39293,39294
#
# `up` waits until every broker answers metadata requests and prints
# KAFKA_BOOTSTRAP_SERVERS=... as its last line. Override the ports with KAFKA_PORT_BASE (one
# node) and KAFKA3_PORT_BASE (three nodes), e.g. to run a second checkout's tests side by side.
#
# A secured single-node cluster (`up|down|status|reset --secure`, data in .local/kafka/cluster-secure,
# ports from KAFKA_SECURE_PORT_BASE, default 39492) has no listener a plaintext client can use:
#
#   127.0.0.1:39492  SASL_SSL: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER (unsecured tokens)
#   127.0.0.1:39493  SSL with client certificates required (mTLS); also the inter-broker listener
#   127.0.0.1:39494  the KRaft controller (SSL with client certificates; not for clients' data)
#
# `up --secure` generates its certificates with openssl (a CA, the broker's certificate for
# 127.0.0.1 and localhost, a client certificate as PEM and PKCS#12, a PKCS#12 truststore, and an
# unrelated CA nobody trusts), creates the SCRAM user when it formats the storage, writes the
# addresses, files and credentials to .local/kafka/cluster-secure/secure.env (also printed) and
# prints KAFKA_SECURE_ENV=<that file> as its last line. Java client configs for each way in are
# left next to it (client-*.properties, for Kafka's tools' --command-config).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
KAFKA_VERSION=${KAFKA_VERSION:-4.4.0}
home=${KAFKA_HOME_DIR:-$root/.local/kafka}
jars=$home/jars-$KAFKA_VERSION
heap=${KAFKA_HEAP:-512m}

cmd=${1:-}; shift || true
node_arg=""
if [ "$cmd" = kill-node ]; then node_arg=${1:?kill-node needs a node number}; shift; fi
tool_args=()
if [ "$cmd" = tool ]; then tool_args=("$@"); set --; fi
nodes=1
secure=0
tv1=0
acl=0
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=${2:?--nodes needs a number}; shift 2 ;;
    --nodes=*) nodes=${1#--nodes=}; shift ;;
    --secure) secure=1; shift ;;
    --tv1) tv1=1; shift ;;
    --acl) acl=1; shift ;;
    *) echo "kafka.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
case "$nodes" in ''|*[!0-9]*|0) echo "kafka.sh: --nodes must be a positive number" >&2; exit 2 ;; esac
if [ "$secure" = 1 ] && [ "$nodes" != 1 ]; then echo "kafka.sh: --secure runs one node" >&2; exit 2; fi
if [ "$tv1" = 1 ] && { [ "$nodes" != 1 ] || [ "$secure" = 1 ]; }; then echo "kafka.sh: --tv1 runs one plaintext node" >&2; exit 2; fi
if [ "$acl" = 1 ] && { [ "$nodes" != 1 ] || [ "$secure" = 1 ] || [ "$tv1" = 1 ]; }; then echo "kafka.sh: --acl runs one plaintext node" >&2; exit 2; fi

if [ "$secure" = 1 ]; then
  # broker_port is the SASL_SSL listener; the mTLS listener is the next port, the controller the one after.
  base=${KAFKA_SECURE_PORT_BASE:-39492}; ctl_base=$((base + 2)); cluster=$home/cluster-secure
elif [ "$tv1" = 1 ]; then base=${KAFKA_TV1_PORT_BASE:-39592}; ctl_base=$((base + 1)); cluster=$home/cluster-tv1
elif [ "$acl" = 1 ]; then base=${KAFKA_ACL_PORT_BASE:-39692}; ctl_base=$((base + 1)); cluster=$home/cluster-acl
elif [ "$nodes" = 1 ]; then base=${KAFKA_PORT_BASE:-39092}; ctl_base=$((base + 1)); cluster=$home/cluster-n1
else base=${KAFKA3_PORT_BASE:-39192}; ctl_base=$((base + 100)); cluster=$home/cluster-n$nodes; fi

broker_port() { echo $((base + $1 - 1)); }
controller_port() { echo $((ctl_base + $1 - 1)); }
probe_port() { if [ "$secure" = 1 ]; then ssl_port; else broker_port "$1"; fi; }
bootstrap() {
  local i out=""
  for i in $(seq 1 "$nodes"); do out="${out:+$out,}127.0.0.1:$(broker_port "$i")"; done
  echo "$out"
}
pid_of() { cat "$cluster/node-$1/pid" 2>/dev/null || true; }
alive() { local p; p=$(pid_of "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
# Command-line tools log to the cluster folder too (the broker config names kafka.logs.dir).
java_run() { java -Xmx256m -cp "$jars/*" -Dkafka.logs.dir="$cluster/tools-logs" -Dlog4j2.configurationFile="$cluster/log4j2.properties" "$@"; }
# shellcheck source=deploy/kafka/secure.sh
. "$root/deploy/kafka/secure.sh"

fetch_jars() {
  [ -f "$jars/.complete" ] && return 0
  command -v java >/dev/null || { echo "kafka.sh: java (17+) is required" >&2; exit 1; }
  command -v mvn >/dev/null || { echo "kafka.sh: mvn is required to fetch the Kafka jars" >&2; exit 1; }
  echo "kafka.sh: fetching Apache Kafka $KAFKA_VERSION jars from Maven Central into $jars" >&2
  rm -rf "$jars"; mkdir -p "$jars"
  mvn -q -B -f "$root/deploy/kafka/pom.xml" -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$jars" >&2
  touch "$jars/.complete"
}

write_configs() {
  local i voters="" rf=1 isr=1
  [ "$nodes" -ge 3 ] && { rf=3; isr=2; }
  [ "$nodes" = 2 ] && { rf=2; isr=1; }
  for i in $(seq 1 "$nodes"); do voters="${voters:+$voters,}$i@127.0.0.1:$(controller_port "$i")"; done
  mkdir -p "$cluster"
  cat > "$cluster/log4j2.properties" <<L4J
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = \${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
L4J
  if [ "$secure" = 1 ]; then write_secure_config; return; fi
  for i in $(seq 1 "$nodes"); do
    mkdir -p "$cluster/node-$i/logs"
    cat > "$cluster/node-$i/server.properties" <<PROPS
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$(broker_port "$i"),CONTROLLER://127.0.0.1:$(controller_port "$i")
advertised.listeners=PLAINTEXT://127.0.0.1:$(broker_port "$i")
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$cluster/node-$i/data
num.partitions=1
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$isr
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
log.retention.hours=24
log.segment.bytes=67108864
PROPS
    # The ACL cluster: Kafka's KRaft authorizer; the plaintext listeners' principal (the broker's,
    # the controller's and every client's) is a super user.
    if [ "$acl" = 1 ]; then
      printf '%s\n' 'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer' \
        'super.users=User:ANONYMOUS' >> "$cluster/node-$i/server.properties"
    fi
  done
}

# setsid: the broker must outlive this script and the shell that ran it. A JVM crash report
# goes to the node's folder.
start_node() {
  local i=$1
  setsid java -Xmx"$heap" -Xms"$heap" -XX:+UseG1GC -Djava.awt.headless=true \
    -XX:ErrorFile="$cluster/node-$i/hs_err_%p.log" \
    -Dkafka.logs.dir="$cluster/node-$i/logs" -Dlog4j2.configurationFile="$cluster/log4j2.properties" \
    -cp "$jars/*" kafka.Kafka "$cluster/node-$i/server.properties" \
    >>"$cluster/node-$i/stdout.log" 2>&1 < /dev/null &
  echo $! > "$cluster/node-$i/pid"
}

# A node that dies while the cluster starts is started again once (seen in CI: a node vanished
# mid-start with nothing in its logs, as after a SIGKILL); a second death fails with its logs.
wait_ready() {
  local i deadline=$((SECONDS + 120)) probe=() restarts
  # The secured cluster is probed through its mTLS listener.
  [ "$secure" = 1 ] && probe=(--command-config "$cluster/client-ssl.properties")
  for i in $(seq 1 "$nodes"); do
    restarts=0
    until java_run org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$(probe_port "$i")" \
          "${probe[@]}" --list >/dev/null 2>&1; do
      if ! alive "$i"; then
        echo "kafka.sh: node $i exited; last lines of its log:" >&2
        tail -n 30 "$cluster/node-$i/logs/server.log" "$cluster/node-$i/stdout.log" >&2 || true
        ls "$cluster/node-$i"/hs_err_*.log 2>/dev/null >&2 || true
        if [ "$restarts" -ge 1 ]; then exit 1; fi
        restarts=$((restarts + 1))
        echo "kafka.sh: starting node $i again" >&2
        start_node "$i"
        deadline=$((SECONDS + 120))
      fi
      [ $SECONDS -lt $deadline ] || { echo "kafka.sh: node $i did not answer within 120s" >&2; exit 1; }
      sleep 1
    done
  done
}

up() {
  local i running=0
  for i in $(seq 1 "$nodes"); do alive "$i" && running=$((running + 1)); done
  if [ "$running" = "$nodes" ]; then
    echo "kafka.sh: reusing the running $(describe) (Apache Kafka $KAFKA_VERSION)" >&2
    wait_ready
    print_addresses
    return
  fi
  fetch_jars
  [ "$secure" = 1 ] && make_certs
  write_configs
  local cid
  if [ -f "$cluster/cluster-id" ]; then cid=$(cat "$cluster/cluster-id")
  else cid=$(java_run kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1); echo "$cid" > "$cluster/cluster-id"; fi
  for i in $(seq 1 "$nodes"); do
    alive "$i" && continue
    if [ ! -f "$cluster/node-$i/data/meta.properties" ]; then
      local extra=()
      [ "$secure" = 1 ] && mapfile -t extra < <(scram_format_args)
      [ "$tv1" = 1 ] && extra+=(--feature transaction.version=1)
      java_run -Dkafka.logs.dir="$cluster/node-$i/logs" kafka.tools.StorageTool format \
        -t "$cid" -c "$cluster/node-$i/server.properties" "${extra[@]}" >/dev/null
    fi
    start_node "$i"
  done
  wait_ready
  local v
  v=$(grep -ho 'Kafka version: [^ ]*' "$cluster"/node-1/logs/server.log | tail -n 1 || true)
  echo "kafka.sh: started Apache Kafka ${v#Kafka version: } ($(describe), KRaft) under $cluster" >&2
  print_addresses
}

describe() { if [ "$secure" = 1 ]; then echo "secured cluster"; elif [ "$tv1" = 1 ]; then echo "1-node cluster with transaction.version=1"; elif [ "$acl" = 1 ]; then echo "1-node cluster with an ACL authorizer"; else echo "$nodes-node cluster"; fi; }

# The last line is what callers export.
print_addresses() {
  if [ "$secure" = 1 ]; then
    write_secure_env
    cat "$cluster/secure.env"
    echo "KAFKA_SECURE_ENV=$cluster/secure.env"
  else
    echo "KAFKA_BOOTSTRAP_SERVERS=$(bootstrap)"
  fi
}

down() {
  local i p
  for i in $(seq 1 "$nodes"); do
    p=$(pid_of "$i"); [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  for i in $(seq 1 "$nodes"); do
    p=$(pid_of "$i"); [ -z "$p" ] && continue
    for _ in $(seq 1 60); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$p" 2>/dev/null || true
    rm -f "$cluster/node-$i/pid"
  done
  echo "kafka.sh: $(describe) stopped" >&2
}

status() {
  local i
  for i in $(seq 1 "$nodes"); do
    if alive "$i"; then echo "node $i: running (pid $(pid_of "$i"), 127.0.0.1:$(broker_port "$i"))"
    else echo "node $i: stopped"; fi
  done
}

case "$cmd" in
  up) up ;;
  down) down ;;
  status) status ;;
  reset) down; rm -rf "$cluster" ;;
  kill-node)
    p=$(pid_of "$node_arg")
    [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true
    rm -f "$cluster/node-$node_arg/pid"
    echo "kafka.sh: killed node $node_arg of the $(describe)" >&2 ;;
  tool)
    [ ${#tool_args[@]} -gt 0 ] || { echo "usage: deploy/kafka.sh tool CLASS [ARGS...]" >&2; exit 2; }
    fetch_jars
    exec java -Xmx256m -cp "$jars/*" -Dlog4j2.level=warn "${tool_args[@]}" ;;
  *) echo "usage: deploy/kafka.sh up|down|status|reset|kill-node I [--nodes N | --secure | --tv1 | --acl] | tool CLASS [ARGS...]" >&2; exit 2 ;;
esac
