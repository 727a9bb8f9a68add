//! The registry client's trust and key stores under Confluent's keys
//! (`schema.registry.ssl.truststore.*`, `schema.registry.ssl.keystore.*`,
//! `schema.registry.ssl.key.password`), as PEM for the HTTP client.
//!
//! PEM files and PKCS12 stores are read (the PKCS12 one with its `*.password`; an encrypted PEM
//! key with `schema.registry.ssl.key.password`). Java's default type is JKS, a format only Java
//! reads: with the type left at JKS the file says what it is (PEM text, or PKCS12, which Java's
//! JKS loader reads too), and a real JKS file is an error that says how to convert it.

use connect_api::config::ParsedConfig;
use connect_api::{ConnectError, Result};
use openssl::pkcs12::Pkcs12;
use openssl::pkey::PKey;
use openssl::x509::X509;

/// Confluent's TLS keys of the registry client.
pub const SSL_TRUSTSTORE_TYPE: &str = "schema.registry.ssl.truststore.type";
pub const SSL_TRUSTSTORE_LOCATION: &str = "schema.registry.ssl.truststore.location";
pub const SSL_TRUSTSTORE_CERTIFICATES: &str = "schema.registry.ssl.truststore.certificates";
pub const SSL_KEYSTORE_TYPE: &str = "schema.registry.ssl.keystore.type";
pub const SSL_KEYSTORE_LOCATION: &str = "schema.registry.ssl.keystore.location";
pub const SSL_KEYSTORE_KEY: &str = "schema.registry.ssl.keystore.key";
pub const SSL_KEYSTORE_CERTIFICATE_CHAIN: &str = "schema.registry.ssl.keystore.certificate.chain";
pub const SSL_TRUSTSTORE_PASSWORD: &str = "schema.registry.ssl.truststore.password";
pub const SSL_KEYSTORE_PASSWORD: &str = "schema.registry.ssl.keystore.password";
pub const SSL_KEY_PASSWORD: &str = "schema.registry.ssl.key.password";

/// What a store file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pem,
    Pkcs12,
}

/// One store: its type, location and password keys.
struct Store {
    type_key: &'static str,
    location_key: &'static str,
    password_key: &'static str,
}

const TRUST: Store = Store {
    type_key: SSL_TRUSTSTORE_TYPE,
    location_key: SSL_TRUSTSTORE_LOCATION,
    password_key: SSL_TRUSTSTORE_PASSWORD,
};
const KEY: Store = Store {
    type_key: SSL_KEYSTORE_TYPE,
    location_key: SSL_KEYSTORE_LOCATION,
    password_key: SSL_KEYSTORE_PASSWORD,
};

/// The types the `*.type` keys take.
pub(crate) const STORE_TYPES: &[&str] = &["JKS", "PKCS12", "PEM"];

fn error(key: &str, why: impl std::fmt::Display) -> ConnectError {
    ConnectError::config(format!("Invalid value for configuration {key}: {why}"))
}

impl Store {
    /// The file at the location, and what it holds.
    fn read(&self, parsed: &ParsedConfig, path: &str) -> Result<(Kind, Vec<u8>)> {
        let bytes =
            std::fs::read(path).map_err(|e| error(self.location_key, format!("{path}: {e}")))?;
        let declared = parsed
            .string(self.type_key)
            .unwrap_or("JKS")
            .to_ascii_uppercase();
        let kind = match declared.as_str() {
            "PEM" => Kind::Pem,
            "PKCS12" => Kind::Pkcs12,
            _ if bytes.starts_with(&[0xFE, 0xED, 0xFE, 0xED]) => {
                return Err(error(
                    self.location_key,
                    format!(
                        "{path} is a JKS store, which only Java reads; convert it with `keytool -importkeystore -srckeystore {path} -srcstoretype JKS -destkeystore {path}.p12 -deststoretype PKCS12`, then set {} to {path}.p12 and {} to PKCS12",
                        self.location_key, self.type_key
                    ),
                ));
            }
            _ if String::from_utf8_lossy(&bytes)
                .trim_start()
                .starts_with("-----BEGIN") =>
            {
                Kind::Pem
            }
            _ => Kind::Pkcs12,
        };
        Ok((kind, bytes))
    }

    fn pkcs12(&self, parsed: &ParsedConfig, der: &[u8]) -> Result<openssl::pkcs12::ParsedPkcs12_2> {
        let password = parsed
            .password(self.password_key)
            .map(|p| p.value().to_owned())
            .unwrap_or_default();
        Pkcs12::from_der(der)
            .map_err(|e| {
                error(
                    self.location_key,
                    format!("not a PEM file or PKCS12 store: {e}"),
                )
            })?
            .parse2(&password)
            .map_err(|e| {
                error(
                    self.location_key,
                    format!(
                        "cannot open the PKCS12 store (wrong {}?): {e}",
                        self.password_key
                    ),
                )
            })
    }
}

