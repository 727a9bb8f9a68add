//! The framework's connector config keys, shared by every connector (Java's `ConnectorConfig`,
//! `SourceConnectorConfig`, `SinkConnectorConfig`): names, defaults, validators and groups.

use std::sync::Arc;

use super::def::{ConfigDef, ConfigKey};
use super::types::{ConfigType, Importance, TypedValue, Width};
use super::validators::{
    ParsedValues, Recommender, between, composite, lambda, non_empty_string,
    non_empty_string_without_control_chars, null_or, one_of, one_of_case_insensitive,
};
use crate::converter;
use crate::error::ConnectError;

pub const COMMON_GROUP: &str = "Common";
pub const TRANSFORMS_GROUP: &str = "Transforms";
pub const PREDICATES_GROUP: &str = "Predicates";
pub const ERROR_GROUP: &str = "Error Handling";
pub const EXACTLY_ONCE_SUPPORT_GROUP: &str = "Exactly Once Support";
pub const OFFSETS_TOPIC_GROUP: &str = "offsets.topic";

pub const NAME_CONFIG: &str = "name";
/// The longest connector name accepted, in UTF-8 bytes. Connect sets no limit, but the name
/// travels in i16-length strings (the group protocol's assignments, `connect-<name>` group ids,
/// `<group>-<name>-<task>` transactional ids), which a longer name would overflow.
pub const MAX_CONNECTOR_NAME_BYTES: usize = 1024;
pub const CONNECTOR_CLASS_CONFIG: &str = "connector.class";
pub const TASKS_MAX_CONFIG: &str = "tasks.max";
pub const TASKS_MAX_ENFORCE_CONFIG: &str = "tasks.max.enforce";
pub const KEY_CONVERTER_CLASS_CONFIG: &str = "key.converter";
pub const VALUE_CONVERTER_CLASS_CONFIG: &str = "value.converter";
pub const HEADER_CONVERTER_CLASS_CONFIG: &str = "header.converter";
/// KIP-891: the version requirement of the connector and of each converter (see
/// [`super::plugin_version`]).
pub const CONNECTOR_VERSION_CONFIG: &str = "connector.plugin.version";
pub const KEY_CONVERTER_VERSION_CONFIG: &str = "key.converter.plugin.version";
pub const VALUE_CONVERTER_VERSION_CONFIG: &str = "value.converter.plugin.version";
pub const HEADER_CONVERTER_VERSION_CONFIG: &str = "header.converter.plugin.version";
pub const TRANSFORMS_CONFIG: &str = "transforms";
pub const PREDICATES_CONFIG: &str = "predicates";
pub const CONFIG_RELOAD_ACTION_CONFIG: &str = "config.action.reload";
pub const ERRORS_RETRY_TIMEOUT_CONFIG: &str = "errors.retry.timeout";
pub const ERRORS_RETRY_MAX_DELAY_CONFIG: &str = "errors.retry.delay.max.ms";
pub const ERRORS_TOLERANCE_CONFIG: &str = "errors.tolerance";
pub const ERRORS_LOG_ENABLE_CONFIG: &str = "errors.log.enable";
pub const ERRORS_LOG_INCLUDE_MESSAGES_CONFIG: &str = "errors.log.include.messages";

/// Set by the runtime in every task config: the task's class name.
pub const TASK_CLASS_CONFIG: &str = "task.class";

pub const TOPICS_CONFIG: &str = "topics";
pub const TOPICS_REGEX_CONFIG: &str = "topics.regex";
pub const DLQ_TOPIC_NAME_CONFIG: &str = "errors.deadletterqueue.topic.name";
pub const DLQ_TOPIC_REPLICATION_FACTOR_CONFIG: &str =
    "errors.deadletterqueue.topic.replication.factor";
pub const DLQ_CONTEXT_HEADERS_ENABLE_CONFIG: &str = "errors.deadletterqueue.context.headers.enable";

