// Pushes the records of ../cases.json through Apache Kafka Connect's own transforms and
// predicates and writes what comes out to ../expected.json. See ../README.md.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

public class Golden {
    static final JsonNodeFactory F = JsonNodeFactory.instance;
    static final String PREFIX = "org.apache.kafka.connect.transforms.";

    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonNode cases = mapper.readTree(new File(args[0]));
        ObjectNode out = F.objectNode();
        JsonNode records = cases.get("records");
        for (JsonNode c : cases.get("cases")) {
            out.set(c.get("name").asText(), runCase(c, records));
        }
        mapper.enable(SerializationFeature.INDENT_OUTPUT);
        mapper.writeValue(new File(args[1]), out);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static JsonNode runCase(JsonNode c, JsonNode records) {
        ObjectNode result = F.objectNode();
        Map<String, String> config = new HashMap<>();
        c.path("config").fields().forEachRemaining(e -> config.put(e.getKey(), e.getValue().asText()));
        Object plugin;
        try {
            plugin = Class.forName(PREFIX + c.get("class").asText()).getDeclaredConstructor().newInstance();
            if (plugin instanceof Transformation) {
                ((Transformation) plugin).configure(config);
            } else {
                ((Predicate) plugin).configure(config);
            }
        } catch (Exception e) {
            result.put("config_error", e.getMessage());
            return result;
        }
        ObjectNode outputs = F.objectNode();
        for (JsonNode name : c.get("records")) {
            ConnectRecord record = readRecord(records.get(name.asText()));
            ObjectNode o = F.objectNode();
            try {
                if (plugin instanceof Predicate) {
                    o.put("test", ((Predicate) plugin).test(record));
                } else {
                    ConnectRecord r = ((Transformation) plugin).apply(record);
                    if (r == null) {
                        o.put("dropped", true);
                    } else {
                        o.set("record", writeRecord(r));
                    }
                }
            } catch (Exception e) {
                o.put("error", e.getMessage());
            }
            outputs.set(name.asText(), o);
        }
        result.set("outputs", outputs);
        return result;
    }

    // ---- reading ----

    static Schema readSchema(JsonNode n) {
        if (n == null || n.isNull()) return null;
        Schema.Type type = Schema.Type.valueOf(n.get("type").asText());
        SchemaBuilder b;
        switch (type) {
            case ARRAY: b = SchemaBuilder.array(readSchema(n.get("values"))); break;
            case MAP: b = SchemaBuilder.map(readSchema(n.get("keys")), readSchema(n.get("values"))); break;
            case STRUCT:
                b = SchemaBuilder.struct();
                for (JsonNode f : n.path("fields")) b.field(f.get("name").asText(), readSchema(f.get("schema")));
                break;
            default: b = SchemaBuilder.type(type);
        }
        if (n.path("optional").asBoolean(false)) b.optional();
        if (n.hasNonNull("name")) b.name(n.get("name").asText());
        if (n.hasNonNull("version")) b.version(n.get("version").asInt());
        if (n.hasNonNull("doc")) b.doc(n.get("doc").asText());
        if (n.has("parameters")) n.get("parameters").fields().forEachRemaining(e -> b.parameter(e.getKey(), e.getValue().asText()));
        if (n.hasNonNull("default")) b.defaultValue(readValue(n.get("default"), b));
        return b.build();
    }

    static Object readValue(JsonNode n, Schema schema) {
        Object v = readPhysical(n, schema);
        String name = schema == null ? null : schema.name();
        if (v == null || name == null) return v;
        switch (name) {
            case org.apache.kafka.connect.data.Timestamp.LOGICAL_NAME: return new Date((Long) v);
            case org.apache.kafka.connect.data.Time.LOGICAL_NAME: return new Date(((Integer) v).longValue());
            case org.apache.kafka.connect.data.Date.LOGICAL_NAME: return new Date(((Integer) v) * 86400000L);
            case Decimal.LOGICAL_NAME: return Decimal.toLogical(schema, (byte[]) v);
            default: return v;
        }
    }

