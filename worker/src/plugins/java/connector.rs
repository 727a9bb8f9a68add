//! A Java connector as a [`DynSourceConnector`] or [`DynSinkConnector`]: each call runs in the
//! host.
//!
//! Stateless calls (config definition, validation, exactly-once questions) run on a fresh Java
//! instance of the class, as Apache's herder uses a cached, never-started instance; `start`
//! creates the instance that later `task_configs` and `stop` calls reach.

use std::sync::Arc;

use async_trait::async_trait;
use connect_api::connector::{
    ConnectorTransactionBoundaries, DynSinkConnector, DynSourceConnector, ExactlyOnceSupport,
    SinkTask, SourceOffsets, SourceTask,
};
use connect_api::record::TopicPartition;
use connect_api::{
    ConfigDef, ConfigMap, ConfigValue, ConnectError, ConnectorContext, FileAccess, PluginDesc,
    Result,
};
use serde_json::{Value, json};

use super::host::{Connection, Hooks, instance_id};
use super::sink::JavaSinkTask;
use super::task::JavaSourceTask;
use super::{JavaHost, config_json, convert};

/// A Java connector of either kind; the kind decides which trait it is registered as.
pub(super) struct JavaConnector {
    host: Arc<JavaHost>,
    class: &'static str,
    version: &'static str,
    task_class: &'static str,
    running: Option<(Arc<Connection>, String)>,
}

impl JavaConnector {
    pub(super) fn new(host: &Arc<JavaHost>, desc: &PluginDesc) -> Self {
        Self {
            host: Arc::clone(host),
            class: desc.class,
            version: desc.version,
            task_class: desc.task_class,
            running: None,
        }
    }

    fn what(&self, call: &str) -> String {
        format!("{call} of Java connector {}", self.class)
    }
}

impl JavaConnector {
    fn version(&self) -> String {
        self.version.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        self.host.config_def(self.class).unwrap_or_else(|e| {
            tracing::error!(class = self.class, error = %e, "failed to read a Java connector's config definition");
            ConfigDef::new()
        })
    }

    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        let what = self.what("start");
        let conn = self
            .host
            .connection()
            .await
            .map_err(|e| e.into_connect(&what))?;
        let instance = instance_id("connector");
        conn.set_hooks(&instance, Hooks::Connector(ctx));
        let started = conn
            .call(
                "connector.start",
                json!({"instance": instance, "class": self.class, "config": config_json(&config)}),
            )
            .await;
        self.running = Some((conn, instance));
        started.map(|_| ()).map_err(|e| e.into_connect(&what))
    }

    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
        let what = self.what("taskConfigs");
        let Some((conn, instance)) = &self.running else {
            return Err(ConnectError::fatal(format!("{what}: not started")));
        };
        let configs = conn
            .call_blocking(
                "connector.taskConfigs",
                json!({"instance": instance, "maxTasks": max_tasks}),
            )
            .map_err(|e| e.into_connect(&what))?;
        Ok(configs
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                c.as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                    .collect()
            })
            .collect())
    }

    async fn stop(&mut self) -> Result<()> {
        let Some((conn, instance)) = self.running.take() else {
            return Ok(());
        };
        let what = self.what("stop");
        let stopped = conn
            .call("connector.stop", json!({"instance": instance}))
            .await;
        conn.remove_hooks(&instance);
        stopped.map(|_| ()).map_err(|e| e.into_connect(&what))
    }

    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        let answer = self.host.connection_blocking().and_then(|c| {
            c.call_blocking(
                "validate",
                json!({"class": self.class, "config": config_json(config)}),
            )
        });
        match answer {
            Ok(a) => {
                let def = convert::config_def(&a["keys"]);
                convert::config_values(&a["values"], &def)
            }
            Err(e) => {
                let mut v =
                    ConfigValue::new(connect_api::config::connector::CONNECTOR_CLASS_CONFIG);
                v.value = Some(connect_api::config::TypedValue::Class(
                    self.class.to_owned(),
                ));
                v.add_error(format!("{}: {e}", self.what("validate")));
                vec![v]
            }
        }
    }

    /// The connector's `alterOffsets` (on a fresh instance, as Apache calls it): `true` when it
    /// acknowledges; an exception rejects the request.
    async fn alter_offsets(&self, config: &ConfigMap, offsets: Vec<Value>) -> Result<bool> {
        let what = self.what("alterOffsets");
        let conn = self
            .host
            .connection()
            .await
            .map_err(|e| e.into_connect(&what))?;
        let answer = conn
            .call(
                "alterOffsets",
                json!({"class": self.class, "config": config_json(config), "offsets": offsets}),
            )
            .await
            .map_err(|e| match e {
                super::host::HostError::Java { class, message, .. } => {
                    ConnectError::config(format!("{what} failed: {class}: {message}"))
                }
                other => other.into_connect(&what),
            })?;
        Ok(answer.as_bool().unwrap_or(false))
    }

    fn exactly_once_support(&self, config: &ConfigMap) -> ExactlyOnceSupport {
        let answer = self.host.connection_blocking().and_then(|c| {
            c.call_blocking(
                "exactlyOnceSupport",
                json!({"class": self.class, "config": config_json(config)}),
            )
        });
        match answer.as_ref().map(|a| a.as_str()) {
            Ok(Some("SUPPORTED")) => ExactlyOnceSupport::Supported,
            Ok(Some("UNSUPPORTED")) => ExactlyOnceSupport::Unsupported,
            Ok(_) => ExactlyOnceSupport::Unknown,
            Err(e) => {
                tracing::error!(class = self.class, error = %e, "exactlyOnceSupport of a Java connector failed");
                ExactlyOnceSupport::Unknown
            }
        }
    }

    fn can_define_transaction_boundaries(
        &self,
        config: &ConfigMap,
    ) -> ConnectorTransactionBoundaries {
        let answer = self.host.connection_blocking().and_then(|c| {
            c.call_blocking(
                "canDefineTransactionBoundaries",
                json!({"class": self.class, "config": config_json(config)}),
            )
        });
        match answer.as_ref().map(|a| a.as_str()) {
            Ok(Some("SUPPORTED")) => ConnectorTransactionBoundaries::Supported,
            _ => ConnectorTransactionBoundaries::Unsupported,
        }
    }
}