pub const EXACTLY_ONCE_SUPPORT_CONFIG: &str = "exactly.once.support";
pub const TRANSACTION_BOUNDARY_CONFIG: &str = "transaction.boundary";
pub const TRANSACTION_BOUNDARY_INTERVAL_CONFIG: &str = "transaction.boundary.interval.ms";
pub const OFFSETS_TOPIC_CONFIG: &str = "offsets.storage.topic";

pub const TASKS_MAX_DEFAULT: i32 = 1;
/// The largest `tasks.max` accepted. Apache's `ConfigDef` only has `atLeast(1)`, but every task
/// the runtime is asked for becomes a config record, a client with its own threads and, for
/// exactly-once sources, a transactional id fenced one by one: a value like `2147483647` made
/// connectors allocate that many task configs and abort the process. 1024 is far above what
/// one Connect cluster runs for a connector and small enough that nothing built per task can
/// exhaust a worker.
pub const TASKS_MAX_LIMIT: i32 = 1024;
pub const HEADER_CONVERTER_CLASS_DEFAULT: &str =
    "org.apache.kafka.connect.storage.SimpleHeaderConverter";
pub const ERRORS_RETRY_MAX_DELAY_DEFAULT: i64 = 60_000;
pub const DLQ_TOPIC_REPLICATION_FACTOR_DEFAULT: i16 = 3;

fn converter_class_validator(header: bool) -> std::sync::Arc<dyn super::Validator> {
    null_or(lambda("a converter class", move |name, value| {
        let class = value.and_then(TypedValue::as_str).unwrap_or_default();
        let found = if header {
            converter::header_converter_for_class(class).map(drop)
        } else {
            converter::converter_for_class(class).map(drop)
        };
        match found {
            Ok(()) => Ok(()),
            // A class of the wrong kind: Apache's error as it is.
            Err(e) if e.message().starts_with("Class class ") => Err(e),
            Err(_) => Err(ConnectError::invalid_value(
                name,
                class,
                &format!("Class {class} could not be found."),
            )),
        }
    }))
}

/// `tasks.max`: at least 1, at most [`TASKS_MAX_LIMIT`].
pub(crate) fn tasks_max_key() -> ConfigKey {
    ConfigKey::new(
        TASKS_MAX_CONFIG,
        ConfigType::Int,
        Importance::High,
        "Maximum number of tasks to use for this connector.",
    )
    .default_value(TASKS_MAX_DEFAULT)
    .validator(between(1, i64::from(TASKS_MAX_LIMIT)))
    .group(COMMON_GROUP, 4)
    .width(Width::Short)
    .display_name("Tasks max")
}

/// `tasks.max.enforce` (KIP-1004).
pub(crate) fn tasks_max_enforce_key() -> ConfigKey {
    ConfigKey::new(
        TASKS_MAX_ENFORCE_CONFIG,
        ConfigType::Boolean,
        Importance::Low,
        "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of tasks that exceed the tasks.max property will be allowed to run. This property is deprecated and will be removed in an upcoming major release.",
    )
    .default_value(true)
    .group(COMMON_GROUP, 5)
    .width(Width::Short)
    .display_name("Enforce tasks max")
}

/// Recommends the converter classes this worker has (Java lists its installed converter
/// plugins), sorted; header converters for `header.converter`.
#[derive(Debug)]
struct ConverterRecommender {
    header: bool,
}

impl Recommender for ConverterRecommender {
    fn valid_values(&self, _name: &str, _parsed: &ParsedValues) -> Vec<TypedValue> {
        let provided = converter::provided_plugin_infos();
        let want = if self.header {
            crate::PluginType::HeaderConverter
        } else {
            crate::PluginType::Converter
        };
        let mut classes: Vec<&str> = converter::builtin_converter_classes()
            .into_iter()
            .filter(|(_, kind)| self.header || *kind == "converter")
            .map(|(class, _)| class)
            .chain(
                provided
                    .iter()
                    .filter(|p| p.plugin_type == want)
                    .map(|p| p.class.as_str()),
            )
            .collect();
        classes.sort_unstable();
        classes.dedup();
        classes
            .into_iter()
            .map(|c| TypedValue::Class(c.to_owned()))
            .collect()
    }

    fn visible(&self, _name: &str, _parsed: &ParsedValues) -> bool {
        true
    }
}

