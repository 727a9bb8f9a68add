//! Apicurio's `io.apicurio.registry.utils.converter.ExtJsonConverter`: Connect's JSON with the
//! schema kept in Apicurio Registry instead of in each record.
//!
//! ```text
//!   record:   {"schemaId":<content id>,"payload":<the value as JsonConverter writes it, schemas.enable=false>}
//!   registry: artifact <topic>-value (or -key) in group `default`, type KCONNECT, whose content
//!             is the value's schema as JsonConverter writes it ({"type":"struct","fields":[..],..})
//! ```
//!
//! As Apicurio's class (its default `PrettyFormatStrategy`), through Apicurio's own API
//! (`/apis/registry/v3`): Confluent's API has no KCONNECT type. Writing registers the schema
//! (`apicurio.registry.auto-register=true`: find or create the version), or finds it among the
//! artifact's versions (the default), or takes the artifact's latest version
//! (`apicurio.registry.find-latest=true`); reading fetches the schema by content id and reads
//! the payload with it as `JsonConverter` reads an envelope. Schemas are cached by content id
//! and content ids by artifact and schema, so records pay a map lookup; the latest version is
//! looked up again after 30 s (Apicurio's `apicurio.registry.check-period-ms` default).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use connect_api::config::{TypedValue, validators};
use connect_api::converter::{Converter, JsonConverter, to_vec_as_jackson};
use connect_api::{ConfigDef, ConfigMap, ConnectError, Result, Schema, SchemaAndValue, Value};
use serde_json::{Value as Json, json};

use crate::apicurio;
use crate::client::{RegistryClient, encode};
use crate::config::RegistryConverterConfig;
use crate::subject::SubjectNameStrategy;

pub use crate::apicurio::APICURIO_EXT_JSON_CONVERTER;

const ARTIFACT_TYPE: &str = "KCONNECT";
const GROUP: &str = "default";
/// `PrettyFormatStrategy`'s field names.
const SCHEMA_ID: &str = "schemaId";
const PAYLOAD: &str = "payload";
const LATEST_TTL: Duration = Duration::from_secs(30);
const JSON: &str = "application/json";

/// Apicurio's registry keys and `JsonConverter`'s (`schemas.enable` only `true`: the schema is
/// the registry's; no `schema.content`).
pub fn config_def() -> ConfigDef {
    let mut def = apicurio::registry_config_def(apicurio::ApicurioFormat::ExtJson);
    for k in JsonConverter::json_config_def().keys() {
        let k = match k.name.as_str() {
            "schemas.enable" => k.clone().validator(validators::lambda("true", |name, v| {
                match v {
                    Some(TypedValue::Boolean(false)) => Err(ConnectError::invalid_value(
                        name,
                        "false",
                        &format!("{APICURIO_EXT_JSON_CONVERTER} keeps each record's schema in the registry; it cannot write or read schemaless JSON"),
                    )),
                    _ => Ok(()),
                }
            })),
            "schema.content" => k.clone().validator(validators::lambda("empty", |name, v| {
                match v.and_then(TypedValue::as_str) {
                    Some(text) if !text.is_empty() => Err(ConnectError::invalid_value(
                        name,
                        text,
                        &format!("{APICURIO_EXT_JSON_CONVERTER} reads each record with the schema its content id names"),
                    )),
                    _ => Ok(()),
                }
            })),
            _ => k.clone(),
        };
        def = def.define(k);
    }
    def
}

#[derive(Default)]
pub struct ExtJsonConverter {
    state: Option<State>,
}

