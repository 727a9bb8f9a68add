package io.connectrs.pluginhost;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Source records as the worker reads them: key and value as the payload Apache's
 * {@link JsonConverter} writes and their schemas as its {@code asJsonSchema} writes them, each
 * schema once with an id the records then name; each header as the JsonConverter with
 * {@code schemas.enable=true} writes it (so Connect schemas and values cross losslessly; the
 * worker's JsonConverter reads Apache's exact output), source
 * partition and offset as the worker's offsets topic holds them (schemaless JsonConverter, as
 * Apache's offset writer), plus topic, Kafka partition and timestamp.
 */
final class RecordCodec {
    private final JsonConverter keys = new JsonConverter();
    private final JsonConverter values = new JsonConverter();
    private final JsonConverter headers = new JsonConverter();
    private final JsonConverter offsets = new JsonConverter();
    /** Payloads alone (schemas.enable=false still converts by the schema given). */
    private final JsonConverter keyPayloads = new JsonConverter();
    private final JsonConverter valuePayloads = new JsonConverter();
    /**
     * Schemas by identity, to the id the worker knows them by: a schema's JSON crosses once
     * (in a poll answer's {@code schemas}), records name it by id. Connectors reuse their
     * Schema objects, so a batch rarely carries any.
     */
    private final IdentityHashMap<Schema, Long> schemaIds = new IdentityHashMap<>();
    private ObjectNode newSchemas;

    RecordCodec() {
        keys.configure(Map.of("schemas.enable", "true", "converter.type", "key"));
        values.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        headers.configure(Map.of("schemas.enable", "true", "converter.type", "header"));
        offsets.configure(Map.of("schemas.enable", "false", "converter.type", "key"));
        keyPayloads.configure(Map.of("schemas.enable", "false", "converter.type", "key"));
        valuePayloads.configure(Map.of("schemas.enable", "false", "converter.type", "value"));
    }

    private void putSchema(ObjectNode n, String field, Schema schema) {
        if (schema == null) {
            n.putNull(field);
            return;
        }
        Long id = schemaIds.get(schema);
        if (id == null) {
            id = (long) schemaIds.size() + 1;
            schemaIds.put(schema, id);
            if (newSchemas == null) {
                newSchemas = Protocol.MAPPER.createObjectNode();
            }
            newSchemas.set(Long.toString(id), values.asJsonSchema(schema));
        }
        n.put(field, id);
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

    /** The converter's output as it is, embedded in the frame without parsing it again. */
    private static void putRaw(ObjectNode n, String field, byte[] json) {
        if (json == null) {
            n.putNull(field);
        } else {
            n.putRawValue(field, new RawValue(new String(json, StandardCharsets.UTF_8)));
        }
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

    ObjectNode encode(SourceRecord r, long seq) throws Exception {
        ObjectNode n = Protocol.MAPPER.createObjectNode();
        n.put("seq", seq);
        n.put("topic", r.topic());
        if (r.kafkaPartition() != null) {
            n.put("partition", r.kafkaPartition());
        }
        if (r.timestamp() != null) {
            n.put("timestamp", r.timestamp());
        }
        putSchema(n, "keySchema", r.keySchema());
        putRaw(n, "key", keyPayloads.fromConnectData(r.topic(), r.keySchema(), r.key()));
        putSchema(n, "valueSchema", r.valueSchema());
        putRaw(n, "value", valuePayloads.fromConnectData(r.topic(), r.valueSchema(), r.value()));
        if (!r.headers().isEmpty()) {
            var hs = n.putArray("headers");
            for (Header h : r.headers()) {
                ObjectNode hn = hs.addObject();
                hn.put("key", h.key());
                putRaw(hn, "value", headers.fromConnectHeader(r.topic(), h.key(), h.schema(), h.value()));
            }
        }
        if (r.sourcePartition() == null) {
            n.putNull("sourcePartition");
        } else {
            n.putRawValue("sourcePartition", new RawValue(partitionJson(r.sourcePartition())));
        }
        if (r.sourceOffset() == null) {
            n.putNull("sourceOffset");
        } else {
            n.putRawValue("sourceOffset", new RawValue(offsetJson(r.sourceOffset())));
        }
        return n;
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
