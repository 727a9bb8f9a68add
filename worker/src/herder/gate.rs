//! The herder's side of an exactly-once task start: fencing on the leader (locally when this
//! worker leads, else through the leader's signed `PUT /connectors/{c}/fence`) and the
//! post-producer check that the task is still current.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::HerderHandle;
use super::fencing::fence_zombies;
use crate::runtime::ConnectorTaskId;
use crate::runtime::exactly_once::ExactlyOnceGate;

/// After this long without a successful round, retries are logged as warnings.
const FENCE_PATIENCE: Duration = Duration::from_secs(30);

pub struct HerderGate {
    pub handle: HerderHandle,
    /// Tasks assigned to this worker, kept current by the herder loop.
    pub owned_tasks: Arc<Mutex<BTreeSet<ConnectorTaskId>>>,
}

#[async_trait]
impl ExactlyOnceGate for HerderGate {
    /// Retries until a round succeeds: a rebalance or a broker failure in progress must not
    /// leave exactly-once tasks FAILED (Java's KAFKA-15059). The runner stops waiting when the
    /// task is stopped.
    async fn fence(&self, connector: &str) -> Result<(), String> {
        let started = Instant::now();
        let mut backoff = Duration::from_millis(250);
        loop {
            let (is_leader, leader_url) = {
                let v = self.handle.view.read().await;
                (v.is_leader, v.leader_url.clone())
            };
            let attempt = if is_leader {
                fence_zombies(&self.handle.config_store, &self.handle.config, connector).await
            } else if let Some(leader) = leader_url {
                let url = format!(
                    "{}/connectors/{}/fence",
                    leader.trim_end_matches('/'),
                    crate::rest::encode_path(connector)
                );
                match crate::rest::client::send_internal(
                    &self.handle,
                    reqwest::Method::PUT,
                    &url,
                    Vec::new(),
                )
                .await
                {
                    Ok((status, _)) if status.is_success() => Ok(()),
                    Ok((status, body)) => {
                        Err(format!("the leader at {leader} answered {status}: {body}"))
                    }
                    Err(e) => Err(format!("failed to reach the leader at {leader}: {e}")),
                }
            } else {
                Err("no leader is known yet".to_owned())
            };
            match attempt {
                Ok(()) => return Ok(()),
                Err(e) if started.elapsed() < FENCE_PATIENCE => {
                    tracing::info!(connector, error = %e, backoff = ?backoff, "zombie fencing not done yet; retrying");
                }
                Err(e) => {
                    tracing::warn!(connector, error = %e, waited = ?started.elapsed(), "zombie fencing still failing; retrying");
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    }

    async fn still_current(
        &self,
        id: &ConnectorTaskId,
        generation: Option<i32>,
    ) -> Result<(), String> {
        self.handle
            .config_store
            .refresh(Duration::from_secs(30))
            .await
            .map_err(|e| format!("failed to read the config topic: {e}"))?;
        if self
            .handle
            .config_store
            .snapshot()
            .task_config_generation(&id.connector)
            != generation
        {
            return Err(format!(
                "Cannot start source task {id} with exactly-once support as the connector has already generated a new set of task configs"
            ));
        }
        if !self
            .owned_tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(id)
        {
            return Err(format!(
                "Cannot start source task {id} as it has already been revoked from this worker"
            ));
        }
        Ok(())
    }
}
