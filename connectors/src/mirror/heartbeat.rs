//! `MirrorHeartbeatConnector` and its task: one record a second (by default) to the target's
//! `heartbeats` topic, Apache's `Heartbeat` format, so tools (and `MirrorClient`) see that a
//! replication flow is alive and how far apart the clusters are.

use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap, ConfigValue};
use connect_api::connector::{
    ConnectorContext, ExactlyOnceSupport, SourceConnector, SourceOffsets, SourceTask,
    SourceTaskContext,
};
use connect_api::data::{Schema, Value};
use connect_api::error::{ConnectError, Result};
use connect_api::kafka_clients::ClientKind;
use connect_api::record::{SourcePartition, SourceRecord, json_map};

use super::admin::Admin;
use super::config::*;
use super::formats::Heartbeat;
use super::policy::HEARTBEATS_TOPIC;
use super::typed::*;

pub const SOURCE_CLUSTER_ALIAS_KEY: &str = "sourceClusterAlias";
pub const TARGET_CLUSTER_ALIAS_KEY: &str = "targetClusterAlias";

/// Apache's `Heartbeat.connectPartition()` (keys in the Java `HashMap`'s order).
pub fn heartbeat_partition(source: &str, target: &str) -> SourcePartition {
    let mut m = SourcePartition::with_capacity(2);
    m.insert(SOURCE_CLUSTER_ALIAS_KEY.to_owned(), source.into());
    m.insert(TARGET_CLUSTER_ALIAS_KEY.to_owned(), target.into());
    m
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[derive(Default)]
pub struct MirrorHeartbeatConnector {
    config: Option<MirrorHeartbeatConfig>,
}

#[async_trait]
impl SourceConnector for MirrorHeartbeatConnector {
    type Task = MirrorHeartbeatTask;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        heartbeat_config_def()
    }

    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        validate(config, MirrorConnector::Heartbeat)
    }

    async fn start(&mut self, _ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        let c = MirrorHeartbeatConfig::parse(&config)?;
        let admin = Admin::new(
            &c.common.client(
                Cluster::Target,
                ClientKind::Admin,
                "heartbeats-target-admin",
            )?,
            &c.common.target_alias,
            c.common.admin_timeout,
        )?;
        admin
            .create_compacted_topic(HEARTBEATS_TOPIC, 1, c.replication_factor)
            .await?;
        self.config = Some(c);
        Ok(())
    }

    fn task_configs(&self, _max_tasks: usize) -> Result<Vec<ConfigMap>> {
        Ok(match &self.config {
            Some(c) if c.interval.is_some() => vec![c.common.props.clone()],
            _ => Vec::new(),
        })
    }

    async fn stop(&mut self) -> Result<()> {
        Ok(())
    }

    /// Apache's answer (the connector does not say): `exactly.once.support=required` is a
    /// validation error, `requested` runs it in transactions on an exactly-once worker.
    fn exactly_once_support(&self, _config: &ConfigMap) -> ExactlyOnceSupport {
        ExactlyOnceSupport::Unknown
    }

    async fn alter_offsets(&self, _config: &ConfigMap, offsets: &SourceOffsets) -> Result<bool> {
        for (partition, offset) in offsets {
            if offset.is_none() {
                continue;
            }
            for k in [SOURCE_CLUSTER_ALIAS_KEY, TARGET_CLUSTER_ALIAS_KEY] {
                if !partition.get(k).is_some_and(serde_json::Value::is_string) {
                    return Err(ConnectError::config(format!(
                        "Source partition {} must contain a string value for key '{k}'",
                        serde_json::Value::Object(partition.clone())
                    )));
                }
            }
        }
        Ok(true)
    }
}

#[derive(Default)]
pub struct MirrorHeartbeatTask {
    state: Option<(SourceTaskContext, MirrorHeartbeatConfig)>,
}

#[async_trait]
impl SourceTask for MirrorHeartbeatTask {
    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    async fn start(&mut self, ctx: SourceTaskContext, config: ConfigMap) -> Result<()> {
        self.state = Some((ctx, MirrorHeartbeatConfig::parse(&config)?));
        Ok(())
    }

    fn commit_record_reads_data(&self) -> bool {
        false
    }

    async fn poll(&mut self) -> Result<Vec<SourceRecord>> {
        let (ctx, c) = self
            .state
            .as_ref()
            .ok_or_else(|| ConnectError::fatal("MirrorHeartbeatTask polled before start"))?;
        let Some(interval) = c.interval else {
            ctx.sleep(std::time::Duration::from_secs(1)).await;
            return Ok(Vec::new());
        };
        if ctx.sleep(interval).await {
            return Ok(Vec::new());
        }
        let timestamp = now_ms();
        let h = Heartbeat {
            source_alias: c.common.source_alias.clone(),
            target_alias: c.common.target_alias.clone(),
            timestamp,
        };
        Ok(vec![
            SourceRecord::new(
                heartbeat_partition(&h.source_alias, &h.target_alias),
                json_map("offset", 0),
                HEARTBEATS_TOPIC,
                Some(Schema::bytes()),
                Value::Bytes(h.value()),
            )
            .with_key(Some(Schema::bytes()), Value::Bytes(h.key()))
            .with_kafka_partition(0)
            .with_timestamp(timestamp),
        ])
    }

    async fn stop(&mut self) -> Result<()> {
        Ok(())
    }
}
