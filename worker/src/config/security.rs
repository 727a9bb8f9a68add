//! Connect's security keys of one Kafka client config (`security.protocol`, `sasl.*`, `ssl.*`),
//! read once into [`KafkaSecurity`] (credentials, TLS material as PEM text), and librdkafka's
//! keys written from that value only:
//!
//! ```text
//!  Java keys (+ librdkafka's ssl.ca.location, ssl.key.location, sasl.username, ...)
//!     ──resolve()──> KafkaSecurity ──librdkafka_keys()──> security.protocol, sasl.*, ssl.*.pem
//!                          └─────────────────────────────> the group-membership client
//! ```
//!
//! Keystores and truststores (PKCS#12 or PEM, files or inline) become PEM text here, with the
//! same OpenSSL librdkafka links; a JKS store is an error that says how to convert it.

use std::collections::BTreeMap;

use openssl::pkcs12::Pkcs12;
use openssl::pkey::{PKey, Private};
use openssl::x509::X509;

use crate::security::{KafkaSecurity, Sasl, SaslCredentials, SaslMechanism, SecurityProtocol, Tls};

/// One key a client config cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid value {value} for configuration {key}: {reason}")]
pub struct ClientKeyError {
    /// The key as the user wrote it, prefix included.
    pub key: String,
    pub value: String,
    pub reason: String,
}

pub const SECURITY_PROTOCOL: &str = "security.protocol";
pub const SASL_MECHANISM: &str = "sasl.mechanism";
/// librdkafka's name of `sasl.mechanism`.
pub const SASL_MECHANISMS: &str = "sasl.mechanisms";
pub const SASL_JAAS_CONFIG: &str = "sasl.jaas.config";
pub const SASL_USERNAME: &str = "sasl.username";
pub const SASL_PASSWORD: &str = "sasl.password";
pub const SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL: &str = "sasl.oauthbearer.token.endpoint.url";
pub const SSL_TRUSTSTORE_TYPE: &str = "ssl.truststore.type";
pub const SSL_TRUSTSTORE_LOCATION: &str = "ssl.truststore.location";
pub const SSL_TRUSTSTORE_PASSWORD: &str = "ssl.truststore.password";
pub const SSL_TRUSTSTORE_CERTIFICATES: &str = "ssl.truststore.certificates";
pub const SSL_KEYSTORE_TYPE: &str = "ssl.keystore.type";
pub const SSL_KEYSTORE_LOCATION: &str = "ssl.keystore.location";
pub const SSL_KEYSTORE_PASSWORD: &str = "ssl.keystore.password";
pub const SSL_KEYSTORE_KEY: &str = "ssl.keystore.key";
pub const SSL_KEYSTORE_CERTIFICATE_CHAIN: &str = "ssl.keystore.certificate.chain";
pub const SSL_KEY_PASSWORD: &str = "ssl.key.password";
pub const SSL_ENDPOINT_IDENTIFICATION_ALGORITHM: &str = "ssl.endpoint.identification.algorithm";
/// librdkafka's PEM keys, read here too so every client gets the same material.
pub const SSL_CA_LOCATION: &str = "ssl.ca.location";
pub const SSL_CA_PEM: &str = "ssl.ca.pem";
pub const SSL_CERTIFICATE_LOCATION: &str = "ssl.certificate.location";
pub const SSL_CERTIFICATE_PEM: &str = "ssl.certificate.pem";
pub const SSL_KEY_LOCATION: &str = "ssl.key.location";
pub const SSL_KEY_PEM: &str = "ssl.key.pem";

const SASL_KEYS: &[&str] = &[
    SASL_MECHANISM,
    SASL_MECHANISMS,
    SASL_JAAS_CONFIG,
    SASL_USERNAME,
    SASL_PASSWORD,
    SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL,
];

