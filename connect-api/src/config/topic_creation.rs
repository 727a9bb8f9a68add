//! Topic creation for source connectors (KIP-158): Apache's `TopicCreationConfig`, the
//! topic-creation part of `SourceConnectorConfig`, `TopicCreationGroup` and `TopicCreation`.
//!
//! ```text
//!  topic.creation.groups=compacted           (order matters; `default` is implicit and last)
//!  topic.creation.default.replication.factor=3   required once any topic.creation.* key is set
//!  topic.creation.default.partitions=5           required too
//!  topic.creation.default.<topic config>=...     e.g. cleanup.policy, passed to CreateTopics
//!  topic.creation.compacted.include=a.*,b        regexes (whole-name match), default none
//!  topic.creation.compacted.exclude=...          exclusion wins over inclusion
//!  topic.creation.compacted.partitions=1         default: the default group's
//!  topic.creation.compacted.replication.factor   default: the default group's
//!  topic.creation.compacted.<topic config>=...   (the default group's are not inherited)
//! ```
//!
//! Topic creation is used only when the worker has `topic.creation.enable=true` (its default)
//! and the connector config has at least one `topic.creation.*` key. The first group whose
//! patterns match a topic gives its settings; `default` matches every topic. An existing topic
//! is left as it is.
//!
//! Validation is Apache's: `topic.creation.groups` is part of every source connector's
//! definition ([`topic_creation_groups_key`], what Apache's validate answer shows); the
//! per-group keys are checked when the connector's config is built with topic creation on
//! ([`topic_creation_errors`], [`TopicCreation::from_config`]), where a missing default
//! replication factor or partition count is an error.

use std::collections::{BTreeMap, HashSet};

use regex::Regex;

use super::def::{ConfigDef, ConfigKey, ConfigMap, DefaultValue};
use super::types::{ConfigType, Importance, TypedValue, Width};
use super::validators::{composite, lambda, non_null};
use crate::error::{ConnectError, Result};

pub const TOPIC_CREATION_PREFIX: &str = "topic.creation.";
pub const TOPIC_CREATION_GROUPS_CONFIG: &str = "topic.creation.groups";
/// The validate answer's group of `topic.creation.groups`.
pub const TOPIC_CREATION_GROUP: &str = "Topic Creation";
pub const DEFAULT_TOPIC_CREATION_GROUP: &str = "default";
pub const DEFAULT_TOPIC_CREATION_PREFIX: &str = "topic.creation.default.";
pub const INCLUDE_REGEX_CONFIG: &str = "include";
pub const EXCLUDE_REGEX_CONFIG: &str = "exclude";
pub const REPLICATION_FACTOR_CONFIG: &str = "replication.factor";
pub const PARTITIONS_CONFIG: &str = "partitions";
/// `-1`: the broker's default partition count (Java's `TopicAdmin.NO_PARTITIONS`).
pub const NO_PARTITIONS: i32 = -1;
/// `-1`: the broker's default replication factor (`TopicAdmin.NO_REPLICATION_FACTOR`).
pub const NO_REPLICATION_FACTOR: i16 = -1;

const INCLUDE_REGEX_DOC: &str = "A list of regular expression literals used to match the topic names used by the source connector. This list is used to include topics that should be created using the topic settings defined by this group.";
const EXCLUDE_REGEX_DOC: &str = "A list of regular expression literals used to match the topic names used by the source connector. This list is used to exclude topics from being created with the topic settings defined by this group. Note that exclusion rules have precedent and override any inclusion rules for the topics.";
const REPLICATION_FACTOR_DOC: &str = "The replication factor for new topics created for this connector using this group. This value may be -1 to use the broker'sdefault replication factor, or may be a positive number not larger than the number of brokers in the Kafka cluster. A value larger than the number of brokers in the Kafka cluster will result in an error when the new topic is created. For the default group this configuration is required. For any other group defined in topic.creation.groups this config is optional and if it's missing it gets the value of the default group";
const PARTITIONS_DOC: &str = "The number of partitions new topics created for this connector. This value may be -1 to use the broker's default number of partitions, or a positive number representing the desired number of partitions. For the default group this configuration is required. For any other group defined in topic.creation.groups this config is optional and if it's missing it gets the value of the default group";

