//! Apicurio Registry's converter class names (`io.apicurio.registry.utils.converter.AvroConverter`
//! and `ProtobufConverter` ([`protobuf`])) with Apicurio's keys, for the data Apicurio's serdes
//! 3.x write by default: the schema's content
//! id as a 4-byte int after magic byte 0 (Apicurio's `Default4ByteIdHandler`), which is the id
//! Apicurio's Confluent-compatible API (`/apis/ccompat/v7`) answers, and the artifact
//! `<topic>-value` in the default group, which is that API's subject. So Apicurio's keys are
//! translated into the Confluent converter's and the same converter runs; Apicurio settings
//! that would write another format (ids in headers, 8-byte global ids, JSON-encoded Avro, another
//! group) are validation errors naming the key.

pub mod protobuf;
pub mod protobuf_data;

use connect_api::config::{ConfigType, Importance, TypedValue, validators};
use connect_api::{ConfigDef, ConfigKey, ConfigMap, ConnectError, Result};

use crate::config as c;

pub const APICURIO_AVRO_CONVERTER: &str = "io.apicurio.registry.utils.converter.AvroConverter";
pub use protobuf::APICURIO_PROTOBUF_CONVERTER;

/// Which of Apicurio's converters: the shared keys, and each one's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApicurioFormat {
    Avro,
    Protobuf,
}

impl ApicurioFormat {
    pub fn class(self) -> &'static str {
        match self {
            Self::Avro => APICURIO_AVRO_CONVERTER,
            Self::Protobuf => APICURIO_PROTOBUF_CONVERTER,
        }
    }
}

/// Apicurio's Protobuf serde settings (`ProtobufSerializerConfig` / `ProtobufDeserializerConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtobufSerde {
    /// `apicurio.registry.serde.send-type-ref` (default true): a `Ref` before the message.
    pub send_type_ref: bool,
    /// `apicurio.registry.serde.send-indexes` (default false): message indexes after the Ref.
    pub send_indexes: bool,
    /// `apicurio.registry.serde.read-type-ref` (default true).
    pub read_type_ref: bool,
    /// `apicurio.registry.serde.read-indexes` (default false).
    pub read_indexes: bool,
}

const SEND_TYPE_REF: &str = "apicurio.registry.serde.send-type-ref";
const SEND_INDEXES: &str = "apicurio.registry.serde.send-indexes";
const READ_TYPE_REF: &str = "apicurio.registry.serde.read-type-ref";
const READ_INDEXES: &str = "apicurio.registry.serde.read-indexes";
const VALIDATION_ENABLED: &str = "apicurio.registry.serde.validation-enabled";

const URL: &str = "apicurio.registry.url";
const AUTO_REGISTER: &str = "apicurio.registry.auto-register";
const FIND_LATEST: &str = "apicurio.registry.find-latest";
const STRATEGY: &str = "apicurio.registry.artifact-resolver-strategy";
const USERNAME: &str = "apicurio.registry.auth.username";
const PASSWORD: &str = "apicurio.registry.auth.password";
const TLS_CERTIFICATES: &str = "apicurio.registry.tls.certificates";
const TLS_TRUSTSTORE_LOCATION: &str = "apicurio.registry.tls.truststore.location";
const TLS_TRUSTSTORE_TYPE: &str = "apicurio.registry.tls.truststore.type";

/// Apicurio keys that must keep the value that gives the format above (or mean nothing here).
const FIXED: &[(&str, &str)] = &[
    ("apicurio.registry.use-id", "contentId"),
    (
        "apicurio.registry.id-handler",
        "io.apicurio.registry.serde.Default4ByteIdHandler",
    ),
    ("apicurio.registry.headers.enabled", "false"),
    ("apicurio.registry.artifact.group-id", "default"),
    ("apicurio.registry.dereference-schema", "false"),
    ("apicurio.registry.canonicalize", "false"),
    ("apicurio.registry.serde.contract-rules.enabled", "false"),
];

/// Each converter's own keys that must keep their value.
fn fixed_for(format: ApicurioFormat) -> &'static [(&'static str, &'static str)] {
    match format {
        ApicurioFormat::Avro => &[("apicurio.registry.avro.encoding", "BINARY")],
        // Java-class lookups of the deserializer (the converter reads DynamicMessages).
        ApicurioFormat::Protobuf => &[
            ("apicurio.protobuf.derive.class", "false"),
            ("apicurio.protobuf.fallback.on-schema-error", "false"),
        ],
    }
}