const TLS_KEYS: &[&str] = &[
    SSL_TRUSTSTORE_TYPE,
    SSL_TRUSTSTORE_LOCATION,
    SSL_TRUSTSTORE_PASSWORD,
    SSL_TRUSTSTORE_CERTIFICATES,
    SSL_KEYSTORE_TYPE,
    SSL_KEYSTORE_LOCATION,
    SSL_KEYSTORE_PASSWORD,
    SSL_KEYSTORE_KEY,
    SSL_KEYSTORE_CERTIFICATE_CHAIN,
    SSL_KEY_PASSWORD,
    SSL_ENDPOINT_IDENTIFICATION_ALGORITHM,
    SSL_CA_LOCATION,
    SSL_CA_PEM,
    SSL_CERTIFICATE_LOCATION,
    SSL_CERTIFICATE_PEM,
    SSL_KEY_LOCATION,
    SSL_KEY_PEM,
];

/// Keys of the REST server only (Connect's `ssl.client.auth`): never a Kafka client's.
pub const SERVER_ONLY_KEYS: &[&str] = &["ssl.client.auth"];

/// Whether `key` (without prefix) is read by [`resolve`] instead of passed to librdkafka.
pub fn is_resolved(key: &str) -> bool {
    key == SECURITY_PROTOCOL || SASL_KEYS.contains(&key) || TLS_KEYS.contains(&key)
}

/// Whether `key` is a TLS key (read by the REST listeners too when at the top level).
pub fn is_tls_key(key: &str) -> bool {
    TLS_KEYS.contains(&key)
}

/// A key as the user wrote it: full name (prefix included) and value.
#[derive(Clone, PartialEq, Eq)]
pub struct Written {
    pub key: String,
    pub value: String,
}

impl std::fmt::Debug for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}=", self.key)?;
        if is_secret(&self.key) {
            f.write_str("[hidden]")
        } else {
            f.write_str(&self.value)
        }
    }
}

/// Keys whose values are never shown (passwords, private keys, JAAS options).
pub fn is_secret(key: &str) -> bool {
    ["password", "jaas", "secret"]
        .iter()
        .any(|s| key.contains(s))
        || [SSL_KEYSTORE_KEY, SSL_KEY_PEM]
            .iter()
            .any(|k| key.ends_with(k))
}

/// The outcome of [`resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub security: KafkaSecurity,
    /// Keys given that this protocol does not use (`sasl.*` under `SSL`, `ssl.*` under
    /// `SASL_PLAINTEXT`...): the caller decides whether another client uses them.
    pub unused: Vec<Written>,
}

/// Reads the security keys of one client config (keys without prefix; each value keeps the
/// key as written for errors). Missing keys are named with the prefix of `security.protocol`.
pub fn resolve(keys: &BTreeMap<String, Written>) -> Result<Resolved, Vec<ClientKeyError>> {
    let prefix = keys
        .get(SECURITY_PROTOCOL)
        .and_then(|w| w.key.strip_suffix(SECURITY_PROTOCOL))
        .unwrap_or("")
        .to_owned();
    let r = Reader { keys, prefix };
    let mut errors = Vec::new();
    let protocol = match r.get(SECURITY_PROTOCOL) {
        None => SecurityProtocol::Plaintext,
        Some(v) => match v.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => SecurityProtocol::Plaintext,
            "SSL" => SecurityProtocol::Ssl,
            "SASL_PLAINTEXT" => SecurityProtocol::SaslPlaintext,
            "SASL_SSL" => SecurityProtocol::SaslSsl,
            _ => {
                return Err(vec![r.error(
                    SECURITY_PROTOCOL,
                    "String must be one of (case insensitive): PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL",
                )]);
            }
        },
    };
    let mut unused = Vec::new();
    let sasl = if protocol.uses_sasl() {
        r.sasl().map_err(|e| errors.push(e)).ok()
    } else {
        unused.extend(SASL_KEYS.iter().filter_map(|k| keys.get(*k).cloned()));
        None
    };
    let tls = if protocol.uses_tls() {
        r.tls().map_err(|e| errors.extend(e)).ok()
    } else {
        unused.extend(TLS_KEYS.iter().filter_map(|k| keys.get(*k).cloned()));
        None
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Resolved {
        security: KafkaSecurity {
            protocol,
            tls,
            sasl,
        },
        unused,
    })
}

