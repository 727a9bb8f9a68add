// Prints Apache Kafka Connect 4.4's configuration definitions as JSON, for
// tests/golden/apache-4.4/config-defs.json (tests/apache/capture-config-defs.sh writes it;
// worker/tests/apache_config_defs.rs compares it with what this worker knows):
//
//   java -cp ".local/apache-connect/lib/*" tests/apache/DumpConfigDefs.java > tests/golden/apache-4.4/config-defs.json
//
// One entry per definition set: the worker (DistributedConfig, REST keys included), the
// connector configs (ConnectorConfig, SourceConnectorConfig, SinkConnectorConfig), every
// built-in converter's config(), and the Allowlist override policy's own keys. Each key:
// name, type, default (as Java prints it, null when none, "<required>" when required),
// importance, group and order in group, in definition order.
import java.lang.reflect.*;
import java.util.*;
import org.apache.kafka.common.config.ConfigDef;

public class DumpConfigDefs {
    static ConfigDef staticField(String className, String field) throws Exception {
        Field f = Class.forName(className).getDeclaredField(field);
        f.setAccessible(true);
        return (ConfigDef) f.get(null);
    }

    /** DistributedConfig's definitions, built as its constructor builds them. */
    static ConfigDef distributedConfig() throws Exception {
        Class<?> cls = Class.forName("org.apache.kafka.connect.runtime.distributed.DistributedConfig");
        Class<?> crypto = Class.forName("org.apache.kafka.connect.runtime.distributed.Crypto");
        Method m = cls.getDeclaredMethod("config", crypto);
        m.setAccessible(true);
        return (ConfigDef) m.invoke(null, crypto.getField("SYSTEM").get(null));
    }

    static ConfigDef staticMethod(String className, String method) throws Exception {
        Method m = Class.forName(className).getDeclaredMethod(method);
        m.setAccessible(true);
        return (ConfigDef) m.invoke(null);
    }

    static ConfigDef pluginConfig(String className) throws Exception {
        Object plugin = Class.forName(className).getDeclaredConstructor().newInstance();
        return (ConfigDef) plugin.getClass().getMethod("config").invoke(plugin);
    }

    static String quote(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static String defaultText(ConfigDef.ConfigKey k) {
        if (!k.hasDefault()) return quote("<required>");
        if (k.defaultValue == null) return "null";
        Object v = k.defaultValue;
        if (v instanceof List<?> l) {
            StringJoiner j = new StringJoiner(",");
            for (Object o : l) j.add(String.valueOf(o));
            return quote(j.toString());
        }
        if (v instanceof Class<?> c) return quote(c.getName());
        if (k.type == ConfigDef.Type.PASSWORD) return quote("[hidden]");
        return quote(String.valueOf(v));
    }

    static void print(String label, String source, ConfigDef def, boolean last) {
        System.out.println("  {");
        System.out.println("    \"set\": " + quote(label) + ",");
        System.out.println("    \"source\": " + quote(source) + ",");
        System.out.println("    \"keys\": [");
        List<ConfigDef.ConfigKey> keys = new ArrayList<>(def.configKeys().values());
        for (int i = 0; i < keys.size(); i++) {
            ConfigDef.ConfigKey k = keys.get(i);
            System.out.println("      {\"name\": " + quote(k.name)
                + ", \"type\": " + quote(k.type.name())
                + ", \"default\": " + defaultText(k)
                + ", \"importance\": " + quote(k.importance == null ? null : k.importance.name())
                + ", \"group\": " + quote(k.group)
                + ", \"order_in_group\": " + k.orderInGroup
                + "}" + (i + 1 < keys.size() ? "," : ""));
        }
        System.out.println("    ]");
        System.out.println("  }" + (last ? "" : ","));
    }

    public static void main(String[] args) throws Exception {
        String rt = "org.apache.kafka.connect.runtime.";
        String[][] converters = {
            {"org.apache.kafka.connect.json.JsonConverter"},
            {"org.apache.kafka.connect.storage.StringConverter"},
            {"org.apache.kafka.connect.converters.ByteArrayConverter"},
            {"org.apache.kafka.connect.converters.BooleanConverter"},
            {"org.apache.kafka.connect.converters.ShortConverter"},
            {"org.apache.kafka.connect.converters.IntegerConverter"},
            {"org.apache.kafka.connect.converters.LongConverter"},
            {"org.apache.kafka.connect.converters.FloatConverter"},
            {"org.apache.kafka.connect.converters.DoubleConverter"},
            {"org.apache.kafka.connect.storage.SimpleHeaderConverter"},
        };
        System.out.println("[");
        print("worker", rt + "distributed.DistributedConfig", distributedConfig(), false);
        print("connector", rt + "ConnectorConfig", staticMethod(rt + "ConnectorConfig", "configDef"), false);
        print("source-connector", rt + "SourceConnectorConfig", staticMethod(rt + "SourceConnectorConfig", "configDef"), false);
        print("sink-connector", rt + "SinkConnectorConfig", staticMethod(rt + "SinkConnectorConfig", "configDef"), false);
        String allowlist = "org.apache.kafka.connect.connector.policy.AllowlistConnectorClientConfigOverridePolicy";
        print("override-policy-allowlist", allowlist, staticField(allowlist, "CONFIG_DEF"), false);
        for (int i = 0; i < converters.length; i++) {
            String c = converters[i][0];
            print("converter:" + c, c, pluginConfig(c), i + 1 == converters.length);
        }
        System.out.println("]");
    }
}
