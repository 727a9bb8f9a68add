//! Connector config validation, as `PUT /connector-plugins/{p}/config/validate` and create /
//! update do: pure, answered by any worker.

use connect_api::config::connector::{
    CONNECTOR_CLASS_CONFIG, EXACTLY_ONCE_SUPPORT_CONFIG, TRANSACTION_BOUNDARY_CONFIG,
};
use connect_api::config::connector::{with_plugin_versions, with_worker_converters};
use connect_api::config::{
    ConfigDef, ConfigValue, TypedValue, sink_connector_config_def, source_connector_config_def,
};
use connect_api::connector::{ConnectorTransactionBoundaries, ExactlyOnceSupport};
use connect_api::{ConfigInfos, ConfigMap, ConnectError, ConnectorInstance, PluginType};

use super::HerderHandle;
use crate::config::ClientScope;
use crate::config::clients::{ClientKind, connector_overrides};
use crate::config::{ExactlyOnceSourceSupport, WorkerConfig};

pub const EOS_NOT_ENABLED: &str = "This worker does not have exactly-once source support enabled.";
pub const EOS_NOT_IMPLEMENTED: &str = "The connector does not implement the API required for preflight validation of exactly-once source support. Please consult the documentation for the connector to determine whether it supports exactly-once semantics, and then consider reconfiguring the connector to use the value \"requested\" for this property (which will disable this preflight check and allow the connector to be created).";
pub const EOS_UNSUPPORTED: &str =
    "The connector does not support exactly-once semantics with the provided configuration.";
pub const BOUNDARIES_UNSUPPORTED: &str = "The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition.";

impl HerderHandle {
    /// Validates a connector config as `PUT /connector-plugins/{p}/config/validate` and
    /// create/update do: the framework's keys, the connector's own, the sink topic rules and
    /// the exactly-once preflight checks. An unknown plugin is an error (400).
    pub fn validate(&self, props: &ConfigMap) -> Result<(ConfigInfos, PluginType), ConnectError> {
        let class = props
            .get(CONNECTOR_CLASS_CONFIG)
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                ConnectError::config(format!(
                    "Connector config {} contains no connector type",
                    display_config(props)
                ))
            })?;
        let instance = self.registry.create_connector(class)?;
        let plugin_type = instance.plugin_type();
        // As Apache: the config is validated with its placeholders resolved. Unlike Apache, a
        // placeholder that finds no value is an error on its key, and the response shows the
        // placeholders, never what they resolve to.
        let raw = props;
        let providers = &self.config.config_providers;
        let resolved: ConfigMap = raw
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    providers.resolve(k, v).unwrap_or_else(|_| v.clone()),
                )
            })
            .collect();
        let props = &resolved;
        // Apache's `ConnectorConfig.enrich`: each transform's and predicate's keys, checked
        // with the rest (unknown class, missing or invalid key, undefined predicate).
        let framework_def = with_plugin_versions(
            with_worker_converters(
                match &instance {
                    ConnectorInstance::Source(_) => source_connector_config_def(),
                    ConnectorInstance::Sink(_) => sink_connector_config_def(),
                },
                &self.config.key_converter,
                &self.config.value_converter,
                &self.config.header_converter,
            ),
            Some(&instance.version()),
            Some(crate::version::CONNECT_API_VERSION),
        );
        let framework_def = connect_transforms::chain::enrich(framework_def, props);
        let framework = ConfigInfos::validate(class, &framework_def, props);
        let (own_def, own_values) = match &instance {
            // With the directories this worker lets connectors use (`file.connector.allowed.dirs`).
            ConnectorInstance::Source(c) => (
                c.config_def(),
                c.validate_with_files(props, &self.config.file_access),
            ),
            ConnectorInstance::Sink(c) => (
                c.config_def(),
                c.validate_with_files(props, &self.config.file_access),
            ),
        };
        let own_groups = own_def.groups();
        let own = ConfigInfos::generate(class, &own_def, &own_values, own_groups);
        // Apache 4.4: the connector's own converters validate its `<converter>.*` keys (after
        // the client overrides, as Apache merges them).
        let converters =
            super::validate_converters::connector_converter_infos(class, props, &framework);
        let mut infos = ConfigInfos::merge(
            class,
            [
                framework,
                own,
                client_override_infos(&self.config, class, props),
            ]
            .into_iter()
            .chain(converters),
        );
        // A class found in plugin.path that does not run here (a connector of another kind)
        // named as a converter, transformation or predicate: said on its key rather than left
        // as "not found".
        for (key, value) in props {
            let names_class = matches!(
                key.as_str(),
                "key.converter" | "value.converter" | "header.converter"
            ) || ((key.starts_with("transforms.")
                || key.starts_with("predicates."))
                && key.ends_with(".type"));
            if let Some(reason) = names_class.then(|| self.registry.refusal(value)).flatten() {
                infos.add_error(key, reason);
            }
        }
        match &instance {
            ConnectorInstance::Sink(_) => {
                for (key, message) in connect_api::config::sink_topic_errors(props) {
                    infos.add_error(key, message);
                }
            }
            ConnectorInstance::Source(c) => {
                let has_error = |infos: &ConfigInfos, key: &str| {
                    infos
                        .configs
                        .iter()
                        .filter_map(|ci| ci.value.as_ref())
                        .any(|v| v.name == key && !v.errors.is_empty())
                };
                // Both checks run only when the property itself passed basic validation.
                let eos = props
                    .get(EXACTLY_ONCE_SUPPORT_CONFIG)
                    .map(|s| s.trim().to_ascii_lowercase());
                if eos.as_deref() == Some("required")
                    && !has_error(&infos, EXACTLY_ONCE_SUPPORT_CONFIG)
                {
                    if self.config.standalone {
                        // Apache's standalone worker accepts the key and runs the connector
                        // at-least-once; a requirement it cannot meet is refused here.
                        infos.add_error(
                            EXACTLY_ONCE_SUPPORT_CONFIG,
                            crate::config::standalone::NO_EXACTLY_ONCE,
                        );
                    } else if self.config.exactly_once_source_support
                        != ExactlyOnceSourceSupport::Enabled
                    {
                        infos.add_error(EXACTLY_ONCE_SUPPORT_CONFIG, EOS_NOT_ENABLED);
                    }
                    match c.exactly_once_support(props) {
                        ExactlyOnceSupport::Supported => {}
                        ExactlyOnceSupport::Unsupported => {
                            infos.add_error(EXACTLY_ONCE_SUPPORT_CONFIG, EOS_UNSUPPORTED);
                        }
                        ExactlyOnceSupport::Unknown => {
                            infos.add_error(EXACTLY_ONCE_SUPPORT_CONFIG, EOS_NOT_IMPLEMENTED);
                        }
                    }
                }
                let boundary = props
                    .get(TRANSACTION_BOUNDARY_CONFIG)
                    .map(|s| s.trim().to_ascii_lowercase());
                if boundary.as_deref() == Some("connector")
                    && !has_error(&infos, TRANSACTION_BOUNDARY_CONFIG)
                    && c.can_define_transaction_boundaries(props)
                        != ConnectorTransactionBoundaries::Supported
                {
                    infos.add_error(TRANSACTION_BOUNDARY_CONFIG, BOUNDARIES_UNSUPPORTED);
                }
            }
        }
        // KIP-891 version requirements, against the one version of each plugin built in
        // (Apache's answers for a plugin with one installed version).
        let connector_class = self
            .registry
            .describe(class)
            .map_or_else(|_| class.to_owned(), |(d, _)| d.class.to_owned());
        for (key, message) in super::validate_versions::version_errors(
            props,
            &connector_class,
            &instance.version(),
            [
                &self.config.key_converter,
                &self.config.value_converter,
                &self.config.header_converter,
            ],
        )? {
            add_error_on(&mut infos, &key, raw.get(&key).cloned(), message);
        }
        // Our `auto.restart.*` keys, when the connector overrides the worker's.
        if let Err((key, reason)) = self.config.auto_restart.with_overrides(props) {
            let value = raw.get(key).cloned();
            let message = format!(
                "Invalid value {} for configuration {key}: {reason}",
                value.as_deref().unwrap_or_default()
            );
            add_error_on(&mut infos, key, value, message);
        }
        for (key, message) in providers.unresolved(raw) {
            add_error_on(&mut infos, &key, raw.get(&key).cloned(), message);
        }
        for info in infos.configs.iter_mut().filter_map(|c| c.value.as_mut()) {
            if let Some(value) = raw.get(&info.name).filter(|v| providers.has_placeholder(v)) {
                info.value = Some(value.clone());
            }
        }
        Ok((infos, plugin_type))
    }
}

