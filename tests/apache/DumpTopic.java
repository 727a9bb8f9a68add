// Prints every record of a topic, from the beginning to the current end, as one JSON object per
// line: {"key": <string|null>, "value": <the JSON value as text|null>}. Used by
// capture-golden.sh to record Apache Connect's status topic.
//
//   java -cp '.local/apache-connect/lib/*' tests/apache/DumpTopic.java <bootstrap> <topic>

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class DumpTopic {
    public static void main(String[] args) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        try (KafkaConsumer<byte[], byte[]> consumer =
                 new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = consumer.partitionsFor(args[1]).stream()
                .map(p -> new TopicPartition(p.topic(), p.partition())).collect(Collectors.toList());
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            while (parts.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    System.out.println("{\"key\": " + quote(r.key()) + ", \"value\": "
                        + (r.value() == null ? "null" : new String(r.value(), StandardCharsets.UTF_8)) + "}");
                }
            }
        }
    }

    private static String quote(byte[] b) {
        if (b == null) return "null";
        String s = new String(b, StandardCharsets.UTF_8);
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