    static Object readPhysical(JsonNode n, Schema schema) {
        if (n == null || n.isNull()) return null;
        String tag = n.fieldNames().next();
        JsonNode v = n.get(tag);
        switch (tag) {
            case "int8": return (byte) v.asInt();
            case "int16": return (short) v.asInt();
            case "int32": return v.asInt();
            case "int64": return v.asLong();
            case "float32": return (float) v.asDouble();
            case "float64": return v.asDouble();
            case "boolean": return v.asBoolean();
            case "string": return v.asText();
            case "bytes": return Base64.getDecoder().decode(v.asText());
            case "array": {
                List<Object> l = new ArrayList<>();
                for (JsonNode i : v) l.add(readValue(i, schema == null ? null : schema.valueSchema()));
                return l;
            }
            case "map": {
                Map<Object, Object> m = new HashMap<>();
                for (JsonNode e : v) m.put(readValue(e.get(0), schema == null ? null : schema.keySchema()),
                        readValue(e.get(1), schema == null ? null : schema.valueSchema()));
                return m;
            }
            case "struct": {
                Struct s = new Struct(schema);
                v.fields().forEachRemaining(e -> s.put(e.getKey(), readValue(e.getValue(), schema.field(e.getKey()).schema())));
                return s;
            }
            default: throw new IllegalArgumentException("unknown tag " + tag);
        }
    }

    static ConnectRecord<?> readRecord(JsonNode n) {
        Schema ks = readSchema(n.get("key_schema"));
        Schema vs = readSchema(n.get("value_schema"));
        Object key = readValue(n.get("key"), ks);
        Object value = readValue(n.get("value"), vs);
        Integer partition = n.hasNonNull("partition") ? n.get("partition").asInt() : null;
        Long ts = n.hasNonNull("timestamp") ? n.get("timestamp").asLong() : null;
        ConnectHeaders headers = new ConnectHeaders();
        for (JsonNode h : n.path("headers")) {
            Schema hs = readSchema(h.get("schema"));
            headers.add(h.get("key").asText(), readValue(h.get("value"), hs), hs);
        }
        if (n.hasNonNull("offset")) {
            return new SinkRecord(n.get("topic").asText(), partition, ks, key, vs, value, n.get("offset").asLong(),
                    ts, TimestampType.CREATE_TIME, headers);
        }
        return new SourceRecord(null, null, n.get("topic").asText(), partition, ks, key, vs, value, ts, headers);
    }

    // ---- writing ----

    static JsonNode writeSchema(Schema s) {
        if (s == null) return F.nullNode();
        ObjectNode o = F.objectNode();
        o.put("type", s.type().name());
        o.put("optional", s.isOptional());
        o.put("name", s.name());
        if (s.version() == null) o.putNull("version"); else o.put("version", s.version());
        o.put("doc", s.doc());
        o.set("default", writeValue(s.defaultValue(), s));
        ObjectNode params = F.objectNode();
        if (s.parameters() != null) new TreeMap<>(s.parameters()).forEach(params::put);
        o.set("parameters", params);
        ArrayNode fields = F.arrayNode();
        if (s.type() == Schema.Type.STRUCT) {
            for (Field f : s.fields()) {
                ObjectNode fo = F.objectNode();
                fo.put("name", f.name());
                fo.set("schema", writeSchema(f.schema()));
                fields.add(fo);
            }
        }
        o.set("fields", fields);
        o.set("keys", s.type() == Schema.Type.MAP ? writeSchema(s.keySchema()) : F.nullNode());
        o.set("values", s.type() == Schema.Type.MAP || s.type() == Schema.Type.ARRAY ? writeSchema(s.valueSchema()) : F.nullNode());
        return o;
    }

    static ObjectNode tagged(String tag, JsonNode v) {
        ObjectNode o = F.objectNode();
        o.set(tag, v);
        return o;
    }

