package io.connectrs.pluginhost;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.connector.ConnectorContext;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.sink.SinkTask;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM side of the worker's Java plugin support: started by the worker with
 * {@code plugin.path}, it loads plugins and runs their connectors and tasks on the worker's
 * requests (see {@link Protocol}). The worker keeps everything else: the group, REST, offsets,
 * converters, transforms and the (transactional) producer; tasks here only produce records.
 *
 * <p>Threads: one reader (this main thread) dispatches frames; each connector or task instance
 * runs its calls in order on a thread of its own (so a slow {@code poll} delays nobody else);
 * stateless calls (config definitions, validation) run on a shared pool. {@code task.signalStop}
 * calls {@code SourceTask.stop()} at once, from another thread, as Apache's worker does while a
 * {@code poll} is in flight.
 *
 * <p>Lifetime: the host exits when its stdin closes (the worker exited, however it exited) or
 * when the worker process named by {@code CONNECT_WORKER_PID} is gone.
 */
public final class PluginHost {
    private static final Logger log = LoggerFactory.getLogger(PluginHost.class);
    private static final long OFFSET_READ_TIMEOUT_MS = 120_000;

    private final Protocol protocol;
    private final RecordCodec codec = new RecordCodec();
    private final SinkTasks sinks;
    private final RecordPlugins recordPlugins = new RecordPlugins();
    private final ExecutorService shared = Executors.newCachedThreadPool(daemon("plugin-host-call"));
    private final Map<String, PluginScanner.Found> connectors = new ConcurrentHashMap<>();
    private final Map<String, PluginScanner.Found> tasks = new ConcurrentHashMap<>();
    private final Map<String, Instance> instances = new ConcurrentHashMap<>();

    /** One connector or task object and the thread its calls run on. */
    private static final class Instance {
        final String id;
        final ClassLoader loader;
        final ExecutorService thread;
        Object plugin;
        final Map<Long, SourceRecord> inFlight = new HashMap<>();
        long seq;
        final AtomicBoolean stopped = new AtomicBoolean();
        final SinkTasks.State sink = new SinkTasks.State();
        /** The task's TransactionContext requests, when it has one. */
        Transactions transactions;
        /** A source task's record encoder (its schema ids are this task's), made at its first poll. */
        private RecordCodec codec;
        /** A source task's poll answers are written here (its buffer is reused). */
        final RecordWriter writer = new RecordWriter();

        RecordCodec codec() {
            if (codec == null) {
                codec = new RecordCodec();
            }
            return codec;
        }

        Instance(String id, ClassLoader loader) {
            this.id = id;
            this.loader = loader;
            this.thread = Executors.newSingleThreadExecutor(daemon("plugin-" + id));
        }
    }

