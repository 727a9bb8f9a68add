//! A small Kafka protocol client for the classic group APIs, over tokio TCP with the
//! `kafka-protocol` codecs. librdkafka only speaks the `consumer` group protocol, hence this.
//!
//! One request in flight per connection: membership is a sequential conversation (join, sync,
//! then heartbeats), so pipelining would buy nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, FindCoordinatorRequest, GroupId,
    HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, RequestHeader,
    ResponseHeader, SyncGroupRequest, SyncGroupResponse,
    join_group_request::JoinGroupRequestProtocol, leave_group_request::MemberIdentity,
    sync_group_request::SyncGroupRequestAssignment,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Request, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Kafka error codes this module reacts to.
pub mod codes {
    pub const NONE: i16 = 0;
    pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
    pub const COORDINATOR_NOT_AVAILABLE: i16 = 15;
    pub const NOT_COORDINATOR: i16 = 16;
    pub const ILLEGAL_GENERATION: i16 = 22;
    pub const INCONSISTENT_GROUP_PROTOCOL: i16 = 23;
    pub const INVALID_GROUP_ID: i16 = 24;
    pub const UNKNOWN_MEMBER_ID: i16 = 25;
    pub const INVALID_SESSION_TIMEOUT: i16 = 26;
    pub const REBALANCE_IN_PROGRESS: i16 = 27;
    pub const GROUP_AUTHORIZATION_FAILED: i16 = 30;
    pub const UNSUPPORTED_VERSION: i16 = 35;
    pub const MEMBER_ID_REQUIRED: i16 = 79;
    pub const GROUP_MAX_SIZE_REACHED: i16 = 81;

    /// Errors no retry can fix: the worker must stop.
    pub fn is_fatal(code: i16) -> bool {
        matches!(
            code,
            INCONSISTENT_GROUP_PROTOCOL
                | INVALID_GROUP_ID
                | INVALID_SESSION_TIMEOUT
                | GROUP_AUTHORIZATION_FAILED
                | UNSUPPORTED_VERSION
                | GROUP_MAX_SIZE_REACHED
        )
    }

