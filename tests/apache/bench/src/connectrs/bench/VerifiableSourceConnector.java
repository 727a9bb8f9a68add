// A stand-in for Apache Kafka's org.apache.kafka.connect.tools.VerifiableSourceConnector (its
// connect-test-plugins jar is not on Maven Central), written for this project: the migration test
// (tests/tests/migration.rs) creates a connector with "connector.class": "VerifiableSource",
// which Apache's alias rule (the simple class name, or it without "Connector") resolves to this
// class on Apache's worker and our worker resolves to its built-in verifiable source. Records and
// offsets are those of ours (connectors/src/verifiable): key INT32 = the task id, value INT64 =
// the seqno, source partition {"id": <task>}, offset {"seqno": <n>}, resuming at seqno + 1.
//
// Config (BenchSourceConnector's): topic, throughput (records per second per task, -1 =
// unthrottled), max.records (per task, -1 = unlimited), batch.size (records per poll); tasks.max
// tasks, `id` set per task; transaction boundaries at poll or interval only (ours can also define
// them, transaction.boundary=connector). The simple name must stay unique on Apache's classpath
// for the alias to resolve.
package connectrs.bench;

import org.apache.kafka.connect.connector.Task;

public class VerifiableSourceConnector extends BenchSourceConnector {
    @Override
    public Class<? extends Task> taskClass() {
        return VerifiableSourceTask.class;
    }
}
