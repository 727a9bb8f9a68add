//! TLS for the group-membership client (rustls on aws-lc-rs), from [`crate::security::Tls`]:
//!
//! - the brokers' chain is checked against `ca_pem`, or the system's trusted roots when it is
//!   `None` (`rustls-native-certs`, as Java falls back to its `cacerts`);
//! - `client_cert_pem` + `client_key_pem` are presented when the broker asks (mTLS);
//! - `verify_hostname = false` (Java's empty `ssl.endpoint.identification.algorithm`) still
//!   checks the chain, validity and usage, and only skips the match of the certificate's names
//!   against the broker's host;
//! - TLS 1.2 and 1.3; SNI carries the broker's host name (not for IP addresses).
//!
//! Failures are turned into [`TlsFailure`]s that say what is wrong in Connect's terms.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    AlertDescription, CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore,
};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use crate::security::Tls;

/// A ready TLS client configuration (built once per member, shared by its connections).
#[derive(Clone)]
pub struct TlsClient {
    connector: TlsConnector,
    has_client_cert: bool,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient")
            .field("has_client_cert", &self.has_client_cert)
            .finish()
    }
}

impl TlsClient {
    /// Builds the client configuration; an unreadable PEM or a key that does not match its
    /// certificate is an error naming the part.
    pub fn new(tls: &Tls) -> Result<Self, String> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut roots = RootCertStore::empty();
        match &tls.ca_pem {
            Some(pem) => {
                let certs = parse_certs(pem, "the trusted CA certificates")?;
                for c in certs {
                    roots
                        .add(c)
                        .map_err(|e| format!("the trusted CA certificates: {e}"))?;
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                let (added, _) = roots.add_parsable_certificates(found.certs);
                if added == 0 {
                    return Err(format!(
                        "no truststore is configured and the system has no trusted CA \
                         certificates ({} errors loading them)",
                        found.errors.len()
                    ));
                }
            }
        }
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| format!("the trusted CA certificates: {e}"))?;
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS set-up: {e}"))?;
        let builder = if tls.verify_hostname {
            builder.with_webpki_verifier(webpki)
        } else {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoHostnameVerifier(webpki)))
        };
        let (config, has_client_cert) = match (&tls.client_cert_pem, &tls.client_key_pem) {
            (Some(cert), Some(key)) => {
                let chain = parse_certs(cert, "the client certificate")?;
                let key = PrivateKeyDer::from_pem_slice(key.as_bytes())
                    .map_err(|e| format!("the client private key (PEM): {e}"))?;
                let config = builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("the client certificate and key: {e}"))?;
                (config, true)
            }
            (None, None) => (builder.with_no_client_auth(), false),
            (Some(_), None) => return Err("a client certificate without its private key".into()),
            (None, Some(_)) => return Err("a client private key without its certificate".into()),
        };
        Ok(TlsClient {
            connector: TlsConnector::from(Arc::new(config)),
            has_client_cert,
        })
    }

    pub fn has_client_cert(&self) -> bool {
        self.has_client_cert
    }

    /// The TLS handshake over a connected TCP stream to `broker` (`host:port`).
    pub async fn handshake(
        &self,
        broker: &str,
        tcp: TcpStream,
    ) -> std::io::Result<TlsStream<TcpStream>> {
        let host = broker
            .rsplit_once(':')
            .map(|(h, _)| h)
            .unwrap_or(broker)
            .trim_start_matches('[')
            .trim_end_matches(']');
        let name = ServerName::try_from(host.to_owned()).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("invalid broker host name {host:?}: {e}"),
            )
        })?;
        self.connector.connect(name, tcp).await
    }
}

fn parse_certs(pem: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what} (PEM): {e}"))?;
    if certs.is_empty() {
        return Err(format!("{what}: no CERTIFICATE in the PEM text"));
    }
    Ok(certs)
}

