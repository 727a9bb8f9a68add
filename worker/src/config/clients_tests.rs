use super::*;

fn translate(
    kind: ClientKind,
    pairs: &[(&str, &str)],
) -> Result<ClientSettings, Vec<ClientKeyError>> {
    ClientSettings::translate(kind, "consumer.override.", pairs.iter().copied())
}

fn keys(s: &ClientSettings) -> Vec<(&str, &str)> {
    s.librdkafka
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

#[test]
fn max_poll_records_becomes_the_sink_batch_size_not_a_librdkafka_key() {
    let s = translate(ClientKind::Consumer, &[("max.poll.records", "300")]).unwrap();
    assert_eq!(s.max_poll_records.map(NonZeroUsize::get), Some(300));
    assert!(s.librdkafka.is_empty());
    // Passed through as before, librdkafka itself refuses the key.
    assert!(check_librdkafka("max.poll.records", "300").is_err());
    for bad in ["0", "-1", "x", "100001"] {
        let e = translate(ClientKind::Consumer, &[("max.poll.records", bad)]).unwrap_err();
        assert_eq!(e[0].key, "consumer.override.max.poll.records");
    }
    // Means nothing to a producer: accepted, not passed on.
    let s = translate(ClientKind::Producer, &[("max.poll.records", "300")]).unwrap();
    assert_eq!(s, ClientSettings::default());
}

#[test]
fn java_producer_keys_are_translated_to_librdkafka_keys() {
    let s = translate(
        ClientKind::Producer,
        &[
            ("max.request.size", "2097152"),
            ("buffer.memory", "33554433"),
            ("batch.size", "16384"),
            ("delivery.timeout.ms", "120000"),
            ("linger.ms", "5"),
            ("acks", "all"),
            ("compression.type", "lz4"),
            ("send.buffer.bytes", "-1"),
        ],
    )
    .unwrap();
    assert_eq!(
        keys(&s),
        [
            ("acks", "all"),
            ("batch.size", "16384"),
            ("compression.type", "lz4"),
            ("delivery.timeout.ms", "120000"),
            ("linger.ms", "5"),
            ("message.max.bytes", "2097152"),
            ("queue.buffering.max.kbytes", "32769"),
            ("socket.send.buffer.bytes", "0"),
        ]
    );
    // What librdkafka is given, it accepts.
    let mut c = ClientConfig::new();
    s.apply(&mut c).unwrap();
    c.create_native_config().unwrap();
}

#[test]
fn java_consumer_keys_are_translated_to_librdkafka_keys() {
    let s = translate(
        ClientKind::Consumer,
        &[
            ("fetch.max.bytes", "1048576"),
            ("fetch.max.wait.ms", "200"),
            ("auto.offset.reset", "none"),
            ("receive.buffer.bytes", "65536"),
            (
                "partition.assignment.strategy",
                "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
            ),
            ("isolation.level", "read_committed"),
        ],
    )
    .unwrap();
    assert_eq!(
        keys(&s),
        [
            ("auto.offset.reset", "error"),
            ("fetch.max.bytes", "1048576"),
            ("fetch.wait.max.ms", "200"),
            ("isolation.level", "read_committed"),
            ("partition.assignment.strategy", "cooperative-sticky"),
            ("socket.receive.buffer.bytes", "65536"),
        ]
    );
}

#[test]
fn jvm_only_keys_are_accepted_and_not_passed_on() {
    let s = translate(
        ClientKind::Producer,
        &[
            (
                "key.serializer",
                "org.apache.kafka.common.serialization.ByteArraySerializer",
            ),
            ("interceptor.classes", "com.example.Interceptor"),
            ("max.block.ms", "60000"),
            ("ssl.protocol", "TLSv1.3"),
        ],
    )
    .unwrap();
    assert_eq!(s, ClientSettings::default());
}

#[test]
fn keys_unknown_to_java_and_librdkafka_are_errors_naming_the_key() {
    let e = translate(
        ClientKind::Consumer,
        &[
            ("no.such.key", "1"),
            ("max.poll.records", "10"),
            ("fetch.min.bytes", "x"),
        ],
    )
    .unwrap_err();
    let named: Vec<&str> = e.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        named,
        [
            "consumer.override.no.such.key",
            "consumer.override.fetch.min.bytes"
        ]
    );
    assert_eq!(
        e[0].to_string(),
        "Invalid value 1 for configuration consumer.override.no.such.key: No such configuration property: \"no.such.key\""
    );
    let e = translate(
        ClientKind::Producer,
        &[
            ("ssl.engine.factory.class", "a.B"),
            ("sasl.login.callback.handler.class", "a.B"),
        ],
    )
    .unwrap_err();
    assert_eq!(e.len(), 2);
    assert!(e[0].reason.contains("Java classes"), "{}", e[0].reason);
}

