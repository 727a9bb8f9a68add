//! Assignor tests: fixed scenarios plus properties checked by simulating rounds the way members
//! apply them (owned = owned - revoked + assigned), with the clock passed in.

use super::*;
use proptest::prelude::*;

struct Sim {
    snapshot: ClusterConfigSnapshot,
    owned: BTreeMap<String, Work>,
    state: IncrementalState,
    generation: i32,
    now_ms: u64,
    max_delay_ms: u64,
    last: BTreeMap<String, ExtendedAssignment>,
}

impl Sim {
    fn new(connectors: &[(&str, u32)], members: &[&str], max_delay_ms: u64) -> Sim {
        Sim {
            snapshot: ClusterConfigSnapshot {
                offset: 10,
                connectors: connectors
                    .iter()
                    .map(|(c, n)| (c.to_string(), *n))
                    .collect(),
            },
            owned: members
                .iter()
                .map(|m| (m.to_string(), Work::default()))
                .collect(),
            state: IncrementalState::default(),
            generation: 0,
            now_ms: 1_000,
            max_delay_ms,
            last: BTreeMap::new(),
        }
    }

    fn round(&mut self) -> &BTreeMap<String, ExtendedAssignment> {
        let members: Vec<MemberInfo> = self
            .owned
            .iter()
            .map(|(id, w)| MemberInfo {
                member_id: id.clone(),
                url: format!("http://{id}/"),
                config_offset: 10,
                owned: w.clone(),
            })
            .collect();
        let leader = members[0].member_id.clone();
        let ctx = AssignContext {
            protocol: ConnectProtocolVersion::Sessioned,
            leader_id: &leader,
            generation: self.generation + 1,
            last_completed_generation: Some(self.generation),
            snapshot: &self.snapshot,
            now_ms: self.now_ms,
            max_delay_ms: self.max_delay_ms,
        };
        let out = assign(&ctx, &members, &mut self.state);
        self.generation += 1;
        for (id, a) in &out {
            // Invariant: nothing is revoked and assigned to the same member in one round.
            assert!(a.revoked_tasks.is_disjoint(&a.tasks));
            self.owned.get_mut(id).unwrap().apply(a);
        }
        self.last = out;
        &self.last
    }

    /// Rounds until one revokes nothing (the herder rejoins after each revoking round).
    fn settle(&mut self) -> usize {
        for n in 1..20 {
            let out = self.round();
            if out.values().all(|a| !a.has_revocations()) {
                return n;
            }
        }
        panic!("assignor did not settle: {:?}", self.owned);
    }

    fn assert_balanced_and_complete(&self) {
        let configured = Work::configured(&self.snapshot);
        let mut all = Work::default();
        let mut count = 0;
        for w in self.owned.values() {
            count += w.tasks.len() + w.connectors.len();
            all.extend(w);
        }
        assert_eq!(all, configured, "every item assigned");
        assert_eq!(
            count,
            configured.tasks.len() + configured.connectors.len(),
            "no item twice"
        );
        for load in [|w: &Work| w.tasks.len(), |w: &Work| w.connectors.len()] {
            let loads: Vec<usize> = self.owned.values().map(load).collect();
            let (min, max) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
            assert!(max - min <= 1, "unbalanced {loads:?}");
        }
    }
}

#[test]
fn three_members_one_connector_six_tasks() {
    let mut sim = Sim::new(&[("c", 6)], &["a", "b", "c"], 300_000);
    assert_eq!(sim.settle(), 1);
    sim.assert_balanced_and_complete();
    let a = &sim.last["a"];
    assert_eq!(a.leader, "a");
    assert_eq!(a.leader_url, "http://a/");
    assert_eq!(a.config_offset, 10);
    assert_eq!(a.version, 2);
}