/// The error for a key a client's protocol does not use.
pub fn unused_error(w: &Written, protocol_key: &str, protocol: SecurityProtocol) -> ClientKeyError {
    let what = if w.key.ends_with(".jaas.config") || w.key.contains("sasl.") {
        "SASL"
    } else {
        "TLS"
    };
    ClientKeyError {
        key: w.key.clone(),
        value: shown(&w.key, &w.value),
        reason: format!(
            "{protocol_key} is {}, which does not use {what}: no client would apply this key; set {protocol_key} to {} or remove the key",
            protocol.name(),
            if what == "SASL" {
                "SASL_SSL or SASL_PLAINTEXT"
            } else {
                "SSL or SASL_SSL"
            }
        ),
    }
}

fn shown(key: &str, value: &str) -> String {
    if is_secret(key) {
        "[hidden]".to_owned()
    } else {
        value.to_owned()
    }
}

/// librdkafka's keys for `security`, the only writer of librdkafka's security keys.
pub fn librdkafka_keys(security: &KafkaSecurity) -> Vec<(&'static str, String)> {
    let mut out = vec![("security.protocol", security.protocol.name().to_owned())];
    if let Some(sasl) = &security.sasl {
        out.push(("sasl.mechanism", sasl.mechanism.name().to_owned()));
        match &sasl.credentials {
            SaslCredentials::UsernamePassword { username, password } => {
                out.push(("sasl.username", username.clone()));
                out.push(("sasl.password", password.clone()));
            }
            SaslCredentials::UnsecuredToken { principal } => {
                out.push(("enable.sasl.oauthbearer.unsecure.jwt", "true".to_owned()));
                out.push(("sasl.oauthbearer.config", format!("principal={principal}")));
            }
            // No Connect key makes one (resolve() never does); librdkafka takes a static token
            // only through a callback.
            SaslCredentials::Token { .. } => {}
        }
    }
    if let Some(tls) = &security.tls {
        if let Some(ca) = &tls.ca_pem {
            out.push(("ssl.ca.pem", ca.clone()));
        }
        if let Some(cert) = &tls.client_cert_pem {
            out.push(("ssl.certificate.pem", cert.clone()));
        }
        if let Some(key) = &tls.client_key_pem {
            out.push(("ssl.key.pem", key.clone()));
        }
        out.push((
            "ssl.endpoint.identification.algorithm",
            if tls.verify_hostname { "https" } else { "none" }.to_owned(),
        ));
    }
    out
}

struct Reader<'a> {
    keys: &'a BTreeMap<String, Written>,
    prefix: String,
}

