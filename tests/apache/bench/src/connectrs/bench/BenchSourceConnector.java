// A source connector for the side-by-side benchmark (tests/src/bin/side_by_side.rs), written for
// this project: Apache's own test plugins are not served by Maven Central. Its records have the
// shape of the verifiable source's (ours: connectors/src/verifiable/source.rs): key INT32 = the
// task id, value INT64 = the seqno, source partition {"id": <task>}, offset {"seqno": <n>}; with
// complete.record.data=true the value is the verifiable source's struct instead (name, task,
// topic, time_ms, seqno: Apache's VerifiableSourceTask.COMPLETE_VALUE_SCHEMA), for the Avro
// benchmark (tests/src/bin/avro_bench.rs).
//
// Config: topic, batch.size (records per poll), max.records (per task, -1 = unlimited),
// throughput (records per second per task, -1 = unthrottled), complete.record.data (default
// false); `id` is set per task.
package connectrs.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

public class BenchSourceConnector extends SourceConnector {
    static final String VERSION = "1.0";
    static final String TOPIC = "topic";
    static final String BATCH_SIZE = "batch.size";
    static final String MAX_RECORDS = "max.records";
    static final String THROUGHPUT = "throughput";
    static final String COMPLETE_RECORD_DATA = "complete.record.data";
    static final String ID = "id";

    static final ConfigDef CONFIG_DEF = new ConfigDef()
        .define(TOPIC, Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(),
            Importance.HIGH, "The topic the records go to.")
        .define(BATCH_SIZE, Type.INT, 1, ConfigDef.Range.atLeast(1), Importance.MEDIUM,
            "Records returned by each poll.")
        .define(MAX_RECORDS, Type.LONG, -1L, Importance.MEDIUM,
            "Records per task (seqnos 0 .. max.records - 1); -1 means no end. Afterwards polls return nothing.")
        .define(THROUGHPUT, Type.LONG, -1L, Importance.HIGH,
            "Records per second per task at most; -1 (any value below 1) means unthrottled.")
        .define(COMPLETE_RECORD_DATA, Type.BOOLEAN, false, Importance.MEDIUM,
            "Values are the verifiable source's struct (name, task, topic, time_ms, seqno) instead of the seqno.");

    private Map<String, String> props;

    @Override
    public String version() {
        return BenchSourceConnector.VERSION;
    }

    @Override
    public void start(Map<String, String> props) {
        CONFIG_DEF.parse(props);
        this.props = props;
    }

    @Override
    public Class<? extends Task> taskClass() {
        return BenchSourceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> configs = new ArrayList<>(maxTasks);
        for (int i = 0; i < maxTasks; i++) {
            Map<String, String> c = new HashMap<>(props);
            c.put(ID, Integer.toString(i));
            configs.add(c);
        }
        return configs;
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return CONFIG_DEF;
    }

    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
        return ExactlyOnceSupport.SUPPORTED;
    }

    // Transactions at poll or interval boundaries only (the benchmark's modes).
    @Override
    public ConnectorTransactionBoundaries canDefineTransactionBoundaries(Map<String, String> connectorConfig) {
        return ConnectorTransactionBoundaries.UNSUPPORTED;
    }
}