    /// Errors that mean the coordinator moved or is starting: find it again.
    pub fn needs_rediscovery(code: i16) -> bool {
        matches!(
            code,
            COORDINATOR_LOAD_IN_PROGRESS | COORDINATOR_NOT_AVAILABLE | NOT_COORDINATOR
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("i/o error talking to {broker}: {source}")]
    Io {
        broker: String,
        #[source]
        source: std::io::Error,
    },
    #[error("request to {broker} timed out after {timeout:?}")]
    Timeout { broker: String, timeout: Duration },
    #[error("malformed kafka protocol message from {broker}: {reason}")]
    Protocol { broker: String, reason: String },
    #[error("broker {broker} does not support {api:?} versions {min}..={max}")]
    Unsupported {
        broker: String,
        api: ApiKey,
        min: i16,
        max: i16,
    },
    #[error("broker error code {code} in {api:?}")]
    Broker { api: ApiKey, code: i16 },
}

impl ClientError {
    /// Whether retrying cannot help (auth, version, config errors).
    pub fn is_fatal(&self) -> bool {
        match self {
            ClientError::Unsupported { .. } => true,
            ClientError::Broker { code, .. } => codes::is_fatal(*code),
            _ => false,
        }
    }
}

/// The API versions this client can speak (field layouts it fills in); the broker's ApiVersions
/// answer narrows each to the newest both sides support.
const WANTED: &[(ApiKey, i16, i16)] = &[
    (ApiKey::FindCoordinator, 1, 4),
    (ApiKey::JoinGroup, 5, 9),
    (ApiKey::SyncGroup, 3, 5),
    (ApiKey::Heartbeat, 3, 4),
    (ApiKey::LeaveGroup, 3, 5),
];

/// One TCP connection to one broker.
pub struct Connection {
    broker: String,
    stream: TcpStream,
    client_id: String,
    correlation_id: i32,
    versions: BTreeMap<i16, i16>,
}

impl Connection {
    /// Connects and negotiates versions with ApiVersions.
    pub async fn connect(
        broker: &str,
        client_id: &str,
        timeout: Duration,
    ) -> Result<Self, ClientError> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect(broker))
            .await
            .map_err(|_| ClientError::Timeout {
                broker: broker.to_owned(),
                timeout,
            })?
            .map_err(|source| ClientError::Io {
                broker: broker.to_owned(),
                source,
            })?;
        stream.set_nodelay(true).ok();
        let mut conn = Connection {
            broker: broker.to_owned(),
            stream,
            client_id: client_id.to_owned(),
            correlation_id: 0,
            versions: BTreeMap::new(),
        };
        let mut req = ApiVersionsRequest::default();
        req.client_software_name = StrBytes::from_static_str("connect-worker-rs");
        req.client_software_version = StrBytes::from_static_str(env!("CARGO_PKG_VERSION"));
        let resp: ApiVersionsResponse = conn.send(&req, 3, timeout).await?;
        if resp.error_code != codes::NONE {
            return Err(ClientError::Broker {
                api: ApiKey::ApiVersions,
                code: resp.error_code,
            });
        }
        for &(api, min, max) in WANTED {
            let theirs = resp.api_keys.iter().find(|k| k.api_key == api as i16);
            let v = theirs
                .map(|k| k.max_version.min(max))
                .filter(|&v| v >= min && theirs.is_some_and(|k| k.min_version <= v));
            match v {
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
        Ok(conn)
    }

    pub fn broker(&self) -> &str {
        &self.broker
    }

    fn version(&self, api: ApiKey) -> i16 {
        self.versions[&(api as i16)]
    }

    /// Sends one request and waits for its response.
    pub async fn send<R: Request>(
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
        let io = |source| ClientError::Io {
            broker: self.broker.clone(),
            source,
        };
        let mut frame = Vec::with_capacity(body.len() + 4);
        frame.extend_from_slice(&(body.len() as i32).to_be_bytes());
        frame.extend_from_slice(&body);
        self.stream.write_all(&frame).await.map_err(io)?;
        let len = self.stream.read_i32().await.map_err(io)?;
        if len < 0 {
            return Err(proto(format!("negative frame length {len}")));
        }
        let mut buf = vec![0u8; len as usize];
        self.stream.read_exact(&mut buf).await.map_err(io)?;
        let mut buf = Bytes::from(buf);
        let header_version = <R::Response as HeaderVersion>::header_version(version);
        let rh = ResponseHeader::decode(&mut buf, header_version)
            .map_err(|e| proto(format!("decoding response header: {e}")))?;
        if rh.correlation_id != self.correlation_id {
            return Err(proto(format!(
                "correlation id {} does not match request {}",
                rh.correlation_id, self.correlation_id
            )));
        }
        let resp = R::Response::decode(&mut buf, version)
            .map_err(|e| proto(format!("decoding response: {e}")))?;
        if buf.has_remaining() {
            tracing::debug!(broker = %self.broker, left = buf.remaining(), "trailing bytes in response");
        }
        Ok(resp)
    }
}

/// The group's conversation with its coordinator.
pub struct GroupClient {
    bootstrap: Vec<String>,
    client_id: String,
    group_id: String,
    request_timeout: Duration,
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
    pub fn new(
        bootstrap_servers: &str,
        client_id: &str,
        group_id: &str,
        request_timeout: Duration,
    ) -> Self {
        GroupClient {
            bootstrap: bootstrap_servers
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
            client_id: client_id.to_owned(),
            group_id: group_id.to_owned(),
            request_timeout,
            coordinator: None,
        }
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

    async fn find_via(&self, broker: &str) -> Result<Connection, ClientError> {
        let mut conn = Connection::connect(broker, &self.client_id, self.request_timeout).await?;
        let version = conn.version(ApiKey::FindCoordinator);
        let mut req = FindCoordinatorRequest::default();
        req.key_type = 0; // GROUP
        if version >= 4 {
            req.coordinator_keys = vec![StrBytes::from_string(self.group_id.clone())];
        } else {
            req.key = StrBytes::from_string(self.group_id.clone());
        }
        let resp = conn.send(&req, version, self.request_timeout).await?;
        let (code, host, port) = if version >= 4 {
            let c = resp
                .coordinators
                .first()
                .ok_or_else(|| ClientError::Protocol {
                    broker: broker.to_owned(),
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
        let addr = format!("{host}:{port}");
        tracing::debug!(group = %self.group_id, coordinator = %addr, "found group coordinator");
        Connection::connect(&addr, &self.client_id, self.request_timeout).await
    }

    /// Drops the connection if the request failed at the transport level: its stream may hold
    /// half a response.
    fn check<T>(&mut self, r: Result<T, ClientError>) -> Result<T, ClientError> {
        if matches!(
            r,
            Err(ClientError::Io { .. }
                | ClientError::Timeout { .. }
                | ClientError::Protocol { .. })
        ) {
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
