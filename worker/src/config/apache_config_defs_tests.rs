//! Tests: every configuration key Apache Kafka Connect 4.4 defines — the worker's (`DistributedConfig`,
//! REST keys included), the connector configs' (`ConnectorConfig`, `SourceConnectorConfig`,
//! `SinkConnectorConfig`), each built-in converter's and the Allowlist override policy's — is
//! either known to this worker or a documented deviation listed here (each one is in
//! docs/compatibility.md or docs/configuration.md). Apache's definitions are read from
//! `tests/golden/apache-4.4/config-defs.json`, dumped from Apache's jars by
//! `tests/apache/capture-config-defs.sh` (`tests/apache/DumpConfigDefs.java`), so a new Apache
//! release's keys show up here as failures once the dump is refreshed.

use std::collections::BTreeSet;

use super::override_policy::ALLOWLIST_CONFIG;
use super::{KeyUse, key_use};
use connect_api::config::{sink_connector_config_def, source_connector_config_def};
use connect_api::converter::{converter_for_class, header_converter_for_class};
use serde_json::Value;

/// Apache keys this worker does not implement, each a documented deviation, and why.
const DEVIATIONS: &[(&str, &str, &str)] = &[
    // (definition set, key, why); none today.
];

/// Converter keys the worker sets itself (Apache's `ConverterConfig.TYPE_CONFIG`: key, value
/// or header), never a user.
const CONVERTER_FRAMEWORK_KEYS: &[&str] = &["converter.type"];

fn apache_defs() -> Vec<Value> {
    let path = format!(
        "{}/../tests/golden/apache-4.4/config-defs.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str::<Value>(&text)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .as_array()
        .expect("an array of definition sets")
        .clone()
}

fn keys(set: &Value) -> Vec<String> {
    set["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap().to_owned())
        .collect()
}

fn deviation(set: &str, key: &str) -> bool {
    let set = if set.ends_with("-connector") {
        "connector"
    } else {
        set
    };
    DEVIATIONS.iter().any(|(s, k, _)| *s == set && *k == key)
}

/// The keys of one of Apache's sets this worker knows.
fn known(set: &str) -> Box<dyn Fn(&str) -> bool> {
    let names = |def: connect_api::ConfigDef| -> BTreeSet<String> {
        def.names().map(str::to_owned).collect()
    };
    match set {
        "worker" => Box::new(|k: &str| {
            // A key under a converter prefix goes to the converter, which knows only its own.
            let converter_sub = ["key.converter.", "value.converter.", "header.converter."]
                .iter()
                .any(|p| k.starts_with(p));
            // KIP-891's version keys are checked at start-up (config::converters).
            let version_key = k.ends_with(".converter.plugin.version");
            version_key || (!converter_sub && key_use(k) != KeyUse::Unknown)
        }),
        "connector" | "source-connector" => {
            let n = names(source_connector_config_def());
            Box::new(move |k: &str| n.contains(k))
        }
        "sink-connector" => {
            let n = names(sink_connector_config_def());
            Box::new(move |k: &str| n.contains(k))
        }
        "override-policy-allowlist" => Box::new(|k: &str| k == ALLOWLIST_CONFIG),
        other => {
            let class = other
                .strip_prefix("converter:")
                .unwrap_or_else(|| panic!("unexpected definition set {other}"));
            let def = converter_for_class(class)
                .map(|c| c.config_def())
                .or_else(|_| header_converter_for_class(class).map(|c| c.config_def()))
                .unwrap_or_else(|_| {
                    panic!("Apache's built-in converter {class} is not built in here")
                });
            let n = names(def);
            Box::new(move |k: &str| n.contains(k) || CONVERTER_FRAMEWORK_KEYS.contains(&k))
        }
    }
}

#[test]
fn every_apache_key_is_known_or_a_documented_deviation() {
    let defs = apache_defs();
    let sets: Vec<&str> = defs.iter().map(|s| s["set"].as_str().unwrap()).collect();
    for expected in [
        "worker",
        "connector",
        "source-connector",
        "sink-connector",
        "override-policy-allowlist",
    ] {
        assert!(
            sets.contains(&expected),
            "the dump has no {expected} set: {sets:?}"
        );
    }
    let mut missing = Vec::new();
    for set in &defs {
        let name = set["set"].as_str().unwrap();
        let is_known = known(name);
        for key in keys(set) {
            if !is_known(&key) && !deviation(name, &key) {
                missing.push(format!("{name}: {key}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "Apache 4.4 keys this worker neither implements nor lists as a documented deviation:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_deviation_is_still_an_apache_key_and_still_unimplemented() {
    let defs = apache_defs();
    for (set, key, _) in DEVIATIONS {
        let in_apache = defs.iter().any(|s| {
            let name = s["set"].as_str().unwrap();
            (name == *set || (*set == "connector" && name.ends_with("connector")))
                && keys(s).iter().any(|k| k == key)
        });
        assert!(
            in_apache,
            "{set}: {key} is not an Apache key (stale deviation)"
        );
        assert!(
            !known(set)(key),
            "{set}: {key} is implemented now; remove the deviation"
        );
    }
}

/// The converter keys appear in validate answers under Apache's definitions: same type,
/// default, importance, group and order.
#[test]
fn converter_definitions_match_apaches() {
    for set in apache_defs() {
        let name = set["set"].as_str().unwrap();
        let Some(class) = name.strip_prefix("converter:") else {
            continue;
        };
        let def = converter_for_class(class)
            .map(|c| c.config_def())
            .or_else(|_| header_converter_for_class(class).map(|c| c.config_def()))
            .unwrap();
        for apache in set["keys"].as_array().unwrap() {
            let key = apache["name"].as_str().unwrap();
            if CONVERTER_FRAMEWORK_KEYS.contains(&key) {
                continue;
            }
            let ours = connect_api::config::ConfigKeyInfo::from_key(def.key(key).unwrap());
            assert_eq!(
                ours.config_type,
                apache["type"].as_str().unwrap(),
                "{class} {key}"
            );
            assert_eq!(
                ours.importance,
                apache["importance"].as_str().unwrap(),
                "{class} {key}"
            );
            assert_eq!(
                ours.group.as_deref(),
                apache["group"].as_str(),
                "{class} {key}"
            );
            assert_eq!(
                i64::from(ours.order_in_group),
                apache["order_in_group"].as_i64().unwrap(),
                "{class} {key}"
            );
            let default = match apache["default"].as_str() {
                Some("<required>") | None => None,
                Some(d) => Some(d.to_owned()),
            };
            assert_eq!(ours.default_value, default, "{class} {key}");
        }
    }
}
