use openssl::asn1::Asn1Time;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::stack::Stack;
use openssl::symm::Cipher;
use openssl::x509::X509NameBuilder;

use super::*;

/// A self-signed certificate and its key.
fn identity(cn: &str) -> (X509, PKey<Private>) {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
    let key = PKey::from_ec_key(EcKey::generate(&group).unwrap()).unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", cn).unwrap();
    let name = name.build();
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::days_from_now(1).unwrap())
        .unwrap();
    b.sign(&key, MessageDigest::sha256()).unwrap();
    (b.build(), key)
}

fn pem(c: &X509) -> String {
    String::from_utf8(c.to_pem().unwrap()).unwrap()
}

fn key_pem(k: &PKey<Private>) -> String {
    String::from_utf8(k.private_key_to_pem_pkcs8().unwrap()).unwrap()
}

fn temp_file(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("connect-security-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

fn keys(prefix: &str, pairs: &[(&str, &str)]) -> BTreeMap<String, Written> {
    pairs
        .iter()
        .map(|(k, v)| {
            (
                (*k).to_owned(),
                Written {
                    key: format!("{prefix}{k}"),
                    value: (*v).to_owned(),
                },
            )
        })
        .collect()
}

fn ok(pairs: &[(&str, &str)]) -> Resolved {
    resolve(&keys("", pairs)).unwrap()
}

fn err(pairs: &[(&str, &str)]) -> ClientKeyError {
    resolve(&keys("", pairs)).unwrap_err().remove(0)
}

fn librdkafka(s: &KafkaSecurity) -> BTreeMap<&'static str, String> {
    librdkafka_keys(s).into_iter().collect()
}

const SCRAM: &str = r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="connect-secret";"#;

#[test]
fn protocols_take_javas_names_and_nothing_else() {
    assert_eq!(ok(&[]).security, KafkaSecurity::default());
    let r = ok(&[("security.protocol", "plaintext")]);
    assert_eq!(r.security.protocol, SecurityProtocol::Plaintext);
    assert_eq!(librdkafka(&r.security)["security.protocol"], "PLAINTEXT");
    let e = err(&[("security.protocol", "TLS")]);
    assert_eq!(
        e.to_string(),
        "Invalid value TLS for configuration security.protocol: String must be one of (case insensitive): PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"
    );
}

#[test]
fn plain_and_scram_jaas_become_a_user_name_and_password() {
    for (mechanism, expected) in [
        ("PLAIN", SaslMechanism::Plain),
        ("SCRAM-SHA-256", SaslMechanism::ScramSha256),
        ("scram-sha-512", SaslMechanism::ScramSha512),
    ] {
        let r = ok(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", mechanism),
            ("sasl.jaas.config", SCRAM),
        ]);
        let sasl = r.security.sasl.clone().unwrap();
        assert_eq!(sasl.mechanism, expected);
        assert_eq!(
            sasl.credentials,
            SaslCredentials::UsernamePassword {
                username: "connect".into(),
                password: "connect-secret".into()
            }
        );
        assert_eq!(r.security.tls, None);
        let l = librdkafka(&r.security);
        assert_eq!(l["sasl.mechanism"], expected.name());
        assert_eq!(l["sasl.username"], "connect");
        assert_eq!(l["sasl.password"], "connect-secret");
        assert_eq!(l["security.protocol"], "SASL_PLAINTEXT");
    }
    // librdkafka's own keys work too.
    let r = ok(&[
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanisms", "PLAIN"),
        ("sasl.username", "u"),
        ("sasl.password", "p"),
    ]);
    assert_eq!(r.security.sasl.unwrap().mechanism, SaslMechanism::Plain);
}

#[test]
fn oauthbearer_with_an_unsecured_token_becomes_librdkafkas_unsecured_jwt() {
    let r = ok(&[
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", "OAUTHBEARER"),
        (
            "sasl.jaas.config",
            r#"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="connect";"#,
        ),
    ]);
    assert_eq!(
        r.security.sasl.as_ref().unwrap().credentials,
        SaslCredentials::UnsecuredToken {
            principal: "connect".into()
        }
    );
    let l = librdkafka(&r.security);
    assert_eq!(l["enable.sasl.oauthbearer.unsecure.jwt"], "true");
    assert_eq!(l["sasl.oauthbearer.config"], "principal=connect");
    // The OIDC client-credentials flow needs librdkafka with curl: an error naming the key.
    let e = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "OAUTHBEARER"),
        ("sasl.oauthbearer.token.endpoint.url", "https://idp/token"),
        (
            "sasl.jaas.config",
            r#"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="c" clientSecret="s";"#,
        ),
    ]);
    assert_eq!(e.key, "sasl.oauthbearer.token.endpoint.url");
    assert!(e.reason.contains("curl"), "{}", e.reason);
    let e = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "OAUTHBEARER"),
        (
            "sasl.jaas.config",
            r#"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="c" clientSecret="s";"#,
        ),
    ]);
    assert_eq!(
        (e.key.as_str(), e.value.as_str()),
        ("sasl.jaas.config", "[hidden]")
    );
    assert!(e.reason.contains("client-credentials"), "{}", e.reason);
    let e = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "OAUTHBEARER"),
        ("sasl.jaas.config", SCRAM),
    ]);
    assert!(e.reason.contains("OAuthBearerLoginModule"), "{}", e.reason);
}

