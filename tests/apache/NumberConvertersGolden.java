// Prints what Apache Kafka 4.4's primitive converters do with a set of values and byte arrays,
// one case a line, for connect-api/src/converter/number_golden.tsv. Regenerate with:
//
//   M=~/.m2/repository/org/apache/kafka
//   CP=$M/connect-runtime/4.4.0/connect-runtime-4.4.0.jar:$M/connect-api/4.4.0/connect-api-4.4.0.jar:$M/kafka-clients/4.4.0/kafka-clients-4.4.0.jar:$HOME/.m2/repository/org/slf4j/slf4j-api/1.7.36/slf4j-api-1.7.36.jar
//   java -cp "$CP" tests/apache/NumberConvertersGolden.java > connect-api/src/converter/number_golden.tsv
//
// Lines (tab-separated):
//   to    <Converter> <value>  <hex bytes | null | ERR message>       fromConnectData
//   from  <Converter> <hex | null> <schema type> <value | ERR message|cause>  toConnectData
// Values are `null`, `short:N`, `int:N`, `long:N`, `float:<raw bits hex>`, `double:<raw bits hex>`,
// `boolean:B`, `string:S`; `schema:TYPE` before a value means it is given with that schema.
import java.util.*;
import org.apache.kafka.connect.data.*;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.converters.*;

public class NumberConvertersGolden {
    static String hex(byte[] b) {
        if (b == null) return "null";
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }
    static byte[] unhex(String h) {
        if (h.equals("null")) return null;
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return b;
    }
    static String show(Object v) {
        if (v == null) return "null";
        if (v instanceof Short) return "short:" + v;
        if (v instanceof Integer) return "int:" + v;
        if (v instanceof Long) return "long:" + v;
        if (v instanceof Float) return "float:" + Integer.toHexString(Float.floatToRawIntBits((Float) v));
        if (v instanceof Double) return "double:" + Long.toHexString(Double.doubleToRawLongBits((Double) v));
        if (v instanceof Boolean) return "boolean:" + v;
        if (v instanceof String) return "string:" + v;
        throw new IllegalArgumentException(v.toString());
    }
    static void to(Converter c, Schema schema, Object v) {
        String out;
        try { out = hex(c.fromConnectData("t", schema, v)); }
        catch (Exception e) { out = "ERR " + e.getMessage(); }
        String in = (schema == null ? "" : "schema:" + schema.type() + " ") + show(v);
        System.out.println("to\t" + c.getClass().getSimpleName() + "\t" + in + "\t" + out);
    }
    static void from(Converter c, String h) {
        String out;
        try {
            SchemaAndValue sv = c.toConnectData("t", unhex(h));
            out = sv.schema().type() + (sv.schema().isOptional() ? "?" : "") + "\t" + show(sv.value());
        } catch (Exception e) {
            out = "ERR\t" + e.getMessage() + "|" + (e.getCause() == null ? "" : e.getCause().getMessage());
        }
        System.out.println("from\t" + c.getClass().getSimpleName() + "\t" + h + "\t" + out);
    }
    static Converter conf(Converter c) { c.configure(Map.of(), false); return c; }

    public static void main(String[] a) {
        Converter s = conf(new ShortConverter()), i = conf(new IntegerConverter()), l = conf(new LongConverter()),
            f = conf(new FloatConverter()), d = conf(new DoubleConverter()), b = conf(new BooleanConverter());
        for (Object v : new Object[]{(short) 0, (short) 1, (short) -1, Short.MAX_VALUE, Short.MIN_VALUE, (short) 258, null, 5, "x"}) to(s, null, v);
        for (Object v : new Object[]{0, 1, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 0x12345678, null, (short) 5, 5L, 1.0f}) to(i, null, v);
        to(i, Schema.STRING_SCHEMA, 7);
        for (Object v : new Object[]{0L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, 0x0102030405060708L, null, 5}) to(l, null, v);
        for (Object v : new Object[]{0.0f, -0.0f, 1.5f, -2.25f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MIN_VALUE, Float.MAX_VALUE, null, 1.5}) to(f, null, v);
        for (Object v : new Object[]{0.0, -0.0, 1.5, Math.PI, Double.NaN, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, Double.MAX_VALUE, null, 1.5f}) to(d, null, v);
        for (Object v : new Object[]{true, false, null, 1, "true"}) to(b, null, v);
        to(b, Schema.BOOLEAN_SCHEMA, true);
        to(b, Schema.OPTIONAL_BOOLEAN_SCHEMA, null);
        to(b, Schema.INT8_SCHEMA, true);
        for (String h : new String[]{"0000", "0001", "ffff", "7fff", "8000", "0102", "null", "", "01", "000000"}) from(s, h);
        for (String h : new String[]{"00000000", "ffffffff", "7fffffff", "80000000", "12345678", "null", "", "0001", "0000000000"}) from(i, h);
        for (String h : new String[]{"0000000000000000", "ffffffffffffffff", "0102030405060708", "8000000000000000", "null", "00000000"}) from(l, h);
        for (String h : new String[]{"00000000", "80000000", "3fc00000", "7fc00000", "7f800000", "ff800000", "00000001", "null", "0000"}) from(f, h);
        for (String h : new String[]{"0000000000000000", "3ff8000000000000", "400921fb54442d18", "7ff8000000000000", "fff0000000000000", "null", "00000000"}) from(d, h);
        for (String h : new String[]{"01", "00", "null", "02", "ff", "", "0001"}) from(b, h);
    }
}