/// `topic.creation.groups`, as Apache's `SourceConnectorConfig.configDef()` defines it (group
/// "Topic Creation", first in it; the exactly-once keys follow it in Apache's numbering).
pub fn topic_creation_groups_key() -> ConfigKey {
    ConfigKey::new(
        TOPIC_CREATION_GROUPS_CONFIG,
        ConfigType::List,
        Importance::Low,
        "Groups of configurations for topics created by source connectors",
    )
    .default_value(TypedValue::List(Vec::new()))
    .validator(composite(vec![
        non_null(),
        lambda("unique topic creation groups", |name, value| {
            if let Some(TypedValue::List(aliases)) = value {
                let unique: HashSet<&String> = aliases.iter().collect();
                if unique.len() < aliases.len() {
                    return Err(ConnectError::invalid_value(
                        name,
                        java_list(aliases),
                        "Duplicate alias provided.",
                    ));
                }
            }
            Ok(())
        }),
    ]))
    .group(TOPIC_CREATION_GROUP, 1)
    .width(Width::Long)
    .display_name("Topic Creation Groups")
}

/// A list as Java's `List.toString` prints it in messages.
fn java_list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// Whether a connector config asks for topic creation (any `topic.creation.*` key).
pub fn uses_topic_creation(props: &ConfigMap) -> bool {
    props.keys().any(|k| k.starts_with(TOPIC_CREATION_PREFIX))
}

fn regex_validator() -> std::sync::Arc<dyn super::Validator> {
    lambda(
        "Positive number, or -1 to use the broker's default",
        |name, value| {
            if let Some(TypedValue::List(patterns)) = value {
                for p in patterns {
                    if let Err(e) = Regex::new(p) {
                        return Err(ConnectError::invalid_value(
                            name,
                            java_list(patterns),
                            &format!("Syntax error in regular expression: {e}"),
                        ));
                    }
                }
            }
            Ok(())
        },
    )
}

fn replication_factor_validator() -> std::sync::Arc<dyn super::Validator> {
    lambda(
        "Positive number not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default",
        |name, value| match value.and_then(TypedValue::as_i64) {
            Some(v) if v != i64::from(NO_REPLICATION_FACTOR) && v < 1 => {
                Err(ConnectError::invalid_value(
                    name,
                    v,
                    "Replication factor must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default",
                ))
            }
            _ => Ok(()),
        },
    )
}

fn partitions_validator() -> std::sync::Arc<dyn super::Validator> {
    lambda(
        "Positive number, or -1 to use the broker's default",
        |name, value| match value.and_then(TypedValue::as_i64) {
            Some(v) if v != i64::from(NO_PARTITIONS) && v < 1 => Err(ConnectError::invalid_value(
                name,
                v,
                "Number of partitions must be positive, or -1 to use the broker's default",
            )),
            _ => Ok(()),
        },
    )
}

/// One group's four keys under `topic.creation.<alias>.`, embedded as Java's `ConfigDef.embed`
/// does (group `<prefix group>: <child group>`, order from 0). Apache never shows these keys
/// in a validate answer; they are what [`topic_creation_errors`] checks.
fn group_keys(
    alias: &str,
    default_rf: DefaultValue,
    default_partitions: DefaultValue,
) -> ConfigDef {
    let (child_group, embed_group) = if alias == DEFAULT_TOPIC_CREATION_GROUP {
        (
            DEFAULT_TOPIC_CREATION_GROUP.to_owned(),
            DEFAULT_TOPIC_CREATION_GROUP.to_owned(),
        )
    } else {
        let g = format!("{TOPIC_CREATION_GROUP}: {alias}");
        (g.clone(), g)
    };
    let group = format!("{embed_group}: {child_group}");
    let prefix = format!("{TOPIC_CREATION_PREFIX}{alias}.");
    let default = alias == DEFAULT_TOPIC_CREATION_GROUP;
    let key = |name: &str, t: ConfigType, doc: &str, order: i32, display: String| {
        ConfigKey::new(format!("{prefix}{name}"), t, Importance::Low, doc)
            .group(group.clone(), order)
            .width(Width::Long)
            .display_name(display)
    };
    let with_default = |k: ConfigKey, d: DefaultValue| match d {
        DefaultValue::Value(v) => k.default_value(v),
        DefaultValue::Null => k.default_null(),
        DefaultValue::Required => k,
    };
    let regex_check = if default {
        non_null()
    } else {
        regex_validator()
    };
    ConfigDef::new()
        .define(
            key(
                INCLUDE_REGEX_CONFIG,
                ConfigType::List,
                INCLUDE_REGEX_DOC,
                0,
                format!("Inclusion Topic Pattern for {child_group}"),
            )
            .default_value(TypedValue::List(if default {
                vec![".*".into()]
            } else {
                Vec::new()
            }))
            .validator(regex_check.clone()),
        )
        .define(
            key(
                EXCLUDE_REGEX_CONFIG,
                ConfigType::List,
                EXCLUDE_REGEX_DOC,
                1,
                format!("Exclusion Topic Pattern for {child_group}"),
            )
            .default_value(TypedValue::List(Vec::new()))
            .validator(regex_check),
        )
        .define(with_default(
            key(
                REPLICATION_FACTOR_CONFIG,
                ConfigType::Short,
                REPLICATION_FACTOR_DOC,
                2,
                format!("Replication Factor for Topics in {child_group}"),
            )
            .validator(replication_factor_validator()),
            default_rf,
        ))
        .define(with_default(
            key(
                PARTITIONS_CONFIG,
                ConfigType::Int,
                PARTITIONS_DOC,
                3,
                format!("Partition Count for Topics in {child_group}"),
            )
            .validator(partitions_validator()),
            default_partitions,
        ))
}

