// Records what Java's AvroData (Apicurio 2.6.13's copy of Confluent's
// io.confluent.connect.avro.AvroData, the newest on Maven Central; default AvroDataConfig; Avro
// 1.12.0) does with a set of Connect schemas and values, one JSON line a case, into
// tests/golden/registry/avro-data.jsonl, which registry/tests/avro_golden.rs compares our port
// with. Run it with tests/registry/capture-avro-golden.sh (it fetches the jars of
// tests/registry/pom.xml and runs this file with them on the class path).
//
// Each line has:
//   name          the case
//   connect       the schema and value as Apache's JsonConverter (schemas.enable=true) writes them
//   avro_schema   avroData.fromConnectSchema(schema).toString()
//   avro_hex      the Avro binary of avroData.fromConnectData(schema, value), written with a
//                 GenericDatumWriter of that schema (a NonRecordContainer unwrapped first)
//   connect_read  JsonConverter's envelope of avroData.toConnectData(parsed, decoded, 1): the
//                 schema text parsed again and the bytes read back with a GenericDatumReader, as
//                 a converter reads them from a registry whose version of the schema is 1
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.apicurio.registry.serde.avro.NonRecordContainer;
import io.apicurio.registry.utils.converter.avro.AvroData;
import io.apicurio.registry.utils.converter.avro.AvroDataConfig;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.connect.data.*;
import org.apache.kafka.connect.json.JsonConverter;

public class AvroGolden {
    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonConverter CONVERTER = new JsonConverter();
    static {
        CONVERTER.configure(Map.of("schemas.enable", "true"), false);
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }

    static String envelope(Schema schema, Object value) {
        return new String(CONVERTER.fromConnectData("t", schema, value), StandardCharsets.UTF_8);
    }

    static void emit(String name, Schema schema, Object value) throws Exception {
        AvroData avroData = new AvroData(new AvroDataConfig.Builder().build());
        org.apache.avro.Schema avro = avroData.fromConnectSchema(schema);
        String text = avro.toString();

        Object datum = avroData.fromConnectData(schema, value);
        if (datum instanceof NonRecordContainer) datum = ((NonRecordContainer<?>) datum).getValue();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        BinaryEncoder enc = EncoderFactory.get().binaryEncoder(bytes, null);
        new GenericDatumWriter<Object>(avro).write(datum, enc);
        enc.flush();

        // As a converter reads it: the schema text from the registry, the bytes, version 1.
        org.apache.avro.Schema parsed = new org.apache.avro.Schema.Parser().parse(text);
        Object decoded = new GenericDatumReader<Object>(parsed)
            .read(null, DecoderFactory.get().binaryDecoder(bytes.toByteArray(), null));
        SchemaAndValue read = new AvroData(new AvroDataConfig.Builder().build())
            .toConnectData(parsed, decoded, 1);

        System.out.println("{\"name\":" + JSON.writeValueAsString(name)
            + ",\"connect\":" + envelope(schema, value)
            + ",\"avro_schema\":" + JSON.writeValueAsString(text)
            + ",\"avro_hex\":\"" + hex(bytes.toByteArray()) + "\""
            + ",\"connect_read\":" + envelope(read.schema(), read.value())
            + "}");
    }

    static Schema decimal(int scale) { return Decimal.schema(scale); }

