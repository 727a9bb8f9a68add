// Records what Confluent's JsonSchemaData (io.confluent.connect.json, compiled from the
// schema-registry sources; everit-json-schema 1.14.6, Jackson 2.21 and org.json from Apicurio's
// distribution) does with a set of Connect schemas and values, and with JSON schemas written by
// other producers, one JSON line a case, into tests/golden/registry/json-schema-data.jsonl, which
// registry/tests/json_schema_golden.rs compares our port with. Run it with
// tests/registry/capture-json-schema-golden.sh.
//
// Each line has:
//   name          the case
//   config        the JsonSchemaDataConfig keys set
//   connect       (written cases) the schema and value as Apache's JsonConverter
//                 (schemas.enable=true) writes them
//   null_fields   (written cases) the fields of a struct value that are null (JsonConverter
//                 writes their defaults)
//   json_schema   the registered text: fromConnectSchema(schema).canonicalString() (written
//                 cases), or the text read (read cases)
//   json_payload  the JSON after the header: Jackson's writing of fromConnectData(schema, value)
//                 (null when Java's is null: no record), or the JSON read
//   connect_read  JsonConverter's envelope of toConnectSchema(text, version 1) and
//                 toConnectData(that schema, the JSON read back), as the converter reads it, or
//                 {"error": ..} where Java fails
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.confluent.connect.json.JsonSchemaData;
import io.confluent.connect.json.JsonSchemaDataConfig;
import io.confluent.kafka.schemaregistry.json.JsonSchema;
import io.confluent.kafka.schemaregistry.json.jackson.Jackson;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;

public class JsonSchemaGolden {
    static final ObjectMapper JSON = new ObjectMapper();
    // The serializer's and deserializer's mapper.
    static final ObjectMapper MAPPER = Jackson.newObjectMapper();
    static final JsonConverter CONVERTER = new JsonConverter();
    static {
        CONVERTER.configure(Map.of("schemas.enable", "true"), false);
    }

    static String envelope(Schema schema, Object value) {
        return new String(CONVERTER.fromConnectData("t", schema, value), StandardCharsets.UTF_8);
    }

    // {"error": message} where Java fails (reading, or writing what it read with JsonConverter).
    static String read(Map<String, Object> config, String text, String payload) throws Exception {
        if (payload == null) {
            return "null";
        }
        try {
            JsonSchemaData reader = new JsonSchemaData(new JsonSchemaDataConfig(config));
            Schema connect = reader.toConnectSchema(new JsonSchema(text, 1));
            Object value = reader.toConnectData(connect, MAPPER.readTree(payload));
            return envelope(connect, value);
        } catch (Exception e) {
            return "{\"error\":" + JSON.writeValueAsString(e.toString()) + "}";
        }
    }

    static void emit(String name, Map<String, Object> config, Schema schema, Object value) throws Exception {
        JsonSchemaData data = new JsonSchemaData(new JsonSchemaDataConfig(config));
        String text = data.fromConnectSchema(schema).canonicalString();
        JsonNode node = data.fromConnectData(schema, value);
        String payload = node == null ? null : MAPPER.writeValueAsString(node);
        // JsonConverter writes the default of a null field with one: name those fields.
        List<String> nullFields = new java.util.ArrayList<>();
        if (value instanceof Struct) {
            for (org.apache.kafka.connect.data.Field f : schema.fields()) {
                if (((Struct) value).getWithoutDefault(f.name()) == null) nullFields.add(f.name());
            }
        }
        System.out.println("{\"name\":" + JSON.writeValueAsString(name)
            + ",\"config\":" + JSON.writeValueAsString(config)
            + ",\"connect\":" + envelope(schema, value)
            + ",\"null_fields\":" + JSON.writeValueAsString(nullFields)
            + ",\"json_schema\":" + JSON.writeValueAsString(text)
            + ",\"json_payload\":" + JSON.writeValueAsString(payload)
            + ",\"connect_read\":" + read(config, text, payload)
            + "}");
    }

