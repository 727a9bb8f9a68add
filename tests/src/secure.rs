//! The secured single-node Kafka of `deploy/kafka.sh up --secure`: its addresses, certificates and
//! credentials, read from the `secure.env` file named by `KAFKA_SECURE_ENV` (what `up --secure`
//! prints last; `tests/run.sh` exports it).
//!
//! The cluster has no listener a plaintext client can use: SASL_SSL (PLAIN, SCRAM-SHA-256,
//! SCRAM-SHA-512, OAUTHBEARER with unsecured tokens) on [`SecureKafka::sasl_ssl`] and SSL with
//! required client certificates on [`SecureKafka::ssl`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use rdkafka::ClientConfig;

/// Everything `secure.env` says about the secured cluster (file paths are absolute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecureKafka {
    /// `host:port` of the SASL_SSL listener.
    pub sasl_ssl: String,
    /// `host:port` of the SSL listener that requires a client certificate.
    pub ssl: String,
    /// PEM of the CA that signed the broker's and the client's certificates.
    pub ca: PathBuf,
    /// PEM of a CA that signed nothing here ("untrusted CA" tests).
    pub other_ca: PathBuf,
    /// The client certificate (PEM) and its key (PKCS#8 PEM, unencrypted).
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// The same client certificate, key and CA as a PKCS#12 keystore.
    pub client_p12: PathBuf,
    pub client_p12_password: String,
    /// A PKCS#12 truststore holding the CA.
    pub truststore_p12: PathBuf,
    pub truststore_p12_password: String,
    /// The SCRAM user (both SCRAM-SHA-256 and SCRAM-SHA-512).
    pub scram_user: String,
    pub scram_password: String,
    /// The PLAIN user.
    pub plain_user: String,
    pub plain_password: String,
    /// How often the broker asks SASL clients to re-authenticate (`connections.max.reauth.ms`
    /// of the SASL_SSL listener; 0: never). Absent from older files: 0.
    pub reauth_ms: u64,
}

/// The secured cluster of this test run. Panics, saying how to start it, when `KAFKA_SECURE_ENV`
/// is unset or its file cannot be read.
pub fn secure() -> &'static SecureKafka {
    static SECURE: OnceLock<SecureKafka> = OnceLock::new();
    SECURE.get_or_init(|| {
        let path = std::env::var("KAFKA_SECURE_ENV").unwrap_or_else(|_| {
            panic!(
                "KAFKA_SECURE_ENV is not set: run deploy/kafka.sh up --secure and export the \
                 KAFKA_SECURE_ENV=... line it prints last (tests/run.sh does both)"
            )
        });
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("cannot read KAFKA_SECURE_ENV={path} ({e}): run deploy/kafka.sh up --secure")
        });
        SecureKafka::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    })
}

