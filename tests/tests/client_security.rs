//! The worker's librdkafka clients against a secured Apache Kafka (`deploy/kafka.sh up
//! --secure`, found through `KAFKA_SECURE_ENV`): SASL_SSL with SCRAM and a PKCS#12 truststore,
//! mTLS with a PKCS#12 keystore, and start-ups that cannot authenticate failing at once with a
//! message naming the problem.
//!
//! The group join needs the group-membership client's TLS and SASL (another branch): these
//! tests check what librdkafka clients do, up to the internal topics on the secure cluster.

use std::time::Duration;

use connect_tests::secure::{SecureKafka, secure};
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually, free_port, worker_binary};
use rdkafka::consumer::{BaseConsumer, Consumer};

fn scram_jaas(user: &str, password: &str) -> String {
    format!(
        r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" password="{password}";"#
    )
}

/// A worker config on the SASL_SSL listener with SCRAM-SHA-512 and the PKCS#12 truststore.
fn sasl_ssl_spec(prefix: &str, password: &str) -> ClusterSpec {
    let s = secure();
    ClusterSpec::new(prefix)
        .set("bootstrap.servers", &s.sasl_ssl)
        .set("security.protocol", "SASL_SSL")
        .set("sasl.mechanism", "SCRAM-SHA-512")
        .set("sasl.jaas.config", &scram_jaas(&s.scram_user, password))
        .set("ssl.truststore.type", "PKCS12")
        .set(
            "ssl.truststore.location",
            &s.truststore_p12.to_string_lossy(),
        )
        .set("ssl.truststore.password", &s.truststore_p12_password)
}

/// Waits until the three internal topics of `spec` exist on the secure cluster.
async fn internal_topics_exist(spec: &ClusterSpec, w: &WorkerProc) {
    let names: Vec<String> = ["config", "offset", "status"]
        .iter()
        .map(|t| spec.props[&format!("{t}.storage.topic")].clone())
        .collect();
    let consumer: BaseConsumer = secure()
        .sasl_client_config("SCRAM-SHA-512")
        .create()
        .unwrap();
    let consumer = std::sync::Arc::new(consumer);
    eventually(
        Duration::from_secs(60),
        "the worker's internal topics on the secure cluster",
        || {
            let (consumer, names) = (consumer.clone(), names.clone());
            async move {
                tokio::task::spawn_blocking(move || {
                    let md = consumer.fetch_metadata(None, Duration::from_secs(5)).ok()?;
                    let have: Vec<&str> = md
                        .topics()
                        .iter()
                        .filter(|t| !t.partitions().is_empty())
                        .map(|t| t.name())
                        .collect();
                    names
                        .iter()
                        .all(|n| have.contains(&n.as_str()))
                        .then_some(())
                })
                .await
                .unwrap()
            }
        },
    )
    .await;
    assert!(
        w.log_text().contains("connected to Kafka"),
        "{}",
        w.log_text()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_on_sasl_ssl_with_scram_creates_its_internal_topics_on_the_secure_cluster() {
    let s = secure();
    let spec = sasl_ssl_spec("sec-scram", &s.scram_password);
    let w = WorkerProc::spawn(&spec, free_port());
    internal_topics_exist(&spec, &w).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_with_a_pkcs12_client_certificate_creates_its_internal_topics_over_mtls() {
    let s = secure();
    let spec = ClusterSpec::new("sec-mtls")
        .set("bootstrap.servers", &s.ssl)
        .set("security.protocol", "SSL")
        .set("ssl.truststore.type", "PEM")
        .set("ssl.truststore.location", &s.ca.to_string_lossy())
        .set("ssl.keystore.type", "PKCS12")
        .set("ssl.keystore.location", &s.client_p12.to_string_lossy())
        .set("ssl.keystore.password", &s.client_p12_password);
    let w = WorkerProc::spawn(&spec, free_port());
    internal_topics_exist(&spec, &w).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_on_oauthbearer_with_an_unsecured_token_and_inline_ca_creates_its_internal_topics()
{
    let s = secure();
    let ca = SecureKafka::read_pem(&s.ca);
    let spec = ClusterSpec::new("sec-oauth")
        .set("bootstrap.servers", &s.sasl_ssl)
        .set("security.protocol", "SASL_SSL")
        .set("sasl.mechanism", "OAUTHBEARER")
        .set(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"connect\";",
        )
        // Java's inline PEM: one line in a properties file.
        .set(
            "ssl.truststore.certificates",
            &ca.trim().replace('\n', "\\n"),
        );
    let w = WorkerProc::spawn(&spec, free_port());
    internal_topics_exist(&spec, &w).await;
}

/// Runs a worker with `spec` to its exit; returns its stderr and stdout.
async fn run_to_exit(spec: &ClusterSpec) -> String {
    let props = spec.dir.join("w.properties");
    let text: String = spec
        .props
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    std::fs::write(&props, text + "listeners=http://127.0.0.1:0\n").unwrap();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(worker_binary())
            .arg(&props)
            .env("NO_COLOR", "1")
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(!out.status.success(), "the worker must not start");
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    // The fast path (not 15 metadata attempts ending in "no answer").
    let line = text
        .lines()
        .find(|l| l.contains("Kafka refused this worker's connection"))
        .unwrap_or_else(|| panic!("no start-up error naming the problem: {text}"));
    line.to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn start_up_with_a_wrong_password_fails_naming_the_authentication_failure() {
    let err = run_to_exit(&sasl_ssl_spec("sec-wrongpw", "not-the-password")).await;
    assert!(
        err.contains("Authentication failed") && err.contains("sasl.jaas.config"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn start_up_trusting_another_ca_fails_naming_the_certificate() {
    let s = secure();
    let mut spec = sasl_ssl_spec("sec-otherca", &s.scram_password);
    spec.props.remove("ssl.truststore.password");
    let spec = spec
        .set("ssl.truststore.type", "PEM")
        .set("ssl.truststore.location", &s.other_ca.to_string_lossy());
    let err = run_to_exit(&spec).await;
    assert!(
        err.contains("certificate verify failed") && err.contains("ssl.truststore"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn start_up_with_sasl_ssl_aimed_at_a_plaintext_listener_fails_naming_the_protocol() {
    let s = secure();
    let spec = sasl_ssl_spec("sec-plain", &s.scram_password).set(
        "bootstrap.servers",
        &connect_tests::kafka::bootstrap_servers(),
    );
    let err = run_to_exit(&spec).await;
    assert!(
        err.contains("PLAINTEXT broker listener") && err.contains("security.protocol"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn credentials_without_a_sasl_protocol_fail_start_up_instead_of_running_plaintext() {
    // Aimed at the plain broker: this worker would connect, unauthenticated.
    let s = secure();
    let mut spec = sasl_ssl_spec("sec-noproto", &s.scram_password).set(
        "bootstrap.servers",
        &connect_tests::kafka::bootstrap_servers(),
    );
    spec.props.remove("security.protocol");
    let props = spec.dir.join("w.properties");
    let text: String = spec
        .props
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    std::fs::write(&props, text).unwrap();
    let out = std::process::Command::new(worker_binary())
        .arg(&props)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("configuration sasl.jaas.config")
            && err.contains("security.protocol is PLAINTEXT"),
        "{err}"
    );
    assert!(!err.contains(&s.scram_password), "{err}");
}
