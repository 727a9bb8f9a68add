//! A small Kafka protocol client for the classic group APIs, over tokio TCP with the
//! `kafka-protocol` codecs. librdkafka only speaks the `consumer` group protocol, hence this.
//!
//! One request in flight per connection: membership is a sequential conversation (join, sync,
//! then heartbeats), so pipelining would buy nothing.
//!
//! Connectors borrow connections for APIs librdkafka lacks ([`super::connector_requests`]):
//! [`Connection::send_raw`] sends a body they encoded, at a version of any API the broker
//! speaks ([`Connection::broker_version`]).
//!
//! # Security
//!
//! Every `security.protocol` is supported: `PLAINTEXT`, `SSL` (TLS, with a client certificate
//! when configured: see [`super::tls`]), `SASL_PLAINTEXT` and `SASL_SSL` with the mechanisms
//! `PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512` and `OAUTHBEARER` (see [`super::sasl`]). A
//! connection is: TCP, the TLS handshake, `ApiVersions`, then `SaslHandshake` (v1) and
//! `SaslAuthenticate` (v0–v2) rounds, as Java's `SaslClientAuthenticator` does.
//!
//! Re-authentication (KIP-368): when the broker's `SaslAuthenticate` answer carries a session
//! lifetime (its `connections.max.reauth.ms`), the connection re-authenticates *in band*, on the
//! same connection, before the first request sent after 85–95 % of that lifetime (Java's window,
//! jittered so many members do not re-authenticate at once). In band rather than by
//! reconnecting because a request is only ever sent between two complete responses (one
//! request in flight), so nothing can interleave with the SASL frames, and the member keeps
//! its coordinator connection: no new FindCoordinator, TCP and TLS handshakes every lifetime,
//! and no window in which a heartbeat fails because the broker closed an expired connection.
//! The broker closes an expired session only when a request other than `SaslHandshake` arrives,
//! so a connection left idle past its lifetime still re-authenticates first. If
//! re-authentication fails, the connection is dropped and the next request reconnects (and
//! authenticates afresh).
//!
//! # Errors that end start-up
//!
//! These are fatal ([`ClientError::is_fatal`]), so the member reports [`super::GroupEvent::Fatal`]
//! within seconds instead of retrying: a rejected authentication (the broker's message), a
//! mechanism the listener does not enable, an untrusted or mismatching broker certificate, a
//! client certificate the broker requires or rejects, TLS aimed at a listener that does not
//! speak it (the broker closes the connection during the handshake; fatal only before any
//! connection succeeded, afterwards it is a broker going away), SASL aimed at a listener
//! without SASL (`SaslHandshake` answered `ILLEGAL_SASL_STATE`), and unusable TLS material.

use std::collections::BTreeMap;
use std::time::Duration;

use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, FindCoordinatorRequest, GroupId,
    HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, RequestHeader,
    ResponseHeader, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse, SyncGroupRequest, SyncGroupResponse,
    join_group_request::JoinGroupRequestProtocol, leave_group_request::MemberIdentity,
    sync_group_request::SyncGroupRequestAssignment,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use rand::Rng;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

pub use super::errors::{ClientError, codes};
use super::sasl::{SaslSession, Step};
use super::tls::{self, TlsClient};
use crate::security::{KafkaSecurity, Sasl, SecurityProtocol};

/// The API versions this client can speak (field layouts it fills in); the broker's ApiVersions
/// answer narrows each to the newest both sides support.
const WANTED: &[(ApiKey, i16, i16)] = &[
    (ApiKey::FindCoordinator, 1, 4),
    (ApiKey::JoinGroup, 5, 9),
    (ApiKey::SyncGroup, 3, 5),
    (ApiKey::Heartbeat, 3, 4),
    (ApiKey::LeaveGroup, 3, 5),
];

/// APIs used when the broker has them (transactions tooling); a broker without them is
/// still usable for the group.
const OPTIONAL: &[(ApiKey, i16, i16)] = &[
    (ApiKey::DescribeTransactions, 0, 0),
    (ApiKey::ListTransactions, 0, 2),
    (ApiKey::Metadata, 4, 12),
    // The transactional producer (`super::producer`).
    (ApiKey::InitProducerId, 3, 5),
    (ApiKey::Produce, 3, 12),
    (ApiKey::AddPartitionsToTxn, 1, 3),
    (ApiKey::EndTxn, 1, 5),
];

