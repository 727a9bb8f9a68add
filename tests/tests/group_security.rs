// Real-broker tests of the group-membership client (`connect_worker::cluster`) on the secured
// cluster of `deploy/kafka.sh up --secure` (its `secure.env`, named by KAFKA_SECURE_ENV):
// members join one Connect group over SASL_SSL with SCRAM-SHA-512, SCRAM-SHA-256, PLAIN and
// OAUTHBEARER (unsecured token made per authentication, and a static token) and over SSL with
// a client certificate, exactly as the worker's
// herder runs its member; a SASL connection re-authenticates in band before the session
// lifetime the broker gives ends; and each misconfiguration ends the member with a fatal error
// naming the broker and the problem (wrong password, untrusted CA, SASL_SSL aimed at the plain
// broker, SASL_SSL aimed at the mTLS listener, mTLS without a client certificate) instead of
// a retry loop.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use connect_tests::kafka::bootstrap_servers;
use connect_tests::secure::{SecureKafka, secure};
use connect_worker::cluster::client::{Connection, Security};
use connect_worker::cluster::sasl::unsecured_jwt;
use connect_worker::cluster::{
    ClusterConfigSnapshot, ConnectProtocolVersion, GroupEvent, GroupHandle, MembershipConfig, Work,
    spawn_member,
};
use connect_worker::security::{
    KafkaSecurity, Sasl, SaslCredentials, SaslMechanism, SecurityProtocol, Tls,
};
use tokio::sync::watch;

/// TLS trusting the CA in `ca` (PEM), with the cluster's client certificate when `client_cert`.
fn tls(ca: &Path, client_cert: bool) -> Tls {
    let s = secure();
    Tls {
        ca_pem: Some(SecureKafka::read_pem(ca)),
        client_cert_pem: client_cert.then(|| SecureKafka::read_pem(&s.client_cert)),
        client_key_pem: client_cert.then(|| SecureKafka::read_pem(&s.client_key)),
        verify_hostname: true,
    }
}

fn sasl_ssl(mechanism: SaslMechanism, credentials: SaslCredentials) -> KafkaSecurity {
    KafkaSecurity {
        protocol: SecurityProtocol::SaslSsl,
        tls: Some(tls(&secure().ca, false)),
        sasl: Some(Sasl {
            mechanism,
            credentials,
        }),
    }
}

/// The SCRAM user, with its password unless `password` is given.
fn scram(mechanism: SaslMechanism, password: Option<&str>) -> KafkaSecurity {
    let s = secure();
    sasl_ssl(
        mechanism,
        SaslCredentials::UsernamePassword {
            username: s.scram_user.clone(),
            password: password.unwrap_or(&s.scram_password).to_owned(),
        },
    )
}

fn mtls(client_cert: bool) -> KafkaSecurity {
    KafkaSecurity {
        protocol: SecurityProtocol::Ssl,
        tls: Some(tls(&secure().ca, client_cert)),
        sasl: None,
    }
}

fn config(group: &str, name: &str, bootstrap: &str, security: KafkaSecurity) -> MembershipConfig {
    MembershipConfig {
        bootstrap_servers: bootstrap.to_owned(),
        group_id: group.to_owned(),
        session_timeout: Duration::from_millis(10_000),
        rebalance_timeout: Duration::from_millis(30_000),
        heartbeat_interval: Duration::from_millis(1_000),
        protocol: ConnectProtocolVersion::Sessioned,
        worker_url: format!("http://{name}:8083/"),
        scheduled_rebalance_max_delay: Duration::from_millis(3_000),
        client_id: format!("connect-{name}"),
        security,
        live_work: Default::default(),
    }
}

#[derive(Debug, Default, Clone)]
struct Seen {
    owned: Work,
    generation: Option<i32>,
    is_leader: bool,
    fatal: Option<String>,
}

