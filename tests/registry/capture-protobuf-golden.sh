#!/usr/bin/env bash
# Records Confluent's ProtobufData on the cases of tests/registry/protobuf-golden/ProtobufGolden.java
# into tests/golden/registry/protobuf-data.jsonl, the file registry/tests/protobuf_golden.rs
# compares our Protobuf mapping with.
#
# Confluent's jars are not on Maven Central: ProtobufData, ProtobufSchema (with its printing,
# DynamicSchema and the diff classes it links), the generated confluent/meta.proto and
# confluent/type/*.proto classes and the client classes ProtobufSchema's interfaces and entities
# pull in are compiled from a checkout of confluentinc/schema-registry (at a pinned commit), with
# stand-ins for two Confluent classes (protobuf-golden/stubs: AvroSchema, whose TYPE is all the
# entity classes read; json-schema-golden/stubs/ConnectVariant, as the JSON capture has it).
# Against: Kafka's connect-api, connect-json and kafka-clients 4.4.0 and wire-schema-jvm /
# wire-runtime-jvm 6.4.5 (Confluent's wire.version) from Maven Central, and the other jars
# (protobuf-java and -util 4.36.1, proto-google-common-protos, Guava, Jackson, swagger annotations,
# okio, the Kotlin stdlib) of the Apicurio Registry distribution deploy/registry.sh unpacks. Needs Java 17+, git and curl:
#
#   CONFLUENT_SCHEMA_REGISTRY_SRC=/path/to/schema-registry tests/registry/capture-protobuf-golden.sh
#
# (a clone, bare or not; deploy/registry.sh up once before, for the jars).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
src=${CONFLUENT_SCHEMA_REGISTRY_SRC:?set it to a clone of https://github.com/confluentinc/schema-registry}
rev=${CONFLUENT_SCHEMA_REGISTRY_REV:-794611bd86d1ce0422581269e2b13a2ab010c7fb}
version=$(sed -n 's:.*<apicurio.version>\(.*\)</apicurio.version>.*:\1:p' "$root/deploy/registry/pom.xml")
lib=${REGISTRY_LIB:-$root/.local/registry/apicurio-registry-$version/lib/main}
[ -d "$lib" ] || { echo "capture-protobuf-golden.sh: no $lib: run deploy/registry.sh up once" >&2; exit 1; }

work=$root/.local/protobuf-golden
jars=$work/jars
mkdir -p "$jars"
central=https://repo1.maven.org/maven2
for coord in org/apache/kafka/connect-api/4.4.0 org/apache/kafka/connect-json/4.4.0 \
    org/apache/kafka/kafka-clients/4.4.0 com/squareup/wire/wire-schema-jvm/6.4.5 \
    com/squareup/wire/wire-runtime-jvm/6.4.5; do
  v=${coord##*/}; a=${coord%/*}; a=${a##*/}
  [ -f "$jars/$a-$v.jar" ] || curl -sfL -o "$jars/$a-$v.jar" "$central/$coord/$a-$v.jar"
done

cp=$(ls "$jars"/*.jar | tr '\n' ':')
# Every jar of the distribution but its own Kafka, Wire and Apicurio ones.
for jar in "$lib"/*.jar; do
  case $(basename "$jar") in
    *kafka-clients* | *connect-api* | *connect-json* | *wire-schema* | *wire-runtime* | io.apicurio.*) ;;
    *) cp="$cp:$jar" ;;
  esac
done

rm -rf "$work/src" "$work/classes"
mkdir -p "$work/src" "$work/classes"
# module:path below its src/main/java
for f in \
  client:io/confluent/kafka/schemaregistry/AbstractSchemaProvider.java \
  client:io/confluent/kafka/schemaregistry/CompatibilityChecker.java \
  client:io/confluent/kafka/schemaregistry/CompatibilityLevel.java \
  client:io/confluent/kafka/schemaregistry/CompatibilityPolicy.java \
  client:io/confluent/kafka/schemaregistry/ParsedSchema.java \
  client:io/confluent/kafka/schemaregistry/ParsedSchemaAndValue.java \
  client:io/confluent/kafka/schemaregistry/ParsedSchemaHolder.java \
  client:io/confluent/kafka/schemaregistry/SchemaProvider.java \
  client:io/confluent/kafka/schemaregistry/SchemaValidationStrategy.java \
  client:io/confluent/kafka/schemaregistry/SchemaValidator.java \
  client:io/confluent/kafka/schemaregistry/SchemaValidatorBuilder.java \
  client:io/confluent/kafka/schemaregistry/SimpleParsedSchemaHolder.java \
  client:io/confluent/kafka/schemaregistry/annotations/Schema.java \
  client:io/confluent/kafka/schemaregistry/annotations/SchemaReference.java \
  client:io/confluent/kafka/schemaregistry/client/SchemaMetadata.java \
  client:io/confluent/kafka/schemaregistry/client/SchemaVersionFetcher.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/ExecutionEnvironment.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/Metadata.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/Rule.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/RuleKind.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/RuleMode.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/RuleSet.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/Schema.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/SchemaEntity.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/SchemaReference.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/SchemaString.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/SchemaTags.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/requests/RegisterSchemaRequest.java \
  client:io/confluent/kafka/schemaregistry/client/rest/entities/requests/RegisterSchemaResponse.java \
  client:io/confluent/kafka/schemaregistry/rules/FieldTransform.java \
  client:io/confluent/kafka/schemaregistry/rules/RuleConditionException.java \
  client:io/confluent/kafka/schemaregistry/rules/RuleContext.java \
  client:io/confluent/kafka/schemaregistry/rules/RuleException.java \
  client:io/confluent/kafka/schemaregistry/rules/RulePhase.java \
  client:io/confluent/kafka/schemaregistry/rules/RuleResult.java \
  client:io/confluent/kafka/schemaregistry/rules/ValidationRule.java \
  client:io/confluent/kafka/schemaregistry/rules/ValidationRuleError.java \
  client:io/confluent/kafka/schemaregistry/rules/ValidationRuleExecutor.java \
  client:io/confluent/kafka/schemaregistry/utils/JacksonMapper.java \
  client:io/confluent/kafka/schemaregistry/utils/QualifiedSubject.java \
  client:io/confluent/kafka/schemaregistry/utils/WildcardMatcher.java \
  protobuf-converter:io/confluent/connect/protobuf/ProtobufData.java \
  protobuf-converter:io/confluent/connect/protobuf/ProtobufDataConfig.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/MessageIndexes.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/ProtoFileElementDeserializer.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/ProtobufSchema.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/ProtobufSchemaUtils.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/diff/Context.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/diff/Difference.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/diff/EnumSchemaDiff.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/diff/FieldSchemaDiff.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/diff/MessageSchemaDiff.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/diff/SchemaDiff.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/dynamic/DynamicSchema.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/dynamic/EnumDefinition.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/dynamic/FieldDefinition.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/dynamic/MessageDefinition.java \
  protobuf-provider:io/confluent/kafka/schemaregistry/protobuf/dynamic/ServiceDefinition.java \
  protobuf-serializer:io/confluent/kafka/serializers/protobuf/ProtobufSchemaAndValue.java \
  protobuf-types:io/confluent/protobuf/MetaProto.java \
  protobuf-types:io/confluent/protobuf/type/Decimal.java \
  protobuf-types:io/confluent/protobuf/type/DecimalOrBuilder.java \
  protobuf-types:io/confluent/protobuf/type/DecimalProto.java \
  protobuf-types:io/confluent/protobuf/type/Variant.java \
  protobuf-types:io/confluent/protobuf/type/VariantOrBuilder.java \
  protobuf-types:io/confluent/protobuf/type/VariantProto.java \
  protobuf-types:io/confluent/protobuf/type/utils/DecimalUtils.java \
  schema-converter:io/confluent/connect/schema/AbstractDataConfig.java \
  schema-converter:io/confluent/connect/schema/ConnectEnum.java \
  schema-converter:io/confluent/connect/schema/ConnectUnion.java \
  ; do
  module=${f%%:*}; path=${f#*:}
  mkdir -p "$work/src/$(dirname "$path")"
  git -C "$src" show "$rev:$module/src/main/java/$path" > "$work/src/$path"
done
mkdir -p "$work/src/io/confluent/kafka/schemaregistry/avro"
cp "$root/tests/registry/protobuf-golden/stubs/AvroSchema.java" "$work/src/io/confluent/kafka/schemaregistry/avro/"
cp "$root/tests/registry/json-schema-golden/stubs/ConnectVariant.java" "$work/src/io/confluent/connect/schema/"
javac -nowarn -encoding UTF-8 -cp "$cp" -d "$work/classes" $(find "$work/src" -name '*.java') \
  "$root/tests/registry/protobuf-golden/ProtobufGolden.java" 2>&1 | grep -v '^Note:' >&2 || true

out=$root/tests/golden/registry/protobuf-data.jsonl
mkdir -p "$(dirname "$out")"
java -cp "$work/classes:$cp" ProtobufGolden > "$out.tmp" 2> >(grep -v '^SLF4J' >&2)
mv "$out.tmp" "$out"
echo "captured $(wc -l < "$out") cases into $out" >&2
