//! Reading, altering and resetting a connector's offsets (KIP-875) in Kafka: the offsets
//! topics of a source connector, the consumer group of a sink connector. The herder decides
//! when it may happen (leader, connector stopped, zombies fenced); this module does it.
//!
//! - Sources read and write their offsets store as their tasks see it: a connector-specific
//!   `offsets.storage.topic` (other than the worker's) over the worker's global topic
//!   ([`ConnectorOffsetBackingStore`]): reads list the union (connector topic first), writes go
//!   to the connector topic (tombstones to both).
//! - Sinks use the group their tasks commit to ([`sink_group_id`]), with the worker's admin
//!   client settings (as Connect does).
//! - The connector's own `alter_offsets` hook is asked first; it decides the success message
//!   and may refuse the request.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use connect_api::config::connector::{OFFSETS_TOPIC_CONFIG, TOPICS_CONFIG};
use connect_api::connector::SourceOffsets;
use connect_api::{ConfigMap, ConnectorInstance, TopicPartition};
use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde::Deserialize;
use serde_json::{Value, json};

use super::sink::sink_group_id;
use crate::config::clients::ClientKind;
use crate::config::{ClientScope, ExactlyOnceSourceSupport, WorkerConfig};
use crate::storage::offsets::{ConnectorOffsetBackingStore, OffsetStoreSettings};
use crate::storage::topics::TopicSettings;
use crate::storage::{OffsetBackingStore, StorageError};

const KAFKA_TIMEOUT: Duration = Duration::from_secs(30);

pub const ALTERED: &str = "The offsets for this connector have been altered successfully";
pub const RESET: &str = "The offsets for this connector have been reset successfully";
pub const ALTERED_FRAMEWORK: &str = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses.";
pub const RESET_FRAMEWORK: &str = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses.";

/// Why an offsets request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OffsetsError {
    /// The request is wrong (its offsets, or the connector refused them): 400.
    #[error("{0}")]
    BadRequest(String),
    /// Kafka or the store failed: 500.
    #[error("{0}")]
    Failed(String),
}

fn failed(e: impl std::fmt::Display) -> OffsetsError {
    OffsetsError::Failed(e.to_string())
}

/// One entry of a `ConnectorOffsets` request body.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OffsetEntry {
    pub partition: Option<Value>,
    pub offset: Option<Value>,
}

/// Offsets of a request, parsed for the connector's type.
#[derive(Debug)]
pub enum ParsedOffsets {
    Sink(Vec<(TopicPartition, Option<i64>)>),
    Source(SourceOffsets),
}

/// Parses `entries` for `connector`'s type, with Connect's validation messages.
pub fn parse(
    connector: &ConnectorInstance,
    entries: &[OffsetEntry],
) -> Result<ParsedOffsets, OffsetsError> {
    Ok(match connector {
        ConnectorInstance::Sink(_) => ParsedOffsets::Sink(parse_sink_offsets(entries)?),
        ConnectorInstance::Source(_) => ParsedOffsets::Source(parse_source_offsets(entries)?),
    })
}

