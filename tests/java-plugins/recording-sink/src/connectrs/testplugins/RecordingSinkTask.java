package connectrs.testplugins;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

public class RecordingSinkTask extends SinkTask {
    private Path file;
    private String failOn;
    private String throwIn;
    private final List<String> buffer = new ArrayList<>();
    /** {@code format=json}: values written as Apache's JsonConverter (schemas on) writes them. */
    private org.apache.kafka.connect.json.JsonConverter json;

    @Override
    public String version() {
        return "1.0-test";
    }

    private void append(List<String> lines) {
        try {
            Files.write(file, lines, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new ConnectException("cannot write " + file, e);
        }
    }

    @Override
    public void start(Map<String, String> props) {
        file = Path.of(props.get("file"));
        failOn = props.getOrDefault("fail.on", "poison");
        throwIn = props.getOrDefault("throw.in", "");
        if ("json".equals(props.get("format"))) {
            json = new org.apache.kafka.connect.json.JsonConverter();
            json.configure(Map.of("schemas.enable", "true", "converter.type", "value"));
        }
        if (throwIn.equals("start")) {
            throw new IllegalStateException("RecordingSinkTask refuses to start (throw.in=start)");
        }
        append(List.of("START"));
    }

    private static String names(Collection<TopicPartition> partitions) {
        TreeSet<String> s = new TreeSet<>();
        partitions.forEach(tp -> s.add(tp.topic() + "-" + tp.partition()));
        return String.join(",", s);
    }

    @Override
    public void open(Collection<TopicPartition> partitions) {
        append(List.of("OPEN " + names(partitions) + " assignment=" + names(context.assignment())));
    }

    @Override
    public void close(Collection<TopicPartition> partitions) {
        append(List.of("CLOSE " + names(partitions)));
    }

    @Override
    public void put(Collection<SinkRecord> records) {
        if (throwIn.equals("put") && !records.isEmpty()) {
            throw new IllegalStateException("RecordingSinkTask fails in put (throw.in=put)");
        }
        ErrantRecordReporter reporter = context.errantRecordReporter();
        for (SinkRecord r : records) {
            if (failOn.equals(String.valueOf(r.value()))) {
                if (reporter == null) {
                    throw new DataException("errant record at offset " + r.kafkaOffset() + " and no reporter");
                }
                try {
                    reporter.report(r, new DataException("errant record at offset " + r.kafkaOffset())).get();
                } catch (Exception e) {
                    throw new ConnectException("reporting failed", e);
                }
                continue;
            }
            StringBuilder h = new StringBuilder();
            for (Header header : r.headers()) {
                h.append(' ').append(header.key()).append('=').append(header.value());
            }
            Object value = json == null ? r.value()
                    : new String(json.fromConnectData(r.topic(), r.valueSchema(), r.value()), StandardCharsets.UTF_8);
            buffer.add("RECORD " + r.topic() + "-" + r.kafkaPartition() + "@" + r.kafkaOffset()
                    + " key=" + r.key() + " value=" + value + h);
        }
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> preCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (!buffer.isEmpty()) {
            append(buffer);
            buffer.clear();
        }
        return offsets;
    }

    @Override
    public void stop() {
        append(List.of("STOP"));
    }
}