/// Apicurio keys accepted with no effect here (client tuning this client does its own way).
const NO_EFFECT: &[&str] = &[
    "apicurio.registry.cache-latest",
    "apicurio.registry.check-period-ms",
    "apicurio.registry.retry-count",
    "apicurio.registry.retry-backoff-ms",
    "apicurio.registry.url.version",
];

/// Apicurio's artifact resolver strategies and the subject strategy that names the same artifact.
fn subject_strategy(apicurio: &str) -> Option<&'static str> {
    Some(match apicurio.rsplit('.').next().unwrap_or_default() {
        "" | "TopicIdStrategy" | "DynamicArtifactReferenceResolverStrategy" => {
            crate::subject::TOPIC_NAME_STRATEGY
        }
        "RecordIdStrategy" => crate::subject::RECORD_NAME_STRATEGY,
        "TopicRecordIdStrategy" => crate::subject::TOPIC_RECORD_NAME_STRATEGY,
        _ => return None,
    })
}

/// The Confluent-compatible API beside Apicurio's native one (`.../apis/registry/v3`).
fn ccompat_url(url: &str) -> Option<String> {
    let url = url.trim().trim_end_matches('/');
    for native in ["/apis/registry/v3", "/apis/registry/v2"] {
        if let Some(base) = url.strip_suffix(native) {
            return Some(format!("{base}/apis/ccompat/v7"));
        }
    }
    if url.ends_with("/apis/ccompat/v7") {
        return Some(url.to_owned());
    }
    let after_scheme = url.split_once("://").map(|(_, r)| r)?;
    (!after_scheme.contains('/')).then(|| format!("{url}/apis/ccompat/v7"))
}

fn key(name: &str, t: ConfigType, doc: &str) -> ConfigKey {
    ConfigKey::new(name, t, Importance::Medium, doc)
}

/// The keys `io.apicurio.registry.utils.converter.AvroConverter` takes (Avro's data keys as for
/// Confluent's class).
pub fn config_def() -> ConfigDef {
    config_def_for(ApicurioFormat::Avro)
}

