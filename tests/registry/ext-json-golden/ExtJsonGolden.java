// Apicurio's ExtJsonConverter (2.6.13, the newest on Maven Central) on the Connect values of
// tests/golden/registry/avro-data.jsonl, against a running Apicurio Registry (its v2 API), for
// registry/tests/ext_json_golden.rs: one line per case with the record Java writes, the schema
// Java registers (the artifact's content) and what Java reads back from its record.
//
//   java -cp "lib/*" ExtJsonGolden.java <avro-data.jsonl> <registry base URL> <topic prefix>

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.apicurio.registry.utils.converter.ExtJsonConverter;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.json.JsonConverter;

public class ExtJsonGolden {
    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        JsonConverter envelopes = new JsonConverter();
        envelopes.configure(Map.of("schemas.enable", "true"), false);
        String base = args[1].replaceAll("/+$", "");
        ExtJsonConverter ext = new ExtJsonConverter();
        ext.configure(new java.util.HashMap<>(Map.of(
            "apicurio.registry.url", base + "/apis/registry/v2",
            "apicurio.registry.auto-register", "true")), false);
        HttpClient http = HttpClient.newHttpClient();

        for (String line : Files.readAllLines(Path.of(args[0]))) {
            if (line.isBlank()) continue;
            JsonNode golden = json.readTree(line);
            String name = golden.get("name").asText();
            String topic = args[2] + "-" + name;
            SchemaAndValue in = envelopes.toConnectData(topic,
                json.writeValueAsBytes(golden.get("connect")));
            byte[] record = ext.fromConnectData(topic, in.schema(), in.value());
            long globalId = json.readTree(record).get("schemaId").asLong();
            String registered = http.send(
                HttpRequest.newBuilder(URI.create(base + "/apis/registry/v2/ids/globalIds/" + globalId)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
            SchemaAndValue read = ext.toConnectData(topic, record);
            System.out.println("{\"name\":" + json.writeValueAsString(name)
                + ",\"connect\":" + golden.get("connect")
                + ",\"record\":" + json.writeValueAsString(new String(record, StandardCharsets.UTF_8))
                + ",\"registered\":" + json.writeValueAsString(registered)
                + ",\"connect_read\":" + new String(envelopes.fromConnectData(topic, read.schema(), read.value()), StandardCharsets.UTF_8)
                + "}");
        }
    }
}
