//! Source offsets: [`OffsetBackingStore`] over one offsets topic (Java `KafkaOffsetBackingStore`)
//! or the standalone worker's offsets file ([`OffsetBackingStore::from_file`], Java
//! `FileOffsetBackingStore`, the same keys and values) and [`ConnectorOffsetBackingStore`], a
//! connector-specific topic over the worker's global one (Java `ConnectorOffsetBackingStore`,
//! spec §2.3/§3.7). Sink offsets are consumer-group offsets
//! and live elsewhere.
//!
//! Record format: key `["<connector>",{<partition>}]`, value `{<offset>}` or a tombstone, both
//! written byte for byte as Java's schemaless `JsonConverter` would ([`super::json`]).
//!
//! # Guarantees
//!
//! - Lookups are by exact key bytes, like Java: the partition map's key order is kept as given
//!   (use [`java_hash_map_order`] to match a Java connector that builds its partition with
//!   `new HashMap<>()`).
//! - `get` and `all_for_connector` read the topic(s) to the end first, so an offset acknowledged
//!   before the call is returned.
//! - The combined store reads the connector topic first and falls back to the global topic for
//!   partitions the connector topic does not have (KIP-618's documented intent; see the spec's
//!   **[quirk]** on how Java differs).
//! - Writes with tombstones follow KAFKA-15018: tombstones to the secondary first, then all to the
//!   primary, then non-tombstones to the secondary, so a reset offset cannot resurface from the
//!   global topic.
//!
//! # Errors
//!
//! Non-primitive offset or partition values fail with [`StorageError::Data`] and Connect's
//! message, before anything is written. Reads and writes time out with
//! [`StorageError::Timeout`]; a failed secondary copy of non-tombstones is only logged.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::ClientConfig;
use serde_json::{Map, Value};

use super::json::to_java_json;
use super::local_log::LocalLog;
use super::log::{
    ConsumedRecord, InternalLog, KafkaBasedLog, LogConfig, RawRecord, RecordCallback,
};
use super::topics::{InternalTopic, TopicSettings, ensure_topic};
use super::{StorageError, with_timeout};

/// A source partition, e.g. `{"filename":"a.txt"}`; key order is significant (see module docs).
pub type PartitionMap = Map<String, Value>;
/// A source offset, e.g. `{"position":1234}`.
pub type OffsetMap = Map<String, Value>;

/// The offsets-topic key bytes for `(connector, partition)`.
pub fn offset_key(connector: &str, partition: &PartitionMap) -> Vec<u8> {
    to_java_json(&Value::Array(vec![
        Value::String(connector.to_owned()),
        Value::Object(partition.clone()),
    ]))
}

/// The offsets-topic value bytes; `None` is a tombstone.
pub fn offset_value(offset: Option<&OffsetMap>) -> Option<Vec<u8>> {
    offset.map(|o| to_java_json(&Value::Object(o.clone())))
}

