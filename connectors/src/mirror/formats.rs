//! Apache MirrorMaker 2's record formats, byte for byte (Kafka's protocol `Schema` encoding:
//! big-endian integers, strings as an INT16 length and UTF-8 bytes):
//!
//! - offset sync (`mm2-offset-syncs.<alias>.internal`): key `{topic: STRING, partition: INT32}`,
//!   value `{upstreamOffset: INT64, offset: INT64}`;
//! - checkpoint (`<alias>.checkpoints.internal`): key `{group: STRING, topic: STRING,
//!   partition: INT32}`, value `{version: INT16 = 0}` then `{upstreamOffset: INT64,
//!   offset: INT64, metadata: STRING}`;
//! - heartbeat (`heartbeats`): key `{sourceClusterAlias: STRING, targetClusterAlias: STRING}`,
//!   value `{version: INT16 = 0}` then `{timestamp: INT64}`.

/// Where a replicated record landed: `upstream` on the source, `downstream` on the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetSync {
    pub topic: String,
    pub partition: i32,
    pub upstream_offset: i64,
    pub downstream_offset: i64,
}

/// A consumer group's offset on the source translated to the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub upstream_offset: i64,
    pub downstream_offset: i64,
    pub metadata: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heartbeat {
    pub source_alias: String,
    pub target_alias: String,
    pub timestamp: i64,
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    let len = i16::try_from(s.len()).unwrap_or(i16::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&s.as_bytes()[..usize::try_from(len).unwrap_or(0)]);
}

/// A cursor over a record's bytes; every read fails on truncated input.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }
    fn i16(&mut self) -> Option<i16> {
        Some(i16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }
    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }
    fn string(&mut self) -> Option<String> {
        let len = usize::try_from(self.i16()?).ok()?;
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }
}

impl OffsetSync {
    pub fn key(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(6 + self.topic.len());
        put_string(&mut out, &self.topic);
        out.extend_from_slice(&self.partition.to_be_bytes());
        out
    }

    pub fn value(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        out.extend_from_slice(&self.upstream_offset.to_be_bytes());
        out.extend_from_slice(&self.downstream_offset.to_be_bytes());
        out
    }

    pub fn decode(key: &[u8], value: &[u8]) -> Option<Self> {
        let mut k = Reader(key);
        let mut v = Reader(value);
        Some(Self {
            topic: k.string()?,
            partition: k.i32()?,
            upstream_offset: v.i64()?,
            downstream_offset: v.i64()?,
        })
    }
}

impl Checkpoint {
    pub fn key(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_string(&mut out, &self.group);
        put_string(&mut out, &self.topic);
        out.extend_from_slice(&self.partition.to_be_bytes());
        out
    }

    pub fn value(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&0i16.to_be_bytes());
        out.extend_from_slice(&self.upstream_offset.to_be_bytes());
        out.extend_from_slice(&self.downstream_offset.to_be_bytes());
        put_string(&mut out, &self.metadata);
        out
    }

    pub fn decode(key: &[u8], value: &[u8]) -> Option<Self> {
        let mut k = Reader(key);
        let mut v = Reader(value);
        let _version = v.i16()?;
        Some(Self {
            group: k.string()?,
            topic: k.string()?,
            partition: k.i32()?,
            upstream_offset: v.i64()?,
            downstream_offset: v.i64()?,
            metadata: v.string()?,
        })
    }
}

impl Heartbeat {
    pub fn key(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_string(&mut out, &self.source_alias);
        put_string(&mut out, &self.target_alias);
        out
    }

    pub fn value(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&0i16.to_be_bytes());
        out.extend_from_slice(&self.timestamp.to_be_bytes());
        out
    }

    pub fn decode(key: &[u8], value: &[u8]) -> Option<Self> {
        let mut k = Reader(key);
        let mut v = Reader(value);
        let _version = v.i16()?;
        Some(Self {
            source_alias: k.string()?,
            target_alias: k.string()?,
            timestamp: v.i64()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes as Apache's `OffsetSync.recordKey/recordValue` write them for
    /// `new OffsetSync(new TopicPartition("topic1", 2), 3L, 4L)` (Struct over
    /// `Schema(Field("topic", STRING), Field("partition", INT32))` and two INT64 fields).
    #[test]
    fn offset_sync_bytes_as_apache() {
        let s = OffsetSync {
            topic: "topic1".into(),
            partition: 2,
            upstream_offset: 3,
            downstream_offset: 4,
        };
        assert_eq!(s.key(), b"\x00\x06topic1\x00\x00\x00\x02");
        assert_eq!(
            s.value(),
            [0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 4].to_vec()
        );
        assert_eq!(OffsetSync::decode(&s.key(), &s.value()), Some(s));
    }

    #[test]
    fn checkpoint_and_heartbeat_bytes_as_apache() {
        let c = Checkpoint {
            group: "g".into(),
            topic: "a.t".into(),
            partition: 1,
            upstream_offset: 10,
            downstream_offset: 7,
            metadata: String::new(),
        };
        assert_eq!(c.key(), b"\x00\x01g\x00\x03a.t\x00\x00\x00\x01");
        let mut v = vec![0, 0];
        v.extend_from_slice(&10i64.to_be_bytes());
        v.extend_from_slice(&7i64.to_be_bytes());
        v.extend_from_slice(&[0, 0]);
        assert_eq!(c.value(), v);
        assert_eq!(Checkpoint::decode(&c.key(), &c.value()), Some(c));
        let h = Heartbeat {
            source_alias: "a".into(),
            target_alias: "b".into(),
            timestamp: 1,
        };
        assert_eq!(h.key(), b"\x00\x01a\x00\x01b");
        assert_eq!(h.value(), [0, 0, 0, 0, 0, 0, 0, 0, 0, 1].to_vec());
        assert_eq!(Heartbeat::decode(&h.key(), &h.value()), Some(h));
        assert_eq!(OffsetSync::decode(b"\x00", b""), None);
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Golden bytes from kafka-clients 4.4's protocol types with the schemas of
    /// connect-mirror-client 4.4's classes (`FormatsGolden.java` beside this file prints them).
    #[test]
    fn bytes_match_kafka_clients_serialization() {
        let sync = OffsetSync {
            topic: "topic1".into(),
            partition: 2,
            upstream_offset: 3,
            downstream_offset: 4,
        };
        assert_eq!(hex(&sync.key()), "0006746f7069633100000002");
        assert_eq!(hex(&sync.value()), "00000000000000030000000000000004");
        let cp = Checkpoint {
            group: "g".into(),
            topic: "a.t".into(),
            partition: 1,
            upstream_offset: 10,
            downstream_offset: 7,
            metadata: "m\u{e9}".into(),
        };
        assert_eq!(hex(&cp.key()), "0001670003612e7400000001");
        assert_eq!(
            hex(&cp.value()),
            "0000000000000000000a000000000000000700036dc3a9"
        );
        let hb = Heartbeat {
            source_alias: "us".into(),
            target_alias: "eu".into(),
            timestamp: 1_733_400_000_000,
        };
        assert_eq!(hex(&hb.key()), "0002757300026575");
        assert_eq!(hex(&hb.value()), "00000000019396b0f600");
    }
}