    public static void main(String[] args) throws Exception {
        // Primitives, each the whole value.
        emit("int8", Schema.INT8_SCHEMA, (byte) -5);
        emit("int16", Schema.INT16_SCHEMA, (short) 300);
        emit("int32", Schema.INT32_SCHEMA, -2147483648);
        emit("int64", Schema.INT64_SCHEMA, 9007199254740993L);
        emit("float32", Schema.FLOAT32_SCHEMA, 3.14f);
        emit("float64", Schema.FLOAT64_SCHEMA, -1.0E-300);
        emit("boolean", Schema.BOOLEAN_SCHEMA, true);
        emit("string", Schema.STRING_SCHEMA, "h\u00e9llo \"w\u00f6rld\" \u2603");
        emit("bytes", Schema.BYTES_SCHEMA, new byte[]{0, 1, (byte) 0x80, (byte) 0xff});
        emit("optional_int32", Schema.OPTIONAL_INT32_SCHEMA, 7);
        emit("optional_string", Schema.OPTIONAL_STRING_SCHEMA, "x");

        // Logical types.
        emit("decimal_default_precision", decimal(2), new BigDecimal("12345.67"));
        emit("decimal_precision_negative",
            Decimal.builder(3).parameter("connect.decimal.precision", "10").build(),
            new BigDecimal("-1.500"));
        emit("decimal_zero_scale_negative", decimal(0), new BigDecimal("-128"));
        emit("date", Date.SCHEMA, Date.toLogical(Date.SCHEMA, 19000));
        emit("time", Time.SCHEMA, Time.toLogical(Time.SCHEMA, 45296789));
        emit("timestamp", Timestamp.SCHEMA, Timestamp.toLogical(Timestamp.SCHEMA, 1700000000123L));

        // Every primitive and logical type as a field, required and optional.
        Schema allTypes = SchemaBuilder.struct()
            .field("i8", Schema.INT8_SCHEMA)
            .field("i16", Schema.INT16_SCHEMA)
            .field("i32", Schema.INT32_SCHEMA)
            .field("i64", Schema.INT64_SCHEMA)
            .field("f32", Schema.FLOAT32_SCHEMA)
            .field("f64", Schema.FLOAT64_SCHEMA)
            .field("b", Schema.BOOLEAN_SCHEMA)
            .field("s", Schema.STRING_SCHEMA)
            .field("bs", Schema.BYTES_SCHEMA)
            .field("oi8", Schema.OPTIONAL_INT8_SCHEMA)
            .field("oi16", Schema.OPTIONAL_INT16_SCHEMA)
            .field("oi64", Schema.OPTIONAL_INT64_SCHEMA)
            .field("of64", Schema.OPTIONAL_FLOAT64_SCHEMA)
            .field("ob", Schema.OPTIONAL_BOOLEAN_SCHEMA)
            .field("obs", Schema.OPTIONAL_BYTES_SCHEMA)
            .field("dec", Decimal.builder(4).optional().build())
            .field("day", Date.builder().optional().build())
            .field("tod", Time.builder().optional().build())
            .field("ts", Timestamp.builder().optional().build())
            .build();
        emit("struct_all_types", allTypes, new Struct(allTypes)
            .put("i8", (byte) 127).put("i16", (short) -32768).put("i32", 42).put("i64", -1L)
            .put("f32", 0.1f).put("f64", 2.5).put("b", false).put("s", "").put("bs", new byte[0])
            .put("oi8", (byte) -1).put("oi16", (short) 2).put("oi64", 1L << 40).put("of64", 1e20)
            .put("ob", true).put("obs", new byte[]{9})
            .put("dec", new BigDecimal("-0.0001"))
            .put("day", Date.toLogical(Date.SCHEMA, -1))
            .put("tod", Time.toLogical(Time.SCHEMA, 0))
            .put("ts", Timestamp.toLogical(Timestamp.SCHEMA, -1L)));
        emit("struct_nulls_in_optional_fields", allTypes, new Struct(allTypes)
            .put("i8", (byte) 0).put("i16", (short) 0).put("i32", 0).put("i64", 0L)
            .put("f32", 0f).put("f64", 0.0).put("b", true).put("s", "s").put("bs", new byte[]{1}));

        // Nested structs: unnamed ones become ConnectDefault, ConnectDefault2, ... in the order met.
        Schema innerUnnamed = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build();
        Schema deepest = SchemaBuilder.struct().field("z", Schema.STRING_SCHEMA).build();
        Schema innerUnnamed2 = SchemaBuilder.struct().field("y", Schema.INT64_SCHEMA)
            .field("deep", deepest).build();
        Schema nestedUnnamed = SchemaBuilder.struct()
            .field("a", innerUnnamed).field("b", innerUnnamed2).build();
        emit("nested_unnamed_structs", nestedUnnamed, new Struct(nestedUnnamed)
            .put("a", new Struct(innerUnnamed).put("x", 1))
            .put("b", new Struct(innerUnnamed2).put("y", 2L).put("deep", new Struct(deepest).put("z", "d"))));

        // Named types in and out of the enclosing namespace, an unnamed one inside a named one
        // (ConnectDefault keeps its own namespace) and a name without namespace (namespace "").
        Schema sameNs = SchemaBuilder.struct().name("com.example.Inner").field("v", Schema.INT32_SCHEMA).build();
        Schema otherNs = SchemaBuilder.struct().name("org.other.Thing").field("w", Schema.STRING_SCHEMA).build();
        Schema noNs = SchemaBuilder.struct().name("Plain").field("p", Schema.BOOLEAN_SCHEMA).build();
        Schema anon = SchemaBuilder.struct().field("q", Schema.INT8_SCHEMA).build();
        Schema named = SchemaBuilder.struct().name("com.example.Outer")
            .field("inner", sameNs).field("thing", otherNs).field("plain", noNs).field("anon", anon)
            .build();
        emit("nested_named_structs_namespaces", named, new Struct(named)
            .put("inner", new Struct(sameNs).put("v", 5))
            .put("thing", new Struct(otherNs).put("w", "t"))
            .put("plain", new Struct(noNs).put("p", true))
            .put("anon", new Struct(anon).put("q", (byte) 3)));

        // One struct used twice (then written by name), once required and once optional.
        Schema point = SchemaBuilder.struct().name("com.example.Point")
            .field("x", Schema.FLOAT64_SCHEMA).field("y", Schema.FLOAT64_SCHEMA).build();
        Schema optionalPoint = SchemaBuilder.struct().name("com.example.Point")
            .field("x", Schema.FLOAT64_SCHEMA).field("y", Schema.FLOAT64_SCHEMA).optional().build();
        Schema segment = SchemaBuilder.struct().name("com.example.Segment")
            .field("from", point).field("to", point).field("via", optionalPoint).build();
        emit("struct_used_twice", segment, new Struct(segment)
            .put("from", new Struct(point).put("x", 0.0).put("y", 1.0))
            .put("to", new Struct(point).put("x", 2.0).put("y", -3.5))
            .put("via", null));
        Schema anonPoint = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build();
        Schema twoAnon = SchemaBuilder.struct().field("p", anonPoint).field("q", anonPoint).build();
        emit("unnamed_struct_used_twice", twoAnon, new Struct(twoAnon)
            .put("p", new Struct(anonPoint).put("x", 1)).put("q", new Struct(anonPoint).put("x", 2)));
        // A named struct with parameters used twice: current Confluent (not Apicurio 2.6) also
        // writes the parameters on the field that refers to it by name.
        Schema tagged = SchemaBuilder.struct().name("com.example.Tagged")
            .parameter("owner", "team-a").field("t", Schema.STRING_SCHEMA).build();
        Schema twoTagged = SchemaBuilder.struct().name("com.example.Pair")
            .field("left", tagged).field("right", tagged).build();
        emit("struct_with_parameters_used_twice", twoTagged, new Struct(twoTagged)
            .put("left", new Struct(tagged).put("t", "l")).put("right", new Struct(tagged).put("t", "r")));
        // The same name with other parameters: also written by name (Avro names are unique), so
        // only those field-level parameters keep team-b.
        Schema taggedB = SchemaBuilder.struct().name("com.example.Tagged")
            .parameter("owner", "team-b").field("t", Schema.STRING_SCHEMA).build();
        Schema mixedTagged = SchemaBuilder.struct().name("com.example.Pair")
            .field("left", tagged).field("right", taggedB).build();
        emit("same_name_other_parameters", mixedTagged, new Struct(mixedTagged)
            .put("left", new Struct(tagged).put("t", "l")).put("right", new Struct(taggedB).put("t", "r")));

        // Arrays.
        Schema ints = SchemaBuilder.array(Schema.INT32_SCHEMA).build();
        emit("array_int32", ints, List.of(1, -1, 1000000));
        emit("array_empty", ints, List.of());
        Schema optStrings = SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build();
        Schema arrays = SchemaBuilder.struct()
            .field("names", optStrings)
            .field("points", SchemaBuilder.array(innerUnnamed).build())
            .field("amounts", SchemaBuilder.array(decimal(2)).optional().build())
            .build();
        emit("arrays_in_struct", arrays, new Struct(arrays)
            .put("names", Arrays.asList("a", null, "c"))
            .put("points", List.of(new Struct(innerUnnamed).put("x", 7), new Struct(innerUnnamed).put("x", 8)))
            .put("amounts", List.of(new BigDecimal("1.00"), new BigDecimal("-2.55"))));

        // Maps: string keys are Avro maps, other keys arrays of MapEntry records. Java writes
        // (and reads) an Avro map in the order of a HashMap of its keys: string keys here are in
        // that order already, so the bytes are the same as in insertion order. (No null key:
        // JsonConverter writes a null string key as "null".)
        Map<String, Long> counts = new LinkedHashMap<>();
        counts.put("one", 1L);
        counts.put("two", 2L);
        emit("map_string_keys", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build(), counts);
        Map<Integer, String> byId = new LinkedHashMap<>();
        byId.put(1, "a");
        byId.put(-2, "b");
        emit("map_int_keys", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build(), byId);
        // (One unnamed non-string-key map per schema: every such map is a record named
        // io.confluent.connect.avro.MapEntry, so a second one with other types is written as a
        // reference to the first and the schema no longer describes its data, in Java as here.)
        Schema maps = SchemaBuilder.struct()
            .field("opt_values", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_FLOAT32_SCHEMA).build())
            .field("opt_keys", SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA, Schema.INT32_SCHEMA).build())
            .field("named_map", SchemaBuilder.map(Schema.INT8_SCHEMA, Schema.BOOLEAN_SCHEMA)
                .name("com.example.Flags").build())
            .build();
        Map<String, Float> optValues = new LinkedHashMap<>();
        optValues.put("a", 1.5f);
        optValues.put("b", null);
        Map<String, Integer> optKeys = new LinkedHashMap<>();
        optKeys.put("k", 1);
        optKeys.put("l", 2);
        Map<Byte, Boolean> flags = new LinkedHashMap<>();
        flags.put((byte) 1, true);
        emit("maps_in_struct", maps, new Struct(maps).put("opt_values", optValues).put("opt_keys", optKeys)
            .put("named_map", flags));
        Schema structMaps = SchemaBuilder.struct()
            .field("by_id", SchemaBuilder.map(Schema.INT64_SCHEMA, innerUnnamed).optional().build())
            .field("none", SchemaBuilder.map(Schema.STRING_SCHEMA, innerUnnamed).optional().build())
            .build();
        Map<Long, Struct> structValues = new LinkedHashMap<>();
        structValues.put(10L, new Struct(innerUnnamed).put("x", 10));
        structValues.put(-10L, new Struct(innerUnnamed).put("x", -10));
        emit("optional_maps_of_structs", structMaps, new Struct(structMaps).put("by_id", structValues));

        // Optional structs, set and null.
        Schema optInner = SchemaBuilder.struct().name("com.example.Opt").field("n", Schema.INT32_SCHEMA)
            .optional().build();
        Schema withOpt = SchemaBuilder.struct().field("o1", optInner).field("o2", optInner).build();
        emit("optional_structs", withOpt, new Struct(withOpt).put("o1", new Struct(optInner).put("n", 3)));
        emit("optional_struct_top_level", optInner, new Struct(optInner).put("n", 4));

        // Fields with defaults; an optional field with a non-null default is [T, "null"].
        Schema defaults = SchemaBuilder.struct().name("com.example.Defaults")
            .field("i", SchemaBuilder.int32().defaultValue(42).build())
            .field("s", SchemaBuilder.string().defaultValue("hi").build())
            .field("oi", SchemaBuilder.int32().optional().defaultValue(5).build())
            .field("os", SchemaBuilder.string().optional().defaultValue("dflt").build())
            .field("f", SchemaBuilder.float32().defaultValue(0.1f).build())
            .field("d", SchemaBuilder.float64().defaultValue(1.0E20).build())
            .field("d2", SchemaBuilder.float64().defaultValue(0.5).build())
            .field("b", SchemaBuilder.bool().defaultValue(true).build())
            .field("i8", SchemaBuilder.int8().defaultValue((byte) -1).build())
            .field("l", SchemaBuilder.int64().defaultValue(-9000000000L).build())
            .field("bs", SchemaBuilder.bytes().defaultValue(new byte[]{0x41, (byte) 0xe9}).build())
            .field("arr", SchemaBuilder.array(Schema.INT32_SCHEMA).defaultValue(List.of(1, 2)).build())
            .field("dec", Decimal.builder(1).defaultValue(new BigDecimal("2.5")).build())
            .build();
        emit("field_defaults_set", defaults, new Struct(defaults)
            .put("i", 1).put("s", "x").put("oi", 6).put("os", "y").put("f", 1f).put("d", 2.0)
            .put("d2", 3.0).put("b", false).put("i8", (byte) 1).put("l", 1L).put("bs", new byte[]{1})
            .put("arr", List.of(3)).put("dec", new BigDecimal("0.1")));
        emit("field_defaults_null_values", defaults, new Struct(defaults));

        // Doc, version and parameters on the schemas.
        Schema documented = SchemaBuilder.struct().name("com.example.Row").version(3)
            .doc("A row:\ttab, \u001b escape, \u00e9 as is")
            .parameter("a", "1").parameter("b", "2")
            .field("id", SchemaBuilder.int64().doc("the id").build())
            .field("label", SchemaBuilder.string().optional().version(2).parameter("k", "v").build())
            .build();
        emit("doc_version_parameters", documented, new Struct(documented).put("id", 9L).put("label", "l"));
        emit("string_with_doc_version_parameters",
            SchemaBuilder.string().name("com.example.Code").version(1).doc("a code").parameter("p", "q").build(),
            "abc");
    }
}