struct State {
    /// Apicurio's own API.
    client: Arc<RegistryClient>,
    /// With `schemas.enable=true` and the configured JSON options: writes the payload and the
    /// schema, and reads the envelope made of both.
    json: JsonConverter,
    is_key: bool,
    auto_register: bool,
    find_latest: bool,
    /// (artifact, schema text) → content id.
    ids: Mutex<HashMap<(String, String), i64>>,
    /// Content id → schema.
    schemas: Mutex<HashMap<i64, Arc<Json>>>,
    /// Artifact → (looked up at, content id of its latest version).
    latest: Mutex<HashMap<String, (Instant, i64)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl State {
    fn artifact(&self, topic: &str) -> String {
        format!("{topic}-{}", if self.is_key { "key" } else { "value" })
    }

    /// The content id the record is written with.
    fn content_id(&self, artifact: &str, text: &str) -> Result<i64> {
        if self.find_latest && !self.auto_register {
            return self.latest(artifact);
        }
        let key = (artifact.to_owned(), text.to_owned());
        if let Some(id) = lock(&self.ids).get(&key) {
            return Ok(*id);
        }
        let id = if self.auto_register {
            self.create(artifact, text)?
        } else {
            self.search(artifact, text)?
        };
        lock(&self.ids).insert(key, id);
        Ok(id)
    }

    /// `POST /groups/default/artifacts?ifExists=FIND_OR_CREATE_VERSION`.
    fn create(&self, artifact: &str, text: &str) -> Result<i64> {
        let body = json!({
            "artifactId": artifact,
            "artifactType": ARTIFACT_TYPE,
            "firstVersion": { "content": { "content": text, "contentType": JSON } },
        });
        let answer = self
            .client
            .call_with(
                reqwest::Method::POST,
                format!(
                    "/groups/{GROUP}/artifacts?ifExists=FIND_OR_CREATE_VERSION&canonical=false"
                ),
                JSON,
                Some((JSON, body.to_string())),
            )
            .map_err(|f| {
                f.into_error(&format!(
                    "Error registering the schema of artifact {artifact}"
                ))
            })?;
        content_id_of(&answer["version"], artifact)
    }

    /// `POST /search/versions`: the newest enabled version of the artifact with this content.
    fn search(&self, artifact: &str, text: &str) -> Result<i64> {
        let answer = self
            .client
            .call_with(
                reqwest::Method::POST,
                format!(
                    "/search/versions?groupId={GROUP}&artifactId={}&canonical=false&artifactType={ARTIFACT_TYPE}&orderby=globalId&order=desc&limit=100",
                    encode(artifact)
                ),
                JSON,
                Some((JSON, text.to_owned())),
            )
            .map_err(|f| f.into_error(&format!("Error looking up the schema in artifact {artifact}")))?;
        let found = answer["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["state"].as_str() != Some("DISABLED"));
        match found {
            Some(v) => content_id_of(v, artifact),
            None => Err(ConnectError::data(format!(
                "The record's schema is not a version of artifact {artifact} in group {GROUP} (apicurio.registry.auto-register is false): {text}"
            ))),
        }
    }

    /// `GET /groups/default/artifacts/{artifact}/versions/branch=latest`.
    fn latest(&self, artifact: &str) -> Result<i64> {
        if let Some((at, id)) = lock(&self.latest).get(artifact)
            && at.elapsed() < LATEST_TTL
        {
            return Ok(*id);
        }
        let answer = self
            .client
            .call_with(
                reqwest::Method::GET,
                format!(
                    "/groups/{GROUP}/artifacts/{}/versions/branch=latest",
                    encode(artifact)
                ),
                JSON,
                None,
            )
            .map_err(|f| {
                f.into_error(&format!(
                    "Error retrieving the latest version of artifact {artifact}"
                ))
            })?;
        let id = content_id_of(&answer, artifact)?;
        lock(&self.latest).insert(artifact.to_owned(), (Instant::now(), id));
        Ok(id)
    }

    /// `GET /ids/contentIds/{id}`.
    fn schema(&self, id: i64) -> Result<Arc<Json>> {
        if let Some(s) = lock(&self.schemas).get(&id) {
            return Ok(s.clone());
        }
        let answer = self
            .client
            .call_with(
                reqwest::Method::GET,
                format!("/ids/contentIds/{id}"),
                "*/*",
                None,
            )
            .map_err(|f| f.into_error(&format!("Error retrieving schema for content id {id}")))?;
        if !answer.is_object() {
            return Err(ConnectError::data(format!(
                "The content of id {id} is not a Connect schema in JSON: {answer}"
            )));
        }
        let s = Arc::new(answer);
        lock(&self.schemas).insert(id, s.clone());
        Ok(s)
    }
}

fn json_error(e: serde_json::Error) -> ConnectError {
    ConnectError::data(format!("Converting Kafka Connect data to JSON failed: {e}"))
}

fn content_id_of(version: &Json, artifact: &str) -> Result<i64> {
    version["contentId"].as_i64().ok_or_else(|| {
        ConnectError::data(format!(
            "The registry answered for artifact {artifact} without a content id: {version}"
        ))
    })
}

impl ExtJsonConverter {
    fn state(&self) -> Result<&State> {
        self.state
            .as_ref()
            .ok_or_else(|| ConnectError::config("ExtJsonConverter used before configure"))
    }
}

impl Converter for ExtJsonConverter {
    fn configure(&mut self, config: &ConfigMap, is_key: bool) -> Result<()> {
        let (translated, _) =
            apicurio::translate_with(config_def(), apicurio::ApicurioFormat::ExtJson, config)?;
        let json_def = JsonConverter::json_config_def();
        let (mut json_props, registry_props): (ConfigMap, ConfigMap) = translated
            .into_iter()
            .partition(|(k, _)| json_def.key(k).is_some());
        json_props.insert("schemas.enable".into(), "true".into());
        let mut json = JsonConverter::default();
        json.configure(&json_props, is_key)?;
        let registry = RegistryConverterConfig::parse(&registry_props, is_key, false)?;
        if registry.subject_strategy != SubjectNameStrategy::TopicName {
            return Err(ConnectError::invalid_value(
                "apicurio.registry.artifact-resolver-strategy",
                config
                    .get("apicurio.registry.artifact-resolver-strategy")
                    .map(String::as_str)
                    .unwrap_or_default(),
                &format!(
                    "{APICURIO_EXT_JSON_CONVERTER} names its artifact after the topic (TopicIdStrategy)"
                ),
            ));
        }
        let mut settings = registry.client.clone();
        settings.urls = settings
            .urls
            .iter()
            .map(|u| {
                apicurio::native_url(u).ok_or_else(|| {
                    ConnectError::config(format!("Not an Apicurio Registry URL: {u}"))
                })
            })
            .collect::<Result<_>>()?;
        self.state = Some(State {
            client: RegistryClient::shared(settings)?,
            json,
            is_key,
            auto_register: registry.auto_register,
            find_latest: registry.use_latest_version,
            ids: Mutex::default(),
            schemas: Mutex::default(),
            latest: Mutex::default(),
        });
        Ok(())
    }

    fn from_connect_data(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        let state = self.state()?;
        let Some(schema) = schema else {
            if value.is_null() {
                return Ok(None);
            }
            return Err(ConnectError::data(format!(
                "{APICURIO_EXT_JSON_CONVERTER} needs a schema to register; the record of topic {topic} has none"
            )));
        };
        let Json::Object(mut envelope) = state.json.to_json_value(Some(schema), value)? else {
            unreachable!("schemas.enable writes an envelope");
        };
        let text = String::from_utf8(to_vec_as_jackson(&envelope["schema"]).map_err(json_error)?)
            .map_err(|e| ConnectError::data(e.to_string()))?;
        let id = state.content_id(&state.artifact(topic), &text)?;
        let payload = envelope.remove("payload").unwrap_or(Json::Null);
        let mut record = serde_json::Map::with_capacity(2);
        record.insert(SCHEMA_ID.into(), json!(id));
        record.insert(PAYLOAD.into(), payload);
        to_vec_as_jackson(&Json::Object(record))
            .map(Some)
            .map_err(json_error)
    }

    fn to_connect_data(&self, topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        let state = self.state()?;
        let Some(bytes) = bytes else {
            return Ok(SchemaAndValue::NULL);
        };
        let record: Json = serde_json::from_slice(bytes).map_err(|e| {
            ConnectError::data(format!(
                "The record of topic {topic} is not JSON ({e}); {APICURIO_EXT_JSON_CONVERTER} reads {{\"{SCHEMA_ID}\":..,\"{PAYLOAD}\":..}}"
            ))
        })?;
        let id = record.get(SCHEMA_ID).and_then(Json::as_i64).ok_or_else(|| {
            ConnectError::data(format!(
                "The record of topic {topic} has no numeric \"{SCHEMA_ID}\"; {APICURIO_EXT_JSON_CONVERTER} reads {{\"{SCHEMA_ID}\":..,\"{PAYLOAD}\":..}}"
            ))
        })?;
        let schema = state.schema(id)?;
        let envelope = json!({
            "schema": &*schema,
            "payload": record.get(PAYLOAD).cloned().unwrap_or(Json::Null),
        });
        state.json.from_json_value(&envelope).map_err(|e| {
            ConnectError::data(format!(
                "The record of topic {topic} does not match its schema (content id {id}): {e}"
            ))
        })
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
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

    #[test]
    fn schemaless_json_and_other_artifact_names_are_errors_naming_the_key() {
        for (k, v) in [
            ("schemas.enable", "false"),
            ("schema.content", "{\"type\":\"string\"}"),
            (
                "apicurio.registry.artifact-resolver-strategy",
                "io.apicurio.registry.serde.strategy.RecordIdStrategy",
            ),
            ("apicurio.registry.headers.enabled", "true"),
        ] {
            let e = ExtJsonConverter::default()
                .configure(
                    &props(&[
                        ("apicurio.registry.url", "http://reg:8080/apis/registry/v3"),
                        (k, v),
                    ]),
                    false,
                )
                .unwrap_err();
            assert!(e.to_string().contains(k), "{k}: {e}");
        }
        ExtJsonConverter::default()
            .configure(
                &props(&[
                    ("apicurio.registry.url", "http://reg:8080/apis/registry/v3"),
                    ("decimal.format", "NUMERIC"),
                    ("schemas.enable", "true"),
                ]),
                false,
            )
            .unwrap();
    }
}