/// `def` as a worker validates a connector config against it: `key.converter`,
/// `value.converter` and `header.converter` default to the worker's classes (what runs when
/// the connector sets none), as Connect 4.4's validate answer shows them.
pub fn with_worker_converters(def: ConfigDef, key: &str, value: &str, header: &str) -> ConfigDef {
    [
        (KEY_CONVERTER_CLASS_CONFIG, key),
        (VALUE_CONVERTER_CLASS_CONFIG, value),
        (HEADER_CONVERTER_CLASS_CONFIG, header),
    ]
    .into_iter()
    .fold(def, |def, (name, class)| match def.key(name).cloned() {
        Some(k) => def.define(k.default_value(TypedValue::Class(class.to_owned()))),
        None => def,
    })
}

/// KIP-891's `*.plugin.version` key as Connect 4.4 defines it; its default and recommended
/// value, the installed version, are set where the plugin is known
/// ([`with_plugin_versions`]).
fn plugin_version_key(
    name: &str,
    importance: Importance,
    doc: &str,
    order: i32,
    width: Width,
    display: &str,
) -> ConfigKey {
    ConfigKey::new(name, ConfigType::String, importance, doc)
        .default_null()
        .group(COMMON_GROUP, order)
        .width(width)
        .display_name(display)
}

/// The one installed version of a plugin, recommended for its `*.plugin.version` key.
#[derive(Debug)]
struct InstalledVersion(String);

impl Recommender for InstalledVersion {
    fn valid_values(&self, _name: &str, _parsed: &ParsedValues) -> Vec<TypedValue> {
        vec![TypedValue::String(self.0.clone())]
    }

    fn visible(&self, _name: &str, _parsed: &ParsedValues) -> bool {
        true
    }
}

/// `def` with the installed versions as defaults and recommended values of the
/// `*.plugin.version` keys, as Connect 4.4 shows them: `connector` for
/// `connector.plugin.version`, `converters` (the converter each key's converter class names,
/// one version for all built-in converters) for the converter keys; `None` leaves a key's
/// default null (Connect's `GET /connector-plugins/{p}/config` has no converter versions).
pub fn with_plugin_versions(
    def: ConfigDef,
    connector: Option<&str>,
    converters: Option<&str>,
) -> ConfigDef {
    [
        (CONNECTOR_VERSION_CONFIG, connector),
        (KEY_CONVERTER_VERSION_CONFIG, converters),
        (VALUE_CONVERTER_VERSION_CONFIG, converters),
        (HEADER_CONVERTER_VERSION_CONFIG, converters),
    ]
    .into_iter()
    .fold(def, |def, (name, version)| {
        match (def.key(name).cloned(), version) {
            (Some(k), Some(v)) => def.define(
                k.default_value(TypedValue::String(v.to_owned()))
                    .recommender(Arc::new(InstalledVersion(v.to_owned()))),
            ),
            _ => def,
        }
    })
}

