// Records what Apicurio's ProtobufConverter does with a set of Connect schemas and values, one
// JSON line a case, into tests/golden/registry/apicurio-protobuf-data.jsonl, which
// registry/tests/apicurio_protobuf_golden.rs compares our port with. Compiled and run by
// tests/registry/capture-apicurio-protobuf-golden.sh against Apicurio's own classes:
// io.apicurio.registry.utils.converter.protobuf.ProtobufData from the Apicurio Registry sources
// (the converter is not in a release yet) and FileDescriptorUtils of Apicurio 3.3.3's
// apicurio-registry-protobuf-schema-utilities.
//
// What the converter does, as the lines record it (ProtobufConverter -> ProtobufKafkaSerializer ->
// ProtobufSerializer / ProtobufSchemaParser, 3.x defaults: send-type-ref on, send-indexes off):
//   writing: message = ProtobufData.fromConnectData(schema, value); the registered text is
//            FileDescriptorUtils.fileDescriptorToProtoFile(message file).toSchema(); the bytes
//            after magic byte 0 and the 4-byte content id are Ref{name = the message's simple
//            name}, length-delimited, then the message.
//   reading: the registered text is parsed as ProtobufSchemaParser.parseSchema does, the Ref read
//            and the message of that name parsed from the rest; ProtobufData.toConnectData.
//
// Each line has:
//   name     the case
//   connect  the schema and value as Apache's JsonConverter (schemas.enable=true) writes them
//   error    when Java's converter refuses the value (building the message or printing its
//            text): the exception's class and message (no proto, hex or read then)
//   proto    the registered text
//   hex      the bytes after the 5-byte header (Ref, then the message), lower-case hex
//   read     what reading those bytes back gives, as JsonConverter writes it
//
// The `produced` cases are records of a producer application with generated classes and
// Apicurio's ProtobufKafkaSerializer (what a sink's converter reads most): their text is the
// producer's .proto as the serializer registers it (parsed, then printed by
// FileDescriptorUtils), their bytes the Ref and the message (given as protobuf JSON); they have
// no `connect`, and `produced: true`.
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.DescriptorProtos;
import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.squareup.wire.schema.internal.parser.MessageElement;
import com.squareup.wire.schema.internal.parser.ProtoFileElement;
import com.squareup.wire.schema.internal.parser.ProtoParser;
import com.google.protobuf.util.JsonFormat;
import io.apicurio.registry.utils.converter.protobuf.ProtobufData;
import io.apicurio.registry.utils.protobuf.schema.FileDescriptorUtils;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;

public class ApicurioProtobufGolden {
    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonConverter CONVERTER = new JsonConverter();
    static {
        CONVERTER.configure(Map.of("schemas.enable", "true"), false);
    }

