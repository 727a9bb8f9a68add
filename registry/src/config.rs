//! The Schema Registry converters' settings: Confluent's `AbstractKafkaSchemaSerDeConfig` keys,
//! and each converter's own (`AvroDataConfig`'s for Avro; `JsonSchemaDataConfig`'s and the JSON
//! Schema serdes' for JSON Schema), with their defaults. One table decides each key Confluent
//! defines and this worker does not implement, per converter ([`Format`]): refused with a
//! validation error naming it when set to anything but its default (a key this converter would
//! otherwise ignore must not quietly change nothing), or accepted where Confluent's converter does
//! not use it either (serializer options for Java objects, which a converter never hands over).

use std::sync::Arc;
use std::time::Duration;

use connect_api::config::{ConfigType, Importance, ParsedConfig, TypedValue, validators};
use connect_api::{ConfigDef, ConfigKey, ConfigMap, ConnectError, Result};

use crate::avro::data::AvroDataConfig;
use crate::client::ClientSettings;
use crate::json_schema::data::{DecimalFormat, JsonSchemaDataConfig};
use crate::subject::SubjectNameStrategy;

/// The TLS keys, defined with what reads them ([`crate::tls`]).
pub use crate::tls::{
    SSL_KEY_PASSWORD, SSL_KEYSTORE_CERTIFICATE_CHAIN, SSL_KEYSTORE_KEY, SSL_KEYSTORE_LOCATION,
    SSL_KEYSTORE_PASSWORD, SSL_KEYSTORE_TYPE, SSL_TRUSTSTORE_CERTIFICATES, SSL_TRUSTSTORE_LOCATION,
    SSL_TRUSTSTORE_PASSWORD, SSL_TRUSTSTORE_TYPE,
};
pub const SCHEMA_REGISTRY_URL: &str = "schema.registry.url";
pub const BASIC_AUTH_CREDENTIALS_SOURCE: &str = "basic.auth.credentials.source";
pub const BASIC_AUTH_USER_INFO: &str = "basic.auth.user.info";
pub const SCHEMA_REGISTRY_USER_INFO: &str = "schema.registry.basic.auth.user.info";
pub const AUTO_REGISTER_SCHEMAS: &str = "auto.register.schemas";
pub const USE_LATEST_VERSION: &str = "use.latest.version";
pub const LATEST_COMPATIBILITY_STRICT: &str = "latest.compatibility.strict";
pub const LATEST_CACHE_TTL: &str = "latest.cache.ttl.sec";
pub const KEY_SUBJECT_NAME_STRATEGY: &str = "key.subject.name.strategy";
pub const VALUE_SUBJECT_NAME_STRATEGY: &str = "value.subject.name.strategy";
pub const SCHEMAS_CACHE_SIZE: &str = "schemas.cache.config";
pub const ENHANCED_AVRO_SCHEMA_SUPPORT: &str = "enhanced.avro.schema.support";
pub const CONNECT_META_DATA: &str = "connect.meta.data";
pub const SCRUB_INVALID_NAMES: &str = "scrub.invalid.names";
pub const DISCARD_TYPE_DOC_DEFAULT: &str = "discard.type.doc.default";
pub const ALLOW_OPTIONAL_MAP_KEYS: &str = "allow.optional.map.keys";
pub const FLATTEN_SINGLETON_UNIONS: &str = "flatten.singleton.unions";
pub const OBJECT_ADDITIONAL_PROPERTIES: &str = "object.additional.properties";
pub const USE_OPTIONAL_FOR_NON_REQUIRED: &str = "use.optional.for.nonrequired";
pub const DECIMAL_FORMAT: &str = "decimal.format";
pub const GENERALIZED_SUM_TYPE_SUPPORT: &str = "generalized.sum.type.support";
pub const IGNORE_DEFAULT_FOR_NULLABLES: &str = "ignore.default.for.nullables";
pub const MAX_SCHEMAS_PER_SUBJECT: &str = "max.schemas.per.subject";

/// The converter a configuration is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `io.confluent.connect.avro.AvroConverter`.
    Avro,
    /// `io.confluent.connect.json.JsonSchemaConverter`.
    JsonSchema,
    /// `io.confluent.connect.protobuf.ProtobufConverter` (its data keys are defined by
    /// [`crate::protobuf::converter::protobuf_config_def`]).
    Protobuf,
}

