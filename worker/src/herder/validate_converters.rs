//! The connector's own converter settings in a validate answer, as Apache 4.4's
//! `AbstractHerder.validateAllConverterConfigs` adds them: for each of `header.converter`,
//! `key.converter` and `value.converter` the connector sets (and that passed the framework's
//! validation), the converter's own `ConfigDef` validates the connector's
//! `<converter>.*` keys, and each of its keys is listed under the prefixed name
//! (`value.converter.schemas.enable`), with its definition. Error messages keep the
//! converter's own key names, as Apache's do.
//!
//! A converter's settings the worker supplies (the worker's `value.converter.*`) are not
//! validated here, as in Apache; a bad one fails start-up instead
//! ([`crate::config::converters::worker_converter_errors`]).

use connect_api::config::{ConfigInfo, ConfigKeyInfo, ConfigValueInfo};
use connect_api::config::{ConfigType, Importance, validators};
use connect_api::{ConfigDef, ConfigInfos, ConfigKey, ConfigMap};

use crate::config::converters::converter_def;

/// The three converter keys, in Apache's order (header, key, value), whether each is a
/// header converter, and the `converter.type` Apache configures it with.
const CONVERTERS: [(&str, bool, &str); 3] = [
    ("header.converter", true, "header"),
    ("key.converter", false, "key"),
    ("value.converter", false, "value"),
];

/// Apache's `ConverterConfig.TYPE_CONFIG`, first in every converter's definition.
const CONVERTER_TYPE_CONFIG: &str = "converter.type";

/// `def` after Apache's `ConverterConfig.newConfigDef()` (the `converter.type` key).
fn with_converter_type(def: &ConfigDef) -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(
                CONVERTER_TYPE_CONFIG,
                ConfigType::String,
                Importance::Low,
                "How this converter will be used.",
            )
            .validator(validators::one_of(&["key", "value", "header"])),
        )
        .extend(def)
}

/// The connector's converter settings validated by their converters (see the module docs).
/// `framework` is the framework's answer: a converter whose class key has errors there is
/// skipped, as Apache skips it.
pub fn connector_converter_infos(
    connector_class: &str,
    props: &ConfigMap,
    framework: &ConfigInfos,
) -> Vec<ConfigInfos> {
    CONVERTERS
        .into_iter()
        .filter_map(|(key, header, converter_type)| {
            let class = props.get(key)?.trim();
            let class_ok = framework
                .configs
                .iter()
                .filter_map(|c| c.value.as_ref())
                .find(|v| v.name == key)
                .is_none_or(|v| v.errors.is_empty());
            if !class_ok {
                return None;
            }
            let own = converter_def(class, header)?;
            // Apache's SimpleHeaderConverter defines no key at all (not even converter.type).
            let def = if class.ends_with("SimpleHeaderConverter") {
                own
            } else {
                with_converter_type(&own)
            };
            let prefix = format!("{key}.");
            let mut sub: ConfigMap = props
                .iter()
                .filter_map(|(k, v)| k.strip_prefix(&prefix).map(|k| (k.to_owned(), v.clone())))
                .collect();
            sub.entry(CONVERTER_TYPE_CONFIG.to_owned())
                .or_insert_with(|| converter_type.to_owned());
            Some(prefixed_infos(connector_class, &def, &sub, &prefix))
        })
        .collect()
}

