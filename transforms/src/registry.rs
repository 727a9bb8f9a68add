//! The built-in transforms and predicates under Apache's class names.

use std::sync::{Arc, RwLock};

use connect_api::config::ConfigDef;
use connect_api::plugin::PluginInfo;
use connect_api::{PluginType, Result};

use crate::extract_field::ExtractField;
use crate::filter::Filter;
use crate::headers::{DropHeaders, HeaderFrom, InsertHeader};
use crate::hoist_field::HoistField;
use crate::insert_field::InsertField;
use crate::mask_field::MaskField;
use crate::predicates::{HasHeaderKey, RecordIsTombstone, TopicNameMatches};
use crate::replace_field::ReplaceField;
use crate::routers::{RegexRouter, TimestampRouter};
use crate::set_schema_metadata::SetSchemaMetadata;
use crate::value_to_key::ValueToKey;
use crate::{Plugin, Side, VERSION};

/// One built-in plugin: its class, kind, factory and config definition.
pub struct PluginDef {
    pub class: &'static str,
    pub plugin_type: PluginType,
    pub create: fn() -> Plugin,
    pub config_def: fn() -> ConfigDef,
}

const P: &str = "org.apache.kafka.connect.transforms.";

macro_rules! t {
    ($class:expr, $make:expr, $def:path) => {
        PluginDef {
            class: $class,
            plugin_type: PluginType::Transformation,
            create: || Plugin::Transformation(Box::new($make)),
            config_def: $def,
        }
    };
}

macro_rules! p {
    ($class:expr, $make:expr, $def:expr) => {
        PluginDef {
            class: $class,
            plugin_type: PluginType::Predicate,
            create: || Plugin::Predicate(Box::new($make)),
            config_def: $def,
        }
    };
}

static PLUGINS: &[PluginDef] = &[
    t!(
        "org.apache.kafka.connect.transforms.DropHeaders",
        DropHeaders::default(),
        crate::headers::drop_headers_config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.ExtractField$Key",
        ExtractField::new(Side::Key),
        crate::extract_field::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.ExtractField$Value",
        ExtractField::new(Side::Value),
        crate::extract_field::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.Cast$Key",
        crate::cast::Cast::new(Side::Key),
        crate::cast::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.Cast$Value",
        crate::cast::Cast::new(Side::Value),
        crate::cast::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.Flatten$Key",
        crate::flatten::Flatten::new(Side::Key),
        crate::flatten::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.Flatten$Value",
        crate::flatten::Flatten::new(Side::Value),
        crate::flatten::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.Filter",
        Filter,
        ConfigDef::new
    ),
    t!(
        "org.apache.kafka.connect.transforms.HeaderFrom$Key",
        HeaderFrom::new(Side::Key),
        crate::headers::header_from_config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.HeaderFrom$Value",
        HeaderFrom::new(Side::Value),
        crate::headers::header_from_config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.HoistField$Key",
        HoistField::new(Side::Key),
        crate::hoist_field::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.HoistField$Value",
        HoistField::new(Side::Value),
        crate::hoist_field::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.InsertField$Key",
        InsertField::new(Side::Key),
        crate::insert_field::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.InsertField$Value",
        InsertField::new(Side::Value),
        crate::insert_field::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.InsertHeader",
        InsertHeader::default(),
        crate::headers::insert_header_config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.MaskField$Key",
        MaskField::new(Side::Key),
        crate::mask_field::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.MaskField$Value",
        MaskField::new(Side::Value),
        crate::mask_field::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.RegexRouter",
        RegexRouter::default(),
        crate::routers::regex_router_config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.ReplaceField$Key",
        ReplaceField::new(Side::Key),
        crate::replace_field::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.ReplaceField$Value",
        ReplaceField::new(Side::Value),
        crate::replace_field::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.SetSchemaMetadata$Key",
        SetSchemaMetadata::new(Side::Key),
        crate::set_schema_metadata::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value",
        SetSchemaMetadata::new(Side::Value),
        crate::set_schema_metadata::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.TimestampConverter$Key",
        crate::timestamp_converter::TimestampConverter::new(Side::Key),
        crate::timestamp_converter::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.TimestampConverter$Value",
        crate::timestamp_converter::TimestampConverter::new(Side::Value),
        crate::timestamp_converter::config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.TimestampRouter",
        TimestampRouter::default(),
        crate::routers::timestamp_router_config_def
    ),
    t!(
        "org.apache.kafka.connect.transforms.ValueToKey",
        ValueToKey::default(),
        crate::value_to_key::config_def
    ),
    p!(
        "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
        HasHeaderKey::default(),
        crate::predicates::has_header_key_config_def
    ),
    p!(
        "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
        RecordIsTombstone,
        ConfigDef::new
    ),
    p!(
        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
        TopicNameMatches::default(),
        crate::predicates::topic_name_matches_config_def
    ),
];