/// A member plus the herder's part of applying its events (as in cluster_membership.rs).
fn start(
    config: MembershipConfig,
    snapshot: watch::Receiver<Arc<ClusterConfigSnapshot>>,
) -> (Arc<GroupHandle>, Arc<Mutex<Seen>>) {
    let (handle, mut events) = spawn_member(config, snapshot);
    let handle = Arc::new(handle);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (h, s) = (handle.clone(), seen.clone());
    tokio::spawn(async move {
        while let Some(ev) = events.recv().await {
            match ev {
                GroupEvent::Assigned {
                    generation,
                    is_leader,
                    assignment,
                    ..
                } => {
                    {
                        let mut seen = s.lock().unwrap();
                        seen.generation = Some(generation);
                        seen.is_leader = is_leader;
                        if !assignment.failed() {
                            seen.owned.apply(&assignment);
                        }
                    }
                    if assignment.failed() || assignment.has_revocations() {
                        h.request_rejoin();
                    }
                    if assignment.delay > 0 {
                        let h = h.clone();
                        let delay = Duration::from_millis(assignment.delay as u64);
                        tokio::spawn(async move {
                            tokio::time::sleep(delay).await;
                            h.request_rejoin();
                        });
                    }
                }
                GroupEvent::MembershipLost => s.lock().unwrap().owned = Work::default(),
                GroupEvent::Fatal(msg) => s.lock().unwrap().fatal = Some(msg),
                GroupEvent::RebalanceStarted => {}
            }
        }
    });
    (handle, seen)
}

/// A running member: its name, handle and what it has seen.
type Started = (&'static str, Arc<GroupHandle>, Arc<Mutex<Seen>>);

async fn wait_for(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_on_every_mechanism_and_on_mtls_form_one_group() {
    let s = secure();
    let (sasl_ssl_addr, ssl) = (s.sasl_ssl.clone(), s.ssl.clone());
    let group = connect_tests::unique("group-security");
    let snapshot = ClusterConfigSnapshot {
        offset: 1,
        connectors: BTreeMap::from([("conn".to_string(), 5)]),
    };
    let configured = Work::configured(&snapshot);
    let (_tx, rx) = watch::channel(Arc::new(snapshot));
    let members: Vec<(&'static str, String, KafkaSecurity)> = vec![
        (
            "scram512",
            sasl_ssl_addr.clone(),
            scram(SaslMechanism::ScramSha512, None),
        ),
        (
            "scram256",
            sasl_ssl_addr.clone(),
            scram(SaslMechanism::ScramSha256, None),
        ),
        (
            "plain",
            sasl_ssl_addr.clone(),
            sasl_ssl(
                SaslMechanism::Plain,
                SaslCredentials::UsernamePassword {
                    username: s.plain_user.clone(),
                    password: s.plain_password.clone(),
                },
            ),
        ),
        (
            "oauth",
            sasl_ssl_addr.clone(),
            sasl_ssl(
                SaslMechanism::OAuthBearer,
                SaslCredentials::UnsecuredToken {
                    principal: "connect".into(),
                },
            ),
        ),
        (
            "oauth-static",
            sasl_ssl_addr.clone(),
            sasl_ssl(
                SaslMechanism::OAuthBearer,
                SaslCredentials::Token {
                    token: unsecured_jwt("connect", SystemTime::now()),
                },
            ),
        ),
        ("mtls", ssl.clone(), mtls(true)),
    ];
    let started: Vec<Started> = members
        .into_iter()
        .map(|(name, bootstrap, security)| {
            let (h, s) = start(config(&group, name, &bootstrap, security), rx.clone());
            (name, h, s)
        })
        .collect();
    // Every member assigned in one generation, the work covered once, and the 5 tasks spread
    // one per member (so at least five of the six hold work the leader gave them).
    wait_for(
        "the six members to share the work",
        Duration::from_secs(90),
        || {
            let mut all = Work::default();
            let mut generations = Vec::new();
            let mut tasks = Vec::new();
            for (name, _, s) in &started {
                let s = s.lock().unwrap();
                assert!(s.fatal.is_none(), "member {name} failed: {:?}", s.fatal);
                generations.push(s.generation);
                tasks.push(s.owned.tasks.len());
                all.connectors.extend(s.owned.connectors.iter().cloned());
                all.tasks.extend(s.owned.tasks.iter().cloned());
            }
            tasks.sort();
            let done = all == configured
                && generations[0].is_some()
                && generations.iter().all(|g| *g == generations[0])
                && tasks == [0, 1, 1, 1, 1, 1];
            if !done {
                eprintln!("generations {generations:?}, tasks {tasks:?}");
            }
            done
        },
    )
    .await;
    let leaders = started
        .iter()
        .filter(|(_, _, s)| s.lock().unwrap().is_leader)
        .count();
    assert_eq!(leaders, 1);
    for (_, h, _) in &started {
        h.leave().await;
    }
}

/// The member's first event is a fatal error (no retry loop), and it names the broker.
async fn fatal_message(bootstrap: &str, security: KafkaSecurity) -> String {
    let group = connect_tests::unique("group-security-fail");
    let (_tx, rx) = watch::channel(Arc::new(ClusterConfigSnapshot::default()));
    let (handle, mut events) = spawn_member(config(&group, "failing", bootstrap, security), rx);
    let msg = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match events.recv().await {
                Some(GroupEvent::Fatal(msg)) => break msg,
                Some(GroupEvent::RebalanceStarted) => {}
                other => panic!("expected a fatal error, got {other:?}"),
            }
        }
    })
    .await
    .expect("no fatal error: the member keeps retrying");
    handle.abort();
    eprintln!("fatal: {msg}");
    assert!(
        msg.contains(bootstrap),
        "names the broker {bootstrap}: {msg}"
    );
    msg
}