/// The aliases of `topic.creation.groups`, without `default` (always there, always last) and
/// without repeats, in order.
fn group_aliases(props: &ConfigMap) -> Vec<String> {
    let Some(raw) = props.get(TOPIC_CREATION_GROUPS_CONFIG) else {
        return Vec::new();
    };
    let mut seen = HashSet::new();
    raw.split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty() && *a != DEFAULT_TOPIC_CREATION_GROUP)
        .filter(|a| seen.insert(a.to_string()))
        .map(str::to_owned)
        .collect()
}

/// The topic-creation keys Apache's `SourceConnectorConfig` checks when topic creation is on
/// (its `enrich(embedDefaultGroup(..))` definition, the connector's own keys aside):
/// `topic.creation.groups`, the default group's four keys (replication factor and partitions
/// required), then each listed group's, whose replication factor and partitions default to the
/// default group's.
pub fn topic_creation_config_def(props: &ConfigMap) -> ConfigDef {
    let defaults = group_keys(
        DEFAULT_TOPIC_CREATION_GROUP,
        DefaultValue::Required,
        DefaultValue::Required,
    );
    let parsed_default = |name: &str| -> DefaultValue {
        let key = defaults
            .key(&format!("{DEFAULT_TOPIC_CREATION_PREFIX}{name}"))
            .expect("defined");
        let valid = |v: &TypedValue| {
            key.validator
                .as_ref()
                .is_none_or(|c| c.ensure_valid(&key.name, Some(v)).is_ok())
        };
        match props.get(&key.name).map(|raw| key.parse_raw(raw)) {
            Some(Ok(v)) if valid(&v) => DefaultValue::Value(v),
            // The default group's own error is reported; the groups inherit nothing.
            _ => DefaultValue::Null,
        }
    };
    let (rf, partitions) = (
        parsed_default(REPLICATION_FACTOR_CONFIG),
        parsed_default(PARTITIONS_CONFIG),
    );
    let mut def = ConfigDef::new()
        .define(topic_creation_groups_key())
        .extend(&defaults);
    for alias in group_aliases(props) {
        def = def.extend(&group_keys(&alias, rf.clone(), partitions.clone()));
    }
    def
}

/// The props Apache validates the groups against: the default group's `include` and `exclude`
/// are ignored (the default group matches every topic).
fn without_default_patterns(props: &ConfigMap) -> ConfigMap {
    let mut p = props.clone();
    p.remove(&format!(
        "{DEFAULT_TOPIC_CREATION_PREFIX}{INCLUDE_REGEX_CONFIG}"
    ));
    p.remove(&format!(
        "{DEFAULT_TOPIC_CREATION_PREFIX}{EXCLUDE_REGEX_CONFIG}"
    ));
    p
}