#[test]
fn kerberos_and_unknown_mechanisms_are_errors_naming_the_key() {
    // GSSAPI is Java's default mechanism.
    let e = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.jaas.config", SCRAM),
    ]);
    assert_eq!(e.key, "sasl.mechanism");
    assert!(e.reason.contains("GSSAPI"), "{}", e.reason);
    let e = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "GSSAPI"),
        ("sasl.jaas.config", SCRAM),
    ]);
    assert_eq!(e.key, "sasl.mechanism");
    let e = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "PLAIN"),
        (
            "sasl.jaas.config",
            "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/k\";",
        ),
    ]);
    assert_eq!(e.key, "sasl.jaas.config");
    assert!(e.reason.contains("Kerberos"), "{}", e.reason);
    let e = err(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "PLAIN"),
    ]);
    assert_eq!(
        (e.key.as_str(), e.value.as_str()),
        ("sasl.jaas.config", "null")
    );
    // A prefixed config names its own keys.
    let e = resolve(&keys(
        "producer.",
        &[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "PLAIN"),
        ],
    ))
    .unwrap_err();
    assert_eq!(e[0].key, "producer.sasl.jaas.config");
}

#[test]
fn pem_truststores_inline_certificates_and_librdkafka_locations_become_the_ca_pem() {
    let (ca, _) = identity("ca");
    let ca_pem = pem(&ca);
    let file = temp_file("ca.pem", ca_pem.as_bytes());
    for pairs in [
        vec![
            ("ssl.truststore.type", "PEM"),
            ("ssl.truststore.location", file.as_str()),
        ],
        // No type: Java's default is JKS, the file says PEM.
        vec![("ssl.truststore.location", file.as_str())],
        vec![("ssl.truststore.certificates", ca_pem.as_str())],
        vec![("ssl.ca.location", file.as_str())],
    ] {
        let mut pairs = pairs.clone();
        pairs.push(("security.protocol", "SSL"));
        let r = ok(&pairs);
        let tls = r.security.tls.unwrap();
        assert_eq!(tls.ca_pem.as_deref(), Some(ca_pem.as_str()), "{pairs:?}");
        assert!(tls.verify_hostname);
        assert_eq!(r.security.sasl, None);
    }
    let e = err(&[
        ("security.protocol", "SSL"),
        ("ssl.truststore.certificates", ca_pem.as_str()),
        ("ssl.ca.location", file.as_str()),
    ]);
    assert_eq!(e.key, "ssl.ca.location");
    let e = err(&[
        ("security.protocol", "SSL"),
        ("ssl.truststore.location", "/no/such.pem"),
    ]);
    assert_eq!(e.key, "ssl.truststore.location");
    assert!(e.reason.contains("/no/such.pem"), "{}", e.reason);
}

#[test]
fn pkcs12_stores_become_pem_and_a_wrong_password_names_the_key() {
    let (ca, ca_key) = identity("ca");
    let mut cas = Stack::new().unwrap();
    cas.push(ca.clone()).unwrap();
    let truststore = openssl::pkcs12::Pkcs12::builder()
        .ca(cas)
        .build2("trust-pw")
        .unwrap()
        .to_der()
        .unwrap();
    let trust_file = temp_file("truststore.p12", &truststore);
    let keystore = openssl::pkcs12::Pkcs12::builder()
        .name("client")
        .pkey(&ca_key)
        .cert(&ca)
        .build2("key-pw")
        .unwrap()
        .to_der()
        .unwrap();
    let key_file = temp_file("keystore.p12", &keystore);
    let r = ok(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "SCRAM-SHA-512"),
        ("sasl.jaas.config", SCRAM),
        ("ssl.truststore.type", "PKCS12"),
        ("ssl.truststore.location", &trust_file),
        ("ssl.truststore.password", "trust-pw"),
        ("ssl.keystore.type", "PKCS12"),
        ("ssl.keystore.location", &key_file),
        ("ssl.keystore.password", "key-pw"),
        ("ssl.key.password", "key-pw"),
    ]);
    let tls = r.security.tls.clone().unwrap();
    assert_eq!(tls.ca_pem.as_deref(), Some(pem(&ca).as_str()));
    assert_eq!(tls.client_cert_pem.as_deref(), Some(pem(&ca).as_str()));
    assert_eq!(
        tls.client_key_pem.as_deref(),
        Some(key_pem(&ca_key).as_str())
    );
    let l = librdkafka(&r.security);
    assert_eq!(l["ssl.ca.pem"], pem(&ca));
    assert_eq!(l["ssl.certificate.pem"], pem(&ca));
    assert_eq!(l["ssl.key.pem"], key_pem(&ca_key));
    assert!(!l.contains_key("ssl.keystore.location"));
    // librdkafka accepts what it is given.
    let mut c = rdkafka::ClientConfig::new();
    for (k, v) in &l {
        c.set(*k, v);
    }
    c.create_native_config().unwrap();
    let e = err(&[
        ("security.protocol", "SSL"),
        ("ssl.truststore.type", "PKCS12"),
        ("ssl.truststore.location", &trust_file),
        ("ssl.truststore.password", "wrong"),
    ]);
    assert_eq!(e.key, "ssl.truststore.location");
    assert!(e.reason.contains("ssl.truststore.password"), "{}", e.reason);
}

