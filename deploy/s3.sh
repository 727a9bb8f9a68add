#!/usr/bin/env bash
# A private S3-compatible server for development and tests: moto's server (PyPI `moto[server]`),
# installed into a virtualenv under .local/s3/venv on first use.
#
#   deploy/s3.sh up      start (or reuse) it; the last line printed is S3_ENDPOINT=...
#   deploy/s3.sh down    stop it
#   deploy/s3.sh status  prints `running` or `stopped`
#   deploy/s3.sh reset   stop it and delete its folder (venv, log); moto keeps data in memory
#
# It listens on 127.0.0.1:${S3_PORT:-39900}, plain http, path-style requests. Any access key and
# secret are accepted (the tests use test/test), and buckets are created with an unsigned PUT
# (`curl -X PUT $S3_ENDPOINT/<bucket>`). Log and pid live in .local/s3 (git-ignored).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
port=${S3_PORT:-39900}
home=${S3_HOME_DIR:-$root/.local/s3}
venv=$home/venv
pidfile=$home/moto.pid
log=$home/moto.log
endpoint="http://127.0.0.1:$port"
# moto 5.x: the server entry point `moto_server -H host -p port`.
moto_req='moto[server]>=5,<6'

pid() { [ -f "$pidfile" ] && cat "$pidfile"; }
alive() { local p; p=$(pid) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
# Any HTTP answer counts (ListBuckets without credentials answers 200 on moto).
answers() { curl -s -o /dev/null -m 2 "$endpoint/"; }
running() { alive && answers; }

install_moto() {
  mkdir -p "$home"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    echo "s3.sh: python3 -m venv failed; installing Debian's python3-venv" >&2
    rm -rf "$venv"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq python3-venv >&2
    python3 -m venv "$venv"
  fi
  echo "s3.sh: installing $moto_req from PyPI into $venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check "$moto_req" >&2
}

up() {
  if running; then
    echo "s3.sh: reusing the running S3 server (moto) on port $port" >&2
  else
    [ -x "$venv/bin/moto_server" ] || install_moto
    if alive; then kill "$(pid)" 2>/dev/null || true; fi
    if answers; then
      echo "s3.sh: something else answers on port $port (set S3_PORT)" >&2
      exit 1
    fi
    mkdir -p "$home"
    # setsid: the server outlives the calling shell and its terminal; stdout/stderr to the log
    # so a caller reading our output (`$(deploy/s3.sh up)`) does not wait for it.
    setsid "$venv/bin/moto_server" -H 127.0.0.1 -p "$port" </dev/null >"$log" 2>&1 &
    echo $! >"$pidfile"
    for _ in $(seq 1 60); do
      answers && break
      alive || { tail -n 30 "$log" >&2; echo "s3.sh: moto exited" >&2; exit 1; }
      sleep 0.5
    done
    answers || { tail -n 30 "$log" >&2; echo "s3.sh: moto did not answer on port $port" >&2; exit 1; }
    echo "s3.sh: started moto $("$venv/bin/pip" show moto 2>/dev/null | awk '/^Version/{print $2}') on port $port" >&2
  fi
  echo "S3_ENDPOINT=$endpoint"
}

down() {
  if alive; then
    local p
    p=$(pid)
    kill "$p" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  echo "s3.sh: stopped" >&2
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) if running; then echo running; else echo stopped; fi ;;
  reset) down; rm -rf "$home" ;;
  *) echo "usage: deploy/s3.sh up|down|status|reset" >&2; exit 2 ;;
esac
