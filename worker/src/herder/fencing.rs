//! Zombie fencing (KIP-618): before a new generation of a connector's exactly-once tasks starts,
//! the leader makes sure no task of the previous generation can still commit.
//!
//! ```text
//!  task start (any worker) ──fence(connector)──> leader (locally, or PUT /connectors/{c}/fence)
//!     leader: read config topic to the end
//!       no pending fencing ─────────────────────────────────────────────> done
//!       no tasks-fencing record yet, or 1 task -> 1 task ──> write tasks-fencing-<c> = count
//!       else: init_transactions on <group>-<c>-0 .. <group>-<c>-(record-1)   (bumps each epoch)
//!             read config topic; task configs unchanged? ──> write tasks-fencing-<c> = count
//! ```
//!
//! # Guarantees
//!
//! - Bumping the epoch of a transactional id aborts its open transaction and makes every later
//!   send or commit of the old producer fail, so a paused or partitioned zombie task cannot
//!   commit records after its successor started.
//! - The task-count record is written only after every id of the previous generation was
//!   fenced, and tasks of a connector start only once no fencing is pending.
//!
//! # Errors
//!
//! Fencing or the privileged write failing is reported to the caller (the task then fails).
//! A task count record above `tasks.max`'s limit (only another implementation can write one)
//! fails the round: fencing it would take one `InitProducerId` per id.
//! New task configs committed during a round fail it with Connect's 409 message.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::config::clients::ClientKind;
use crate::config::{ClientScope, WorkerConfig};
use crate::runtime::ConnectorTaskId;
use crate::runtime::exactly_once::task_transactional_id;
use crate::runtime::txn_producer;
use crate::storage::ConfigBackingStore;
use connect_api::config::connector::{TASKS_MAX_CONFIG, TASKS_MAX_LIMIT};

const FENCE_TIMEOUT: Duration = Duration::from_secs(90);

/// One round at a time per connector. Every caller re-checks "pending" under the lock, so a
/// round that finished writes the record and later callers find nothing to do: a second
/// round would otherwise fence tasks of the new generation that already started.
fn connector_lock(connector: &str) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> = OnceLock::new();
    LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(connector.to_owned())
        .or_default()
        .clone()
}

/// Runs one fencing round for `connector` on the leader (or finds it already done).
pub async fn fence_zombies(
    store: &ConfigBackingStore,
    config: &WorkerConfig,
    connector: &str,
) -> Result<(), String> {
    let lock = connector_lock(connector);
    let _round = lock.lock().await;
    store.refresh(Duration::from_secs(30)).await.map_err(|e| {
        format!("Failed to read to end of config topic before performing zombie fencing: {e}")
    })?;
    let snapshot = store.snapshot();
    if !snapshot.contains(connector) {
        return Err(format!("Connector {connector} not found"));
    }
    if !snapshot.pending_fencing(connector) {
        return Ok(());
    }
    let count = snapshot.task_count(connector);
    let generation = snapshot.task_config_generation(connector);
    match snapshot.task_count_record(connector) {
        // Never ran with exactly-once, or 1 -> 1: the new task's init_transactions fences.
        None => {}
        Some(1) if count == 1 => {}
        Some(previous) => {
            let ids = ids_to_fence(&config.group_id, connector, previous)?;
            tracing::info!(connector, transactional_ids = ?ids, "fencing zombie tasks of the previous generation");
            crate::metrics::global().fencing_round(connector, ids.len());
            let scope = ClientScope::Worker(ClientKind::Admin);
            let client = config.kafka_client(scope).map_err(|e| e.to_string())?;
            let security = config.client_security(scope).map_err(|e| e.to_string())?;
            let started = std::time::Instant::now();
            let n = ids.len();
            txn_producer::fence(&client, &security, &ids, FENCE_TIMEOUT)
                .await
                .map_err(|e| format!("Failed to perform zombie fencing: {e}"))?;
            tracing::info!(
                connector,
                transactional_ids = n,
                fence_ms = started.elapsed().as_millis() as u64,
                "fenced the previous generation's transactional ids"
            );
            store.refresh(Duration::from_secs(30)).await.map_err(|e| {
                format!("Failed to read to end of config topic after zombie fencing: {e}")
            })?;
            if store.snapshot().task_config_generation(connector) != generation {
                return Err("Fencing failed because new task configurations were generated for the connector".into());
            }
        }
    }
    store
        .put_task_count_record(connector, count)
        .await
        .map_err(|e| {
            format!("Failed to perform zombie fencing: failed to write the task count record: {e}")
        })?;
    tracing::info!(connector, task_count = count, "wrote task count record");
    Ok(())
}

/// The transactional ids of the previous generation's `previous` tasks. Each costs an
/// `InitProducerId` round trip: a count no connector can have here (only another
/// implementation can write one) fails the round instead of fencing for days.
fn ids_to_fence(group_id: &str, connector: &str, previous: i32) -> Result<Vec<String>, String> {
    if previous > TASKS_MAX_LIMIT {
        return Err(format!(
            "Failed to perform zombie fencing: the task count record of connector {connector} says {previous} tasks, more than the {TASKS_MAX_LIMIT} a connector may have here ({TASKS_MAX_CONFIG}); refusing to fence that many transactional ids"
        ));
    }
    Ok((0..previous.max(0))
        .map(|t| task_transactional_id(group_id, &ConnectorTaskId::new(connector, t)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_count_record_above_the_tasks_max_limit_is_not_fenced_id_by_id() {
        let ids = ids_to_fence("g", "c", 3).unwrap();
        assert_eq!(ids.len(), 3);
        assert_eq!(
            ids[2],
            task_transactional_id("g", &ConnectorTaskId::new("c", 2))
        );
        assert_eq!(ids_to_fence("g", "c", TASKS_MAX_LIMIT).unwrap().len(), 1024);
        assert!(ids_to_fence("g", "c", -1).unwrap().is_empty());
        let err = ids_to_fence("g", "c", i32::MAX).unwrap_err();
        assert!(err.contains("2147483647") && err.contains("1024"), "{err}");
    }
}
