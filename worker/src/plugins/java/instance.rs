//! One converter, header converter, transformation or predicate of `plugin.path`, configured
//! in the host and called by name there.
//!
//! # Guarantees
//!
//! - The instance is configured once (`plugin.new`, the Java `configure`) and closed in the
//!   host when it is dropped here (`plugin.close`).
//! - A call that finds the JVM gone starts a new one (as a restarted task would), configures
//!   the instance there again with the same settings, and is made once more: a dead JVM does not
//!   turn every later record into a failed one.

use std::sync::{Arc, Mutex};

use connect_api::{ConfigDef, ConfigMap, PluginType};
use serde_json::{Value, json};

use super::host::{Answer, Connection, HostError, instance_id};
use super::{JavaHost, config_json};

pub(super) struct PluginInstance {
    host: Arc<JavaHost>,
    class: String,
    kind: PluginType,
    config: Value,
    is_key: bool,
    /// The JVM the instance lives in and its name there.
    current: Mutex<(Arc<Connection>, String)>,
}

impl PluginInstance {
    /// Instantiates `class` in the host and calls its `configure`.
    pub(super) fn create(
        host: &Arc<JavaHost>,
        class: &str,
        kind: PluginType,
        config: &ConfigMap,
        is_key: bool,
    ) -> Result<Self, HostError> {
        let config = config_json(config);
        let (conn, id) = Self::configure(host, class, kind, &config, is_key)?;
        Ok(Self {
            host: Arc::clone(host),
            class: class.to_owned(),
            kind,
            config,
            is_key,
            current: Mutex::new((conn, id)),
        })
    }

    fn configure(
        host: &JavaHost,
        class: &str,
        kind: PluginType,
        config: &Value,
        is_key: bool,
    ) -> Result<(Arc<Connection>, String), HostError> {
        let conn = host.connection_blocking()?;
        let id = instance_id(kind.as_str());
        conn.call_blocking(
            "plugin.new",
            json!({"instance": id, "class": class, "kind": kind.as_str(), "config": config,
                   "isKey": is_key}),
        )?;
        Ok((conn, id))
    }

    /// Calls `op` on the instance (`body` gets its name), once more in a new JVM if the JVM
    /// it lived in is gone.
    pub(super) fn call(&self, op: &str, mut body: Value) -> Result<Value, HostError> {
        let (conn, id) = self
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        body["instance"] = json!(id);
        match conn.call_blocking(op, body.clone()) {
            Err(HostError::Died(why)) => {
                tracing::warn!(class = %self.class, kind = %self.kind, reason = %why,
                    "the Java plugin host of a {} is gone; configuring it again in a new one", self.kind);
                let (conn, id) = Self::configure(
                    &self.host,
                    &self.class,
                    self.kind,
                    &self.config,
                    self.is_key,
                )?;
                body["instance"] = json!(id);
                *self.current.lock().unwrap_or_else(|e| e.into_inner()) = (Arc::clone(&conn), id);
                conn.call_blocking(op, body)
            }
            other => other,
        }
    }
}

impl PluginInstance {
    /// [`Self::call`] for a batch of records in the binary form: `build` makes the request and
    /// its attachment for the instance name it is given, so a caller keeping per-instance state
    /// (the schemas sent) starts it again when a new JVM got a new instance. An error of `build`
    /// is returned as it is (outer `Err`); the call's own as a [`HostError`].
    pub(super) fn call_batch(
        &self,
        op: &str,
        build: &mut dyn FnMut(&str) -> connect_api::Result<(Value, Vec<u8>)>,
    ) -> connect_api::Result<Result<Answer, HostError>> {
        let (conn, id) = self
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let (mut body, attachment) = build(&id)?;
        body["instance"] = json!(id);
        match conn.call_blocking_with(op, body, &attachment) {
            Err(HostError::Died(why)) => {
                tracing::warn!(class = %self.class, kind = %self.kind, reason = %why,
                    "the Java plugin host of a {} is gone; configuring it again in a new one", self.kind);
                let (conn, id) = match Self::configure(
                    &self.host,
                    &self.class,
                    self.kind,
                    &self.config,
                    self.is_key,
                ) {
                    Ok(c) => c,
                    Err(e) => return Ok(Err(e)),
                };
                *self.current.lock().unwrap_or_else(|e| e.into_inner()) =
                    (Arc::clone(&conn), id.clone());
                let (mut body, attachment) = build(&id)?;
                body["instance"] = json!(id);
                Ok(conn.call_blocking_with(op, body, &attachment))
            }
            other => Ok(other),
        }
    }
}

impl Drop for PluginInstance {
    fn drop(&mut self) {
        let (conn, id) = &*self.current.lock().unwrap_or_else(|e| e.into_inner());
        if conn.dead().is_none()
            && let Err(e) = conn.notify("plugin.close", json!({"instance": id}))
        {
            tracing::debug!(class = %self.class, error = %e, "could not close a Java plugin instance");
        }
    }
}

/// The class's `config()` for a trait method that cannot fail: an error is logged and the
/// definition is empty (validation of the type key reports the error itself).
pub(super) fn config_def_or_log(host: &JavaHost, class: &str, kind: PluginType) -> ConfigDef {
    host.plugin_config_def(class, kind).unwrap_or_else(|e| {
        tracing::error!(class, kind = %kind, error = %e, "could not get the config() of a Java plugin");
        ConfigDef::new()
    })
}