#[test]
fn security_keys_are_kept_as_written_and_resolved_together_when_a_client_is_built() {
    let s = translate(
        ClientKind::Admin,
        &[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "SCRAM-SHA-512"),
            (
                "sasl.jaas.config",
                r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3\"cr=t";"#,
            ),
            ("linger.ms", "1"),
        ],
    )
    .unwrap();
    assert_eq!(keys(&s), [("linger.ms", "1")]);
    assert_eq!(
        s.security["sasl.jaas.config"].key,
        "consumer.override.sasl.jaas.config"
    );
    let mut c = ClientConfig::new();
    s.apply(&mut c).unwrap();
    assert_eq!(c.get("sasl.username"), Some("alice"));
    assert_eq!(c.get("sasl.password"), Some("s3\"cr=t"));
    assert_eq!(c.get("sasl.mechanism"), Some("SCRAM-SHA-512"));
    assert_eq!(c.get("security.protocol"), Some("SASL_PLAINTEXT"));
    assert_eq!(c.get("sasl.jaas.config"), None);
    c.create_native_config().unwrap();
    // A Kerberos login is refused on the key, its secrets hidden.
    let s = translate(
        ClientKind::Admin,
        &[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "PLAIN"),
            (
                "sasl.jaas.config",
                "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true password=\"p\";",
            ),
        ],
    )
    .unwrap();
    let e = s.apply(&mut ClientConfig::new()).unwrap_err();
    assert_eq!(e[0].key, "consumer.override.sasl.jaas.config");
    assert_eq!(e[0].value, "[hidden]", "secrets never appear in errors");
    assert!(e[0].reason.contains("Kerberos"), "{}", e[0].reason);
}

#[test]
fn a_prefixed_security_key_its_protocol_does_not_use_is_an_error() {
    let s = translate(
        ClientKind::Producer,
        &[(
            "sasl.jaas.config",
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";"#,
        )],
    )
    .unwrap();
    let e = s.apply(&mut ClientConfig::new()).unwrap_err();
    assert_eq!(e[0].key, "consumer.override.sasl.jaas.config");
    assert!(
        e[0].reason.contains("PLAINTEXT") && e[0].reason.contains("SASL_SSL"),
        "{}",
        e[0].reason
    );
}

#[test]
fn overrides_win_over_worker_settings() {
    let worker = translate(
        ClientKind::Consumer,
        &[("fetch.min.bytes", "1"), ("max.poll.records", "100")],
    )
    .unwrap();
    let connector = translate(ClientKind::Consumer, &[("fetch.min.bytes", "2")]).unwrap();
    let m = worker.merged(&connector);
    assert_eq!(m.librdkafka["fetch.min.bytes"], "2");
    assert_eq!(m.max_poll_records.map(NonZeroUsize::get), Some(100));
}

