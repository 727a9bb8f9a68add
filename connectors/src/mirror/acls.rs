//! Topic ACL sync (`sync.topic.acls.enabled`, `sync.topic.acls.interval.seconds`), as Apache
//! 4.4's `MirrorSourceConnector.syncTopicAcls`: the source cluster's topic ACLs are listed
//! (DescribeAcls: resource type TOPIC, any name, any pattern type, any entry) and, translated,
//! created on the target (CreateAcls).
//!
//! Which bindings and how (Apache's `shouldReplicateAcl`, `targetAclBinding`):
//!
//! - only LITERAL topic patterns of topics the connector replicates (`topics`,
//!   `topics.exclude`, heartbeats, no internal topics, no cycles); PREFIXED ones are not synced;
//! - ALLOW WRITE is dropped (nobody but MirrorMaker writes a remote topic); every other
//!   binding is kept, DENY ones included;
//! - ALLOW ALL becomes ALLOW READ;
//! - the pattern becomes the LITERAL remote topic name; principal and host are kept.
//!
//! Bindings are only ever created, as Apache does: an ACL removed on the source stays on the
//! target. A source cluster without an authorizer (DescribeAcls answers `SECURITY_DISABLED`)
//! is logged once and the sync skipped; other failures (a CreateAcls result, an unreachable
//! cluster) are logged and the next round tries again, as Apache's scheduler logs them.
//!
//! librdkafka has no ACL calls: the requests go through the worker's own Kafka client
//! ([`connect_api::kafka_clients::connect`]), with the cluster's security keys, and are
//! encoded here with the `kafka-protocol` codecs.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use connect_api::error::{ConnectError, Result};
use connect_api::kafka_clients;
use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::{
    ApiKey, CreateAclsRequest, CreateAclsResponse, DescribeAclsRequest, DescribeAclsResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

use super::config::{Cluster, SYNC_TOPIC_ACLS_ENABLED, client_keys};
use super::typed::MirrorSourceConfig;
use connect_api::kafka_clients::ClientKind;

/// Kafka's `ResourceType.TOPIC`.
pub const RESOURCE_TOPIC: i8 = 2;
/// Kafka's `PatternType` codes.
pub const PATTERN_ANY: i8 = 1;
pub const PATTERN_LITERAL: i8 = 3;
pub const PATTERN_PREFIXED: i8 = 4;
/// Kafka's `AclOperation` codes (the ones this module reads).
pub const OPERATION_ANY: i8 = 1;
pub const OPERATION_ALL: i8 = 2;
pub const OPERATION_READ: i8 = 3;
pub const OPERATION_WRITE: i8 = 4;
/// Kafka's `AclPermissionType` codes.
pub const PERMISSION_ANY: i8 = 1;
pub const PERMISSION_DENY: i8 = 2;
pub const PERMISSION_ALLOW: i8 = 3;
/// `SECURITY_DISABLED`: the cluster has no authorizer.
const SECURITY_DISABLED: i16 = 54;

/// One ACL binding: a resource pattern and an access control entry, Kafka's codes as they are.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct AclBinding {
    pub resource_type: i8,
    pub name: String,
    pub pattern_type: i8,
    pub principal: String,
    pub host: String,
    pub operation: i8,
    pub permission: i8,
}

/// Apache's `shouldReplicateAcl`: everything but ALLOW WRITE.
pub fn should_replicate_acl(b: &AclBinding) -> bool {
    !(b.permission == PERMISSION_ALLOW && b.operation == OPERATION_WRITE)
}

/// Apache's `targetAclBinding`: the LITERAL remote topic, ALLOW ALL downgraded to ALLOW READ.
pub fn target_acl_binding(b: &AclBinding, remote_topic: String) -> AclBinding {
    let operation = if b.permission == PERMISSION_ALLOW && b.operation == OPERATION_ALL {
        OPERATION_READ
    } else {
        b.operation
    };
    AclBinding {
        resource_type: RESOURCE_TOPIC,
        name: remote_topic,
        pattern_type: PATTERN_LITERAL,
        principal: b.principal.clone(),
        host: b.host.clone(),
        operation,
        permission: b.permission,
    }
}

