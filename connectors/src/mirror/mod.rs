//! MirrorMaker 2 on this worker: Apache's `connect-mirror` connectors under Apache's class
//! names, keys, defaults, topic names, record formats and offsets.
//!
//! - [`config`]: the keys, their validation and the Kafka client configs built from them.
//! - [`typed`]: the configs after validation, typed.
//! - [`policy`]: remote topic naming (`DefaultReplicationPolicy`, `IdentityReplicationPolicy`).
//! - [`formats`]: offset-sync, checkpoint and heartbeat records, byte for byte.
//! - [`acls`]: topic ACL sync (DescribeAcls, CreateAcls through the worker's Kafka client).
//! - [`admin`]: listing and creating topics on either cluster.
//! - [`offset_syncs`]: which offset syncs a source task writes, and the writer.
//! - [`source`]: `MirrorSourceConnector` and its task.
//! - [`checkpoint`]: `MirrorCheckpointConnector` and its task (checkpoints, group offset sync).
//! - `group_offsets`: consumer-group offsets read and written without joining the group.
//! - [`heartbeat`]: `MirrorHeartbeatConnector` and its task.
//! - [`offset_sync_store`]: Apache's `OffsetSyncStore`, offset translation for checkpoints.

pub mod acls;
pub mod admin;
pub mod checkpoint;
pub mod config;
pub mod formats;
mod group_offsets;
pub mod heartbeat;
pub mod offset_sync_store;
pub mod offset_syncs;
pub mod policy;
pub mod source;
pub mod typed;

pub use checkpoint::{MirrorCheckpointConnector, MirrorCheckpointTask};
pub use heartbeat::{MirrorHeartbeatConnector, MirrorHeartbeatTask};
pub use source::{MirrorSourceConnector, MirrorSourceTask};

pub const SOURCE_CONNECTOR_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorSourceConnector";
pub const SOURCE_TASK_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorSourceTask";
pub const HEARTBEAT_CONNECTOR_CLASS: &str =
    "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector";
pub const HEARTBEAT_TASK_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorHeartbeatTask";
pub const CHECKPOINT_CONNECTOR_CLASS: &str =
    "org.apache.kafka.connect.mirror.MirrorCheckpointConnector";
pub const CHECKPOINT_TASK_CLASS: &str = "org.apache.kafka.connect.mirror.MirrorCheckpointTask";
