package io.connectrs.pluginhost;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;
import org.apache.kafka.connect.sink.SinkTaskContext;

/**
 * Sink tasks: records arrive as Connect data in the binary form of the worker's
 * {@code plugins/java/wire.rs} ({@link #decode}) and become Apache {@link SinkRecord}s; what the task asks of its {@link SinkTaskContext} (offsets, timeout,
 * pause/resume, commit requests) is sent to the worker as it happens; the assignment is the one
 * the worker's open/close calls gave; errant records are reported through the worker.
 */
final class SinkTasks {
    private final Protocol protocol;
    private final JsonConverter values = new JsonConverter();
    private final JsonConverter headers = new JsonConverter();
    /** Schemaless keys and values (their payloads alone). */
    private final JsonConverter keyPayloads = new JsonConverter();
    private final JsonConverter valuePayloads = new JsonConverter();

    /** What a sink task instance keeps beside the task. */
    static final class State {
        final Set<TopicPartition> assignment = new LinkedHashSet<>();
        /** The records of the `put` in flight, by identity, to their index in the batch. */
        volatile IdentityHashMap<SinkRecord, Integer> batch = new IdentityHashMap<>();
        volatile List<SinkRecord> batchList = List.of();
        /** The schemas the worker has sent this task, by id. */
        final Map<Long, org.apache.kafka.connect.data.Schema> schemas = new HashMap<>();
    }

    SinkTasks(Protocol protocol) {
        this.protocol = protocol;
        values.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        headers.configure(Map.of("schemas.enable", "true", "converter.type", "header"));
        keyPayloads.configure(Map.of("schemas.enable", "false", "converter.type", "key"));
        valuePayloads.configure(Map.of("schemas.enable", "false", "converter.type", "value"));
    }

    static List<TopicPartition> partitions(JsonNode list) {
        List<TopicPartition> out = new ArrayList<>();
        if (list != null) {
            list.forEach(p -> out.add(new TopicPartition(p.path("topic").asText(), p.path("partition").asInt())));
        }
        return out;
    }

    static ArrayNode partitionsJson(Collection<TopicPartition> tps) {
        ArrayNode a = Protocol.MAPPER.createArrayNode();
        for (TopicPartition tp : tps) {
            a.addObject().put("topic", tp.topic()).put("partition", tp.partition());
        }
        return a;
    }

    /**
     * A {@code sink.put} request's records: {@code count} records in the frame's attachment,
     * in the layout of the worker's {@code plugins/java/wire.rs} (key and value in
     * {@link RecordReader}'s form by schema id; headers as JsonConverter envelopes), after
     * adding the request's new {@code schemas} ({@code id -> JsonConverter schema}) to the task's.
     */
    List<SinkRecord> decode(State state, JsonNode request, byte[] attachment) throws Exception {
        JsonNode schemas = request.get("schemas");
        if (schemas != null) {
            for (var it = schemas.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                state.schemas.put(Long.parseLong(e.getKey()), values.asConnectSchema(e.getValue()));
            }
        }
        int count = request.path("count").asInt();
        RecordReader r = new RecordReader(attachment);
        List<SinkRecord> out = new ArrayList<>(count);
        for (int n = 0; n < count; n++) {
            String topic = r.str();
            int partition = r.i32();
            long offset = r.i64();
            int flags = r.u8();
            Long ts = (flags & 1) != 0 ? r.i64() : null;
            TimestampType tt = switch (r.u8()) {
                case 1 -> TimestampType.CREATE_TIME;
                case 2 -> TimestampType.LOG_APPEND_TIME;
                default -> TimestampType.NO_TIMESTAMP_TYPE;
            };
            SchemaAndValue k = data(state, r, keyPayloads, topic);
            SchemaAndValue v = data(state, r, valuePayloads, topic);
            ConnectHeaders hs = new ConnectHeaders();
            if ((flags & 2) != 0) {
                int headerCount = r.count();
                for (int h = 0; h < headerCount; h++) {
                    String key = r.str();
                    byte[] envelope = r.bytes();
                    boolean none = envelope.length == 4 && new String(envelope, StandardCharsets.UTF_8).equals("null");
                    hs.add(key, headers.toConnectHeader(topic, key, none ? null : envelope));
                }
            }
            String originalTopic = topic;
            int originalPartition = partition;
            long originalOffset = offset;
            if ((flags & 4) != 0) {
                originalTopic = r.str();
                originalPartition = r.i32();
                originalOffset = r.i64();
            }
            out.add(new SinkRecord(topic, partition, k.schema(), k.value(), v.schema(), v.value(),
                    offset, ts, tt, hs, originalTopic, originalPartition, originalOffset));
        }
        if (!r.atEnd()) {
            throw new org.apache.kafka.connect.errors.DataException("bytes left after the " + count + " records of a put batch");
        }
        return out;
    }