/// The SASL APIs, asked for only when the connection authenticates.
const WANTED_SASL: &[(ApiKey, i16, i16)] = &[
    (ApiKey::SaslHandshake, 1, 1),
    (ApiKey::SaslAuthenticate, 0, 2),
];

/// Java's re-authentication window: 85 % of the session lifetime plus up to 10 % jitter.
const REAUTH_WINDOW: (f64, f64) = (0.85, 0.95);

/// What a coordinator coordinates (FindCoordinator's `key_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoordinatorKind {
    Group = 0,
    Transaction = 1,
}

/// FindCoordinator through `conn`: `host:port` of the coordinator of `key`.
pub async fn find_coordinator(
    conn: &mut Connection,
    kind: CoordinatorKind,
    key: &str,
    timeout: Duration,
) -> Result<String, ClientError> {
    let version = conn.version(ApiKey::FindCoordinator);
    let mut req = FindCoordinatorRequest::default();
    req.key_type = kind as i8;
    if version >= 4 {
        req.coordinator_keys = vec![StrBytes::from_string(key.to_owned())];
    } else {
        req.key = StrBytes::from_string(key.to_owned());
    }
    let resp = conn.send(&req, version, timeout).await?;
    let (code, host, port) = if version >= 4 {
        let c = resp
            .coordinators
            .first()
            .ok_or_else(|| ClientError::Protocol {
                broker: conn.broker().to_owned(),
                reason: "FindCoordinator returned no coordinator".into(),
            })?;
        (c.error_code, c.host.to_string(), c.port)
    } else {
        (resp.error_code, resp.host.to_string(), resp.port)
    };
    if code != codes::NONE {
        return Err(ClientError::Broker {
            api: ApiKey::FindCoordinator,
            code,
        });
    }
    Ok(format!("{host}:{port}"))
}

