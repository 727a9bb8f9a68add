//! The registry client over TLS with client certificates, against the real registry
//! (`SCHEMA_REGISTRY_URL`, e.g. `deploy/registry.sh up`; skipped, with a note, when unset)
//! behind a TLS front that requires a client certificate of the test's own CA (rustls; the
//! certificates are made by the `openssl` command line). Confluent's keys with PKCS12 stores and
//! with PEM files (an encrypted key and `schema.registry.ssl.key.password`), Apicurio's keys;
//! no client certificate, an untrusted server and a JKS store are errors that say so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use connect_api::{ConfigMap, Converter, Schema, Value};
use connect_registry::avro::converter::AvroConverter;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, as PEM, PKCS12 and a
/// fake JKS file.
fn certificates(dir: &Path) {
    let req = |name: &str, cn: &str| {
        openssl(
            dir,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &format!("/CN={cn}"),
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &format!("{name}.pem"),
                "-days",
                "2",
                "-extfile",
                "san.cnf",
            ],
        );
    };
    std::fs::write(
        dir.join("san.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=registry-test-ca",
        ],
    );
    req("server", "localhost");
    req("client", "client");
    openssl(
        dir,
        &[
            "pkey",
            "-in",
            "client.key",
            "-aes256",
            "-passout",
            "pass:key-secret",
            "-out",
            "client-enc.key",
        ],
    );
    let enc_key = std::fs::read(dir.join("client-enc.key")).unwrap();
    let cert = std::fs::read(dir.join("client.pem")).unwrap();
    std::fs::write(dir.join("client-store.pem"), [enc_key, cert].concat()).unwrap();
    openssl(
        dir,
        &[
            "pkcs12",
            "-export",
            "-in",
            "client.pem",
            "-inkey",
            "client.key",
            "-certfile",
            "ca.pem",
            "-out",
            "client.p12",
            "-passout",
            "pass:store-secret",
        ],
    );
    openssl(
        dir,
        &[
            "pkcs12",
            "-export",
            "-nokeys",
            "-in",
            "ca.pem",
            "-out",
            "trust.p12",
            "-passout",
            "pass:trust-secret",
        ],
    );
    std::fs::write(dir.join("trust.jks"), [0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2]).unwrap();
}

/// A TLS front on 127.0.0.1 (client certificates of `ca.pem` required) to `backend`; its port.
fn tls_front(dir: &Path, backend: String) -> u16 {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("server.pem"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_file(dir.join("server.key")).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_file_iter(dir.join("ca.pem")).unwrap() {
        roots.add(ca.unwrap()).unwrap();
    }
    let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots))
        .build()
        .unwrap();
    let config = rustls::ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, backend) = (acceptor.clone(), backend.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    if let Ok(mut up) = tokio::net::TcpStream::connect(&backend).await {
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
                    }
                });
            }
        });
    });
    port
}

fn config(pairs: &[(&str, String)]) -> ConfigMap {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// Writes and reads one record through `converter`'s registry.
fn round_trip(mut converter: AvroConverter, props: ConfigMap, topic: &str) -> Result<(), String> {
    converter
        .configure(&props, false)
        .map_err(|e| e.to_string())?;
    let bytes = converter
        .from_connect_data(topic, Some(&Schema::int64()), &Value::Int64(42))
        .map_err(|e| e.to_string())?;
    let read = converter
        .to_connect_data(topic, bytes.as_deref())
        .map_err(|e| e.to_string())?;
    assert_eq!(read.value, Value::Int64(42));
    Ok(())
}

#[test]
fn the_registry_client_speaks_tls_with_client_certificates() {
    let Some(url) = std::env::var("SCHEMA_REGISTRY_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        println!("SCHEMA_REGISTRY_URL is not set: skipped (deploy/registry.sh up)");
        return;
    };
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir: PathBuf = std::env::temp_dir().join(format!("registry-tls-{run}"));
    std::fs::create_dir_all(&dir).unwrap();
    certificates(&dir);
    let backend = url
        .split("://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap()
        .to_owned();
    let port = tls_front(&dir, backend);
    let https = format!("https://127.0.0.1:{port}/apis/ccompat/v7");
    let file = |name: &str| dir.join(name).display().to_string();
    let topic = |case: &str| format!("tls-{run}-{case}");

    // PKCS12 trust and key stores, with their passwords.
    let p12 = [
        ("schema.registry.url", https.clone()),
        ("schema.registry.ssl.truststore.location", file("trust.p12")),
        ("schema.registry.ssl.truststore.type", "PKCS12".into()),
        (
            "schema.registry.ssl.truststore.password",
            "trust-secret".into(),
        ),
        ("schema.registry.ssl.keystore.location", file("client.p12")),
        ("schema.registry.ssl.keystore.type", "PKCS12".into()),
        (
            "schema.registry.ssl.keystore.password",
            "store-secret".into(),
        ),
    ];
    round_trip(AvroConverter::default(), config(&p12), &topic("p12")).unwrap();

    // PEM files: the CA, and an encrypted key with its certificate (types left at Java's
    // default, JKS: the files say what they are).
    let pem = [
        ("schema.registry.url", https.clone()),
        ("schema.registry.ssl.truststore.location", file("ca.pem")),
        (
            "schema.registry.ssl.keystore.location",
            file("client-store.pem"),
        ),
        ("schema.registry.ssl.key.password", "key-secret".into()),
    ];
    round_trip(AvroConverter::default(), config(&pem), &topic("pem")).unwrap();

    // Apicurio's keys for the same.
    let apicurio = [
        (
            "apicurio.registry.url",
            format!("https://127.0.0.1:{port}/apis/registry/v3"),
        ),
        ("apicurio.registry.auto-register", "true".into()),
        (
            "apicurio.registry.tls.truststore.location",
            file("trust.p12"),
        ),
        ("apicurio.registry.tls.truststore.type", "P12".into()),
        (
            "apicurio.registry.tls.truststore.password",
            "trust-secret".into(),
        ),
        (
            "apicurio.registry.tls.client-certificate",
            file("client.pem"),
        ),
        ("apicurio.registry.tls.client-key", file("client.key")),
    ];
    round_trip(
        AvroConverter::apicurio(),
        config(&apicurio),
        &topic("apicurio"),
    )
    .unwrap();

    // No client certificate: the registry cannot be reached, and the error says why.
    let e = round_trip(
        AvroConverter::default(),
        config(&pem[..2]),
        &topic("no-client-cert"),
    )
    .unwrap_err();
    assert!(e.contains("could not be reached"), "{e}");
    // The platform's roots do not trust the test CA.
    let e = round_trip(
        AvroConverter::default(),
        config(&[("schema.registry.url", https.clone())]),
        &topic("untrusted"),
    )
    .unwrap_err();
    assert!(e.contains("could not be reached"), "{e}");
    // A wrong password and a JKS store are configuration errors naming the key.
    let mut wrong = p12.to_vec();
    wrong[6].1 = "wrong".into();
    let e = round_trip(AvroConverter::default(), config(&wrong), &topic("wrong")).unwrap_err();
    assert!(e.contains("schema.registry.ssl.keystore.password"), "{e}");
    let e = round_trip(
        AvroConverter::default(),
        config(&[
            ("schema.registry.url", https.clone()),
            ("schema.registry.ssl.truststore.location", file("trust.jks")),
        ]),
        &topic("jks"),
    )
    .unwrap_err();
    assert!(e.contains("keytool -importkeystore"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
