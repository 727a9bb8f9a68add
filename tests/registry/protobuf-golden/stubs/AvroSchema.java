// Stand-in for Confluent's io.confluent.kafka.schemaregistry.avro.AvroSchema (which needs Avro and
// Confluent's Avro types): the registry entity classes ProtobufSchema brings in only read its TYPE.
// Compiled by tests/registry/capture-protobuf-golden.sh.
package io.confluent.kafka.schemaregistry.avro;

public class AvroSchema {
  public static final String TYPE = "AVRO";
}
