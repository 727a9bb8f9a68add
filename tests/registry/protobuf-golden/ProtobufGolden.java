// Records what Confluent's ProtobufData (io.confluent.connect.protobuf, compiled from the
// schema-registry sources by tests/registry/capture-protobuf-golden.sh, default
// ProtobufDataConfig) does with a set of Connect schemas and values, one JSON line a case, into
// tests/golden/registry/protobuf-data.jsonl, which registry/tests/protobuf_golden.rs compares our
// port with.
//
// Each line has:
//   name     the case
//   connect  the schema and value as Apache's JsonConverter (schemas.enable=true) writes them
//   proto    the registered text: fromConnectSchema(schema).canonicalString()
//   hex      the message ProtobufConverter serializes: fromConnectData(schema, value).getValue()
//            as bytes (lower-case hex; no magic byte, schema id or message indexes)
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Message;
import io.confluent.connect.protobuf.ProtobufData;
import io.confluent.kafka.serializers.protobuf.ProtobufSchemaAndValue;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;

public class ProtobufGolden {
    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonConverter CONVERTER = new JsonConverter();
    static {
        CONVERTER.configure(Map.of("schemas.enable", "true"), false);
    }

    static void emit(String name, Schema schema, Object value) throws Exception {
        // A fresh ProtobufData a case, as a converter's first record.
        ProtobufData data = new ProtobufData();
        String proto = data.fromConnectSchema(schema).canonicalString();
        ProtobufSchemaAndValue sv = new ProtobufData().fromConnectData(schema, value);
        String hex = HexFormat.of().formatHex(((Message) sv.getValue()).toByteArray());
        String connect = new String(CONVERTER.fromConnectData("t", schema, value), StandardCharsets.UTF_8);
        System.out.println("{\"name\":" + JSON.writeValueAsString(name)
            + ",\"connect\":" + connect
            + ",\"proto\":" + JSON.writeValueAsString(proto)
            + ",\"hex\":" + JSON.writeValueAsString(hex)
            + "}");
    }

