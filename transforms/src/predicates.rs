//! Predicates: `TopicNameMatches`, `HasHeaderKey`, `RecordIsTombstone`.

use connect_api::config::validators::{composite, non_empty_string};
use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance};
use connect_api::{ConnectError, Result};
use regex::Regex;

use crate::routers::{compile_full_match, regex_validator};
use crate::{Predicate, Record};

pub const PATTERN: &str = "pattern";
pub const NAME: &str = "name";

pub fn topic_name_matches_config_def() -> ConfigDef {
    ConfigDef::new().define(
        ConfigKey::new(
            PATTERN,
            T::String,
            Importance::Medium,
            "A Java regular expression for matching against the name of a record's topic.",
        )
        .validator(composite(vec![non_empty_string(), regex_validator()])),
    )
}

#[derive(Default)]
pub struct TopicNameMatches {
    pattern: Option<Regex>,
}

impl Predicate for TopicNameMatches {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = topic_name_matches_config_def().parse(props)?;
        let p = c.string(PATTERN).unwrap_or_default();
        self.pattern = Some(compile_full_match(p).map_err(|e| {
            ConnectError::invalid_value(
                PATTERN,
                p,
                &format!("entry must be a Java-compatible regular expression: {e}"),
            )
        })?);
        Ok(())
    }

    fn test(&self, record: &Record) -> bool {
        self.pattern
            .as_ref()
            .is_some_and(|p| p.is_match(&record.topic))
    }

    fn config_def(&self) -> ConfigDef {
        topic_name_matches_config_def()
    }
}

pub fn has_header_key_config_def() -> ConfigDef {
    ConfigDef::new().define(
        ConfigKey::new(NAME, T::String, Importance::Medium, "The header name.")
            .validator(non_empty_string()),
    )
}

#[derive(Default)]
pub struct HasHeaderKey {
    name: String,
}

impl Predicate for HasHeaderKey {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        self.name = has_header_key_config_def()
            .parse(props)?
            .string(NAME)
            .unwrap_or_default()
            .to_owned();
        Ok(())
    }

    fn test(&self, record: &Record) -> bool {
        record.headers.iter().any(|h| h.key == self.name)
    }

    fn config_def(&self) -> ConfigDef {
        has_header_key_config_def()
    }
}

#[derive(Default)]
pub struct RecordIsTombstone;

impl Predicate for RecordIsTombstone {
    fn configure(&mut self, _props: &ConfigMap) -> Result<()> {
        Ok(())
    }

    fn test(&self, record: &Record) -> bool {
        record.value.is_null()
    }

    fn config_def(&self) -> ConfigDef {
        ConfigDef::new()
    }
}
