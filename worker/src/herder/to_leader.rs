//! The herder's own requests that only the leader may serve: a connector's task configs and a
//! zombie-fencing round. Each is done locally through the [`super::api`] call when this worker
//! leads, else sent to the leader's internal endpoint through [`crate::peer`], signed with
//! the session key (KIP-507).

use connect_api::ConfigMap;

use super::HerderHandle;
use super::api::HerderError;
use crate::peer;

impl HerderHandle {
    /// Publishes a connector's task configs. One attempt; the caller retries.
    pub(super) async fn submit_task_configs(
        &self,
        connector: &str,
        configs: Vec<ConfigMap>,
    ) -> Result<(), HerderError> {
        match self.put_task_configs(connector, configs.clone()).await {
            Err(HerderError::NotLeader { leader_url }) => {
                let body = serde_json::to_vec(&configs).expect("task configs serialise");
                self.send_to_leader(leader_url, reqwest::Method::POST, connector, "tasks", body)
                    .await
            }
            other => other,
        }
    }

    /// One zombie-fencing round for `connector`, on the leader.
    pub(super) async fn fence_on_leader(&self, connector: &str) -> Result<(), HerderError> {
        match self.fence_zombies(connector).await {
            Err(HerderError::NotLeader { leader_url }) => {
                self.send_to_leader(
                    leader_url,
                    reqwest::Method::PUT,
                    connector,
                    "fence",
                    Vec::new(),
                )
                .await
            }
            other => other,
        }
    }

    /// Sends a signed internal request for `connector` to the leader.
    async fn send_to_leader(
        &self,
        leader_url: Option<String>,
        method: reqwest::Method,
        connector: &str,
        resource: &str,
        body: Vec<u8>,
    ) -> Result<(), HerderError> {
        let leader = leader_url.ok_or_else(|| {
            HerderError::Failed(format!(
                "cannot send the {resource} request of connector {connector}: no known leader URL"
            ))
        })?;
        let signature = self.sign_internal_request(&body);
        if self.signs_internal_requests() && signature.is_none() {
            return Err(HerderError::Starting(
                "no session key has been read from the config topic yet".to_owned(),
            ));
        }
        let url = format!(
            "{}/connectors/{}/{resource}",
            leader.trim_end_matches('/'),
            peer::encode_path(connector)
        );
        let (status, message) = peer::send_internal(method, &url, body, signature)
            .await
            .map_err(|e| {
                HerderError::Failed(format!(
                    "failed to send the {resource} request of connector {connector} to the leader at {leader}: {e}"
                ))
            })?;
        if status.is_success() {
            Ok(())
        } else {
            Err(HerderError::Failed(format!(
                "the leader at {leader} refused the {resource} request of connector {connector}: {} {message}",
                status.as_u16()
            )))
        }
    }
}
