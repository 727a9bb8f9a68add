//! Object-safe twins of the connector traits. The typed traits carry an associated task type
//! (not object-safe); these hide it and create tasks as trait objects instead. Every typed
//! connector implements its twin through the blanket impls below.

use async_trait::async_trait;

use super::context::ConnectorContext;
use super::sink::{SinkConnector, SinkTask};
use super::source::{
    ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceConnector, SourceOffsets, SourceTask,
};
use crate::config::{ConfigDef, ConfigMap, ConfigValue};
use crate::error::Result;
use crate::file_access::FileAccess;
use crate::record::TopicPartition;

#[async_trait]
pub trait DynSourceConnector: Send + Sync {
    fn version(&self) -> String;
    fn config_def(&self) -> ConfigDef;
    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()>;
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>>;
    async fn stop(&mut self) -> Result<()>;
    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue>;
    fn validate_with_files(&self, config: &ConfigMap, files: &FileAccess) -> Vec<ConfigValue>;
    fn exactly_once_support(&self, config: &ConfigMap) -> ExactlyOnceSupport;
    fn can_define_transaction_boundaries(
        &self,
        config: &ConfigMap,
    ) -> ConnectorTransactionBoundaries;
    async fn alter_offsets(&self, config: &ConfigMap, offsets: &SourceOffsets) -> Result<bool>;
    /// A fresh task of this connector's task type.
    fn create_task(&self) -> Box<dyn SourceTask>;
}

#[async_trait]
impl<C: SourceConnector> DynSourceConnector for C {
    fn version(&self) -> String {
        SourceConnector::version(self)
    }
    fn config_def(&self) -> ConfigDef {
        SourceConnector::config_def(self)
    }
    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        SourceConnector::start(self, ctx, config).await
    }
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
        SourceConnector::task_configs(self, max_tasks)
    }
    async fn stop(&mut self) -> Result<()> {
        SourceConnector::stop(self).await
    }
    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        SourceConnector::validate(self, config)
    }
    fn validate_with_files(&self, config: &ConfigMap, files: &FileAccess) -> Vec<ConfigValue> {
        SourceConnector::validate_with_files(self, config, files)
    }
    fn exactly_once_support(&self, config: &ConfigMap) -> ExactlyOnceSupport {
        SourceConnector::exactly_once_support(self, config)
    }
    fn can_define_transaction_boundaries(
        &self,
        config: &ConfigMap,
    ) -> ConnectorTransactionBoundaries {
        SourceConnector::can_define_transaction_boundaries(self, config)
    }
    async fn alter_offsets(&self, config: &ConfigMap, offsets: &SourceOffsets) -> Result<bool> {
        SourceConnector::alter_offsets(self, config, offsets).await
    }
    fn create_task(&self) -> Box<dyn SourceTask> {
        Box::new(C::Task::default())
    }
}

#[async_trait]
pub trait DynSinkConnector: Send + Sync {
    fn version(&self) -> String;
    fn config_def(&self) -> ConfigDef;
    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()>;
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>>;
    async fn stop(&mut self) -> Result<()>;
    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue>;
    fn validate_with_files(&self, config: &ConfigMap, files: &FileAccess) -> Vec<ConfigValue>;
    async fn alter_offsets(
        &self,
        config: &ConfigMap,
        offsets: &[(TopicPartition, Option<i64>)],
    ) -> Result<bool>;
    fn create_task(&self) -> Box<dyn SinkTask>;
}

#[async_trait]
impl<C: SinkConnector> DynSinkConnector for C {
    fn version(&self) -> String {
        SinkConnector::version(self)
    }
    fn config_def(&self) -> ConfigDef {
        SinkConnector::config_def(self)
    }
    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        SinkConnector::start(self, ctx, config).await
    }
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
        SinkConnector::task_configs(self, max_tasks)
    }
    async fn stop(&mut self) -> Result<()> {
        SinkConnector::stop(self).await
    }
    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        SinkConnector::validate(self, config)
    }
    fn validate_with_files(&self, config: &ConfigMap, files: &FileAccess) -> Vec<ConfigValue> {
        SinkConnector::validate_with_files(self, config, files)
    }
    async fn alter_offsets(
        &self,
        config: &ConfigMap,
        offsets: &[(TopicPartition, Option<i64>)],
    ) -> Result<bool> {
        SinkConnector::alter_offsets(self, config, offsets).await
    }
    fn create_task(&self) -> Box<dyn SinkTask> {
        Box::new(C::Task::default())
    }
}
