//! `/connectors/{c}/offsets` (KIP-875): read, alter and reset a connector's offsets.
//!
//! - `GET` is served by any worker: sources read the offsets topic, sinks their consumer group.
//! - `PATCH` and `DELETE` are leader-only (forwarded) and need the connector `STOPPED` with no
//!   tasks, so nothing writes offsets concurrently. Sources write (or tombstone) records in the
//!   offsets topic; sinks commit or delete offsets of the consumer group `connect-<c>` (or
//!   `consumer.override.group.id`).
//! - The connector's own `alter_offsets` hook is asked first; it decides the success message and
//!   may refuse the request.
//! - A source connector with its own `offsets.storage.topic` (other than the worker's) reads
//!   and writes there, over the worker's global topic, as its tasks do
//!   ([`ConnectorOffsetBackingStore`]): `GET` lists the union (connector topic first), writes go
//!   to the connector topic (tombstones to both).
//! - With `exactly.once.source.support=enabled`, the leader runs a zombie-fencing round for a
//!   source connector before altering or resetting its offsets (as Connect does), so no task of
//!   an earlier generation can commit offsets afterwards; the stopped check is then repeated.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use std::sync::Arc;

use connect_api::config::connector::{CONNECTOR_CLASS_CONFIG, OFFSETS_TOPIC_CONFIG, TOPICS_CONFIG};
use connect_api::connector::SourceOffsets;
use connect_api::{ConfigMap, ConnectorInstance, TopicPartition};
use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde::Deserialize;
use serde_json::{Value, json};

use super::connectors::{REFRESH_TIMEOUT, internal, not_found, type_name};
use super::{ApiError, RestState, body, forward};
use crate::config::clients::ClientKind;
use crate::config::{ClientScope, ExactlyOnceSourceSupport};
use crate::herder::HerderHandle;
use crate::storage::offsets::{ConnectorOffsetBackingStore, OffsetStoreSettings};
use crate::storage::topics::TopicSettings;
use crate::storage::{OffsetBackingStore, StorageError, TargetState};

const KAFKA_TIMEOUT: Duration = Duration::from_secs(30);

pub const OFFSETS_REQUIRED: &str =
    "Partitions / offsets need to be provided for an alter offsets request";
pub const ALTERED: &str = "The offsets for this connector have been altered successfully";
pub const RESET: &str = "The offsets for this connector have been reset successfully";
pub const ALTERED_FRAMEWORK: &str = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses.";
pub const RESET_FRAMEWORK: &str = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses.";

pub(super) fn routes() -> Router<RestState> {
    Router::new().route(
        "/connectors/{connector}/offsets",
        get(get_offsets).patch(alter_offsets).delete(reset_offsets),
    )
}

fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, message)
}

fn not_stopped(name: &str) -> ApiError {
    bad_request(format!(
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
    ))
}

/// The consumer group of a sink connector.
fn sink_group(name: &str, config: &ConfigMap) -> String {
    config
        .get("consumer.override.group.id")
        .cloned()
        .unwrap_or_else(|| crate::runtime::sink::sink_group_id(name))
}