    public static void main(String[] args) throws Exception {
        // Top-level primitives: the wrapper messages of google/protobuf/wrappers.proto.
        emit("int32_root", Schema.INT32_SCHEMA, 5);
        emit("int8_root", Schema.INT8_SCHEMA, (byte) -5);
        emit("string_root", Schema.STRING_SCHEMA, "h\u00e9llo");
        emit("boolean_root", Schema.BOOLEAN_SCHEMA, true);
        emit("float64_root", Schema.FLOAT64_SCHEMA, 12.25);
        emit("int64_root", Schema.INT64_SCHEMA, -9007199254740993L);
        emit("bytes_root", Schema.BYTES_SCHEMA, new byte[]{0, (byte) 0x80});

        // Every primitive as a field (ProtobufDataTest.testFromConnectComplex's primitives).
        Schema primitives = SchemaBuilder.struct()
            .field("int8", Schema.INT8_SCHEMA)
            .field("int16", Schema.INT16_SCHEMA)
            .field("int32", Schema.INT32_SCHEMA)
            .field("int64", Schema.INT64_SCHEMA)
            .field("float32", Schema.FLOAT32_SCHEMA)
            .field("float64", Schema.FLOAT64_SCHEMA)
            .field("boolean", Schema.BOOLEAN_SCHEMA)
            .field("string", Schema.STRING_SCHEMA)
            .field("bytes", Schema.BYTES_SCHEMA)
            .build();
        emit("primitives", primitives, new Struct(primitives)
            .put("int8", (byte) -12).put("int16", (short) 300).put("int32", -1).put("int64", 1234567890123L)
            .put("float32", 12.2f).put("float64", -0.5).put("boolean", true).put("string", "foo")
            .put("bytes", new byte[]{0, 1, (byte) 0xff}));
        emit("primitives_zero", primitives, new Struct(primitives)
            .put("int8", (byte) 0).put("int16", (short) 0).put("int32", 0).put("int64", 0L)
            .put("float32", 0f).put("float64", 0.0).put("boolean", false).put("string", "")
            .put("bytes", new byte[0]));

        // Optional fields, set and null.
        Schema optional = SchemaBuilder.struct().name("Optional")
            .field("a", Schema.OPTIONAL_INT32_SCHEMA)
            .field("b", Schema.OPTIONAL_STRING_SCHEMA)
            .field("c", Schema.OPTIONAL_INT16_SCHEMA)
            .field("d", Schema.OPTIONAL_BOOLEAN_SCHEMA)
            .build();
        emit("optional_set", optional, new Struct(optional).put("a", 7).put("b", "x").put("c", (short) -2).put("d", true));
        emit("optional_null", optional, new Struct(optional));

        // Nested structs, named and unnamed.
        Schema inner = SchemaBuilder.struct().name("Inner").field("x", Schema.INT64_SCHEMA).build();
        Schema nested = SchemaBuilder.struct().name("Outer")
            .field("id", Schema.STRING_SCHEMA)
            .field("inner", inner)
            .field("opt_inner", SchemaBuilder.struct().name("Inner").field("x", Schema.INT64_SCHEMA).optional().build())
            .build();
        emit("nested_named", nested, new Struct(nested).put("id", "a")
            .put("inner", new Struct(inner).put("x", 3L)));
        Schema anonA = SchemaBuilder.struct().field("p", Schema.INT32_SCHEMA).build();
        Schema anonB = SchemaBuilder.struct().field("q", Schema.STRING_SCHEMA)
            .field("deep", SchemaBuilder.struct().field("r", Schema.BOOLEAN_SCHEMA).build()).build();
        Schema unnamed = SchemaBuilder.struct()
            .field("a", anonA)
            .field("b", anonB)
            .build();
        emit("nested_unnamed", unnamed, new Struct(unnamed)
            .put("a", new Struct(anonA).put("p", 1))
            .put("b", new Struct(anonB).put("q", "z").put("deep", new Struct(anonB.field("deep").schema()).put("r", true))));
        // A struct field named as its schema.
        Schema item = SchemaBuilder.struct().name("item").field("v", Schema.INT32_SCHEMA).build();
        Schema sameName = SchemaBuilder.struct().name("Holder").field("item", item).build();
        emit("struct_named_as_field", sameName, new Struct(sameName).put("item", new Struct(item).put("v", 2)));

        // Arrays.
        Schema point = SchemaBuilder.struct().name("Point").field("x", Schema.INT32_SCHEMA).field("y", Schema.INT32_SCHEMA).build();
        Schema arrays = SchemaBuilder.struct().name("Arrays")
            .field("ints", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
            .field("strings", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
            .field("points", SchemaBuilder.array(point).build())
            .field("small", SchemaBuilder.array(Schema.INT16_SCHEMA).build())
            .build();
        emit("arrays", arrays, new Struct(arrays)
            .put("ints", Arrays.asList(1, -1, 300))
            .put("strings", Arrays.asList("a", "", "c"))
            .put("points", Arrays.asList(new Struct(point).put("x", 1).put("y", 2), new Struct(point).put("x", 0).put("y", -3)))
            .put("small", Arrays.asList((short) 5)));

        // Arrays and maps of unnamed structs, counted with the other unnamed schemas.
        Schema cell = SchemaBuilder.struct().field("v", Schema.OPTIONAL_STRING_SCHEMA).build();
        Schema grid = SchemaBuilder.struct().name("Grid")
            .field("cells", SchemaBuilder.array(cell).build())
            .field("by_name", SchemaBuilder.map(Schema.STRING_SCHEMA, cell).build())
            .build();
        emit("unnamed_in_array_and_map", grid, new Struct(grid)
            .put("cells", Arrays.asList(new Struct(cell).put("v", "a"), new Struct(cell)))
            .put("by_name", Map.of("k", new Struct(cell).put("v", "b"))));

        // Maps: string keys, int keys, struct values, named.
        Map<String, Integer> sm = new LinkedHashMap<>();
        sm.put("one", 1);
        sm.put("two", 2);
        Map<Integer, String> im = new LinkedHashMap<>();
        im.put(7, "seven");
        Map<String, Struct> pm = new LinkedHashMap<>();
        pm.put("origin", new Struct(point).put("x", 0).put("y", 0));
        Schema maps = SchemaBuilder.struct().name("Maps")
            .field("string_map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
            .field("int_map", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
            .field("point_map", SchemaBuilder.map(Schema.STRING_SCHEMA, point).optional().build())
            .field("named_map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).name("my_counts").build())
            .build();
        Map<String, Long> nm = new LinkedHashMap<>();
        nm.put("k", 9L);
        emit("maps", maps, new Struct(maps).put("string_map", sm).put("int_map", im).put("point_map", pm).put("named_map", nm));

        // Logical types.
        Schema logical = SchemaBuilder.struct().name("Logical")
            .field("decimal", Decimal.schema(2))
            .field("date", Date.SCHEMA)
            .field("time", Time.SCHEMA)
            .field("timestamp", Timestamp.SCHEMA)
            .build();
        emit("logical", logical, new Struct(logical)
            .put("decimal", new BigDecimal("-1234.56"))
            .put("date", Date.toLogical(Date.SCHEMA, 19000))
            .put("time", Time.toLogical(Time.SCHEMA, 45296789))
            .put("timestamp", Timestamp.toLogical(Timestamp.SCHEMA, 1700000000123L)));
        Schema decimalPrecision = SchemaBuilder.struct()
            .field("amount", Decimal.builder(4).parameter("connect.decimal.precision", "10").build())
            .field("opt", Decimal.builder(0).optional().build())
            .build();
        emit("decimal_precision", decimalPrecision, new Struct(decimalPrecision)
            .put("amount", new BigDecimal("3.1416")).put("opt", new BigDecimal("12345678901234567890")));
        Schema optionalLogical = SchemaBuilder.struct().name("OptLogical")
            .field("date", Date.builder().optional().build())
            .field("timestamp", Timestamp.builder().optional().build())
            .build();
        emit("logical_optional_null", optionalLogical, new Struct(optionalLogical)
            .put("timestamp", Timestamp.toLogical(Timestamp.SCHEMA, -1L)));

        // A named schema with a package.
        Schema person = SchemaBuilder.struct().name("com.example.people.Person")
            .field("name", Schema.STRING_SCHEMA)
            .field("age", Schema.OPTIONAL_INT32_SCHEMA)
            .field("address", SchemaBuilder.struct().name("com.example.people.Address")
                .field("street", Schema.STRING_SCHEMA).build())
            .build();
        emit("named_with_package", person, new Struct(person).put("name", "Ann").put("age", 41)
            .put("address", new Struct(person.field("address").schema()).put("street", "Main St")));

        // Tag and Type parameters (as read back from Protobuf).
        Schema tagged = SchemaBuilder.struct().name("Tagged")
            .field("b", SchemaBuilder.int64().parameter("io.confluent.connect.protobuf.Tag", "5")
                .parameter("io.confluent.connect.protobuf.Type", "uint64").build())
            .field("a", SchemaBuilder.int32().parameter("io.confluent.connect.protobuf.Type", "sint32").build())
            .field("c", SchemaBuilder.int64().parameter("io.confluent.connect.protobuf.Type", "fixed32").build())
            .build();
        emit("tag_and_type_parameters", tagged, new Struct(tagged).put("b", -1L).put("a", -3).put("c", 4000000000L));
    }
}