#[async_trait]
impl DynSourceConnector for JavaConnector {
    fn version(&self) -> String {
        JavaConnector::version(self)
    }
    fn config_def(&self) -> ConfigDef {
        JavaConnector::config_def(self)
    }
    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        JavaConnector::start(self, ctx, config).await
    }
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
        JavaConnector::task_configs(self, max_tasks)
    }
    async fn stop(&mut self) -> Result<()> {
        JavaConnector::stop(self).await
    }
    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        JavaConnector::validate(self, config)
    }
    fn validate_with_files(&self, config: &ConfigMap, _files: &FileAccess) -> Vec<ConfigValue> {
        JavaConnector::validate(self, config)
    }
    fn exactly_once_support(&self, config: &ConfigMap) -> ExactlyOnceSupport {
        JavaConnector::exactly_once_support(self, config)
    }
    fn can_define_transaction_boundaries(
        &self,
        config: &ConfigMap,
    ) -> ConnectorTransactionBoundaries {
        JavaConnector::can_define_transaction_boundaries(self, config)
    }
    async fn alter_offsets(&self, config: &ConfigMap, offsets: &SourceOffsets) -> Result<bool> {
        let offsets = offsets
            .iter()
            .map(|(p, o)| {
                json!({"partition": p, "offset": o.as_ref().map_or(Value::Null, |o| Value::Object(o.clone()))})
            })
            .collect();
        self.alter_offsets(config, offsets).await
    }
    fn create_task(&self) -> Box<dyn SourceTask> {
        Box::new(JavaSourceTask::new(
            Arc::clone(&self.host),
            self.task_class,
            self.version,
        ))
    }
}

#[async_trait]
impl DynSinkConnector for JavaConnector {
    fn version(&self) -> String {
        JavaConnector::version(self)
    }
    fn config_def(&self) -> ConfigDef {
        JavaConnector::config_def(self)
    }
    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        JavaConnector::start(self, ctx, config).await
    }
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
        JavaConnector::task_configs(self, max_tasks)
    }
    async fn stop(&mut self) -> Result<()> {
        JavaConnector::stop(self).await
    }
    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        JavaConnector::validate(self, config)
    }
    fn validate_with_files(&self, config: &ConfigMap, _files: &FileAccess) -> Vec<ConfigValue> {
        JavaConnector::validate(self, config)
    }
    async fn alter_offsets(
        &self,
        config: &ConfigMap,
        offsets: &[(TopicPartition, Option<i64>)],
    ) -> Result<bool> {
        let offsets = offsets
            .iter()
            .map(|(tp, o)| json!({"topic": tp.topic, "partition": tp.partition, "offset": o}))
            .collect();
        self.alter_offsets(config, offsets).await
    }
    fn create_task(&self) -> Box<dyn SinkTask> {
        Box::new(JavaSinkTask::new(
            Arc::clone(&self.host),
            self.task_class,
            self.version,
        ))
    }
}
