//! The herder's side of an exactly-once task start: fencing on the leader (locally when this
//! worker leads, else through the leader's signed `PUT /connectors/{c}/fence`, see
//! [`super::to_leader`]) and the post-producer check that the task is still current.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::HerderHandle;
use crate::runtime::ConnectorTaskId;
use crate::runtime::exactly_once::{ExactlyOnceGate, GateError};

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
    async fn fence(&self, connector: &str) -> Result<(), GateError> {
        let started = Instant::now();
        let mut backoff = Duration::from_millis(250);
        loop {
            let attempt = self.handle.fence_on_leader(connector).await;
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
    ) -> Result<(), GateError> {
        self.handle
            .config_store
            .refresh(Duration::from_secs(30))
            .await
            .map_err(|e| GateError::Unknown(format!("failed to read the config topic: {e}")))?;
        if self
            .handle
            .config_store
            .snapshot()
            .task_config_generation(&id.connector)
            != generation
        {
            return Err(GateError::NotCurrent(format!(
                "Cannot start source task {id} with exactly-once support as the connector has already generated a new set of task configs"
            )));
        }
        if !self
            .owned_tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(id)
        {
            return Err(GateError::NotCurrent(format!(
                "Cannot start source task {id} as it has already been revoked from this worker"
            )));
        }
        Ok(())
    }
}
