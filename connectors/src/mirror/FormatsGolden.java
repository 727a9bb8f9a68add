// Prints the golden bytes of formats.rs's tests: `java -cp ".local/kafka/jars-4.4.0/*"
// connectors/src/mirror/FormatsGolden.java` (the jars `deploy/kafka.sh` fetches).
import org.apache.kafka.common.protocol.types.*;
import java.nio.ByteBuffer;
// The schemas of connect-mirror-client 4.4's OffsetSync, Checkpoint and Heartbeat, written
// with kafka-clients 4.4's protocol types as those classes write them.
public class FormatsGolden {
    static String hex(Schema s, Struct st) {
        ByteBuffer b = ByteBuffer.allocate(s.sizeOf(st)); s.write(b, st);
        StringBuilder sb = new StringBuilder(); for (byte x : b.array()) sb.append(String.format("%02x", x)); return sb.toString();
    }
    static String hex2(Schema h, Struct hs, Schema s, Struct st) {
        ByteBuffer b = ByteBuffer.allocate(h.sizeOf(hs) + s.sizeOf(st)); h.write(b, hs); s.write(b, st);
        StringBuilder sb = new StringBuilder(); for (byte x : b.array()) sb.append(String.format("%02x", x)); return sb.toString();
    }
    public static void main(String[] a) {
        Schema syncValue = new Schema(new Field("upstreamOffset", Type.INT64), new Field("offset", Type.INT64));
        Schema syncKey = new Schema(new Field("topic", Type.STRING), new Field("partition", Type.INT32));
        Struct k = new Struct(syncKey); k.set("topic", "topic1"); k.set("partition", 2);
        Struct v = new Struct(syncValue); v.set("upstreamOffset", 3L); v.set("offset", 4L);
        System.out.println("sync key " + hex(syncKey, k));
        System.out.println("sync value " + hex(syncValue, v));
        Schema header = new Schema(new Field("version", Type.INT16));
        Schema cpValue = new Schema(new Field("upstreamOffset", Type.INT64), new Field("offset", Type.INT64), new Field("metadata", Type.STRING));
        Schema cpKey = new Schema(new Field("group", Type.STRING), new Field("topic", Type.STRING), new Field("partition", Type.INT32));
        Struct ck = new Struct(cpKey); ck.set("group", "g"); ck.set("topic", "a.t"); ck.set("partition", 1);
        Struct hs = new Struct(header); hs.set("version", (short) 0);
        Struct cv = new Struct(cpValue); cv.set("upstreamOffset", 10L); cv.set("offset", 7L); cv.set("metadata", "m\u00e9");
        System.out.println("checkpoint key " + hex(cpKey, ck));
        System.out.println("checkpoint value " + hex2(header, hs, cpValue, cv));
        Schema hbValue = new Schema(new Field("timestamp", Type.INT64));
        Schema hbKey = new Schema(new Field("sourceClusterAlias", Type.STRING), new Field("targetClusterAlias", Type.STRING));
        Struct hk = new Struct(hbKey); hk.set("sourceClusterAlias", "us"); hk.set("targetClusterAlias", "eu");
        Struct hv = new Struct(hbValue); hv.set("timestamp", 1733400000000L);
        System.out.println("heartbeat key " + hex(hbKey, hk));
        System.out.println("heartbeat value " + hex2(header, hs, hbValue, hv));
    }
}
