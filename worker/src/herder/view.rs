//! The worker's place in the group, as the herder loop last saw it: a read-only view for the
//! REST layer and the request queue ([`super::HerderHandle`]).

/// The worker's place in the group, updated by the herder loop.
#[derive(Debug, Clone, Default)]
pub struct HerderView {
    pub worker_id: String,
    pub worker_url: String,
    pub generation: i32,
    pub is_leader: bool,
    pub leader_url: Option<String>,
    /// Between RebalanceStarted and the next applied assignment.
    pub rebalancing: bool,
}
