//! How one worker talks to Kafka securely: Connect's `security.protocol`, `sasl.*` and `ssl.*`
//! keys, resolved once into plain values.
//!
//! Two kinds of client read these values:
//! - librdkafka clients (internal-topic stores, admin clients, task producers and consumers),
//!   through the librdkafka keys built in [`crate::config`];
//! - the group-membership client ([`crate::cluster`]), which speaks the protocol itself and
//!   needs the TLS material and SASL credentials directly.
//!
//! This module only holds data: it imports nothing of the crate, so every layer may use it.

use std::fmt;

/// `security.protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecurityProtocol {
    #[default]
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl SecurityProtocol {
    /// Java's (and librdkafka's) name.
    pub fn name(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }

    pub fn uses_tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }

    pub fn uses_sasl(self) -> bool {
        matches!(
            self,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }
}

/// `sasl.mechanism`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaslMechanism {
    Plain,
    ScramSha256,
    ScramSha512,
    OAuthBearer,
}

impl SaslMechanism {
    /// The mechanism's name on the wire (`SaslHandshake`) and in Java's config.
    pub fn name(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
            SaslMechanism::OAuthBearer => "OAUTHBEARER",
        }
    }
}

/// What a SASL mechanism authenticates with.
#[derive(Clone, PartialEq, Eq)]
pub enum SaslCredentials {
    /// PLAIN and SCRAM: from `sasl.jaas.config`'s `username` and `password`.
    UsernamePassword { username: String, password: String },
    /// OAUTHBEARER with an unsecured token (Java's `OAuthBearerLoginModule` with
    /// `unsecuredLoginStringClaim_sub`): the client makes a fresh unsigned JWT (`alg: none`)
    /// with this subject at each authentication.
    UnsecuredToken { principal: String },
    /// OAUTHBEARER with a token obtained elsewhere (a static JWT).
    Token { token: String },
}

impl fmt::Debug for SaslCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaslCredentials::UsernamePassword { username, .. } => f
                .debug_struct("UsernamePassword")
                .field("username", username)
                .field("password", &"[hidden]")
                .finish(),
            SaslCredentials::UnsecuredToken { principal } => f
                .debug_struct("UnsecuredToken")
                .field("principal", principal)
                .finish(),
            SaslCredentials::Token { .. } => {
                f.debug_struct("Token").field("token", &"[hidden]").finish()
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sasl {
    pub mechanism: SaslMechanism,
    pub credentials: SaslCredentials,
}

/// TLS material, always as PEM text (keystores and truststores are converted when read).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Tls {
    /// CA certificates trusted for the brokers; `None`: the system's trusted roots.
    pub ca_pem: Option<String>,
    /// The client's certificate chain, for brokers that require client certificates.
    pub client_cert_pem: Option<String>,
    /// The private key of `client_cert_pem` (unencrypted PKCS#8, PKCS#1 or SEC1 PEM).
    pub client_key_pem: Option<String>,
    /// `ssl.endpoint.identification.algorithm=https` (the default); an empty value turns the
    /// broker host-name check off, as in Java.
    pub verify_hostname: bool,
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls")
            .field("ca_pem", &self.ca_pem.as_ref().map(|_| "[pem]"))
            .field(
                "client_cert_pem",
                &self.client_cert_pem.as_ref().map(|_| "[pem]"),
            )
            .field(
                "client_key_pem",
                &self.client_key_pem.as_ref().map(|_| "[hidden]"),
            )
            .field("verify_hostname", &self.verify_hostname)
            .finish()
    }
}

/// The security of every connection to the Kafka cluster.
///
/// Invariant (kept by whoever builds it): `tls` is `Some` exactly when `protocol.uses_tls()`,
/// `sasl` is `Some` exactly when `protocol.uses_sasl()`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KafkaSecurity {
    pub protocol: SecurityProtocol,
    pub tls: Option<Tls>,
    pub sasl: Option<Sasl>,
}