/// What went wrong in TLS, if an i/o error came from rustls: a sentence for the user.
pub fn describe_failure(err: &std::io::Error, has_client_cert: bool) -> Option<String> {
    let tls = err.get_ref()?.downcast_ref::<rustls::Error>()?;
    Some(match tls {
        rustls::Error::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer => {
                "the broker's certificate is not signed by a trusted CA \
                 (check ssl.truststore.location / ssl.truststore.certificates)"
                    .to_owned()
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!(
                    "the broker's certificate does not name this host ({c}); set \
                     ssl.endpoint.identification.algorithm= (empty) to skip the host-name check"
                )
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                format!("the broker's certificate has expired ({c})")
            }
            other => format!("the broker's certificate was rejected: {other}"),
        },
        rustls::Error::AlertReceived(
            a @ (AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::HandshakeFailure
            | AlertDescription::UnknownCA
            | AlertDescription::AccessDenied),
        ) => {
            if has_client_cert {
                format!("the broker rejected this client's certificate (TLS alert {a:?})")
            } else {
                format!(
                    "the broker requires a client certificate (TLS alert {a:?}) and none is \
                     configured (ssl.keystore.location or ssl.keystore.certificate.chain/key)"
                )
            }
        }
        rustls::Error::AlertReceived(a) => format!("the broker ended TLS with alert {a:?}"),
        rustls::Error::InvalidMessage(m) => format!(
            "the broker did not answer in TLS ({m:?}): is this a PLAINTEXT or SASL_PLAINTEXT \
             listener?"
        ),
        other => format!("TLS failed: {other}"),
    })
}

/// The WebPKI verifier without the host-name match (Java's empty
/// `ssl.endpoint.identification.algorithm`): the chain, dates and usage are still checked.
#[derive(Debug)]
struct NoHostnameVerifier(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for NoHostnameVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            // WebPKI checks the chain before the name: this error means the chain is good.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const CA: &str = include_str!("testdata/ca.pem");
    /// Signed by `CA` for `DNS:broker.example` only.
    const BROKER_CERT: &str = include_str!("testdata/broker.pem");
    const BROKER_KEY: &str = include_str!("testdata/broker.key");
    /// A CA that signed nothing here.
    const OTHER_CA: &str = include_str!("testdata/other-ca.pem");

    fn tls(ca: Option<&str>, cert: Option<&str>, key: Option<&str>, verify: bool) -> Tls {
        Tls {
            ca_pem: ca.map(str::to_owned),
            client_cert_pem: cert.map(str::to_owned),
            client_key_pem: key.map(str::to_owned),
            verify_hostname: verify,
        }
    }

    #[test]
    fn bad_pem_and_half_a_key_pair_are_errors_naming_the_part() {
        let e = TlsClient::new(&tls(Some("not pem"), None, None, true)).unwrap_err();
        assert!(e.contains("trusted CA"), "{e}");
        assert!(TlsClient::new(&tls(Some(CA), None, None, true)).is_ok());
        let e = TlsClient::new(&tls(Some(CA), Some(CA), None, true)).unwrap_err();
        assert!(e.contains("without its private key"), "{e}");
        let e = TlsClient::new(&tls(Some(CA), Some(CA), Some("junk"), true)).unwrap_err();
        assert!(e.contains("client private key"), "{e}");
    }

    /// One TLS handshake against an in-process server presenting `BROKER_CERT`, reached as
    /// `127.0.0.1` (a name the certificate does not carry).
    async fn handshake(client: Tls) -> Result<(), String> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let chain = CertificateDer::pem_slice_iter(BROKER_CERT.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_slice(BROKER_KEY.as_bytes()).unwrap();
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            if let Ok(mut s) = acceptor.accept(tcp).await {
                let _ = s.write_all(b"ok").await;
                let _ = s.flush().await;
            }
        });
        let client = TlsClient::new(&client)?;
        let tcp = TcpStream::connect(&addr).await.unwrap();
        let mut s = client
            .handshake(&addr, tcp)
            .await
            .map_err(|e| describe_failure(&e, false).unwrap_or_else(|| e.to_string()))?;
        let mut buf = [0u8; 2];
        s.read_exact(&mut buf).await.map_err(|e| e.to_string())?;
        assert_eq!(&buf, b"ok");
        Ok(())
    }

    #[tokio::test]
    async fn host_name_check_is_on_by_default_and_only_the_name_is_skipped_when_off() {
        let e = handshake(tls(Some(CA), None, None, true))
            .await
            .unwrap_err();
        assert!(e.contains("does not name this host"), "{e}");
        handshake(tls(Some(CA), None, None, false))
            .await
            .expect("the chain is good; only the name differs");
        // Without the host-name check the chain is still verified.
        let e = handshake(tls(Some(OTHER_CA), None, None, false))
            .await
            .unwrap_err();
        assert!(e.contains("not signed by a trusted CA"), "{e}");
    }
}