impl Reader<'_> {
    /// A non-empty value.
    fn get(&self, key: &str) -> Option<&str> {
        self.keys
            .get(key)
            .map(|w| w.value.trim())
            .filter(|v| !v.is_empty())
    }

    fn full_key(&self, key: &str) -> String {
        self.keys
            .get(key)
            .map(|w| w.key.clone())
            .unwrap_or_else(|| format!("{}{key}", self.prefix))
    }

    fn error(&self, key: &str, reason: impl Into<String>) -> ClientKeyError {
        let full = self.full_key(key);
        ClientKeyError {
            value: self
                .keys
                .get(key)
                .map_or_else(|| "null".to_owned(), |w| shown(&full, &w.value)),
            key: full,
            reason: reason.into(),
        }
    }

    fn sasl(&self) -> Result<Sasl, ClientKeyError> {
        let (mech_key, name) = match (self.get(SASL_MECHANISM), self.get(SASL_MECHANISMS)) {
            (Some(m), _) => (SASL_MECHANISM, m),
            (None, Some(m)) => (SASL_MECHANISMS, m),
            // Java's and librdkafka's default.
            (None, None) => (SASL_MECHANISM, "GSSAPI"),
        };
        let mechanism = match name.to_ascii_uppercase().as_str() {
            "PLAIN" => SaslMechanism::Plain,
            "SCRAM-SHA-256" => SaslMechanism::ScramSha256,
            "SCRAM-SHA-512" => SaslMechanism::ScramSha512,
            "OAUTHBEARER" => SaslMechanism::OAuthBearer,
            "GSSAPI" => {
                return Err(self.error(
                    mech_key,
                    "GSSAPI (Kerberos, the default) is not supported by this worker; set it to PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER",
                ));
            }
            _ => {
                return Err(self.error(
                    mech_key,
                    "String must be one of: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER",
                ));
            }
        };
        if self.get(SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL).is_some() {
            return Err(self.error(
                SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL,
                "the OAuth client-credentials flow is not supported by this worker (its librdkafka is built without curl); use an unsecured token (OAuthBearerLoginModule with unsecuredLoginStringClaim_sub) or SCRAM",
            ));
        }
        let credentials = if let Some(jaas) = self.get(SASL_JAAS_CONFIG) {
            jaas_credentials(jaas, mechanism)
                .map_err(|reason| self.error(SASL_JAAS_CONFIG, reason))?
        } else if let (Some(u), Some(p)) = (self.get(SASL_USERNAME), self.get(SASL_PASSWORD)) {
            if mechanism == SaslMechanism::OAuthBearer {
                return Err(self.error(
                    SASL_USERNAME,
                    "OAUTHBEARER takes no user name; set sasl.jaas.config to OAuthBearerLoginModule",
                ));
            }
            SaslCredentials::UsernamePassword {
                username: u.to_owned(),
                password: p.to_owned(),
            }
        } else {
            return Err(self.error(
                SASL_JAAS_CONFIG,
                format!(
                    "{} needs credentials: set {}",
                    mechanism.name(),
                    self.full_key(SASL_JAAS_CONFIG)
                ),
            ));
        };
        Ok(Sasl {
            mechanism,
            credentials,
        })
    }

    fn tls(&self) -> Result<Tls, Vec<ClientKeyError>> {
        let mut errors = Vec::new();
        let ca_pem = self.ca_pem().map_err(|e| errors.push(e)).ok().flatten();
        let identity = self.identity().map_err(|e| errors.push(e)).ok().flatten();
        let verify_hostname = match self
            .keys
            .get(SSL_ENDPOINT_IDENTIFICATION_ALGORITHM)
            .map(|w| w.value.trim().to_ascii_lowercase())
        {
            None => true,
            Some(v) if v == "https" => true,
            // Empty disables it (Java); `none` is librdkafka's word.
            Some(v) if v.is_empty() || v == "none" => false,
            Some(_) => {
                errors.push(self.error(
                    SSL_ENDPOINT_IDENTIFICATION_ALGORITHM,
                    "String must be https, or empty to disable host name verification",
                ));
                true
            }
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        let (client_cert_pem, client_key_pem) = identity.unzip();
        Ok(Tls {
            ca_pem,
            client_cert_pem,
            client_key_pem,
            verify_hostname,
        })
    }

    /// At most one of the given keys may be set; returns it.
    fn one_of<'k>(&self, keys: &[&'k str]) -> Result<Option<&'k str>, ClientKeyError> {
        let set: Vec<&str> = keys
            .iter()
            .copied()
            .filter(|k| self.get(k).is_some())
            .collect();
        match set.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one)),
            [first, rest @ ..] => Err(self.error(
                rest[0],
                format!(
                    "{} is set too: give the certificates one way only",
                    self.full_key(first)
                ),
            )),
        }
    }

    /// The CA certificates (PEM), or `None` for the system's roots.
    fn ca_pem(&self) -> Result<Option<String>, ClientKeyError> {
        let Some(source) = self.one_of(&[
            SSL_TRUSTSTORE_CERTIFICATES,
            SSL_TRUSTSTORE_LOCATION,
            SSL_CA_PEM,
            SSL_CA_LOCATION,
        ])?
        else {
            return Ok(None);
        };
        let value = self.get(source).unwrap_or_default();
        let certs = match source {
            SSL_TRUSTSTORE_CERTIFICATES | SSL_CA_PEM => self.certs(source, value.as_bytes())?,
            SSL_CA_LOCATION => self.certs(source, &self.read(source)?)?,
            _ => {
                let (store_type, bytes) = self.store(SSL_TRUSTSTORE_TYPE, source)?;
                match store_type {
                    StoreType::Pem => self.certs(source, &bytes)?,
                    StoreType::Pkcs12 => {
                        let p12 = self.pkcs12(source, SSL_TRUSTSTORE_PASSWORD, &bytes)?;
                        let mut certs: Vec<X509> = p12.cert.into_iter().collect();
                        certs.extend(p12.ca.into_iter().flatten());
                        if certs.is_empty() {
                            return Err(self.error(source, "the truststore holds no certificate"));
                        }
                        certs
                    }
                }
            }
        };
        Ok(Some(to_pem(&certs)))
    }

    /// The client's certificate chain and key (PEM), or `None`.
    fn identity(&self) -> Result<Option<(String, String)>, ClientKeyError> {
        let Some(source) = self.one_of(&[
            SSL_KEYSTORE_CERTIFICATE_CHAIN,
            SSL_KEYSTORE_LOCATION,
            SSL_CERTIFICATE_PEM,
            SSL_CERTIFICATE_LOCATION,
        ])?
        else {
            for k in [SSL_KEYSTORE_KEY, SSL_KEY_PEM, SSL_KEY_LOCATION] {
                if self.get(k).is_some() {
                    return Err(self.error(k, "a private key without its certificate chain"));
                }
            }
            return Ok(None);
        };
        let key_of =
            |key_key: &str, bytes: Option<Vec<u8>>| -> Result<PKey<Private>, ClientKeyError> {
                let bytes = match bytes {
                    Some(b) => b,
                    None => {
                        return Err(self.error(
                            key_key,
                            format!("{} is set but this key is not", self.full_key(source)),
                        ));
                    }
                };
                self.private_key(key_key, &bytes)
            };
        let (chain, key) = match source {
            SSL_KEYSTORE_CERTIFICATE_CHAIN | SSL_CERTIFICATE_PEM => {
                let key_key = if source == SSL_CERTIFICATE_PEM {
                    SSL_KEY_PEM
                } else {
                    SSL_KEYSTORE_KEY
                };
                let chain = self.certs(source, self.get(source).unwrap_or_default().as_bytes())?;
                let key = key_of(key_key, self.get(key_key).map(|v| v.as_bytes().to_vec()))?;
                (chain, key)
            }
            SSL_CERTIFICATE_LOCATION => {
                let chain = self.certs(source, &self.read(source)?)?;
                let bytes = match self.get(SSL_KEY_LOCATION) {
                    Some(_) => Some(self.read(SSL_KEY_LOCATION)?),
                    None => None,
                };
                (chain, key_of(SSL_KEY_LOCATION, bytes)?)
            }
            _ => {
                let (store_type, bytes) = self.store(SSL_KEYSTORE_TYPE, source)?;
                match store_type {
                    StoreType::Pem => (
                        self.certs(source, &bytes)?,
                        self.private_key(source, &bytes)?,
                    ),
                    StoreType::Pkcs12 => {
                        let p12 = self.pkcs12(source, SSL_KEYSTORE_PASSWORD, &bytes)?;
                        let (Some(cert), Some(key)) = (p12.cert, p12.pkey) else {
                            return Err(self.error(
                                source,
                                "the keystore holds no private key with its certificate",
                            ));
                        };
                        let mut chain = vec![cert];
                        chain.extend(p12.ca.into_iter().flatten());
                        (chain, key)
                    }
                }
            }
        };
        let matches = chain[0]
            .public_key()
            .map(|p| p.public_eq(&key))
            .unwrap_or(false);
        if !matches {
            return Err(self.error(
                source,
                "the private key does not belong to the first certificate",
            ));
        }
        let key_pem = key
            .private_key_to_pem_pkcs8()
            .map_err(|e| self.error(source, format!("cannot write the private key as PEM: {e}")))?;
        Ok(Some((
            to_pem(&chain),
            String::from_utf8_lossy(&key_pem).into_owned(),
        )))
    }

    fn read(&self, key: &str) -> Result<Vec<u8>, ClientKeyError> {
        let path = self.get(key).unwrap_or_default();
        std::fs::read(path).map_err(|e| self.error(key, format!("cannot read {path}: {e}")))
    }

    fn certs(&self, key: &str, pem: &[u8]) -> Result<Vec<X509>, ClientKeyError> {
        match X509::stack_from_pem(pem) {
            Ok(certs) if !certs.is_empty() => Ok(certs),
            Ok(_) => Err(self.error(key, "no PEM certificate found")),
            Err(e) => Err(self.error(key, format!("not PEM certificates: {e}"))),
        }
    }

    /// A PEM private key, decrypted with `ssl.key.password` when one is set.
    fn private_key(&self, key: &str, pem: &[u8]) -> Result<PKey<Private>, ClientKeyError> {
        let parsed = match self.get(SSL_KEY_PASSWORD) {
            Some(pass) => PKey::private_key_from_pem_passphrase(pem, pass.as_bytes()),
            None => PKey::private_key_from_pem(pem),
        };
        parsed.map_err(|e| {
            self.error(
                key,
                format!(
                    "no readable PEM private key (encrypted keys need {}): {e}",
                    self.full_key(SSL_KEY_PASSWORD)
                ),
            )
        })
    }

    fn pkcs12(
        &self,
        key: &str,
        password_key: &str,
        der: &[u8],
    ) -> Result<openssl::pkcs12::ParsedPkcs12_2, ClientKeyError> {
        let p12 = Pkcs12::from_der(der)
            .map_err(|e| self.error(key, format!("not a PKCS12 store: {e}")))?;
        p12.parse2(self.get(password_key).unwrap_or_default())
            .map_err(|e| {
                self.error(
                    key,
                    format!(
                        "cannot open the PKCS12 store (wrong {}?): {e}",
                        self.full_key(password_key)
                    ),
                )
            })
    }

    /// The store's type (the `*.type` key, else, Java's default being JKS, what the file
    /// holds) and its bytes.
    fn store(
        &self,
        type_key: &str,
        location_key: &str,
    ) -> Result<(StoreType, Vec<u8>), ClientKeyError> {
        let jks = |key: &str| {
            let location = self.get(location_key).unwrap_or("<store>");
            self.error(
                key,
                format!(
                    "JKS stores cannot be read by this worker; convert it to PKCS12 with `keytool -importkeystore -srckeystore {location} -srcstoretype JKS -destkeystore {location}.p12 -deststoretype PKCS12`, then set {} to {location}.p12 and {} to PKCS12",
                    self.full_key(location_key),
                    self.full_key(type_key)
                ),
            )
        };
        let bytes = match self.get(type_key).map(str::to_ascii_uppercase).as_deref() {
            Some("PKCS12") => return Ok((StoreType::Pkcs12, self.read(location_key)?)),
            Some("PEM") => return Ok((StoreType::Pem, self.read(location_key)?)),
            Some("JKS") => return Err(jks(type_key)),
            Some(_) => {
                return Err(self.error(
                    type_key,
                    "String must be one of: PKCS12, PEM, JKS (JKS must be converted to PKCS12)",
                ));
            }
            None => self.read(location_key)?,
        };
        if bytes.starts_with(&[0xFE, 0xED, 0xFE, 0xED]) {
            Err(jks(location_key))
        } else if String::from_utf8_lossy(&bytes)
            .trim_start()
            .starts_with("-----BEGIN")
        {
            Ok((StoreType::Pem, bytes))
        } else {
            Ok((StoreType::Pkcs12, bytes))
        }
    }
}