    @SuppressWarnings("unchecked")
    static JsonNode writeValue(Object v, Schema schema) {
        if (v == null) return F.nullNode();
        if (v instanceof Byte) return tagged("int8", F.numberNode((Byte) v));
        if (v instanceof Short) return tagged("int16", F.numberNode((Short) v));
        if (v instanceof Integer) return tagged("int32", F.numberNode((Integer) v));
        if (v instanceof Long) return tagged("int64", F.numberNode((Long) v));
        if (v instanceof Float) return tagged("float32", F.numberNode((double) (Float) v));
        if (v instanceof Double) return tagged("float64", F.numberNode((Double) v));
        if (v instanceof Boolean) return tagged("boolean", F.booleanNode((Boolean) v));
        if (v instanceof String) return tagged("string", F.textNode((String) v));
        if (v instanceof byte[]) return tagged("bytes", F.textNode(Base64.getEncoder().encodeToString((byte[]) v)));
        if (v instanceof BigDecimal) return tagged("bytes", F.textNode(Base64.getEncoder().encodeToString(((BigDecimal) v).unscaledValue().toByteArray())));
        if (v instanceof Date) {
            long ms = ((Date) v).getTime();
            String name = schema == null ? null : schema.name();
            if (org.apache.kafka.connect.data.Date.LOGICAL_NAME.equals(name)) return tagged("int32", F.numberNode((int) (ms / 86400000L)));
            if (org.apache.kafka.connect.data.Time.LOGICAL_NAME.equals(name)) return tagged("int32", F.numberNode((int) ms));
            return tagged("int64", F.numberNode(ms));
        }
        if (v instanceof List) {
            ArrayNode a = F.arrayNode();
            for (Object i : (List<Object>) v) a.add(writeValue(i, schema == null ? null : schema.valueSchema()));
            return tagged("array", a);
        }
        if (v instanceof Map) {
            // Sorted by the encoded key, so Java's HashMap order does not matter.
            TreeMap<String, ArrayNode> sorted = new TreeMap<>();
            for (Map.Entry<Object, Object> e : ((Map<Object, Object>) v).entrySet()) {
                ArrayNode pair = F.arrayNode();
                pair.add(writeValue(e.getKey(), schema == null ? null : schema.keySchema()));
                pair.add(writeValue(e.getValue(), schema == null ? null : schema.valueSchema()));
                sorted.put(pair.get(0).toString(), pair);
            }
            ArrayNode a = F.arrayNode();
            sorted.values().forEach(a::add);
            return tagged("map", a);
        }
        if (v instanceof Struct) {
            Struct s = (Struct) v;
            ObjectNode o = F.objectNode();
            for (Field f : s.schema().fields()) o.set(f.name(), writeValue(s.getWithoutDefault(f.name()), f.schema()));
            return tagged("struct", o);
        }
        throw new IllegalArgumentException("cannot encode " + v.getClass());
    }

    static JsonNode writeRecord(ConnectRecord<?> r) {
        ObjectNode o = F.objectNode();
        o.put("topic", r.topic());
        if (r.kafkaPartition() == null) o.putNull("partition"); else o.put("partition", r.kafkaPartition());
        o.set("key_schema", writeSchema(r.keySchema()));
        o.set("key", writeValue(r.key(), r.keySchema()));
        o.set("value_schema", writeSchema(r.valueSchema()));
        o.set("value", writeValue(r.value(), r.valueSchema()));
        if (r.timestamp() == null) o.putNull("timestamp"); else o.put("timestamp", r.timestamp());
        ArrayNode hs = F.arrayNode();
        for (Header h : r.headers()) {
            ObjectNode ho = F.objectNode();
            ho.put("key", h.key());
            ho.set("schema", writeSchema(h.schema()));
            ho.set("value", writeValue(h.value(), h.schema()));
            hs.add(ho);
        }
        o.set("headers", hs);
        return o;
    }
}
