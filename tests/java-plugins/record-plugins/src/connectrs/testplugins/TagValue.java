package connectrs.testplugins;

import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.components.Versioned;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.transforms.Transformation;

/**
 * A test transformation: wraps the value in a struct {@code {original, tag}} (a map without a
 * schema), adds the header {@code tagged-by}, and appends {@code topic.suffix} to the topic.
 * A value whose text equals {@code fail.on} throws.
 */
public class TagValue<R extends ConnectRecord<R>> implements Transformation<R>, Versioned {
    static final ConfigDef CONFIG = new ConfigDef()
            .define("tag", ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH,
                    "The tag the value is wrapped with.")
            .define("topic.suffix", ConfigDef.Type.STRING, "", ConfigDef.Importance.MEDIUM,
                    "Appended to the record's topic.")
            .define("fail.on", ConfigDef.Type.STRING, null, ConfigDef.Importance.LOW,
                    "A value (as text) this transformation throws on.");

    private String tag;
    private String suffix;
    private String failOn;

    @Override
    public String version() {
        return "2.5-test";
    }

    @Override
    public void configure(Map<String, ?> configs) {
        Map<String, Object> parsed = CONFIG.parse(configs);
        tag = (String) parsed.get("tag");
        suffix = (String) parsed.get("topic.suffix");
        failOn = (String) parsed.get("fail.on");
    }

    @Override
    public R apply(R record) {
        if (failOn != null && failOn.equals(String.valueOf(record.value()))) {
            throw new DataException("TagValue refuses the value " + failOn);
        }
        Object value;
        Schema schema = null;
        if (record.valueSchema() != null) {
            schema = SchemaBuilder.struct().name("connectrs.testplugins.Tagged")
                    .field("original", record.valueSchema())
                    .field("tag", Schema.STRING_SCHEMA)
                    .field("sink", Schema.BOOLEAN_SCHEMA)
                    .build();
            value = new Struct(schema).put("original", record.value()).put("tag", tag)
                    .put("sink", record instanceof org.apache.kafka.connect.sink.SinkRecord);
        } else {
            value = Map.of("original", String.valueOf(record.value()), "tag", tag);
        }
        R out = record.newRecord(record.topic() + suffix, record.kafkaPartition(), record.keySchema(), record.key(),
                schema, value, record.timestamp());
        out.headers().addString("tagged-by", tag);
        return out;
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public void close() {
    }
}
