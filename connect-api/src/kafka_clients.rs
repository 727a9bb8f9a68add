//! Kafka client settings written as Java client properties, turned into librdkafka's by the
//! runtime, for connectors that open their own Kafka clients (MirrorMaker 2 reads a source
//! cluster and administers a target one).
//!
//! The translation (key renames, security: JAAS, key stores, ...) lives in the worker, which
//! this crate cannot depend on; the worker installs it once at start-up with [`install`], as the
//! schema registry converters are installed. Without an installed translator (unit tests of a
//! connector), keys are passed to librdkafka unchanged.
//!
//! For requests librdkafka has no call for (MirrorMaker 2's DescribeAcls and CreateAcls), the
//! worker also lends its own Kafka protocol client: [`connect`] opens a [`KafkaConnection`] to
//! a cluster configured by Java client keys (installed with [`install_connector`]).

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Which Java client a set of keys configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    Producer,
    Consumer,
    Admin,
}

/// One key that cannot be used, named as the user wrote it (with its prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientKeyError {
    pub key: String,
    pub reason: String,
}

/// Java client keys to librdkafka keys.
pub trait ClientTranslator: Send + Sync {
    /// `pairs` are keys without `prefix`; `prefix` only names keys in errors. Files named by
    /// security keys (key stores, trust stores) are read here.
    fn librdkafka(
        &self,
        kind: ClientKind,
        prefix: &str,
        pairs: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, Vec<ClientKeyError>>;
}

static TRANSLATOR: OnceLock<Box<dyn ClientTranslator>> = OnceLock::new();

/// Installs the runtime's translator for the life of the process; the first call wins.
pub fn install(translator: Box<dyn ClientTranslator>) {
    let _ = TRANSLATOR.set(translator);
}

/// `pairs` (Java keys without `prefix`) as librdkafka keys.
pub fn librdkafka(
    kind: ClientKind,
    prefix: &str,
    pairs: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, Vec<ClientKeyError>> {
    match TRANSLATOR.get() {
        Some(t) => t.librdkafka(kind, prefix, pairs),
        None => Ok(pairs.clone()),
    }
}

/// A connection to one broker of a cluster, made by the runtime's own Kafka client (its TLS and
/// SASL, from Java client keys), for the APIs librdkafka has no call for (MirrorMaker 2's topic
/// ACLs: DescribeAcls, CreateAcls). Request and response bodies are encoded and decoded by the
/// caller (with the `kafka-protocol` codecs), headers by the connection.
#[async_trait::async_trait]
pub trait KafkaConnection: Send {
    /// The broker this connection talks to (`host:port`).
    fn broker(&self) -> &str;

    /// The highest version of API `api_key` in `min..=max` the broker speaks, if any.
    fn version(&self, api_key: i16, min: i16, max: i16) -> Option<i16>;

    /// Sends one request (`body`: the request encoded at `version`, without its header) and
    /// returns the response's body (its header checked and removed) within `timeout`.
    async fn send(
        &mut self,
        api_key: i16,
        version: i16,
        body: Vec<u8>,
        timeout: std::time::Duration,
    ) -> Result<Vec<u8>, String>;
}

/// Opens [`KafkaConnection`]s; the worker installs it with [`install_connector`].
#[async_trait::async_trait]
pub trait KafkaConnector: Send + Sync {
    /// Connects to the first broker of `pairs`' `bootstrap.servers` that answers (TCP, TLS,
    /// ApiVersions, SASL as `pairs`' security keys say), each within `timeout`. The error
    /// says why the last one failed (refused login, TLS failure, unreachable...).
    async fn connect(
        &self,
        pairs: &BTreeMap<String, String>,
        client_id: &str,
        timeout: std::time::Duration,
    ) -> Result<Box<dyn KafkaConnection>, String>;
}

static CONNECTOR: OnceLock<Box<dyn KafkaConnector>> = OnceLock::new();

/// Installs the runtime's Kafka connections for the life of the process; the first call wins.
pub fn install_connector(connector: Box<dyn KafkaConnector>) {
    let _ = CONNECTOR.set(connector);
}

/// A connection to the cluster `pairs` (Java client keys) configure, through the installed
/// [`KafkaConnector`]; an error without one (unit tests of a connector).
pub async fn connect(
    pairs: &BTreeMap<String, String>,
    client_id: &str,
    timeout: std::time::Duration,
) -> Result<Box<dyn KafkaConnection>, String> {
    match CONNECTOR.get() {
        Some(c) => c.connect(pairs, client_id, timeout).await,
        None => Err("this process has no Kafka protocol client installed".to_owned()),
    }
}
