#!/usr/bin/env bash
# A private PostgreSQL for development and tests (Debian's packages; installed if missing).
#
#   deploy/postgres.sh up      start (or reuse) it; prints PG_CA=<CA file>, then DATABASE_URL=... last
#   deploy/postgres.sh down    stop it
#   deploy/postgres.sh status  prints `running` or `stopped`
#   deploy/postgres.sh reset   stop it and delete its data
#
# Data, socket and log live in .local/postgres (see below); it listens on 127.0.0.1:${PG_PORT:-55432} with
# trust authentication for the `postgres` user (loopback only: a test database, not a server),
# except the role `connect_pw`, which must give its password (scram-sha-256): the tests that
# prove a password reached a connector (config providers) log in as it.
# TLS is on (clients choose with sslmode): at its first start it gets a server certificate for
# 127.0.0.1 and localhost, made with openssl and signed by a CA of its own, ca.pem in its folder
# (printed as PG_CA=...; `reset` deletes both).
# It runs with wal_level=logical (40 replication slots and WAL senders) for the change data
# capture source; an instance an older version of this script started is restarted once for it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
port=${PG_PORT:-55432}
url="postgres://postgres@127.0.0.1:$port/postgres"

find_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  return 1
}

install_postgres() {
  echo "postgres.sh: installing Debian's postgresql package" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
}

bin=$(find_bin || true)

# Postgres refuses to run as root; as root we run it as the `postgres` user the package creates.
as_pg() {
  if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# Data, socket and log go under .local/postgres, unless the `postgres` user cannot reach that
# folder (a checkout inside a private directory, e.g. one made by mktemp -d): then under /tmp,
# in a folder named after the checkout so two checkouts do not share one.
set_home() {
  home=${PG_HOME_DIR:-$root/.local/postgres}
  if [ -z "${PG_HOME_DIR:-}" ] && [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 \
     && ! (cd / && runuser -u postgres -- test -x "$root"); then
    home=/tmp/connect-rs-postgres-$(printf '%s' "$root" | md5sum | cut -c1-10)
  fi
  data=$home/data
}
set_home

# The CA and the server's certificate (PKCS#8 key readable by the server's user only).
make_tls() {
  local d=$home/tls
  [ -f "$d/.complete" ] && return 0
  command -v openssl >/dev/null || { echo "postgres.sh: openssl is required (TLS)" >&2; exit 1; }
  rm -rf "$d"; mkdir -p "$d"
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$home/ca.pem" -days 3650 \
    -subj "/CN=connect-test-postgres-ca" -extensions v3 \
    -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n[v3]\n%s\n%s\n%s\n' \
      'basicConstraints=critical,CA:TRUE' 'keyUsage=critical,keyCertSign,cRLSign' 'subjectKeyIdentifier=hash') \
    2>/dev/null
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/server.key" 2>/dev/null
  openssl req -new -key "$d/server.key" -subj "/CN=localhost" -out "$d/server.csr" \
    -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n')
  openssl x509 -req -in "$d/server.csr" -CA "$home/ca.pem" -CAkey "$d/ca.key" -CAserial "$d/ca.srl" -CAcreateserial -days 825 \
    -sha256 -out "$d/server.pem" -extfile <(printf '%s\n' 'basicConstraints=critical,CA:FALSE' \
      'keyUsage=critical,digitalSignature,keyEncipherment' 'extendedKeyUsage=serverAuth' \
      'subjectAltName=IP:127.0.0.1,DNS:localhost' 'subjectKeyIdentifier=hash' 'authorityKeyIdentifier=keyid') \
    2>/dev/null
  rm -f "$d/server.csr"
  chmod 600 "$d/server.key" "$d/ca.key"
  [ "$(id -u)" = 0 ] && chown -R postgres: "$d"
  touch "$d/.complete"
}

running() { [ -n "$bin" ] && [ -f "$data/PG_VERSION" ] && as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; }

up() {
  if [ -z "$bin" ]; then install_postgres; bin=$(find_bin) || { echo "postgres.sh: initdb not found after install" >&2; exit 1; }; set_home; fi
  if running && [ "$(as_pg "$bin/psql" -h "$home/sock" -p "$port" -U postgres -Atc 'show wal_level' 2>/dev/null)" != logical ]; then
    # Started by an older version of this script: logical decoding (change data capture) needs
    # wal_level=logical, which takes a restart.
    echo "postgres.sh: restarting PostgreSQL with wal_level=logical" >&2
    as_pg "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
  fi
  if running; then
    echo "postgres.sh: reusing the running PostgreSQL on port $port" >&2
    if password_rule; then as_pg "$bin/pg_ctl" -D "$data" reload >/dev/null; fi
  else
    mkdir -p "$home/sock"
    chmod 755 "$home"
    [ "$(id -u)" = 0 ] && chown postgres: "$home" "$home/sock"
    make_tls
    if [ ! -f "$data/PG_VERSION" ]; then
      as_pg "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >"$home/initdb.log" 2>&1 \
        || { cat "$home/initdb.log" >&2; exit 1; }
    fi
    password_rule || true  # false when the rule is already there (a restart)
    as_pg "$bin/pg_ctl" -D "$data" -l "$home/postgres.log" -w -t 60 \
      -o "-p $port -k $home/sock -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off -c wal_level=logical -c max_replication_slots=40 -c max_wal_senders=40 -c ssl=on -c ssl_cert_file=$home/tls/server.pem -c ssl_key_file=$home/tls/server.key" \
      start >/dev/null || { tail -n 30 "$home/postgres.log" >&2; exit 1; }
    echo "postgres.sh: started PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on port $port" >&2
  fi
  for _ in $(seq 1 30); do
    "$bin/pg_isready" -h 127.0.0.1 -p "$port" -q && break
    sleep 0.5
  done
  echo "PG_CA=$home/ca.pem"
  echo "DATABASE_URL=$url"
}

# Puts the `connect_pw` password rule first in pg_hba.conf; true if it was missing.
password_rule() {
  local rule="host all connect_pw 127.0.0.1/32 scram-sha-256"
  grep -qxF "$rule" "$data/pg_hba.conf" && return 1
  sed -i "1i $rule" "$data/pg_hba.conf"
}

down() {
  if running; then as_pg "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null; fi
  echo "postgres.sh: stopped" >&2
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) if running; then echo running; else echo stopped; fi ;;
  reset) down; rm -rf "$home" ;;
  *) echo "usage: deploy/postgres.sh up|down|reset" >&2; exit 2 ;;
esac
