package connectrs.testplugins;

import java.util.Map;
import java.util.regex.Pattern;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.components.Versioned;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/** A test predicate: whether the value's text matches {@code pattern} (the whole text). */
public class ValueMatches<R extends ConnectRecord<R>> implements Predicate<R>, Versioned {
    static final ConfigDef CONFIG = new ConfigDef()
            .define("pattern", ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH,
                    "A regular expression the value's text must match.");

    private Pattern pattern;

    @Override
    public String version() {
        return "2.5-test";
    }

    @Override
    public void configure(Map<String, ?> configs) {
        pattern = Pattern.compile((String) CONFIG.parse(configs).get("pattern"));
    }

    @Override
    public boolean test(R record) {
        return pattern.matcher(String.valueOf(record.value())).matches();
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public void close() {
    }
}
