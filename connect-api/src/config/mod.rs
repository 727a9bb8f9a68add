//! Configuration: [`ConfigDef`] (declarative keys), pure validation into [`ConfigValue`]s, the
//! `ConfigInfos` response shape, and the framework's connector keys with typed views.
//!
//! - `types`: value types, parsing and rendering ([`TypedValue`], [`Password`]).
//! - `validators`: [`Validator`]s and [`Recommender`]s.
//! - `def`: [`ConfigKey`], [`ConfigDef`], [`ConfigValue`], [`ParsedConfig`].
//! - `infos`: [`ConfigInfos`] and friends, serialised as Connect does.
//! - `connector`: the shared connector keys (`connector_config_def()` and friends).
//! - `topic_creation`: KIP-158's `topic.creation.*` keys of source connectors.
//! - `typed`: [`ConnectorConfig`], [`SourceConnectorConfig`], [`SinkConnectorConfig`].

pub mod connector;
mod def;
mod infos;
pub mod plugin_version;
pub mod topic_creation;
mod typed;
mod types;
pub mod validators;

pub use connector::{connector_config_def, sink_connector_config_def, source_connector_config_def};
pub use def::{
    ConfigDef, ConfigKey, ConfigMap, ConfigValue, DefaultValue, ParsedConfig, originals_with_prefix,
};
pub use infos::{ConfigInfo, ConfigInfos, ConfigKeyInfo, ConfigValueInfo};
pub use topic_creation::{
    TopicCreation, TopicCreationGroup, topic_creation_config_def, topic_creation_errors,
    uses_topic_creation,
};
pub use typed::{
    ConnectorConfig, ExactlyOnceSupportLevel, SinkConnectorConfig, SourceConnectorConfig, TasksMax,
    ToleranceType, TransactionBoundary, sink_topic_errors, validate_sink_topics,
};
pub use types::{
    ConfigType, Importance, Password, TypedValue, Width, java_double_string, parse_type,
};
pub use validators::{Recommender, Validator};
