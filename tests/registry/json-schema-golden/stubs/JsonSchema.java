// Stand-in for Confluent's io.confluent.kafka.schemaregistry.json.JsonSchema, with the parts
// JsonSchemaData uses, done as Confluent does them: a schema built from an everit Schema is its
// toString() read by Jackson (canonicalString() writes that back: the registered text); a schema
// text is loaded with everit's SchemaLoader (draft 7, defaults used), as Confluent's
// loadPreviousDraft does for drafts 4 to 7. Compiled by capture-json-schema-golden.sh.
package io.confluent.kafka.schemaregistry.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.confluent.kafka.schemaregistry.json.jackson.Jackson;
import java.util.Objects;
import org.everit.json.schema.Schema;
import org.everit.json.schema.loader.SchemaLoader;
import org.json.JSONObject;

public class JsonSchema {
  static final ObjectMapper objectMapper = Jackson.newObjectMapper();

  private final JsonNode jsonNode;
  private Schema schemaObj;
  private final Integer version;

  public JsonSchema(Schema schemaObj) {
    this(schemaObj, null);
  }

  public JsonSchema(Schema schemaObj, Integer version) {
    try {
      this.jsonNode = objectMapper.readTree(schemaObj.toString());
    } catch (Exception e) {
      throw new IllegalArgumentException("Invalid JSON schema", e);
    }
    this.schemaObj = schemaObj;
    this.version = version;
  }

  public JsonSchema(String text) {
    this(text, null);
  }

  public JsonSchema(String text, Integer version) {
    try {
      this.jsonNode = objectMapper.readTree(text);
    } catch (Exception e) {
      throw new IllegalArgumentException("Invalid JSON schema", e);
    }
    this.version = version;
  }

  public Schema rawSchema() {
    if (schemaObj == null) {
      try {
        SchemaLoader.SchemaLoaderBuilder b = SchemaLoader.builder().useDefaults(true).draftV7Support();
        b.schemaJson(new JSONObject(objectMapper.writeValueAsString(jsonNode)));
        schemaObj = b.build().load().build();
      } catch (Exception e) {
        throw new IllegalArgumentException("Invalid JSON", e);
      }
    }
    return schemaObj;
  }

  public Integer version() {
    return version;
  }

  public JsonSchema copyIgnoringModernDialects() {
    return this;
  }

  public String canonicalString() {
    try {
      return objectMapper.writeValueAsString(jsonNode);
    } catch (Exception e) {
      throw new IllegalArgumentException("Invalid JSON", e);
    }
  }

  public JsonNode toJsonNode() {
    return jsonNode;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof JsonSchema
        && canonicalString().equals(((JsonSchema) o).canonicalString())
        && Objects.equals(version, ((JsonSchema) o).version);
  }

  @Override
  public int hashCode() {
    return Objects.hash(canonicalString(), version);
  }
}
