package io.connectrs.pluginhost;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
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
import org.apache.kafka.connect.errors.DataException;
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
 * <p>Records cross as Connect data: to transformations and predicates in batches, key and
 * value in the binary form of {@link RecordWriter} (schemas once per instance and direction, as
 * Apache's {@link JsonConverter} writes schemas; a null field stays null), each header as the
 * JsonConverter envelope ({@code schemas.enable=true}, {@code replace.null.with.default=false}),
 * plus topic, Kafka partition, timestamp and, for a sink record, its offset (the record a
 * transformation gets is then a {@link SinkRecord}, else a {@link SourceRecord}). Converters
 * get Connect data as that envelope and bytes as base64.
 *
 * <p>Each instance is configured once ({@code plugin.new}) and closed when the worker drops it
 * ({@code plugin.close}); its calls are serialized (Apache calls a task's plugins from the
 * task's one thread).
 */
final class RecordPlugins {
    private final Map<String, PluginScanner.Other> classes = new ConcurrentHashMap<>();
    private final Map<String, Object> instances = new ConcurrentHashMap<>();
    /** Per transformation or predicate instance: the schemas of its records both ways. */
    private final Map<String, Wire> wires = new ConcurrentHashMap<>();
    /** Schemaless keys and values (payloads alone). */
    private final JsonConverter payloads = new JsonConverter();

    /**
     * The schemas an instance's batches name by id: those the worker sent ({@code in}) and those
     * of the records it returned ({@code out}, sent to the worker once each), and the buffer its
     * answers are written to.
     */
    private static final class Wire {
        final Map<Long, org.apache.kafka.connect.data.Schema> in = new HashMap<>();
        final RecordCodec out = new RecordCodec();
        final RecordWriter writer = new RecordWriter();
    }
    private final JsonConverter data = new JsonConverter();

    RecordPlugins() {
        data.configure(Map.of("schemas.enable", "true", "converter.type", "value",
                "replace.null.with.default", "false"));
        payloads.configure(Map.of("schemas.enable", "false", "converter.type", "value",
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
        wires.remove(id);
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

    /**
     * The records of a {@code transform.apply} or {@code predicate.test} request in the binary
     * form of the worker's {@code plugins/java/wire.rs} ({@code count} records; the request's new
     * {@code schemas} added to the instance's first): per record its topic, a flags byte (1: a
     * Kafka partition follows, 2: a timestamp, 4: headers, 8: an offset, which makes it a
     * {@link SinkRecord}), key and value by schema id, headers as JsonConverter envelopes.
     */
    private List<ConnectRecord<?>> decodeBatch(Wire wire, JsonNode request, byte[] attachment) throws Exception {
        JsonNode schemas = request.get("schemas");
        if (schemas != null) {
            for (var it = schemas.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                wire.in.put(Long.parseLong(e.getKey()), data.asConnectSchema(e.getValue()));
            }
        }
        int count = request.path("count").asInt();
        RecordReader r = new RecordReader(attachment, false);
        List<ConnectRecord<?>> out = new ArrayList<>(count);
        for (int n = 0; n < count; n++) {
            String topic = r.str();
            int flags = r.u8();
            Integer partition = (flags & 1) != 0 ? r.i32() : null;
            Long ts = (flags & 2) != 0 ? r.i64() : null;
            Long offset = (flags & 8) != 0 ? r.i64() : null;
            SchemaAndValue k = readData(wire, r, topic);
            SchemaAndValue v = readData(wire, r, topic);
            ConnectHeaders hs = new ConnectHeaders();
            if ((flags & 4) != 0) {
                int headerCount = r.count();
                for (int h = 0; h < headerCount; h++) {
                    String key = r.str();
                    byte[] envelope = r.bytes();
                    hs.add(key, connect(topic, Protocol.MAPPER.readTree(envelope)));
                }
            }
            if (offset != null) {
                out.add(new SinkRecord(topic, partition == null ? 0 : partition, k.schema(), k.value(), v.schema(), v.value(),
                        offset, ts, ts == null ? TimestampType.NO_TIMESTAMP_TYPE : TimestampType.CREATE_TIME, hs));
            } else {
                out.add(new SourceRecord(null, null, topic, partition, k.schema(), k.value(), v.schema(), v.value(), ts, hs));
            }
        }
        if (!r.atEnd()) {
            throw new DataException("bytes left after the " + count + " records of a batch");
        }
        return out;
    }

    private SchemaAndValue readData(Wire wire, RecordReader r, String topic) {
        long id = r.i64();
        if (id == 0) {
            return r.u8() == 0 ? SchemaAndValue.NULL : payloads.toConnectData(topic, r.bytes());
        }
        org.apache.kafka.connect.data.Schema schema = wire.in.get(id);
        if (schema == null) {
            throw new DataException("a record names unknown schema " + id);
        }
        return new SchemaAndValue(schema, r.value(schema));
    }

    /** A returned record, in the request's record form (without an offset). */
    private void writeRecord(Wire wire, ConnectRecord<?> rec) {
        RecordWriter w = wire.writer;
        w.str(rec.topic());
        boolean headers = !rec.headers().isEmpty();
        w.u8((rec.kafkaPartition() != null ? 1 : 0) | (rec.timestamp() != null ? 2 : 0) | (headers ? 4 : 0));
        if (rec.kafkaPartition() != null) {
            w.i32(rec.kafkaPartition());
        }
        if (rec.timestamp() != null) {
            w.i64(rec.timestamp());
        }
        wire.out.data(w, payloads, rec.topic(), rec.keySchema(), rec.key());
        wire.out.data(w, payloads, rec.topic(), rec.valueSchema(), rec.value());
        if (headers) {
            w.i32(rec.headers().size());
            for (Header h : rec.headers()) {
                w.str(h.key());
                byte[] json = data.fromConnectData(rec.topic(), h.schema(), h.value());
                w.bytes(json == null ? "null".getBytes(StandardCharsets.UTF_8) : json);
            }
        }
    }

    private Wire wire(String id) {
        return wires.computeIfAbsent(id, k -> new Wire());
    }

    /**
     * {@code Transformation.apply} on each record of a binary batch, in order: the answer's
     * {@code results} says per record 1 (its result follows in the attachment), 0 (dropped) or
     * 2 (it threw: {@code errors} has the exception under the record's index); the later records
     * are still applied (the worker decides what an error means). {@code schemas}: the result
     * schemas named for the first time.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    Protocol.Answer applyBatch(String id, JsonNode request, byte[] attachment) throws Exception {
        Transformation t = (Transformation) instance(id);
        Wire wire = wire(id);
        ObjectNode answer = Protocol.MAPPER.createObjectNode();
        ArrayNode results = answer.putArray("results");
        ObjectNode errors = answer.putObject("errors");
        synchronized (t) {
            wire.writer.reset();
            List<ConnectRecord<?>> batch = decodeBatch(wire, request, attachment);
            for (int i = 0; i < batch.size(); i++) {
                try {
                    ConnectRecord<?> result = (ConnectRecord<?>) t.apply(batch.get(i));
                    if (result == null) {
                        results.add(0);
                    } else {
                        writeRecord(wire, result);
                        results.add(1);
                    }
                } catch (Exception e) {
                    results.add(2);
                    errors.set(Integer.toString(i), Protocol.errorNode(e));
                }
            }
            ObjectNode schemas = wire.out.takeNewSchemas();
            if (schemas != null) {
                answer.set("schemas", schemas);
            }
            return new Protocol.Answer(answer, wire.writer);
        }
    }

    /**
     * {@code Predicate.test} on each record of a binary batch: {@code results} true or false
     * per record, or null where it threw ({@code errors} has the exception under its index).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    JsonNode testBatch(String id, JsonNode request, byte[] attachment) throws Exception {
        Predicate p = (Predicate) instance(id);
        Wire wire = wire(id);
        ObjectNode answer = Protocol.MAPPER.createObjectNode();
        ArrayNode results = answer.putArray("results");
        ObjectNode errors = answer.putObject("errors");
        synchronized (p) {
            List<ConnectRecord<?>> batch = decodeBatch(wire, request, attachment);
            for (int i = 0; i < batch.size(); i++) {
                try {
                    results.add(p.test(batch.get(i)));
                } catch (Exception e) {
                    results.addNull();
                    errors.set(Integer.toString(i), Protocol.errorNode(e));
                }
            }
        }
        return answer;
    }
}
