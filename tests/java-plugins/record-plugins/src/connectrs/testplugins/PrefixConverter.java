package connectrs.testplugins;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.components.Versioned;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.HeaderConverter;

/**
 * A test converter (and header converter): writes {@code <prefix><key|value|header>:<value
 * as text>}; reads such bytes back as the text after the first {@code :}, a string. A text
 * without the prefix does not convert.
 */
public class PrefixConverter implements Converter, HeaderConverter, Versioned {
    static final ConfigDef CONFIG = new ConfigDef()
            .define("prefix", ConfigDef.Type.STRING, "", ConfigDef.Importance.HIGH, "Written before every value.")
            .define("fail.configure", ConfigDef.Type.BOOLEAN, false, ConfigDef.Importance.LOW,
                    "Whether configure throws (a converter that cannot start).");

    private String prefix = "";
    private String role = "header";

    @Override
    public String version() {
        return "3.1-test";
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        configure(configs, isKey ? "key" : "value");
    }

    @Override
    public void configure(Map<String, ?> configs) {
        configure(configs, "header");
    }

    private void configure(Map<String, ?> configs, String role) {
        Map<String, Object> parsed = CONFIG.parse(configs);
        if ((Boolean) parsed.get("fail.configure")) {
            throw new IllegalArgumentException("PrefixConverter refuses to configure (fail.configure=true)");
        }
        prefix = (String) parsed.get("prefix");
        this.role = role;
    }

    @Override
    public byte[] fromConnectData(String topic, Schema schema, Object value) {
        if (value == null) {
            return null;
        }
        return (prefix + role + ":" + value).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public SchemaAndValue toConnectData(String topic, byte[] value) {
        if (value == null) {
            return SchemaAndValue.NULL;
        }
        String text = new String(value, StandardCharsets.UTF_8);
        if (!text.startsWith(prefix)) {
            throw new DataException("PrefixConverter: " + text + " does not start with " + prefix);
        }
        return new SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, text.substring(text.indexOf(':') + 1));
    }

    @Override
    public SchemaAndValue toConnectHeader(String topic, String headerKey, byte[] value) {
        return toConnectData(topic, value);
    }

    @Override
    public byte[] fromConnectHeader(String topic, String headerKey, Schema schema, Object value) {
        return fromConnectData(topic, schema, value);
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public void close() {
    }
}
