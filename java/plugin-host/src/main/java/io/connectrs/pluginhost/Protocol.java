package io.connectrs.pluginhost;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The frames between worker and host: a 4-byte big-endian length, then that many bytes of one
 * UTF-8 JSON object. Requests carry {@code id} and {@code op}; a reply carries {@code re} (the
 * request's id) and either {@code ok} (the result) or {@code error} ({@code class},
 * {@code message}, {@code trace}). Both sides send requests: the worker asks the host to run
 * plugin code, the host asks the worker for what plugins read from it (source offsets).
 * A request with {@code id} 0 wants no reply.
 *
 * <p>A frame may carry a binary attachment (a poll answer's records): its length has the top
 * bit set, and the JSON object is followed by a 4-byte length and that many bytes.
 */
final class Protocol {
    static final ObjectMapper MAPPER = new ObjectMapper();
    private static final int MAX_FRAME = 256 * 1024 * 1024;
    /** The length's top bit: a binary attachment follows the JSON. */
    private static final int ATTACHMENT = 0x80000000;

    private final DataInputStream in;
    private final DataOutputStream out;
    private final AtomicLong nextId = new AtomicLong(1);
    /** Read and taken on the reader thread only. */
    private byte[] attachment;
    private final ConcurrentHashMap<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

    Protocol(InputStream in, OutputStream out) {
        this.in = new DataInputStream(in);
        this.out = new DataOutputStream(out);
    }

    /** The next frame, or null at the end of the input (the worker went away). */
    ObjectNode read() throws IOException {
        int len;
        try {
            len = in.readInt();
        } catch (EOFException e) {
            return null;
        }
        boolean attached = (len & ATTACHMENT) != 0;
        len &= ~ATTACHMENT;
        if (len > MAX_FRAME) {
            throw new IOException("frame of " + len + " bytes");
        }
        byte[] buf = new byte[len];
        in.readFully(buf);
        ObjectNode frame = (ObjectNode) MAPPER.readTree(buf);
        attachment = null;
        if (attached) {
            int n = in.readInt();
            if (n < 0 || n > MAX_FRAME) {
                throw new IOException("attachment of " + n + " bytes");
            }
            attachment = new byte[n];
            in.readFully(attachment);
        }
        return frame;
    }

    /** The binary attachment of the frame {@link #read} returned last (null if none). */
    byte[] takeAttachment() {
        byte[] a = attachment;
        attachment = null;
        return a;
    }

    /** A reply's JSON and the binary attachment after it. */
    record Answer(JsonNode json, RecordWriter attachment) {
    }

    void send(ObjectNode frame) {
        send(frame, null);
    }

    void send(ObjectNode frame, RecordWriter attachment) {
        try {
            byte[] bytes = MAPPER.writeValueAsBytes(frame);
            synchronized (out) {
                if (attachment == null) {
                    out.writeInt(bytes.length);
                    out.write(bytes);
                } else {
                    out.writeInt(bytes.length | ATTACHMENT);
                    out.write(bytes);
                    out.writeInt(attachment.size());
                    attachment.writeTo(out);
                }
                out.flush();
            }
        } catch (IOException e) {
            // The worker is gone: nothing to report to.
            Runtime.getRuntime().halt(0);
        }
    }

    void reply(long id, JsonNode result) {
        reply(id, result, null);
    }

    void reply(long id, JsonNode result, RecordWriter attachment) {
        if (id == 0) {
            return;
        }
        ObjectNode f = MAPPER.createObjectNode();
        f.put("re", id);
        f.set("ok", result);
        send(f, attachment);
    }

    void replyError(long id, Throwable t) {
        if (id == 0) {
            return;
        }
        ObjectNode f = MAPPER.createObjectNode();
        f.put("re", id);
        f.set("error", errorNode(t));
        send(f);
    }

    static ObjectNode errorNode(Throwable t) {
        ObjectNode e = MAPPER.createObjectNode();
        e.put("class", t.getClass().getName());
        e.put("message", t.getMessage() == null ? t.toString() : t.getMessage());
        java.io.StringWriter sw = new java.io.StringWriter();
        t.printStackTrace(new java.io.PrintWriter(sw));
        e.put("trace", sw.toString());
        return e;
    }

    /** Asks the worker and waits for its answer. */
    JsonNode call(ObjectNode request, long timeoutMs) throws Exception {
        long id = nextId.getAndIncrement();
        request.put("id", id);
        CompletableFuture<JsonNode> f = new CompletableFuture<>();
        pending.put(id, f);
        send(request);
        try {
            return f.get(timeoutMs, TimeUnit.MILLISECONDS);
        } finally {
            pending.remove(id);
        }
    }

    void completeReply(ObjectNode frame) {
        CompletableFuture<JsonNode> f = pending.get(frame.get("re").asLong());
        if (f == null) {
            return;
        }
        if (frame.has("error")) {
            f.completeExceptionally(new RuntimeException(frame.get("error").path("message").asText()));
        } else {
            f.complete(frame.get("ok"));
        }
    }
}