/// Every error of the topic creation keys, as `(key, message)` with Apache's messages, in
/// definition order; empty when they are valid or when topic creation is not used (the worker's
/// `topic.creation.enable` is false or the connector has no `topic.creation.*` key), as Apache
/// checks them only then.
pub fn topic_creation_errors(props: &ConfigMap, worker_enabled: bool) -> Vec<(String, String)> {
    if !worker_enabled || !uses_topic_creation(props) {
        return Vec::new();
    }
    topic_creation_config_def(props)
        .validate(&without_default_patterns(props))
        .into_iter()
        .flat_map(|cv| {
            let name = cv.name.clone();
            cv.errors.into_iter().map(move |e| (name.clone(), e))
        })
        .collect()
}

/// One group's settings (Java's `TopicCreationGroup`).
#[derive(Debug, Clone)]
pub struct TopicCreationGroup {
    pub name: String,
    include: Regex,
    exclude: Regex,
    /// `-1`: the broker's default.
    pub partitions: i32,
    /// `-1`: the broker's default.
    pub replication_factor: i16,
    /// Topic configs (`cleanup.policy`, ...) for topics this group creates.
    pub configs: BTreeMap<String, String>,
}

/// Java's `Pattern.compile(String.join("|", patterns)).matcher(topic).matches()`: the whole
/// name must match; no pattern matches only the empty name.
fn whole_match(patterns: &[String]) -> Result<Regex> {
    let joined = patterns.join("|");
    Regex::new(&format!("^(?:{joined})$")).map_err(|e| {
        ConnectError::config(format!("Syntax error in regular expression {joined}: {e}"))
    })
}

impl TopicCreationGroup {
    /// Whether this group creates `topic`: it matches an inclusion and no exclusion pattern.
    pub fn matches(&self, topic: &str) -> bool {
        !self.exclude.is_match(topic) && self.include.is_match(topic)
    }
}

/// A task's topic creation settings (Java's `TopicCreation`): the listed groups in order, then
/// the default group.
#[derive(Debug, Clone)]
pub struct TopicCreation {
    pub groups: Vec<TopicCreationGroup>,
    pub default_group: TopicCreationGroup,
}

impl TopicCreation {
    /// The settings of a source connector config; `None` when topic creation is not used (the
    /// worker's `topic.creation.enable` is false, or no `topic.creation.*` key is set). The
    /// first invalid key fails with Apache's message (`Missing required configuration
    /// "topic.creation.default.replication.factor" which has no default value.`).
    pub fn from_config(props: &ConfigMap, worker_enabled: bool) -> Result<Option<Self>> {
        if !worker_enabled || !uses_topic_creation(props) {
            return Ok(None);
        }
        let p = topic_creation_config_def(props).parse(&without_default_patterns(props))?;
        let group = |alias: &str| -> Result<TopicCreationGroup> {
            let prefix = format!("{TOPIC_CREATION_PREFIX}{alias}.");
            let configs = props
                .iter()
                .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?, v)))
                .filter(|(k, _)| {
                    ![
                        INCLUDE_REGEX_CONFIG,
                        EXCLUDE_REGEX_CONFIG,
                        REPLICATION_FACTOR_CONFIG,
                        PARTITIONS_CONFIG,
                    ]
                    .contains(k)
                })
                .map(|(k, v)| (k.to_owned(), v.clone()))
                .collect();
            Ok(TopicCreationGroup {
                name: alias.to_owned(),
                include: whole_match(p.list(&format!("{prefix}{INCLUDE_REGEX_CONFIG}")))?,
                exclude: whole_match(p.list(&format!("{prefix}{EXCLUDE_REGEX_CONFIG}")))?,
                partitions: p
                    .int(&format!("{prefix}{PARTITIONS_CONFIG}"))
                    .unwrap_or(NO_PARTITIONS),
                replication_factor: p
                    .short(&format!("{prefix}{REPLICATION_FACTOR_CONFIG}"))
                    .unwrap_or(NO_REPLICATION_FACTOR),
                configs,
            })
        };
        Ok(Some(Self {
            groups: group_aliases(props)
                .iter()
                .map(|a| group(a))
                .collect::<Result<_>>()?,
            default_group: group(DEFAULT_TOPIC_CREATION_GROUP)?,
        }))
    }

    /// The first listed group matching `topic`, else the default group (Java's
    /// `findFirstGroup`).
    pub fn find_first_group(&self, topic: &str) -> &TopicCreationGroup {
        self.groups
            .iter()
            .find(|g| g.matches(topic))
            .unwrap_or(&self.default_group)
    }
}

#[cfg(test)]
#[path = "topic_creation_tests.rs"]
mod tests;