/// Parses a key written by any worker; `None` for keys Connect would skip (not `[string, object]`).
pub fn parse_offset_key(key: &[u8]) -> Option<(String, PartitionMap)> {
    match serde_json::from_slice::<Value>(key).ok()? {
        Value::Array(mut items) if items.len() == 2 => {
            let partition = match items.pop()? {
                Value::Object(m) => m,
                _ => return None,
            };
            match items.pop()? {
                Value::String(c) => Some((c, partition)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Parses a value; `None` for tombstones and values that are not JSON objects.
pub fn parse_offset_value(value: Option<&[u8]>) -> Option<OffsetMap> {
    match serde_json::from_slice::<Value>(value?).ok()? {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// Java `OffsetUtils.validateFormat`: values must be primitives (no nested maps or arrays).
pub fn validate_format(map: &Map<String, Value>) -> Result<(), StorageError> {
    for (k, v) in map {
        let kind = match v {
            Value::Array(_) => "ARRAY",
            Value::Object(_) => "MAP",
            _ => continue,
        };
        return Err(StorageError::Data(format!(
            "Offsets may only contain primitive types as values, but field {k} contains {kind}"
        )));
    }
    Ok(())
}

/// Reorders `map` into the iteration order of a Java `HashMap<String, _>` filled by `put`s in
/// the given order (default capacity 16, load factor 0.75; keys that share a bucket keep
/// insertion order). A Java connector building partitions that way writes keys in this order.
pub fn java_hash_map_order(map: &Map<String, Value>) -> Map<String, Value> {
    let entries: Vec<(&String, &Value)> = map.iter().collect();
    let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
    connect_api::java_order::java_hash_map_order(&keys, None)
        .into_iter()
        .map(|i| (entries[i].0.clone(), entries[i].1.clone()))
        .collect()
}

/// Records to write offsets `entries` of `connector` (for a task's transactional producer).
pub fn offset_records(
    connector: &str,
    entries: &[(PartitionMap, Option<OffsetMap>)],
) -> Result<Vec<RawRecord>, StorageError> {
    entries
        .iter()
        .map(|(p, o)| {
            validate_format(p)?;
            if let Some(o) = o {
                validate_format(o)?;
            }
            Ok((offset_key(connector, p), offset_value(o.as_ref())))
        })
        .collect()
}

/// What one offsets store needs.
#[derive(Clone)]
pub struct OffsetStoreSettings {
    /// Topic name and creation settings (the worker's `offset.storage.*` for per-connector topics).
    pub topic: TopicSettings,
    pub client: ClientConfig,
    /// Connect uses `<group.id>-offsets` for the worker store.
    pub client_id: String,
    /// `read_committed` in exactly-once mode.
    pub read_committed: bool,
}

/// How long `get`/`set`/`all_for_connector` may take (Java bounds these by the flush timeout or
/// the REST timeout; callers that need less wrap the call).
pub const OFFSET_IO_TIMEOUT: Duration = Duration::from_secs(30);

type RawOffsets = Arc<Mutex<HashMap<Vec<u8>, Vec<u8>>>>;

/// The store's cache and the log callback that keeps it (latest value per key).
fn cache() -> (RawOffsets, RecordCallback) {
    let data: RawOffsets = Arc::default();
    let cb_data = data.clone();
    let on_record: RecordCallback = Box::new(move |r: &ConsumedRecord| {
        let Some(key) = &r.key else { return };
        let mut d = cb_data.lock().expect("offsets lock");
        match &r.value {
            Some(v) => {
                d.insert(key.clone(), v.clone());
            }
            None => {
                d.remove(key);
            }
        }
    });
    (data, on_record)
}

/// One offsets topic (or the standalone worker's offsets file), fully cached in memory by key
/// bytes.
pub struct OffsetBackingStore {
    log: InternalLog,
    data: RawOffsets,
    topic: String,
}

impl std::fmt::Debug for OffsetBackingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffsetBackingStore")
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

impl OffsetBackingStore {
    /// Creates/validates the topic and reads it to the end.
    pub async fn start(settings: OffsetStoreSettings) -> Result<Self, StorageError> {
        ensure_topic(&settings.client, InternalTopic::Offsets, &settings.topic).await?;
        let (data, on_record) = cache();
        let log = KafkaBasedLog::start(
            LogConfig {
                topic: settings.topic.name.clone(),
                client: settings.client.clone(),
                client_id: settings.client_id.clone(),
                read_committed: settings.read_committed,
            },
            on_record,
        )
        .await?;
        Ok(Self {
            log: InternalLog::Kafka(log),
            data,
            topic: settings.topic.name,
        })
    }

    /// The standalone worker's store: `offset.storage.file.filename` in Apache's format
    /// (see [`super::local_log`]), read now; a corrupt file is an error naming it.
    pub fn from_file(path: &std::path::Path) -> Result<Self, StorageError> {
        let (data, on_record) = cache();
        let log = LocalLog::with_file(path, on_record)?;
        Ok(Self {
            topic: log.name().to_owned(),
            log: InternalLog::Local(log),
            data,
        })
    }

    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// Reads the topic to the end within `timeout`.
    pub async fn read_to_end(&self, timeout: Duration) -> Result<(), StorageError> {
        with_timeout(
            timeout,
            &format!("reading to the end of offsets topic {}", self.topic),
            self.log.read_to_end(),
        )
        .await
    }

    fn cached(&self, connector: &str, partition: &PartitionMap) -> Option<OffsetMap> {
        let key = offset_key(connector, partition);
        let d = self.data.lock().expect("offsets lock");
        parse_offset_value(d.get(&key).map(Vec::as_slice))
    }

    /// Offsets of `partitions` (in request order; `None` = unknown), after reading to the end.
    pub async fn get(
        &self,
        connector: &str,
        partitions: &[PartitionMap],
    ) -> Result<Vec<(PartitionMap, Option<OffsetMap>)>, StorageError> {
        self.read_to_end(OFFSET_IO_TIMEOUT).await?;
        Ok(partitions
            .iter()
            .map(|p| (p.clone(), self.cached(connector, p)))
            .collect())
    }

    /// Writes offsets (`None` = tombstone) and resolves when all are acknowledged.
    pub async fn set(
        &self,
        connector: &str,
        entries: &[(PartitionMap, Option<OffsetMap>)],
    ) -> Result<(), StorageError> {
        let records = offset_records(connector, entries)?;
        with_timeout(
            OFFSET_IO_TIMEOUT,
            &format!("writing offsets for connector \"{connector}\""),
            self.log.send_batch(&records),
        )
        .await
        .map(|_| ())
    }

    /// Every partition with an offset for `connector`, after reading to the end; keyed by the
    /// raw key bytes so the combined store can merge exactly.
    async fn all_raw(
        &self,
        connector: &str,
    ) -> Result<Vec<(Vec<u8>, PartitionMap, OffsetMap)>, StorageError> {
        self.read_to_end(OFFSET_IO_TIMEOUT).await?;
        let d = self.data.lock().expect("offsets lock");
        let mut out = Vec::new();
        for (k, v) in d.iter() {
            let Some((c, partition)) = parse_offset_key(k) else {
                continue;
            };
            if c != connector {
                continue;
            }
            if let Some(o) = parse_offset_value(Some(v)) {
                out.push((k.clone(), partition, o));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Every partition with an offset for `connector` (GET /connectors/{c}/offsets).
    pub async fn all_for_connector(
        &self,
        connector: &str,
    ) -> Result<Vec<(PartitionMap, OffsetMap)>, StorageError> {
        Ok(self
            .all_raw(connector)
            .await?
            .into_iter()
            .map(|(_, p, o)| (p, o))
            .collect())
    }

    pub async fn stop(&self) {
        self.log.stop().await;
    }
}

/// A connector's view of offsets: its own topic (primary) over the worker's global topic
/// (secondary), or just one of them. See the module docs.
#[derive(Debug, Clone)]
pub struct ConnectorOffsetBackingStore {
    primary: Arc<OffsetBackingStore>,
    secondary: Option<Arc<OffsetBackingStore>>,
}

impl ConnectorOffsetBackingStore {
    /// Only the worker's global store (no `offsets.storage.topic`, non-EOS).
    pub fn worker_only(global: Arc<OffsetBackingStore>) -> Self {
        Self {
            primary: global,
            secondary: None,
        }
    }

    /// A connector-specific store, with the global store as fallback unless it is the same
    /// topic on the same cluster (pass `None` then).
    pub fn with_connector_store(
        connector_store: Arc<OffsetBackingStore>,
        global: Option<Arc<OffsetBackingStore>>,
    ) -> Self {
        Self {
            primary: connector_store,
            secondary: global,
        }
    }

    /// The store offsets are written to first (an EOS task writes here transactionally).
    pub fn primary(&self) -> &Arc<OffsetBackingStore> {
        &self.primary
    }

    pub fn secondary(&self) -> Option<&Arc<OffsetBackingStore>> {
        self.secondary.as_ref()
    }

    /// Connector-topic value where present, else the global one.
    pub async fn get(
        &self,
        connector: &str,
        partitions: &[PartitionMap],
    ) -> Result<Vec<(PartitionMap, Option<OffsetMap>)>, StorageError> {
        let mut out = self.primary.get(connector, partitions).await?;
        if let Some(secondary) = &self.secondary
            && out.iter().any(|(_, o)| o.is_none())
        {
            let fallback = secondary.get(connector, partitions).await?;
            for ((_, o), (_, f)) in out.iter_mut().zip(fallback) {
                if o.is_none() {
                    *o = f;
                }
            }
        }
        Ok(out)
    }

    /// Writes offsets; see the module docs for the order with tombstones.
    pub async fn set(
        &self,
        connector: &str,
        entries: &[(PartitionMap, Option<OffsetMap>)],
    ) -> Result<(), StorageError> {
        // Validate up front so nothing is half-written.
        offset_records(connector, entries)?;
        let Some(secondary) = &self.secondary else {
            return self.primary.set(connector, entries).await;
        };
        let tombstones: Vec<_> = entries
            .iter()
            .filter(|(_, o)| o.is_none())
            .cloned()
            .collect();
        let values: Vec<_> = entries
            .iter()
            .filter(|(_, o)| o.is_some())
            .cloned()
            .collect();
        if !tombstones.is_empty() {
            secondary.set(connector, &tombstones).await?;
        }
        self.primary.set(connector, entries).await?;
        if !values.is_empty()
            && let Err(e) = secondary.set(connector, &values).await
        {
            tracing::warn!(connector, error = %e, topic = secondary.topic(), "failed to copy offsets to the worker's global offsets topic");
        }
        Ok(())
    }

    /// Every partition with an offset, connector topic first, global topic for the rest.
    pub async fn all_for_connector(
        &self,
        connector: &str,
    ) -> Result<Vec<(PartitionMap, OffsetMap)>, StorageError> {
        let mut merged: BTreeMap<Vec<u8>, (PartitionMap, OffsetMap)> = BTreeMap::new();
        if let Some(secondary) = &self.secondary {
            for (k, p, o) in secondary.all_raw(connector).await? {
                merged.insert(k, (p, o));
            }
        }
        for (k, p, o) in self.primary.all_raw(connector).await? {
            merged.insert(k, (p, o));
        }
        Ok(merged.into_values().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn keys_are_byte_exact() {
        assert_eq!(
            offset_key("conn", &map(json!({"id": 0}))),
            br#"["conn",{"id":0}]"#
        );
        assert_eq!(
            offset_key("local-file-source", &map(json!({"filename": "test.txt"}))),
            br#"["local-file-source",{"filename":"test.txt"}]"#
        );
        // Order is kept as given: these are different offsets, as in Java.
        let ab: Map<String, Value> = serde_json::from_str(r#"{"a":1,"b":2}"#).unwrap();
        let ba: Map<String, Value> = serde_json::from_str(r#"{"b":2,"a":1}"#).unwrap();
        assert_eq!(offset_key("c", &ab), br#"["c",{"a":1,"b":2}]"#);
        assert_eq!(offset_key("c", &ba), br#"["c",{"b":2,"a":1}]"#);
    }

    #[test]
    fn values_are_byte_exact() {
        assert_eq!(
            offset_value(Some(&map(json!({"position": 1234})))).unwrap(),
            br#"{"position":1234}"#
        );
        assert_eq!(offset_value(None), None);
    }

    #[test]
    fn malformed_keys_are_skipped() {
        assert_eq!(parse_offset_key(br#"["c",null]"#), None);
        assert_eq!(parse_offset_key(br#"["c"]"#), None);
        assert_eq!(parse_offset_key(br#"{"c":1}"#), None);
        assert_eq!(
            parse_offset_key(br#"["c",{"x":"y"}]"#),
            Some(("c".into(), map(json!({"x": "y"}))))
        );
    }

    #[test]
    fn nested_values_are_rejected_with_connects_message() {
        let err = validate_format(&map(json!({"a": {"b": 1}}))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Offsets may only contain primitive types as values, but field a contains MAP"
        );
        assert!(offset_records("c", &[(map(json!({"p": [1]})), None)]).is_err());
    }

    /// Golden bytes produced by Kafka 4.4's `JsonConverter` (schemas disabled) on Java 17 for
    /// `Arrays.asList("conn", hashMap)` where `hashMap` is a `new HashMap<>()` filled with `put`s
    /// in the listed order.
    #[test]
    fn java_hash_map_order_matches_java() {
        let m: Map<String, Value> =
            serde_json::from_str(r#"{"topic":"t","partition":0,"cluster":"a"}"#).unwrap();
        assert_eq!(
            offset_key("conn", &java_hash_map_order(&m)),
            br#"["conn",{"cluster":"a","partition":0,"topic":"t"}]"#
        );
        let keys = [
            "filename",
            "position",
            "offset",
            "id",
            "kafka_topic",
            "kafka_partition",
            "source",
            "table",
            "schema",
            "lsn",
            "a",
            "b",
            "zzzzzzzzzzzz",
            "name",
        ];
        let m: Map<String, Value> = keys.iter().map(|k| ((*k).to_owned(), json!(1))).collect();
        assert_eq!(
            String::from_utf8(offset_key("conn", &java_hash_map_order(&m))).unwrap(),
            r#"["conn",{"schema":1,"a":1,"b":1,"offset":1,"kafka_partition":1,"lsn":1,"kafka_topic":1,"zzzzzzzzzzzz":1,"source":1,"filename":1,"name":1,"position":1,"id":1,"table":1}]"#
        );
    }

    #[test]
    fn values_match_jsonconverter_golden_bytes() {
        let o: OffsetMap = serde_json::from_str(
            r#"{"d1":1.0,"d2":0.0001,"d3":1.2345e10,"d4":123.456,"s":"a\"b\\c\n\u001f\u00e9/","n":null,"b":true,"l":1234567890123}"#,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(offset_value(Some(&o)).unwrap()).unwrap(),
            "{\"d1\":1.0,\"d2\":1.0E-4,\"d3\":1.2345E10,\"d4\":123.456,\"s\":\"a\\\"b\\\\c\\n\\u001F\u{e9}/\",\"n\":null,\"b\":true,\"l\":1234567890123}"
        );
    }

    fn primitive() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1e12f64..1e12).prop_map(|f| json!(f)),
            "\\PC{0,10}".prop_map(Value::String),
        ]
    }

    proptest! {
        #[test]
        fn offsets_round_trip(
            connector in "\\PC{1,12}",
            partition in proptest::collection::vec(("[a-z\u{0}-\u{1f}\"]{1,6}", primitive()), 0..4),
            offset in proptest::collection::vec(("[a-z]{1,6}", primitive()), 0..4),
        ) {
            let p: PartitionMap = partition.into_iter().collect();
            let o: OffsetMap = offset.into_iter().collect();
            let key = offset_key(&connector, &p);
            let (c2, p2) = parse_offset_key(&key).unwrap();
            prop_assert_eq!(&c2, &connector);
            prop_assert_eq!(offset_key(&c2, &p2), key.clone(), "re-serialization is stable");
            prop_assert_eq!(p2.keys().collect::<Vec<_>>(), p.keys().collect::<Vec<_>>());
            let v = offset_value(Some(&o)).unwrap();
            let o2 = parse_offset_value(Some(&v)).unwrap();
            prop_assert_eq!(offset_value(Some(&o2)).unwrap(), v);
        }
    }
}
