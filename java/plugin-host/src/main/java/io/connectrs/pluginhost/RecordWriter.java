package io.connectrs.pluginhost;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
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
 * The binary form of Connect data that a poll answer's records travel in (read by the
 * worker's {@code plugins/java/wire.rs}): big-endian, each value led by a presence byte (0 null,
 * 1 a value follows), then by the schema's type: INT8 1 byte, INT16 2, INT32 4, INT64 8,
 * FLOAT32/FLOAT64 their IEEE bits, BOOLEAN 1 byte, STRING and BYTES a 4-byte length and the
 * bytes (UTF-8), ARRAY and MAP a 4-byte count and the elements (a MAP's as key then value),
 * STRUCT its fields' values in the schema's order. Logical types as Connect stores them
 * (Decimal the unscaled two's complement bytes, Date and Time INT32, Timestamp INT64), as
 * Apache's JsonConverter converts them before it writes them. Values are taken as they are
 * ({@code Struct.getWithoutDefault}): the worker's converter applies defaults as configured.
 *
 * <p>Walking the record's own objects by their schema, it does the work a converter's
 * traversal does and none of its text formatting: the worker gets the Connect data as the
 * Java task built it, without a JSON text to parse.
 */
final class RecordWriter {
    private byte[] buf = new byte[64 * 1024];
    private int len;

    int size() {
        return len;
    }

    void writeTo(java.io.OutputStream out) throws java.io.IOException {
        out.write(buf, 0, len);
    }

    void reset() {
        len = 0;
        if (buf.length > 4 * 1024 * 1024) {
            buf = new byte[64 * 1024];
        }
    }

    private void ensure(int more) {
        if (len + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
        }
    }

    void u8(int v) {
        ensure(1);
        buf[len++] = (byte) v;
    }

    void i16(int v) {
        ensure(2);
        buf[len++] = (byte) (v >>> 8);
        buf[len++] = (byte) v;
    }

    void i32(int v) {
        ensure(4);
        buf[len++] = (byte) (v >>> 24);
        buf[len++] = (byte) (v >>> 16);
        buf[len++] = (byte) (v >>> 8);
        buf[len++] = (byte) v;
    }

    void i64(long v) {
        i32((int) (v >>> 32));
        i32((int) v);
    }

    void bytes(byte[] b) {
        bytes(b, 0, b.length);
    }

    void bytes(byte[] b, int off, int n) {
        i32(n);
        ensure(n);
        System.arraycopy(b, off, buf, len, n);
        len += n;
    }

    void str(String s) {
        bytes(s.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code value} by {@code schema}, as the class comment says. */
    void value(Schema schema, Object value) {
        if (value == null) {
            u8(0);
            return;
        }
        u8(1);
        try {
            typed(schema, value);
        } catch (ClassCastException e) {
            throw new DataException("Invalid type for " + schema.type() + ": " + value.getClass(), e);
        }
    }

    private void typed(Schema schema, Object value) {
        String name = schema.name();
        switch (schema.type()) {
            case INT8 -> u8((Byte) value);
            case INT16 -> i16((Short) value);
            case INT32 -> {
                if (Date.LOGICAL_NAME.equals(name)) {
                    i32(Date.fromLogical(schema, (java.util.Date) value));
                } else if (Time.LOGICAL_NAME.equals(name)) {
                    i32(Time.fromLogical(schema, (java.util.Date) value));
                } else {
                    i32((Integer) value);
                }
            }
            case INT64 -> {
                if (Timestamp.LOGICAL_NAME.equals(name)) {
                    i64(Timestamp.fromLogical(schema, (java.util.Date) value));
                } else {
                    i64((Long) value);
                }
            }
            case FLOAT32 -> i32(Float.floatToRawIntBits((Float) value));
            case FLOAT64 -> i64(Double.doubleToRawLongBits((Double) value));
            case BOOLEAN -> u8((Boolean) value ? 1 : 0);
            case STRING -> str((String) value);
            case BYTES -> {
                if (Decimal.LOGICAL_NAME.equals(name)) {
                    bytes(Decimal.fromLogical(schema, (BigDecimal) value));
                } else if (value instanceof byte[] b) {
                    bytes(b);
                } else {
                    ByteBuffer bb = ((ByteBuffer) value).duplicate();
                    byte[] b = new byte[bb.remaining()];
                    bb.get(b);
                    bytes(b);
                }
            }
            case ARRAY -> {
                Collection<?> items = (Collection<?>) value;
                i32(items.size());
                for (Object item : items) {
                    value(schema.valueSchema(), item);
                }
            }
            case MAP -> {
                Map<?, ?> map = (Map<?, ?>) value;
                i32(map.size());
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    value(schema.keySchema(), e.getKey());
                    value(schema.valueSchema(), e.getValue());
                }
            }
            case STRUCT -> {
                Struct struct = (Struct) value;
                if (!struct.schema().equals(schema)) {
                    throw new DataException("Mismatching schema.");
                }
                for (Field f : schema.fields()) {
                    value(f.schema(), struct.getWithoutDefault(f.name()));
                }
            }
            default -> throw new DataException("Unknown schema type: " + schema.type());
        }
    }
}
