//! Debezium from `plugin.path` answers `GET /connector-plugins/{p}/config` and
//! `PUT .../config/validate` as Apache Connect 4.4 answers for the same plugin: the goldens in
//! tests/golden/apache-4.4/debezium-*.json were recorded from Apache's worker with the same
//! Debezium directory in its `plugin.path` (tests/apache/capture-golden-debezium.sh). Debezium's
//! tasks do not run on Connect 4.4, but its connector's definition and validation do.
//!
//! Normalized as the built-in connectors' comparison does (golden_apache.rs): the converter keys'
//! recommended values are this worker's installed converters, KIP-891's version keys name this
//! worker's converter version, and the database keys take this run's PostgreSQL; a
//! transformation's recommended classes are Apache's plus the project's test plugins, which this
//! worker's plugin.path has besides Debezium.

use serde_json::Value;

use super::{DEBEZIUM, database_props, spec};
use crate::golden_apache::{
    CONVERTER_KEYS, assert_same, golden, installed_converters, normalize_version_keys,
    plugin_version,
};

#[tokio::test(flavor = "multi_thread")]
async fn debezium_config_and_validation_answer_as_apache_4_4_does() {
    let w = spec("dbz-apache-answers").start_worker().await;
    let ours = w
        .get(&format!("/connector-plugins/{DEBEZIUM}/config"))
        .await
        .expect("Debezium's config definition");
    assert_same(&ours, &golden("debezium-config"), "GET .../config");

    let plugins = w
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap();
    let converter_version = plugin_version(&plugins, "org.apache.kafka.connect.json.JsonConverter");
    let database = database_props();
    for name in ["debezium-validate-invalid", "debezium-validate"] {
        let recorded = golden(&format!("{name}.request"));
        let mut request = recorded.clone();
        // The valid config connects: to this run's PostgreSQL (the invalid one has a bad port
        // and connects nowhere).
        let connects = name == "debezium-validate";
        for (k, v) in &database {
            if connects && request.get(k).is_some() {
                request[k] = v.clone();
            }
        }
        let (status, ours) = w
            .send(
                "PUT",
                &format!("/connector-plugins/{DEBEZIUM}/config/validate"),
                Some(request.clone()),
            )
            .await;
        assert_eq!(status, 200, "{name}: {ours}");
        let mut apache = golden(name);
        let configs = apache["configs"].as_array_mut().unwrap();
        normalize_version_keys(configs, "3.6.1.Final", &converter_version);
        for c in configs.iter_mut() {
            let key = c["value"]["name"].as_str().unwrap_or_default().to_owned();
            // A transformation's or predicate's type: Apache's classes, and the project's own
            // test plugins that this worker's plugin.path has besides Debezium.
            let kind = match key.split('.').collect::<Vec<_>>()[..] {
                ["transforms", _, "type"] => Some("transformation"),
                ["predicates", _, "type"] => Some("predicate"),
                _ => None,
            };
            if let Some(kind) = kind {
                let mut classes: Vec<Value> = c["value"]["recommended_values"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                classes.extend(
                    plugins
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|p| p["type"] == kind)
                        .filter(|p| {
                            p["class"]
                                .as_str()
                                .is_some_and(|c| c.starts_with("connectrs.testplugins."))
                        })
                        .map(|p| p["class"].clone()),
                );
                classes.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                c["value"]["recommended_values"] = Value::Array(classes);
            }
            if CONVERTER_KEYS.contains(&key.as_str()) {
                c["value"]["recommended_values"] =
                    installed_converters(&w, key == "header.converter").await;
            }
            // Where Apache echoed the recorded request's database value, ours echoes this run's.
            if let Some(v) = database.get(&key).filter(|_| connects)
                && recorded
                    .get(&key)
                    .is_some_and(|r| c["value"]["value"] == *r)
            {
                c["value"]["value"] = v.clone();
            }
        }
        // Key by key first (a readable failure), then the whole answer with its order.
        let (o, a) = (
            ours["configs"].as_array().unwrap(),
            apache["configs"].as_array().unwrap(),
        );
        for a in a {
            let key = &a["definition"]["name"];
            let found: Option<&Value> = o.iter().find(|o| o["definition"]["name"] == *key);
            assert_eq!(found, Some(a), "{name}: {key}");
        }
        assert_same(&ours, &apache, name);
    }
}
