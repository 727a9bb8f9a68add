#!/usr/bin/env bash
# Records Debezium 3.6.1's change events (on Apache Connect 4.3.2, tests/cdc/debezium.sh) for the
# tables of golden-schema.sql and the changes of golden-changes.sql into
# tests/golden/cdc/debezium-3.6.1.jsonl: one line a record, {"topic", "key", "value"} with the
# key and value as JsonConverter (schemas.enable=true) wrote them, the run's topic prefix
# replaced by "golden". tests/tests/source_postgres_cdc_golden.rs compares the native
# connector's records with them, so CI does not run Debezium.
#
#   tests/cdc/capture-golden.sh       (needs Java 17+, Maven, psql, python3, the project's
#                                      PostgreSQL with wal_level=logical and Kafka running)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/cdc
out=$root/tests/golden/cdc/debezium-3.6.1.jsonl
url=${DATABASE_URL:-postgres://postgres@127.0.0.1:55432/postgres}
table=cdc_golden
id=$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
prefix=golden_$id
slot=dbz_golden_$id
run=$root/.local/debezium/capture
export DEBEZIUM_RUN=$run

sql() { psql -q -v ON_ERROR_STOP=1 "$url" "$@"; }
cleanup() {
  "$here/debezium.sh" stop || true
  sql -c "SELECT pg_drop_replication_slot('$slot') FROM pg_replication_slots WHERE slot_name = '$slot'" >/dev/null || true
  sql -c "DROP PUBLICATION IF EXISTS ${slot}_pub" || true
  sql -c "DROP TABLE IF EXISTS ${table}, ${table}_full; DROP TYPE IF EXISTS ${table}_mood" || true
}
trap cleanup EXIT

"$here/debezium.sh" fetch
sql -c "DROP TABLE IF EXISTS ${table}, ${table}_full; DROP TYPE IF EXISTS ${table}_mood"
sed "s/TBL/$table/g" "$here/golden-schema.sql" | sql

mkdir -p "$run" "$(dirname "$out")"
props=$root/.local/debezium/golden-connector.properties
{
  echo "name=dbz-golden"
  echo "connector.class=io.debezium.connector.postgresql.PostgresConnector"
  echo "tasks.max=1"
  "$here/debezium.sh" db-props
  echo "topic.prefix=$prefix"
  echo "plugin.name=pgoutput"
  echo "slot.name=$slot"
  echo "publication.name=${slot}_pub"
  echo "publication.autocreate.mode=filtered"
  echo "table.include.list=public\\\\.${table},public\\\\.${table}_full"
  echo "snapshot.mode=initial"
  echo "topic.creation.default.replication.factor=1"
  echo "topic.creation.default.partitions=1"
} > "$props"
"$here/debezium.sh" start "$props"

topics=("$prefix.public.$table" "$prefix.public.${table}_full")
count() { local n=0 t; for t in "${topics[@]}"; do n=$((n + $("$here/debezium.sh" dump "$t" 2>/dev/null | wc -l))); done; echo $n; }
# Waits until the topics hold at least $1 records and no more arrive for 5 s.
settle() {
  local want=$1 last=-1 n i
  for i in $(seq 1 60); do
    n=$(count)
    if [ "$n" -ge "$want" ] && [ "$n" = "$last" ]; then echo "capture-golden.sh: $n records" >&2; return 0; fi
    last=$n; sleep 5
  done
  echo "capture-golden.sh: only $n records; see $run/connect.log" >&2; exit 1
}
settle 6
sed "s/TBL/$table/g" "$here/golden-changes.sql" | sql
settle 26

for t in "${topics[@]}"; do
  "$here/debezium.sh" dump "$t" | python3 -c '
import json, sys
topic, prefix = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    r = json.loads(line)
    rec = {"topic": topic, "key": None if r["key"] is None else json.loads(r["key"]), "value": r["value"]}
    print(json.dumps(rec, ensure_ascii=False, sort_keys=True).replace(prefix, "golden"))
' "$t" "$prefix"
done > "$out"
echo "capture-golden.sh: wrote $(wc -l < "$out") records to $out" >&2