/// `bootstrap.servers` as a list of `host:port`.
pub fn bootstrap_list(bootstrap_servers: &str) -> Vec<String> {
    bootstrap_servers
        .split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The highest version of `api` in `min..=max` the broker speaks, if any.
fn negotiated(resp: &ApiVersionsResponse, api: ApiKey, min: i16, max: i16) -> Option<i16> {
    let theirs = resp.api_keys.iter().find(|k| k.api_key == api as i16)?;
    let v = theirs.max_version.min(max);
    (v >= min && theirs.min_version <= v).then_some(v)
}

/// The security of every connection, checked and prepared once from [`KafkaSecurity`].
#[derive(Debug, Clone)]
pub struct Security {
    protocol: SecurityProtocol,
    tls: Option<TlsClient>,
    sasl: Option<Sasl>,
}

impl Security {
    /// Builds the TLS configuration (parsing the PEM material) and checks that TLS and SASL
    /// settings are present exactly when `security.protocol` asks for them.
    pub fn new(security: &KafkaSecurity) -> Result<Self, ClientError> {
        let config = |reason: String| ClientError::Config { reason };
        let protocol = security.protocol;
        let tls = match (&security.tls, protocol.uses_tls()) {
            (Some(t), true) => Some(TlsClient::new(t).map_err(config)?),
            // No TLS settings at all: Java's defaults (system trust, host-name checks).
            (None, true) => Some(
                TlsClient::new(&crate::security::Tls {
                    verify_hostname: true,
                    ..Default::default()
                })
                .map_err(config)?,
            ),
            (Some(_), false) | (None, false) => None,
        };
        let sasl = match (&security.sasl, protocol.uses_sasl()) {
            (Some(s), true) => {
                // Reject mechanism/credential mismatches now, not at the first connection.
                SaslSession::start(s).map_err(config)?;
                Some(s.clone())
            }
            (None, true) => {
                return Err(config(format!(
                    "security.protocol={} needs sasl.mechanism and sasl.jaas.config",
                    protocol.name()
                )));
            }
            (_, false) => None,
        };
        Ok(Security {
            protocol,
            tls,
            sasl,
        })
    }
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// One connection (TCP, or TLS over TCP) to one broker, authenticated if SASL is configured.
pub struct Connection {
    broker: String,
    stream: Box<dyn Io>,
    client_id: String,
    correlation_id: i32,
    versions: BTreeMap<i16, i16>,
    protocol: SecurityProtocol,
    /// `Some(has a client certificate)` on TLS connections, to explain TLS alerts.
    tls_client_cert: Option<bool>,
    sasl: Option<Sasl>,
    /// When to re-authenticate (KIP-368), if the broker gave the session a lifetime.
    reauth_at: Option<Instant>,
    authentications: u32,
    auth_timeout: Duration,
    /// The cluster's finalized `transaction.version` feature level (ApiVersions), 0 if none.
    transaction_version: i16,
    /// Every API the broker speaks with its version range (ApiVersions), for
    /// [`send_raw`](Self::send_raw).
    broker_versions: BTreeMap<i16, (i16, i16)>,
}

impl Connection {
    /// Connects (TCP, TLS), negotiates versions with ApiVersions and authenticates (SASL).
    /// `first`: no connection of this client has succeeded yet, so a connection closed during
    /// the TLS handshake means a listener without TLS rather than a broker going away.
    pub async fn connect(
        broker: &str,
        client_id: &str,
        timeout: Duration,
        security: &Security,
        first: bool,
    ) -> Result<Self, ClientError> {
        let tcp = tokio::time::timeout(timeout, TcpStream::connect(broker))
            .await
            .map_err(|_| ClientError::Timeout {
                broker: broker.to_owned(),
                timeout,
            })?
            .map_err(|source| ClientError::Io {
                broker: broker.to_owned(),
                source,
            })?;
        tcp.set_nodelay(true).ok();
        let stream: Box<dyn Io> = match &security.tls {
            None => Box::new(tcp),
            Some(tls) => {
                let handshake = tokio::time::timeout(timeout, tls.handshake(broker, tcp))
                    .await
                    .map_err(|_| ClientError::Timeout {
                        broker: broker.to_owned(),
                        timeout,
                    })?;
                match handshake {
                    Ok(s) => Box::new(s),
                    Err(e) => {
                        return Err(match tls::describe_failure(&e, tls.has_client_cert()) {
                            Some(reason) => ClientError::Tls {
                                broker: broker.to_owned(),
                                reason,
                            },
                            None if first && is_closed(&e) => ClientError::NotTls {
                                broker: broker.to_owned(),
                                protocol: security.protocol.name(),
                            },
                            None => ClientError::Io {
                                broker: broker.to_owned(),
                                source: e,
                            },
                        });
                    }
                }
            }
        };
        let mut conn = Connection {
            broker: broker.to_owned(),
            stream,
            client_id: client_id.to_owned(),
            correlation_id: 0,
            versions: BTreeMap::new(),
            protocol: security.protocol,
            tls_client_cert: security.tls.as_ref().map(TlsClient::has_client_cert),
            sasl: security.sasl.clone(),
            reauth_at: None,
            authentications: 0,
            auth_timeout: timeout,
            transaction_version: 0,
            broker_versions: BTreeMap::new(),
        };
        let resp: ApiVersionsResponse = conn.request(&api_versions_request(), 3, timeout).await?;
        if resp.error_code != codes::NONE {
            return Err(ClientError::Broker {
                api: ApiKey::ApiVersions,
                code: resp.error_code,
            });
        }
        let sasl_apis = if conn.sasl.is_some() {
            WANTED_SASL
        } else {
            &[]
        };
        for &(api, min, max) in WANTED.iter().chain(sasl_apis) {
            match negotiated(&resp, api, min, max) {
                Some(v) => {
                    conn.versions.insert(api as i16, v);
                }
                None => {
                    return Err(ClientError::Unsupported {
                        broker: broker.to_owned(),
                        api,
                        min,
                        max,
                    });
                }
            }
        }
        conn.broker_versions = resp
            .api_keys
            .iter()
            .map(|k| (k.api_key, (k.min_version, k.max_version)))
            .collect();
        conn.transaction_version = resp
            .finalized_features
            .iter()
            .find(|f| f.name.as_str() == "transaction.version")
            .map_or(0, |f| f.max_version_level);
        for &(api, min, max) in OPTIONAL {
            if let Some(v) = negotiated(&resp, api, min, max) {
                conn.versions.insert(api as i16, v);
            }
        }
        if conn.sasl.is_some() {
            conn.authenticate().await?;
        }
        Ok(conn)
    }

    pub fn broker(&self) -> &str {
        &self.broker
    }

    /// An ApiVersions round trip through [`send`](Self::send) (so re-authenticating first
    /// when due): a liveness check of an established connection.
    pub async fn api_versions(&mut self, timeout: Duration) -> Result<(), ClientError> {
        let resp: ApiVersionsResponse = self.send(&api_versions_request(), 3, timeout).await?;
        match resp.error_code {
            codes::NONE => Ok(()),
            code => Err(ClientError::Broker {
                api: ApiKey::ApiVersions,
                code,
            }),
        }
    }

    /// How many times this connection authenticated (1 + re-authentications); 0 without SASL.
    pub fn authentications(&self) -> u32 {
        self.authentications
    }

    /// SaslHandshake, then SaslAuthenticate rounds until the mechanism is done; on success,
    /// schedules the next re-authentication from the session lifetime the broker gave.
    async fn authenticate(&mut self) -> Result<(), ClientError> {
        let sasl = self.sasl.clone().expect("only called with SASL configured");
        let mechanism = sasl.mechanism.name();
        let timeout = self.auth_timeout;
        let failed = |broker: &str, message: String| ClientError::Authentication {
            broker: broker.to_owned(),
            mechanism,
            message,
        };
        let mut hs = SaslHandshakeRequest::default();
        hs.mechanism = StrBytes::from_static_str(mechanism);
        let resp: SaslHandshakeResponse = self
            .request(&hs, self.version(ApiKey::SaslHandshake), timeout)
            .await?;
        match resp.error_code {
            codes::NONE => {}
            codes::ILLEGAL_SASL_STATE if self.authentications == 0 => {
                return Err(ClientError::NotSasl {
                    broker: self.broker.clone(),
                    protocol: self.protocol.name(),
                });
            }
            codes::UNSUPPORTED_SASL_MECHANISM => {
                let enabled: Vec<String> = resp.mechanisms.iter().map(|m| m.to_string()).collect();
                return Err(failed(
                    &self.broker,
                    format!(
                        "the listener does not enable SASL mechanism {mechanism} (it enables: {})",
                        enabled.join(", ")
                    ),
                ));
            }
            code => {
                return Err(ClientError::Broker {
                    api: ApiKey::SaslHandshake,
                    code,
                });
            }
        }
        let (mut session, mut out) =
            SaslSession::start(&sasl).map_err(|reason| ClientError::Config { reason })?;
        let version = self.version(ApiKey::SaslAuthenticate);
        let lifetime_ms = loop {
            let mut req = SaslAuthenticateRequest::default();
            req.auth_bytes = Bytes::from(out);
            let resp: SaslAuthenticateResponse = self.request(&req, version, timeout).await?;
            if resp.error_code != codes::NONE {
                let message = match resp.error_message {
                    Some(m) if !m.is_empty() => m.to_string(),
                    _ => format!("error code {}", resp.error_code),
                };
                return Err(failed(&self.broker, message));
            }
            match session
                .step(&resp.auth_bytes)
                .map_err(|m| failed(&self.broker, m))?
            {
                Step::Send(next) => out = next,
                Step::Done => break resp.session_lifetime_ms,
            }
        };
        self.authentications += 1;
        self.reauth_at = (lifetime_ms > 0).then(|| {
            let share = rand::rng().random_range(REAUTH_WINDOW.0..REAUTH_WINDOW.1);
            Instant::now() + Duration::from_millis((lifetime_ms as f64 * share) as u64)
        });
        tracing::debug!(
            broker = %self.broker, mechanism, lifetime_ms, times = self.authentications,
            "SASL authentication succeeded"
        );
        Ok(())
    }

    fn version(&self, api: ApiKey) -> i16 {
        self.versions[&(api as i16)]
    }

    /// The version of an [`OPTIONAL`] API both sides speak, if any.
    pub fn optional_version(&self, api: ApiKey) -> Option<i16> {
        self.versions.get(&(api as i16)).copied()
    }

    /// The cluster's finalized `transaction.version` (KIP-890: 2 and up is transactions v2), as
    /// this broker told it when the connection was made; 0 when the feature is not finalized.
    pub fn transaction_version(&self) -> i16 {
        self.transaction_version
    }

    /// Sends `reqs` back to back (pipelined: the broker handles a connection's requests in
    /// order) and reads their responses in that order, all within `timeout`. Re-authenticates
    /// first when due, like [`send`](Self::send).
    pub async fn send_pipelined<R: Request>(
        &mut self,
        reqs: &[R],
        version: i16,
        timeout: Duration,
    ) -> Result<Vec<R::Response>, ClientError> {
        if self.reauth_at.is_some_and(|at| Instant::now() >= at) {
            tracing::debug!(broker = %self.broker, "re-authenticating (KIP-368)");
            self.authenticate().await?;
        }
        let broker = self.broker.clone();
        tokio::time::timeout(timeout, async {
            let mut frames = Vec::new();
            let first = self.correlation_id.wrapping_add(1);
            for req in reqs {
                self.encode_frame(req, version, &mut frames)?;
            }
            self.stream
                .write_all(&frames)
                .await
                .map_err(|e| self.io_error(e))?;
            let mut out = Vec::with_capacity(reqs.len());
            for i in 0..reqs.len() {
                let id = first.wrapping_add(i as i32);
                out.push(self.read_response::<R>(version, id).await?);
            }
            Ok(out)
        })
        .await
        .map_err(|_| ClientError::Timeout { broker, timeout })?
    }

    /// Appends `req` as one frame (length, header with the next correlation id, body).
    fn encode_frame<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        frames: &mut Vec<u8>,
    ) -> Result<(), ClientError> {
        let proto = |reason: String| ClientError::Protocol {
            broker: self.broker.clone(),
            reason,
        };
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let mut header = RequestHeader::default();
        header.request_api_key = R::KEY;
        header.request_api_version = version;
        header.correlation_id = self.correlation_id;
        header.client_id = Some(StrBytes::from_string(self.client_id.clone()));
        let mut body = BytesMut::new();
        header
            .encode(&mut body, <R as HeaderVersion>::header_version(version))
            .map_err(|e| proto(format!("encoding request header: {e}")))?;
        req.encode(&mut body, version)
            .map_err(|e| proto(format!("encoding request: {e}")))?;
        frames.extend_from_slice(&(body.len() as i32).to_be_bytes());
        frames.extend_from_slice(&body);
        Ok(())
    }

    fn io_error(&self, source: std::io::Error) -> ClientError {
        match self
            .tls_client_cert
            .and_then(|cert| tls::describe_failure(&source, cert))
        {
            Some(reason) => ClientError::Tls {
                broker: self.broker.clone(),
                reason,
            },
            None => ClientError::Io {
                broker: self.broker.clone(),
                source,
            },
        }
    }

    /// Reads one response frame, which must answer correlation id `expected`.
    async fn read_response<R: Request>(
        &mut self,
        version: i16,
        expected: i32,
    ) -> Result<R::Response, ClientError> {
        let proto = |reason: String| ClientError::Protocol {
            broker: self.broker.clone(),
            reason,
        };
        let len = self.stream.read_i32().await.map_err(|e| self.io_error(e))?;
        if len < 0 {
            return Err(proto(format!("negative frame length {len}")));
        }
        let mut buf = vec![0u8; len as usize];
        self.stream
            .read_exact(&mut buf)
            .await
            .map_err(|e| self.io_error(e))?;
        let mut buf = Bytes::from(buf);
        let header_version = <R::Response as HeaderVersion>::header_version(version);
        let rh = ResponseHeader::decode(&mut buf, header_version)
            .map_err(|e| proto(format!("decoding response header: {e}")))?;
        if rh.correlation_id != expected {
            return Err(proto(format!(
                "correlation id {} does not match request {expected}",
                rh.correlation_id
            )));
        }
        let resp = R::Response::decode(&mut buf, version)
            .map_err(|e| proto(format!("decoding response: {e}")))?;
        if buf.has_remaining() {
            tracing::debug!(broker = %self.broker, left = buf.remaining(), "trailing bytes in response");
        }
        Ok(resp)
    }

    /// The highest version of `api_key` in `min..=max` the broker speaks (any API, not only
    /// those this client negotiates), for [`send_raw`](Self::send_raw).
    pub fn broker_version(&self, api_key: i16, min: i16, max: i16) -> Option<i16> {
        let &(theirs_min, theirs_max) = self.broker_versions.get(&api_key)?;
        let v = theirs_max.min(max);
        (v >= min && theirs_min <= v).then_some(v)
    }

    /// Sends one request whose body the caller encoded (at `version`) and returns the
    /// response's body, its header checked and removed. Re-authenticates first when due.
    pub async fn send_raw(
        &mut self,
        api_key: i16,
        version: i16,
        body: &[u8],
        timeout: Duration,
    ) -> Result<Bytes, ClientError> {
        let api = ApiKey::try_from(api_key).map_err(|()| ClientError::Protocol {
            broker: self.broker.clone(),
            reason: format!("unknown API key {api_key}"),
        })?;
        if self.reauth_at.is_some_and(|at| Instant::now() >= at) {
            tracing::debug!(broker = %self.broker, "re-authenticating (KIP-368)");
            self.authenticate().await?;
        }
        let broker = self.broker.clone();
        tokio::time::timeout(timeout, async {
            let proto = |reason: String| ClientError::Protocol {
                broker: self.broker.clone(),
                reason,
            };
            self.correlation_id = self.correlation_id.wrapping_add(1);
            let mut header = RequestHeader::default();
            header.request_api_key = api_key;
            header.request_api_version = version;
            header.correlation_id = self.correlation_id;
            header.client_id = Some(StrBytes::from_string(self.client_id.clone()));
            let mut frame = BytesMut::new();
            header
                .encode(&mut frame, api.request_header_version(version))
                .map_err(|e| proto(format!("encoding request header: {e}")))?;
            frame.extend_from_slice(body);
            let mut out = Vec::with_capacity(frame.len() + 4);
            out.extend_from_slice(&(frame.len() as i32).to_be_bytes());
            out.extend_from_slice(&frame);
            self.stream
                .write_all(&out)
                .await
                .map_err(|e| self.io_error(e))?;
            let len = self.stream.read_i32().await.map_err(|e| self.io_error(e))?;
            if len < 0 {
                return Err(proto(format!("negative frame length {len}")));
            }
            let mut buf = vec![0u8; len as usize];
            self.stream
                .read_exact(&mut buf)
                .await
                .map_err(|e| self.io_error(e))?;
            let mut buf = Bytes::from(buf);
            let rh = ResponseHeader::decode(&mut buf, api.response_header_version(version))
                .map_err(|e| proto(format!("decoding response header: {e}")))?;
            if rh.correlation_id != self.correlation_id {
                return Err(proto(format!(
                    "correlation id {} does not match request {}",
                    rh.correlation_id, self.correlation_id
                )));
            }
            Ok(buf)
        })
        .await
        .map_err(|_| ClientError::Timeout { broker, timeout })?
    }

    /// Sends one request and waits for its response, re-authenticating first when the SASL
    /// session is due (see the module doc).
    pub async fn send<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response, ClientError> {
        if self.reauth_at.is_some_and(|at| Instant::now() >= at) {
            tracing::debug!(broker = %self.broker, "re-authenticating (KIP-368)");
            self.authenticate().await?;
        }
        self.request(req, version, timeout).await
    }

    async fn request<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response, ClientError> {
        let broker = self.broker.clone();
        let fut = self.send_inner(req, version);
        tokio::time::timeout(timeout, fut)
            .await
            .map_err(|_| ClientError::Timeout { broker, timeout })?
    }

    async fn send_inner<R: Request>(
        &mut self,
        req: &R,
        version: i16,
    ) -> Result<R::Response, ClientError> {
        let mut frame = Vec::new();
        self.encode_frame(req, version, &mut frame)?;
        self.stream
            .write_all(&frame)
            .await
            .map_err(|e| self.io_error(e))?;
        self.read_response::<R>(version, self.correlation_id).await
    }
}

/// ApiVersions v3 (the broker refuses it without the client software's name and version).
fn api_versions_request() -> ApiVersionsRequest {
    let mut req = ApiVersionsRequest::default();
    req.client_software_name = StrBytes::from_static_str("connect-worker-rs");
    req.client_software_version = StrBytes::from_static_str(env!("CARGO_PKG_VERSION"));
    req
}

/// Whether an i/o error means the peer closed the connection.
fn is_closed(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe
    )
}

