//! TLS settings of the REST listeners (rustls on the aws-lc-rs provider) and the certificates the
//! worker's own client trusts and presents when it forwards to an `https://` leader.
//!
//! Connect reads Java keystores (`ssl.keystore.location`, JKS or PKCS12) for its Jetty
//! listeners; this worker reads PEM. Settings for `listeners` come from the keys under
//! `listeners.https.` when any key has that prefix (all or nothing, as in Connect), else from the
//! top-level keys; `admin.listeners` use `admin.listeners.https.` the same way. In that set:
//!
//! | key | meaning |
//! | --- | --- |
//! | `ssl.certificate.location` + `ssl.key.location` | PEM certificate chain (leaf first) and PEM private key (PKCS#8, PKCS#1 or SEC1, unencrypted) |
//! | `ssl.keystore.location` with `ssl.keystore.type=PEM` | one PEM file holding the key and the chain (Kafka's PEM keystore) |
//! | `ssl.keystore.certificate.chain` + `ssl.keystore.key` | the same, inline (Kafka's PEM keys) |
//! | `ssl.ca.location`, or `ssl.truststore.location` with `ssl.truststore.type=PEM`, or `ssl.truststore.certificates` | PEM CA certificates: client certificates are checked against them, and the worker's client trusts them for other workers |
//! | `ssl.client.auth` | `none` (default), `requested`, `required` |

use std::collections::BTreeMap;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;

use crate::config::WorkerConfig;

/// Unusable TLS settings of a REST listener (the message names the key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RestTlsError(pub String);

/// Prefix of the HTTPS settings of `listeners`.
pub const LISTENERS_HTTPS_PREFIX: &str = "listeners.https.";
/// Prefix of the HTTPS settings of `admin.listeners`.
pub const ADMIN_LISTENERS_HTTPS_PREFIX: &str = "admin.listeners.https.";

pub const SSL_CERTIFICATE_LOCATION: &str = "ssl.certificate.location";
pub const SSL_KEY_LOCATION: &str = "ssl.key.location";
pub const SSL_KEY_PASSWORD: &str = "ssl.key.password";
pub const SSL_KEYSTORE_LOCATION: &str = "ssl.keystore.location";
pub const SSL_KEYSTORE_TYPE: &str = "ssl.keystore.type";
pub const SSL_KEYSTORE_KEY: &str = "ssl.keystore.key";
pub const SSL_KEYSTORE_CERTIFICATE_CHAIN: &str = "ssl.keystore.certificate.chain";
pub const SSL_CA_LOCATION: &str = "ssl.ca.location";
pub const SSL_TRUSTSTORE_LOCATION: &str = "ssl.truststore.location";
pub const SSL_TRUSTSTORE_TYPE: &str = "ssl.truststore.type";
pub const SSL_TRUSTSTORE_CERTIFICATES: &str = "ssl.truststore.certificates";
pub const SSL_CLIENT_AUTH: &str = "ssl.client.auth";

/// `ssl.client.auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    None,
    Requested,
    Required,
}

/// The PEM material of one listener kind. Errors name the key (with its prefix, if any).
#[derive(Debug, Clone)]
pub struct TlsSettings {
    /// The keys' prefix (`listeners.https.`), or empty for the top-level keys.
    pub prefix: String,
    /// Certificate chain and key, PEM; `None` when neither is configured.
    pub identity: Option<Identity>,
    /// CA certificates, PEM; `None` when none is configured.
    pub ca_pem: Option<Vec<u8>>,
    pub client_auth: ClientAuth,
}

/// A certificate chain and its private key.
#[derive(Clone)]
pub struct Identity {
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity").finish_non_exhaustive()
    }
}

/// Connect's `valuesWithPrefixAllOrNothing`: the keys under `prefix` (stripped) when any key
/// has it, else every key.
fn all_or_nothing(config: &WorkerConfig, prefix: &str) -> (String, BTreeMap<String, String>) {
    let prefixed = config.with_prefix(prefix);
    if prefixed.is_empty() {
        (String::new(), config.raw.clone())
    } else {
        (prefix.to_owned(), prefixed)
    }
}

fn read(path: &str, key: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path.trim()).map_err(|e| format!("{key}: cannot read {path}: {e}"))
}

impl TlsSettings {
    /// The settings under `prefix` (see the module docs).
    /// The settings of the listeners under `prefix`; the error names the key at fault.
    pub fn from_config(config: &WorkerConfig, prefix: &str) -> Result<Self, RestTlsError> {
        Self::read_config(config, prefix).map_err(RestTlsError)
    }