#[test]
fn jks_stores_are_errors_that_say_how_to_convert_them() {
    let e = err(&[
        ("security.protocol", "SSL"),
        ("ssl.truststore.type", "JKS"),
        ("ssl.truststore.location", "/etc/kafka/truststore.jks"),
    ]);
    assert_eq!(e.key, "ssl.truststore.type");
    assert!(
        e.reason
            .contains("keytool -importkeystore -srckeystore /etc/kafka/truststore.jks"),
        "{}",
        e.reason
    );
    // No type: a JKS file (magic 0xFEEDFEED) is recognised.
    let jks = temp_file("keystore.jks", &[0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2]);
    let e = err(&[
        ("security.protocol", "SSL"),
        ("ssl.keystore.location", &jks),
    ]);
    assert_eq!(e.key, "ssl.keystore.location");
    assert!(e.reason.contains("-deststoretype PKCS12"), "{}", e.reason);
}

#[test]
fn pem_keystores_inline_keys_and_encrypted_keys() {
    let (cert, key) = identity("client");
    let encrypted = String::from_utf8(
        key.private_key_to_pem_pkcs8_passphrase(Cipher::aes_256_cbc(), b"kpw")
            .unwrap(),
    )
    .unwrap();
    let store = temp_file(
        "keystore.pem",
        format!("{encrypted}{}", pem(&cert)).as_bytes(),
    );
    let r = ok(&[
        ("security.protocol", "SSL"),
        ("ssl.keystore.type", "PEM"),
        ("ssl.keystore.location", &store),
        ("ssl.key.password", "kpw"),
    ]);
    let tls = r.security.tls.unwrap();
    assert_eq!(tls.client_key_pem.as_deref(), Some(key_pem(&key).as_str()));
    assert_eq!(tls.client_cert_pem.as_deref(), Some(pem(&cert).as_str()));
    assert_eq!(tls.ca_pem, None);
    let r = ok(&[
        ("security.protocol", "SSL"),
        ("ssl.keystore.certificate.chain", &pem(&cert)),
        ("ssl.keystore.key", &key_pem(&key)),
    ]);
    assert!(r.security.tls.unwrap().client_key_pem.is_some());
    let e = err(&[
        ("security.protocol", "SSL"),
        ("ssl.keystore.certificate.chain", &pem(&cert)),
        ("ssl.keystore.key", &encrypted),
    ]);
    assert_eq!(
        (e.key.as_str(), e.value.as_str()),
        ("ssl.keystore.key", "[hidden]")
    );
    assert!(e.reason.contains("ssl.key.password"), "{}", e.reason);
    let (_, other_key) = identity("other");
    let e = err(&[
        ("security.protocol", "SSL"),
        ("ssl.keystore.certificate.chain", &pem(&cert)),
        ("ssl.keystore.key", &key_pem(&other_key)),
    ]);
    assert!(e.reason.contains("does not belong"), "{}", e.reason);
    let e = err(&[
        ("security.protocol", "SSL"),
        ("ssl.keystore.key", &key_pem(&key)),
    ]);
    assert_eq!(e.key, "ssl.keystore.key");
}

#[test]
fn an_empty_endpoint_identification_algorithm_turns_host_name_checks_off() {
    let r = ok(&[
        ("security.protocol", "SSL"),
        ("ssl.endpoint.identification.algorithm", ""),
    ]);
    assert!(!r.security.tls.as_ref().unwrap().verify_hostname);
    assert_eq!(
        librdkafka(&r.security)["ssl.endpoint.identification.algorithm"],
        "none"
    );
    let r = ok(&[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.jaas.config", SCRAM),
    ]);
    assert_eq!(
        librdkafka(&r.security)["ssl.endpoint.identification.algorithm"],
        "https"
    );
    let e = err(&[
        ("security.protocol", "SSL"),
        ("ssl.endpoint.identification.algorithm", "ldap"),
    ]);
    assert_eq!(e.key, "ssl.endpoint.identification.algorithm");
}

#[test]
fn keys_a_protocol_does_not_use_are_reported_unused() {
    let r = ok(&[
        ("sasl.jaas.config", SCRAM),
        ("ssl.truststore.certificates", "x"),
    ]);
    let unused: Vec<&str> = r.unused.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(unused, ["sasl.jaas.config", "ssl.truststore.certificates"]);
    let e = unused_error(
        &r.unused[0],
        "security.protocol",
        SecurityProtocol::Plaintext,
    );
    assert_eq!(e.value, "[hidden]");
    assert!(e.reason.contains("SASL_SSL"), "{}", e.reason);
    assert!(
        format!("{:?}", r.unused[0]).contains("[hidden]"),
        "secrets never appear in logs"
    );
}