/// The group's conversation with its coordinator.
pub struct GroupClient {
    bootstrap: Vec<String>,
    client_id: String,
    group_id: String,
    request_timeout: Duration,
    security: Security,
    /// Whether any connection succeeded yet (see [`Connection::connect`]'s `first`).
    connected: bool,
    coordinator: Option<Connection>,
}

/// What JoinGroup returned, minus the wire types.
#[derive(Debug, Clone)]
pub struct JoinResult {
    pub error_code: i16,
    pub generation_id: i32,
    pub protocol_name: Option<String>,
    pub leader: String,
    pub member_id: String,
    /// (member id, metadata) of every member; only the leader receives these.
    pub members: Vec<(String, Bytes)>,
}

impl GroupClient {
    /// A client for `group_id`; fails only on unusable security settings (PEM material that
    /// does not parse, SASL without credentials).
    pub fn new(
        bootstrap_servers: &str,
        client_id: &str,
        group_id: &str,
        request_timeout: Duration,
        security: &KafkaSecurity,
    ) -> Result<Self, ClientError> {
        Ok(GroupClient {
            bootstrap: bootstrap_list(bootstrap_servers),
            client_id: client_id.to_owned(),
            group_id: group_id.to_owned(),
            request_timeout,
            security: Security::new(security)?,
            connected: false,
            coordinator: None,
        })
    }

