//! Connect's member metadata and assignment blobs, byte-compatible with Java's `ConnectProtocol`
//! (V0, `default`) and `IncrementalCooperativeConnectProtocol` (V1 `compatible`, V2 `sessioned`).
//!
//! These blobs travel opaquely inside JoinGroup `protocols[].metadata` and SyncGroup `assignment`;
//! the broker never reads them, so every worker in a group (Java or Rust) must agree on the bytes.
//! Layouts (big-endian, Kafka primitives):
//!
//! ```text
//! metadata V0:   version:i16=0  url:STRING  config_offset:i64
//! metadata V1/2: version:i16    url:STRING  config_offset:i64  allocation:NULLABLE_BYTES(assignment V1/2)
//! assignment V0: version:i16=0  error:i16  leader:STRING  leader_url:STRING  config_offset:i64
//!                assignment:ARRAY<connector:STRING tasks:ARRAY<i32>>
//! assignment V1/2: ... as V0, assignment nullable, then revoked:nullable ARRAY<..>  delay:i32
//! ```
//!
//! Task id `-1` in a connector entry stands for the connector instance itself.

use std::collections::{BTreeMap, BTreeSet};

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// Task id that, inside a connector entry, means "the connector instance itself".
pub const CONNECTOR_TASK: i32 = -1;
/// Assignment error: none.
pub const NO_ERROR: i16 = 0;
/// Assignment error: the leader's config snapshot is behind some member's; everyone must re-read
/// the config topic and rejoin.
pub const CONFIG_MISMATCH: i16 = 1;

/// `connect.protocol`: which sub-protocols this worker offers, newest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConnectProtocolVersion {
    /// `default`, version 0: stop-the-world rebalances.
    Eager,
    /// `compatible`, version 1: incremental cooperative (KIP-415).
    Compatible,
    /// `sessioned`, version 2: incremental cooperative plus request signing (KIP-507).
    Sessioned,
}

impl ConnectProtocolVersion {
    /// The JoinGroup protocol name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Eager => "default",
            Self::Compatible => "compatible",
            Self::Sessioned => "sessioned",
        }
    }

    /// The version number written in the blobs of this protocol.
    pub fn version(self) -> i16 {
        match self {
            Self::Eager => 0,
            Self::Compatible => 1,
            Self::Sessioned => 2,
        }
    }

    /// Parses a JoinGroup protocol name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "default" => Some(Self::Eager),
            "compatible" => Some(Self::Compatible),
            "sessioned" => Some(Self::Sessioned),
            _ => None,
        }
    }

    /// Parses the `connect.protocol` worker property value.
    pub fn from_config(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "eager" => Some(Self::Eager),
            "compatible" => Some(Self::Compatible),
            "sessioned" => Some(Self::Sessioned),
            _ => None,
        }
    }

    /// The protocols offered in JoinGroup, in preference order (the broker picks the first one
    /// every member supports, so one eager worker downgrades the whole group).
    pub fn offered(self) -> &'static [ConnectProtocolVersion] {
        match self {
            Self::Eager => &[Self::Eager],
            Self::Compatible => &[Self::Compatible, Self::Eager],
            Self::Sessioned => &[Self::Sessioned, Self::Compatible, Self::Eager],
        }
    }

    /// Whether this protocol rebalances incrementally (revocations, delays) rather than eagerly.
    pub fn is_cooperative(self) -> bool {
        self != Self::Eager
    }
}

/// One unit of work: a task of a connector, or the connector itself when `task == -1`.
pub use crate::task_id::ConnectorTaskId;

/// A decode failure: the blob is shorter than its layout or holds invalid UTF-8.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed connect protocol blob: {0}")]
pub struct ProtocolError(pub String);

/// A member's JoinGroup metadata. `allocation` (V1+) is the member's whole current assignment,
/// which lets a new leader rebuild the group's state without having been leader before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerMetadata {
    pub version: i16,
    pub url: String,
    pub config_offset: i64,
    pub allocation: Option<ExtendedAssignment>,
}

