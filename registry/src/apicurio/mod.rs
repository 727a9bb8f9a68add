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
/// Served by [`crate::ext_json`].
pub const APICURIO_EXT_JSON_CONVERTER: &str =
    "io.apicurio.registry.utils.converter.ExtJsonConverter";
pub use protobuf::APICURIO_PROTOBUF_CONVERTER;

/// Which of Apicurio's converters: the shared keys, and each one's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApicurioFormat {
    Avro,
    Protobuf,
    /// `ExtJsonConverter` ([`crate::ext_json`]): Apicurio's own API, JsonConverter's keys.
    ExtJson,
}

impl ApicurioFormat {
    pub fn class(self) -> &'static str {
        match self {
            Self::Avro => APICURIO_AVRO_CONVERTER,
            Self::Protobuf => APICURIO_PROTOBUF_CONVERTER,
            Self::ExtJson => APICURIO_EXT_JSON_CONVERTER,
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
const TLS_TRUSTSTORE_PASSWORD: &str = "apicurio.registry.tls.truststore.password";
const TLS_KEYSTORE_LOCATION: &str = "apicurio.registry.tls.keystore.location";
const TLS_KEYSTORE_TYPE: &str = "apicurio.registry.tls.keystore.type";
const TLS_KEYSTORE_PASSWORD: &str = "apicurio.registry.tls.keystore.password";
const TLS_CLIENT_CERTIFICATE: &str = "apicurio.registry.tls.client-certificate";
const TLS_CLIENT_KEY: &str = "apicurio.registry.tls.client-key";

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
    // Never weaker than configured: certificates are verified, host names too.
    ("apicurio.registry.tls.trust-all", "false"),
    ("apicurio.registry.tls.verify-host", "true"),
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
        ApicurioFormat::ExtJson => &[],
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

/// Apicurio's own API (`.../apis/registry/v3`) at the same registry as [`ccompat_url`].
pub(crate) fn native_url(url: &str) -> Option<String> {
    ccompat_url(url).map(|c| {
        format!(
            "{}/apis/registry/v3",
            c.trim_end_matches("/apis/ccompat/v7")
        )
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
    let mut def = registry_config_def(format);
    let data_keys = match format {
        ApicurioFormat::Avro => c::config_def(true),
        ApicurioFormat::Protobuf => c::format_config_def(c::Format::Protobuf),
        ApicurioFormat::ExtJson => return def,
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

/// Apicurio's registry keys (and its serde's for `format`), without the data keys.
pub(crate) fn registry_config_def(format: ApicurioFormat) -> ConfigDef {
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
        .define(key(TLS_CERTIFICATES, ConfigType::Password, "Trusted certificates: PEM text, or PEM files separated by commas.").default_null())
        .define(key(TLS_TRUSTSTORE_LOCATION, ConfigType::String, "Trust store file (PEM or PKCS12).").default_null())
        .define(key(TLS_TRUSTSTORE_TYPE, ConfigType::String, "Trust store type: PEM, PKCS12 (P12) or JKS (the file says which; a JKS file must be converted).").default_value("JKS"))
        .define(key(TLS_TRUSTSTORE_PASSWORD, ConfigType::Password, "Trust store password (PKCS12).").default_null())
        .define(key(TLS_KEYSTORE_LOCATION, ConfigType::String, "Key store file (PEM or PKCS12), for mutual TLS.").default_null())
        .define(key(TLS_KEYSTORE_TYPE, ConfigType::String, "Key store type: PEM, PKCS12 (P12) or JKS (the file says which; a JKS file must be converted).").default_value("JKS"))
        .define(key(TLS_KEYSTORE_PASSWORD, ConfigType::Password, "Key store password (PKCS12).").default_null())
        .define(key(TLS_CLIENT_CERTIFICATE, ConfigType::Password, "Client certificate: PEM text or a PEM file (ignored with a key store).").default_null())
        .define(key(TLS_CLIENT_KEY, ConfigType::Password, "Client private key: PEM text or a PEM file.").default_null());
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
                            "this worker's {class} writes and reads the format of Apicurio 3's defaults (the content id in the record, the default group): {name} must be {required}"
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
    def
}

/// PEM text as is, or the PEM files named (separated by commas), as Apicurio reads its TLS keys.
fn pem_text_or_files(key: &str, value: &str) -> Result<String> {
    if value.contains("-----BEGIN") {
        return Ok(value.to_owned());
    }
    let mut out = String::new();
    for path in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        out.push_str(&std::fs::read_to_string(path).map_err(|e| {
            ConnectError::config(format!(
                "Invalid value for configuration {key}: {path}: {e}"
            ))
        })?);
        out.push('\n');
    }
    Ok(out)
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
    translate_with(config_def_for(format), format, props)
}

/// Apicurio's keys as the Confluent converter's, after `def` (the keys of `format`'s class)
/// accepted them.
pub(crate) fn translate_with(
    def: ConfigDef,
    format: ApicurioFormat,
    props: &ConfigMap,
) -> Result<(ConfigMap, ProtobufSerde)> {
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
            pem_text_or_files(TLS_CERTIFICATES, certs.value())?,
        );
    }
    let store_type = |k: &str| {
        let t = parsed.string(k).unwrap_or("JKS").to_ascii_uppercase();
        if t == "P12" { "PKCS12".to_owned() } else { t }
    };
    let password = |k: &str| parsed.password(k).map(|p| p.value().to_owned());
    if let Some(loc) = parsed.string(TLS_TRUSTSTORE_LOCATION) {
        out.insert(c::SSL_TRUSTSTORE_LOCATION.into(), loc.to_owned());
        out.insert(
            c::SSL_TRUSTSTORE_TYPE.into(),
            store_type(TLS_TRUSTSTORE_TYPE),
        );
        if let Some(p) = password(TLS_TRUSTSTORE_PASSWORD) {
            out.insert(c::SSL_TRUSTSTORE_PASSWORD.into(), p);
        }
    }
    if let Some(loc) = parsed.string(TLS_KEYSTORE_LOCATION) {
        out.insert(c::SSL_KEYSTORE_LOCATION.into(), loc.to_owned());
        out.insert(c::SSL_KEYSTORE_TYPE.into(), store_type(TLS_KEYSTORE_TYPE));
        if let Some(p) = password(TLS_KEYSTORE_PASSWORD) {
            out.insert(c::SSL_KEYSTORE_PASSWORD.into(), p);
        }
    } else if let (Some(cert), Some(key)) = (
        parsed.password(TLS_CLIENT_CERTIFICATE),
        parsed.password(TLS_CLIENT_KEY),
    ) {
        out.insert(
            c::SSL_KEYSTORE_CERTIFICATE_CHAIN.into(),
            pem_text_or_files(TLS_CLIENT_CERTIFICATE, cert.value())?,
        );
        out.insert(
            c::SSL_KEYSTORE_KEY.into(),
            pem_text_or_files(TLS_CLIENT_KEY, key.value())?,
        );
    } else if parsed.password(TLS_CLIENT_CERTIFICATE).is_some()
        || parsed.password(TLS_CLIENT_KEY).is_some()
    {
        return Err(ConnectError::config(format!(
            "{TLS_CLIENT_CERTIFICATE} and {TLS_CLIENT_KEY} go together"
        )));
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