/// The consumer group a sink connector's tasks commit to.
pub fn sink_group(
    worker: &WorkerConfig,
    name: &str,
    config: &ConfigMap,
) -> Result<String, OffsetsError> {
    sink_group_id(worker, name, config).map_err(|e| failed(e.message()))
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

/// The connector's offsets as `GET .../offsets` lists them.
pub async fn read(
    worker: &WorkerConfig,
    worker_store: &Arc<OffsetBackingStore>,
    name: &str,
    config: &ConfigMap,
    is_sink: bool,
) -> Result<Vec<Value>, OffsetsError> {
    if is_sink {
        return sink_offsets(worker, name, config).await;
    }
    let store = SourceOffsetStore::open(worker, worker_store, config).await?;
    let all = store.store.all_for_connector(name).await;
    store.close().await;
    Ok(all
        .map_err(failed)?
        .into_iter()
        .map(|(p, o)| json!({"partition": p, "offset": o}))
        .collect())
}

/// Alters the offsets (the connector's hook first); returns the success message.
pub async fn alter(
    worker: &WorkerConfig,
    worker_store: &Arc<OffsetBackingStore>,
    name: &str,
    config: &ConfigMap,
    connector: &ConnectorInstance,
    offsets: ParsedOffsets,
) -> Result<&'static str, OffsetsError> {
    let external = match (connector, offsets) {
        (ConnectorInstance::Sink(c), ParsedOffsets::Sink(offsets)) => {
            let external = c
                .alter_offsets(config, &offsets)
                .await
                .map_err(|e| hook_failed(name, e))?;
            alter_sink_group(worker, name, config, offsets).await?;
            external
        }
        (ConnectorInstance::Source(c), ParsedOffsets::Source(offsets)) => {
            let external = c
                .alter_offsets(config, &offsets)
                .await
                .map_err(|e| hook_failed(name, e))?;
            let store = SourceOffsetStore::open(worker, worker_store, config).await?;
            let written = write_source_offsets(&store.store, name, &offsets).await;
            store.close().await;
            written?;
            external
        }
        _ => return Err(failed("the offsets do not match the connector's type")),
    };
    Ok(if external { ALTERED } else { ALTERED_FRAMEWORK })
}

/// Resets every offset of the connector (the connector's hook first); returns the success
/// message.
pub async fn reset(
    worker: &WorkerConfig,
    worker_store: &Arc<OffsetBackingStore>,
    name: &str,
    config: &ConfigMap,
    connector: &ConnectorInstance,
) -> Result<&'static str, OffsetsError> {
    let external = match connector {
        ConnectorInstance::Sink(c) => {
            let current = sink_offsets(worker, name, config).await?;
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
                .alter_offsets(config, &offsets)
                .await
                .map_err(|e| hook_failed(name, e))?;
            delete_sink_group(worker, name, config).await?;
            external
        }
        ConnectorInstance::Source(c) => {
            let store = SourceOffsetStore::open(worker, worker_store, config).await?;
            let result = async {
                let offsets: SourceOffsets = store
                    .store
                    .all_for_connector(name)
                    .await
                    .map_err(failed)?
                    .into_iter()
                    .map(|(p, _)| (p, None))
                    .collect();
                let external = c
                    .alter_offsets(config, &offsets)
                    .await
                    .map_err(|e| hook_failed(name, e))?;
                write_source_offsets(&store.store, name, &offsets).await?;
                Ok::<_, OffsetsError>(external)
            }
            .await;
            store.close().await;
            result?
        }
    };
    Ok(if external { RESET } else { RESET_FRAMEWORK })
}

/// The offsets store of a source connector, as its tasks see it: its own
/// `offsets.storage.topic` (opened for this request) over the worker's global topic, or the
/// global topic alone.
struct SourceOffsetStore {
    store: ConnectorOffsetBackingStore,
    opened: Option<Arc<OffsetBackingStore>>,
}

