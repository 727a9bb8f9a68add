//! The converters, header converters, transformations and predicates of `plugin.path` as
//! providers of the transform registry ([`PluginProvider`]) and of the converter lookup
//! ([`ConverterProvider`]): installed at start-up, they make the Java classes resolvable by
//! name wherever the built-in ones are (transform chains, converters, validation, REST).
//!
//! # Guarantees
//!
//! - Apache's class names (and the built-in simple names) keep resolving to the built-in Rust
//!   transformations, predicates and converters ([`connect_transforms::registry::lookup`],
//!   [`connect_api::converter::converter_for_class`] ask the providers after them, except for a
//!   full class name only a provider has).
//! - A simple name resolves to a Java class only when one class of that kind has it.

use std::sync::Arc;

use connect_api::converter::ConverterProvider;
use connect_api::{ConfigDef, Converter, HeaderConverter, PluginInfo, PluginType, Result};
use connect_transforms::{Plugin, PluginProvider};

use super::JavaHost;
use super::converter::{JavaConverter, JavaHeaderConverter};
use super::transform::{JavaPredicate, JavaTransformation};

/// A converter, header converter, transformation or predicate class found in `plugin.path`.
#[derive(Debug, Clone)]
pub(super) struct JavaClass {
    pub(super) class: String,
    pub(super) kind: PluginType,
    pub(super) version: String,
}

/// The Java converters, transformations and predicates, installed as providers of both kinds.
pub(super) struct JavaRecordPlugins {
    pub(super) host: Arc<JavaHost>,
    pub(super) classes: Vec<JavaClass>,
}

fn simple(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

/// The classes of one of `kinds` that `name` names: the class itself, else those of that
/// simple name when only one class of a kind has it.
fn resolve_kinds(
    classes: &[JavaClass],
    name: &str,
    kinds: &[PluginType],
) -> Vec<(String, PluginType)> {
    let name = name.trim();
    let of_kinds = || classes.iter().filter(|c| kinds.contains(&c.kind));
    let exact: Vec<_> = of_kinds()
        .filter(|c| c.class == name)
        .map(|c| (c.class.clone(), c.kind))
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    kinds
        .iter()
        .filter_map(|kind| {
            let mut by_simple = of_kinds().filter(|c| c.kind == *kind && simple(&c.class) == name);
            match (by_simple.next(), by_simple.next()) {
                (Some(c), None) => Some((c.class.clone(), c.kind)),
                _ => None,
            }
        })
        .collect()
}

impl JavaRecordPlugins {
    fn resolve_kinds(&self, name: &str, kinds: &[PluginType]) -> Vec<(String, PluginType)> {
        resolve_kinds(&self.classes, name, kinds)
    }

    fn infos(&self, kinds: &[PluginType]) -> Vec<PluginInfo> {
        self.classes
            .iter()
            .filter(|c| kinds.contains(&c.kind))
            .map(|c| PluginInfo {
                class: c.class.clone(),
                plugin_type: c.kind,
                version: Some(c.version.clone()).filter(|v| !v.is_empty() && v != "undefined"),
            })
            .collect()
    }
}

const STAGES: [PluginType; 2] = [PluginType::Transformation, PluginType::Predicate];
const CONVERTERS: [PluginType; 2] = [PluginType::Converter, PluginType::HeaderConverter];

impl PluginProvider for JavaRecordPlugins {
    fn resolve(&self, name: &str) -> Vec<(String, PluginType)> {
        self.resolve_kinds(name, &STAGES)
    }

    fn create(&self, class: &str, kind: PluginType) -> Result<Plugin> {
        Ok(match kind {
            PluginType::Predicate => {
                Plugin::Predicate(Box::new(JavaPredicate::new(&self.host, class)))
            }
            _ => Plugin::Transformation(Box::new(JavaTransformation::new(&self.host, class))),
        })
    }

    fn config_def(&self, class: &str, kind: PluginType) -> Result<ConfigDef> {
        self.host
            .plugin_config_def(class, kind)
            .map_err(|e| e.into_connect(&format!("config() of Java {kind} {class}")))
    }

    fn plugin_infos(&self) -> Vec<PluginInfo> {
        self.infos(&STAGES)
    }
}

impl ConverterProvider for JavaRecordPlugins {
    fn resolve(&self, name: &str, header: bool) -> Option<String> {
        let kind = if header {
            PluginType::HeaderConverter
        } else {
            PluginType::Converter
        };
        self.resolve_kinds(name, &[kind])
            .into_iter()
            .next()
            .map(|(class, _)| class)
    }

    fn converter(&self, class: &str) -> Option<Box<dyn Converter>> {
        Some(Box::new(JavaConverter::new(&self.host, class)))
    }

    fn header_converter(&self, class: &str) -> Option<Box<dyn HeaderConverter>> {
        Some(Box::new(JavaHeaderConverter::new(&self.host, class)))
    }

    fn plugin_infos(&self) -> Vec<PluginInfo> {
        self.infos(&CONVERTERS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(class: &str, kind: PluginType) -> JavaClass {
        JavaClass {
            class: class.to_owned(),
            kind,
            version: "1".to_owned(),
        }
    }

    /// A full class name resolves to its class; a simple name only when one class of the kind
    /// has it (two plugins with `a.Tag` and `b.Tag`: neither by `Tag`); a class of another
    /// kind does not answer.
    #[test]
    fn names_resolve_to_one_class_of_the_kinds_asked() {
        let classes = [
            class("a.Tag", PluginType::Transformation),
            class("b.Tag", PluginType::Transformation),
            class("a.Only", PluginType::Transformation),
            class("a.Conv", PluginType::Converter),
            class("a.Conv", PluginType::HeaderConverter),
        ];
        let stages = [PluginType::Transformation, PluginType::Predicate];
        assert_eq!(
            resolve_kinds(&classes, "b.Tag", &stages),
            [("b.Tag".to_owned(), PluginType::Transformation)]
        );
        assert!(
            resolve_kinds(&classes, "Tag", &stages).is_empty(),
            "ambiguous"
        );
        assert_eq!(
            resolve_kinds(&classes, " Only ", &stages),
            [("a.Only".to_owned(), PluginType::Transformation)]
        );
        assert!(resolve_kinds(&classes, "a.Conv", &stages).is_empty());
        assert_eq!(
            resolve_kinds(&classes, "Conv", &[PluginType::HeaderConverter]),
            [("a.Conv".to_owned(), PluginType::HeaderConverter)]
        );
    }
}