#[test]
fn joiner_takes_fair_share_in_two_rounds() {
    let mut sim = Sim::new(&[("c", 6)], &["a", "b", "c"], 300_000);
    sim.settle();
    let before = sim.owned.clone();
    sim.owned.insert("d".into(), Work::default());
    let first = sim.round().clone();
    assert!(first.values().any(|a| a.has_revocations()));
    assert!(
        first["d"].tasks.is_empty(),
        "revoked work is not reassigned in the same round"
    );
    sim.settle();
    sim.assert_balanced_and_complete();
    for (id, w) in &before {
        assert!(sim.owned[id].tasks.is_subset(&w.tasks));
    }
    assert_eq!(sim.owned["d"].tasks.len(), 1);
}

#[test]
fn departed_member_work_held_back_until_delay_then_reassigned() {
    let mut sim = Sim::new(&[("c", 6)], &["a", "b", "c"], 10_000);
    sim.settle();
    let lost = sim.owned.remove("c").unwrap();
    let out = sim.round().clone();
    assert_eq!(out["a"].delay, 10_000);
    assert!(
        out.values().all(|a| a.tasks.is_empty()),
        "lost work held back"
    );
    sim.now_ms += 4_000;
    let out = sim.round().clone();
    assert_eq!(out["a"].delay, 6_000);
    sim.now_ms += 6_000;
    let out = sim.round().clone();
    assert!(out.values().all(|a| a.delay == 0));
    let reassigned: usize = out
        .values()
        .map(|a| a.tasks.len() + a.connectors.len())
        .sum();
    assert_eq!(reassigned, lost.tasks.len() + lost.connectors.len());
    sim.settle();
    sim.assert_balanced_and_complete();
}

#[test]
fn returning_member_gets_its_share_back_within_delay() {
    let mut sim = Sim::new(&[("c", 6)], &["a", "b", "c"], 10_000);
    sim.settle();
    let lost = sim.owned.remove("c").unwrap();
    sim.round();
    sim.owned.insert("c2".into(), Work::default());
    sim.now_ms += 1_000;
    let out = sim.round().clone();
    assert!(out["c2"].tasks.is_empty() && out["a"].delay == 9_000);
    sim.now_ms += 9_000;
    let out = sim.round().clone();
    assert_eq!(
        out["c2"].tasks, lost.tasks,
        "the empty candidate takes the lost work"
    );
    sim.settle();
    sim.assert_balanced_and_complete();
}

#[test]
fn zero_max_delay_reassigns_immediately() {
    let mut sim = Sim::new(&[("c", 6), ("d", 1)], &["a", "b", "c"], 0);
    sim.settle();
    sim.owned.remove("b");
    let out = sim.round().clone();
    assert!(out.values().all(|a| a.delay == 0));
    sim.settle();
    sim.assert_balanced_and_complete();
}

#[test]
fn deleted_connector_is_revoked_and_new_one_assigned() {
    let mut sim = Sim::new(&[("x", 2), ("y", 2)], &["a", "b"], 300_000);
    sim.settle();
    sim.snapshot.connectors.remove("x");
    sim.snapshot.connectors.insert("z".into(), 3);
    sim.settle();
    sim.assert_balanced_and_complete();
}

#[test]
fn config_mismatch_when_a_member_is_ahead() {
    let snapshot = ClusterConfigSnapshot {
        offset: 5,
        connectors: [("c".to_string(), 1)].into(),
    };
    let members = vec![
        MemberInfo {
            member_id: "a".into(),
            url: "ua".into(),
            config_offset: 5,
            owned: Work::default(),
        },
        MemberInfo {
            member_id: "b".into(),
            url: "ub".into(),
            config_offset: 8,
            owned: Work::default(),
        },
    ];
    let ctx = AssignContext {
        protocol: ConnectProtocolVersion::Compatible,
        leader_id: "a",
        generation: 1,
        last_completed_generation: None,
        snapshot: &snapshot,
        now_ms: 0,
        max_delay_ms: 0,
    };
    let out = assign(&ctx, &members, &mut IncrementalState::default());
    for a in out.values() {
        assert_eq!(a.error, CONFIG_MISMATCH);
        assert_eq!(a.config_offset, 8);
        assert!(a.tasks.is_empty() && a.connectors.is_empty());
    }
}

