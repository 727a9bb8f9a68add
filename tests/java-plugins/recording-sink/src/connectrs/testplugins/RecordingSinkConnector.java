package connectrs.testplugins;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;

/**
 * A Java sink plugin for the worker's tests (tests/tests/java_plugins/): its task appends what
 * it is given to a file — OPEN/CLOSE of partitions, each record flushed, STOP — and reports the
 * records whose value is {@code fail.on} as errant.
 */
public class RecordingSinkConnector extends SinkConnector {
    static final ConfigDef CONFIG = new ConfigDef()
            .define("file", ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH,
                    "The file the task appends to.")
            .define("fail.on", ConfigDef.Type.STRING, "poison", ConfigDef.Importance.LOW,
                    "Records with this value are reported as errant.")
            .define("throw.in", ConfigDef.Type.STRING, "", ConfigDef.Importance.LOW,
                    "Where the task throws, for failure tests: start, put, or nothing.");

    private Map<String, String> props;

    @Override
    public String version() {
        return "1.0-test";
    }

    @Override
    public void start(Map<String, String> props) {
        this.props = props;
    }

    @Override
    public Class<? extends Task> taskClass() {
        return RecordingSinkTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> out = new ArrayList<>();
        out.add(props);
        return out;
    }

    @Override
    public void stop() {
    }

    /** Appends {@code ALTER topic-partition=offset} lines (or {@code =reset}) and acknowledges. */
    @Override
    public boolean alterOffsets(Map<String, String> config, Map<TopicPartition, Long> offsets) {
        List<String> lines = new ArrayList<>();
        offsets.forEach((tp, o) -> lines.add("ALTER " + tp.topic() + "-" + tp.partition() + "=" + (o == null ? "reset" : o)));
        try {
            Files.write(Path.of(config.get("file")), lines, StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new ConnectException("cannot write " + config.get("file"), e);
        }
        return true;
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }
}
