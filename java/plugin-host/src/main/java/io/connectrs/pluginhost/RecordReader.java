package io.connectrs.pluginhost;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.errors.DataException;

/**
 * Reads the binary form of Connect data {@link RecordWriter} documents (what the worker's
 * {@code plugins/java/wire.rs} writes for a sink task's {@code put}) into the objects Apache's
 * JsonConverter would have built: logical types as {@code BigDecimal} and {@code java.util.Date},
 * BYTES as {@code byte[]}, arrays as {@code ArrayList}, maps as {@code HashMap}, structs as
 * {@link Struct}s of the schema (validated by {@code Struct.put}); a null where the schema has
 * a default reads as the default (the JsonConverter's {@code replace.null.with.default}).
 * Truncated input is a {@link DataException}, never a read past the end.
 */
final class RecordReader {
    private final byte[] buf;
    private int at;
    /** A null of an optional schema with a default reads as the default too (a converter's read). */
    private final boolean replaceNullWithDefault;

    RecordReader(byte[] buf) {
        this(buf, true);
    }

    /**
     * With {@code replaceNullWithDefault} false, a null stays null where its schema is optional
     * (the data as a task built it, for transformations); a required one reads as its default.
     */
    RecordReader(byte[] buf, boolean replaceNullWithDefault) {
        this.buf = buf == null ? new byte[0] : buf;
        this.replaceNullWithDefault = replaceNullWithDefault;
    }

    boolean atEnd() {
        return at == buf.length;
    }

    private void need(int n) {
        if (n < 0 || buf.length - at < n) {
            throw new DataException("a put batch's records end too early");
        }
    }

    int u8() {
        need(1);
        return buf[at++] & 0xff;
    }

    short i16() {
        need(2);
        short v = (short) (((buf[at] & 0xff) << 8) | (buf[at + 1] & 0xff));
        at += 2;
        return v;
    }

    int i32() {
        need(4);
        int v = ((buf[at] & 0xff) << 24) | ((buf[at + 1] & 0xff) << 16) | ((buf[at + 2] & 0xff) << 8)
                | (buf[at + 3] & 0xff);
        at += 4;
        return v;
    }

    long i64() {
        long hi = i32() & 0xffffffffL;
        long lo = i32() & 0xffffffffL;
        return (hi << 32) | lo;
    }

    /** A count: never more than the bytes left (each element takes at least one). */
    int count() {
        int n = i32();
        need(n);
        return n;
    }

    byte[] bytes() {
        int n = count();
        byte[] out = new byte[n];
        System.arraycopy(buf, at, out, 0, n);
        at += n;
        return out;
    }

    String str() {
        int n = count();
        String s = new String(buf, at, n, StandardCharsets.UTF_8);
        at += n;
        return s;
    }

    Object value(Schema schema) {
        if (u8() == 0) {
            return replaceNullWithDefault || !schema.isOptional() ? schema.defaultValue() : null;
        }
        String name = schema.name();
        switch (schema.type()) {
            case INT8:
                return (byte) u8();
            case INT16:
                return i16();
            case INT32: {
                int v = i32();
                if (Date.LOGICAL_NAME.equals(name)) {
                    return Date.toLogical(schema, v);
                }
                if (Time.LOGICAL_NAME.equals(name)) {
                    return Time.toLogical(schema, v);
                }
                return v;
            }
            case INT64: {
                long v = i64();
                return Timestamp.LOGICAL_NAME.equals(name) ? Timestamp.toLogical(schema, v) : v;
            }
            case FLOAT32:
                return Float.intBitsToFloat(i32());
            case FLOAT64:
                return Double.longBitsToDouble(i64());
            case BOOLEAN:
                return u8() != 0;
            case STRING:
                return str();
            case BYTES: {
                byte[] b = bytes();
                return Decimal.LOGICAL_NAME.equals(name) ? Decimal.toLogical(schema, b) : b;
            }
            case ARRAY: {
                int n = count();
                List<Object> out = new ArrayList<>(n);
                for (int k = 0; k < n; k++) {
                    out.add(value(schema.valueSchema()));
                }
                return out;
            }
            case MAP: {
                int n = count();
                Map<Object, Object> out = new HashMap<>();
                for (int k = 0; k < n; k++) {
                    Object key = value(schema.keySchema());
                    out.put(key, value(schema.valueSchema()));
                }
                return out;
            }
            case STRUCT: {
                Struct out = new Struct(schema);
                for (Field f : schema.fields()) {
                    out.put(f, value(f.schema()));
                }
                return out;
            }
            default:
                throw new DataException("Unknown schema type: " + schema.type());
        }
    }
}