/// Keys every connector has (Java's `ConnectorConfig.configDef()`), with Connect 4.4's
/// `order_in_group` numbers (KIP-891's `*.plugin.version` keys are Common 3, 7, 9, 11). In source connectors' definition the exactly-once group
/// starts at 2 because Connect numbers it after `topic.creation.groups` (group "Topic
/// Creation", 1; see `topic_creation`), one counter for both groups.
pub fn connector_config_def() -> ConfigDef {
    use ConfigType as T;
    use Importance::{High, Low, Medium};
    ConfigDef::new()
        .define(
            ConfigKey::new(NAME_CONFIG, T::String, High, "Globally unique name to use for this connector.")
                .validator(composite(vec![
                    non_empty_string_without_control_chars(),
                    lambda(
                        format!("at most {MAX_CONNECTOR_NAME_BYTES} bytes"),
                        |key, value| match value.and_then(TypedValue::as_str) {
                            Some(s) if s.len() > MAX_CONNECTOR_NAME_BYTES => {
                                Err(ConnectError::invalid_value(
                                    key,
                                    format!("{}...", s.chars().take(40).collect::<String>()),
                                    &format!(
                                        "Connector names may be at most {MAX_CONNECTOR_NAME_BYTES} bytes long (UTF-8), this one is {}",
                                        s.len()
                                    ),
                                ))
                            }
                            _ => Ok(()),
                        },
                    ),
                ]))
                .group(COMMON_GROUP, 1)
                .width(Width::Medium)
                .display_name("Connector name"),
        )
        .define(
            ConfigKey::new(
                CONNECTOR_CLASS_CONFIG,
                T::String,
                High,
                "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter",
            )
            .group(COMMON_GROUP, 2)
            .width(Width::Long)
            .display_name("Connector class"),
        )
        .define(plugin_version_key(CONNECTOR_VERSION_CONFIG, Medium, "Version of the connector.", 3, Width::Medium, "Connector version"))
        .define(tasks_max_key())
        .define(tasks_max_enforce_key())
        .define(
            ConfigKey::new(
                KEY_CONVERTER_CLASS_CONFIG,
                T::Class,
                Low,
                "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the keys in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.",
            )
            .default_null()
            .validator(converter_class_validator(false))
            .recommender(Arc::new(ConverterRecommender { header: false }))
            .group(COMMON_GROUP, 6)
            .width(Width::Short)
            .display_name("Key converter class"),
        )
        .define(plugin_version_key(KEY_CONVERTER_VERSION_CONFIG, Low, "Version of the key converter.", 7, Width::Short, "Key converter version"))
        .define(
            ConfigKey::new(
                VALUE_CONVERTER_CLASS_CONFIG,
                T::Class,
                Low,
                "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.",
            )
            .default_null()
            .validator(converter_class_validator(false))
            .recommender(Arc::new(ConverterRecommender { header: false }))
            .group(COMMON_GROUP, 8)
            .width(Width::Short)
            .display_name("Value converter class"),
        )
        .define(plugin_version_key(VALUE_CONVERTER_VERSION_CONFIG, Low, "Version of the value converter.", 9, Width::Short, "Value converter version"))
        .define(
            ConfigKey::new(
                HEADER_CONVERTER_CLASS_CONFIG,
                T::Class,
                Low,
                "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas.",
            )
            .default_null()
            .validator(converter_class_validator(true))
            .recommender(Arc::new(ConverterRecommender { header: true }))
            .group(COMMON_GROUP, 10)
            .width(Width::Short)
            .display_name("Header converter class"),
        )
        .define(plugin_version_key(HEADER_CONVERTER_VERSION_CONFIG, Low, "Version of the header converter.", 11, Width::Short, "Header converter version"))
        .define(
            ConfigKey::new(TRANSFORMS_CONFIG, T::List, Low, "Aliases for the transformations to be applied to records.")
                .default_value(TypedValue::List(Vec::new()))
                .group(TRANSFORMS_GROUP, 12)
                .width(Width::Long)
                .display_name("Transforms"),
        )
        .define(
            ConfigKey::new(
                PREDICATES_CONFIG,
                T::List,
                Low,
                "Aliases for the predicates used by transformations.",
            )
            .default_value(TypedValue::List(Vec::new()))
            .group(PREDICATES_GROUP, 13)
            .width(Width::Long)
            .display_name("Predicates"),
        )
        .define(
            ConfigKey::new(
                CONFIG_RELOAD_ACTION_CONFIG,
                T::String,
                Low,
                "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties. A value of 'none' indicates that Connect will do nothing. A value of 'restart' indicates that Connect should restart/reload the connector with the updated configuration properties.The restart may actually be scheduled in the future if the external configuration provider indicates that a configuration value will expire in the future.",
            )
            .default_value("restart")
            .validator(one_of(&["none", "restart"]))
            .group(COMMON_GROUP, 14)
            .width(Width::Medium)
            .display_name("Reload Action"),
        )
        .define(
            ConfigKey::new(
                ERRORS_RETRY_TIMEOUT_CONFIG,
                T::Long,
                Medium,
                "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries.",
            )
            .default_value(0i64)
            .group(ERROR_GROUP, 1)
            .width(Width::Medium)
            .display_name("Retry Timeout for Errors"),
        )
        .define(
            ConfigKey::new(
                ERRORS_RETRY_MAX_DELAY_CONFIG,
                T::Long,
                Medium,
                "The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues.",
            )
            .default_value(ERRORS_RETRY_MAX_DELAY_DEFAULT)
            .group(ERROR_GROUP, 2)
            .width(Width::Medium)
            .display_name("Maximum Delay Between Retries for Errors"),
        )
        .define(
            ConfigKey::new(
                ERRORS_TOLERANCE_CONFIG,
                T::String,
                Medium,
                "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records.",
            )
            .default_value("none")
            .validator(one_of(&["none", "all"]))
            .group(ERROR_GROUP, 3)
            .width(Width::Short)
            .display_name("Error Tolerance"),
        )
        .define(
            ConfigKey::new(
                ERRORS_LOG_ENABLE_CONFIG,
                T::Boolean,
                Medium,
                "If true, write each error and the details of the failed operation and problematic record to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported.",
            )
            .default_value(false)
            .group(ERROR_GROUP, 4)
            .width(Width::Short)
            .display_name("Log Errors"),
        )
        .define(
            ConfigKey::new(
                ERRORS_LOG_INCLUDE_MESSAGES_CONFIG,
                T::Boolean,
                Medium,
                "Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and timestamp will be logged. For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, and source offset will be logged. This is 'false' by default, which will prevent record keys, values, and headers from being written to log files.",
            )
            .default_value(false)
            .group(ERROR_GROUP, 5)
            .width(Width::Short)
            .display_name("Log Error Details"),
        )
}