    async fn connect(&mut self, broker: &str) -> Result<Connection, ClientError> {
        let conn = Connection::connect(
            broker,
            &self.client_id,
            self.request_timeout,
            &self.security,
            !self.connected,
        )
        .await?;
        self.connected = true;
        Ok(conn)
    }

    /// Forgets the coordinator so the next request finds it again.
    pub fn mark_coordinator_unknown(&mut self) {
        self.coordinator = None;
    }

    /// FindCoordinator(GROUP) through each bootstrap broker in turn, then connects to it.
    async fn coordinator(&mut self) -> Result<&mut Connection, ClientError> {
        if self.coordinator.is_none() {
            let mut last_err = None;
            for broker in self.bootstrap.clone() {
                match self.find_via(&broker).await {
                    Ok(conn) => {
                        self.coordinator = Some(conn);
                        break;
                    }
                    Err(e) if e.is_fatal() => return Err(e),
                    Err(e) => {
                        tracing::debug!(broker = %broker, error = %e, "coordinator lookup failed");
                        last_err = Some(e);
                    }
                }
            }
            if self.coordinator.is_none() {
                return Err(last_err.unwrap_or(ClientError::Protocol {
                    broker: String::new(),
                    reason: "no bootstrap servers".into(),
                }));
            }
        }
        Ok(self.coordinator.as_mut().expect("set above"))
    }

