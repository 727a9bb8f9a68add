//! Group membership over Kafka's classic group APIs with `protocol_type = "connect"`.
//!
//! - [`protocol`]: the member metadata and assignment blobs (V0 `default`, V1 `compatible`,
//!   V2 `sessioned`), byte-compatible with Java's `ConnectProtocol` and
//!   `IncrementalCooperativeConnectProtocol`
//! - [`assignor`]: the leader's pure assignors, incremental cooperative and eager
//! - [`client`]: a minimal async Kafka client for ApiVersions, FindCoordinator, JoinGroup,
//!   SyncGroup, Heartbeat and LeaveGroup, over PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
//!   (re-authenticating in band, KIP-368, when the broker limits the session)
//! - [`errors`]: [`client::ClientError`] and the error codes, and which errors are fatal
//! - [`tls`]: rustls client configuration (CA or system roots, client certificates, optional
//!   host-name check) and readable TLS failures
//! - [`sasl`]: the PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER client exchanges
//! - [`connector_requests`]: that client's connections lent to connectors
//!   ([`connect_api::kafka_clients::KafkaConnector`]: MirrorMaker 2's ACL requests)
//! - [`standalone`]: the standalone worker's one-member "group", always leader, no Kafka
//! - [`member`]: the background task the herder talks to ([`spawn_member`], [`GroupHandle`],
//!   [`GroupEvent`])
//!
//! ```text
//!  herder                       member task                         group coordinator
//!    |  spawn_member ---------->  FindCoordinator(GROUP) ---------->  |
//!    |  <- RebalanceStarted       JoinGroup(url, config offset,       |
//!    |                              owned work; sessioned >          |
//!    |                              compatible > default) --------->  | waits for all members
//!    |                            <- generation, leader, [members]    |
//!    |                            leader: assignor(members, snapshot) |
//!    |                            SyncGroup(assignments) ---------->  |
//!    |  <- Assigned{assignment}   <- this member's assignment         |
//!    |  stop revoked, start new                                       |
//!    |  request_rejoin() -------> (after revocations / after delay)   |
//!    |                            Heartbeat every interval -------->  |
//!    |                            <- REBALANCE_IN_PROGRESS: rejoin    |
//!    |  leave() ----------------> LeaveGroup ---------------------->  |
//! ```
//!
//! # Guarantees
//!
//! - Cooperative protocols: a member never starts work revoked from another member in the same
//!   round; the revoking member rejoins (via the herder) only after stopping it, and only then is
//!   the work handed out.
//! - Each member tracks its own work as previous − revoked + assigned and sends it with every
//!   JoinGroup, so a newly elected leader rebuilds the group's state from the members alone.
//! - The leader assigns only from a config snapshot at least as new as every member's: otherwise
//!   everyone gets CONFIG_MISMATCH and nothing changes until the leader catches up.
//! - Work of a member that vanished without leaving is held back for
//!   `scheduled.rebalance.max.delay.ms`; assignments carry the remaining `delay` so members
//!   rejoin when it expires.
//!
//! # Errors
//!
//! - COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR / load in progress, and transport failures:
//!   the coordinator is looked up again and the request retried.
//! - MEMBER_ID_REQUIRED: rejoin at once with the member id the coordinator handed out.
//! - UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION: the member was expelled; the herder gets
//!   [`GroupEvent::MembershipLost`] (stop everything) and the member joins afresh.
//! - REBALANCE_IN_PROGRESS (heartbeat, sync): rejoin.
//! - Authorization, invalid group or session timeout, unsupported broker versions:
//!   [`GroupEvent::Fatal`], and the member task ends.
//! - Authentication failures, untrusted or rejected certificates, TLS or SASL aimed at a
//!   listener that does not speak it, unusable TLS material: [`GroupEvent::Fatal`] with a
//!   message naming the broker and the problem (see [`client`]'s "Errors that end start-up").

pub mod assignor;
pub mod client;
pub mod connector_requests;
pub mod errors;
pub mod member;
pub mod producer;
pub mod producer_settings;
pub mod protocol;
pub mod sasl;
pub mod standalone;
pub mod tls;
pub mod transactions;

pub use assignor::{ClusterConfigSnapshot, Work};
pub use member::{GroupEvent, GroupHandle, LiveWork, MembershipConfig, spawn_member};
pub use protocol::{
    CONFIG_MISMATCH, ConnectProtocolVersion, ConnectorTaskId, ExtendedAssignment, NO_ERROR,
};
pub use standalone::spawn_standalone_member;