    /** serde-common-protobuf's ref.proto: message Ref { string name = 1; } */
    static final Descriptors.Descriptor REF;
    static {
        try {
            DescriptorProtos.FileDescriptorProto file = DescriptorProtos.FileDescriptorProto.newBuilder()
                .setName("ref.proto").setPackage("io.apicurio.registry.serde.protobuf.ref").setSyntax("proto3")
                .addMessageType(DescriptorProtos.DescriptorProto.newBuilder().setName("Ref")
                    .addField(DescriptorProtos.FieldDescriptorProto.newBuilder().setName("name").setNumber(1)
                        .setLabel(DescriptorProtos.FieldDescriptorProto.Label.LABEL_OPTIONAL)
                        .setType(DescriptorProtos.FieldDescriptorProto.Type.TYPE_STRING)))
                .build();
            REF = Descriptors.FileDescriptor.buildFrom(file, new Descriptors.FileDescriptor[0])
                .findMessageTypeByName("Ref");
        } catch (Exception e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** ProtobufSchemaParser.parseSchema on a text without references. */
    static Descriptors.FileDescriptor parseSchema(String text) throws Exception {
        ProtoFileElement fileElem = ProtoParser.Companion.parse(FileDescriptorUtils.DEFAULT_LOCATION, text);
        MessageElement firstMessage = FileDescriptorUtils.firstMessage(fileElem);
        if (firstMessage != null) {
            try {
                Descriptors.Descriptor descriptor = FileDescriptorUtils.toDescriptor(firstMessage.getName(),
                    fileElem, new HashMap<>());
                if (descriptor == null) {
                    return FileDescriptorUtils.protoFileToFileDescriptor(fileElem);
                }
                return descriptor.getFile();
            } catch (IllegalStateException ise) {
                return FileDescriptorUtils.protoFileToFileDescriptor(fileElem);
            }
        }
        return FileDescriptorUtils.protoFileToFileDescriptor(fileElem);
    }

    static void emit(String name, Schema schema, Object value) throws Exception {
        String connect = new String(CONVERTER.fromConnectData("t", schema, value), StandardCharsets.UTF_8);
        StringBuilder line = new StringBuilder("{\"name\":" + JSON.writeValueAsString(name) + ",\"connect\":" + connect);
        // A fresh ProtobufData a case, as a converter's first record.
        DynamicMessage message;
        String proto;
        try {
            message = new ProtobufData().fromConnectData(schema, value);
            proto = FileDescriptorUtils.fileDescriptorToProtoFile(message.getDescriptorForType().getFile().toProto())
                .toSchema();
        } catch (RuntimeException e) {
            System.out.println(line + ",\"error\":" + JSON.writeValueAsString(e.getClass().getName() + ": " + e.getMessage()) + "}");
            return;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        DynamicMessage.newBuilder(REF).setField(REF.findFieldByName("name"), message.getDescriptorForType().getName())
            .build().writeDelimitedTo(out);
        message.writeTo(out);
        byte[] bytes = out.toByteArray();

        // Read back as the deserializer does, from the registered text.
        Descriptors.FileDescriptor file = parseSchema(proto);
        ByteArrayInputStream in = new ByteArrayInputStream(bytes);
        DynamicMessage.Builder refBuilder = DynamicMessage.newBuilder(REF);
        refBuilder.mergeDelimitedFrom(in);
        DynamicMessage ref = refBuilder.build();
        Descriptors.Descriptor descriptor = file.findMessageTypeByName((String) ref.getField(REF.findFieldByName("name")));
        DynamicMessage read = DynamicMessage.parseFrom(descriptor, in);
        SchemaAndValue sv = new ProtobufData().toConnectData(read);
        String readJson = new String(CONVERTER.fromConnectData("t", sv.schema(), sv.value()), StandardCharsets.UTF_8);

        System.out.println(line
            + ",\"proto\":" + JSON.writeValueAsString(proto)
            + ",\"hex\":" + JSON.writeValueAsString(HexFormat.of().formatHex(bytes))
            + ",\"read\":" + readJson
            + "}");
    }

    static void emitProduced(String name, String producerProto, String messageName, String json) throws Exception {
        Descriptors.FileDescriptor producerFile = parseSchema(producerProto);
        Descriptors.Descriptor type = producerFile.findMessageTypeByName(messageName);
        DynamicMessage.Builder b = DynamicMessage.newBuilder(type);
        JsonFormat.parser().merge(json, b);
        DynamicMessage message = b.build();
        String proto = FileDescriptorUtils.fileDescriptorToProtoFile(producerFile.toProto()).toSchema();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        DynamicMessage.newBuilder(REF).setField(REF.findFieldByName("name"), type.getName()).build().writeDelimitedTo(out);
        message.writeTo(out);
        byte[] bytes = out.toByteArray();

        Descriptors.FileDescriptor file = parseSchema(proto);
        ByteArrayInputStream in = new ByteArrayInputStream(bytes);
        DynamicMessage.Builder refBuilder = DynamicMessage.newBuilder(REF);
        refBuilder.mergeDelimitedFrom(in);
        Descriptors.Descriptor descriptor = file.findMessageTypeByName((String) refBuilder.build().getField(REF.findFieldByName("name")));
        SchemaAndValue sv = new ProtobufData().toConnectData(DynamicMessage.parseFrom(descriptor, in));
        String readJson = new String(CONVERTER.fromConnectData("t", sv.schema(), sv.value()), StandardCharsets.UTF_8);
        System.out.println("{\"name\":" + JSON.writeValueAsString(name) + ",\"produced\":true"
            + ",\"proto\":" + JSON.writeValueAsString(proto)
            + ",\"hex\":" + JSON.writeValueAsString(HexFormat.of().formatHex(bytes))
            + ",\"read\":" + readJson
            + "}");
    }

    public static void main(String[] args) throws Exception {
        // Every primitive, required, unnamed root.
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
            .put("float32", 12.2f).put("float64", -0.5).put("boolean", true).put("string", "h\u00e9llo")
            .put("bytes", new byte[]{0, 1, (byte) 0xff}));
        // Proto3 defaults are not written and read back as the defaults.
        emit("primitives_defaults", primitives, new Struct(primitives)
            .put("int8", (byte) 0).put("int16", (short) 0).put("int32", 0).put("int64", 0L)
            .put("float32", 0f).put("float64", 0.0).put("boolean", false).put("string", "")
            .put("bytes", new byte[0]));

        // Optional fields: proto3 `optional` (explicit presence), printed after the others.
        Schema optional = SchemaBuilder.struct().name("com.example.Optionals")
            .field("id", Schema.INT64_SCHEMA)
            .field("small", Schema.OPTIONAL_INT8_SCHEMA)
            .field("count", Schema.OPTIONAL_INT32_SCHEMA)
            .field("name", Schema.OPTIONAL_STRING_SCHEMA)
            .field("flag", Schema.OPTIONAL_BOOLEAN_SCHEMA)
            .field("blob", Schema.OPTIONAL_BYTES_SCHEMA)
            .field("ratio", Schema.OPTIONAL_FLOAT64_SCHEMA)
            .field("tail", Schema.STRING_SCHEMA)
            .build();
        emit("optionals_set", optional, new Struct(optional).put("id", 7L).put("small", (byte) 3).put("count", 42)
            .put("name", "n").put("flag", true).put("blob", new byte[]{9}).put("ratio", 0.25).put("tail", "t"));
        emit("optionals_zero", optional, new Struct(optional).put("id", 7L).put("small", (byte) 0).put("count", 0)
            .put("name", "").put("flag", false).put("blob", new byte[0]).put("ratio", 0.0).put("tail", "t"));
        emit("optionals_null", optional, new Struct(optional).put("id", 7L).put("tail", "t"));

        // Nested structs, named and unnamed, required and optional; the same schema twice is one message.
        Schema address = SchemaBuilder.struct().name("com.example.Address")
            .field("street", Schema.STRING_SCHEMA).field("zip", Schema.OPTIONAL_INT32_SCHEMA).build();
        Schema optionalAddress = SchemaBuilder.struct().name("com.example.Address")
            .field("street", Schema.STRING_SCHEMA).field("zip", Schema.OPTIONAL_INT32_SCHEMA).optional().build();
        Schema geo = SchemaBuilder.struct().field("lat", Schema.FLOAT64_SCHEMA).field("lon", Schema.FLOAT64_SCHEMA).build();
        Schema person = SchemaBuilder.struct().name("com.example.Person")
            .field("name", Schema.STRING_SCHEMA)
            .field("home", address)
            .field("work", address)
            .field("previous", optionalAddress)
            .field("geo", geo)
            .build();
        emit("nested_structs", person, new Struct(person).put("name", "ann")
            .put("home", new Struct(address).put("street", "Main 1").put("zip", 1000))
            .put("work", new Struct(address).put("street", "Dock 2"))
            .put("previous", new Struct(optionalAddress).put("street", "Old 3").put("zip", 0))
            .put("geo", new Struct(geo).put("lat", 1.5).put("lon", -2.25)));
        emit("nested_structs_unset", person, new Struct(person).put("name", "bob")
            .put("home", new Struct(address).put("street", ""))
            .put("work", new Struct(address).put("street", "w"))
            .put("geo", new Struct(geo).put("lat", 0.0).put("lon", 0.0)));

        // Arrays: of primitives, of int16 (json_name hint), of structs, of arrays (a wrapper message).
        Schema item = SchemaBuilder.struct().name("Item").field("sku", Schema.STRING_SCHEMA)
            .field("qty", Schema.INT32_SCHEMA).build();
        Schema arrays = SchemaBuilder.struct().name("orders.Order")
            .field("ids", SchemaBuilder.array(Schema.INT64_SCHEMA).build())
            .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
            .field("shorts", SchemaBuilder.array(Schema.INT16_SCHEMA).build())
            .field("items", SchemaBuilder.array(item).build())
            .field("matrix", SchemaBuilder.array(SchemaBuilder.array(Schema.INT32_SCHEMA).build()).build())
            .build();
        emit("arrays", arrays, new Struct(arrays)
            .put("ids", List.of(1L, -1L, 300L)).put("tags", List.of("a", "", "c"))
            .put("shorts", List.of((short) -2, (short) 7))
            .put("items", List.of(new Struct(item).put("sku", "x").put("qty", 2), new Struct(item).put("sku", "y").put("qty", 0)))
            .put("matrix", List.of(List.of(1, 2), List.of(), List.of(3))));
        emit("arrays_empty", arrays, new Struct(arrays)
            .put("ids", List.of()).put("shorts", List.of()).put("items", List.of()).put("matrix", List.of()));

        // Maps (string keys only): of primitives, int8 values, structs, arrays.
        Map<String, Integer> counts = new LinkedHashMap<>();
        counts.put("a", 1);
        counts.put("b", 0);
        counts.put("", 5);
        Map<String, Byte> bytesMap = new LinkedHashMap<>();
        bytesMap.put("x", (byte) -1);
        Map<String, Struct> itemsMap = new LinkedHashMap<>();
        itemsMap.put("first", new Struct(item).put("sku", "s").put("qty", 1));
        Map<String, List<String>> listMap = new LinkedHashMap<>();
        listMap.put("l", List.of("p", "q"));
        Schema maps = SchemaBuilder.struct().name("Maps")
            .field("counts", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
            .field("tiny", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT8_SCHEMA).optional().build())
            .field("items", SchemaBuilder.map(Schema.STRING_SCHEMA, item).build())
            .field("lists", SchemaBuilder.map(Schema.STRING_SCHEMA, SchemaBuilder.array(Schema.STRING_SCHEMA).build()).build())
            .build();
        emit("maps", maps, new Struct(maps).put("counts", counts).put("tiny", bytesMap).put("items", itemsMap)
            .put("lists", listMap));
        Schema intKeys = SchemaBuilder.struct()
            .field("m", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build()).build();
        emit("map_int_keys", intKeys, new Struct(intKeys).put("m", Map.of(1, "one")));

        // Names that are not protobuf identifiers: scrubbed, the Connect name kept in json_name.
        Schema odd = SchemaBuilder.struct().name("my-ns.odd record")
            .field("user-id", Schema.INT32_SCHEMA)
            .field("first.name", Schema.OPTIONAL_STRING_SCHEMA)
            .field("1st", Schema.INT16_SCHEMA)
            .field("snake_case", Schema.STRING_SCHEMA)
            .field("sub-record", SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build())
            .build();
        emit("scrubbed_names", odd, new Struct(odd).put("user-id", 5).put("first.name", "f").put("1st", (short) 1)
            .put("snake_case", "s").put("sub-record", new Struct(odd.field("sub-record").schema()).put("x", 1)));

        // A quote, a backslash and a character beyond the BMP (two UTF-16 units: `__`) in names.
        Schema quotes = SchemaBuilder.struct().name("ns.quoted")
            .field("a\"b", Schema.STRING_SCHEMA)
            .field("c\\d", Schema.INT8_SCHEMA)
            .field("smile\ud83d\ude00", Schema.BOOLEAN_SCHEMA)
            .build();
        emit("quote_and_backslash", quotes, new Struct(quotes).put("a\"b", "h").put("c\\d", (byte) 1)
            .put("smile\ud83d\ude00", true));
        // A scrubbed name with `__` inside and a json_name: FileDescriptorUtils' default json name
        // of it fails (StringIndexOutOfBoundsException).
        Schema doubled = SchemaBuilder.struct().name("ns.Doubled").field("say \"hi\"", Schema.STRING_SCHEMA).build();
        emit("double_underscore_json_name", doubled, new Struct(doubled).put("say \"hi\"", "h"));
        // Letters beyond ASCII are kept by the scrubbing, and protobuf refuses them.
        Schema unicode = SchemaBuilder.struct().name("ns.Unicode").field("\u00fcber", Schema.INT32_SCHEMA).build();
        emit("non_ascii_letters", unicode, new Struct(unicode).put("\u00fcber", 2));

        // Message names: the same preferred name twice gets a suffix.
        Schema inner1 = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build();
        Schema inner2 = SchemaBuilder.struct().field("b", Schema.STRING_SCHEMA).build();
        Schema outer = SchemaBuilder.struct().name("Outer")
            .field("value", inner1)
            .field("nested", SchemaBuilder.struct().field("value", inner2).build())
            .field("entries", SchemaBuilder.map(Schema.STRING_SCHEMA, inner2).build())
            .build();
        emit("message_names", outer, new Struct(outer).put("value", new Struct(inner1).put("a", 1))
            .put("nested", new Struct(outer.field("nested").schema()).put("value", new Struct(inner2).put("b", "z")))
            .put("entries", Map.of("k", new Struct(inner2).put("b", "v"))));

        // A struct of one repeated field named `items` reads back as the array (a wrapper look-alike).
        Schema lookalike = SchemaBuilder.struct().field("items", SchemaBuilder.array(Schema.INT32_SCHEMA).build()).build();
        Schema holder = SchemaBuilder.struct().name("Holder").field("box", lookalike).build();
        emit("wrapper_lookalike", holder, new Struct(holder).put("box", new Struct(lookalike).put("items", List.of(4, 5))));

        // Logical types are not converted: Java's ProtobufData fails on their values.
        Schema decimal = SchemaBuilder.struct().field("amount", Decimal.schema(2)).build();
        emit("decimal", decimal, new Struct(decimal).put("amount", new BigDecimal("12.34")));
        Schema date = SchemaBuilder.struct().field("day", Date.SCHEMA).build();
        emit("date", date, new Struct(date).put("day", new java.util.Date(86_400_000L * 3)));
        Schema time = SchemaBuilder.struct().field("at", Time.SCHEMA).build();
        emit("time", time, new Struct(time).put("at", new java.util.Date(1000L)));
        Schema ts = SchemaBuilder.struct().field("ts", Timestamp.SCHEMA).build();
        emit("timestamp", ts, new Struct(ts).put("ts", new java.util.Date(1700000000000L)));

        // Only a struct at the root.
        emit("string_root", Schema.STRING_SCHEMA, "x");
        Schema arrayOfMaps = SchemaBuilder.struct().field("ms",
            SchemaBuilder.array(SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build()).build()).build();
        emit("array_of_maps", arrayOfMaps, new Struct(arrayOfMaps).put("ms", List.of(Map.of("a", 1))));

        // Records of a producer with generated classes: nested messages and enums, map<> fields,
        // proto3 optional and oneofs, the other integer types.
        String shop = String.join("\n",
            "syntax = \"proto3\";",
            "package demo.shop;",
            "option java_package = \"com.example.shop\";",
            "message Header { string trace = 1; }",
            "message Outer {",
            "  enum Color { RED = 0; GREEN = 1; BLUE = 2; }",
            "  message Inner { string a = 1; repeated int32 b = 2; }",
            "  string id = 1;",
            "  Color color = 2;",
            "  optional int64 maybe = 3;",
            "  Inner inner = 4;",
            "  repeated Inner inners = 5;",
            "  map<string, Inner> by_name = 6;",
            "  oneof choice { string s = 7; int32 n = 8; }",
            "  sint32 z = 9;",
            "  uint64 u = 10;",
            "  fixed32 f = 11;",
            "  bytes raw = 12;",
            "  map<string, string> labels = 13;",
            "  repeated Color colors = 14;",
            "  Header header = 15;",
            "}",
            "");
        emitProduced("produced_nested", shop, "Outer",
            "{\"id\":\"o-1\",\"color\":\"GREEN\",\"maybe\":\"5\",\"inner\":{\"a\":\"x\",\"b\":[1,2]},"
            + "\"inners\":[{\"a\":\"y\"},{\"b\":[3]}],\"byName\":{\"k\":{\"a\":\"z\"}},\"n\":9,\"z\":-3,"
            + "\"u\":\"18446744073709551615\",\"f\":4294967295,\"raw\":\"AAE=\",\"labels\":{\"b\":\"2\",\"a\":\"1\"},"
            + "\"colors\":[\"BLUE\",\"RED\"]}");
        emitProduced("produced_defaults", shop, "Outer", "{}");
        emitProduced("produced_first_message", shop, "Header", "{\"trace\":\"t-1\"}");
        String event = String.join("\n",
            "syntax = \"proto3\";",
            "package demo.events;",
            "import \"google/protobuf/timestamp.proto\";",
            "message Event {",
            "  string name = 1;",
            "  google.protobuf.Timestamp at = 2;",
            "}",
            "");
        emitProduced("produced_timestamp", event, "Event",
            "{\"name\":\"e\",\"at\":\"2023-11-14T22:13:20.123Z\"}");
    }
}
