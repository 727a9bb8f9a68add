//! The leader's assignors: incremental cooperative (KIP-415, `compatible`/`sessioned`) and eager
//! (`default`). Pure functions of the members' metadata, the leader's config snapshot, the
//! leader's memory of the previous round ([`IncrementalState`]) and a clock value passed in.
//!
//! Incremental rounds, as Java's `IncrementalCooperativeAssignor` does them:
//!
//! ```text
//! round n:   revoke (deleted, duplicated, over-target)   assign (created, lost-after-delay)
//!                 |                                         |
//!            members stop revoked work, rejoin -------> round n+1 assigns what was revoked
//! ```
//!
//! # Guarantees
//!
//! - Work revoked in a round is never assigned to another member in the same round, so no two
//!   members run the same connector or task once each has applied its assignment.
//! - Once rounds stop revoking, every configured connector and task is owned by exactly one
//!   member, and connector counts and task counts each differ by at most one between members.
//! - Work of a departed member is held back for `scheduled.rebalance.max.delay.ms` so a
//!   restarting worker can take it back without churning everyone else.

use std::collections::{BTreeMap, BTreeSet};

use super::protocol::{
    CONFIG_MISMATCH, ConnectProtocolVersion, ConnectorTaskId, ExtendedAssignment, NO_ERROR,
};

/// What the leader needs to assign: maintained by the herder as it reads the config topic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterConfigSnapshot {
    /// The config topic position the snapshot reflects (next offset to read).
    pub offset: i64,
    /// Connector name -> number of tasks.
    pub connectors: BTreeMap<String, u32>,
}

/// A set of connectors and tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Work {
    pub connectors: BTreeSet<String>,
    pub tasks: BTreeSet<ConnectorTaskId>,
}

impl Work {
    pub fn is_empty(&self) -> bool {
        self.connectors.is_empty() && self.tasks.is_empty()
    }

    fn extend(&mut self, other: &Work) {
        self.connectors.extend(other.connectors.iter().cloned());
        self.tasks.extend(other.tasks.iter().cloned());
    }

    fn minus(&self, other: &Work) -> Work {
        Work {
            connectors: self
                .connectors
                .difference(&other.connectors)
                .cloned()
                .collect(),
            tasks: self.tasks.difference(&other.tasks).cloned().collect(),
        }
    }

    fn intersect(&self, other: &Work) -> Work {
        Work {
            connectors: self
                .connectors
                .intersection(&other.connectors)
                .cloned()
                .collect(),
            tasks: self.tasks.intersection(&other.tasks).cloned().collect(),
        }
    }

    /// Applies an incremental assignment: `self - revoked + assigned`.
    pub fn apply(&mut self, a: &ExtendedAssignment) {
        for c in &a.revoked_connectors {
            self.connectors.remove(c);
        }
        for t in &a.revoked_tasks {
            self.tasks.remove(t);
        }
        self.connectors.extend(a.connectors.iter().cloned());
        self.tasks.extend(a.tasks.iter().cloned());
    }

    /// The full assignment in `a` (for eager assignments and metadata allocations).
    pub fn from_assignment(a: &ExtendedAssignment) -> Work {
        Work {
            connectors: a.connectors.clone(),
            tasks: a.tasks.clone(),
        }
    }

    /// Everything `snapshot` configures.
    pub fn configured(snapshot: &ClusterConfigSnapshot) -> Work {
        let mut w = Work::default();
        for (name, &n) in &snapshot.connectors {
            w.connectors.insert(name.clone());
            for t in 0..n as i32 {
                w.tasks.insert(ConnectorTaskId::new(name.clone(), t));
            }
        }
        w
    }
}

/// One member as the leader sees it in the JoinGroup response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberInfo {
    pub member_id: String,
    pub url: String,
    pub config_offset: i64,
    /// What the member runs now (its metadata `allocation`; empty for V0 or a fresh member).
    pub owned: Work,
}

/// The round's fixed inputs besides members and state.
#[derive(Debug, Clone)]
pub struct AssignContext<'a> {
    pub protocol: ConnectProtocolVersion,
    pub leader_id: &'a str,
    pub generation: i32,
    /// The generation of this worker's last completed SyncGroup: the leader's memory of the
    /// previous round is only trusted if it computed that round.
    pub last_completed_generation: Option<i32>,
    pub snapshot: &'a ClusterConfigSnapshot,
    pub now_ms: u64,
    pub max_delay_ms: u64,
}

