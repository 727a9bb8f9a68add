//! Java converters and header converters of `plugin.path` as this workspace's [`Converter`]
//! and [`HeaderConverter`]: Connect data crosses as JsonConverter envelopes, bytes as base64.
//!
//! # Guarantees
//!
//! - `configure` gets the converter's settings and, as Apache adds it, `converter.type`
//!   (`key`, `value` or `header`); `isKey` is passed as given.
//! - An exception in `fromConnectData` / `toConnectData` (or the header variants) is a data
//!   error naming the class, with the Java trace: the runtime's error handling (tolerance, dead
//!   letter queue) applies as for a built-in converter.
//!
//! # Performance
//!
//! One round trip to the JVM per key, value or header converted.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use connect_api::converter::JsonConverter;
use connect_api::{
    ConfigDef, ConfigMap, ConnectError, Converter, HeaderConverter, PluginType, Result, Schema,
    SchemaAndValue, Value,
};
use serde_json::{Value as Json, json};

use super::JavaHost;
use super::convert;
use super::instance::{PluginInstance, config_def_or_log};

/// What a Java converter of either kind shares.
struct Inner {
    host: Arc<JavaHost>,
    class: String,
    kind: PluginType,
    json: JsonConverter,
    instance: Option<PluginInstance>,
}

impl Inner {
    fn new(host: &Arc<JavaHost>, class: &str, kind: PluginType) -> Self {
        Self {
            host: Arc::clone(host),
            class: class.to_owned(),
            kind,
            json: convert::data_converter(),
            instance: None,
        }
    }

    fn configure(&mut self, config: &ConfigMap, is_key: bool, role: &str) -> Result<()> {
        let mut config = config.clone();
        config
            .entry("converter.type".to_owned())
            .or_insert_with(|| role.to_owned());
        let instance = PluginInstance::create(&self.host, &self.class, self.kind, &config, is_key)
            .map_err(|e| {
                e.into_connect(&format!("configure of Java {} {}", self.kind, self.class))
            })?;
        self.instance = Some(instance);
        Ok(())
    }

    fn call(&self, op: &str, what: &str, body: Json) -> Result<Json> {
        let instance = self.instance.as_ref().ok_or_else(|| {
            ConnectError::fatal(format!(
                "Java {} {} used before configure",
                self.kind, self.class
            ))
        })?;
        instance.call(op, body).map_err(|e| {
            e.into_record_error(&format!("{what} of Java {} {}", self.kind, self.class))
        })
    }

    fn to_bytes(
        &self,
        topic: &str,
        header_key: Option<&str>,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        let data = convert::envelope(&self.json, schema, value)?;
        let answer = self.call(
            "converter.fromConnect",
            "fromConnectData",
            json!({"topic": topic, "headerKey": header_key, "data": data}),
        )?;
        match answer.as_str() {
            None => Ok(None),
            Some(b64) => BASE64
                .decode(b64)
                .map(Some)
                .map_err(|e| ConnectError::fatal(format!("the host's bytes are not base64: {e}"))),
        }
    }

    fn to_data(
        &self,
        topic: &str,
        header_key: Option<&str>,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue> {
        let answer = self.call(
            "converter.toConnect",
            "toConnectData",
            json!({"topic": topic, "headerKey": header_key,
                   "bytes": bytes.map(|b| BASE64.encode(b))}),
        )?;
        let (schema, value) = convert::from_envelope(&self.json, &answer["data"])?;
        Ok(SchemaAndValue::new(schema, value))
    }

    fn config_def(&self) -> ConfigDef {
        config_def_or_log(&self.host, &self.class, self.kind)
    }
}

pub(super) struct JavaConverter(Inner);

impl JavaConverter {
    pub(super) fn new(host: &Arc<JavaHost>, class: &str) -> Self {
        Self(Inner::new(host, class, PluginType::Converter))
    }
}

impl Converter for JavaConverter {
    fn configure(&mut self, config: &ConfigMap, is_key: bool) -> Result<()> {
        self.0
            .configure(config, is_key, if is_key { "key" } else { "value" })
    }

    fn from_connect_data(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        self.0.to_bytes(topic, None, schema, value)
    }

    fn to_connect_data(&self, topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        self.0.to_data(topic, None, bytes)
    }

    fn config_def(&self) -> ConfigDef {
        self.0.config_def()
    }
}

pub(super) struct JavaHeaderConverter(Inner);

impl JavaHeaderConverter {
    pub(super) fn new(host: &Arc<JavaHost>, class: &str) -> Self {
        Self(Inner::new(host, class, PluginType::HeaderConverter))
    }
}

impl HeaderConverter for JavaHeaderConverter {
    fn configure(&mut self, config: &ConfigMap) -> Result<()> {
        self.0.configure(config, false, "header")
    }

    fn from_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        self.0.to_bytes(topic, Some(header_key), schema, value)
    }

    fn to_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue> {
        self.0.to_data(topic, Some(header_key), bytes)
    }

    fn config_def(&self) -> ConfigDef {
        self.0.config_def()
    }
}
