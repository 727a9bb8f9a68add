//! The secured cluster of `deploy/kafka.sh up --secure` is what the security tests rely on: every
//! documented way in works with a plain librdkafka client, and nothing gets in without TLS and
//! authentication (no listener a plaintext client can use, no SASL without the right password,
//! no mTLS without a client certificate).

use std::time::Duration;

use connect_tests::secure::secure;
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};

/// Metadata through a client config, or the client's error (as text).
fn metadata(mut config: ClientConfig) -> Result<usize, String> {
    // Let librdkafka give up quickly on a listener it cannot talk to.
    config
        .set("socket.timeout.ms", "5000")
        .set("reconnect.backoff.max.ms", "1000");
    let consumer: BaseConsumer = config.create().map_err(|e| e.to_string())?;
    consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .map(|m| m.brokers().len())
        .map_err(|e| e.to_string())
}

#[test]
fn every_sasl_mechanism_and_mtls_get_metadata() {
    let s = secure();
    for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"] {
        let brokers = metadata(s.sasl_client_config(mechanism))
            .unwrap_or_else(|e| panic!("SASL_SSL {mechanism} at {}: {e}", s.sasl_ssl));
        assert_eq!(brokers, 1, "{mechanism}");
    }
    let brokers =
        metadata(s.mtls_client_config()).unwrap_or_else(|e| panic!("mTLS at {}: {e}", s.ssl));
    assert_eq!(brokers, 1);
}

#[test]
fn a_plaintext_client_is_refused_on_both_listeners() {
    let s = secure();
    for address in [&s.sasl_ssl, &s.ssl] {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", address);
        assert!(
            metadata(c).is_err(),
            "a PLAINTEXT client got metadata from {address}"
        );
    }
}

#[test]
fn wrong_credentials_a_missing_client_certificate_and_an_untrusted_ca_are_refused() {
    let s = secure();
    let mut wrong_password = s.sasl_client_config("SCRAM-SHA-512");
    wrong_password.set("sasl.password", "not-the-password");
    // librdkafka reports the broker's reason to its logs; fetch_metadata only fails.
    metadata(wrong_password).expect_err("SCRAM with a wrong password got metadata");

    let mut plain_wrong = s.sasl_client_config("PLAIN");
    plain_wrong.set("sasl.password", "not-the-password");
    metadata(plain_wrong).expect_err("PLAIN with a wrong password got metadata");

    // The SSL listener requires a client certificate.
    let mut no_cert = ClientConfig::new();
    no_cert
        .set("bootstrap.servers", &s.ssl)
        .set("security.protocol", "SSL")
        .set("ssl.ca.location", s.ca.to_string_lossy().as_ref());
    metadata(no_cert).expect_err("SSL without a client certificate got metadata");

    // The broker's certificate is not signed by the other CA.
    let mut untrusted = s.sasl_client_config("SCRAM-SHA-512");
    untrusted.set("ssl.ca.location", s.other_ca.to_string_lossy().as_ref());
    metadata(untrusted).expect_err("a client trusting only the other CA got metadata");
}

#[test]
fn the_broker_certificate_names_127_0_0_1_and_localhost() {
    let s = secure();
    // librdkafka checks the host name (ssl.endpoint.identification.algorithm=https) by default.
    let mut by_name = s.sasl_client_config("SCRAM-SHA-256");
    let port = s.sasl_ssl.rsplit(':').next().unwrap();
    by_name.set("bootstrap.servers", format!("localhost:{port}"));
    by_name.set("ssl.endpoint.identification.algorithm", "https");
    metadata(by_name).expect("SASL_SSL through localhost with host-name checks");
    let mut by_ip = s.mtls_client_config();
    by_ip.set("ssl.endpoint.identification.algorithm", "https");
    metadata(by_ip).expect("mTLS through 127.0.0.1 with host-name checks");
}