    static void emit(String name, Schema schema, Object value) throws Exception {
        emit(name, Map.of(), schema, value);
    }

    static void emitRead(String name, Map<String, Object> config, String text, String payload) throws Exception {
        System.out.println("{\"name\":" + JSON.writeValueAsString(name)
            + ",\"config\":" + JSON.writeValueAsString(config)
            + ",\"json_schema\":" + JSON.writeValueAsString(text)
            + ",\"json_payload\":" + JSON.writeValueAsString(payload)
            + ",\"connect_read\":" + read(config, text, payload)
            + "}");
    }

    static void emitRead(String name, String text, String payload) throws Exception {
        emitRead(name, Map.of(), text, payload);
    }

    public static void main(String[] args) throws Exception {
        // Primitives (JsonSchemaDataTest.testFromConnect*), each the whole value.
        emit("int8", Schema.INT8_SCHEMA, (byte) -5);
        emit("int16", Schema.INT16_SCHEMA, (short) 300);
        emit("int32", Schema.INT32_SCHEMA, -2147483648);
        emit("int64", Schema.INT64_SCHEMA, 9007199254740993L);
        emit("float32", Schema.FLOAT32_SCHEMA, 12.2f);
        emit("float32_big", Schema.FLOAT32_SCHEMA, 1.0E10f);
        emit("float64", Schema.FLOAT64_SCHEMA, 12.2);
        emit("float64_exp", Schema.FLOAT64_SCHEMA, -1.0E-300);
        emit("boolean", Schema.BOOLEAN_SCHEMA, true);
        emit("string", Schema.STRING_SCHEMA, "h\u00e9llo \"w\u00f6rld\" \u2603 \u0001 \t </");
        emit("bytes", Schema.BYTES_SCHEMA, new byte[]{0, 1, (byte) 0x80, (byte) 0xff});
        emit("optional_boolean_null", Schema.OPTIONAL_BOOLEAN_SCHEMA, null);
        emit("optional_int32", Schema.OPTIONAL_INT32_SCHEMA, 7);

        // Logical types.
        emit("decimal_base64", Decimal.schema(2), new BigDecimal("1.56"));
        emit("decimal_numeric", Map.of("decimal.format", "NUMERIC"), Decimal.schema(4), new BigDecimal("1.5600"));
        emit("decimal_numeric_negative_scale", Map.of("decimal.format", "NUMERIC"), Decimal.schema(-2),
            new BigDecimal("1.2E+4").setScale(-2));
        emit("decimal_numeric_small", Map.of("decimal.format", "NUMERIC"), Decimal.schema(9), new BigDecimal("-0.000000012"));
        emit("date", Date.SCHEMA, Date.toLogical(Date.SCHEMA, 19000));
        emit("time", Time.SCHEMA, Time.toLogical(Time.SCHEMA, 45296789));
        emit("timestamp", Timestamp.SCHEMA, Timestamp.toLogical(Timestamp.SCHEMA, 1700000000123L));
        emit("timestamp_default", Timestamp.builder().defaultValue(new java.util.Date(0)).build(),
            new java.util.Date(1234567890));

        // Structs (JsonSchemaDataTest.testToConnectRecord, JsonSchemaConverterTest.testComplex).
        Schema record = SchemaBuilder.struct().name("Record")
            .field("int8", Schema.INT8_SCHEMA).field("string", Schema.STRING_SCHEMA).build();
        emit("record", record, new Struct(record).put("int8", (byte) 12).put("string", "sample string"));
        emit("record_no_additional_properties", Map.of("object.additional.properties", "false"), record,
            new Struct(record).put("int8", (byte) 1).put("string", "s"));
        Schema complex = SchemaBuilder.struct()
            .field("int8", Schema.INT8_SCHEMA)
            .field("int16", Schema.INT16_SCHEMA)
            .field("int32", Schema.INT32_SCHEMA)
            .field("int64", Schema.INT64_SCHEMA)
            .field("float32", Schema.FLOAT32_SCHEMA)
            .field("float64", Schema.FLOAT64_SCHEMA)
            .field("boolean", Schema.BOOLEAN_SCHEMA)
            .field("string", Schema.STRING_SCHEMA)
            .field("bytes", Schema.BYTES_SCHEMA)
            .field("array", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
            .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
            .build();
        emit("struct_complex", complex, new Struct(complex).put("int8", (byte) 12)
            .put("int16", (short) 12).put("int32", 12).put("int64", 12L).put("float32", 12.2f)
            .put("float64", 12.2).put("boolean", true).put("string", "foo").put("bytes", "foo".getBytes())
            .put("array", Arrays.asList("a", "b", "c")).put("map", Collections.singletonMap("field", 1)));

        Schema optional = SchemaBuilder.struct().name("com.example.Opt").version(2).doc("docs")
            .field("oi8", Schema.OPTIONAL_INT8_SCHEMA)
            .field("os", Schema.OPTIONAL_STRING_SCHEMA)
            .field("ob", Schema.OPTIONAL_BYTES_SCHEMA)
            .field("odec", Decimal.builder(3).optional().build())
            .field("oday", Date.builder().optional().build())
            .field("otod", Time.builder().optional().build())
            .field("ots", Timestamp.builder().optional().build())
            .field("oarr", SchemaBuilder.array(Schema.OPTIONAL_INT64_SCHEMA).optional().build())
            .build();
        emit("struct_optional_set", optional, new Struct(optional).put("oi8", (byte) -1).put("os", "x")
            .put("ob", new byte[]{9}).put("odec", new BigDecimal("-0.001"))
            .put("oday", Date.toLogical(Date.SCHEMA, -1)).put("otod", Time.toLogical(Time.SCHEMA, 0))
            .put("ots", Timestamp.toLogical(Timestamp.SCHEMA, -1L)).put("oarr", Arrays.asList(1L, null)));
        emit("struct_optional_nulls", optional, new Struct(optional));

        Schema inner = SchemaBuilder.struct().name("com.example.Inner").field("x", Schema.INT32_SCHEMA).build();
        Schema optInner = SchemaBuilder.struct().name("com.example.Inner").field("x", Schema.INT32_SCHEMA)
            .optional().build();
        Schema nested = SchemaBuilder.struct().field("a", inner).field("b", optInner).field("c", optInner)
            .field("list", SchemaBuilder.array(inner).build()).build();
        emit("nested_structs", nested, new Struct(nested).put("a", new Struct(inner).put("x", 1))
            .put("b", new Struct(optInner).put("x", 2)).put("list", List.of(new Struct(inner).put("x", 3))));
        emit("optional_struct_top_level", optInner, new Struct(optInner).put("x", 4));

        SchemaBuilder many = SchemaBuilder.struct().name("Many");
        String[] names = {"id", "name", "email", "created_at", "updated_at", "amount", "currency",
            "status", "a", "b", "c", "zz", "customer_id", "x1", "x2", "x3", "x4"};
        for (String n : names) many.field(n, Schema.OPTIONAL_STRING_SCHEMA);
        Schema manySchema = many.build();
        emit("many_fields", manySchema, new Struct(manySchema).put("id", "1"));
        SchemaBuilder wide = SchemaBuilder.struct().name("Wide");
        for (int i = 0; i < 70; i++) wide.field("field_" + i, Schema.INT32_SCHEMA);
        Schema wideSchema = wide.build();
        Struct wideValue = new Struct(wideSchema);
        for (int i = 0; i < 70; i++) wideValue.put("field_" + i, i);
        emit("wide_struct", wideSchema, wideValue);

        // Arrays and maps (testFromConnectMapWith*, testToConnectMap*,
        // JsonSchemaConverterTest.testExplicitlyNamedNestedMapsWithNonStringKeys).
        emit("array_int32", SchemaBuilder.array(Schema.INT32_SCHEMA).build(), List.of(1, -1, 1000000));
        Map<String, Integer> m1 = new LinkedHashMap<>();
        m1.put("hi", 32);
        m1.put("there", 1);
        emit("map_string_keys", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), m1);
        emit("map_optional_string_keys",
            SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
            Collections.singletonMap("hi", 32));
        Map<Integer, String> m2 = new LinkedHashMap<>();
        m2.put(54, "a");
        m2.put(-1, null);
        emit("map_int_keys", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build(), m2);
        emit("map_named", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).name("foo.bar").build(),
            Collections.singletonMap("k", 1));
        Schema nestedMaps = SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA,
            SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA, Schema.OPTIONAL_INT32_SCHEMA).name("foo.bar").build()
        ).name("biz.baz").version(1).build();
        emit("nested_maps_non_string_keys", nestedMaps,
            Collections.singletonMap("foo", Collections.singletonMap("bar", 1)));

        // Defaults (JsonSchemaConverterTest.testComplexWithDefaults).
        Map<String, Integer> mapDefault = new LinkedHashMap<>();
        for (String k : new String[]{"one", "two", "three", "four", "five"}) mapDefault.put(k, k.length());
        Schema defaults = SchemaBuilder.struct().name("com.example.Defaults")
            .field("i", SchemaBuilder.int32().defaultValue(42).doc("int32 field").build())
            .field("s", SchemaBuilder.string().defaultValue("hi").build())
            .field("oi", SchemaBuilder.int32().optional().defaultValue(5).build())
            .field("os", SchemaBuilder.string().optional().defaultValue("dflt").build())
            .field("f", SchemaBuilder.float32().defaultValue(0.1f).build())
            .field("f2", SchemaBuilder.float32().defaultValue(12.0f).build())
            .field("f3", SchemaBuilder.float32().defaultValue(1.0E10f).build())
            .field("d", SchemaBuilder.float64().defaultValue(1.0E20).build())
            .field("d2", SchemaBuilder.float64().defaultValue(0.5).build())
            .field("d3", SchemaBuilder.float64().defaultValue(1.5E-7).build())
            .field("d4", SchemaBuilder.float64().defaultValue(123456789.0).build())
            .field("b", SchemaBuilder.bool().defaultValue(true).build())
            .field("i8", SchemaBuilder.int8().defaultValue((byte) -1).build())
            .field("l", SchemaBuilder.int64().defaultValue(-9000000000L).build())
            .field("bs", SchemaBuilder.bytes().defaultValue(new byte[]{0x41, (byte) 0xe9}).build())
            .field("arr", SchemaBuilder.array(Schema.FLOAT32_SCHEMA).defaultValue(List.of(1.5f, 2.0f)).build())
            .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).defaultValue(mapDefault).build())
            .field("dec", Decimal.builder(5).defaultValue(new BigDecimal("3.14159")).doc("decimal field").build())
            .field("dec2", Decimal.builder(2).defaultValue(new BigDecimal("1.50")).build())
            .field("date", Date.builder().defaultValue(Date.toLogical(Date.SCHEMA, 100)).build())
            .build();
        emit("field_defaults_set", defaults, new Struct(defaults)
            .put("i", 1).put("s", "x").put("oi", 6).put("os", "y").put("f", 1f).put("f2", 2f).put("f3", 3f)
            .put("d", 2.0).put("d2", 3.0).put("d3", 4.0).put("d4", 5.0).put("b", false).put("i8", (byte) 1)
            .put("l", 1L).put("bs", new byte[]{1}).put("arr", List.of(3f))
            .put("map", Collections.singletonMap("k", 2)).put("dec", new BigDecimal("0.10000"))
            .put("dec2", new BigDecimal("0.01")).put("date", Date.toLogical(Date.SCHEMA, 1)));
        emit("field_defaults_null_values", defaults, new Struct(defaults));
        emit("field_defaults_null_values_ignored", Map.of("ignore.default.for.nullables", "true"),
            defaults, new Struct(defaults));
        emit("field_defaults_numeric_decimals", Map.of("decimal.format", "NUMERIC"), defaults, new Struct(defaults));

        // Names, docs, versions, parameters.
        SchemaBuilder params = SchemaBuilder.struct().name("com.example.Row").version(3)
            .doc("A row:\ttab, \u001b escape, \u00e9 as is");
        for (String p : new String[]{"a", "b", "connect.name", "zeta", "io.confluent.connect.json.Hidden",
                "owner", "team", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"}) {
            params.parameter(p, p.toUpperCase());
        }
        Schema paramsSchema = params
            .field("id", SchemaBuilder.int64().doc("the id").build())
            .field("label", SchemaBuilder.string().optional().version(2).parameter("k", "v").build())
            .build();
        emit("doc_version_parameters", paramsSchema, new Struct(paramsSchema).put("id", 9L).put("label", "l"));

        // Enums and unions (testFromConnectEnum, testFromConnectUnion...).
        Schema enumSchema = SchemaBuilder.string().parameter("io.confluent.connect.json.Enum", "")
            .parameter("io.confluent.connect.json.Enum.one", "one")
            .parameter("io.confluent.connect.json.Enum.two", "two")
            .parameter("io.confluent.connect.json.Enum.<NULL>", "<NULL>").build();
        emit("enum", enumSchema, "two");
        Schema genEnum = SchemaBuilder.string().parameter("org.apache.kafka.connect.data.Enum", "")
            .parameter("org.apache.kafka.connect.data.Enum.one", "0")
            .parameter("org.apache.kafka.connect.data.Enum.two", "1").build();
        emit("enum_generalized", Map.of("generalized.sum.type.support", "true"), genEnum, "one");
        Schema union = SchemaBuilder.struct().name("io.confluent.connect.json.OneOf")
            .field("io.confluent.connect.json.OneOf.field.0", Schema.OPTIONAL_INT32_SCHEMA)
            .field("io.confluent.connect.json.OneOf.field.1", Schema.OPTIONAL_STRING_SCHEMA)
            .field("io.confluent.connect.json.OneOf.field.2", SchemaBuilder.struct().name("U")
                .field("a", Schema.INT8_SCHEMA).optional().build())
            .build();
        Schema unionHolder = SchemaBuilder.struct().field("u", union).field("v", union).build();
        emit("union", unionHolder, new Struct(unionHolder)
            .put("u", new Struct(union).put("io.confluent.connect.json.OneOf.field.1", "s"))
            .put("v", new Struct(union).put("io.confluent.connect.json.OneOf.field.2",
                new Struct(union.field("io.confluent.connect.json.OneOf.field.2").schema()).put("a", (byte) 3))));
        Schema genUnion = SchemaBuilder.struct().name("connect_union_0")
            .parameter("org.apache.kafka.connect.data.Union", "connect_union_0")
            .field("connect_union_field_0", Schema.OPTIONAL_INT32_SCHEMA)
            .field("connect_union_field_1", Schema.OPTIONAL_STRING_SCHEMA).build();
        emit("union_generalized", Map.of("generalized.sum.type.support", "true"), genUnion,
            new Struct(genUnion).put("connect_union_field_0", 5));

        // Schemas other producers write (a Java serializer of objects, hand-written ones).
        String user = "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"title\":\"User\",\"type\":\"object\","
            + "\"additionalProperties\":false,\"properties\":{\"name\":{\"type\":\"string\"},"
            + "\"age\":{\"type\":\"integer\"},\"email\":{\"oneOf\":[{\"type\":\"null\",\"title\":\"Not included\"},"
            + "{\"type\":\"string\"}]},\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
            + "\"score\":{\"type\":\"number\"},\"active\":{\"type\":\"boolean\"}},\"required\":[\"name\"]}";
        String userPayload = "{\"name\":\"a\",\"age\":3,\"email\":null,\"tags\":[\"x\"],\"score\":1.50,\"active\":true}";
        emitRead("read_pojo", user, userPayload);
        emitRead("read_pojo_optional_nonrequired", Map.of("use.optional.for.nonrequired", "true"), user,
            "{\"name\":\"a\"}");
        emitRead("read_type_lists",
            "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":[\"string\",\"null\"]},\"b\":{\"type\":[\"integer\",\"string\"]}}}",
            "{\"a\":\"x\",\"b\":5}");
        emitRead("read_refs",
            "{\"type\":\"object\",\"properties\":{\"home\":{\"$ref\":\"#/definitions/Address\"},"
                + "\"work\":{\"$ref\":\"#/definitions/Address\"}},\"definitions\":{\"Address\":{\"type\":\"object\","
                + "\"properties\":{\"street\":{\"type\":\"string\"},\"zip\":{\"type\":\"integer\"}}}}}",
            "{\"home\":{\"street\":\"s\",\"zip\":1},\"work\":{\"street\":\"w\",\"zip\":2}}");
        emitRead("read_all_of", Map.of("use.optional.for.nonrequired", "true"),
            "{\"allOf\":[{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}},\"required\":[\"id\"]},"
                + "{\"properties\":{\"n\":{\"type\":\"integer\"}}}]}",
            "{\"id\":\"i\",\"n\":2}");
        emitRead("read_enum_const",
            "{\"type\":\"object\",\"properties\":{\"color\":{\"type\":\"string\",\"enum\":[\"red\",\"green\",null]},"
                + "\"kind\":{\"const\":\"fixed\"}}}",
            "{\"color\":\"green\",\"kind\":\"fixed\"}");
        String anyOf = "{\"type\":\"object\",\"properties\":{\"v\":{\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"string\"},"
            + "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"}}}]}}}";
        emitRead("read_any_of_string", anyOf, "{\"v\":\"s\"}");
        emitRead("read_any_of_object", anyOf, "{\"v\":{\"x\":1}}");
        emitRead("read_any_of_generalized", Map.of("generalized.sum.type.support", "true"), anyOf, "{\"v\":7}");
        StringBuilder props = new StringBuilder();
        StringBuilder values = new StringBuilder();
        String[] propNames = {"zeta", "alpha", "customer_id", "order_id", "amount", "currency", "created", "b",
            "a", "status", "x", "y", "z", "longer_name_here", "q", "w", "e", "r", "t", "u"};
        for (int i = 0; i < propNames.length; i++) {
            if (i > 0) {
                props.append(',');
                values.append(',');
            }
            props.append('"').append(propNames[i]).append("\":{\"type\":\"integer\"}");
            values.append('"').append(propNames[i]).append("\":").append(i);
        }
        emitRead("read_properties_without_index", "{\"type\":\"object\",\"properties\":{" + props + "}}",
            "{" + values + "}");
        emitRead("read_some_indexes",
            "{\"type\":\"object\",\"properties\":{\"c\":{\"type\":\"string\",\"connect.index\":0},"
                + "\"b\":{\"type\":\"string\"},\"a\":{\"type\":\"string\",\"connect.index\":2},\"d\":{\"type\":\"string\"}}}",
            "{\"a\":\"A\",\"b\":\"B\",\"c\":\"C\",\"d\":\"D\"}");
        emitRead("read_maps_and_plain_numbers",
            "{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"object\",\"connect.type\":\"map\","
                + "\"additionalProperties\":{\"type\":\"number\"}},\"i\":{\"type\":\"integer\"},"
                + "\"when\":{\"type\":\"string\",\"format\":\"date-time\"}}}",
            "{\"m\":{\"k\":1.25,\"j\":-3},\"i\":12345678901,\"when\":\"2020-01-01T00:00:00Z\"}");
        emitRead("read_defaults",
            "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"default\":5},"
                + "\"s\":{\"type\":\"string\",\"default\":\"x\"},\"m\":{\"type\":\"number\",\"default\":1.50}}}",
            "{}");
        emitRead("read_draft4_integer_title",
            "{\"$schema\":\"http://json-schema.org/draft-04/schema#\",\"title\":\"Count\",\"type\":\"integer\",\"description\":\"a count\"}",
            "42");
    }
}
