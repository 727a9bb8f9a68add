package io.connectrs.pluginhost;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Source records as the worker reads them: key and value as Connect data in
 * {@link RecordWriter}'s binary form, their schemas as Apache's {@link JsonConverter}'s
 * {@code asJsonSchema} writes them, each schema once with an id the records then name; each
 * header as the JsonConverter with {@code schemas.enable=true} writes it; source partition and
 * offset as the worker's offsets topic holds them (schemaless JsonConverter, as Apache's offset
 * writer), plus topic, Kafka partition and timestamp. Layout: {@link #encode}.
 */
final class RecordCodec {
    private final JsonConverter values = new JsonConverter();
    private final JsonConverter headers = new JsonConverter();
    private final JsonConverter offsets = new JsonConverter();
    /** Payloads alone (schemas.enable=false still converts by the schema given). */
    private final JsonConverter keyPayloads = new JsonConverter();
    private final JsonConverter valuePayloads = new JsonConverter();
    /**
     * Schemas to the id the worker knows them by: a schema's JSON crosses once (in a poll
     * answer's {@code schemas}), records name it by id. By content ({@code ConnectSchema}'s
     * equality), so a task that builds equal schemas afresh for each record sends each once and
     * grows neither side; found by identity first, as connectors mostly reuse their Schema
     * objects (that cache is bounded: it forgets when it holds too many).
     */
    private final HashMap<Schema, Long> schemaIds = new HashMap<>();
    private final IdentityHashMap<Schema, Long> byIdentity = new IdentityHashMap<>();
    private static final int IDENTITIES_MAX = 1024;
    private ObjectNode newSchemas;

    RecordCodec() {
        values.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        headers.configure(Map.of("schemas.enable", "true", "converter.type", "header"));
        offsets.configure(Map.of("schemas.enable", "false", "converter.type", "key"));
        keyPayloads.configure(Map.of("schemas.enable", "false", "converter.type", "key"));
        valuePayloads.configure(Map.of("schemas.enable", "false", "converter.type", "value"));
    }

    /** The id the worker knows {@code schema} by; a schema seen first is added to the new ones. */
    private long schemaId(Schema schema) {
        Long id = byIdentity.get(schema);
        if (id != null) {
            return id;
        }
        id = schemaIds.get(schema);
        if (byIdentity.size() >= IDENTITIES_MAX) {
            byIdentity.clear();
        }
        if (id == null) {
            id = (long) schemaIds.size() + 1;
            schemaIds.put(schema, id);
            if (newSchemas == null) {
                newSchemas = Protocol.MAPPER.createObjectNode();
            }
            newSchemas.set(Long.toString(id), values.asJsonSchema(schema));
        }
        byIdentity.put(schema, id);
        return id;
    }

    /** The schemas first named since the last call ({@code id -> JsonConverter schema}), or null. */
    ObjectNode takeNewSchemas() {
        ObjectNode out = newSchemas;
        newSchemas = null;
        return out;
    }

    private static JsonNode tree(byte[] bytes) throws Exception {
        return bytes == null ? NullNode.getInstance() : Protocol.MAPPER.readTree(bytes);
    }

    /** The last source partition written and its JSON: tasks reuse one map for many records. */
    private Map<String, ?> lastPartition;
    private String lastPartitionJson;

    private String partitionJson(Map<String, ?> partition) throws Exception {
        if (partition != lastPartition) {
            lastPartitionJson = offsetJson(partition);
            lastPartition = partition;
        }
        return lastPartitionJson;
    }

    private String offsetJson(Map<String, ?> map) throws Exception {
        return new String(offsets.fromConnectData("", null, map), StandardCharsets.UTF_8);
    }

    /**
     * One record into {@code w}, in the form the worker's {@code plugins/java/wire.rs} reads:
     * {@code seq} (8 bytes), topic (string), a flags byte (1: a Kafka partition follows, 2: a
     * timestamp, 4: headers), key and value (each a schema id, 8 bytes, 0 for none, then
     * the value in {@link RecordWriter}'s form; without a schema, a presence byte and the
     * schemaless JsonConverter payload), headers (a count, then each header's key and its
     * JsonConverter envelope), the source partition (0 null, 1 the previous record's, 2 its
     * JSON as the offsets topic holds it) and the source offset (0 null, 2 its JSON).
     */
    void encode(RecordWriter w, SourceRecord r, long seq) throws Exception {
        w.i64(seq);
        w.str(r.topic());
        boolean hasHeaders = !r.headers().isEmpty();
        w.u8((r.kafkaPartition() != null ? 1 : 0) | (r.timestamp() != null ? 2 : 0) | (hasHeaders ? 4 : 0));
        if (r.kafkaPartition() != null) {
            w.i32(r.kafkaPartition());
        }
        if (r.timestamp() != null) {
            w.i64(r.timestamp());
        }
        data(w, keyPayloads, r.topic(), r.keySchema(), r.key());
        data(w, valuePayloads, r.topic(), r.valueSchema(), r.value());
        if (hasHeaders) {
            w.i32(r.headers().size());
            for (Header h : r.headers()) {
                w.str(h.key());
                byte[] json = headers.fromConnectHeader(r.topic(), h.key(), h.schema(), h.value());
                w.bytes(json == null ? "null".getBytes(StandardCharsets.UTF_8) : json);
            }
        }
        if (r.sourcePartition() == null) {
            w.u8(0);
        } else if (r.sourcePartition() == lastPartition) {
            w.u8(1);
        } else {
            w.u8(2);
            w.str(partitionJson(r.sourcePartition()));
        }
        if (r.sourceOffset() == null) {
            w.u8(0);
        } else {
            w.u8(2);
            w.str(offsetJson(r.sourceOffset()));
        }
    }

    /** A key or value: its schema id (0 for none) and the value (see {@link #encode}). */
    void data(RecordWriter w, JsonConverter schemaless, String topic, Schema schema, Object value) {
        if (schema == null) {
            w.i64(0);
            if (value == null) {
                w.u8(0);
            } else {
                w.u8(1);
                w.bytes(schemaless.fromConnectData(topic, null, value));
            }
            return;
        }
        w.i64(schemaId(schema));
        w.value(schema, value);
    }

    JsonNode offsetTree(Map<String, ?> map) throws Exception {
        if (map == null) {
            return NullNode.getInstance();
        }
        return tree(offsets.fromConnectData("", null, map));
    }

    /** An offset map as Apache's offset reader gives it to tasks. */
    @SuppressWarnings("unchecked")
    Map<String, Object> offsetMap(JsonNode json) throws Exception {
        if (json == null || json.isNull()) {
            return null;
        }
        byte[] bytes = Protocol.MAPPER.writeValueAsString(json).getBytes(StandardCharsets.UTF_8);
        Object v = offsets.toConnectData("", bytes).value();
        return v == null ? null : (Map<String, Object>) v;
    }

    static Map<String, String> stringMap(JsonNode json) {
        if (json == null || json.isNull()) {
            return Collections.emptyMap();
        }
        Map<String, String> out = new HashMap<>();
        json.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().isNull() ? null : e.getValue().asText()));
        return out;
    }
}
