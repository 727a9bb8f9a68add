package io.connectrs.pluginhost;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.HeaderConverter;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/**
 * The converters, header converters, transformations and predicates of {@code plugin.path},
 * run on the worker's records: the worker keeps its transformation chain and converters and
 * calls these for the stages and conversions a connector config names with their classes.
 *
 * <p>Records cross as Connect data: key, value and each header as the envelope
 * ({@code schema} and {@code payload}) Apache's {@link JsonConverter} writes with
 * {@code schemas.enable=true} and {@code replace.null.with.default=false} (so a null field
 * stays null), plus topic, Kafka partition, timestamp and, for a sink record, its offset (the
 * record a transformation gets is then a {@link SinkRecord}, else a {@link SourceRecord}).
 * Converters get and return bytes as base64.
 *
 * <p>Each instance is configured once ({@code plugin.new}) and closed when the worker drops it
 * ({@code plugin.close}); its calls are serialized (Apache calls a task's plugins from the
 * task's one thread).
 */
final class RecordPlugins {
    private final Map<String, PluginScanner.Other> classes = new ConcurrentHashMap<>();
    private final Map<String, Object> instances = new ConcurrentHashMap<>();
    private final JsonConverter data = new JsonConverter();

    RecordPlugins() {
        data.configure(Map.of("schemas.enable", "true", "converter.type", "value",
                "replace.null.with.default", "false"));
    }

    /** Registers a class the scan found (the first of a name wins, as for connectors). */
    void add(PluginScanner.Other other) {
        classes.putIfAbsent(other.type() + " " + other.className(), other);
    }

    /** The class of that name and kind; an error naming it when plugin.path has none. */
    PluginScanner.Other find(String className, String kind) {
        PluginScanner.Other o = classes.get(kind + " " + className);
        if (o == null) {
            throw new IllegalArgumentException("no " + kind.replace('_', ' ') + " class " + className + " in plugin.path");
        }
        return o;
    }

    static Object newInstance(PluginScanner.Other o) throws Exception {
        return Class.forName(o.className(), true, o.loader()).getDeclaredConstructor().newInstance();
    }

    /** The plugin's {@code config()}, as the keys of a connector's configDef answer. */
    static ConfigDef configDef(PluginScanner.Other o) throws Exception {
        Object p = newInstance(o);
        try {
            return switch (o.type()) {
                case "transformation" -> ((Transformation<?>) p).config();
                case "predicate" -> ((Predicate<?>) p).config();
                case "converter" -> ((Converter) p).config();
                default -> ((HeaderConverter) p).config();
            };
        } finally {
            if (p instanceof AutoCloseable c) {
                c.close();
            }
        }
    }

    /** Instantiates and configures an instance the worker then names by {@code instance}. */
    void create(String instance, PluginScanner.Other o, Map<String, String> config, boolean isKey) throws Exception {
        Object p = newInstance(o);
        switch (o.type()) {
            case "transformation" -> ((Transformation<?>) p).configure(config);
            case "predicate" -> ((Predicate<?>) p).configure(config);
            case "converter" -> ((Converter) p).configure(config, isKey);
            default -> ((HeaderConverter) p).configure(config);
        }
        instances.put(instance, p);
    }

    Object instance(String id) {
        Object p = instances.get(id);
        if (p == null) {
            throw new IllegalStateException("no plugin instance " + id + " in the plugin host");
        }
        return p;
    }

    void close(String id) throws Exception {
        Object p = instances.remove(id);
        if (p instanceof AutoCloseable c) {
            synchronized (p) {
                c.close();
            }
        }
    }

    private byte[] json(JsonNode n) throws Exception {
        return n == null || n.isNull() ? null : Protocol.MAPPER.writeValueAsBytes(n);
    }

    private SchemaAndValue connect(String topic, JsonNode envelope) throws Exception {
        byte[] bytes = json(envelope);
        return bytes == null ? SchemaAndValue.NULL : data.toConnectData(topic, bytes);
    }

    private void putEnvelope(ObjectNode n, String field, String topic, org.apache.kafka.connect.data.Schema schema, Object value) {
        byte[] bytes = data.fromConnectData(topic, schema, value);
        if (bytes == null) {
            n.putNull(field);
        } else {
            n.putRawValue(field, new RawValue(new String(bytes, StandardCharsets.UTF_8)));
        }
    }