/// An error on `key`, on its entry, or on a new entry without a definition (a key no
/// definition names, as Apache lists them).
fn add_error_on(infos: &mut ConfigInfos, key: &str, value: Option<String>, message: String) {
    if !infos.add_error(key, message.clone()) {
        infos.configs.push(connect_api::config::ConfigInfo {
            definition: None,
            value: Some(connect_api::config::ConfigValueInfo {
                name: key.to_owned(),
                value,
                recommended_values: Vec::new(),
                errors: vec![message],
                visible: true,
            }),
        });
        infos.error_count += 1;
    }
}

/// The `producer.override.*`, `consumer.override.*` and `admin.override.*` keys no client here
/// can use (see [`crate::config::clients`]), one entry with its error each; valid overrides
/// add nothing. Overrides the worker's `connector.client.config.override.policy` forbids are
/// errors on their keys too (Apache's message).
/// Security overrides are resolved over the worker's settings (the task's client would be).
fn client_override_infos(config: &WorkerConfig, class: &str, props: &ConfigMap) -> ConfigInfos {
    let values: Vec<ConfigValue> = [
        ClientKind::Producer,
        ClientKind::Consumer,
        ClientKind::Admin,
    ]
    .into_iter()
    .filter_map(|kind| {
        connector_overrides(kind, props)
            .and_then(|o| {
                config
                    .client_settings(ClientScope::Worker(kind))
                    .merged(&o)
                    .resolve()
                    .map(|_| ())
            })
            .err()
    })
    .flatten()
    .map(|e| {
        let mut v = ConfigValue::new(e.key.clone());
        v.value = Some(TypedValue::String(e.value.clone()));
        v.add_error(e.to_string());
        v
    })
    // What `connector.client.config.override.policy` forbids, on the connector's key.
    .chain(
        config
            .client_override_policy
            .violations(props)
            .into_iter()
            .map(|(key, message)| {
                let mut v = ConfigValue::new(key.clone());
                v.value = props.get(&key).cloned().map(TypedValue::String);
                v.add_error(message);
                v
            }),
    )
    .collect();
    ConfigInfos::generate(class, &ConfigDef::new(), &values, Vec::new())
}

/// `{k=v, ...}` as Java prints a map, with values of password-looking keys hidden.
fn display_config(props: &ConfigMap) -> String {
    let body: Vec<String> = props
        .iter()
        .map(|(k, v)| {
            let hidden = k.contains("password") || k.contains("secret");
            format!("{k}={}", if hidden { "[hidden]" } else { v.as_str() })
        })
        .collect();
    format!("{{{}}}", body.join(", "))
}
