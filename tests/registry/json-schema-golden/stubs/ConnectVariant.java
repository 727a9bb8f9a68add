// Stand-in for Confluent's io.confluent.connect.schema.ConnectVariant (which needs Confluent's
// Variant classes): JsonSchemaData only asks it whether a schema is a variant, which no golden
// case is. Compiled by tests/registry/capture-json-schema-golden.sh.
package io.confluent.connect.schema;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;

public class ConnectVariant {
  public static final String LOGICAL_NAME = "org.apache.kafka.connect.data.Variant";

  public static SchemaBuilder builder() {
    return SchemaBuilder.struct().name(LOGICAL_NAME)
        .field("metadata", Schema.OPTIONAL_BYTES_SCHEMA)
        .field("value", Schema.OPTIONAL_BYTES_SCHEMA);
  }

  public static boolean isVariant(Schema s) {
    return s != null && LOGICAL_NAME.equals(s.name());
  }

  public static JsonNode fromLogical(Schema s, Struct v) {
    throw new UnsupportedOperationException("variants are not part of the golden cases");
  }

  public static Struct toLogical(Schema s, JsonNode v) {
    throw new UnsupportedOperationException("variants are not part of the golden cases");
  }
}