/// The leader's memory between incremental rounds.
#[derive(Debug, Clone, Default)]
pub struct IncrementalState {
    previous_generation: Option<i32>,
    previous_assignment: Work,
    previous_members: BTreeSet<String>,
    previous_revocation: bool,
    /// Deadline after which held-back lost work is reassigned.
    scheduled_rebalance_ms: Option<u64>,
    /// Members that were empty when the delay started: likely the departed worker come back.
    candidates: BTreeSet<String>,
    successive_revoking: u32,
    revocation_backoff_until_ms: Option<u64>,
}

/// Computes every member's assignment. Dispatches on protocol and answers CONFIG_MISMATCH to
/// everyone if a member has read further in the config topic than the leader's snapshot.
pub fn assign(
    ctx: &AssignContext<'_>,
    members: &[MemberInfo],
    state: &mut IncrementalState,
) -> BTreeMap<String, ExtendedAssignment> {
    let leader_url = members
        .iter()
        .find(|m| m.member_id == ctx.leader_id)
        .map(|m| m.url.clone())
        .unwrap_or_default();
    let base = ExtendedAssignment {
        version: ctx.protocol.version(),
        error: NO_ERROR,
        leader: ctx.leader_id.to_owned(),
        leader_url,
        config_offset: ctx.snapshot.offset,
        ..Default::default()
    };
    let max_offset = members
        .iter()
        .map(|m| m.config_offset)
        .max()
        .unwrap_or(i64::MIN);
    if max_offset > ctx.snapshot.offset {
        // Assigning from a stale snapshot could start deleted connectors or miss new ones.
        return members
            .iter()
            .map(|m| {
                let a = ExtendedAssignment {
                    error: CONFIG_MISMATCH,
                    config_offset: max_offset,
                    ..base.clone()
                };
                (m.member_id.clone(), a)
            })
            .collect();
    }
    if ctx.protocol.is_cooperative() {
        incremental(ctx, members, state, &base)
    } else {
        eager(ctx.snapshot, members, &base)
    }
}

/// Eager: full assignments, connectors (sorted) then tasks (sorted), dealt round-robin over
/// members sorted by id with one circular iterator.
pub fn eager(
    snapshot: &ClusterConfigSnapshot,
    members: &[MemberInfo],
    base: &ExtendedAssignment,
) -> BTreeMap<String, ExtendedAssignment> {
    let mut out: BTreeMap<String, ExtendedAssignment> = members
        .iter()
        .map(|m| (m.member_id.clone(), base.clone()))
        .collect();
    let ids: Vec<String> = out.keys().cloned().collect();
    if ids.is_empty() {
        return out;
    }
    let mut cycle = ids.iter().cycle();
    let configured = Work::configured(snapshot);
    for c in configured.connectors {
        let id = cycle.next().expect("cycle over non-empty ids");
        out.get_mut(id).expect("id from out").connectors.insert(c);
    }
    for t in configured.tasks {
        let id = cycle.next().expect("cycle over non-empty ids");
        out.get_mut(id).expect("id from out").tasks.insert(t);
    }
    out
}