#[test]
fn eager_round_robin_over_sorted_members() {
    let snapshot = ClusterConfigSnapshot {
        offset: 1,
        connectors: [("a".to_string(), 2), ("b".to_string(), 1)].into(),
    };
    let m = |id: &str| MemberInfo {
        member_id: id.into(),
        url: id.into(),
        config_offset: 1,
        owned: Work::default(),
    };
    let ctx = AssignContext {
        protocol: ConnectProtocolVersion::Eager,
        leader_id: "w2",
        generation: 1,
        last_completed_generation: None,
        snapshot: &snapshot,
        now_ms: 0,
        max_delay_ms: 0,
    };
    let out = assign(&ctx, &[m("w2"), m("w1")], &mut IncrementalState::default());
    // Order: connectors a, b then tasks a-0, a-1, b-0 over w1, w2, w1, w2, w1.
    assert_eq!(out["w1"].connectors, ["a".to_string()].into());
    assert_eq!(out["w2"].connectors, ["b".to_string()].into());
    let t = |c: &str, n| ConnectorTaskId::new(c, n);
    assert_eq!(out["w1"].tasks, [t("a", 0), t("b", 0)].into());
    assert_eq!(out["w2"].tasks, [t("a", 1)].into());
    assert_eq!(out["w1"].version, 0);
    assert_eq!(out["w1"].leader_url, "w2");
}

fn arb_connectors() -> impl Strategy<Value = Vec<(String, u32)>> {
    proptest::collection::btree_map("[a-e]{1,2}", 0u32..9, 0..6)
        .prop_map(|m| m.into_iter().collect())
}

proptest! {
    #[test]
    fn settles_complete_and_balanced(
        connectors in arb_connectors(),
        n_members in 1usize..6,
        joins in 0usize..3,
        leaves in 0usize..3,
    ) {
        let names: Vec<String> = (0..n_members).map(|i| format!("m{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let conns: Vec<(&str, u32)> = connectors.iter().map(|(c, n)| (c.as_str(), *n)).collect();
        let mut sim = Sim::new(&conns, &refs, 0);
        sim.settle();
        sim.assert_balanced_and_complete();
        for j in 0..joins {
            let before = sim.owned.clone();
            sim.owned.insert(format!("n{j}"), Work::default());
            sim.settle();
            sim.assert_balanced_and_complete();
            // Minimal movement: old members only give work away, never trade it.
            for (id, w) in &before {
                prop_assert!(sim.owned[id].tasks.is_subset(&w.tasks));
                prop_assert!(sim.owned[id].connectors.is_subset(&w.connectors));
            }
        }
        for _ in 0..leaves.min(sim.owned.len() - 1) {
            let first = sim.owned.keys().next().unwrap().clone();
            sim.owned.remove(&first);
            sim.settle();
            sim.assert_balanced_and_complete();
        }
    }

    #[test]
    fn delayed_loss_settles_after_deadline(connectors in arb_connectors(), n_members in 2usize..5) {
        let names: Vec<String> = (0..n_members).map(|i| format!("m{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let conns: Vec<(&str, u32)> = connectors.iter().map(|(c, n)| (c.as_str(), *n)).collect();
        let mut sim = Sim::new(&conns, &refs, 5_000);
        sim.settle();
        sim.owned.remove("m1");
        // Members rejoin when the announced delay elapses, as the herder does.
        for _ in 0..10 {
            let delay = sim.round().values().map(|a| a.delay).max().unwrap_or(0);
            if delay == 0 && sim.last.values().all(|a| !a.has_revocations()) {
                break;
            }
            sim.now_ms += delay.max(0) as u64;
        }
        sim.settle();
        sim.assert_balanced_and_complete();
    }
}
