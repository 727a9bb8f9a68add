// The task of BenchSourceConnector: emits seqnos 0, 1, 2, ... for partition {"id": <task id>},
// batch.size records per poll, from the stored offset's seqno + 1 on a restart; with
// complete.record.data=true each value is a struct of COMPLETE_VALUE_SCHEMA (the connector's
// name, the task id, the topic, the time in ms, the seqno), as Apache's verifiable source writes.
package connectrs.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

public class BenchSourceTask extends SourceTask {
    static final String ID_FIELD = "id";
    static final String SEQNO_FIELD = "seqno";
    /** How long a task past max.records waits per poll, so the worker's loop idles. */
    static final long IDLE_POLL_MS = 100;
    /** Apache's VerifiableSourceTask.COMPLETE_VALUE_SCHEMA. */
    static final Schema COMPLETE_VALUE_SCHEMA = SchemaBuilder.struct()
        .field("name", Schema.STRING_SCHEMA)
        .field("task", Schema.INT32_SCHEMA)
        .field("topic", Schema.STRING_SCHEMA)
        .field("time_ms", Schema.INT64_SCHEMA)
        .field("seqno", Schema.INT64_SCHEMA)
        .build();

    private String topic;
    private int id;
    private int batchSize;
    private long maxRecords;
    private long throughput;
    private boolean completeRecordData;
    private String name;
    private Map<String, Integer> partition;
    private long seqno;
    private long startingSeqno;
    private long startedNs;

    @Override
    public String version() {
        return BenchSourceConnector.VERSION;
    }

    @Override
    public void start(Map<String, String> props) {
        AbstractConfig config = new AbstractConfig(BenchSourceConnector.CONFIG_DEF, props);
        topic = config.getString(BenchSourceConnector.TOPIC);
        batchSize = config.getInt(BenchSourceConnector.BATCH_SIZE);
        maxRecords = config.getLong(BenchSourceConnector.MAX_RECORDS);
        throughput = config.getLong(BenchSourceConnector.THROUGHPUT);
        completeRecordData = config.getBoolean(BenchSourceConnector.COMPLETE_RECORD_DATA);
        name = props.getOrDefault("name", "");
        id = Integer.parseInt(props.get(BenchSourceConnector.ID));
        partition = Collections.singletonMap(ID_FIELD, id);
        Map<String, Object> offset = context.offsetStorageReader().offset(partition);
        seqno = 0;
        if (offset != null && offset.get(SEQNO_FIELD) instanceof Number) {
            seqno = ((Number) offset.get(SEQNO_FIELD)).longValue() + 1;
        }
        startingSeqno = seqno;
        startedNs = System.nanoTime();
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        long n = batchSize;
        if (maxRecords >= 0) {
            long remaining = maxRecords - seqno;
            if (remaining <= 0) {
                Thread.sleep(IDLE_POLL_MS);
                return null;
            }
            n = Math.min(n, remaining);
        }
        if (throughput > 0) {
            // Sleep until the records sent so far are due at `throughput` records per second.
            long dueNs = (seqno - startingSeqno) * 1_000_000_000L / throughput;
            long waitNs = dueNs - (System.nanoTime() - startedNs);
            if (waitNs > 0) {
                Thread.sleep(waitNs / 1_000_000, (int) (waitNs % 1_000_000));
            }
        }
        List<SourceRecord> batch = new ArrayList<>((int) n);
        for (long i = 0; i < n; i++) {
            Map<String, Long> offset = Collections.singletonMap(SEQNO_FIELD, seqno);
            if (completeRecordData) {
                Struct value = new Struct(COMPLETE_VALUE_SCHEMA)
                    .put("name", name)
                    .put("task", id)
                    .put("topic", topic)
                    .put("time_ms", System.currentTimeMillis())
                    .put("seqno", seqno);
                batch.add(new SourceRecord(partition, offset, topic, Schema.INT32_SCHEMA, id,
                    COMPLETE_VALUE_SCHEMA, value));
            } else {
                batch.add(new SourceRecord(partition, offset, topic, Schema.INT32_SCHEMA, id,
                    Schema.INT64_SCHEMA, seqno));
            }
            seqno++;
        }
        return batch;
    }

    @Override
    public void stop() {
    }
}