#[tokio::test]
async fn a_wrong_password_is_fatal_with_the_brokers_message() {
    let broker = &secure().sasl_ssl;
    let msg = fatal_message(
        broker,
        scram(SaslMechanism::ScramSha512, Some("not-the-password")),
    )
    .await;
    assert!(
        msg.contains("SASL authentication with SCRAM-SHA-512 failed")
            && msg.contains("invalid credentials"),
        "{msg}"
    );
}

#[tokio::test]
async fn an_untrusted_ca_is_fatal() {
    let broker = &secure().sasl_ssl;
    let mut security = scram(SaslMechanism::ScramSha512, None);
    security.tls = Some(tls(&secure().other_ca, false));
    let msg = fatal_message(broker, security).await;
    assert!(
        msg.contains("TLS with broker") && msg.contains("not signed by a trusted CA"),
        "{msg}"
    );
}

#[tokio::test]
async fn sasl_ssl_aimed_at_the_plaintext_broker_is_fatal() {
    let plain = bootstrap_servers();
    let msg = fatal_message(&plain, scram(SaslMechanism::ScramSha512, None)).await;
    assert!(
        msg.contains("closed the connection during the TLS handshake")
            && msg.contains("not a TLS listener"),
        "{msg}"
    );
}

#[tokio::test]
async fn sasl_ssl_aimed_at_the_mtls_listener_is_fatal() {
    let ssl = &secure().ssl;
    let mut security = scram(SaslMechanism::ScramSha512, None);
    // With a client certificate TLS succeeds; the listener then has no SASL.
    security.tls = Some(tls(&secure().ca, true));
    let msg = fatal_message(ssl, security).await;
    assert!(msg.contains("does not use SASL on this listener"), "{msg}");
}

#[tokio::test]
async fn mtls_without_a_client_certificate_is_fatal() {
    let ssl = &secure().ssl;
    let msg = fatal_message(ssl, mtls(false)).await;
    assert!(msg.contains("requires a client certificate"), "{msg}");
}

/// KIP-368: the broker (`connections.max.reauth.ms`, KAFKA_SECURE_REAUTH_MS) closes a
/// connection whose session expired at its next request; the client re-authenticates in band
/// before that, so one connection keeps working across two session lifetimes.
#[tokio::test]
async fn a_sasl_connection_re_authenticates_before_its_session_ends() {
    let broker = &secure().sasl_ssl;
    let reauth_ms = secure().reauth_ms;
    assert!(
        reauth_ms > 0,
        "KAFKA_SECURE_REAUTH_MS is missing or 0: run deploy/kafka.sh up --secure"
    );
    let lifetime = Duration::from_millis(reauth_ms);
    let security = Security::new(&scram(SaslMechanism::ScramSha512, None)).unwrap();
    let timeout = Duration::from_secs(10);
    let mut conn = Connection::connect(broker, "connect-reauth", timeout, &security, true)
        .await
        .unwrap();
    assert_eq!(conn.authentications(), 1);
    // Past the client's re-authentication point (at most 95 % of the lifetime), before the
    // broker's expiry: the next request re-authenticates first.
    tokio::time::sleep(lifetime.mul_f64(0.97)).await;
    api_versions(&mut conn, timeout).await;
    assert_eq!(conn.authentications(), 2, "re-authenticated in band");
    // Past the first session's end: without re-authentication the broker closes the
    // connection at this request.
    tokio::time::sleep(lifetime.mul_f64(0.15)).await;
    api_versions(&mut conn, timeout).await;
    assert_eq!(conn.authentications(), 2);
}

/// One request on the established connection (ApiVersions: any authenticated request).
async fn api_versions(conn: &mut Connection, timeout: Duration) {
    conn.api_versions(timeout)
        .await
        .unwrap_or_else(|e| panic!("request on the connection: {e}"));
}