/// Apache's `prefixedConfigInfos`: `def` validates the converter's settings `sub` (the
/// keys under `prefix`, prefix removed), every key of `def` listed under its prefixed name, in
/// the order Java's `ConfigDef.validate` gives them (a `HashMap`'s), groups as they first appear.
fn prefixed_infos(
    connector_class: &str,
    def: &ConfigDef,
    sub: &ConfigMap,
    prefix: &str,
) -> ConfigInfos {
    let mut groups: Vec<String> = Vec::new();
    let mut error_count = 0;
    // Java's `ConfigDef.validate` returns the values of a `HashMap` filled in definition order.
    let mut values: Vec<Option<connect_api::ConfigValue>> =
        def.validate(sub).into_iter().map(Some).collect();
    let names: Vec<String> = values
        .iter()
        .map(|v| v.as_ref().map(|v| v.name.clone()).unwrap_or_default())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let configs = connect_api::java_order::java_hash_map_order(&names, None)
        .into_iter()
        .filter_map(|i| values[i].take())
        .map(|value| {
            let key = def.key(&value.name);
            let definition = key.map(|k| {
                if let Some(g) = &k.group
                    && !groups.contains(g)
                {
                    groups.push(g.clone());
                }
                let mut info = ConfigKeyInfo::from_key(k);
                info.name = format!("{prefix}{}", info.name);
                info
            });
            if !value.errors.is_empty() {
                error_count += 1;
            }
            let mut info = ConfigValueInfo::from_value(&value, key.map(|k| k.config_type));
            info.name = format!("{prefix}{}", info.name);
            ConfigInfo {
                definition,
                value: Some(info),
            }
        })
        .collect();
    ConfigInfos {
        name: connector_class.to_owned(),
        error_count,
        groups,
        configs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> ConfigMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn empty_framework() -> ConfigInfos {
        ConfigInfos::merge("c", [])
    }

    #[test]
    fn a_bad_schema_content_is_an_error_on_the_prefixed_key() {
        let p = props(&[
            (
                "value.converter",
                "org.apache.kafka.connect.json.JsonConverter",
            ),
            ("value.converter.schema.content", "{\"type\": \"nope\"}"),
        ]);
        let infos = connector_converter_infos("c", &p, &empty_framework());
        assert_eq!(infos.len(), 1);
        let v = &infos[0];
        assert_eq!(v.error_count, 1);
        let entry = v
            .configs
            .iter()
            .find(|c| c.definition.as_ref().unwrap().name == "value.converter.schema.content")
            .unwrap();
        let value = entry.value.as_ref().unwrap();
        assert_eq!(value.name, "value.converter.schema.content");
        assert_eq!(
            value.errors,
            vec!["Invalid value {\"type\": \"nope\"} for configuration schema.content: Unknown schema type: nope".to_owned()]
        );
        // Every key of the converter is listed, prefixed, in the order Apache 4.4 lists them
        // (its `HashMap`'s: tests/golden/apache-4.4/validate-schema-content.json).
        let names: Vec<&str> = v
            .configs
            .iter()
            .map(|c| c.value.as_ref().unwrap().name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "value.converter.decimal.format",
                "value.converter.converter.type",
                "value.converter.schemas.cache.size",
                "value.converter.replace.null.with.default",
                "value.converter.schemas.enable",
                "value.converter.schema.content",
            ]
        );
        assert_eq!(
            v.configs[1].value.as_ref().unwrap().value.as_deref(),
            Some("value")
        );
        assert_eq!(
            v.groups,
            vec!["Serialization".to_owned(), "Schemas".to_owned()]
        );
    }

    #[test]
    fn simple_header_converter_lists_nothing_as_in_apache() {
        let p = props(&[(
            "header.converter",
            "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        )]);
        let infos = connector_converter_infos("c", &p, &empty_framework());
        assert_eq!(infos.len(), 1);
        assert!(infos[0].configs.is_empty(), "{:?}", infos[0]);
        let p = props(&[(
            "key.converter",
            "org.apache.kafka.connect.converters.LongConverter",
        )]);
        let infos = connector_converter_infos("c", &p, &empty_framework());
        let names: Vec<&str> = infos[0]
            .configs
            .iter()
            .map(|c| c.value.as_ref().unwrap().name.as_str())
            .collect();
        assert_eq!(names, ["key.converter.converter.type"]);
    }

    #[test]
    fn converters_the_connector_does_not_set_are_not_listed() {
        let p = props(&[("key.converter.schema.content", "{")]);
        assert!(connector_converter_infos("c", &p, &empty_framework()).is_empty());
    }
}
