//! The standalone worker's "group": one member, always the leader, no Kafka group (Apache's
//! `StandaloneHerder` has no group either). It speaks to the herder exactly as [`super::member`]
//! does, so the herder runs unchanged.
//!
//! ```text
//!  herder                         standalone member
//!    |  spawn_standalone_member ->  assign everything in the snapshot (generation 1)
//!    |  <- Assigned{all connectors and tasks; revoked: what it held and is gone}
//!    |  request_rejoin() -------->  (the work changed, or revocations were stopped)
//!    |  <- Assigned{...}            generation + 1
//!    |  leave() ----------------->  ends
//! ```
//!
//! # Guarantees
//!
//! - Every assignment holds every connector of the herder's latest published snapshot and
//!   every task of its committed task count, at that snapshot's config offset; what the member
//!   held and the snapshot no longer has is revoked in the same assignment (cooperative, as
//!   with [`ConnectProtocolVersion::Compatible`]), which the herder stops before it asks again.
//! - No rebalance delay, no session: a standalone worker owns its work from start to stop.

use std::collections::BTreeSet;
use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use super::assignor::ClusterConfigSnapshot;
use super::member::{Command, GroupEvent, GroupHandle};
use super::protocol::{ConnectProtocolVersion, ConnectorTaskId, ExtendedAssignment, NO_ERROR};

/// The member id the standalone worker reports (REST and logs only).
pub const STANDALONE_MEMBER_ID: &str = "standalone";

/// Starts the standalone member; its first assignment is sent at once.
pub fn spawn_standalone_member(
    worker_url: String,
    mut snapshot: watch::Receiver<Arc<ClusterConfigSnapshot>>,
) -> (GroupHandle, mpsc::Receiver<GroupEvent>) {
    let (cmd_tx, mut cmd_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::channel(256);
    let task = tokio::spawn(async move {
        let mut generation = 0;
        let mut owned_connectors = BTreeSet::new();
        let mut owned_tasks = BTreeSet::new();
        loop {
            let snap = snapshot.borrow_and_update().clone();
            generation += 1;
            let assignment = assign_all(&snap, &owned_connectors, &owned_tasks, &worker_url);
            owned_connectors.clone_from(&assignment.connectors);
            owned_tasks.clone_from(&assignment.tasks);
            let event = GroupEvent::Assigned {
                generation,
                member_id: STANDALONE_MEMBER_ID.to_owned(),
                is_leader: true,
                assignment,
                leader_url: worker_url.clone(),
                protocol: ConnectProtocolVersion::Compatible,
            };
            if ev_tx.send(event).await.is_err() {
                return;
            }
            match cmd_rx.recv().await {
                Some(Command::Rejoin) => {}
                Some(Command::Leave(done)) => {
                    let _ = done.send(());
                    return;
                }
                None => return,
            }
        }
    });
    (
        GroupHandle {
            commands: cmd_tx,
            task,
        },
        ev_rx,
    )
}

/// Everything in `snapshot`, revoking what is owned and no longer there.
fn assign_all(
    snapshot: &ClusterConfigSnapshot,
    owned_connectors: &BTreeSet<String>,
    owned_tasks: &BTreeSet<ConnectorTaskId>,
    worker_url: &str,
) -> ExtendedAssignment {
    let connectors: BTreeSet<String> = snapshot.connectors.keys().cloned().collect();
    let tasks: BTreeSet<ConnectorTaskId> = snapshot
        .connectors
        .iter()
        .flat_map(|(c, n)| (0..*n as i32).map(move |t| ConnectorTaskId::new(c, t)))
        .collect();
    ExtendedAssignment {
        version: ConnectProtocolVersion::Compatible.version(),
        error: NO_ERROR,
        leader: STANDALONE_MEMBER_ID.to_owned(),
        leader_url: worker_url.to_owned(),
        config_offset: snapshot.offset,
        revoked_connectors: owned_connectors.difference(&connectors).cloned().collect(),
        revoked_tasks: owned_tasks.difference(&tasks).cloned().collect(),
        connectors,
        tasks,
        delay: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn snapshot(offset: i64, connectors: &[(&str, u32)]) -> Arc<ClusterConfigSnapshot> {
        Arc::new(ClusterConfigSnapshot {
            offset,
            connectors: connectors
                .iter()
                .map(|(c, n)| ((*c).to_owned(), *n))
                .collect::<BTreeMap<_, _>>(),
        })
    }

    fn assigned(ev: GroupEvent) -> (i32, ExtendedAssignment) {
        match ev {
            GroupEvent::Assigned {
                generation,
                is_leader: true,
                assignment,
                ..
            } => (generation, assignment),
            other => panic!("not a leader's assignment: {other:?}"),
        }
    }

    #[tokio::test]
    async fn assigns_everything_and_revokes_what_went_away() {
        let (tx, rx) = watch::channel(snapshot(3, &[("a", 2)]));
        let (handle, mut events) = spawn_standalone_member("http://w:8083/".into(), rx);
        let (g, a) = assigned(events.recv().await.unwrap());
        assert_eq!(g, 1);
        assert_eq!(a.config_offset, 3);
        assert_eq!(a.connectors, BTreeSet::from(["a".to_owned()]));
        assert_eq!(a.tasks.len(), 2);
        assert!(!a.has_revocations());

        tx.send_replace(snapshot(7, &[("a", 1), ("b", 1)]));
        handle.request_rejoin();
        let (g, a) = assigned(events.recv().await.unwrap());
        assert_eq!(g, 2);
        assert_eq!(a.config_offset, 7);
        assert_eq!(a.connectors.len(), 2);
        assert_eq!(
            a.revoked_tasks,
            BTreeSet::from([ConnectorTaskId::new("a", 1)])
        );
        assert!(a.tasks.contains(&ConnectorTaskId::new("b", 0)));

        tx.send_replace(snapshot(9, &[]));
        handle.request_rejoin();
        let (_, a) = assigned(events.recv().await.unwrap());
        assert!(a.connectors.is_empty());
        assert_eq!(a.revoked_connectors.len(), 2);
        handle.leave().await;
        assert!(events.recv().await.is_none());
    }
}
