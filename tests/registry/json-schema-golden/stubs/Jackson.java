// Stand-in for Confluent's io.confluent.kafka.schemaregistry.json.jackson.Jackson: the same
// ObjectMapper settings that decide what is read and written (non-numeric numbers allowed,
// decimals read as exact BigDecimals, the json-org module), without the Guava, Joda and JDK
// modules, which only concern Java objects. Compiled by capture-json-schema-golden.sh.
package io.confluent.kafka.schemaregistry.json.jackson;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

public class Jackson {
  public static ObjectMapper newObjectMapper() {
    ObjectMapper m = JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();
    m.registerModule(new com.fasterxml.jackson.datatype.jsonorg.JsonOrgModule());
    m.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
    m.disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    m.setNodeFactory(JsonNodeFactory.withExactBigDecimals(true));
    return m;
  }
}