/// Every built-in transform and predicate, sorted by class.
pub fn plugins() -> &'static [PluginDef] {
    PLUGINS
}

/// Finds a plugin by its class name, or by the name without `org.apache.kafka.connect.transforms.`
/// (e.g. `InsertField$Value`, `predicates.HasHeaderKey`) or its simple name (`HasHeaderKey`).
pub fn find(class: &str) -> Option<&'static PluginDef> {
    let class = class.trim();
    PLUGINS.iter().find(|p| p.class == class).or_else(|| {
        PLUGINS.iter().find(|p| {
            let short = p.class.strip_prefix(P).unwrap_or(p.class);
            short == class || short.rsplit('.').next() == Some(class)
        })
    })
}

/// Entries for `GET /connector-plugins?connectorsOnly=false`: the built-in ones, then those
/// of the installed [`PluginProvider`].
pub fn plugin_infos() -> Vec<PluginInfo> {
    PLUGINS
        .iter()
        .map(|p| PluginInfo {
            class: p.class.to_owned(),
            plugin_type: p.plugin_type,
            version: Some(VERSION.to_owned()),
        })
        .chain(provider().map(|p| p.plugin_infos()).unwrap_or_default())
        .collect()
}

/// Transformations and predicates known only at run time (the Java ones of `plugin.path`).
pub trait PluginProvider: Send + Sync {
    /// The full class names `name` resolves to (the class itself, or a simple name only one
    /// class of that kind has), with their kinds.
    fn resolve(&self, name: &str) -> Vec<(String, PluginType)>;
    /// A fresh, unconfigured instance of a class [`Self::resolve`] answered.
    fn create(&self, class: &str, kind: PluginType) -> Result<Plugin>;
    /// The class's `config()`.
    fn config_def(&self, class: &str, kind: PluginType) -> Result<ConfigDef>;
    /// Every class, for `GET /connector-plugins?connectorsOnly=false`.
    fn plugin_infos(&self) -> Vec<PluginInfo>;
}

static PROVIDER: RwLock<Option<Arc<dyn PluginProvider>>> = RwLock::new(None);

/// Makes `provider`'s classes available to [`lookup`] (transform chains, validation, REST) for
/// the life of the process, replacing an earlier one.
pub fn install_provider(provider: Arc<dyn PluginProvider>) {
    *PROVIDER.write().unwrap_or_else(|e| e.into_inner()) = Some(provider);
}

