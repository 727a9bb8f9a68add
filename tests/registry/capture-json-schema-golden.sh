#!/usr/bin/env bash
# Records Confluent's JsonSchemaData on the cases of tests/registry/json-schema-golden/
# JsonSchemaGolden.java into tests/golden/registry/json-schema-data.jsonl, the file
# registry/tests/json_schema_golden.rs compares our JSON Schema mapping with.
#
# Confluent's jars are not on Maven Central, and Apicurio's distribution has no copy of
# JsonSchemaData: it is compiled from a checkout of confluentinc/schema-registry (its
# json-schema-converter and schema-converter sources, at a pinned commit), with stand-ins for the
# three Confluent classes it needs beyond them (json-schema-golden/stubs: JsonSchema, Jackson,
# ConnectVariant), against the everit-json-schema, Jackson, org.json, Guava and Kafka Connect jars
# of the Apicurio Registry distribution deploy/registry.sh unpacks. Needs Java 17+ and git:
#
#   CONFLUENT_SCHEMA_REGISTRY_SRC=/path/to/schema-registry tests/registry/capture-json-schema-golden.sh
#
# (a clone, bare or not; deploy/registry.sh up once before, for the jars).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
src=${CONFLUENT_SCHEMA_REGISTRY_SRC:?set it to a clone of https://github.com/confluentinc/schema-registry}
rev=${CONFLUENT_SCHEMA_REGISTRY_REV:-794611bd86d1ce0422581269e2b13a2ab010c7fb}
version=$(sed -n 's:.*<apicurio.version>\(.*\)</apicurio.version>.*:\1:p' "$root/deploy/registry/pom.xml")
lib=${REGISTRY_LIB:-$root/.local/registry/apicurio-registry-$version/lib/main}
[ -d "$lib" ] || { echo "capture-json-schema-golden.sh: no $lib: run deploy/registry.sh up once" >&2; exit 1; }

cp=""
for pattern in everit-json-schema json-20 jackson-core jackson-databind jackson-annotations \
    jackson-datatype-json-org jackson-module-blackbird guava failureaccess connect-api connect-json kafka-clients slf4j-api \
    re2j commons-validator handy-uri-templates; do
  for jar in "$lib"/*"$pattern"*.jar; do
    [ -f "$jar" ] && cp="$cp:$jar"
  done
done
cp=${cp#:}

work=$root/.local/json-schema-golden
rm -rf "$work"
mkdir -p "$work/src/io/confluent/connect/json" "$work/src/io/confluent/connect/schema" \
  "$work/src/io/confluent/kafka/schemaregistry/json/jackson" "$work/classes"
for f in JsonSchemaData JsonSchemaDataConfig; do
  git -C "$src" show "$rev:json-schema-converter/src/main/java/io/confluent/connect/json/$f.java" \
    > "$work/src/io/confluent/connect/json/$f.java"
done
for f in AbstractDataConfig ConnectEnum ConnectUnion; do
  git -C "$src" show "$rev:schema-converter/src/main/java/io/confluent/connect/schema/$f.java" \
    > "$work/src/io/confluent/connect/schema/$f.java"
done
stubs=$root/tests/registry/json-schema-golden/stubs
cp "$stubs/ConnectVariant.java" "$work/src/io/confluent/connect/schema/"
cp "$stubs/JsonSchema.java" "$work/src/io/confluent/kafka/schemaregistry/json/"
cp "$stubs/Jackson.java" "$work/src/io/confluent/kafka/schemaregistry/json/jackson/"
javac -nowarn -encoding UTF-8 -cp "$cp" -d "$work/classes" $(find "$work/src" -name '*.java') \
  "$root/tests/registry/json-schema-golden/JsonSchemaGolden.java" 2>&1 | grep -v '^Note:' >&2 || true

out=$root/tests/golden/registry/json-schema-data.jsonl
mkdir -p "$(dirname "$out")"
java -cp "$work/classes:$cp" JsonSchemaGolden > "$out.tmp" 2> >(grep -v '^SLF4J' >&2)
mv "$out.tmp" "$out"
echo "captured $(wc -l < "$out") cases into $out" >&2
