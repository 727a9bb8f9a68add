#!/usr/bin/env bash
# The README's run command: a local Apache Kafka and one connect-worker on http://127.0.0.1:8083.
#
#   deploy/quickstart.sh         start (Kafka, then a release build of the worker)
#   deploy/quickstart.sh down    stop the worker and Kafka
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
home=$root/.local/worker
props=${WORKER_PROPERTIES:-$root/deploy/connect-distributed.properties}
pidfile=$home/pid

worker_alive() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

if [ "${1:-}" = down ]; then
  if worker_alive; then
    kill "$(cat "$pidfile")"
    for _ in $(seq 1 40); do worker_alive || break; sleep 0.25; done
    worker_alive && kill -9 "$(cat "$pidfile")"
  fi
  rm -f "$pidfile"
  deploy/kafka.sh down
  exit 0
fi

kafka_out=$(deploy/kafka.sh up)
echo "${kafka_out##*$'\n'}"

deploy/build-deps.sh
echo "quickstart: building connect-worker (release; the first build takes a few minutes)" >&2
cargo build --release -p connect-worker
mkdir -p "$home" "$root/.local/files"   # the FileStream connectors' directory (file.connector.allowed.dirs)
if worker_alive; then
  echo "quickstart: stopping the worker started earlier (pid $(cat "$pidfile"))" >&2
  kill "$(cat "$pidfile")"; sleep 1
fi
setsid target/release/connect-worker "$props" >"$home/worker.log" 2>&1 </dev/null &
echo $! >"$pidfile"

for _ in $(seq 1 60); do
  if body=$(curl -fsS http://127.0.0.1:8083/ 2>/dev/null); then
    cat <<MSG
quickstart: connect-worker is running (pid $(cat "$pidfile"), log $home/worker.log)
GET http://127.0.0.1:8083/ -> $body

Try next:
  curl -s http://127.0.0.1:8083/ | python3 -m json.tool
  curl -s http://127.0.0.1:8083/connectors
  curl -s http://127.0.0.1:8083/connector-plugins
  curl -s -X PUT -H 'Content-Type: application/json' http://127.0.0.1:8083/connectors/lines/config \\
    -d '{"connector.class":"FileStreamSource","file":".local/files/in.txt","topic":"lines"}'
Worker config: $props
Stop everything: deploy/quickstart.sh down
MSG
    exit 0
  fi
  worker_alive || { echo "quickstart: the worker exited; its log:" >&2; tail -n 40 "$home/worker.log" >&2; exit 1; }
  sleep 0.5
done
echo "quickstart: the worker did not answer on http://127.0.0.1:8083/ within 30s; log: $home/worker.log" >&2
exit 1