impl WorkerMetadata {
    /// Serializes in the layout of `self.version` (0 drops the allocation).
    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i16(self.version);
        put_string(&mut b, &self.url);
        b.put_i64(self.config_offset);
        if self.version >= 1 {
            match &self.allocation {
                Some(a) => {
                    let blob = a.encode();
                    b.put_i32(blob.len() as i32);
                    b.put_slice(&blob);
                }
                None => b.put_i32(-1),
            }
        }
        b.freeze()
    }

    /// Parses any version; fields a version lacks, or trailing fields cut off, take defaults.
    pub fn decode(mut buf: &[u8]) -> Result<Self, ProtocolError> {
        let version = get_i16(&mut buf)?;
        if version < 0 {
            return Err(ProtocolError(format!(
                "negative metadata version {version}"
            )));
        }
        let url = get_string(&mut buf)?;
        let config_offset = get_i64(&mut buf)?;
        let mut allocation = None;
        if version >= 1 && buf.remaining() >= 4 {
            let len = get_i32(&mut buf)?;
            if len >= 0 {
                let blob = take(&mut buf, len as usize)?;
                allocation = Some(ExtendedAssignment::decode(blob)?);
            }
        }
        Ok(Self {
            version,
            url,
            config_offset,
            allocation,
        })
    }
}

/// A SyncGroup assignment. In the cooperative protocols `connectors`/`tasks` hold only what is
/// *newly* assigned this round and `revoked_*` what must stop; eager assignments are full and
/// never revoke. As a metadata `allocation` it holds the member's full current assignment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExtendedAssignment {
    pub version: i16,
    pub error: i16,
    pub leader: String,
    pub leader_url: String,
    pub config_offset: i64,
    pub connectors: BTreeSet<String>,
    pub tasks: BTreeSet<ConnectorTaskId>,
    pub revoked_connectors: BTreeSet<String>,
    pub revoked_tasks: BTreeSet<ConnectorTaskId>,
    /// Milliseconds after which the member should rejoin (a held-back rebalance); 0 = none.
    pub delay: i32,
}

impl ExtendedAssignment {
    /// Whether the leader answered CONFIG_MISMATCH (or any other error).
    pub fn failed(&self) -> bool {
        self.error != NO_ERROR
    }

    /// Whether this assignment asks the member to stop anything.
    pub fn has_revocations(&self) -> bool {
        !self.revoked_connectors.is_empty() || !self.revoked_tasks.is_empty()
    }

    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i16(self.version);
        b.put_i16(self.error);
        put_string(&mut b, &self.leader);
        put_string(&mut b, &self.leader_url);
        b.put_i64(self.config_offset);
        put_connector_array(&mut b, &self.connectors, &self.tasks);
        if self.version >= 1 {
            put_connector_array(&mut b, &self.revoked_connectors, &self.revoked_tasks);
            b.put_i32(self.delay);
        }
        b.freeze()
    }

    /// Parses any version as the newest layout, tolerating missing trailing fields (Java does
    /// the same, so a V0 blob reads as a V1 assignment with nothing revoked and no delay).
    pub fn decode(mut buf: &[u8]) -> Result<Self, ProtocolError> {
        let version = get_i16(&mut buf)?;
        if version < 0 {
            return Err(ProtocolError(format!(
                "negative assignment version {version}"
            )));
        }
        let error = get_i16(&mut buf)?;
        let leader = get_string(&mut buf)?;
        let leader_url = get_string(&mut buf)?;
        let config_offset = get_i64(&mut buf)?;
        let (connectors, tasks) = get_connector_array(&mut buf)?;
        let (mut revoked_connectors, mut revoked_tasks) = (BTreeSet::new(), BTreeSet::new());
        let mut delay = 0;
        if buf.remaining() >= 4 {
            (revoked_connectors, revoked_tasks) = get_connector_array(&mut buf)?;
        }
        if buf.remaining() >= 4 {
            delay = get_i32(&mut buf)?;
        }
        Ok(Self {
            version,
            error,
            leader,
            leader_url,
            config_offset,
            connectors,
            tasks,
            revoked_connectors,
            revoked_tasks,
            delay,
        })
    }
}

fn put_string(b: &mut BytesMut, s: &str) {
    b.put_i16(s.len() as i16);
    b.put_slice(s.as_bytes());
}

/// Groups connectors and tasks by connector name: `-1` first (the connector), then task ids.
fn put_connector_array(
    b: &mut BytesMut,
    connectors: &BTreeSet<String>,
    tasks: &BTreeSet<ConnectorTaskId>,
) {
    let mut by_connector: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for c in connectors {
        by_connector.entry(c).or_default().push(CONNECTOR_TASK);
    }
    for t in tasks {
        by_connector.entry(&t.connector).or_default().push(t.task);
    }
    b.put_i32(by_connector.len() as i32);
    for (name, ids) in by_connector {
        put_string(b, name);
        b.put_i32(ids.len() as i32);
        for id in ids {
            b.put_i32(id);
        }
    }
}