impl SecureKafka {
    /// Parses `KEY=VALUE` lines (blank lines and `#` comments are skipped, unknown keys ignored).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut map = HashMap::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| format!("not a KEY=VALUE line: {line:?}"))?;
            map.insert(k.trim().to_owned(), v.trim().to_owned());
        }
        let get = |k: &str| {
            map.get(k)
                .cloned()
                .ok_or_else(|| format!("{k} is missing (run deploy/kafka.sh up --secure)"))
        };
        let reauth_ms = match map.get("KAFKA_SECURE_REAUTH_MS") {
            Some(v) => v
                .parse()
                .map_err(|_| format!("KAFKA_SECURE_REAUTH_MS is not a number: {v:?}"))?,
            None => 0,
        };
        Ok(Self {
            sasl_ssl: get("KAFKA_SECURE_SASL_SSL")?,
            ssl: get("KAFKA_SECURE_SSL")?,
            ca: get("KAFKA_SECURE_CA")?.into(),
            other_ca: get("KAFKA_SECURE_OTHER_CA")?.into(),
            client_cert: get("KAFKA_SECURE_CLIENT_CERT")?.into(),
            client_key: get("KAFKA_SECURE_CLIENT_KEY")?.into(),
            client_p12: get("KAFKA_SECURE_CLIENT_P12")?.into(),
            client_p12_password: get("KAFKA_SECURE_CLIENT_P12_PASSWORD")?,
            truststore_p12: get("KAFKA_SECURE_TRUSTSTORE_P12")?.into(),
            truststore_p12_password: get("KAFKA_SECURE_TRUSTSTORE_P12_PASSWORD")?,
            scram_user: get("KAFKA_SECURE_SCRAM_USER")?,
            scram_password: get("KAFKA_SECURE_SCRAM_PASSWORD")?,
            plain_user: get("KAFKA_SECURE_PLAIN_USER")?,
            plain_password: get("KAFKA_SECURE_PLAIN_PASSWORD")?,
            reauth_ms,
        })
    }

    /// PEM text of a file named here (certificates and keys), panicking with its path.
    pub fn read_pem(path: &std::path::Path) -> String {
        std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    /// A librdkafka client config for the SASL_SSL listener with `mechanism` (`PLAIN`,
    /// `SCRAM-SHA-256`, `SCRAM-SHA-512` or `OAUTHBEARER`) and this cluster's users, trusting the CA.
    pub fn sasl_client_config(&self, mechanism: &str) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.sasl_ssl)
            .set("security.protocol", "SASL_SSL")
            .set("ssl.ca.location", self.ca.to_string_lossy().as_ref())
            .set("sasl.mechanism", mechanism);
        match mechanism {
            "PLAIN" => {
                c.set("sasl.username", &self.plain_user)
                    .set("sasl.password", &self.plain_password);
            }
            "OAUTHBEARER" => {
                c.set("enable.sasl.oauthbearer.unsecure.jwt", "true")
                    .set("sasl.oauthbearer.config", "principal=connect");
            }
            _ => {
                c.set("sasl.username", &self.scram_user)
                    .set("sasl.password", &self.scram_password);
            }
        }
        c
    }

    /// A librdkafka client config for the SSL listener with the client certificate (mTLS).
    pub fn mtls_client_config(&self) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.ssl)
            .set("security.protocol", "SSL")
            .set("ssl.ca.location", self.ca.to_string_lossy().as_ref())
            .set(
                "ssl.certificate.location",
                self.client_cert.to_string_lossy().as_ref(),
            )
            .set(
                "ssl.key.location",
                self.client_key.to_string_lossy().as_ref(),
            );
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "KAFKA_SECURE_SASL_SSL=127.0.0.1:39492
KAFKA_SECURE_SSL=127.0.0.1:39493
KAFKA_SECURE_CA=/c/ca.pem
KAFKA_SECURE_OTHER_CA=/c/other-ca.pem
KAFKA_SECURE_CLIENT_CERT=/c/client.pem
KAFKA_SECURE_CLIENT_KEY=/c/client.key
KAFKA_SECURE_CLIENT_P12=/c/client.p12
KAFKA_SECURE_CLIENT_P12_PASSWORD=pw1
KAFKA_SECURE_TRUSTSTORE_P12=/c/truststore.p12
KAFKA_SECURE_TRUSTSTORE_P12_PASSWORD=pw2
KAFKA_SECURE_SCRAM_USER=connect
KAFKA_SECURE_SCRAM_PASSWORD=connect-secret
KAFKA_SECURE_PLAIN_USER=plain-user
KAFKA_SECURE_PLAIN_PASSWORD=plain-secret
";

    #[test]
    fn parses_every_line_of_secure_env() {
        let s = SecureKafka::parse(&format!("{SAMPLE}KAFKA_SECURE_REAUTH_MS=60000\nOTHER=x\n"))
            .unwrap();
        assert_eq!(s.sasl_ssl, "127.0.0.1:39492");
        assert_eq!(s.ssl, "127.0.0.1:39493");
        assert_eq!(s.other_ca, PathBuf::from("/c/other-ca.pem"));
        assert_eq!(s.client_p12_password, "pw1");
        assert_eq!(s.truststore_p12_password, "pw2");
        assert_eq!(s.plain_password, "plain-secret");
        assert_eq!(s.reauth_ms, 60000);
        assert_eq!(SecureKafka::parse(SAMPLE).unwrap().reauth_ms, 0);
    }

    #[test]
    fn a_missing_line_is_named() {
        let text = SAMPLE.replace("KAFKA_SECURE_SSL=127.0.0.1:39493\n", "");
        let err = SecureKafka::parse(&text).unwrap_err();
        assert!(err.contains("KAFKA_SECURE_SSL is missing"), "{err}");
    }
}
