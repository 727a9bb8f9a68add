//! Group membership over the Kafka protocol.

pub mod assignor;
pub mod client;
pub mod member;
pub mod protocol;

pub use assignor::{ClusterConfigSnapshot, Work};
pub use member::{GroupEvent, GroupHandle, MembershipConfig, spawn_member};
pub use protocol::{ConnectProtocolVersion, ConnectorTaskId, ExtendedAssignment};