    private ConnectRecord<?> decode(JsonNode r) throws Exception {
        String topic = r.path("topic").asText();
        SchemaAndValue k = connect(topic, r.get("key"));
        SchemaAndValue v = connect(topic, r.get("value"));
        ConnectHeaders hs = new ConnectHeaders();
        for (JsonNode h : r.path("headers")) {
            hs.add(h.path("key").asText(), connect(topic, h.get("value")));
        }
        Long ts = r.hasNonNull("timestamp") ? r.get("timestamp").asLong() : null;
        Integer partition = r.hasNonNull("partition") ? r.get("partition").asInt() : null;
        if (r.hasNonNull("offset")) {
            return new SinkRecord(topic, partition == null ? 0 : partition, k.schema(), k.value(), v.schema(), v.value(),
                    r.get("offset").asLong(), ts, ts == null ? TimestampType.NO_TIMESTAMP_TYPE : TimestampType.CREATE_TIME, hs);
        }
        return new SourceRecord(null, null, topic, partition, k.schema(), k.value(), v.schema(), v.value(), ts, hs);
    }

    private ObjectNode encode(ConnectRecord<?> r) {
        ObjectNode n = Protocol.MAPPER.createObjectNode();
        n.put("topic", r.topic());
        if (r.kafkaPartition() != null) {
            n.put("partition", r.kafkaPartition());
        }
        if (r.timestamp() != null) {
            n.put("timestamp", r.timestamp());
        }
        putEnvelope(n, "key", r.topic(), r.keySchema(), r.key());
        putEnvelope(n, "value", r.topic(), r.valueSchema(), r.value());
        ArrayNode hs = n.putArray("headers");
        for (Header h : r.headers()) {
            ObjectNode hn = hs.addObject();
            hn.put("key", h.key());
            putEnvelope(hn, "value", r.topic(), h.schema(), h.value());
        }
        return n;
    }

    /**
     * {@code Transformation.apply} on each record, in order: {@code {"record": ...}} with the
     * record it returned, {@code {"record": null}} for one it dropped, {@code {"error": ...}} for
     * one it threw on (the later records are still applied: the worker decides what an error
     * means, as for one record).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    JsonNode apply(String id, JsonNode records) throws Exception {
        Transformation t = (Transformation) instance(id);
        ArrayNode out = Protocol.MAPPER.createArrayNode();
        synchronized (t) {
            for (JsonNode r : records) {
                ObjectNode n = out.addObject();
                try {
                    ConnectRecord<?> result = (ConnectRecord<?>) t.apply(decode(r));
                    if (result == null) {
                        n.putNull("record");
                    } else {
                        n.set("record", encode(result));
                    }
                } catch (Exception e) {
                    n.set("error", Protocol.errorNode(e));
                }
            }
        }
        return out;
    }

    /** {@code Predicate.test} on each record, in order: {@code {"ok": bool}} or {@code {"error": ...}}. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    JsonNode test(String id, JsonNode records) throws Exception {
        Predicate p = (Predicate) instance(id);
        ArrayNode out = Protocol.MAPPER.createArrayNode();
        synchronized (p) {
            for (JsonNode r : records) {
                ObjectNode n = out.addObject();
                try {
                    n.put("ok", p.test(decode(r)));
                } catch (Exception e) {
                    n.set("error", Protocol.errorNode(e));
                }
            }
        }
        return out;
    }

    /** {@code fromConnectData} (or {@code fromConnectHeader} with a header key): base64 bytes or null. */
    JsonNode fromConnect(String id, JsonNode f) throws Exception {
        Object c = instance(id);
        String topic = f.path("topic").asText();
        SchemaAndValue sv = connect(topic, f.get("data"));
        byte[] bytes;
        synchronized (c) {
            bytes = f.hasNonNull("headerKey")
                    ? ((HeaderConverter) c).fromConnectHeader(topic, f.get("headerKey").asText(), sv.schema(), sv.value())
                    : ((Converter) c).fromConnectData(topic, sv.schema(), sv.value());
        }
        return bytes == null ? NullNode.getInstance() : Protocol.MAPPER.getNodeFactory().textNode(Base64.getEncoder().encodeToString(bytes));
    }

    /** {@code toConnectData} (or {@code toConnectHeader}): the Connect data as an envelope. */
    JsonNode toConnect(String id, JsonNode f) throws Exception {
        Object c = instance(id);
        String topic = f.path("topic").asText();
        byte[] bytes = f.hasNonNull("bytes") ? Base64.getDecoder().decode(f.get("bytes").asText()) : null;
        SchemaAndValue sv;
        synchronized (c) {
            sv = f.hasNonNull("headerKey")
                    ? ((HeaderConverter) c).toConnectHeader(topic, f.get("headerKey").asText(), bytes)
                    : ((Converter) c).toConnectData(topic, bytes);
        }
        ObjectNode n = Protocol.MAPPER.createObjectNode();
        if (sv == null) {
            n.putNull("data");
        } else {
            putEnvelope(n, "data", topic, sv.schema(), sv.value());
        }
        return n;
    }
}