fn incremental(
    ctx: &AssignContext<'_>,
    members: &[MemberInfo],
    state: &mut IncrementalState,
    base: &ExtendedAssignment,
) -> BTreeMap<String, ExtendedAssignment> {
    let configured = Work::configured(ctx.snapshot);
    let member_ids: BTreeSet<String> = members.iter().map(|m| m.member_id.clone()).collect();
    let mut active = Work::default();
    for m in members {
        active.extend(&m.owned);
    }
    if state.previous_generation.is_none()
        || state.previous_generation != ctx.last_completed_generation
    {
        // Someone else led the last round (or we never did): the members' allocations are the
        // only truth, and nothing can be known to be lost.
        state.previous_assignment = active.clone();
        state.previous_members = member_ids.clone();
        state.previous_revocation = false;
    }

    // Per-member working copies: current ownership, revocations, new assignments.
    let mut owned: BTreeMap<String, Work> = members
        .iter()
        .map(|m| (m.member_id.clone(), m.owned.clone()))
        .collect();
    let mut revoked: BTreeMap<String, Work> = member_ids
        .iter()
        .map(|id| (id.clone(), Work::default()))
        .collect();
    let mut assigned = revoked.clone();

    // Deleted work: configured no more, stop it wherever it runs.
    let mut known = state.previous_assignment.clone();
    known.extend(&active);
    let deleted = known.minus(&configured);
    for (id, w) in owned.iter_mut() {
        let gone = w.intersect(&deleted);
        revoke(w, revoked.get_mut(id).expect("member"), &gone);
    }
    // Duplicated work (two members claim it, e.g. after a zombie rejoined): keep the first
    // claimant by member id, stop it on the others.
    let mut seen = Work::default();
    for (id, w) in owned.iter_mut() {
        let dup = w.intersect(&seen);
        seen.extend(w);
        revoke(w, revoked.get_mut(id).expect("member"), &dup);
    }

    let lost = state.previous_assignment.minus(&active).minus(&deleted);
    let mut created = configured.minus(&state.previous_assignment).minus(&active);
    let (to_candidates, delay_ms) =
        handle_lost(ctx, state, &member_ids, &owned, lost.clone(), &mut created);
    let held_back = if delay_ms > 0 { lost } else { Work::default() };

    let mut delay_ms = delay_ms;
    if state.scheduled_rebalance_ms.is_none() {
        let balancing = balance_revocations(&configured, &owned);
        if balancing.values().any(|w| !w.is_empty()) {
            match backoff(ctx, state) {
                Some(wait) => delay_ms = delay_ms.max(wait),
                None => {
                    for (id, w) in owned.iter_mut() {
                        revoke(w, revoked.get_mut(id).expect("member"), &balancing[id]);
                    }
                }
            }
        }
    }

    // Lost work given back to the members that were empty when the delay began.
    let (for_candidates, candidates) = to_candidates;
    if !for_candidates.is_empty() && !candidates.is_empty() {
        let mut cycle = candidates.iter().cycle();
        for c in &for_candidates.connectors {
            let id = cycle.next().expect("non-empty candidates");
            assigned
                .get_mut(id)
                .expect("member")
                .connectors
                .insert(c.clone());
        }
        for t in &for_candidates.tasks {
            let id = cycle.next().expect("non-empty candidates");
            assigned
                .get_mut(id)
                .expect("member")
                .tasks
                .insert(t.clone());
        }
        for (id, w) in &assigned {
            owned.get_mut(id).expect("member").extend(w);
        }
    }
    // Created work to the least loaded, connectors and tasks counted separately.
    for c in &created.connectors {
        let id = least_loaded(&owned, |w| w.connectors.len());
        owned
            .get_mut(&id)
            .expect("member")
            .connectors
            .insert(c.clone());
        assigned
            .get_mut(&id)
            .expect("member")
            .connectors
            .insert(c.clone());
    }
    for t in &created.tasks {
        let id = least_loaded(&owned, |w| w.tasks.len());
        owned.get_mut(&id).expect("member").tasks.insert(t.clone());
        assigned
            .get_mut(&id)
            .expect("member")
            .tasks
            .insert(t.clone());
    }

    let any_revocation = revoked.values().any(|w| !w.is_empty());
    if any_revocation {
        state.successive_revoking += 1;
    } else {
        state.successive_revoking = 0;
    }
    let mut next_previous = Work::default();
    for w in owned.values() {
        next_previous.extend(w);
    }
    next_previous.extend(&held_back);
    state.previous_assignment = next_previous;
    state.previous_members = member_ids;
    state.previous_generation = Some(ctx.generation);
    state.previous_revocation = any_revocation;

    let delay = i32::try_from(delay_ms).unwrap_or(i32::MAX);
    owned
        .keys()
        .map(|id| {
            let a = ExtendedAssignment {
                connectors: assigned[id].connectors.clone(),
                tasks: assigned[id].tasks.clone(),
                revoked_connectors: revoked[id].connectors.clone(),
                revoked_tasks: revoked[id].tasks.clone(),
                delay,
                ..base.clone()
            };
            (id.clone(), a)
        })
        .collect()
}

fn revoke(owned: &mut Work, revoked: &mut Work, what: &Work) {
    for c in &what.connectors {
        if owned.connectors.remove(c) {
            revoked.connectors.insert(c.clone());
        }
    }
    for t in &what.tasks {
        if owned.tasks.remove(t) {
            revoked.tasks.insert(t.clone());
        }
    }
}

fn least_loaded(owned: &BTreeMap<String, Work>, load: impl Fn(&Work) -> usize) -> String {
    owned
        .iter()
        .min_by_key(|(id, w)| (load(w), *id))
        .map(|(id, _)| id.clone())
        .expect("at least one member")
}