#[test]
fn every_table_target_is_a_librdkafka_key() {
    for (java, rule) in TABLE {
        if let Rule::Rename(target, _) = rule {
            // Known to librdkafka, even where this build lacks the feature (TLS, zstd).
            if let Err(e) = check_librdkafka(target, "1000") {
                assert!(
                    !e.contains("No such configuration property"),
                    "{java} -> {target}: {e}"
                );
            }
        }
    }
}

#[test]
fn this_librdkafka_build_has_tls_and_zstd() {
    check_librdkafka("security.protocol", "SASL_SSL").unwrap();
    check_librdkafka("compression.type", "zstd").unwrap();
}

#[test]
fn java_client_keys_are_translated_and_unknown_ones_fail_start_up() {
    use crate::config::WorkerConfig;
    let base = || -> BTreeMap<String, String> {
        [
            ("group.id", "g"),
            ("config.storage.topic", "c"),
            ("offset.storage.topic", "o"),
            ("status.storage.topic", "s"),
            (
                "key.converter",
                "org.apache.kafka.connect.json.JsonConverter",
            ),
            (
                "value.converter",
                "org.apache.kafka.connect.json.JsonConverter",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    };
    let mut p = base();
    p.insert("producer.max.request.size".into(), "2097152".into());
    p.insert("consumer.max.poll.records".into(), "50".into());
    p.insert("producer.key.serializer".into(), "x.Y".into());
    let c = WorkerConfig::from_props(p).unwrap();
    assert_eq!(c.producer_client.librdkafka["message.max.bytes"], "2097152");
    assert_eq!(c.producer_client.librdkafka.len(), 1);
    assert_eq!(
        c.consumer_client.max_poll_records.map(NonZeroUsize::get),
        Some(50)
    );
    assert!(c.consumer_client.librdkafka.is_empty());
    let mut p = base();
    p.insert("consumer.no.such.thing".into(), "1".into());
    let err = WorkerConfig::from_props(p).unwrap_err().to_string();
    assert!(err.contains("consumer.no.such.thing"), "{err}");
}

#[test]
fn auto_offset_reset_takes_javas_values_only() {
    for (java, librdkafka) in [
        ("earliest", "earliest"),
        ("latest", "latest"),
        ("LATEST", "latest"),
        ("none", "error"),
    ] {
        let s = translate(ClientKind::Consumer, &[("auto.offset.reset", java)]).unwrap();
        assert_eq!(keys(&s), [("auto.offset.reset", librdkafka)], "{java}");
    }
    // librdkafka's own spellings and Java's by_duration are not Java values librdkafka shares.
    for bad in ["smallest", "error", "by_duration:PT1H", "x"] {
        let e = translate(ClientKind::Consumer, &[("auto.offset.reset", bad)]).unwrap_err();
        assert_eq!(e[0].key, "consumer.override.auto.offset.reset", "{bad}");
    }
}

/// Connectors with their own clients (MirrorMaker 2) get the same translation: Java's SASL
/// keys become librdkafka's, and a key neither knows is an error naming it.
#[test]
fn connectors_translate_java_client_keys_through_the_worker() {
    use connect_api::kafka_clients::{ClientKind as Kind, ClientTranslator};
    let pairs: BTreeMap<String, String> = [
        ("bootstrap.servers", "b:9092"),
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", "PLAIN"),
        (
            "sasl.jaas.config",
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let out = ConnectorClientTranslator
        .librdkafka(Kind::Consumer, "source.cluster.", &pairs)
        .unwrap();
    assert_eq!(out["bootstrap.servers"], "b:9092");
    assert_eq!(out["sasl.username"], "u");
    assert_eq!(out["sasl.password"], "p");
    assert!(!out.contains_key("sasl.jaas.config"));
    let bad: BTreeMap<String, String> = [("no.such.key".to_owned(), "1".to_owned())].into();
    let e = ConnectorClientTranslator
        .librdkafka(Kind::Admin, "source.admin.", &bad)
        .unwrap_err();
    assert_eq!(e[0].key, "source.admin.no.such.key");
}
