//! The converters a connector's tasks use: the connector's `key.converter` / `value.converter` /
//! `header.converter` when it sets them (with its own `key.converter.*` sub-config), else the
//! worker's, as in Connect.

use connect_api::config::ConnectorConfig;
use connect_api::config::plugin_version::{mismatch, version_requirement};
use connect_api::record::Headers;
use connect_api::{
    ConfigMap, ConnectError, Converter, HeaderConverter, Schema, SchemaAndValue, Value,
    converter_for_class, header_converter_for_class,
};

use crate::config::WorkerConfig;

/// Converters for one task.
pub struct RecordConverters {
    key: Box<dyn Converter>,
    value: Box<dyn Converter>,
    header: Box<dyn HeaderConverter>,
}

fn sub_config(props: &ConfigMap, prefix: &str) -> ConfigMap {
    props
        .iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k.to_owned(), v.clone())))
        .collect()
}

/// A connector's `<converter>.*` settings without its `<converter>` class have no effect (the
/// worker's converter runs with the worker's settings, as in Apache); one line names them, so
/// a `value.converter.schema.registry.url` set on its own is not silently ignored.
fn warn_settings_without_class(connector: &ConnectorConfig) {
    for key in ["key.converter", "value.converter", "header.converter"] {
        if connector.originals.contains_key(key) {
            continue;
        }
        let prefix = format!("{key}.");
        let orphans: Vec<&str> = connector
            .originals
            .keys()
            .filter(|k| k.starts_with(&prefix) && !k.ends_with(".plugin.version"))
            .map(String::as_str)
            .collect();
        if !orphans.is_empty() {
            tracing::warn!(
                settings = ?orphans,
                "the connector sets {} but not {key}: they have no effect, and the worker's {key} runs with the worker's settings (set {key} to apply them)",
                orphans.join(", ")
            );
        }
    }
}

impl RecordConverters {
    pub fn for_connector(
        worker: &WorkerConfig,
        connector: &ConnectorConfig,
    ) -> connect_api::Result<Self> {
        let pick = |own: Option<&String>, worker_class: &str, prefix: &str| match own {
            Some(class) => (class.clone(), sub_config(&connector.originals, prefix)),
            None => (worker_class.to_owned(), worker.with_prefix(prefix)),
        };
        let (key_class, key_cfg) = pick(
            connector.key_converter.as_ref(),
            &worker.key_converter,
            "key.converter.",
        );
        let (value_class, value_cfg) = pick(
            connector.value_converter.as_ref(),
            &worker.value_converter,
            "value.converter.",
        );
        let header_own = connector
            .originals
            .contains_key("header.converter")
            .then_some(&connector.header_converter);
        let (header_class, header_cfg) =
            pick(header_own, &worker.header_converter, "header.converter.");
        warn_settings_without_class(connector);

        // KIP-891: a connector's `<converter>.plugin.version` the built-in converters' version
        // does not meet fails the task, as Apache's plugin loader fails it (the worker's own
        // were checked at start-up).
        for (prefix, class) in [
            ("key.converter", &key_class),
            ("value.converter", &value_class),
            ("header.converter", &header_class),
        ] {
            let requirement = version_requirement(
                connector
                    .originals
                    .get(&format!("{prefix}.plugin.version"))
                    .map(String::as_str),
            )
            .map_err(ConnectError::config)?;
            if let Some(message) =
                requirement.and_then(|r| mismatch(class, crate::version::CONNECT_API_VERSION, &r))
            {
                return Err(ConnectError::config(message));
            }
        }
        let mut key = converter_for_class(&key_class)?;
        key.configure(&key_cfg, true)?;
        let mut value = converter_for_class(&value_class)?;
        value.configure(&value_cfg, false)?;
        let mut header = header_converter_for_class(&header_class)?;
        header.configure(&header_cfg)?;
        Ok(Self { key, value, header })
    }

    pub fn key_to_bytes(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> connect_api::Result<Option<Vec<u8>>> {
        self.key.from_connect_data(topic, schema, value)
    }

    pub fn value_to_bytes(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> connect_api::Result<Option<Vec<u8>>> {
        self.value.from_connect_data(topic, schema, value)
    }

    pub fn key_from_bytes(
        &self,
        topic: &str,
        bytes: Option<&[u8]>,
    ) -> connect_api::Result<SchemaAndValue> {
        self.key.to_connect_data(topic, bytes)
    }

    pub fn value_from_bytes(
        &self,
        topic: &str,
        bytes: Option<&[u8]>,
    ) -> connect_api::Result<SchemaAndValue> {
        self.value.to_connect_data(topic, bytes)
    }

    /// Connect headers to Kafka header (name, bytes) pairs.
    pub fn headers_to_bytes(
        &self,
        topic: &str,
        headers: &Headers,
    ) -> connect_api::Result<Vec<(String, Option<Vec<u8>>)>> {
        headers
            .iter()
            .map(|h| {
                self.header
                    .from_connect_header(topic, &h.key, h.schema.as_ref(), &h.value)
                    .map(|b| (h.key.clone(), b))
            })
            .collect()
    }

    /// Kafka headers to Connect headers.
    pub fn headers_from_bytes<'a>(
        &self,
        topic: &str,
        headers: impl Iterator<Item = (&'a str, Option<&'a [u8]>)>,
    ) -> connect_api::Result<Headers> {
        let mut out = Headers::new();
        for (key, bytes) in headers {
            let sv = self.header.to_connect_header(topic, key, bytes)?;
            out.add(key, sv.schema, sv.value);
        }
        Ok(out)
    }
}

/// A conversion failure names the record's place, so the error tolerance log is useful.
pub fn conversion_error(what: &str, topic: &str, err: ConnectError) -> ConnectError {
    ConnectError::data(format!("failed to convert {what} for topic {topic}: {err}"))
}
