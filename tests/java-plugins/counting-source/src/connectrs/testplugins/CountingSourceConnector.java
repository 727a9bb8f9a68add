package connectrs.testplugins;

import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * A Java source plugin for the worker's tests (tests/tests/java_plugins/): its one task counts
 * 0, 1, 2, ... into {@code topic} (up to {@code max.records}), its offset the next number, and
 * with a transaction context asks for a commit after every {@code boundary.every}-th record.
 */
public class CountingSourceConnector extends SourceConnector {
    static final ConfigDef CONFIG = new ConfigDef()
            .define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "Where the numbers go.")
            .define("max.records", ConfigDef.Type.LONG, 100L, ConfigDef.Importance.LOW, "How many.")
            .define("boundary.every", ConfigDef.Type.INT, 10, ConfigDef.Importance.LOW,
                    "A transaction ends after every this many records (transaction.boundary=connector).");

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
        return CountingSourceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        return List.of(props);
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> config) {
        return ExactlyOnceSupport.SUPPORTED;
    }

    @Override
    public ConnectorTransactionBoundaries canDefineTransactionBoundaries(Map<String, String> config) {
        return ConnectorTransactionBoundaries.SUPPORTED;
    }
}
