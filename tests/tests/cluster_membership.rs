// Real-broker test of the Connect group membership (`connect_worker::cluster`): members join a
// random group on the local Kafka, the leader assigns with the incremental cooperative assignor,
// and each member applies its assignments the way the herder does (stop revoked work, rejoin after
// revocations and after a `delay`). Checks: 2/2/2 tasks over three members with the connector on
// one; a crashed member's work moves to the others after scheduled.rebalance.max.delay.ms; a new
// member takes a fair share while the others only give work away.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use connect_tests::kafka::bootstrap_servers;
use connect_worker::cluster::{
    ClusterConfigSnapshot, ConnectProtocolVersion, GroupEvent, GroupHandle, MembershipConfig, Work,
    spawn_member,
};
use tokio::sync::watch;

#[derive(Debug, Default, Clone)]
struct Seen {
    owned: Work,
    member_id: String,
    is_leader: bool,
    leader_url: String,
    protocol: Option<ConnectProtocolVersion>,
    fatal: Option<String>,
}

/// A member plus a stand-in herder that applies its events.
struct SimWorker {
    handle: Arc<GroupHandle>,
    seen: Arc<Mutex<Seen>>,
}

fn config(group: &str, name: &str, protocol: ConnectProtocolVersion) -> MembershipConfig {
    MembershipConfig {
        bootstrap_servers: bootstrap_servers(),
        group_id: group.to_owned(),
        session_timeout: Duration::from_millis(6_000),
        rebalance_timeout: Duration::from_millis(20_000),
        heartbeat_interval: Duration::from_millis(1_000),
        protocol,
        worker_url: format!("http://{name}:8083/"),
        scheduled_rebalance_max_delay: Duration::from_millis(3_000),
        client_id: format!("connect-{name}"),
        security: Default::default(),
        live_work: Default::default(),
    }
}

fn start(
    group: &str,
    name: &str,
    snapshot: watch::Receiver<Arc<ClusterConfigSnapshot>>,
) -> SimWorker {
    start_with(group, name, snapshot, ConnectProtocolVersion::Sessioned)
}

fn start_with(
    group: &str,
    name: &str,
    snapshot: watch::Receiver<Arc<ClusterConfigSnapshot>>,
    protocol: ConnectProtocolVersion,
) -> SimWorker {
    let (handle, mut events) = spawn_member(config(group, name, protocol), snapshot);
    let handle = Arc::new(handle);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (h, s) = (handle.clone(), seen.clone());
    tokio::spawn(async move {
        while let Some(ev) = events.recv().await {
            match ev {
                GroupEvent::RebalanceStarted => {}
                GroupEvent::Assigned {
                    member_id,
                    is_leader,
                    assignment,
                    leader_url,
                    protocol,
                    ..
                } => {
                    {
                        let mut seen = s.lock().unwrap();
                        seen.member_id = member_id;
                        seen.is_leader = is_leader;
                        seen.leader_url = leader_url;
                        seen.protocol = Some(protocol);
                        if assignment.failed() {
                        } else if protocol.is_cooperative() {
                            seen.owned.apply(&assignment);
                        } else {
                            // Eager assignments are complete; everything was stopped at
                            // RebalanceStarted.
                            seen.owned = Work::from_assignment(&assignment);
                        }
                    }
                    if assignment.failed() || assignment.has_revocations() {
                        h.request_rejoin();
                    }
                    if assignment.delay > 0 {
                        let h = h.clone();
                        let delay = Duration::from_millis(assignment.delay as u64);
                        tokio::spawn(async move {
                            tokio::time::sleep(delay).await;
                            h.request_rejoin();
                        });
                    }
                }
                GroupEvent::MembershipLost => s.lock().unwrap().owned = Work::default(),
                GroupEvent::Fatal(msg) => s.lock().unwrap().fatal = Some(msg),
            }
        }
    });
    SimWorker { handle, seen }
}

fn snapshot_of(workers: &[&SimWorker]) -> Vec<Seen> {
    workers
        .iter()
        .map(|w| w.seen.lock().unwrap().clone())
        .collect()
}

/// Whether `seen` covers `configured` exactly once with task counts `want` (any order) and
/// the connectors on exactly one member.
fn settled(seen: &[Seen], configured: &Work, want: &[usize]) -> bool {
    let mut all = Work::default();
    let mut n = 0;
    for s in seen {
        assert!(s.fatal.is_none(), "member failed: {:?}", s.fatal);
        n += s.owned.tasks.len() + s.owned.connectors.len();
        all.connectors.extend(s.owned.connectors.iter().cloned());
        all.tasks.extend(s.owned.tasks.iter().cloned());
    }
    let mut counts: Vec<usize> = seen.iter().map(|s| s.owned.tasks.len()).collect();
    counts.sort();
    let mut want = want.to_vec();
    want.sort();
    all == *configured
        && n == configured.tasks.len() + configured.connectors.len()
        && counts == want
}