/// Apache's `syncTopicAcls` filter and map: the bindings to create on the target for the
/// source's `bindings`. `replicate(topic)` is the connector's `shouldReplicateTopic`,
/// `remote(topic)` its `formatRemoteTopic`.
pub fn target_bindings(
    bindings: &[AclBinding],
    replicate: impl Fn(&str) -> bool,
    remote: impl Fn(&str) -> String,
) -> Vec<AclBinding> {
    let mut out: Vec<AclBinding> = bindings
        .iter()
        .filter(|b| b.resource_type == RESOURCE_TOPIC)
        .filter(|b| b.pattern_type == PATTERN_LITERAL)
        .filter(|b| should_replicate_acl(b))
        .filter(|b| replicate(&b.name))
        .map(|b| target_acl_binding(b, remote(&b.name)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// An ACL client of one cluster: its Java client keys, named by its alias in errors.
pub struct AclAdmin {
    keys: BTreeMap<String, String>,
    client_id: String,
    alias: String,
    timeout: Duration,
}

/// What DescribeAcls found.
#[derive(Debug)]
pub enum Listed {
    Bindings(Vec<AclBinding>),
    /// The cluster has no authorizer.
    SecurityDisabled,
}

fn encode(req: &impl Encodable, version: i16) -> Result<Vec<u8>> {
    let mut buf = BytesMut::new();
    req.encode(&mut buf, version)
        .map_err(|e| ConnectError::fatal(format!("encoding an ACL request: {e}")))?;
    Ok(buf.to_vec())
}

fn decode<T: Decodable>(body: Vec<u8>, version: i16) -> Result<T> {
    T::decode(&mut Bytes::from(body), version)
        .map_err(|e| ConnectError::retriable(format!("decoding an ACL response: {e}")))
}

impl AclAdmin {
    /// `keys`: the cluster's Java client keys (`bootstrap.servers`, security keys...).
    pub fn new(
        keys: BTreeMap<String, String>,
        client_id: &str,
        alias: &str,
        timeout: Duration,
    ) -> Self {
        Self {
            keys,
            client_id: client_id.to_owned(),
            alias: alias.to_owned(),
            timeout,
        }
    }

    fn error(&self, what: &str, e: impl std::fmt::Display) -> ConnectError {
        ConnectError::retriable(format!(
            "failed to {what} on cluster \"{}\": {e}",
            self.alias
        ))
    }

    /// A connection and the version of `api` to speak on it (versions 1 to 3: pattern types).
    async fn connect(
        &self,
        api: ApiKey,
        what: &str,
    ) -> Result<(Box<dyn kafka_clients::KafkaConnection>, i16)> {
        let conn = kafka_clients::connect(&self.keys, &self.client_id, self.timeout)
            .await
            .map_err(|e| self.error(what, e))?;
        let version = conn.version(api as i16, 1, 3).ok_or_else(|| {
            self.error(
                what,
                format!(
                    "broker {} does not speak {api:?} versions 1 to 3",
                    conn.broker()
                ),
            )
        })?;
        Ok((conn, version))
    }

    /// Every topic ACL binding (Apache's `ANY_TOPIC_ACL` filter).
    pub async fn topic_acls(&self) -> Result<Listed> {
        let what = "describe ACLs";
        let (mut conn, version) = self.connect(ApiKey::DescribeAcls, what).await?;
        let mut req = DescribeAclsRequest::default();
        req.resource_type_filter = RESOURCE_TOPIC;
        req.resource_name_filter = None;
        req.pattern_type_filter = PATTERN_ANY;
        req.principal_filter = None;
        req.host_filter = None;
        req.operation = OPERATION_ANY;
        req.permission_type = PERMISSION_ANY;
        let body = conn
            .send(
                ApiKey::DescribeAcls as i16,
                version,
                encode(&req, version)?,
                self.timeout,
            )
            .await
            .map_err(|e| self.error(what, e))?;
        let resp: DescribeAclsResponse = decode(body, version)?;
        match resp.error_code {
            0 => {}
            SECURITY_DISABLED => return Ok(Listed::SecurityDisabled),
            code => {
                return Err(self.error(
                    what,
                    format!(
                        "error code {code}{}",
                        resp.error_message
                            .map(|m| format!(": {m}"))
                            .unwrap_or_default()
                    ),
                ));
            }
        }
        let mut out = Vec::new();
        for r in resp.resources {
            for a in r.acls {
                out.push(AclBinding {
                    resource_type: r.resource_type,
                    name: r.resource_name.to_string(),
                    pattern_type: r.pattern_type,
                    principal: a.principal.to_string(),
                    host: a.host.to_string(),
                    operation: a.operation,
                    permission: a.permission_type,
                });
            }
        }
        Ok(Listed::Bindings(out))
    }

    /// Creates `bindings` (one that exists already is no error); the failed ones with the
    /// broker's reason.
    pub async fn create_acls(&self, bindings: &[AclBinding]) -> Result<Vec<(AclBinding, String)>> {
        if bindings.is_empty() {
            return Ok(Vec::new());
        }
        let what = "create ACLs";
        let (mut conn, version) = self.connect(ApiKey::CreateAcls, what).await?;
        let mut req = CreateAclsRequest::default();
        req.creations = bindings
            .iter()
            .map(|b| {
                let mut c = AclCreation::default();
                c.resource_type = b.resource_type;
                c.resource_name = StrBytes::from_string(b.name.clone());
                c.resource_pattern_type = b.pattern_type;
                c.principal = StrBytes::from_string(b.principal.clone());
                c.host = StrBytes::from_string(b.host.clone());
                c.operation = b.operation;
                c.permission_type = b.permission;
                c
            })
            .collect();
        let body = conn
            .send(
                ApiKey::CreateAcls as i16,
                version,
                encode(&req, version)?,
                self.timeout,
            )
            .await
            .map_err(|e| self.error(what, e))?;
        let resp: CreateAclsResponse = decode(body, version)?;
        Ok(bindings
            .iter()
            .zip(resp.results)
            .filter(|(_, r)| r.error_code != 0)
            .map(|(b, r)| {
                let why = match r.error_message {
                    Some(m) if !m.is_empty() => format!("error code {}: {m}", r.error_code),
                    _ => format!("error code {}", r.error_code),
                };
                (b.clone(), why)
            })
            .collect())
    }
}

/// The connector's repeating ACL sync (Apache's `syncTopicAcls` on its scheduler).
pub struct AclSync {
    config: MirrorSourceConfig,
    source: AclAdmin,
    target: AclAdmin,
    /// Whether "no authorizer on the source" was logged (Apache logs it once at INFO).
    told_no_authorizer: AtomicBool,
}

fn java_keys(c: &MirrorSourceConfig, cluster: Cluster) -> BTreeMap<String, String> {
    client_keys(&c.props, cluster, ClientKind::Admin)
        .into_iter()
        .map(|(k, (_, v))| (k, v))
        .collect()
}

impl AclSync {
    pub fn new(config: &MirrorSourceConfig) -> Self {
        let label = config.entity_label();
        Self {
            source: AclAdmin::new(
                java_keys(config, Cluster::Source),
                &format!("{label}|replication-source-admin"),
                &config.source_alias,
                config.admin_timeout,
            ),
            target: AclAdmin::new(
                java_keys(config, Cluster::Target),
                &format!("{label}|replication-target-admin"),
                &config.target_alias,
                config.admin_timeout,
            ),
            config: config.clone(),
            told_no_authorizer: AtomicBool::new(false),
        }
    }

    /// One round: lists the source's topic ACLs, creates their translations on the target.
    /// Returns how many bindings were sent (`None`: the source has no authorizer).
    pub async fn sync(&self) -> Result<Option<usize>> {
        let bindings = match self.source.topic_acls().await? {
            Listed::Bindings(b) => b,
            Listed::SecurityDisabled => {
                if !self.told_no_authorizer.swap(true, Ordering::Relaxed) {
                    tracing::info!(
                        "No ACL authorizer is configured on the source Kafka cluster, so no topic ACL syncing will take place. Consider disabling topic ACL syncing by setting {SYNC_TOPIC_ACLS_ENABLED} to 'false'."
                    );
                } else {
                    tracing::debug!(
                        "Source-side ACL authorizer still not found; skipping topic ACL sync"
                    );
                }
                return Ok(None);
            }
        };
        let c = &self.config;
        let wanted = target_bindings(
            &bindings,
            |t| c.should_replicate_topic(t),
            |t| c.policy.format_remote_topic(&c.source_alias, t),
        );
        tracing::trace!(bindings = wanted.len(), "syncing topic ACL bindings");
        for (b, why) in self.target.create_acls(&wanted).await? {
            tracing::warn!(topic = %b.name, principal = %b.principal, error = %why, "Could not sync ACL of topic");
        }
        Ok(Some(wanted.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(name: &str, pattern: i8, principal: &str, op: i8, perm: i8) -> AclBinding {
        AclBinding {
            resource_type: RESOURCE_TOPIC,
            name: name.to_owned(),
            pattern_type: pattern,
            principal: principal.to_owned(),
            host: "*".to_owned(),
            operation: op,
            permission: perm,
        }
    }

    #[test]
    fn bindings_are_filtered_and_translated_as_apache() {
        let source = vec![
            b(
                "orders",
                PATTERN_LITERAL,
                "User:alice",
                OPERATION_READ,
                PERMISSION_ALLOW,
            ),
            b(
                "orders",
                PATTERN_LITERAL,
                "User:bob",
                OPERATION_ALL,
                PERMISSION_ALLOW,
            ),
            b(
                "orders",
                PATTERN_LITERAL,
                "User:carol",
                OPERATION_WRITE,
                PERMISSION_ALLOW,
            ),
            b(
                "orders",
                PATTERN_LITERAL,
                "User:dave",
                OPERATION_WRITE,
                PERMISSION_DENY,
            ),
            b(
                "orders",
                PATTERN_LITERAL,
                "User:dave",
                OPERATION_ALL,
                PERMISSION_DENY,
            ),
            b(
                "orders",
                PATTERN_PREFIXED,
                "User:erin",
                OPERATION_READ,
                PERMISSION_ALLOW,
            ),
            b(
                "secret",
                PATTERN_LITERAL,
                "User:alice",
                OPERATION_READ,
                PERMISSION_ALLOW,
            ),
            b(
                "b.orders",
                PATTERN_LITERAL,
                "User:alice",
                OPERATION_READ,
                PERMISSION_ALLOW,
            ),
        ];
        let got = target_bindings(
            &source,
            |t| t != "secret" && !t.starts_with("b."),
            |t| format!("a.{t}"),
        );
        assert_eq!(
            got,
            vec![
                b(
                    "a.orders",
                    PATTERN_LITERAL,
                    "User:alice",
                    OPERATION_READ,
                    PERMISSION_ALLOW
                ),
                b(
                    "a.orders",
                    PATTERN_LITERAL,
                    "User:bob",
                    OPERATION_READ,
                    PERMISSION_ALLOW
                ),
                b(
                    "a.orders",
                    PATTERN_LITERAL,
                    "User:dave",
                    OPERATION_ALL,
                    PERMISSION_DENY
                ),
                b(
                    "a.orders",
                    PATTERN_LITERAL,
                    "User:dave",
                    OPERATION_WRITE,
                    PERMISSION_DENY
                ),
            ]
        );
    }

    #[test]
    fn requests_encode_at_every_version_they_are_sent_at() {
        for v in 1..=3 {
            let mut req = DescribeAclsRequest::default();
            req.resource_type_filter = RESOURCE_TOPIC;
            req.pattern_type_filter = PATTERN_ANY;
            req.operation = OPERATION_ANY;
            req.permission_type = PERMISSION_ANY;
            assert!(encode(&req, v).is_ok());
            let mut req = CreateAclsRequest::default();
            req.creations.push(AclCreation::default());
            assert!(encode(&req, v).is_ok());
        }
    }
}