type ConnectorsAndTasks = (BTreeSet<String>, BTreeSet<ConnectorTaskId>);

fn get_connector_array(buf: &mut &[u8]) -> Result<ConnectorsAndTasks, ProtocolError> {
    let mut connectors = BTreeSet::new();
    let mut tasks = BTreeSet::new();
    let n = get_i32(buf)?;
    // -1 = null array (V1 allows it): nothing assigned.
    for _ in 0..n.max(0) {
        let name = get_string(buf)?;
        let m = get_i32(buf)?;
        for _ in 0..m.max(0) {
            let id = get_i32(buf)?;
            if id == CONNECTOR_TASK {
                connectors.insert(name.clone());
            } else {
                tasks.insert(ConnectorTaskId::new(name.clone(), id));
            }
        }
    }
    Ok((connectors, tasks))
}

fn need(buf: &[u8], n: usize) -> Result<(), ProtocolError> {
    if buf.remaining() < n {
        return Err(ProtocolError(format!(
            "need {n} more bytes, {} left",
            buf.remaining()
        )));
    }
    Ok(())
}

fn get_i16(buf: &mut &[u8]) -> Result<i16, ProtocolError> {
    need(buf, 2)?;
    Ok(buf.get_i16())
}

fn get_i32(buf: &mut &[u8]) -> Result<i32, ProtocolError> {
    need(buf, 4)?;
    Ok(buf.get_i32())
}

fn get_i64(buf: &mut &[u8]) -> Result<i64, ProtocolError> {
    need(buf, 8)?;
    Ok(buf.get_i64())
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> Result<&'a [u8], ProtocolError> {
    need(buf, n)?;
    let (head, tail) = buf.split_at(n);
    *buf = tail;
    Ok(head)
}