    async fn find_via(&mut self, broker: &str) -> Result<Connection, ClientError> {
        let mut conn = self.connect(broker).await?;
        let addr = find_coordinator(
            &mut conn,
            CoordinatorKind::Group,
            &self.group_id,
            self.request_timeout,
        )
        .await?;
        tracing::debug!(group = %self.group_id, coordinator = %addr, "found group coordinator");
        self.connect(&addr).await
    }

    /// Drops the connection if the request failed other than with a broker error code: its
    /// stream may hold half a response, or the broker closes it (failed re-authentication).
    fn check<T>(&mut self, r: Result<T, ClientError>) -> Result<T, ClientError> {
        let keep = |e: &ClientError| {
            matches!(e, ClientError::Broker { api, .. }
                if !matches!(api, ApiKey::SaslHandshake | ApiKey::SaslAuthenticate))
        };
        if matches!(r, Err(ref e) if !keep(e)) {
            self.coordinator = None;
        }
        r
    }

    pub async fn join_group(
        &mut self,
        member_id: &str,
        session_timeout: Duration,
        rebalance_timeout: Duration,
        protocols: Vec<(&'static str, Bytes)>,
    ) -> Result<JoinResult, ClientError> {
        let group_id = self.group_id.clone();
        let timeout = rebalance_timeout + self.request_timeout;
        let r = async {
            let conn = self.coordinator().await?;
            let version = conn.version(ApiKey::JoinGroup);
            let mut req = JoinGroupRequest::default();
            req.group_id = GroupId(StrBytes::from_string(group_id));
            req.session_timeout_ms = session_timeout.as_millis() as i32;
            req.rebalance_timeout_ms = rebalance_timeout.as_millis() as i32;
            req.member_id = StrBytes::from_string(member_id.to_owned());
            req.group_instance_id = None;
            req.protocol_type = StrBytes::from_static_str("connect");
            req.protocols = protocols
                .into_iter()
                .map(|(name, metadata)| {
                    let mut p = JoinGroupRequestProtocol::default();
                    p.name = StrBytes::from_static_str(name);
                    p.metadata = metadata;
                    p
                })
                .collect();
            let resp: JoinGroupResponse = conn.send(&req, version, timeout).await?;
            Ok(JoinResult {
                error_code: resp.error_code,
                generation_id: resp.generation_id,
                protocol_name: resp.protocol_name.map(|s| s.to_string()),
                leader: resp.leader.to_string(),
                member_id: resp.member_id.to_string(),
                members: resp
                    .members
                    .into_iter()
                    .map(|m| (m.member_id.to_string(), m.metadata))
                    .collect(),
            })
        }
        .await;
        self.check(r)
    }

    /// SyncGroup; returns (error code, this member's assignment bytes).
    pub async fn sync_group(
        &mut self,
        generation_id: i32,
        member_id: &str,
        protocol_name: &str,
        assignments: Vec<(String, Bytes)>,
        rebalance_timeout: Duration,
    ) -> Result<(i16, Bytes), ClientError> {
        let group_id = self.group_id.clone();
        let timeout = rebalance_timeout + self.request_timeout;
        let r = async {
            let conn = self.coordinator().await?;
            let version = conn.version(ApiKey::SyncGroup);
            let mut req = SyncGroupRequest::default();
            req.group_id = GroupId(StrBytes::from_string(group_id));
            req.generation_id = generation_id;
            req.member_id = StrBytes::from_string(member_id.to_owned());
            req.protocol_type = Some(StrBytes::from_static_str("connect"));
            req.protocol_name = Some(StrBytes::from_string(protocol_name.to_owned()));
            req.assignments = assignments
                .into_iter()
                .map(|(id, a)| {
                    let mut s = SyncGroupRequestAssignment::default();
                    s.member_id = StrBytes::from_string(id);
                    s.assignment = a;
                    s
                })
                .collect();
            let resp: SyncGroupResponse = conn.send(&req, version, timeout).await?;
            Ok((resp.error_code, resp.assignment))
        }
        .await;
        self.check(r)
    }

    /// Heartbeat; returns the error code.
    pub async fn heartbeat(
        &mut self,
        generation_id: i32,
        member_id: &str,
    ) -> Result<i16, ClientError> {
        let group_id = self.group_id.clone();
        let timeout = self.request_timeout;
        let r = async {
            let conn = self.coordinator().await?;
            let version = conn.version(ApiKey::Heartbeat);
            let mut req = HeartbeatRequest::default();
            req.group_id = GroupId(StrBytes::from_string(group_id));
            req.generation_id = generation_id;
            req.member_id = StrBytes::from_string(member_id.to_owned());
            let resp = conn.send(&req, version, timeout).await?;
            Ok(resp.error_code)
        }
        .await;
        self.check(r)
    }

    /// LeaveGroup for this member; returns the error code.
    pub async fn leave_group(&mut self, member_id: &str) -> Result<i16, ClientError> {
        let group_id = self.group_id.clone();
        let timeout = self.request_timeout;
        let r = async {
            let conn = self.coordinator().await?;
            let version = conn.version(ApiKey::LeaveGroup);
            let mut req = LeaveGroupRequest::default();
            req.group_id = GroupId(StrBytes::from_string(group_id));
            let mut m = MemberIdentity::default();
            m.member_id = StrBytes::from_string(member_id.to_owned());
            if version >= 5 {
                m.reason = Some(StrBytes::from_static_str("the worker is shutting down"));
            }
            req.members = vec![m];
            let resp = conn.send(&req, version, timeout).await?;
            let member_code = resp
                .members
                .first()
                .map(|m| m.error_code)
                .unwrap_or(codes::NONE);
            Ok(if resp.error_code != codes::NONE {
                resp.error_code
            } else {
                member_code
            })
        }
        .await;
        self.check(r)
    }
}
