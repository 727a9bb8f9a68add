package io.connectrs.pluginhost;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.TransactionContext;

/**
 * A source task's {@link TransactionContext} (given only when the worker runs it exactly-once
 * with {@code transaction.boundary=connector}): the requests made while a batch was polled
 * travel with that batch to the worker ({@code transaction}: {@code commit}, {@code abort},
 * and the sequence numbers of the records to commit or abort after), whose own transaction
 * context then applies them. A request naming a record not yet returned waits for it.
 */
final class Transactions implements TransactionContext {
    private boolean commit;
    private boolean abort;
    private final Set<SourceRecord> commitAt = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<SourceRecord> abortAt = Collections.newSetFromMap(new IdentityHashMap<>());

    @Override
    public synchronized void commitTransaction() {
        commit = true;
    }

    @Override
    public synchronized void commitTransaction(SourceRecord record) {
        commitAt.add(record);
    }

    @Override
    public synchronized void abortTransaction() {
        abort = true;
    }

    @Override
    public synchronized void abortTransaction(SourceRecord record) {
        abortAt.add(record);
    }

    /** Adds this batch's requests to a poll answer; {@code firstSeq} is the first record's. */
    synchronized void drainInto(ObjectNode answer, List<SourceRecord> batch, long firstSeq) {
        ArrayNode commits = Protocol.MAPPER.createArrayNode();
        ArrayNode aborts = Protocol.MAPPER.createArrayNode();
        for (int n = 0; n < batch.size(); n++) {
            SourceRecord r = batch.get(n);
            if (commitAt.remove(r)) {
                commits.add(firstSeq + n);
            }
            if (abortAt.remove(r)) {
                aborts.add(firstSeq + n);
            }
        }
        if (!commit && !abort && commits.isEmpty() && aborts.isEmpty()) {
            return;
        }
        ObjectNode t = answer.putObject("transaction");
        t.put("commit", commit);
        t.put("abort", abort);
        t.set("commitAt", commits);
        t.set("abortAt", aborts);
        commit = false;
        abort = false;
    }
}