impl SourceOffsetStore {
    async fn open(
        worker: &WorkerConfig,
        worker_store: &Arc<OffsetBackingStore>,
        config: &ConfigMap,
    ) -> Result<Self, OffsetsError> {
        let Some(topic) = config
            .get(OFFSETS_TOPIC_CONFIG)
            .map(|t| t.trim())
            .filter(|t| !t.is_empty() && *t != worker.offset_storage_topic && !worker.standalone)
        else {
            return Ok(Self {
                store: ConnectorOffsetBackingStore::worker_only(worker_store.clone()),
                opened: None,
            });
        };
        let store = OffsetBackingStore::start(OffsetStoreSettings {
            topic: TopicSettings::new(
                topic,
                worker.offset_storage_partitions,
                worker.offset_storage_replication_factor.into(),
            ),
            client: worker.kafka_client(ClientScope::Internal).map_err(failed)?,
            client_id: format!("{}-offsets-rest-{topic}", worker.group_id),
            read_committed: worker.exactly_once_source_support == ExactlyOnceSourceSupport::Enabled,
        })
        .await
        .map_err(|e| failed(format!("Failed to open offsets topic {topic}: {e}")))?;
        let store = Arc::new(store);
        Ok(Self {
            store: ConnectorOffsetBackingStore::with_connector_store(
                store.clone(),
                Some(worker_store.clone()),
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

/// The connector refused the offsets (Connect answers 500; we answer 400, as it is the
/// request that is wrong — README, "Compatibility").
fn hook_failed(name: &str, e: connect_api::ConnectError) -> OffsetsError {
    OffsetsError::BadRequest(format!(
        "Failed to modify offsets for connector {name}: {}",
        e.message()
    ))
}

async fn write_source_offsets(
    store: &ConnectorOffsetBackingStore,
    name: &str,
    offsets: &SourceOffsets,
) -> Result<(), OffsetsError> {
    store.set(name, offsets).await.map_err(|e| match e {
        StorageError::Data(m) => OffsetsError::BadRequest(m),
        other => failed(format!(
            "Failed to write offsets for connector {name}: {other}"
        )),
    })
}

/// The worker's admin client settings (Connect alters and resets offsets with them).
fn admin_client(worker: &WorkerConfig) -> Result<ClientConfig, OffsetsError> {
    worker
        .kafka_client(ClientScope::Worker(ClientKind::Admin))
        .map_err(failed)
}

/// A sink connector's committed consumer group offsets, as `GET .../offsets` shows them.
async fn sink_offsets(
    worker: &WorkerConfig,
    name: &str,
    config: &ConfigMap,
) -> Result<Vec<Value>, OffsetsError> {
    let group = sink_group(worker, name, config)?;
    let topics = config_topics(config);
    let mut client = admin_client(worker)?;
    tokio::task::spawn_blocking(move || {
        let consumer: BaseConsumer = client.set("group.id", &group).create().map_err(failed)?;
        let mut tpl = TopicPartitionList::new();
        for t in &topics {
            let md = consumer
                .fetch_metadata(Some(t), KAFKA_TIMEOUT)
                .map_err(failed)?;
            for topic in md.topics() {
                for p in topic.partitions() {
                    tpl.add_partition(topic.name(), p.id());
                }
            }
        }
        let committed = consumer
            .committed_offsets(tpl, KAFKA_TIMEOUT)
            .map_err(failed)?;
        Ok(committed
            .elements()
            .iter()
            .filter_map(|e| match e.offset() {
                Offset::Offset(o) => Some(json!({
                    "partition": {"kafka_topic": e.topic(), "kafka_partition": e.partition()},
                    "offset": {"kafka_offset": o},
                })),
                _ => None,
            })
            .collect())
    })
    .await
    .map_err(failed)?
}

pub fn parse_source_offsets(entries: &[OffsetEntry]) -> Result<SourceOffsets, OffsetsError> {
    entries
        .iter()
        .map(|e| {
            let partition = match &e.partition {
                Some(Value::Object(m)) => m.clone(),
                _ => {
                    return Err(OffsetsError::BadRequest("The partition for a source connector offset must be a JSON object and may not be null or missing".to_owned()));
                }
            };
            let offset = match &e.offset {
                None | Some(Value::Null) => None,
                Some(Value::Object(m)) => Some(m.clone()),
                Some(_) => {
                    return Err(OffsetsError::BadRequest("The offset for a source connector must be a JSON object or null".to_owned()));
                }
            };
            Ok((partition, offset))
        })
        .collect()
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
pub fn parse_sink_offsets(
    entries: &[OffsetEntry],
) -> Result<Vec<(TopicPartition, Option<i64>)>, OffsetsError> {
    entries
        .iter()
        .map(|e| {
            let partition = match &e.partition {
                None | Some(Value::Null) => {
                    return Err(OffsetsError::BadRequest("The partition for a sink connector offset cannot be null or missing".to_owned()));
                }
                Some(Value::Object(m)) => m,
                Some(_) => {
                    return Err(OffsetsError::BadRequest("The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'".to_owned()));
                }
            };
            let (Some(topic), Some(part)) =
                (partition.get("kafka_topic"), partition.get("kafka_partition"))
            else {
                return Err(OffsetsError::BadRequest("The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'".to_owned()));
            };
            let Value::String(topic) = topic else {
                return Err(OffsetsError::BadRequest("Kafka topic names must be valid strings and may not be null".to_owned()));
            };
            if part.is_null() {
                return Err(OffsetsError::BadRequest("Kafka partitions must be valid numbers and may not be null".to_owned()));
            }
            let part = integer(part)
                .and_then(|p| i32::try_from(p).ok())
                .ok_or_else(|| {
                    OffsetsError::BadRequest(format!(
                        "Failed to parse the following Kafka partition value in the provided offsets: '{}'. Partition values for sink connectors need to be integers.",
                        text(part)
                    ))
                })?;
            let offset = match &e.offset {
                None | Some(Value::Null) => None,
                Some(Value::Object(m)) => {
                    let Some(o) = m.get("kafka_offset") else {
                        return Err(OffsetsError::BadRequest("The offset for a sink connector should either be null or contain the key 'kafka_offset'".to_owned()));
                    };
                    Some(integer(o).filter(|o| *o >= 0).ok_or_else(|| {
                        OffsetsError::BadRequest(format!(
                            "Failed to parse the following Kafka offset value in the provided offsets: '{}'. Offset values for sink connectors need to be integers.",
                            text(o)
                        ))
                    })?)
                }
                Some(_) => {
                    return Err(OffsetsError::BadRequest("The offset for a sink connector should either be null or contain the key 'kafka_offset'".to_owned()));
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

fn group_busy(name: &str, verb: &str, e: impl std::fmt::Display) -> OffsetsError {
    failed(format!(
        "Failed to {verb} consumer group offsets for connector {name} either because its tasks haven't stopped completely yet or the connector was resumed before the request to {verb} its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks. ({e})"
    ))
}

/// Deletes the whole consumer group; a group that does not exist is already reset.
async fn delete_group(
    config: &WorkerConfig,
    name: &str,
    group: &str,
    verb: &str,
) -> Result<(), OffsetsError> {
    let admin: AdminClient<DefaultClientContext> =
        admin_client(config)?.create().map_err(failed)?;
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
    config: &WorkerConfig,
    name: &str,
    group: &str,
    offsets: BTreeMap<(String, i32), i64>,
) -> Result<(), OffsetsError> {
    if offsets.is_empty() {
        return Ok(());
    }
    let mut cfg = admin_client(config)?;
    cfg.set("group.id", group)
        .set("enable.auto.commit", "false");
    let name = name.to_owned();
    tokio::task::spawn_blocking(move || {
        let consumer: BaseConsumer = cfg.create().map_err(failed)?;
        let mut tpl = TopicPartitionList::new();
        for ((t, p), o) in &offsets {
            tpl.add_partition_offset(t, *p, Offset::Offset(*o))
                .map_err(failed)?;
        }
        consumer
            .commit(&tpl, CommitMode::Sync)
            .map_err(|e: KafkaError| group_busy(&name, "alter", e))
    })
    .await
    .map_err(failed)?
}

/// PATCH for a sink: commits the given offsets; partitions with `null` lose their committed
/// offset (the group is deleted and the remaining offsets committed again, as the admin API of
/// our Kafka client has no per-partition offset deletion).
async fn alter_sink_group(
    worker: &WorkerConfig,
    name: &str,
    config: &ConfigMap,
    offsets: Vec<(TopicPartition, Option<i64>)>,
) -> Result<(), OffsetsError> {
    let group = sink_group(worker, name, config)?;
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
        for v in sink_offsets(worker, name, &scan).await? {
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
        delete_group(worker, name, &group, "alter").await?;
    }
    commit_group(worker, name, &group, target).await
}

async fn delete_sink_group(
    worker: &WorkerConfig,
    name: &str,
    config: &ConfigMap,
) -> Result<(), OffsetsError> {
    delete_group(worker, name, &sink_group(worker, name, config)?, "reset").await
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
        let err = |v: Value| parse_sink_offsets(&[entry(v)]).unwrap_err().to_string();
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