/// Framework keys of source connectors: the common keys, `topic.creation.groups` (KIP-158; the
/// per-group keys are checked by `topic_creation::topic_creation_errors`, as Apache checks them
/// outside this definition) and the exactly-once group (§3.2).
pub fn source_connector_config_def() -> ConfigDef {
    use ConfigType as T;
    use Importance::{Low, Medium};
    connector_config_def()
        .define(super::topic_creation::topic_creation_groups_key())
        .define(
            ConfigKey::new(
                EXACTLY_ONCE_SUPPORT_CONFIG,
                T::String,
                Medium,
                "Permitted values are requested, required. If set to \"required\", forces a preflight check for the connector to ensure that it can provide exactly-once semantics with the given configuration. Some connectors may be capable of providing exactly-once semantics but not signal to Connect that they support this; in that case, documentation for the connector should be consulted carefully before creating it, and the value for this property should be set to \"requested\". Additionally, if the value is set to \"required\" but the worker that performs preflight validation does not have exactly-once support enabled for source connectors, requests to create or validate the connector will fail.",
            )
            .default_value("requested")
            .validator(one_of_case_insensitive(&["requested", "required"]))
            .group(EXACTLY_ONCE_SUPPORT_GROUP, 2)
            .width(Width::Short)
            .display_name("Exactly once support"),
        )
        .define(
            ConfigKey::new(
                TRANSACTION_BOUNDARY_CONFIG,
                T::String,
                Medium,
                "Permitted values are: poll, interval, connector. If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from this connector provides to Connect. If set to 'connector', relies on connector-defined transaction boundaries; note that not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with this value will fail. Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed.",
            )
            .default_value("poll")
            .validator(one_of_case_insensitive(&["poll", "interval", "connector"]))
            .group(EXACTLY_ONCE_SUPPORT_GROUP, 3)
            .width(Width::Short)
            .display_name("Transaction Boundary"),
        )
        .define(
            ConfigKey::new(
                TRANSACTION_BOUNDARY_INTERVAL_CONFIG,
                T::Long,
                Low,
                "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is specified.",
            )
            .default_null()
            .validator(null_or(lambda("[0,...]", |name, value| {
                match value.and_then(TypedValue::as_i64) {
                    Some(v) if v < 0 => Err(ConnectError::invalid_value(name, v, "Interval must be non-negative")),
                    _ => Ok(()),
                }
            })))
            .group(EXACTLY_ONCE_SUPPORT_GROUP, 4)
            .width(Width::Short)
            .display_name("Transaction boundary interval"),
        )
        .define(
            ConfigKey::new(
                OFFSETS_TOPIC_CONFIG,
                T::String,
                Low,
                "The name of a separate offsets topic to use for this connector. If empty or not specified, the worker’s global offsets topic name will be used. If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this connector (which may be different from the one used for the worker's global offsets topic if the bootstrap.servers property of the connector's producer has been overridden from the worker's). Only applicable in distributed mode; in standalone mode, setting this property will have no effect.",
            )
            .default_null()
            .validator(non_empty_string())
            .group(OFFSETS_TOPIC_GROUP, 1)
            .width(Width::Long)
            .display_name("Offsets topic"),
        )
}