    private static SchemaAndValue data(State state, RecordReader r, JsonConverter schemaless, String topic) {
        long id = r.i64();
        if (id == 0) {
            return r.u8() == 0 ? SchemaAndValue.NULL : schemaless.toConnectData(topic, r.bytes());
        }
        org.apache.kafka.connect.data.Schema schema = state.schemas.get(id);
        if (schema == null) {
            throw new org.apache.kafka.connect.errors.DataException("a record names unknown schema " + id);
        }
        return new SchemaAndValue(schema, r.value(schema));
    }

    void put(SinkTask task, State state, JsonNode request, byte[] attachment) throws Exception {
        List<SinkRecord> batch = decode(state, request, attachment);
        IdentityHashMap<SinkRecord, Integer> index = new IdentityHashMap<>();
        for (int i = 0; i < batch.size(); i++) {
            index.put(batch.get(i), i);
        }
        state.batch = index;
        state.batchList = batch;
        task.put(batch);
    }

    static Map<TopicPartition, OffsetAndMetadata> offsetMap(JsonNode offsets) {
        Map<TopicPartition, OffsetAndMetadata> in = new HashMap<>();
        for (JsonNode o : offsets) {
            in.put(new TopicPartition(o.path("topic").asText(), o.path("partition").asInt()),
                    new OffsetAndMetadata(o.path("offset").asLong()));
        }
        return in;
    }

    static void flush(SinkTask task, JsonNode offsets) {
        task.flush(offsetMap(offsets));
    }

    static JsonNode preCommit(SinkTask task, JsonNode offsets) {
        Map<TopicPartition, OffsetAndMetadata> out = task.preCommit(offsetMap(offsets));
        ArrayNode a = Protocol.MAPPER.createArrayNode();
        if (out != null) {
            out.forEach((tp, om) -> {
                if (om != null) {
                    a.addObject().put("topic", tp.topic()).put("partition", tp.partition()).put("offset", om.offset());
                }
            });
        }
        return a;
    }

    private void tell(String instance, String action, ObjectNode body) {
        body.put("op", "sinkContext");
        body.put("id", 0);
        body.put("instance", instance);
        body.put("action", action);
        protocol.send(body);
    }

    SinkTaskContext context(String instance, Map<String, String> config, State state, boolean reporter) {
        return new SinkTaskContext() {
            @Override
            public Map<String, String> configs() {
                return config;
            }

            @Override
            public void offset(Map<TopicPartition, Long> offsets) {
                ObjectNode b = Protocol.MAPPER.createObjectNode();
                ArrayNode a = b.putArray("offsets");
                offsets.forEach((tp, o) -> a.addObject().put("topic", tp.topic()).put("partition", tp.partition()).put("offset", o));
                tell(instance, "offset", b);
            }

            @Override
            public void offset(TopicPartition tp, long offset) {
                offset(Map.of(tp, offset));
            }

            @Override
            public void timeout(long timeoutMs) {
                ObjectNode b = Protocol.MAPPER.createObjectNode();
                b.put("ms", timeoutMs);
                tell(instance, "timeout", b);
            }

            @Override
            public Set<TopicPartition> assignment() {
                synchronized (state.assignment) {
                    return new LinkedHashSet<>(state.assignment);
                }
            }

            @Override
            public void pause(TopicPartition... partitions) {
                ObjectNode b = Protocol.MAPPER.createObjectNode();
                b.set("partitions", partitionsJson(Arrays.asList(partitions)));
                tell(instance, "pause", b);
            }

            @Override
            public void resume(TopicPartition... partitions) {
                ObjectNode b = Protocol.MAPPER.createObjectNode();
                b.set("partitions", partitionsJson(Arrays.asList(partitions)));
                tell(instance, "resume", b);
            }

            @Override
            public void requestCommit() {
                tell(instance, "requestCommit", Protocol.MAPPER.createObjectNode());
            }

            @Override
            public ErrantRecordReporter errantRecordReporter() {
                return reporter ? (record, error) -> report(instance, state, record, error) : null;
            }

            @Override
            public PluginMetrics pluginMetrics() {
                return null;
            }
        };
    }

    /** Reports through the worker (its error handling and dead-letter queue); done when durable. */
    private Future<Void> report(String instance, State state, SinkRecord record, Throwable error) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Integer index = state.batch.get(record);
        if (index == null) {
            // A copy of a record of the batch (newRecord): found by its coordinates.
            List<SinkRecord> batch = state.batchList;
            for (int i = 0; i < batch.size(); i++) {
                SinkRecord r = batch.get(i);
                if (r.kafkaOffset() == record.kafkaOffset() && r.kafkaPartition().equals(record.kafkaPartition())
                        && r.topic().equals(record.topic())) {
                    index = i;
                    break;
                }
            }
        }
        if (index == null) {
            done.completeExceptionally(new IllegalArgumentException("the reported record is not one of the batch being put"));
            return done;
        }
        ObjectNode req = Protocol.MAPPER.createObjectNode();
        req.put("op", "errantRecord");
        req.put("instance", instance);
        req.put("index", index);
        req.set("error", Protocol.errorNode(error));
        Thread t = new Thread(() -> {
            try {
                protocol.call(req, 120_000);
                done.complete(null);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, "errant-record-report");
        t.setDaemon(true);
        t.start();
        return done;
    }
}