/// The keys of Apicurio's `format` converter.
pub fn config_def_for(format: ApicurioFormat) -> ConfigDef {
    let class = format.class();
    let mut def = ConfigDef::new()
        .define(
            key(URL, ConfigType::String, "The URL of Apicurio Registry's API (e.g. http://registry:8080/apis/registry/v3).")
                .validator(validators::lambda("a registry URL", |k, v| {
                    let v = v.and_then(TypedValue::as_str).unwrap_or_default();
                    match ccompat_url(v) {
                        Some(_) => Ok(()),
                        None if v.is_empty() => Err(ConnectError::missing_required(k)),
                        None => Err(ConnectError::invalid_value(k, v, "expected the registry's /apis/registry/v3 (or v2) URL")),
                    }
                })),
        )
        .define(key(AUTO_REGISTER, ConfigType::Boolean, "Register the schema when it is not yet in the registry.").default_value(false))
        .define({
            let k = key(FIND_LATEST, ConfigType::Boolean, "Write with the latest version of the artifact.").default_value(false);
            if format == ApicurioFormat::Protobuf {
                k.validator(validators::lambda("false", |k, v| match v {
                    Some(TypedValue::Boolean(true)) => Err(ConnectError::invalid_value(k, "true", &format!(
                        "{k}=true is not supported by this worker's {APICURIO_PROTOBUF_CONVERTER} (it needs Apicurio's Protobuf compatibility check)"
                    ))),
                    _ => Ok(()),
                }))
            } else {
                k
            }
        })
        .define(
            key(STRATEGY, ConfigType::Class, "How the artifact is named: TopicIdStrategy, RecordIdStrategy or TopicRecordIdStrategy.")
                .default_null()
                .validator(validators::lambda("an artifact resolver strategy", move |k, v| {
                    let v = v.and_then(TypedValue::as_str).unwrap_or_default();
                    match subject_strategy(v) {
                        // Apicurio's record strategies read an Avro schema's name: Avro only.
                        Some(s) if format == ApicurioFormat::Protobuf && s != crate::subject::TOPIC_NAME_STRATEGY => {
                            Err(ConnectError::invalid_value(k, v, &format!(
                                "Apicurio's record strategies are for Avro: this worker's {APICURIO_PROTOBUF_CONVERTER} takes TopicIdStrategy"
                            )))
                        }
                        Some(_) => Ok(()),
                        None => Err(ConnectError::invalid_value(k, v, "this worker has TopicIdStrategy, RecordIdStrategy and TopicRecordIdStrategy")),
                    }
                })),
        )
        .define(key(USERNAME, ConfigType::String, "User for HTTP basic authentication.").default_null())
        .define(key(PASSWORD, ConfigType::Password, "Password for HTTP basic authentication.").default_null())
        .define(key(TLS_CERTIFICATES, ConfigType::Password, "Trusted certificates (PEM).").default_null())
        .define(key(TLS_TRUSTSTORE_LOCATION, ConfigType::String, "Trust store file (PEM here).").default_null())
        .define(key(TLS_TRUSTSTORE_TYPE, ConfigType::String, "Trust store type: PEM here.").default_value("JKS"));
    for (name, required) in FIXED.iter().chain(fixed_for(format)) {
        let required: &'static str = required;
        let name: &'static str = name;
        def = def.define(
            key(name, ConfigType::String, "Must keep the value that writes the Confluent-compatible format.")
                .default_null()
                .validator(validators::lambda(required, move |k, v| {
                    let v = v.and_then(TypedValue::as_str).unwrap_or(required);
                    if v.eq_ignore_ascii_case(required) {
                        Ok(())
                    } else {
                        Err(ConnectError::invalid_value(k, v, &format!(
                            "this worker's {class} writes and reads the 4-byte content id after magic byte 0 (Apicurio 3's default): {name} must be {required}"
                        )))
                    }
                })),
        );
    }
    for name in NO_EFFECT {
        def = def.define(key(name, ConfigType::String, "Accepted; no effect here.").default_null());
    }
    if format == ApicurioFormat::Protobuf {
        let flag = |name: &str, default: bool, doc: &str| {
            key(name, ConfigType::Boolean, doc).default_value(default)
        };
        def = def
            .define(flag(
                SEND_TYPE_REF,
                true,
                "Write a Ref naming the message type before the message.",
            ))
            .define(flag(
                SEND_INDEXES,
                false,
                "Write the message indexes (after the Ref).",
            ))
            .define(flag(
                READ_TYPE_REF,
                true,
                "Read the Ref before the message.",
            ))
            .define(flag(
                READ_INDEXES,
                false,
                "Read message indexes before the Ref.",
            ))
            .define(flag(
                VALIDATION_ENABLED,
                true,
                "Accepted; no effect here: the schema written is always the record's own.",
            ));
    }
    let data_keys = match format {
        ApicurioFormat::Avro => c::config_def(true),
        ApicurioFormat::Protobuf => c::format_config_def(c::Format::Protobuf),
    };
    for k in data_keys.keys() {
        if !k.name.starts_with("schema.registry.")
            && !k.name.starts_with("basic.auth.")
            && !k.name.ends_with(".subject.name.strategy")
            && !matches!(
                k.name.as_str(),
                c::AUTO_REGISTER_SCHEMAS | c::USE_LATEST_VERSION | c::LATEST_COMPATIBILITY_STRICT
            )
        {
            def = def.define(k.clone());
        }
    }
    def
}

/// Apicurio's keys as the Confluent converter's (after [`config_def`] accepted them).
pub fn translate(props: &ConfigMap) -> Result<ConfigMap> {
    translate_for(props, ApicurioFormat::Avro).map(|(out, _)| out)
}

/// Apicurio's Protobuf converter's keys as the Confluent converter's, and its serde settings.
pub fn translate_protobuf(props: &ConfigMap) -> Result<(ConfigMap, ProtobufSerde)> {
    translate_for(props, ApicurioFormat::Protobuf)
}

