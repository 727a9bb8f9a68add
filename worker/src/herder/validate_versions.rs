//! KIP-891 in validation: `connector.plugin.version` and `key|value|header.converter.plugin.version`
//! are Maven version ranges ([`connect_api::config::plugin_version`]) checked against the one
//! version of each plugin built into this worker, as Apache 4.4 answers when one version is
//! installed: a range the version does not satisfy is an error (`Plugin <class> has version
//! <v> which does not match the required version range <range>`) on the version key and on
//! the class key (`connector.class`, `value.converter`, ...); a converter range that is no
//! range is an error on its key (Maven's message); a connector range that is no range
//! refuses the request (Apache: 400).

use connect_api::ConfigMap;
use connect_api::ConnectError;
use connect_api::config::plugin_version::{mismatch, version_requirement};

use crate::version::CONNECT_API_VERSION;

pub const CONNECTOR_VERSION_CONFIG: &str = "connector.plugin.version";

/// `(key, message)` for each version requirement the built-in plugins do not meet.
/// `worker_converters` are the worker's key, value and header converter classes (the
/// connector's own, when set, come first).
pub fn version_errors(
    props: &ConfigMap,
    connector_class: &str,
    connector_version: &str,
    worker_converters: [&str; 3],
) -> Result<Vec<(String, String)>, ConnectError> {
    let mut errors = Vec::new();
    let requirement = version_requirement(props.get(CONNECTOR_VERSION_CONFIG).map(String::as_str))
        .map_err(ConnectError::config)?;
    if let Some(message) =
        requirement.and_then(|r| mismatch(connector_class, connector_version, &r))
    {
        errors.push(("connector.class".to_owned(), message.clone()));
        errors.push((CONNECTOR_VERSION_CONFIG.to_owned(), message));
    }
    for (converter, worker_class) in ["key.converter", "value.converter", "header.converter"]
        .into_iter()
        .zip(worker_converters)
    {
        let key = format!("{converter}.plugin.version");
        let class = props.get(converter).map_or(worker_class, |c| c.trim());
        match version_requirement(props.get(&key).map(String::as_str)) {
            Err(message) => errors.push((key, message)),
            Ok(Some(range)) => {
                if let Some(message) = mismatch(class, CONNECT_API_VERSION, &range) {
                    if props.contains_key(converter) {
                        errors.push((converter.to_owned(), message.clone()));
                    }
                    errors.push((key, message));
                }
            }
            Ok(None) => {}
        }
    }
    Ok(errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = "org.apache.kafka.connect.json.JsonConverter";
    const HEADER: &str = "org.apache.kafka.connect.storage.SimpleHeaderConverter";

    fn props(pairs: &[(&str, &str)]) -> ConfigMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn ranges_the_built_in_version_meets_pass() {
        let v = CONNECT_API_VERSION;
        let p = props(&[
            (CONNECTOR_VERSION_CONFIG, v),
            ("key.converter.plugin.version", &format!("[{v}]")),
            ("value.converter.plugin.version", "latest"),
            ("header.converter.plugin.version", &format!("[{v},)")),
        ]);
        assert!(
            version_errors(&p, "C", v, [JSON, JSON, HEADER])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn other_ranges_are_errors_on_the_version_and_class_keys() {
        let p = props(&[
            (CONNECTOR_VERSION_CONFIG, "[1.0,2.0)"),
            ("value.converter", JSON),
            ("value.converter.plugin.version", "99.0"),
            ("key.converter.plugin.version", "(1.0)"),
        ]);
        let errors = version_errors(&p, "org.example.C", "0.1.0", [JSON, JSON, HEADER]).unwrap();
        let c = "Plugin org.example.C has version 0.1.0 which does not match the required version range [1.0,2.0)";
        let j = format!(
            "Plugin {JSON} has version {CONNECT_API_VERSION} which does not match the required version range [99.0,99.0]"
        );
        assert_eq!(
            errors,
            vec![
                ("connector.class".to_owned(), c.to_owned()),
                (CONNECTOR_VERSION_CONFIG.to_owned(), c.to_owned()),
                (
                    "key.converter.plugin.version".to_owned(),
                    "Single version must be surrounded by []: (1.0)".to_owned()
                ),
                ("value.converter".to_owned(), j.clone()),
                ("value.converter.plugin.version".to_owned(), j),
            ]
        );
        let bad = props(&[(CONNECTOR_VERSION_CONFIG, "[1.0")]);
        assert_eq!(
            version_errors(&bad, "C", "0.1.0", [JSON, JSON, HEADER])
                .unwrap_err()
                .to_string(),
            "Unbounded range: [1.0"
        );
    }
}
