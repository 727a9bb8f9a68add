//! The worker's own converter settings (`key.converter.*`, `value.converter.*`,
//! `header.converter.*` of the worker config), checked at start-up by the converters' own
//! definitions: a setting a task would fail to configure with (a `schema.content` that is
//! no schema, a `decimal.format` of neither BASE64 nor NUMERIC) stops the worker naming the
//! key, rather than failing every task of every connector that uses the worker's converters.
//! Apache checks them only when a task configures its converter.

use std::collections::BTreeMap;

use connect_api::config::plugin_version::{mismatch, version_requirement};
use connect_api::converter::{converter_for_class, header_converter_for_class};

use crate::version::CONNECT_API_VERSION;
use connect_api::{ConfigDef, ConfigMap};

/// A converter's definition, or `None` for a class no converter of this kind has.
pub fn converter_def(class: &str, header: bool) -> Option<ConfigDef> {
    if header {
        header_converter_for_class(class)
            .ok()
            .map(|c| c.config_def())
    } else {
        converter_for_class(class).ok().map(|c| c.config_def())
    }
}

/// Errors of the worker's own converter settings (`key.converter.*`, ... of the worker
/// config), `(prefixed key, message)`, for start-up: a converter a task would fail to
/// configure stops the worker naming the key. Unknown classes are left to the tasks (and to
/// `connect-worker check`).
pub fn worker_converter_errors(
    classes: [(&str, &str); 3],
    worker_props: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    classes
        .into_iter()
        .filter_map(|(key, class)| {
            let header = key == "header.converter";
            Some((key, converter_def(class, header)?))
        })
        .flat_map(|(key, def)| {
            let prefix = format!("{key}.");
            let sub: ConfigMap = worker_props
                .iter()
                .filter_map(|(k, v)| k.strip_prefix(&prefix).map(|k| (k.to_owned(), v.clone())))
                .collect();
            def.validate(&sub)
                .into_iter()
                .flat_map(move |v| {
                    // The converter's message names its own key; the worker's is prefixed.
                    let name = format!("{prefix}{}", v.name);
                    let own = format!("for configuration {}", v.name);
                    let worker = format!("for configuration {name}");
                    let (own_quoted, worker_quoted) =
                        (format!("\"{}\"", v.name), format!("\"{name}\""));
                    v.errors.into_iter().map(move |e| {
                        let e = e.replacen(&own, &worker, 1);
                        (name.clone(), e.replacen(&own_quoted, &worker_quoted, 1))
                    })
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The worker's converters' KIP-891 version requirements (`key.converter.plugin.version`,
/// ...), Maven version ranges ([`connect_api::config::plugin_version`]), against the one
/// version of each converter built in: a range it does not meet, or that is no range, stops
/// start-up with Apache's message naming the key, rather than being passed to the converter,
/// which would ignore it.
pub fn plugin_version_errors(
    classes: [(&str, &str); 3],
    worker_props: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    classes
        .into_iter()
        .filter_map(|(c, class)| {
            let key = format!("{c}.{PLUGIN_VERSION_SUFFIX}");
            let value = worker_props.get(&key)?.trim().to_owned();
            let reason = match version_requirement(Some(&value)) {
                Err(reason) => reason,
                Ok(range) => mismatch(class, CONNECT_API_VERSION, &range?)?,
            };
            Some((
                key.clone(),
                format!("Invalid value {value} for configuration {key}: {reason}"),
            ))
        })
        .collect()
}

/// KIP-891's `<plugin>.plugin.version` keys end so.
pub const PLUGIN_VERSION_SUFFIX: &str = "plugin.version";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_version_ranges_are_checked_against_the_built_in_version() {
        let v = CONNECT_API_VERSION;
        let json = "org.apache.kafka.connect.json.JsonConverter";
        let raw: BTreeMap<String, String> = [
            ("key.converter.plugin.version", format!("[{v}]")),
            ("value.converter.plugin.version", "[1.0,2.0)".to_owned()),
            ("header.converter.plugin.version", "[1.0".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let errors = plugin_version_errors(
            [
                ("key.converter", json),
                ("value.converter", json),
                ("header.converter", json),
            ],
            &raw,
        );
        assert_eq!(
            errors,
            vec![
                (
                    "value.converter.plugin.version".to_owned(),
                    format!("Invalid value [1.0,2.0) for configuration value.converter.plugin.version: Plugin {json} has version {v} which does not match the required version range [1.0,2.0)")
                ),
                (
                    "header.converter.plugin.version".to_owned(),
                    "Invalid value [1.0 for configuration header.converter.plugin.version: Unbounded range: [1.0".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn worker_settings_are_checked_by_their_converter() {
        let raw = [
            ("value.converter.schema.content", "{not json"),
            ("key.converter.schema.content", "{\"type\":\"int32\"}"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let json = "org.apache.kafka.connect.json.JsonConverter";
        let errors = worker_converter_errors(
            [
                ("key.converter", json),
                ("value.converter", json),
                (
                    "header.converter",
                    "org.apache.kafka.connect.storage.SimpleHeaderConverter",
                ),
            ],
            &raw,
        );
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].0, "value.converter.schema.content");
        assert!(
            errors[0].1.starts_with("Invalid value {not json for configuration value.converter.schema.content: Failed to parse schema in converter config due to serialization error: "),
            "{}",
            errors[0].1
        );
    }
}