async fn wait_for(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_members_share_work_survive_a_crash_and_admit_a_fourth() {
    let group = connect_tests::unique("cluster-membership");
    let snapshot = ClusterConfigSnapshot {
        offset: 3,
        connectors: BTreeMap::from([("conn".to_string(), 6)]),
    };
    let configured = Work::configured(&snapshot);
    let (_tx, rx) = watch::channel(Arc::new(snapshot));

    let a = start(&group, "a", rx.clone());
    let b = start(&group, "b", rx.clone());
    let c = start(&group, "c", rx.clone());
    wait_for("2/2/2 over three members", Duration::from_secs(60), || {
        settled(&snapshot_of(&[&a, &b, &c]), &configured, &[2, 2, 2])
    })
    .await;
    let seen = snapshot_of(&[&a, &b, &c]);
    assert_eq!(seen.iter().filter(|s| s.is_leader).count(), 1, "one leader");
    let leader = seen.iter().find(|s| s.is_leader).unwrap();
    for s in &seen {
        assert_eq!(
            s.leader_url, leader.leader_url,
            "everyone knows the leader's url"
        );
    }
    assert!(leader.leader_url.starts_with("http://"));

    // Crash a non-leader: no LeaveGroup, so the coordinator notices after the session timeout
    // and the leader holds its work back for the scheduled rebalance delay.
    let (crashed, survivors): (Vec<&SimWorker>, Vec<&SimWorker>) = {
        let all = [&a, &b, &c];
        let victim = all
            .iter()
            .position(|w| !w.seen.lock().unwrap().is_leader)
            .unwrap();
        let crashed = vec![all[victim]];
        let rest = all
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != victim)
            .map(|(_, w)| *w)
            .collect();
        (crashed, rest)
    };
    crashed[0].handle.abort();
    wait_for(
        "3/3 over the two survivors",
        Duration::from_secs(60),
        || settled(&snapshot_of(&survivors), &configured, &[3, 3]),
    )
    .await;
    let before: Vec<Work> = snapshot_of(&survivors)
        .into_iter()
        .map(|s| s.owned)
        .collect();

    // A fourth member takes a fair share; the survivors only give work away.
    let d = start(&group, "d", rx.clone());
    let all = [survivors[0], survivors[1], &d];
    wait_for(
        "2/2/2 after the fourth joins",
        Duration::from_secs(60),
        || settled(&snapshot_of(&all), &configured, &[2, 2, 2]),
    )
    .await;
    let after = snapshot_of(&all);
    for (old, new) in before.iter().zip(&after) {
        assert!(
            new.owned.tasks.is_subset(&old.tasks),
            "survivors only lose tasks"
        );
        assert!(new.owned.connectors.is_subset(&old.connectors));
    }

    // A graceful leave rebalances at once (no session timeout, and the leaver's work is
    // reassigned after the delay because its member left the group).
    d.handle.leave().await;
    assert!(
        d.handle.is_finished() || {
            tokio::time::sleep(Duration::from_millis(200)).await;
            d.handle.is_finished()
        }
    );
    wait_for(
        "3/3 after the fourth leaves",
        Duration::from_secs(60),
        || settled(&snapshot_of(&survivors), &configured, &[3, 3]),
    )
    .await;
    for w in survivors {
        w.handle.leave().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_eager_member_downgrades_the_group_to_default() {
    let group = connect_tests::unique("cluster-eager");
    let snapshot = ClusterConfigSnapshot {
        offset: 0,
        connectors: BTreeMap::from([("x".to_string(), 3), ("y".to_string(), 1)]),
    };
    let configured = Work::configured(&snapshot);
    let (_tx, rx) = watch::channel(Arc::new(snapshot));
    let a = start_with(&group, "a", rx.clone(), ConnectProtocolVersion::Sessioned);
    let b = start_with(&group, "b", rx.clone(), ConnectProtocolVersion::Eager);
    wait_for("eager 2/2 tasks", Duration::from_secs(60), || {
        let seen = snapshot_of(&[&a, &b]);
        let connectors: Vec<usize> = seen.iter().map(|s| s.owned.connectors.len()).collect();
        settled(&seen, &configured, &[2, 2]) && connectors == [1, 1]
    })
    .await;
    for s in snapshot_of(&[&a, &b]) {
        assert_eq!(s.protocol, Some(ConnectProtocolVersion::Eager));
    }
    a.handle.leave().await;
    b.handle.leave().await;
}
