//! Golden tests of the validation response (`ConfigInfos`) and of Connect's error messages.

use connect_api::config::{
    ConfigDef, ConfigInfos, ConfigKey, ConfigMap, ConfigType, Importance, SinkConnectorConfig,
    SourceConnectorConfig, TransactionBoundary, Width, connector_config_def,
    sink_connector_config_def, source_connector_config_def, validate_sink_topics, validators,
};
use serde_json::json;

fn props(pairs: &[(&str, &str)]) -> ConfigMap {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A small definition covering required, typed, ranged and password keys.
fn small_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(
                "topic",
                ConfigType::String,
                Importance::High,
                "The topic to publish data to",
            )
            .validator(validators::non_empty_string())
            .group("Common", 1)
            .width(Width::Long)
            .display_name("Topic"),
        )
        .define(
            ConfigKey::new(
                "tasks.max",
                ConfigType::Int,
                Importance::High,
                "Maximum number of tasks to use for this connector.",
            )
            .default_value(1)
            .validator(validators::at_least(1))
            .group("Common", 2)
            .width(Width::Short)
            .display_name("Tasks max"),
        )
        .define(
            ConfigKey::new(
                "db.password",
                ConfigType::Password,
                Importance::Medium,
                "Database password",
            )
            .default_null()
            .group("Database", 1)
            .width(Width::Medium)
            .display_name("Password"),
        )
}