enum StoreType {
    Pem,
    Pkcs12,
}

fn to_pem(certs: &[X509]) -> String {
    certs
        .iter()
        .filter_map(|c| c.to_pem().ok())
        .map(|p| String::from_utf8_lossy(&p).into_owned())
        .collect()
}

/// Java's `sasl.jaas.config` (`<LoginModule class> required key="value" ...;`): the login
/// module's simple name and its options.
fn parse_jaas(jaas: &str) -> Result<(String, BTreeMap<String, String>), String> {
    let mut words = jaas
        .trim()
        .trim_end_matches(';')
        .splitn(2, char::is_whitespace);
    let class = words.next().unwrap_or_default();
    let module = class.rsplit('.').next().unwrap_or(class).to_owned();
    let rest = words.next().unwrap_or_default().trim_start();
    let rest = ["required", "requisite", "sufficient", "optional"]
        .iter()
        .find_map(|flag| rest.strip_prefix(flag))
        .ok_or_else(|| {
            "Login module control flag is not available in the JAAS config (expected: required, requisite, sufficient or optional)".to_owned()
        })?;
    let mut options = BTreeMap::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let name: String = chars.by_ref().take_while(|c| *c != '=').collect();
        let value: String = if chars.peek() == Some(&'"') {
            chars.next();
            let mut v = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => v.extend(chars.next()),
                    '"' => break,
                    c => v.push(c),
                }
            }
            v
        } else {
            chars.by_ref().take_while(|c| !c.is_whitespace()).collect()
        };
        options.insert(name.trim().to_owned(), value);
    }
    Ok((module, options))
}