/// Framework keys of sink connectors: the common keys plus topics and the dead-letter queue.
pub fn sink_connector_config_def() -> ConfigDef {
    use ConfigType as T;
    use Importance::{High, Medium};
    connector_config_def()
        .define(
            ConfigKey::new(
                TOPICS_CONFIG,
                T::List,
                High,
                "List of topics to consume, separated by commas",
            )
            .default_value(TypedValue::List(Vec::new()))
            .group(COMMON_GROUP, 4)
            .width(Width::Long)
            .display_name("Topics"),
        )
        .define(
            ConfigKey::new(
                TOPICS_REGEX_CONFIG,
                T::String,
                High,
                "Regular expression giving topics to consume. Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. Only one of topics or topics.regex should be specified.",
            )
            .default_value("")
            .group(COMMON_GROUP, 4)
            .width(Width::Long)
            .display_name("Topics regex"),
        )
        .define(
            ConfigKey::new(
                DLQ_TOPIC_NAME_CONFIG,
                T::String,
                Medium,
                "The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, which means that no messages are to be recorded in the DLQ.",
            )
            .default_value("")
            .group(ERROR_GROUP, 6)
            .width(Width::Medium)
            .display_name("Dead Letter Queue Topic Name"),
        )
        .define(
            ConfigKey::new(
                DLQ_TOPIC_REPLICATION_FACTOR_CONFIG,
                T::Short,
                Medium,
                "Replication factor used to create the dead letter queue topic when it doesn't already exist.",
            )
            .default_value(DLQ_TOPIC_REPLICATION_FACTOR_DEFAULT)
            .group(ERROR_GROUP, 7)
            .width(Width::Medium)
            .display_name("Dead Letter Queue Topic Replication Factor"),
        )
        .define(
            ConfigKey::new(
                DLQ_CONTEXT_HEADERS_ENABLE_CONFIG,
                T::Boolean,
                Medium,
                "If true, add headers containing error context to the messages written to the dead letter queue. To avoid clashing with headers from the original record, all error context header keys, all error context header keys will start with <code>__connect.errors.</code>",
            )
            .default_value(false)
            .group(ERROR_GROUP, 8)
            .width(Width::Medium)
            .display_name("Enable Error Context Headers"),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigInfos, ConfigMap};

    /// The name travels in i16-length strings: one longer than the bound is a config error
    /// naming the bound (a 400 from the REST API), not an overflow in the group protocol.
    #[test]
    fn connector_names_are_bounded() {
        let check = |name: &str| {
            let props = ConfigMap::from([
                (NAME_CONFIG.to_owned(), name.to_owned()),
                (CONNECTOR_CLASS_CONFIG.to_owned(), "X".to_owned()),
            ]);
            ConfigInfos::validate("X", &connector_config_def(), &props)
                .errors()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert!(check(&"n".repeat(MAX_CONNECTOR_NAME_BYTES)).is_empty());
        // Multi-byte characters count in bytes, as the wire format does.
        assert!(check(&"é".repeat(MAX_CONNECTOR_NAME_BYTES / 2)).is_empty());
        for long in ["n".repeat(MAX_CONNECTOR_NAME_BYTES + 1), "é".repeat(40_000)] {
            let errors = check(&long);
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(
                errors[0].contains("Connector names may be at most 1024 bytes long"),
                "{}",
                errors[0]
            );
            assert!(
                errors[0].len() < 300,
                "the message does not repeat the name"
            );
        }
    }
}