#[test]
fn golden_valid_config() {
    let infos = ConfigInfos::validate(
        "VerifiableSource",
        &small_def(),
        &props(&[
            ("topic", "t"),
            ("tasks.max", "3"),
            ("db.password", "s3cret"),
        ]),
    );
    let expected = json!({
        "name": "VerifiableSource",
        "error_count": 0,
        "groups": ["Common", "Database"],
        "configs": [
            {"definition": {"name": "topic", "type": "STRING", "required": true, "default_value": null,
                            "importance": "HIGH", "documentation": "The topic to publish data to",
                            "group": "Common", "order_in_group": 1, "width": "LONG", "display_name": "Topic",
                            "dependents": []},
             "value": {"name": "topic", "value": "t", "recommended_values": [], "errors": [], "visible": true}},
            {"definition": {"name": "tasks.max", "type": "INT", "required": false, "default_value": "1",
                            "importance": "HIGH", "documentation": "Maximum number of tasks to use for this connector.",
                            "group": "Common", "order_in_group": 2, "width": "SHORT", "display_name": "Tasks max",
                            "dependents": []},
             "value": {"name": "tasks.max", "value": "3", "recommended_values": [], "errors": [], "visible": true}},
            {"definition": {"name": "db.password", "type": "PASSWORD", "required": false, "default_value": null,
                            "importance": "MEDIUM", "documentation": "Database password",
                            "group": "Database", "order_in_group": 1, "width": "MEDIUM", "display_name": "Password",
                            "dependents": []},
             "value": {"name": "db.password", "value": "[hidden]", "recommended_values": [], "errors": [], "visible": true}}
        ]
    });
    assert_eq!(serde_json::to_value(&infos).unwrap(), expected);
    // Field order matters to byte-comparing clients: same order as Connect's Jackson output.
    let text = serde_json::to_string(&infos).unwrap();
    assert!(text.starts_with(r#"{"name":"VerifiableSource","error_count":0,"groups":["Common","Database"],"configs":[{"definition":{"name":"topic","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"#));
}

#[test]
fn golden_invalid_config() {
    let def = small_def();
    // Missing required key.
    let missing = ConfigInfos::validate("X", &def, &props(&[]));
    assert_eq!(missing.error_count, 1);
    assert_eq!(
        serde_json::to_value(&missing.configs[0].value).unwrap(),
        json!({"name": "topic", "value": null, "recommended_values": [],
               "errors": ["Missing required configuration \"topic\" which has no default value."],
               "visible": true})
    );
    // Wrong type: Connect reports the parse error, then the range validator sees null.
    let wrong = ConfigInfos::validate("X", &def, &props(&[("topic", "t"), ("tasks.max", "abc")]));
    assert_eq!(
        serde_json::to_value(&wrong.configs[1].value).unwrap(),
        json!({"name": "tasks.max", "value": null, "recommended_values": [],
               "errors": ["Invalid value abc for configuration tasks.max: Not a number of type INT",
                          "Invalid value null for configuration tasks.max: Value must be non-null"],
               "visible": true})
    );
    assert_eq!(wrong.error_count, 2);
    // Out of range: the parsed value is still reported.
    let range = ConfigInfos::validate("X", &def, &props(&[("topic", "t"), ("tasks.max", "0")]));
    assert_eq!(
        serde_json::to_value(&range.configs[1].value).unwrap(),
        json!({"name": "tasks.max", "value": "0", "recommended_values": [],
               "errors": ["Invalid value 0 for configuration tasks.max: Value must be at least 1"],
               "visible": true})
    );
    assert_eq!(
        range.invalid_config_message("VerifiableSource"),
        "Connector configuration is invalid and contains the following 1 error(s):\n\
         Invalid value 0 for configuration tasks.max: Value must be at least 1\n\
         You can also find the above list of errors at the endpoint `/connector-plugins/VerifiableSource/config/validate`"
    );
}

#[test]
fn common_connector_keys_follow_connect() {
    let def = source_connector_config_def();
    let infos = ConfigInfos::validate(
        "FileStreamSource",
        &def,
        &props(&[
            ("name", "fs"),
            ("connector.class", "FileStreamSource"),
            ("exactly.once.support", "sometimes"),
            ("transaction.boundary", "CONNECTOR"),
        ]),
    );
    assert_eq!(
        infos.groups,
        [
            "Common",
            "Transforms",
            "Predicates",
            "Error Handling",
            "Topic Creation",
            "Exactly Once Support",
            "offsets.topic"
        ]
    );
    let errors: Vec<&str> = infos.errors().collect();
    assert_eq!(
        errors,
        [
            "Invalid value sometimes for configuration exactly.once.support: String must be one of (case insensitive): REQUESTED, REQUIRED"
        ]
    );
    let tasks_max = infos
        .configs
        .iter()
        .find(|c| c.value.as_ref().unwrap().name == "tasks.max")
        .unwrap();
    let d = tasks_max.definition.as_ref().unwrap();
    assert_eq!(
        (
            d.default_value.as_deref(),
            d.order_in_group,
            d.width.as_str()
        ),
        (Some("1"), 4, "SHORT")
    );
    // Connect 4.4: no static default for the converters; a worker's validate answer shows its
    // own converters as the defaults (`with_worker_converters`).
    let header = def.key("header.converter").unwrap();
    assert_eq!(header.default, connect_api::config::DefaultValue::Null);
    let enriched = connect_api::config::connector::with_worker_converters(
        def.clone(),
        "org.apache.kafka.connect.storage.StringConverter",
        "org.apache.kafka.connect.json.JsonConverter",
        "org.apache.kafka.connect.storage.SimpleHeaderConverter",
    );
    let infos = ConfigInfos::validate("X", &enriched, &props(&[("name", "a")]));
    let value_of = |name: &str| {
        let c = infos
            .configs
            .iter()
            .find(|c| c.value.as_ref().unwrap().name == name)
            .unwrap();
        (
            c.definition.as_ref().unwrap().default_value.clone(),
            c.value.as_ref().unwrap().value.clone(),
        )
    };
    let string = Some("org.apache.kafka.connect.storage.StringConverter".to_owned());
    assert_eq!(value_of("key.converter"), (string.clone(), string));
    let header = value_of("header.converter");
    assert_eq!(
        header.1.as_deref(),
        Some("org.apache.kafka.connect.storage.SimpleHeaderConverter")
    );
    // Recommended: this build's converter classes, sorted (Connect lists its installed ones).
    let recommended = &infos
        .configs
        .iter()
        .find(|c| c.value.as_ref().unwrap().name == "value.converter")
        .unwrap()
        .value
        .as_ref()
        .unwrap()
        .recommended_values;
    assert!(recommended.contains(&"org.apache.kafka.connect.json.JsonConverter".to_owned()));
    assert!(
        recommended.windows(2).all(|w| w[0] < w[1]),
        "{recommended:?}"
    );

    let bad_converter = ConfigInfos::validate(
        "X",
        &connector_config_def(),
        &props(&[
            ("name", "a"),
            ("connector.class", "X"),
            ("value.converter", "com.example.Nope"),
        ]),
    );
    assert_eq!(
        bad_converter.errors().collect::<Vec<_>>(),
        [
            "Invalid value com.example.Nope for configuration value.converter: Class com.example.Nope could not be found."
        ]
    );
    let empty_name = ConfigInfos::validate(
        "X",
        &connector_config_def(),
        &props(&[("name", " "), ("connector.class", "X")]),
    );
    assert_eq!(
        empty_name.errors().collect::<Vec<_>>(),
        ["Invalid value  for configuration name: String may not be empty"]
    );
}

#[test]
fn typed_connector_configs() {
    let src = SourceConnectorConfig::parse(&props(&[
        ("name", "v"),
        ("connector.class", "VerifiableSource"),
        ("tasks.max", "4"),
        ("transaction.boundary", "Interval"),
        ("transaction.boundary.interval.ms", "2500"),
    ]))
    .unwrap();
    assert_eq!(src.common.tasks_max.get(), 4);
    assert_eq!(src.transaction_boundary, TransactionBoundary::Interval);
    assert_eq!(
        src.transaction_boundary_interval,
        Some(std::time::Duration::from_millis(2500))
    );
    let err = SourceConnectorConfig::parse(&props(&[
        ("name", "v"),
        ("connector.class", "c"),
        ("tasks.max", "abc"),
    ]))
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid value abc for configuration tasks.max: Not a number of type INT"
    );
    let err = SourceConnectorConfig::parse(&props(&[
        ("name", "v"),
        ("connector.class", "c"),
        ("transaction.boundary.interval.ms", "-5"),
    ]))
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid value -5 for configuration transaction.boundary.interval.ms: Interval must be non-negative"
    );

    let sink = SinkConnectorConfig::parse(&props(&[
        ("name", "s"),
        ("connector.class", "FileStreamSink"),
        ("topics", "a, b"),
    ]))
    .unwrap();
    assert_eq!(sink.topics, ["a", "b"]);
    let err = SinkConnectorConfig::parse(&props(&[
        ("name", "s"),
        ("connector.class", "FileStreamSink"),
    ]))
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Must configure one of topics or topics.regex"
    );
    let p = props(&[
        ("name", "s"),
        ("connector.class", "c"),
        ("topics", "a"),
        ("topics.regex", "a.*"),
    ]);
    let mut values = sink_connector_config_def().validate(&p);
    validate_sink_topics(&p, &mut values);
    let errs: Vec<&String> = values.iter().flat_map(|v| &v.errors).collect();
    assert_eq!(errs.len(), 2);
    assert_eq!(
        errs[0],
        "topics and topics.regex are mutually exclusive options, but both are set."
    );
}

#[test]
fn merge_and_add_error() {
    let a = ConfigInfos::validate("C", &small_def(), &props(&[("topic", "t")]));
    let b = ConfigInfos::validate(
        "C",
        &connector_config_def(),
        &props(&[("name", "n"), ("connector.class", "C")]),
    );
    let mut merged = ConfigInfos::merge("C", [b, a]);
    assert_eq!(merged.error_count, 0);
    assert_eq!(merged.groups.iter().filter(|g| *g == "Common").count(), 1);
    assert!(merged.add_error(
        "tasks.max",
        "This worker does not have exactly-once source support enabled."
    ));
    assert_eq!(merged.error_count, 1);
}