fn provider() -> Option<Arc<dyn PluginProvider>> {
    PROVIDER.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// A transformation or predicate class [`lookup`] found.
#[derive(Clone)]
pub enum Found {
    Builtin(&'static PluginDef),
    Provided {
        class: String,
        plugin_type: PluginType,
        provider: Arc<dyn PluginProvider>,
    },
}

impl Found {
    pub fn class(&self) -> &str {
        match self {
            Self::Builtin(d) => d.class,
            Self::Provided { class, .. } => class,
        }
    }

    pub fn plugin_type(&self) -> PluginType {
        match self {
            Self::Builtin(d) => d.plugin_type,
            Self::Provided { plugin_type, .. } => *plugin_type,
        }
    }

    /// A fresh, unconfigured instance.
    pub fn create(&self) -> Result<Plugin> {
        match self {
            Self::Builtin(d) => Ok((d.create)()),
            Self::Provided {
                class,
                plugin_type,
                provider,
            } => provider.create(class, *plugin_type),
        }
    }

    /// The installed version (the built-in ones': [`VERSION`]; a provided class's as its
    /// provider lists it).
    pub fn version(&self) -> String {
        match self {
            Self::Builtin(_) => VERSION.to_owned(),
            Self::Provided {
                class, provider, ..
            } => provider
                .plugin_infos()
                .into_iter()
                .find(|p| p.class == *class)
                .and_then(|p| p.version)
                .unwrap_or_else(|| VERSION.to_owned()),
        }
    }

    pub fn config_def(&self) -> Result<ConfigDef> {
        match self {
            Self::Builtin(d) => Ok((d.config_def)()),
            Self::Provided {
                class,
                plugin_type,
                provider,
            } => provider.config_def(class, *plugin_type),
        }
    }
}

/// A transformation or predicate by name: Apache's class names are the built-in ones; another
/// full class name the installed [`PluginProvider`] has is its class; then the built-in short
/// and simple names ([`find`]); then the provider's simple names. Of a provider's classes, one
/// of kind `want` is preferred.
pub fn lookup(name: &str, want: Option<PluginType>) -> Option<Found> {
    let name = name.trim();
    if let Some(d) = PLUGINS.iter().find(|p| p.class == name) {
        return Some(Found::Builtin(d));
    }
    let provided = |exact: bool| -> Option<Found> {
        let p = provider()?;
        let mut all = p.resolve(name);
        if exact {
            all.retain(|(class, _)| class == name);
        }
        let pick = all
            .iter()
            .find(|(_, kind)| Some(*kind) == want)
            .or(all.first())
            .cloned()?;
        Some(Found::Provided {
            class: pick.0,
            plugin_type: pick.1,
            provider: p,
        })
    };
    provided(true)
        .or_else(|| find(name).map(Found::Builtin))
        .or_else(|| provided(false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;
    use connect_api::config::ConfigMap;

    /// A provided transformation: drops every record (so a test can tell it from a built-in).
    struct Dropper;

    impl crate::Transformation for Dropper {
        fn configure(&mut self, _props: &ConfigMap) -> Result<()> {
            Ok(())
        }
        fn apply(&self, _record: &mut Record) -> Result<bool> {
            Ok(false)
        }
        fn config_def(&self) -> ConfigDef {
            ConfigDef::new()
        }
    }

    struct Provided;

    const CLASSES: [(&str, PluginType); 3] = [
        ("com.example.Tag", PluginType::Transformation),
        ("com.example.InsertField$Value", PluginType::Transformation),
        ("com.example.Match", PluginType::Predicate),
    ];

    impl PluginProvider for Provided {
        fn resolve(&self, name: &str) -> Vec<(String, PluginType)> {
            CLASSES
                .iter()
                .filter(|(c, _)| *c == name || c.rsplit('.').next() == Some(name))
                .map(|(c, k)| ((*c).to_owned(), *k))
                .collect()
        }
        fn create(&self, _class: &str, _kind: PluginType) -> Result<Plugin> {
            Ok(Plugin::Transformation(Box::new(Dropper)))
        }
        fn config_def(&self, _class: &str, _kind: PluginType) -> Result<ConfigDef> {
            Ok(ConfigDef::new())
        }
        fn plugin_infos(&self) -> Vec<PluginInfo> {
            CLASSES
                .iter()
                .map(|(c, k)| PluginInfo {
                    class: (*c).to_owned(),
                    plugin_type: *k,
                    version: Some("9".to_owned()),
                })
                .collect()
        }
    }

    /// Apache's names stay built-in; another full name a provider has is the provider's; then
    /// built-in short names; then the provider's simple names; the rest is not found.
    #[test]
    fn provided_classes_resolve_after_apaches_names() {
        install_provider(Arc::new(Provided));
        let builtin = |name: &str| matches!(lookup(name, None), Some(Found::Builtin(_)));
        let provided = |name: &str| match lookup(name, None) {
            Some(Found::Provided { class, .. }) => Some(class),
            _ => None,
        };
        assert!(builtin(
            "org.apache.kafka.connect.transforms.InsertField$Value"
        ));
        assert!(builtin("InsertField$Value"), "the built-in short name wins");
        assert_eq!(
            provided("com.example.InsertField$Value").as_deref(),
            Some("com.example.InsertField$Value")
        );
        assert_eq!(provided("Tag").as_deref(), Some("com.example.Tag"));
        assert_eq!(
            lookup("Match", None).map(|f| f.plugin_type()),
            Some(PluginType::Predicate)
        );
        assert!(lookup("com.example.Nope", None).is_none());
        assert!(plugin_infos().iter().any(|p| p.class == "com.example.Tag"));
        // A chain builds the provided stage by its class name.
        let props: ConfigMap = [
            ("transforms", "t"),
            ("transforms.t.type", "com.example.Tag"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let chain = crate::TransformChain::from_config(&props).unwrap();
        assert_eq!(
            chain
                .apply(Record::new("t", None, connect_api::data::Value::Null))
                .unwrap(),
            None
        );
    }
}