/// The converters a key of [`CONFLUENT_KEYS`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// `AbstractKafkaSchemaSerDeConfig` (and the like): every converter.
    All,
    Avro,
    Json,
    Proto,
}

impl Scope {
    fn includes(self, format: Format) -> bool {
        match self {
            Scope::All => true,
            Scope::Avro => format == Format::Avro,
            Scope::Json => format == Format::JsonSchema,
            Scope::Proto => format == Format::Protobuf,
        }
    }
}

/// What this worker does with a key of [`CONFLUENT_KEYS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handling {
    /// Not implemented: a validation error naming it unless it keeps its default.
    Refused,
    /// Accepted whatever its value: Confluent's converter does not use it either (its serializer
    /// and deserializer read it for Java objects, which a converter never hands over).
    Unused,
}

use Handling::{Refused, Unused};
use Scope::{All, Avro, Json, Proto};

/// Confluent keys that are not implemented here: name, type, default, converters, handling.
/// (The implemented ones are defined in [`format_config_def`].)
#[rustfmt::skip]
const CONFLUENT_KEYS: &[(&str, ConfigType, &str, Scope, Handling)] = &[
    ("normalize.schemas", ConfigType::Boolean, "false", All, Refused),
    ("use.schema.id", ConfigType::Int, "-1", All, Refused),
    ("use.schema.guid", ConfigType::String, "", All, Refused),
    ("id.compatibility.strict", ConfigType::Boolean, "true", All, Refused),
    ("propagate.schema.tags", ConfigType::Boolean, "false", All, Refused),
    ("latest.compatibility.strict.check", ConfigType::Boolean, "false", All, Refused),
    ("use.latest.with.metadata", ConfigType::String, "", All, Refused),
    ("bearer.auth.credentials.source", ConfigType::String, "", All, Refused),
    ("bearer.auth.token", ConfigType::Password, "", All, Refused),
    ("proxy.host", ConfigType::String, "", All, Refused),
    ("proxy.port", ConfigType::Int, "-1", All, Refused),
    ("context.name.strategy", ConfigType::Class, "", All, Refused),
    ("schema.reflection", ConfigType::Boolean, "false", All, Refused),
    ("schema.backup.enabled", ConfigType::Boolean, "false", All, Refused),
    ("rule.executors", ConfigType::List, "", All, Refused),
    ("rule.actions", ConfigType::List, "", All, Refused),
    ("key.schema.id.serializer", ConfigType::Class, "", All, Refused),
    ("value.schema.id.serializer", ConfigType::Class, "", All, Refused),
    ("key.schema.id.deserializer", ConfigType::Class, "", All, Refused),
    ("value.schema.id.deserializer", ConfigType::Class, "", All, Refused),
    // AvroDataConfig and the Avro serdes.
    (GENERALIZED_SUM_TYPE_SUPPORT, ConfigType::Boolean, "false", Avro, Refused),
    (IGNORE_DEFAULT_FOR_NULLABLES, ConfigType::Boolean, "false", Avro, Refused),
    ("specific.avro.reader", ConfigType::Boolean, "false", Avro, Refused),
    ("avro.reflection.allow.null", ConfigType::Boolean, "false", Avro, Refused),
    ("avro.use.logical.type.converters", ConfigType::Boolean, "false", Avro, Refused),
    // JsonSchemaDataConfig and the JSON Schema serdes.
    ("ignore.modern.dialects", ConfigType::Boolean, "false", Json, Refused),
    ("preserve.additional.properties", ConfigType::Boolean, "false", Json, Refused),
    ("json.fail.invalid.schema", ConfigType::Boolean, "false", Json, Refused),
    ("json.indent.output", ConfigType::Boolean, "false", Json, Refused),
    ("json.default.property.inclusion", ConfigType::String, "", Json, Refused),
    ("validation.rules.execution", ConfigType::String, "DISABLED", Json, Refused),
    // KafkaProtobufSerializerConfig's (references are never registered: the converter's
    // schemas import only the known types, which Confluent skips too).
    ("reference.lookup.only", ConfigType::Boolean, "false", Proto, Refused),
    ("skip.known.types", ConfigType::Boolean, "true", Proto, Refused),
    ("reference.subject.name.strategy", ConfigType::Class, "io.confluent.kafka.serializers.subject.DefaultReferenceSubjectNameStrategy", Proto, Refused),
    ("validation.rules.execution", ConfigType::String, "DISABLED", Proto, Refused),
    ("json.validate.before.domain.rules", ConfigType::Boolean, "false", Json, Unused),
    ("json.fail.unknown.properties", ConfigType::Boolean, "true", Json, Unused),
    ("json.oneof.for.nullables", ConfigType::Boolean, "true", Json, Unused),
    ("json.write.dates.iso8601", ConfigType::Boolean, "false", Json, Unused),
    ("json.schema.spec.version", ConfigType::String, "draft_7", Json, Unused),
    ("json.schema.scan.packages", ConfigType::List, "", Json, Unused),
    ("json.envelope.detection", ConfigType::Boolean, "true", Json, Unused),
    ("json.key.type", ConfigType::Class, "java.lang.Object", Json, Unused),
    ("json.value.type", ConfigType::Class, "java.lang.Object", Json, Unused),
    ("type.property", ConfigType::String, "javaType", Json, Unused),
    ("json.type.allowed.packages", ConfigType::List, "*", Json, Unused),
];