fn config_topics(config: &ConfigMap) -> Vec<String> {
    config
        .get(TOPICS_CONFIG)
        .map(|t| {
            t.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

async fn get_offsets(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let h = s.herder()?;
    h.config_store
        .refresh(REFRESH_TIMEOUT)
        .await
        .map_err(internal)?;
    let config = h
        .config_store
        .snapshot()
        .connector_config(&name)
        .cloned()
        .ok_or_else(|| not_found(format!("Connector {name} not found")))?;
    let offsets: Vec<Value> = match type_name(h, &config) {
        "sink" => h.sink_offsets(&name, &config).await.map_err(internal)?,
        _ => {
            let store = SourceOffsetStore::open(h, &config).await?;
            let all = store.store.all_for_connector(&name).await;
            store.close().await;
            all.map_err(internal)?
                .into_iter()
                .map(|(p, o)| json!({"partition": p, "offset": o}))
                .collect()
        }
    };
    Ok(Json(json!({ "offsets": offsets })))
}

/// `ConnectorOffsets` as a request body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OffsetsRequest {
    offsets: Option<Vec<OffsetEntry>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OffsetEntry {
    partition: Option<Value>,
    offset: Option<Value>,
}

/// The offsets store of a source connector, as its tasks see it: its own
/// `offsets.storage.topic` (opened for this request) over the worker's global topic, or the
/// global topic alone.
struct SourceOffsetStore {
    store: ConnectorOffsetBackingStore,
    opened: Option<Arc<OffsetBackingStore>>,
}

impl SourceOffsetStore {
    async fn open(h: &HerderHandle, config: &ConfigMap) -> Result<Self, ApiError> {
        let Some(topic) = config
            .get(OFFSETS_TOPIC_CONFIG)
            .map(|t| t.trim())
            .filter(|t| !t.is_empty() && *t != h.config.offset_storage_topic)
        else {
            return Ok(Self {
                store: ConnectorOffsetBackingStore::worker_only(h.offset_store.clone()),
                opened: None,
            });
        };
        let store = OffsetBackingStore::start(OffsetStoreSettings {
            topic: TopicSettings::new(
                topic,
                h.config.offset_storage_partitions,
                h.config.offset_storage_replication_factor.into(),
            ),
            client: client_config(h, ClientScope::Internal)?,
            client_id: format!("{}-offsets-rest-{topic}", h.config.group_id),
            read_committed: h.config.exactly_once_source_support
                == ExactlyOnceSourceSupport::Enabled,
        })
        .await
        .map_err(|e| internal(format!("Failed to open offsets topic {topic}: {e}")))?;
        let store = Arc::new(store);
        Ok(Self {
            store: ConnectorOffsetBackingStore::with_connector_store(
                store.clone(),
                Some(h.offset_store.clone()),
            ),
            opened: Some(store),
        })
    }

    async fn close(self) {
        if let Some(s) = self.opened {
            s.stop().await;
        }
    }
}

/// Under exactly-once, fences the source connector's earlier task generations (the leader's
/// zombie-fencing round), then checks again that it is stopped; returns its config.
async fn fence_before_modifying(
    h: &HerderHandle,
    name: &str,
    config: ConfigMap,
) -> Result<ConfigMap, ApiError> {
    if h.config.exactly_once_source_support != ExactlyOnceSourceSupport::Enabled {
        return Ok(config);
    }
    tracing::debug!(
        connector = name,
        "zombie fencing before modifying the offsets of a source connector"
    );
    h.fence_zombies(name).await.map_err(|e| {
        internal(format!(
            "Failed to perform zombie fencing for source connector prior to modifying offsets: {e}"
        ))
    })?;
    stopped_connector_config(h, name).await
}

/// The connector's config once it is known to be stopped with no tasks (after reading the
/// config topic to the end).
async fn stopped_connector_config(h: &HerderHandle, name: &str) -> Result<ConfigMap, ApiError> {
    h.config_store
        .refresh(REFRESH_TIMEOUT)
        .await
        .map_err(internal)?;
    let snapshot = h.config_store.snapshot();
    let config = snapshot
        .connector_config(name)
        .cloned()
        .ok_or_else(|| not_found(format!("Connector {name} not found")))?;
    if snapshot.target_state(name) != Some(TargetState::Stopped) || snapshot.task_count(name) > 0 {
        return Err(not_stopped(name));
    }
    Ok(config)
}

async fn alter_offsets(
    State(s): State<RestState>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let fwd = forward::forward_param(&uri)?;
    let raw: Value = body::parse(&bytes)?;
    let req: OffsetsRequest = body::from_value(raw.clone())?;
    let entries = req
        .offsets
        .filter(|o| !o.is_empty())
        .ok_or_else(|| bad_request(OFFSETS_REQUIRED))?;
    if let Some(target) = forward::leader_target(h, fwd).await? {
        let f = forward::forward(
            &target,
            Method::PATCH,
            &uri,
            fwd,
            &headers,
            Some(&raw),
            None,
        )
        .await?;
        return Ok(f.into_response());
    }
    let config = stopped_connector_config(h, &name).await?;
    let connector = create_connector(h, &config)?;
    let external = match &connector {
        ConnectorInstance::Sink(c) => {
            let offsets = parse_sink_offsets(&entries)?;
            let external = c
                .alter_offsets(&config, &offsets)
                .await
                .map_err(|e| hook_failed(&name, e))?;
            alter_sink_group(h, &name, &config, offsets).await?;
            external
        }
        ConnectorInstance::Source(c) => {
            let offsets = parse_source_offsets(&entries)?;
            let config = fence_before_modifying(h, &name, config.clone()).await?;
            let external = c
                .alter_offsets(&config, &offsets)
                .await
                .map_err(|e| hook_failed(&name, e))?;
            let store = SourceOffsetStore::open(h, &config).await?;
            let written = write_source_offsets(&store.store, &name, &offsets).await;
            store.close().await;
            written?;
            external
        }
    };
    let message = if external { ALTERED } else { ALTERED_FRAMEWORK };
    Ok(Json(json!({ "message": message })).into_response())
}

async fn reset_offsets(
    State(s): State<RestState>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let fwd = forward::forward_param(&uri)?;
    if let Some(target) = forward::leader_target(h, fwd).await? {
        let f = forward::forward(&target, Method::DELETE, &uri, fwd, &headers, None, None).await?;
        return Ok(f.into_response());
    }
    let config = stopped_connector_config(h, &name).await?;
    let connector = create_connector(h, &config)?;
    let external = match &connector {
        ConnectorInstance::Sink(c) => {
            let current = h.sink_offsets(&name, &config).await.map_err(internal)?;
            let offsets = parse_sink_offsets(
                &current
                    .into_iter()
                    .map(|v| OffsetEntry {
                        partition: Some(v["partition"].clone()),
                        offset: None,
                    })
                    .collect::<Vec<_>>(),
            )?;
            let external = c
                .alter_offsets(&config, &offsets)
                .await
                .map_err(|e| hook_failed(&name, e))?;
            delete_sink_group(h, &name, &config).await?;
            external
        }
        ConnectorInstance::Source(c) => {
            let config = fence_before_modifying(h, &name, config.clone()).await?;
            let store = SourceOffsetStore::open(h, &config).await?;
            let result = async {
                let offsets: SourceOffsets = store
                    .store
                    .all_for_connector(&name)
                    .await
                    .map_err(internal)?
                    .into_iter()
                    .map(|(p, _)| (p, None))
                    .collect();
                let external = c
                    .alter_offsets(&config, &offsets)
                    .await
                    .map_err(|e| hook_failed(&name, e))?;
                write_source_offsets(&store.store, &name, &offsets).await?;
                Ok::<_, ApiError>(external)
            }
            .await;
            store.close().await;
            result?
        }
    };
    let message = if external { RESET } else { RESET_FRAMEWORK };
    Ok(Json(json!({ "message": message })).into_response())
}

fn create_connector(h: &HerderHandle, config: &ConfigMap) -> Result<ConnectorInstance, ApiError> {
    let class = config
        .get(CONNECTOR_CLASS_CONFIG)
        .map(String::as_str)
        .unwrap_or_default();
    h.registry
        .create_connector(class)
        .map_err(|e| internal(e.message()))
}

/// The connector refused the offsets (Connect answers 500; we answer 400, as it is the
/// request that is wrong — README, "Compatibility").
fn hook_failed(name: &str, e: connect_api::ConnectError) -> ApiError {
    bad_request(format!(
        "Failed to modify offsets for connector {name}: {}",
        e.message()
    ))
}

fn parse_source_offsets(entries: &[OffsetEntry]) -> Result<SourceOffsets, ApiError> {
    entries
        .iter()
        .map(|e| {
            let partition = match &e.partition {
                Some(Value::Object(m)) => m.clone(),
                _ => {
                    return Err(bad_request(
                        "The partition for a source connector offset must be a JSON object and may not be null or missing",
                    ));
                }
            };
            let offset = match &e.offset {
                None | Some(Value::Null) => None,
                Some(Value::Object(m)) => Some(m.clone()),
                Some(_) => {
                    return Err(bad_request(
                        "The offset for a source connector must be a JSON object or null",
                    ));
                }
            };
            Ok((partition, offset))
        })
        .collect()
}

async fn write_source_offsets(
    store: &ConnectorOffsetBackingStore,
    name: &str,
    offsets: &SourceOffsets,
) -> Result<(), ApiError> {
    store.set(name, offsets).await.map_err(|e| match e {
        StorageError::Data(m) => bad_request(m),
        other => internal(format!(
            "Failed to write offsets for connector {name}: {other}"
        )),
    })
}

/// The text of a JSON value as Connect quotes it in messages.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An integer from a JSON number or a numeric string.
fn integer(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Sink offsets from a request, with Connect's validation messages.
fn parse_sink_offsets(
    entries: &[OffsetEntry],
) -> Result<Vec<(TopicPartition, Option<i64>)>, ApiError> {
    entries
        .iter()
        .map(|e| {
            let partition = match &e.partition {
                None | Some(Value::Null) => {
                    return Err(bad_request(
                        "The partition for a sink connector offset cannot be null or missing",
                    ));
                }
                Some(Value::Object(m)) => m,
                Some(_) => {
                    return Err(bad_request(
                        "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'",
                    ));
                }
            };
            let (Some(topic), Some(part)) =
                (partition.get("kafka_topic"), partition.get("kafka_partition"))
            else {
                return Err(bad_request(
                    "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'",
                ));
            };
            let Value::String(topic) = topic else {
                return Err(bad_request(
                    "Kafka topic names must be valid strings and may not be null",
                ));
            };
            if part.is_null() {
                return Err(bad_request(
                    "Kafka partitions must be valid numbers and may not be null",
                ));
            }
            let part = integer(part)
                .and_then(|p| i32::try_from(p).ok())
                .ok_or_else(|| {
                    bad_request(format!(
                        "Failed to parse the following Kafka partition value in the provided offsets: '{}'. Partition values for sink connectors need to be integers.",
                        text(part)
                    ))
                })?;
            let offset = match &e.offset {
                None | Some(Value::Null) => None,
                Some(Value::Object(m)) => {
                    let Some(o) = m.get("kafka_offset") else {
                        return Err(bad_request(
                            "The offset for a sink connector should either be null or contain the key 'kafka_offset'",
                        ));
                    };
                    Some(integer(o).filter(|o| *o >= 0).ok_or_else(|| {
                        bad_request(format!(
                            "Failed to parse the following Kafka offset value in the provided offsets: '{}'. Offset values for sink connectors need to be integers.",
                            text(o)
                        ))
                    })?)
                }
                Some(_) => {
                    return Err(bad_request(
                        "The offset for a sink connector should either be null or contain the key 'kafka_offset'",
                    ));
                }
            };
            Ok((
                TopicPartition {
                    topic: topic.clone(),
                    partition: part,
                },
                offset,
            ))
        })
        .collect()
}

const ADMIN: ClientScope = ClientScope::Worker(ClientKind::Admin);

/// The worker's client of `scope` (Connect alters and resets offsets with the worker's admin
/// client settings).
fn client_config(h: &HerderHandle, scope: ClientScope) -> Result<ClientConfig, ApiError> {
    h.config.kafka_client(scope).map_err(internal)
}

fn group_busy(name: &str, verb: &str, e: impl std::fmt::Display) -> ApiError {
    internal(format!(
        "Failed to {verb} consumer group offsets for connector {name} either because its tasks haven't stopped completely yet or the connector was resumed before the request to {verb} its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks. ({e})"
    ))
}

/// Deletes the whole consumer group; a group that does not exist is already reset.
async fn delete_group(
    h: &HerderHandle,
    name: &str,
    group: &str,
    verb: &str,
) -> Result<(), ApiError> {
    let admin: AdminClient<DefaultClientContext> =
        client_config(h, ADMIN)?.create().map_err(internal)?;
    let opts = AdminOptions::new().operation_timeout(Some(KAFKA_TIMEOUT));
    let results = admin
        .delete_groups(&[group], &opts)
        .await
        .map_err(|e| group_busy(name, verb, e))?;
    for r in results {
        match r {
            Ok(_) => {}
            Err((_, RDKafkaErrorCode::GroupIdNotFound)) => {}
            Err((_, code)) => return Err(group_busy(name, verb, code)),
        }
    }
    Ok(())
}

/// Commits `offsets` for `group` without joining it (Kafka accepts this for an empty group).
async fn commit_group(
    h: &HerderHandle,
    name: &str,
    group: &str,
    offsets: BTreeMap<(String, i32), i64>,
) -> Result<(), ApiError> {
    if offsets.is_empty() {
        return Ok(());
    }
    let mut cfg = client_config(h, ADMIN)?;
    cfg.set("group.id", group)
        .set("enable.auto.commit", "false");
    let name = name.to_owned();
    tokio::task::spawn_blocking(move || {
        let consumer: BaseConsumer = cfg.create().map_err(internal)?;
        let mut tpl = TopicPartitionList::new();
        for ((t, p), o) in &offsets {
            tpl.add_partition_offset(t, *p, Offset::Offset(*o))
                .map_err(internal)?;
        }
        consumer
            .commit(&tpl, CommitMode::Sync)
            .map_err(|e: KafkaError| group_busy(&name, "alter", e))
    })
    .await
    .map_err(internal)?
}

/// PATCH for a sink: commits the given offsets; partitions with `null` lose their committed
/// offset (the group is deleted and the remaining offsets committed again, as the admin API of
/// our Kafka client has no per-partition offset deletion).
async fn alter_sink_group(
    h: &HerderHandle,
    name: &str,
    config: &ConfigMap,
    offsets: Vec<(TopicPartition, Option<i64>)>,
) -> Result<(), ApiError> {
    let group = sink_group(name, config);
    let deletes: BTreeSet<(String, i32)> = offsets
        .iter()
        .filter(|(_, o)| o.is_none())
        .map(|(tp, _)| (tp.topic.clone(), tp.partition))
        .collect();
    let mut target: BTreeMap<(String, i32), i64> = BTreeMap::new();
    if !deletes.is_empty() {
        // Keep every other committed offset of the group's topics.
        let mut topics: BTreeSet<String> = config_topics(config).into_iter().collect();
        topics.extend(offsets.iter().map(|(tp, _)| tp.topic.clone()));
        let mut scan = config.clone();
        scan.insert(
            TOPICS_CONFIG.to_owned(),
            topics.into_iter().collect::<Vec<_>>().join(","),
        );
        for v in h.sink_offsets(name, &scan).await.map_err(internal)? {
            let (Some(t), Some(p), Some(o)) = (
                v["partition"]["kafka_topic"].as_str(),
                v["partition"]["kafka_partition"].as_i64(),
                v["offset"]["kafka_offset"].as_i64(),
            ) else {
                continue;
            };
            target.insert((t.to_owned(), p as i32), o);
        }
        for d in &deletes {
            target.remove(d);
        }
    }
    for (tp, o) in &offsets {
        if let Some(o) = o {
            target.insert((tp.topic.clone(), tp.partition), *o);
        }
    }
    if !deletes.is_empty() {
        delete_group(h, name, &group, "alter").await?;
    }
    commit_group(h, name, &group, target).await
}

async fn delete_sink_group(
    h: &HerderHandle,
    name: &str,
    config: &ConfigMap,
) -> Result<(), ApiError> {
    delete_group(h, name, &sink_group(name, config), "reset").await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(v: Value) -> OffsetEntry {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn sink_offsets_are_validated_with_connects_messages() {
        let ok = parse_sink_offsets(&[
            entry(json!({"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 5}})),
            entry(json!({"partition": {"kafka_topic": "t", "kafka_partition": "1"}, "offset": {"kafka_offset": "7"}})),
            entry(json!({"partition": {"kafka_topic": "t", "kafka_partition": 2}, "offset": null})),
        ])
        .unwrap();
        assert_eq!(ok[0].1, Some(5));
        assert_eq!(ok[1].0.partition, 1);
        assert_eq!(ok[1].1, Some(7));
        assert_eq!(ok[2].1, None);
        let err = |v: Value| parse_sink_offsets(&[entry(v)]).unwrap_err().message;
        assert!(err(json!({"offset": null})).contains("cannot be null or missing"));
        assert!(err(json!({"partition": {"kafka_topic": "t"}})).contains("must contain the keys"));
        assert!(
            err(json!({"partition": {"kafka_topic": 1, "kafka_partition": 0}}))
                .starts_with("Kafka topic names must be valid strings")
        );
        assert!(
            err(json!({"partition": {"kafka_topic": "t", "kafka_partition": null}}))
                .starts_with("Kafka partitions must be valid numbers")
        );
        assert!(
            err(json!({"partition": {"kafka_topic": "t", "kafka_partition": "x"}}))
                .contains("Kafka partition value in the provided offsets: 'x'")
        );
        assert!(
            err(
                json!({"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"o": 1}})
            )
            .contains("should either be null or contain the key 'kafka_offset'")
        );
        assert!(
            err(json!({"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": "z"}}))
                .contains("Kafka offset value in the provided offsets: 'z'")
        );
    }

    #[test]
    fn source_offsets_need_object_partitions() {
        let ok = parse_source_offsets(&[
            entry(json!({"partition": {"f": "a"}, "offset": {"pos": 1}})),
            entry(json!({"partition": {"f": "b"}, "offset": null})),
        ])
        .unwrap();
        assert_eq!(ok.len(), 2);
        assert!(ok[1].1.is_none());
        assert!(parse_source_offsets(&[entry(json!({"offset": {"pos": 1}}))]).is_err());
        assert!(parse_source_offsets(&[entry(json!({"partition": {}, "offset": 3}))]).is_err());
    }
}