    fn read_config(config: &WorkerConfig, prefix: &str) -> Result<Self, String> {
        let (prefix, m) = all_or_nothing(config, prefix);
        let key = |k: &str| format!("{prefix}{k}");
        let get = |k: &str| m.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let pem_type = |type_key: &str| -> Result<(), String> {
            let t = get(type_key).unwrap_or("JKS");
            if t.eq_ignore_ascii_case("PEM") {
                Ok(())
            } else {
                Err(format!(
                    "{} is {t}: this worker reads PEM only; set {} to PEM or use {} and {}",
                    key(type_key),
                    key(type_key),
                    key(SSL_CERTIFICATE_LOCATION),
                    key(SSL_KEY_LOCATION)
                ))
            }
        };
        let identity = if let Some(cert) = get(SSL_CERTIFICATE_LOCATION) {
            let key_path = get(SSL_KEY_LOCATION).ok_or_else(|| {
                format!(
                    "{} is set but {} is not",
                    key(SSL_CERTIFICATE_LOCATION),
                    key(SSL_KEY_LOCATION)
                )
            })?;
            Some(Identity {
                cert_pem: read(cert, &key(SSL_CERTIFICATE_LOCATION))?,
                key_pem: read(key_path, &key(SSL_KEY_LOCATION))?,
            })
        } else if let (Some(chain), Some(k)) =
            (get(SSL_KEYSTORE_CERTIFICATE_CHAIN), get(SSL_KEYSTORE_KEY))
        {
            Some(Identity {
                cert_pem: chain.as_bytes().to_vec(),
                key_pem: k.as_bytes().to_vec(),
            })
        } else if let Some(store) = get(SSL_KEYSTORE_LOCATION) {
            pem_type(SSL_KEYSTORE_TYPE)?;
            let pem = read(store, &key(SSL_KEYSTORE_LOCATION))?;
            Some(Identity {
                cert_pem: pem.clone(),
                key_pem: pem,
            })
        } else {
            None
        };
        let ca_pem = if let Some(ca) = get(SSL_CA_LOCATION) {
            Some(read(ca, &key(SSL_CA_LOCATION))?)
        } else if let Some(certs) = get(SSL_TRUSTSTORE_CERTIFICATES) {
            Some(certs.as_bytes().to_vec())
        } else if let Some(store) = get(SSL_TRUSTSTORE_LOCATION) {
            pem_type(SSL_TRUSTSTORE_TYPE)?;
            Some(read(store, &key(SSL_TRUSTSTORE_LOCATION))?)
        } else {
            None
        };
        let client_auth = match get(SSL_CLIENT_AUTH)
            .unwrap_or("none")
            .to_ascii_lowercase()
            .as_str()
        {
            "none" => ClientAuth::None,
            "requested" => ClientAuth::Requested,
            "required" => ClientAuth::Required,
            other => {
                return Err(format!(
                    "Invalid value {other} for configuration {}: String must be one of: required, requested, none",
                    key(SSL_CLIENT_AUTH)
                ));
            }
        };
        let settings = TlsSettings {
            prefix,
            identity,
            ca_pem,
            client_auth,
        };
        // Parse now, so a bad file fails start-up naming the key.
        if let Some(id) = &settings.identity {
            settings.chain(id)?;
            settings.private_key(id)?;
        }
        settings.ca_certs()?;
        Ok(settings)
    }

    fn key(&self, k: &str) -> String {
        format!("{}{k}", self.prefix)
    }

    fn chain(&self, id: &Identity) -> Result<Vec<CertificateDer<'static>>, String> {
        let chain = CertificateDer::pem_slice_iter(&id.cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                format!(
                    "{}: bad PEM certificate: {e}",
                    self.key(SSL_CERTIFICATE_LOCATION)
                )
            })?;
        if chain.is_empty() {
            return Err(format!(
                "{}: no PEM certificate found",
                self.key(SSL_CERTIFICATE_LOCATION)
            ));
        }
        Ok(chain)
    }

    fn private_key(&self, id: &Identity) -> Result<PrivateKeyDer<'static>, String> {
        PrivateKeyDer::from_pem_slice(&id.key_pem).map_err(|e| {
            format!(
                "{}: no unencrypted PEM private key (PKCS#8, PKCS#1 or SEC1) found ({e}); encrypted keys ({}) are not supported",
                self.key(SSL_KEY_LOCATION),
                self.key(SSL_KEY_PASSWORD)
            )
        })
    }

    /// The configured CA certificates (empty when none).
    fn ca_certs(&self) -> Result<Vec<CertificateDer<'static>>, String> {
        let Some(pem) = &self.ca_pem else {
            return Ok(Vec::new());
        };
        let certs = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{}: bad PEM certificate: {e}", self.key(SSL_CA_LOCATION)))?;
        if certs.is_empty() {
            return Err(format!(
                "{}: no PEM certificate found",
                self.key(SSL_CA_LOCATION)
            ));
        }
        Ok(certs)
    }

    /// The rustls server configuration of an HTTPS listener.
    /// The rustls server configuration; the error names the key at fault.
    pub fn server_config(&self) -> Result<Arc<ServerConfig>, RestTlsError> {
        self.build_server_config().map_err(RestTlsError)
    }

    fn build_server_config(&self) -> Result<Arc<ServerConfig>, String> {
        let id = self.identity.as_ref().ok_or_else(|| {
            format!(
                "an https listener needs a certificate: set {} and {} (PEM)",
                self.key(SSL_CERTIFICATE_LOCATION),
                self.key(SSL_KEY_LOCATION)
            )
        })?;
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let builder = match self.client_auth {
            ClientAuth::None => builder.with_no_client_auth(),
            auth => {
                let cas = self.ca_certs()?;
                if cas.is_empty() {
                    return Err(format!(
                        "{} is {auth:?} but no CA certificate is configured ({})",
                        self.key(SSL_CLIENT_AUTH),
                        self.key(SSL_CA_LOCATION)
                    ));
                }
                let mut roots = RootCertStore::empty();
                for c in cas {
                    roots
                        .add(c)
                        .map_err(|e| format!("{}: {e}", self.key(SSL_CA_LOCATION)))?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
                let verifier = if auth == ClientAuth::Requested {
                    verifier.allow_unauthenticated()
                } else {
                    verifier
                };
                builder.with_client_cert_verifier(verifier.build().map_err(|e| e.to_string())?)
            }
        };
        let mut config = builder
            .with_single_cert(self.chain(id)?, self.private_key(id)?)
            .map_err(|e| format!("{}: {e}", self.key(SSL_CERTIFICATE_LOCATION)))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}