fn not_implemented(
    name: &'static str,
    default: &'static str,
) -> Arc<dyn connect_api::config::Validator> {
    validators::lambda(
        format!("{default} (not implemented here)"),
        move |key, value| {
            let text = match value {
                None => return Ok(()),
                Some(TypedValue::String(s) | TypedValue::Class(s)) => s.clone(),
                Some(TypedValue::Password(p)) => p.value().to_owned(),
                Some(TypedValue::List(l)) => l.join(","),
                Some(TypedValue::Boolean(b)) => b.to_string(),
                Some(TypedValue::Int(i)) => i.to_string(),
                Some(other) => format!("{other:?}"),
            };
            if text == default {
                Ok(())
            } else {
                Err(ConnectError::invalid_value(
                    key,
                    if name.contains("password") || name.contains("token") {
                        "[hidden]".to_owned()
                    } else {
                        text
                    },
                    &format!(
                        "{name} is not supported by this worker's schema registry converters (leave it at its default, {default:?})"
                    ),
                ))
            }
        },
    )
}

fn key(name: &str, t: ConfigType, doc: &str) -> ConfigKey {
    ConfigKey::new(name, t, Importance::Medium, doc)
}

/// The keys of the Avro converter (`avro`), or those every registry converter takes.
pub fn config_def(avro: bool) -> ConfigDef {
    if avro {
        format_config_def(Format::Avro)
    } else {
        shared_config_def(None)
    }
}

/// Every key of the `format` converter.
pub fn format_config_def(format: Format) -> ConfigDef {
    shared_config_def(Some(format))
}