fn translate_for(props: &ConfigMap, format: ApicurioFormat) -> Result<(ConfigMap, ProtobufSerde)> {
    let def = config_def_for(format);
    let parsed = def.parse(props)?;
    let mut out = ConfigMap::new();
    for (k, v) in props {
        if !k.starts_with("apicurio.") {
            out.insert(k.clone(), v.clone());
        } else if def.key(k).is_none() {
            return Err(ConnectError::invalid_value(
                k,
                v,
                &format!("{k} is not supported by this worker's {}", format.class()),
            ));
        }
    }
    let serde_flag = |k: &str, default: bool| {
        if format == ApicurioFormat::Protobuf {
            parsed.boolean(k).unwrap_or(default)
        } else {
            default
        }
    };
    let serde = ProtobufSerde {
        send_type_ref: serde_flag(SEND_TYPE_REF, true),
        send_indexes: serde_flag(SEND_INDEXES, false),
        read_type_ref: serde_flag(READ_TYPE_REF, true),
        read_indexes: serde_flag(READ_INDEXES, false),
    };
    let url = parsed.string(URL).unwrap_or_default();
    out.insert(
        c::SCHEMA_REGISTRY_URL.into(),
        ccompat_url(url).ok_or_else(|| ConnectError::missing_required(URL))?,
    );
    let flag = |k: &str| parsed.boolean(k).unwrap_or(false).to_string();
    out.insert(c::AUTO_REGISTER_SCHEMAS.into(), flag(AUTO_REGISTER));
    out.insert(c::USE_LATEST_VERSION.into(), flag(FIND_LATEST));
    // Apicurio's serializer writes with the latest version without a compatibility check.
    out.insert(c::LATEST_COMPATIBILITY_STRICT.into(), "false".into());
    let strategy = subject_strategy(parsed.class(STRATEGY).unwrap_or_default()).unwrap_or_default();
    out.insert(c::KEY_SUBJECT_NAME_STRATEGY.into(), strategy.into());
    out.insert(c::VALUE_SUBJECT_NAME_STRATEGY.into(), strategy.into());
    if let Some(user) = parsed.string(USERNAME) {
        let password = parsed.password(PASSWORD).map(|p| p.value().to_owned());
        out.insert(c::BASIC_AUTH_CREDENTIALS_SOURCE.into(), "USER_INFO".into());
        out.insert(
            c::BASIC_AUTH_USER_INFO.into(),
            format!("{user}:{}", password.unwrap_or_default()),
        );
    }
    if let Some(certs) = parsed.password(TLS_CERTIFICATES) {
        out.insert(
            c::SSL_TRUSTSTORE_CERTIFICATES.into(),
            certs.value().to_owned(),
        );
    }
    if let Some(loc) = parsed.string(TLS_TRUSTSTORE_LOCATION) {
        out.insert(c::SSL_TRUSTSTORE_LOCATION.into(), loc.to_owned());
        out.insert(
            c::SSL_TRUSTSTORE_TYPE.into(),
            parsed
                .string(TLS_TRUSTSTORE_TYPE)
                .unwrap_or("JKS")
                .to_owned(),
        );
    }
    Ok((out, serde))
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
    fn apicurio_keys_become_the_confluent_converters() {
        let out = translate(&props(&[
            (URL, "http://reg:8080/apis/registry/v3"),
            (AUTO_REGISTER, "true"),
            (
                STRATEGY,
                "io.apicurio.registry.serde.strategy.RecordIdStrategy",
            ),
            (USERNAME, "u"),
            (PASSWORD, "p"),
            ("connect.meta.data", "false"),
        ]))
        .unwrap();
        assert_eq!(
            out[c::SCHEMA_REGISTRY_URL],
            "http://reg:8080/apis/ccompat/v7"
        );
        assert_eq!(out[c::AUTO_REGISTER_SCHEMAS], "true");
        assert_eq!(
            out[c::VALUE_SUBJECT_NAME_STRATEGY],
            crate::subject::RECORD_NAME_STRATEGY
        );
        assert_eq!(out[c::BASIC_AUTH_USER_INFO], "u:p");
        assert_eq!(out["connect.meta.data"], "false");
        crate::config::RegistryConverterConfig::parse(&out, false, true).unwrap();
    }

    #[test]
    fn another_wire_format_is_an_error_naming_the_key() {
        for (k, v) in [
            ("apicurio.registry.headers.enabled", "true"),
            ("apicurio.registry.use-id", "globalId"),
            ("apicurio.registry.artifact.group-id", "orders"),
            ("apicurio.registry.fallback.artifact-id", "x"),
        ] {
            let e = translate(&props(&[(URL, "http://reg:8080"), (k, v)])).unwrap_err();
            assert!(e.to_string().contains(k), "{k}: {e}");
        }
        assert!(translate(&props(&[])).is_err());
    }
}