/// Decides what happens to lost work. Returns work to hand to candidates (with the candidate
/// set) and the delay in ms to announce; lost work treated as new is added to `created`.
fn handle_lost(
    ctx: &AssignContext<'_>,
    state: &mut IncrementalState,
    member_ids: &BTreeSet<String>,
    owned: &BTreeMap<String, Work>,
    lost: Work,
    created: &mut Work,
) -> ((Work, BTreeSet<String>), u64) {
    let none = (Work::default(), BTreeSet::new());
    if lost.is_empty() {
        if !state.previous_revocation {
            state.scheduled_rebalance_ms = None;
            state.candidates.clear();
        }
        let wait = state
            .scheduled_rebalance_ms
            .map(|d| d.saturating_sub(ctx.now_ms))
            .unwrap_or(0);
        return (none, wait);
    }
    let all_previous_present = state.previous_members.is_subset(member_ids);
    if (state.scheduled_rebalance_ms.is_none() && all_previous_present) || ctx.max_delay_ms == 0 {
        created.extend(&lost);
        return (none, 0);
    }
    if let Some(deadline) = state.scheduled_rebalance_ms
        && ctx.now_ms >= deadline
    {
        let cands: BTreeSet<String> = state.candidates.intersection(member_ids).cloned().collect();
        state.scheduled_rebalance_ms = None;
        state.candidates.clear();
        if cands.is_empty() {
            created.extend(&lost);
            return (none, 0);
        }
        return ((lost, cands), 0);
    }
    // First detection or still waiting: hold the lost work back.
    for (id, w) in owned {
        if w.is_empty() {
            state.candidates.insert(id.clone());
        }
    }
    let deadline = *state
        .scheduled_rebalance_ms
        .get_or_insert(ctx.now_ms + ctx.max_delay_ms);
    (none, deadline.saturating_sub(ctx.now_ms).max(1))
}

/// Whether load-balancing revocations must wait: after a revoking round, successive revoking
/// rounds back off exponentially (40^n ms, capped) so a flapping group does not thrash.
fn backoff(ctx: &AssignContext<'_>, state: &mut IncrementalState) -> Option<u64> {
    if !state.previous_revocation || ctx.max_delay_ms == 0 {
        state.revocation_backoff_until_ms = None;
        return None;
    }
    match state.revocation_backoff_until_ms {
        Some(until) if ctx.now_ms >= until => {
            state.revocation_backoff_until_ms = None;
            None
        }
        Some(until) => Some(until - ctx.now_ms),
        None => {
            let n = state.successive_revoking.clamp(1, 6);
            let wait = 40u64.saturating_pow(n).min(ctx.max_delay_ms);
            state.revocation_backoff_until_ms = Some(ctx.now_ms + wait);
            Some(wait)
        }
    }
}

/// Revocations that bring connectors and tasks (separately) to within one of each other:
/// `min = total / n`, at most `total % n` members (the most loaded) keep `min + 1`.
fn balance_revocations(
    configured: &Work,
    owned: &BTreeMap<String, Work>,
) -> BTreeMap<String, Work> {
    let mut out: BTreeMap<String, Work> = owned
        .keys()
        .map(|id| (id.clone(), Work::default()))
        .collect();
    let n = owned.len();
    if n == 0 {
        return out;
    }
    let conn_targets = targets(configured.connectors.len(), owned, |w| w.connectors.len());
    let task_targets = targets(configured.tasks.len(), owned, |w| w.tasks.len());
    for (id, w) in owned {
        let excess = w.connectors.len().saturating_sub(conn_targets[id]);
        let o = out.get_mut(id).expect("member");
        o.connectors
            .extend(w.connectors.iter().rev().take(excess).cloned());
        let excess = w.tasks.len().saturating_sub(task_targets[id]);
        o.tasks.extend(w.tasks.iter().rev().take(excess).cloned());
    }
    out
}

fn targets(
    total: usize,
    owned: &BTreeMap<String, Work>,
    load: impl Fn(&Work) -> usize,
) -> BTreeMap<String, usize> {
    let n = owned.len();
    let (min, mut extra) = (total / n, total % n);
    let mut by_load: Vec<(&String, usize)> = owned.iter().map(|(id, w)| (id, load(w))).collect();
    by_load.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    by_load
        .into_iter()
        .map(|(id, l)| {
            let t = if l > min && extra > 0 {
                extra -= 1;
                min + 1
            } else {
                min
            };
            (id.clone(), t)
        })
        .collect()
}

#[cfg(test)]
#[path = "assignor_tests.rs"]
mod tests;