/// The shared keys, and `format`'s own.
fn shared_config_def(format: Option<Format>) -> ConfigDef {
    let strategy = |name: &str| {
        key(
            name,
            ConfigType::Class,
            "Determines how to construct the subject name under which the schema is registered with the schema registry.",
        )
        .default_value(TypedValue::Class(
            crate::subject::TOPIC_NAME_STRATEGY.to_owned(),
        ))
        .validator(validators::lambda("a subject name strategy", |key, value| {
            let v = value.and_then(TypedValue::as_str).unwrap_or_default();
            SubjectNameStrategy::from_class(v)
                .map(|_| ())
                .map_err(|e| ConnectError::invalid_value(key, v, e.message()))
        }))
    };
    let mut def = ConfigDef::new()
        .define(key(
            SCHEMA_REGISTRY_URL,
            ConfigType::List,
            "Comma-separated list of URLs for Schema Registry instances that can be used to register or look up schemas.",
        ).validator(validators::lambda("a non-empty list of URLs", |key, value| {
            match value {
                Some(TypedValue::List(l)) if !l.is_empty() => Ok(()),
                _ => Err(ConnectError::missing_required(key)),
            }
        })))
        .define(
            key(
                BASIC_AUTH_CREDENTIALS_SOURCE,
                ConfigType::String,
                "Specify how to pick the credentials for the Basic authentication header: URL or USER_INFO.",
            )
            .default_value("URL")
            .validator(validators::one_of(&["URL", "USER_INFO"])),
        )
        .define(key(BASIC_AUTH_USER_INFO, ConfigType::Password, "Specify the user info for the Basic authentication in the form of {username}:{password}.").default_value(TypedValue::Password(connect_api::config::Password::new(""))))
        .define(key(SCHEMA_REGISTRY_USER_INFO, ConfigType::Password, "Specify the user info for the Basic authentication in the form of {username}:{password}.").default_value(TypedValue::Password(connect_api::config::Password::new(""))))
        .define(key(AUTO_REGISTER_SCHEMAS, ConfigType::Boolean, "Specify if the Serializer should attempt to register the Schema with Schema Registry.").default_value(true))
        .define(key(USE_LATEST_VERSION, ConfigType::Boolean, "Use the latest version of the schema in the subject instead of the record's own, which must be compatible with it.").default_value(false))
        .define(key(LATEST_COMPATIBILITY_STRICT, ConfigType::Boolean, "If true, check that the latest schema can read what the record's own schema writes when use.latest.version is true.").default_value(true))
        .define(key(LATEST_CACHE_TTL, ConfigType::Long, "Time in seconds after which the latest schema of a subject is looked up again; -1 for never.").default_value(-1i64))
        .define(strategy(KEY_SUBJECT_NAME_STRATEGY))
        .define(strategy(VALUE_SUBJECT_NAME_STRATEGY))
        .define(key(MAX_SCHEMAS_PER_SUBJECT, ConfigType::Int, "Maximum number of schemas to create or cache locally.").default_value(1000))
        .define(key(SSL_TRUSTSTORE_TYPE, ConfigType::String, "The file format of the trust store file: PEM or PKCS12 (JKS, Java's default: the file says which; a JKS file must be converted).").default_value("JKS").validator(validators::one_of_case_insensitive(crate::tls::STORE_TYPES)))
        .define(key(SSL_TRUSTSTORE_LOCATION, ConfigType::String, "The location of the trust store file.").default_null())
        .define(key(SSL_TRUSTSTORE_PASSWORD, ConfigType::Password, "The password of the trust store file (PKCS12).").default_null())
        .define(key(SSL_TRUSTSTORE_CERTIFICATES, ConfigType::Password, "Trusted certificates in PEM format.").default_null())
        .define(key(SSL_KEYSTORE_TYPE, ConfigType::String, "The file format of the key store file: PEM or PKCS12 (JKS, Java's default: the file says which; a JKS file must be converted).").default_value("JKS").validator(validators::one_of_case_insensitive(crate::tls::STORE_TYPES)))
        .define(key(SSL_KEYSTORE_LOCATION, ConfigType::String, "The location of the key store file (PEM: key and certificate chain; or PKCS12).").default_null())
        .define(key(SSL_KEYSTORE_PASSWORD, ConfigType::Password, "The password of the key store file (PKCS12).").default_null())
        .define(key(SSL_KEY_PASSWORD, ConfigType::Password, "The password of an encrypted PEM private key.").default_null())
        .define(key(SSL_KEYSTORE_KEY, ConfigType::Password, "The private key in PEM format.").default_null())
        .define(key(SSL_KEYSTORE_CERTIFICATE_CHAIN, ConfigType::Password, "The certificate chain in PEM format.").default_null());
    for (name, t, default, scope, handling) in CONFLUENT_KEYS {
        let included = match format {
            Some(f) => scope.includes(f),
            None => *scope == Scope::All,
        };
        if !included {
            continue;
        }
        let doc = match handling {
            Refused => "Not supported by this worker: must keep its default.",
            Unused => {
                "Accepted and unused: Confluent's converter does not use it either (it concerns serializing Java objects)."
            }
        };
        let mut k = key(name, *t, doc);
        k = if default.is_empty() && !matches!(t, ConfigType::List) {
            k.default_null()
        } else {
            k.default_value(*default)
        };
        if *handling == Refused {
            k = k.validator(not_implemented(name, default));
        }
        def = def.define(k);
    }
    let Some(format) = format else {
        return def;
    };
    let flag = |name: &str, default: bool, doc: &str| {
        key(name, ConfigType::Boolean, doc).default_value(default)
    };
    def = def.define(
        key(
            SCHEMAS_CACHE_SIZE,
            ConfigType::Int,
            "Size of the converted schemas cache",
        )
        .default_value(1000),
    );
    if format != Format::Protobuf {
        def = def.define(flag(
            FLATTEN_SINGLETON_UNIONS,
            true,
            "Whether to flatten singleton unions.",
        ));
    }
    match format {
        Format::Avro => def
            .define(flag(ENHANCED_AVRO_SCHEMA_SUPPORT, false, "Enable enhanced schema support to preserve package information and Enums."))
            .define(flag(CONNECT_META_DATA, true, "Allow the Connect converter to add its metadata to the output schema."))
            .define(flag(SCRUB_INVALID_NAMES, false, "Whether to scrub invalid names by replacing invalid characters with valid characters."))
            .define(flag(DISCARD_TYPE_DOC_DEFAULT, false, "Only use the field-level doc and default in Avro and discard the type-level ones."))
            .define(flag(ALLOW_OPTIONAL_MAP_KEYS, false, "Allow optional string map key when converting from Connect Schema to Avro Schema.")),
        Format::JsonSchema => def
            .define(flag(OBJECT_ADDITIONAL_PROPERTIES, true, "Whether to allow additional properties for object schemas."))
            .define(flag(USE_OPTIONAL_FOR_NON_REQUIRED, false, "Whether to set non-required properties to be optional."))
            .define(
                key(DECIMAL_FORMAT, ConfigType::String, "Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'")
                    .default_value("BASE64")
                    .validator(validators::one_of_case_insensitive(&["BASE64", "NUMERIC"])),
            )
            .define(flag(GENERALIZED_SUM_TYPE_SUPPORT, false, "Toggle for enabling/disabling generalized sum type support: interoperability of enum/union with other schema formats"))
            .define(flag(IGNORE_DEFAULT_FOR_NULLABLES, false, "Whether to ignore the default for nullable fields when the value is null")),
        Format::Protobuf => def,
    }
}

