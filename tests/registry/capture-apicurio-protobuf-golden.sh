#!/usr/bin/env bash
# Records Apicurio's ProtobufConverter mapping on the cases of
# tests/registry/apicurio-protobuf-golden/ApicurioProtobufGolden.java into
# tests/golden/registry/apicurio-protobuf-data.jsonl, the file registry/tests/apicurio_protobuf_golden.rs
# compares our io.apicurio.registry.utils.converter.ProtobufConverter with.
#
# Apicurio's ProtobufConverter (and its ProtobufData) is in the Apicurio Registry sources since
# August 2026 (apicurio/apicurio-registry#9218) but in no release: no 2.x or 3.x jar of
# apicurio-registry-utils-converter has it, so ProtobufData.java is compiled from a checkout (at a
# pinned commit). The registered text comes from FileDescriptorUtils of
# apicurio-registry-protobuf-schema-utilities 3.3.3 (the jar of the Apicurio Registry distribution
# deploy/registry.sh unpacks, with its protobuf-java 4.36.1, Wire 6.4.0, okio, Kotlin, Guava and
# Jackson), against Kafka's connect-api, connect-json and kafka-clients 4.4.0. Needs Java 17+, git
# and curl (or those Kafka jars in ~/.m2):
#
#   APICURIO_REGISTRY_SRC=/path/to/apicurio-registry tests/registry/capture-apicurio-protobuf-golden.sh
#
# (a clone, bare or not; deploy/registry.sh up once before, for the jars).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
src=${APICURIO_REGISTRY_SRC:?set it to a clone of https://github.com/Apicurio/apicurio-registry}
rev=${APICURIO_REGISTRY_REV:-b40e0173828702a4d9df141c97a32f984fc2eeeb}
version=$(sed -n 's:.*<apicurio.version>\(.*\)</apicurio.version>.*:\1:p' "$root/deploy/registry/pom.xml")
lib=${REGISTRY_LIB:-$root/.local/registry/apicurio-registry-$version/lib/main}
[ -d "$lib" ] || { echo "capture-apicurio-protobuf-golden.sh: no $lib: run deploy/registry.sh up once" >&2; exit 1; }

work=$root/.local/apicurio-protobuf-golden
jars=$work/jars
mkdir -p "$jars"
central=https://repo1.maven.org/maven2
for coord in org/apache/kafka/connect-api/4.4.0 org/apache/kafka/connect-json/4.4.0 \
    org/apache/kafka/kafka-clients/4.4.0; do
  v=${coord##*/}; a=${coord%/*}; a=${a##*/}
  [ -f "$jars/$a-$v.jar" ] && continue
  if [ -f "$HOME/.m2/repository/$coord/$a-$v.jar" ]; then
    cp "$HOME/.m2/repository/$coord/$a-$v.jar" "$jars/"
  else
    curl -sfL -o "$jars/$a-$v.jar" "$central/$coord/$a-$v.jar"
  fi
done

cp=$(ls "$jars"/*.jar | tr '\n' ':')
# The distribution's jars but its own Kafka ones.
for jar in "$lib"/*.jar; do
  case $(basename "$jar") in
    *kafka-clients* | *connect-api* | *connect-json*) ;;
    *) cp="$cp:$jar" ;;
  esac
done

rm -rf "$work/src" "$work/classes"
mkdir -p "$work/src" "$work/classes"
path=utils/converter/src/main/java/io/apicurio/registry/utils/converter/protobuf/ProtobufData.java
mkdir -p "$work/src/$(dirname "$path")"
if git -C "$src" rev-parse --is-bare-repository | grep -q true; then
  git --git-dir="$src" show "$rev:$path" > "$work/src/$path"
else
  git -C "$src" show "$rev:$path" > "$work/src/$path"
fi
javac -nowarn -encoding UTF-8 -cp "$cp" -d "$work/classes" "$work/src/$path" \
  "$root/tests/registry/apicurio-protobuf-golden/ApicurioProtobufGolden.java" 2> >(grep -v '^Note:' >&2)

out=$root/tests/golden/registry/apicurio-protobuf-data.jsonl
mkdir -p "$(dirname "$out")"
java -cp "$work/classes:$cp" ApicurioProtobufGolden > "$out.tmp" 2> >(grep -v '^SLF4J' >&2)
mv "$out.tmp" "$out"
echo "captured $(wc -l < "$out") cases into $out" >&2