/// The credentials a `sasl.jaas.config` gives `mechanism`.
fn jaas_credentials(jaas: &str, mechanism: SaslMechanism) -> Result<SaslCredentials, String> {
    let (module, mut options) = parse_jaas(jaas)?;
    match module.as_str() {
        "PlainLoginModule" | "ScramLoginModule" => {
            if mechanism == SaslMechanism::OAuthBearer {
                return Err(format!(
                    "{module} gives a user name and password, which OAUTHBEARER does not use; use OAuthBearerLoginModule"
                ));
            }
            match (options.remove("username"), options.remove("password")) {
                (Some(username), Some(password)) => Ok(SaslCredentials::UsernamePassword {
                    username,
                    password,
                }),
                _ => Err(format!("{module} needs username and password")),
            }
        }
        "OAuthBearerLoginModule" => {
            if mechanism != SaslMechanism::OAuthBearer {
                return Err(format!(
                    "OAuthBearerLoginModule is for sasl.mechanism=OAUTHBEARER, not {}",
                    mechanism.name()
                ));
            }
            let principal = options.remove("unsecuredLoginStringClaim_sub");
            if let Some(other) = options.keys().find(|k| k.starts_with("unsecuredLogin")) {
                return Err(format!(
                    "the unsecured-token option {other} is not supported; only unsecuredLoginStringClaim_sub is"
                ));
            }
            match principal {
                Some(p) if !p.is_empty() && !p.contains(char::is_whitespace) => {
                    Ok(SaslCredentials::UnsecuredToken { principal: p })
                }
                Some(_) => Err("unsecuredLoginStringClaim_sub must be one word".to_owned()),
                None => Err(
                    "only unsecured tokens (unsecuredLoginStringClaim_sub) are supported; the OAuth client-credentials flow (clientId, clientSecret, sasl.oauthbearer.token.endpoint.url) is not: this worker's librdkafka is built without curl".to_owned(),
                ),
            }
        }
        "Krb5LoginModule" => Err(
            "Kerberos (Krb5LoginModule, GSSAPI) is not supported by this worker; use SCRAM, PLAIN or OAUTHBEARER".to_owned(),
        ),
        _ => Err(format!(
            "login module {module} is not supported; use PlainLoginModule, ScramLoginModule or OAuthBearerLoginModule"
        )),
    }
}

#[cfg(test)]
#[path = "security_tests.rs"]
mod tests;