fn pem(certs: impl IntoIterator<Item = X509>, key: &str) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for c in certs {
        out.extend(c.to_pem().map_err(|e| error(key, e))?);
    }
    Ok(out)
}

/// The certificates to trust instead of the platform's roots (`None`: the platform's).
pub(crate) fn trust_pem(parsed: &ParsedConfig) -> Result<Option<Vec<u8>>> {
    if let Some(certs) = parsed.password(SSL_TRUSTSTORE_CERTIFICATES) {
        return Ok(Some(certs.value().as_bytes().to_vec()));
    }
    let Some(path) = parsed.string(SSL_TRUSTSTORE_LOCATION) else {
        return Ok(None);
    };
    let (kind, bytes) = TRUST.read(parsed, path)?;
    match kind {
        Kind::Pem => Ok(Some(bytes)),
        Kind::Pkcs12 => {
            let p12 = TRUST.pkcs12(parsed, &bytes)?;
            let certs: Vec<X509> = p12
                .cert
                .into_iter()
                .chain(p12.ca.into_iter().flatten())
                .collect();
            if certs.is_empty() {
                return Err(error(
                    SSL_TRUSTSTORE_LOCATION,
                    format!("{path} holds no certificate"),
                ));
            }
            pem(certs, SSL_TRUSTSTORE_LOCATION).map(Some)
        }
    }
}

/// The private key and certificate chain to present, as one PEM (`None`: none).
pub(crate) fn identity_pem(parsed: &ParsedConfig) -> Result<Option<Vec<u8>>> {
    let key_password = parsed
        .password(SSL_KEY_PASSWORD)
        .map(|p| p.value().to_owned());
    let (key_pem, chain_pem) = match (
        parsed.string(SSL_KEYSTORE_LOCATION),
        parsed.password(SSL_KEYSTORE_KEY),
        parsed.password(SSL_KEYSTORE_CERTIFICATE_CHAIN),
    ) {
        (None, None, None) => return Ok(None),
        (_, Some(key), Some(chain)) => (
            key.value().as_bytes().to_vec(),
            chain.value().as_bytes().to_vec(),
        ),
        (Some(path), None, None) => {
            let (kind, bytes) = KEY.read(parsed, path)?;
            match kind {
                Kind::Pem => (bytes.clone(), bytes),
                Kind::Pkcs12 => {
                    let p12 = KEY.pkcs12(parsed, &bytes)?;
                    let key = p12.pkey.ok_or_else(|| {
                        error(
                            SSL_KEYSTORE_LOCATION,
                            format!("{path} holds no private key"),
                        )
                    })?;
                    let chain = pem(
                        p12.cert.into_iter().chain(p12.ca.into_iter().flatten()),
                        SSL_KEYSTORE_LOCATION,
                    )?;
                    let key = key
                        .private_key_to_pem_pkcs8()
                        .map_err(|e| error(SSL_KEYSTORE_LOCATION, e))?;
                    return Ok(Some([key, chain].concat()));
                }
            }
        }
        _ => {
            return Err(ConnectError::config(format!(
                "{SSL_KEYSTORE_KEY} and {SSL_KEYSTORE_CERTIFICATE_CHAIN} go together"
            )));
        }
    };
    // The key, decrypted with ssl.key.password when it is encrypted; then the certificates.
    let key = match &key_password {
        Some(pass) => PKey::private_key_from_pem_passphrase(&key_pem, pass.as_bytes()),
        None => PKey::private_key_from_pem(&key_pem),
    }
    .map_err(|e| {
        error(
            SSL_KEYSTORE_LOCATION,
            format!("no readable PEM private key (an encrypted key needs {SSL_KEY_PASSWORD}): {e}"),
        )
    })?;
    let certs =
        X509::stack_from_pem(&chain_pem).map_err(|e| error(SSL_KEYSTORE_CERTIFICATE_CHAIN, e))?;
    if certs.is_empty() {
        return Err(error(SSL_KEYSTORE_CERTIFICATE_CHAIN, "no PEM certificate"));
    }
    let key = key
        .private_key_to_pem_pkcs8()
        .map_err(|e| error(SSL_KEYSTORE_LOCATION, e))?;
    Ok(Some(
        [key, pem(certs, SSL_KEYSTORE_CERTIFICATE_CHAIN)?].concat(),
    ))
}