    private PluginHost(Protocol protocol) {
        this.protocol = protocol;
        this.sinks = new SinkTasks(protocol);
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    public static void main(String[] args) throws Exception {
        // stdout is the protocol's: whatever plugins print goes to stderr.
        FileOutputStream protocolOut = new FileOutputStream(FileDescriptor.out);
        System.setOut(System.err);
        Protocol protocol = new Protocol(new FileInputStream(FileDescriptor.in), protocolOut);
        watchWorker();
        PluginHost host = new PluginHost(protocol);
        host.run();
        Runtime.getRuntime().halt(0);
    }

    /** Exits when the worker process is gone, even if something keeps our stdin open. */
    private static void watchWorker() {
        String pid = System.getenv("CONNECT_WORKER_PID");
        if (pid == null || pid.isBlank()) {
            return;
        }
        long workerPid = Long.parseLong(pid.trim());
        Thread t = new Thread(() -> {
            while (true) {
                boolean alive = ProcessHandle.of(workerPid).map(ProcessHandle::isAlive).orElse(false)
                        && ProcessHandle.current().parent().map(p -> p.pid() == workerPid).orElse(false);
                if (!alive) {
                    Runtime.getRuntime().halt(0);
                }
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "worker-watch");
        t.setDaemon(true);
        t.start();
    }

    private void run() throws Exception {
        while (true) {
            ObjectNode frame = protocol.read();
            if (frame == null) {
                log.info("the worker closed the plugin host's input; exiting");
                return;
            }
            if (frame.has("re")) {
                protocol.completeReply(frame);
                continue;
            }
            try {
                dispatch(frame);
            } catch (Throwable t) {
                protocol.replyError(frame.path("id").asLong(), t);
            }
        }
    }

    private void submit(ExecutorService on, ClassLoader loader, long id, Callable<?> call) {
        on.execute(() -> {
            Thread me = Thread.currentThread();
            ClassLoader previous = me.getContextClassLoader();
            me.setContextClassLoader(loader);
            try {
                Object answer = call.call();
                if (answer instanceof Protocol.Answer a) {
                    protocol.reply(id, a.json(), a.attachment());
                } else {
                    protocol.reply(id, (JsonNode) answer);
                }
            } catch (Throwable t) {
                if (id == 0) {
                    log.error("plugin call failed", t);
                }
                protocol.replyError(id, t);
            } finally {
                me.setContextClassLoader(previous);
            }
        });
    }

    /** Runs a start; if it throws, the instance and its thread are let go (no stop follows). */
    private JsonNode startOrForget(Instance i, Callable<JsonNode> start) throws Exception {
        try {
            return start.call();
        } catch (Throwable t) {
            instances.remove(i.id);
            i.thread.shutdown();
            throw t;
        }
    }

    private Instance instance(JsonNode frame) {
        String id = frame.path("instance").asText();
        Instance i = instances.get(id);
        if (i == null) {
            throw new IllegalStateException("no plugin instance " + id + " in the plugin host");
        }
        return i;
    }

    private PluginScanner.Found connectorClass(String name) {
        PluginScanner.Found f = connectors.get(name);
        if (f == null) {
            throw new IllegalArgumentException("no connector class " + name + " in plugin.path");
        }
        return f;
    }

    private Connector newConnector(PluginScanner.Found f) throws Exception {
        return (Connector) Class.forName(f.className(), true, f.loader()).getDeclaredConstructor().newInstance();
    }

    private void dispatch(ObjectNode f) throws Exception {
        long id = f.path("id").asLong();
        String op = f.path("op").asText();
        switch (op) {
            case "hello" -> {
                ObjectNode r = Protocol.MAPPER.createObjectNode();
                r.put("java.version", System.getProperty("java.version"));
                r.put("kafka.version", org.apache.kafka.common.utils.AppInfoParser.getVersion());
                protocol.reply(id, r);
            }
            // Answered by this reader thread at once: the worker's liveness check.
            case "ping" -> protocol.reply(id, NullNode.getInstance());
            case "scan" -> submit(shared, PluginHost.class.getClassLoader(), id, () -> scan(f));
            case "configDef" -> {
                PluginScanner.Found c = connectorClass(f.path("class").asText());
                submit(shared, c.loader(), id, () -> configDef(newConnector(c).config()));
            }
            case "validate" -> {
                PluginScanner.Found c = connectorClass(f.path("class").asText());
                submit(shared, c.loader(), id, () -> validate(newConnector(c), RecordCodec.stringMap(f.get("config"))));
            }
            case "exactlyOnceSupport" -> {
                PluginScanner.Found c = connectorClass(f.path("class").asText());
                submit(shared, c.loader(), id, () -> {
                    Connector conn = newConnector(c);
                    ExactlyOnceSupport s = conn instanceof SourceConnector sc
                            ? sc.exactlyOnceSupport(RecordCodec.stringMap(f.get("config"))) : null;
                    return s == null ? NullNode.getInstance() : TextNode.valueOf(s.name());
                });
            }
            case "canDefineTransactionBoundaries" -> {
                PluginScanner.Found c = connectorClass(f.path("class").asText());
                submit(shared, c.loader(), id, () -> {
                    Connector conn = newConnector(c);
                    ConnectorTransactionBoundaries b = conn instanceof SourceConnector sc
                            ? sc.canDefineTransactionBoundaries(RecordCodec.stringMap(f.get("config"))) : null;
                    return b == null ? TextNode.valueOf("UNSUPPORTED") : TextNode.valueOf(b.name());
                });
            }
            case "alterOffsets" -> {
                PluginScanner.Found c = connectorClass(f.path("class").asText());
                submit(shared, c.loader(), id, () -> {
                    Connector conn = newConnector(c);
                    Map<String, String> config = RecordCodec.stringMap(f.get("config"));
                    boolean acknowledged;
                    if (conn instanceof SourceConnector sc) {
                        Map<Map<String, ?>, Map<String, ?>> offsets = new java.util.LinkedHashMap<>();
                        for (JsonNode o : f.path("offsets")) {
                            offsets.put(codec.offsetMap(o.get("partition")), codec.offsetMap(o.get("offset")));
                        }
                        acknowledged = sc.alterOffsets(config, offsets);
                    } else {
                        Map<org.apache.kafka.common.TopicPartition, Long> offsets = new java.util.LinkedHashMap<>();
                        for (JsonNode o : f.path("offsets")) {
                            offsets.put(new org.apache.kafka.common.TopicPartition(o.path("topic").asText(), o.path("partition").asInt()),
                                    o.hasNonNull("offset") ? o.get("offset").asLong() : null);
                        }
                        acknowledged = ((org.apache.kafka.connect.sink.SinkConnector) conn).alterOffsets(config, offsets);
                    }
                    return com.fasterxml.jackson.databind.node.BooleanNode.valueOf(acknowledged);
                });
            }
            case "connector.start" -> {
                PluginScanner.Found c = connectorClass(f.path("class").asText());
                Instance i = new Instance(f.path("instance").asText(), c.loader());
                instances.put(i.id, i);
                submit(i.thread, i.loader, id, () -> startOrForget(i, () -> {
                    Connector conn = newConnector(c);
                    i.plugin = conn;
                    conn.initialize(connectorContext(i.id));
                    conn.start(RecordCodec.stringMap(f.get("config")));
                    return NullNode.getInstance();
                }));
            }
            case "connector.taskConfigs" -> {
                Instance i = instance(f);
                int max = f.path("maxTasks").asInt(1);
                submit(i.thread, i.loader, id, () -> {
                    Connector conn = (Connector) i.plugin;
                    ArrayNode out = Protocol.MAPPER.createArrayNode();
                    for (Map<String, String> m : conn.taskConfigs(max)) {
                        out.add(Protocol.MAPPER.valueToTree(m));
                    }
                    return out;
                });
            }
            case "connector.stop" -> {
                Instance i = instance(f);
                submit(i.thread, i.loader, id, () -> {
                    try {
                        if (i.plugin != null) {
                            ((Connector) i.plugin).stop();
                        }
                    } finally {
                        instances.remove(i.id);
                        i.thread.shutdown();
                    }
                    return NullNode.getInstance();
                });
            }
            case "task.start" -> {
                String taskClass = f.path("class").asText();
                PluginScanner.Found c = tasks.get(taskClass);
                if (c == null) {
                    throw new IllegalArgumentException("no task class " + taskClass + " in plugin.path");
                }
                Instance i = new Instance(f.path("instance").asText(), c.loader());
                instances.put(i.id, i);
                Map<String, String> config = RecordCodec.stringMap(f.get("config"));
                boolean transactional = f.path("transactionContext").asBoolean(false);
                submit(i.thread, i.loader, id, () -> startOrForget(i, () -> {
                    SourceTask task = (SourceTask) Class.forName(taskClass, true, c.loader())
                            .getDeclaredConstructor().newInstance();
                    i.plugin = task;
                    if (transactional) {
                        i.transactions = new Transactions();
                    }
                    task.initialize(sourceTaskContext(i.id, config, i.transactions));
                    task.start(config);
                    ObjectNode r = Protocol.MAPPER.createObjectNode();
                    r.put("version", String.valueOf(task.version()));
                    return r;
                }));
            }
            case "task.poll" -> {
                Instance i = instance(f);
                submit(i.thread, i.loader, id, () -> {
                    commitRecords(i, f.get("commitRecords"));
                    return poll(i);
                });
            }
            case "task.commit" -> {
                Instance i = instance(f);
                submit(i.thread, i.loader, id, () -> {
                    commitRecords(i, f.get("commitRecords"));
                    ((SourceTask) i.plugin).commit();
                    return NullNode.getInstance();
                });
            }
            case "task.signalStop" -> {
                Instance i = instances.get(f.path("instance").asText());
                if (i != null && i.plugin != null && i.stopped.compareAndSet(false, true)) {
                    submit(shared, i.loader, id, () -> {
                        ((SourceTask) i.plugin).stop();
                        return NullNode.getInstance();
                    });
                } else {
                    protocol.reply(id, NullNode.getInstance());
                }
            }
            case "task.stop" -> {
                Instance i = instance(f);
                submit(i.thread, i.loader, id, () -> {
                    try {
                        commitRecords(i, f.get("commitRecords"));
                        if (i.plugin != null && i.stopped.compareAndSet(false, true)) {
                            ((SourceTask) i.plugin).stop();
                        }
                    } finally {
                        instances.remove(i.id);
                        i.thread.shutdown();
                    }
                    return NullNode.getInstance();
                });
            }
            case "sink.start" -> {
                String taskClass = f.path("class").asText();
                PluginScanner.Found c = tasks.get(taskClass);
                if (c == null) {
                    throw new IllegalArgumentException("no task class " + taskClass + " in plugin.path");
                }
                Instance i = new Instance(f.path("instance").asText(), c.loader());
                instances.put(i.id, i);
                Map<String, String> config = RecordCodec.stringMap(f.get("config"));
                boolean reporter = f.path("errantRecordReporter").asBoolean(false);
                submit(i.thread, i.loader, id, () -> startOrForget(i, () -> {
                    SinkTask task = (SinkTask) Class.forName(taskClass, true, c.loader())
                            .getDeclaredConstructor().newInstance();
                    i.plugin = task;
                    task.initialize(sinks.context(i.id, config, i.sink, reporter));
                    task.start(config);
                    ObjectNode r = Protocol.MAPPER.createObjectNode();
                    r.put("version", String.valueOf(task.version()));
                    return r;
                }));
            }
            case "sink.open", "sink.close" -> {
                Instance i = instance(f);
                List<org.apache.kafka.common.TopicPartition> tps = SinkTasks.partitions(f.get("partitions"));
                boolean open = op.equals("sink.open");
                submit(i.thread, i.loader, id, () -> {
                    synchronized (i.sink.assignment) {
                        if (open) {
                            i.sink.assignment.addAll(tps);
                        }
                    }
                    if (open) {
                        ((SinkTask) i.plugin).open(tps);
                    } else {
                        ((SinkTask) i.plugin).close(tps);
                        synchronized (i.sink.assignment) {
                            tps.forEach(i.sink.assignment::remove);
                        }
                    }
                    return NullNode.getInstance();
                });
            }
            case "sink.put" -> {
                Instance i = instance(f);
                byte[] records = protocol.takeAttachment();
                submit(i.thread, i.loader, id, () -> {
                    sinks.put((SinkTask) i.plugin, i.sink, f, records);
                    return NullNode.getInstance();
                });
            }
            case "sink.flush" -> {
                Instance i = instance(f);
                submit(i.thread, i.loader, id, () -> {
                    SinkTasks.flush((SinkTask) i.plugin, f.get("offsets"));
                    return NullNode.getInstance();
                });
            }
            case "sink.preCommit" -> {
                Instance i = instance(f);
                submit(i.thread, i.loader, id, () -> SinkTasks.preCommit((SinkTask) i.plugin, f.get("offsets")));
            }
            case "sink.stop" -> {
                Instance i = instance(f);
                submit(i.thread, i.loader, id, () -> {
                    try {
                        if (i.plugin != null && i.stopped.compareAndSet(false, true)) {
                            ((SinkTask) i.plugin).stop();
                        }
                    } finally {
                        instances.remove(i.id);
                        i.thread.shutdown();
                    }
                    return NullNode.getInstance();
                });
            }
            // Converters, header converters, transformations and predicates (RecordPlugins).
            case "plugin.configDef" -> {
                PluginScanner.Other o = recordPlugins.find(f.path("class").asText(), f.path("kind").asText());
                submit(shared, o.loader(), id, () -> configDef(RecordPlugins.configDef(o)));
            }
            case "plugin.new" -> {
                PluginScanner.Other o = recordPlugins.find(f.path("class").asText(), f.path("kind").asText());
                submit(shared, o.loader(), id, () -> {
                    recordPlugins.create(f.path("instance").asText(), o, RecordCodec.stringMap(f.get("config")),
                            f.path("isKey").asBoolean(false));
                    return NullNode.getInstance();
                });
            }
            case "plugin.close" -> submit(shared, PluginHost.class.getClassLoader(), id, () -> {
                recordPlugins.close(f.path("instance").asText());
                return NullNode.getInstance();
            });
            case "transform.apply" -> {
                byte[] records = protocol.takeAttachment();
                submit(shared, loaderOf(f), id,
                        () -> recordPlugins.applyBatch(f.path("instance").asText(), f, records));
            }
            case "predicate.test" -> {
                byte[] records = protocol.takeAttachment();
                submit(shared, loaderOf(f), id,
                        () -> recordPlugins.testBatch(f.path("instance").asText(), f, records));
            }
            case "converter.fromConnect" -> submit(shared, loaderOf(f), id,
                    () -> recordPlugins.fromConnect(f.path("instance").asText(), f));
            case "converter.toConnect" -> submit(shared, loaderOf(f), id,
                    () -> recordPlugins.toConnect(f.path("instance").asText(), f));
            default -> throw new IllegalArgumentException("unknown plugin host operation " + op);
        }
    }

    /** The class loader of a converter, transformation or predicate instance's plugin. */
    private ClassLoader loaderOf(JsonNode f) {
        return recordPlugins.instance(f.path("instance").asText()).getClass().getClassLoader();
    }

    private JsonNode scan(JsonNode f) {
        List<String> paths = new ArrayList<>();
        f.path("paths").forEach(p -> paths.add(p.asText()));
        PluginScanner scanner = new PluginScanner();
        scanner.scan(paths, f.path("discovery").asText("hybrid_warn"));
        ObjectNode r = Protocol.MAPPER.createObjectNode();
        ArrayNode plugins = r.putArray("plugins");
        for (PluginScanner.Found found : scanner.found) {
            connectors.putIfAbsent(found.className(), found);
            tasks.putIfAbsent(found.taskClass(), found);
            ObjectNode p = plugins.addObject();
            p.put("class", found.className());
            p.put("type", found.type());
            p.put("version", found.version());
            p.put("taskClass", found.taskClass());
            p.put("location", found.loader().location());
        }
        ArrayNode others = r.putArray("others");
        for (PluginScanner.Other o : scanner.others) {
            recordPlugins.add(o);
            ObjectNode n = others.addObject();
            n.put("class", o.className());
            n.put("type", o.type());
            n.put("version", o.version());
            n.put("location", o.loader().location());
        }
        ArrayNode without = r.putArray("withoutManifests");
        scanner.withoutManifests.forEach(without::add);
        ArrayNode errors = r.putArray("errors");
        scanner.errors.forEach(errors::add);
        return r;
    }

    private static JsonNode configDef(ConfigDef def) {
        ArrayNode keys = Protocol.MAPPER.createArrayNode();
        for (ConfigDef.ConfigKey k : def.configKeys().values()) {
            if (k.internalConfig) {
                continue;
            }
            ObjectNode n = keys.addObject();
            n.put("name", k.name);
            n.put("type", k.type.name());
            if (!k.hasDefault()) {
                n.put("required", true);
            } else if (k.defaultValue == null) {
                n.putNull("default");
            } else {
                n.put("default", ConfigDef.convertToString(k.defaultValue, k.type));
            }
            n.put("importance", k.importance == null ? "LOW" : k.importance.name());
            if (k.documentation != null) {
                n.put("documentation", k.documentation);
            }
            if (k.group != null) {
                n.put("group", k.group);
            }
            n.put("orderInGroup", k.orderInGroup);
            n.put("width", k.width == null ? "NONE" : k.width.name());
            n.put("displayName", k.displayName);
            ArrayNode deps = n.putArray("dependents");
            if (k.dependents != null) {
                k.dependents.forEach(deps::add);
            }
        }
        return keys;
    }

    private static JsonNode validate(Connector connector, Map<String, String> config) {
        ConfigDef def = connector.config();
        Config result = connector.validate(config);
        ObjectNode r = Protocol.MAPPER.createObjectNode();
        r.set("keys", configDef(def));
        ArrayNode values = r.putArray("values");
        for (ConfigValue v : result.configValues()) {
            ConfigDef.ConfigKey key = def.configKeys().get(v.name());
            ObjectNode n = values.addObject();
            n.put("name", v.name());
            n.put("value", asString(v.value(), key));
            ArrayNode rec = n.putArray("recommendedValues");
            if (v.recommendedValues() != null) {
                v.recommendedValues().forEach(x -> rec.add(asString(x, key)));
            }
            ArrayNode errs = n.putArray("errors");
            v.errorMessages().forEach(errs::add);
            n.put("visible", v.visible());
        }
        return r;
    }

    private static String asString(Object value, ConfigDef.ConfigKey key) {
        if (value == null) {
            return null;
        }
        return key != null ? ConfigDef.convertToString(value, key.type) : value.toString();
    }

    /**
     * {@code SourceTask.commitRecord} for the records the worker saw acknowledged since the last
     * call ({@code [seq, topic, partition, offset, timestamp]}, or {@code [seq]} for a record
     * that was dropped): the worker sends them with its next poll, commit or stop, in the order
     * it got the acknowledgements.
     */
    private static void commitRecords(Instance i, JsonNode acks) throws Exception {
        if (acks == null) {
            return;
        }
        SourceTask task = (SourceTask) i.plugin;
        for (JsonNode a : acks) {
            SourceRecord r = i.inFlight.remove(a.get(0).asLong());
            if (r == null) {
                continue;
            }
            RecordMetadata meta = a.size() < 5 ? null : new RecordMetadata(
                    new TopicPartition(a.get(1).asText(), a.get(2).asInt()),
                    a.get(3).asLong(), 0, a.get(4).asLong(-1), -1, -1);
            try {
                task.commitRecord(r, meta);
            } catch (Throwable t) {
                // As Apache's worker: logged, the task goes on.
                log.error("{}: exception thrown while calling task.commitRecord()", i.id, t);
            }
        }
    }

    /**
     * A poll's answer: {@code count} records in the frame's binary attachment (RecordCodec's
     * form), the schemas they name for the first time, and the TransactionContext's requests.
     */
    private Protocol.Answer poll(Instance i) throws Exception {
        List<SourceRecord> records = ((SourceTask) i.plugin).poll();
        ObjectNode r = Protocol.MAPPER.createObjectNode();
        RecordWriter w = i.writer;
        w.reset();
        int count = records == null ? 0 : records.size();
        if (records != null) {
            for (SourceRecord rec : records) {
                long seq = ++i.seq;
                i.inFlight.put(seq, rec);
                i.codec().encode(w, rec, seq);
            }
        }
        r.put("count", count);
        if (i.transactions != null && records != null) {
            i.transactions.drainInto(r, records, i.seq - records.size() + 1);
        }
        ObjectNode schemas = i.codec().takeNewSchemas();
        if (schemas != null) {
            r.set("schemas", schemas);
        }
        return new Protocol.Answer(r, w);
    }

    private ConnectorContext connectorContext(String instance) {
        return new ConnectorContext() {
            @Override
            public void requestTaskReconfiguration() {
                ObjectNode req = Protocol.MAPPER.createObjectNode();
                req.put("op", "requestTaskReconfiguration");
                req.put("id", 0);
                req.put("instance", instance);
                protocol.send(req);
            }

            @Override
            public void raiseError(Exception e) {
                ObjectNode req = Protocol.MAPPER.createObjectNode();
                req.put("op", "raiseError");
                req.put("id", 0);
                req.put("instance", instance);
                req.set("error", Protocol.errorNode(e));
                protocol.send(req);
            }

            @Override
            public PluginMetrics pluginMetrics() {
                return null;
            }
        };
    }

    private SourceTaskContext sourceTaskContext(String instance, Map<String, String> config,
                                                Transactions transactions) {
        OffsetStorageReader reader = new OffsetStorageReader() {
            @Override
            public <T> Map<String, Object> offset(Map<String, T> partition) {
                return offsets(List.of(partition)).get(partition);
            }

            @Override
            public <T> Map<Map<String, T>, Map<String, Object>> offsets(Collection<Map<String, T>> partitions) {
                try {
                    List<Map<String, T>> list = new ArrayList<>(partitions);
                    ObjectNode req = Protocol.MAPPER.createObjectNode();
                    req.put("op", "offsets");
                    req.put("instance", instance);
                    ArrayNode ps = req.putArray("partitions");
                    for (Map<String, T> p : list) {
                        ps.add(codec.offsetTree(p));
                    }
                    JsonNode answer = protocol.call(req, OFFSET_READ_TIMEOUT_MS);
                    Map<Map<String, T>, Map<String, Object>> out = new HashMap<>();
                    for (int n = 0; n < list.size(); n++) {
                        out.put(list.get(n), codec.offsetMap(answer.get(n)));
                    }
                    return out;
                } catch (Exception e) {
                    throw new org.apache.kafka.connect.errors.ConnectException("failed to read source offsets from the worker", e);
                }
            }
        };
        return new SourceTaskContext() {
            @Override
            public Map<String, String> configs() {
                return config;
            }

            @Override
            public OffsetStorageReader offsetStorageReader() {
                return reader;
            }

            @Override
            public org.apache.kafka.connect.source.TransactionContext transactionContext() {
                return transactions;
            }

            @Override
            public PluginMetrics pluginMetrics() {
                return null;
            }
        };
    }
}