/// What a converter is configured with.
#[derive(Debug, Clone)]
pub struct RegistryConverterConfig {
    pub client: ClientSettings,
    pub auto_register: bool,
    pub use_latest_version: bool,
    pub latest_compatibility_strict: bool,
    pub subject_strategy: SubjectNameStrategy,
    pub schemas_cache_size: usize,
    pub avro: AvroDataConfig,
    pub json: JsonSchemaDataConfig,
}

impl RegistryConverterConfig {
    /// Parses a converter's sub-config (`value.converter.` removed) with [`config_def`].
    pub fn parse(props: &ConfigMap, is_key: bool, avro: bool) -> Result<Self> {
        Self::parse_with(config_def(avro), props, is_key)
    }

    /// Parses the `format` converter's sub-config with [`format_config_def`].
    pub fn parse_for(props: &ConfigMap, is_key: bool, format: Format) -> Result<Self> {
        Self::parse_with(format_config_def(format), props, is_key)
    }

    /// Parses with a converter's own definition (the shared keys and its format's keys).
    pub fn parse_with(def: ConfigDef, props: &ConfigMap, is_key: bool) -> Result<Self> {
        let parsed: ParsedConfig = def.parse(props)?;
        // Keys Confluent's converter does not define either: it ignores them; say so once.
        for k in props.keys() {
            if def.key(k).is_none() && k != "converter.type" {
                tracing::warn!(key = %k, "The configuration '{k}' was supplied to the schema registry converter but isn't a known config; it has no effect");
            }
        }
        let mut urls: Vec<String> = parsed.list(SCHEMA_REGISTRY_URL).to_vec();
        let source = parsed
            .string(BASIC_AUTH_CREDENTIALS_SOURCE)
            .unwrap_or("URL");
        let mut user_info = None;
        if source == "USER_INFO" {
            let u = parsed
                .password(BASIC_AUTH_USER_INFO)
                .map(|p| p.value().to_owned())
                .filter(|s| !s.is_empty())
                .or_else(|| {
                    parsed
                        .password(SCHEMA_REGISTRY_USER_INFO)
                        .map(|p| p.value().to_owned())
                        .filter(|s| !s.is_empty())
                });
            user_info = Some(u.ok_or_else(|| {
                ConnectError::config(format!(
                    "{BASIC_AUTH_CREDENTIALS_SOURCE}=USER_INFO needs {BASIC_AUTH_USER_INFO}"
                ))
            })?);
        }
        // URL: the user info of the URLs themselves (stripped from the request URL).
        for u in &mut urls {
            if let Ok(mut parsed_url) = url::Url::parse(u) {
                if !parsed_url.username().is_empty() {
                    if source == "URL" && user_info.is_none() {
                        let decode = |s: &str| {
                            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                                .next()
                                .map(|(_, v)| v.into_owned())
                                .unwrap_or_default()
                        };
                        user_info = Some(format!(
                            "{}:{}",
                            decode(parsed_url.username()),
                            decode(parsed_url.password().unwrap_or_default())
                        ));
                    }
                    let _ = parsed_url.set_username("");
                    let _ = parsed_url.set_password(None);
                    *u = parsed_url.to_string();
                }
            } else {
                return Err(ConnectError::invalid_value(
                    SCHEMA_REGISTRY_URL,
                    u.as_str(),
                    "not a URL",
                ));
            }
        }
        let trust_pem = crate::tls::trust_pem(&parsed)?;
        let identity_pem = crate::tls::identity_pem(&parsed)?;
        let ttl = parsed.long(LATEST_CACHE_TTL).unwrap_or(-1);
        let strategy_key = if is_key {
            KEY_SUBJECT_NAME_STRATEGY
        } else {
            VALUE_SUBJECT_NAME_STRATEGY
        };
        let flag = |k: &str, d: bool| parsed.boolean(k).unwrap_or(d);
        Ok(RegistryConverterConfig {
            client: ClientSettings {
                urls,
                user_info,
                trust_pem,
                identity_pem,
                latest_ttl: (ttl >= 0).then(|| Duration::from_secs(ttl as u64)),
            },
            auto_register: flag(AUTO_REGISTER_SCHEMAS, true),
            use_latest_version: flag(USE_LATEST_VERSION, false),
            latest_compatibility_strict: flag(LATEST_COMPATIBILITY_STRICT, true),
            subject_strategy: SubjectNameStrategy::from_class(
                parsed.class(strategy_key).unwrap_or_default(),
            )?,
            schemas_cache_size: parsed.int(SCHEMAS_CACHE_SIZE).unwrap_or(1000).max(1) as usize,
            avro: AvroDataConfig {
                connect_meta_data: flag(CONNECT_META_DATA, true),
                enhanced_schema_support: flag(ENHANCED_AVRO_SCHEMA_SUPPORT, false),
                scrub_invalid_names: flag(SCRUB_INVALID_NAMES, false),
                discard_type_doc_default: flag(DISCARD_TYPE_DOC_DEFAULT, false),
                allow_optional_map_keys: flag(ALLOW_OPTIONAL_MAP_KEYS, false),
                flatten_singleton_unions: flag(FLATTEN_SINGLETON_UNIONS, true),
                ignore_default_for_nullables: false,
            },
            json: JsonSchemaDataConfig {
                allow_additional_properties: flag(OBJECT_ADDITIONAL_PROPERTIES, true),
                use_optional_for_non_required: flag(USE_OPTIONAL_FOR_NON_REQUIRED, false),
                decimal_format: if parsed
                    .string(DECIMAL_FORMAT)
                    .is_some_and(|f| f.eq_ignore_ascii_case("NUMERIC"))
                {
                    DecimalFormat::Numeric
                } else {
                    DecimalFormat::Base64
                },
                flatten_singleton_unions: flag(FLATTEN_SINGLETON_UNIONS, true),
                generalized_sum_type_support: flag(GENERALIZED_SUM_TYPE_SUPPORT, false),
                ignore_default_for_nullables: flag(IGNORE_DEFAULT_FOR_NULLABLES, false),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> ConfigMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_url_is_required_and_user_info_comes_from_it() {
        let e = RegistryConverterConfig::parse(&props(&[]), false, true).unwrap_err();
        assert!(e.to_string().contains("schema.registry.url"), "{e}");
        let c = RegistryConverterConfig::parse(
            &props(&[(SCHEMA_REGISTRY_URL, "http://u%40x:p@h:1,http://h2:2")]),
            false,
            true,
        )
        .unwrap();
        assert_eq!(c.client.urls, ["http://h:1/", "http://h2:2"]);
        assert_eq!(c.client.user_info.as_deref(), Some("u@x:p"));
    }

    #[test]
    fn a_key_not_implemented_is_an_error_naming_it_unless_default() {
        let base = [(SCHEMA_REGISTRY_URL, "http://h:1")];
        assert!(
            RegistryConverterConfig::parse(
                &props(&[base[0], ("normalize.schemas", "false")]),
                false,
                true
            )
            .is_ok()
        );
        let e = RegistryConverterConfig::parse(
            &props(&[base[0], ("normalize.schemas", "true")]),
            false,
            true,
        )
        .unwrap_err();
        assert!(e.to_string().contains("normalize.schemas"), "{e}");
        let e = RegistryConverterConfig::parse(
            &props(&[base[0], (VALUE_SUBJECT_NAME_STRATEGY, "com.example.Mine")]),
            false,
            true,
        )
        .unwrap_err();
        assert!(e.to_string().contains(VALUE_SUBJECT_NAME_STRATEGY), "{e}");
    }

    /// One table, per converter: JSON Schema's own keys are implemented, refused or unused there
    /// and unknown to Avro (and the other way round); the shared ones are the same for both.
    #[test]
    fn each_converter_has_its_own_keys() {
        let base = (SCHEMA_REGISTRY_URL, "http://h:1");
        let json = |pairs: &[(&str, &str)]| {
            let mut all = vec![base];
            all.extend_from_slice(pairs);
            RegistryConverterConfig::parse_for(&props(&all), false, Format::JsonSchema)
        };
        let c = json(&[
            (DECIMAL_FORMAT, "numeric"),
            (OBJECT_ADDITIONAL_PROPERTIES, "false"),
            (USE_OPTIONAL_FOR_NON_REQUIRED, "true"),
            (GENERALIZED_SUM_TYPE_SUPPORT, "true"),
            (IGNORE_DEFAULT_FOR_NULLABLES, "true"),
            (FLATTEN_SINGLETON_UNIONS, "false"),
            (SCHEMAS_CACHE_SIZE, "5"),
            // Unused by Confluent's converter too: any value.
            ("json.oneof.for.nullables", "false"),
            ("json.write.dates.iso8601", "true"),
            ("json.fail.unknown.properties", "false"),
            ("json.value.type", "com.example.Pojo"),
        ])
        .unwrap();
        assert_eq!(c.json.decimal_format, DecimalFormat::Numeric);
        assert!(!c.json.allow_additional_properties);
        assert!(c.json.use_optional_for_non_required);
        assert!(c.json.generalized_sum_type_support);
        assert!(c.json.ignore_default_for_nullables);
        assert!(!c.json.flatten_singleton_unions);
        assert_eq!(c.schemas_cache_size, 5);
        assert_eq!(json(&[]).unwrap().json, JsonSchemaDataConfig::default());
        for (k, v) in [
            ("json.fail.invalid.schema", "true"),
            ("json.indent.output", "true"),
            ("ignore.modern.dialects", "true"),
            ("preserve.additional.properties", "true"),
            ("validation.rules.execution", "AFTER_DOMAIN_RULES"),
            ("normalize.schemas", "true"),
        ] {
            let e = json(&[(k, v)]).unwrap_err();
            assert!(e.to_string().contains(k), "{e}");
            assert!(
                json(&[(
                    k,
                    if v == "AFTER_DOMAIN_RULES" {
                        "DISABLED"
                    } else {
                        "false"
                    }
                )])
                .is_ok()
            );
        }
        assert!(json(&[(DECIMAL_FORMAT, "HEX")]).is_err());
        // Avro: its keys as before; JSON Schema's are not its own.
        let avro = config_def(true);
        assert!(
            avro.key(CONNECT_META_DATA).is_some() && avro.key(FLATTEN_SINGLETON_UNIONS).is_some()
        );
        assert!(
            avro.key(DECIMAL_FORMAT).is_none() && avro.key("json.fail.invalid.schema").is_none()
        );
        let e = RegistryConverterConfig::parse(
            &props(&[base, (GENERALIZED_SUM_TYPE_SUPPORT, "true")]),
            false,
            true,
        )
        .unwrap_err();
        assert!(e.to_string().contains(GENERALIZED_SUM_TYPE_SUPPORT), "{e}");
        let js = format_config_def(Format::JsonSchema);
        assert!(js.key(CONNECT_META_DATA).is_none() && js.key("specific.avro.reader").is_none());
        assert!(config_def(false).key(SCHEMAS_CACHE_SIZE).is_none());
    }
}
