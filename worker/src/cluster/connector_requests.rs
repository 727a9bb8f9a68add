//! The worker's Kafka client ([`Connection`]) lent to connectors for the APIs librdkafka has no
//! call for (MirrorMaker 2 syncs topic ACLs with DescribeAcls and CreateAcls): installed by
//! `main` as [`connect_api::kafka_clients::KafkaConnector`].
//!
//! A connector's Java client keys (`bootstrap.servers`, `security.protocol`, `ssl.*`,
//! `sasl.*`) are read as every client of this worker reads them ([`ClientSettings`]); other keys
//! (librdkafka's) do not concern a protocol connection and are ignored.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use connect_api::kafka_clients::{KafkaConnection, KafkaConnector};

use super::client::{Connection, Security, bootstrap_list};
use crate::config::clients::{ClientKind, ClientSettings};

/// Opens connections with the worker's client (see the module doc).
pub struct ConnectorConnections;

struct Lent(Connection);

#[async_trait]
impl KafkaConnection for Lent {
    fn broker(&self) -> &str {
        self.0.broker()
    }

    fn version(&self, api_key: i16, min: i16, max: i16) -> Option<i16> {
        self.0.broker_version(api_key, min, max)
    }

    async fn send(
        &mut self,
        api_key: i16,
        version: i16,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<Vec<u8>, String> {
        self.0
            .send_raw(api_key, version, &body, timeout)
            .await
            .map(|b| b.to_vec())
            .map_err(|e| e.to_string())
    }
}

#[async_trait]
impl KafkaConnector for ConnectorConnections {
    async fn connect(
        &self,
        pairs: &BTreeMap<String, String>,
        client_id: &str,
        timeout: Duration,
    ) -> Result<Box<dyn KafkaConnection>, String> {
        let settings = ClientSettings::translate(
            ClientKind::Admin,
            "",
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .map_err(|e| join(&e))?;
        let resolved = settings.resolve().map_err(|e| join(&e))?;
        let security = Security::new(&resolved.security).map_err(|e| e.to_string())?;
        let brokers = bootstrap_list(pairs.get("bootstrap.servers").map_or("", String::as_str));
        let mut last = "bootstrap.servers is empty".to_owned();
        for broker in &brokers {
            match Connection::connect(broker, client_id, timeout, &security, true).await {
                Ok(c) => return Ok(Box::new(Lent(c))),
                Err(e) => last = e.to_string(),
            }
        }
        Err(last)
    }
}

fn join(errors: &[impl ToString]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}