fn get_string(buf: &mut &[u8]) -> Result<String, ProtocolError> {
    let len = get_i16(buf)?;
    if len < 0 {
        return Err(ProtocolError(
            "null string where a string is required".into(),
        ));
    }
    let raw = take(buf, len as usize)?;
    String::from_utf8(raw.to_vec()).map_err(|e| ProtocolError(format!("invalid utf-8: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn protocols_offered_newest_first() {
        let names =
            |p: ConnectProtocolVersion| p.offered().iter().map(|p| p.name()).collect::<Vec<_>>();
        assert_eq!(
            names(ConnectProtocolVersion::Sessioned),
            ["sessioned", "compatible", "default"]
        );
        assert_eq!(
            names(ConnectProtocolVersion::Compatible),
            ["compatible", "default"]
        );
        assert_eq!(names(ConnectProtocolVersion::Eager), ["default"]);
        assert_eq!(
            ConnectProtocolVersion::from_config("EAGER"),
            Some(ConnectProtocolVersion::Eager)
        );
        assert_eq!(
            ConnectProtocolVersion::from_name("sessioned").map(|p| p.version()),
            Some(2)
        );
    }

    #[test]
    fn metadata_v0_fixed_bytes() {
        let m = WorkerMetadata {
            version: 0,
            url: "http://a:8083/".into(),
            config_offset: 5,
            allocation: None,
        };
        let mut want = vec![0, 0, 0, 14];
        want.extend_from_slice(b"http://a:8083/");
        want.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 5]);
        assert_eq!(m.encode().as_ref(), want.as_slice());
        assert_eq!(WorkerMetadata::decode(&want).unwrap(), m);
    }

    #[test]
    fn metadata_v1_null_allocation_fixed_bytes() {
        let m = WorkerMetadata {
            version: 1,
            url: "u".into(),
            config_offset: -1,
            allocation: None,
        };
        let want = [
            0, 1, 0, 1, b'u', 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        ];
        assert_eq!(m.encode().as_ref(), &want);
        assert_eq!(WorkerMetadata::decode(&want).unwrap(), m);
    }

    #[test]
    fn assignment_v1_fixed_bytes() {
        let a = ExtendedAssignment {
            version: 1,
            error: 0,
            leader: "L".into(),
            leader_url: "U".into(),
            config_offset: 7,
            connectors: ["c".to_string()].into(),
            tasks: [ConnectorTaskId::new("c", 0)].into(),
            revoked_connectors: BTreeSet::new(),
            revoked_tasks: [ConnectorTaskId::new("d", 2)].into(),
            delay: 300,
        };
        #[rustfmt::skip]
        let want: Vec<u8> = vec![
            0, 1, 0, 0, 0, 1, b'L', 0, 1, b'U', 0, 0, 0, 0, 0, 0, 0, 7,
            0, 0, 0, 1, 0, 1, b'c', 0, 0, 0, 2, 255, 255, 255, 255, 0, 0, 0, 0,
            0, 0, 0, 1, 0, 1, b'd', 0, 0, 0, 1, 0, 0, 0, 2,
            0, 0, 1, 44,
        ];
        assert_eq!(a.encode().as_ref(), want.as_slice());
        assert_eq!(ExtendedAssignment::decode(&want).unwrap(), a);
    }

    #[test]
    fn assignment_v0_reads_as_newest_layout() {
        #[rustfmt::skip]
        let v0: Vec<u8> = vec![
            0, 0, 0, 1, 0, 1, b'L', 0, 1, b'U', 0, 0, 0, 0, 0, 0, 0, 9,
            0, 0, 0, 0,
        ];
        let a = ExtendedAssignment::decode(&v0).unwrap();
        assert_eq!(a.error, CONFIG_MISMATCH);
        assert_eq!(a.config_offset, 9);
        assert!(a.connectors.is_empty() && !a.has_revocations() && a.delay == 0);
        assert_eq!(a.encode().as_ref(), v0.as_slice());
    }

    #[test]
    fn null_arrays_and_truncation() {
        // V1 with a null assignment array and nothing after it.
        let blob = [
            0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255,
        ];
        let a = ExtendedAssignment::decode(&blob).unwrap();
        assert!(a.connectors.is_empty() && a.tasks.is_empty());
        assert!(ExtendedAssignment::decode(&blob[..10]).is_err());
        assert!(WorkerMetadata::decode(&[0, 0, 0, 5, b'a']).is_err());
    }

    fn arb_id() -> impl Strategy<Value = ConnectorTaskId> {
        ("[a-z]{1,4}", 0i32..8).prop_map(|(c, t)| ConnectorTaskId::new(c, t))
    }

    prop_compose! {
        fn arb_assignment(version: i16)(
            error in 0i16..2,
            leader in "[a-z0-9-]{0,12}",
            leader_url in "\\PC{0,12}",
            config_offset in any::<i64>(),
            connectors in proptest::collection::btree_set("[a-z]{1,4}", 0..4),
            tasks in proptest::collection::btree_set(arb_id(), 0..8),
            revoked_connectors in proptest::collection::btree_set("[a-z]{1,4}", 0..3),
            revoked_tasks in proptest::collection::btree_set(arb_id(), 0..5),
            delay in any::<i32>(),
        ) -> ExtendedAssignment {
            let v1 = version >= 1;
            ExtendedAssignment {
                version, error, leader, leader_url, config_offset, connectors, tasks,
                revoked_connectors: if v1 { revoked_connectors } else { BTreeSet::new() },
                revoked_tasks: if v1 { revoked_tasks } else { BTreeSet::new() },
                delay: if v1 { delay } else { 0 },
            }
        }
    }

    proptest! {
        #[test]
        fn assignment_v2_round_trips(a in arb_assignment(2)) {
            prop_assert_eq!(ExtendedAssignment::decode(&a.encode()).unwrap(), a);
        }

        #[test]
        fn assignment_v0_round_trips(a in arb_assignment(0)) {
            prop_assert_eq!(ExtendedAssignment::decode(&a.encode()).unwrap(), a);
        }

        #[test]
        fn metadata_round_trips(
            version in 1i16..3,
            url in "\\PC{0,20}",
            config_offset in any::<i64>(),
            alloc in proptest::option::of(arb_assignment(1)),
        ) {
            let allocation = alloc.map(|mut a| { a.version = version; a });
            let m = WorkerMetadata { version, url, config_offset, allocation };
            prop_assert_eq!(WorkerMetadata::decode(&m.encode()).unwrap(), m);
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = ExtendedAssignment::decode(&bytes);
            let _ = WorkerMetadata::decode(&bytes);
        }
    }
}
