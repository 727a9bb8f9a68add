package connectrs.testplugins;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;

public class CountingSourceTask extends SourceTask {
    private static final Map<String, String> PARTITION = Map.of("counter", "0");
    private String topic;
    private long max;
    private int every;
    private long next;

    @Override
    public String version() {
        return "1.0-test";
    }

    @Override
    public void start(Map<String, String> props) {
        topic = props.get("topic");
        max = Long.parseLong(props.getOrDefault("max.records", "100"));
        every = Integer.parseInt(props.getOrDefault("boundary.every", "10"));
        Map<String, Object> offset = context.offsetStorageReader().offset(PARTITION);
        next = offset == null ? 0 : ((Number) offset.get("next")).longValue();
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        if (next >= max) {
            Thread.sleep(100);
            return null;
        }
        TransactionContext tx = context.transactionContext();
        List<SourceRecord> out = new ArrayList<>();
        // 7 a batch: the boundaries fall inside batches, not at their ends.
        for (int i = 0; i < 7 && next < max; i++) {
            SourceRecord r = new SourceRecord(PARTITION, Map.of("next", next + 1), topic, 0,
                    Schema.STRING_SCHEMA, Long.toString(next));
            out.add(r);
            next++;
            if (tx != null && next % every == 0) {
                tx.commitTransaction(r);
            }
        }
        return out;
    }

    @Override
    public void stop() {
    }
}
