//! Which snapshot read which rows, so that a snapshot interrupted by a crash resumes without
//! sending a row twice or missing a change.
//!
//! The snapshot reads the captured tables in name order, each in primary key order. The first
//! attempt reads at the replication slot's consistent point L0 (its exported snapshot). When a
//! worker dies mid-snapshot, that exported snapshot is gone; the resumed attempt takes a new one
//! at L1 (a temporary slot's) and reads on from the last row the offsets say was sent. So a
//! row was read either at L0 or at L1 (or at L2 after a second crash, ...), depending on where
//! it lies in the snapshot's order: the *segments*, each a start position and an LSN.
//!
//! The stream starts at L0. A change committed at C to a row whose segment read it at Ln is
//! already in the snapshot when C <= Ln, and is skipped; otherwise it is sent. Rows of a later
//! segment inserted, updated or deleted between L0 and Ln are thus neither doubled nor lost.
//!
//! ```text
//!  order:  table a            | table b (pk 1..k | k+1..)   | table c
//!  read:   L0                   L0                 L1         L1
//!  change at C in (L0, L1]: sent for a, and b rows <= k; skipped for b rows > k, and c
//! ```

use serde_json::{Value as Json, json};

/// From `(table, key)` on (exclusive of `key`; `None`: the table's first row), rows were read
/// at `lsn`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// `schema.table` (`""` for the first segment: everything).
    pub table: String,
    /// The primary key's values (text) of the last row read before this segment.
    pub key: Option<Vec<String>>,
    pub lsn: u64,
}

impl Segment {
    pub fn to_json(&self) -> Json {
        json!({"table": self.table, "key": self.key, "lsn": self.lsn})
    }

    pub fn from_json(j: &Json) -> Option<Segment> {
        Some(Segment {
            table: j.get("table")?.as_str()?.to_owned(),
            key: match j.get("key") {
                None | Some(Json::Null) => None,
                Some(Json::Array(items)) => Some(
                    items
                        .iter()
                        .map(|i| i.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()?,
                ),
                Some(_) => return None,
            },
            lsn: j.get("lsn")?.as_u64()?,
        })
    }
}

pub fn to_json(segments: &[Segment]) -> Json {
    Json::Array(segments.iter().map(Segment::to_json).collect())
}

pub fn from_json(j: Option<&Json>) -> Vec<Segment> {
    j.and_then(Json::as_array)
        .map(|a| a.iter().filter_map(Segment::from_json).collect())
        .unwrap_or_default()
}

/// How a row's position compares with a segment's start: the tables' names, then (same table)
/// the keys, which only PostgreSQL can compare (collations): `key_after` answers whether the
/// row's key is after the segment's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// The segment starts before the row's table.
    Before,
    /// The segment starts after the row's table.
    After,
    /// The segment starts inside the row's table after this key: compare.
    SameTable,
}

pub fn start_of(segment: &Segment, table: &str) -> Start {
    match segment.table.as_str().cmp(table) {
        std::cmp::Ordering::Less => Start::Before,
        std::cmp::Ordering::Greater => Start::After,
        std::cmp::Ordering::Equal if segment.key.is_none() => Start::Before,
        std::cmp::Ordering::Equal => Start::SameTable,
    }
}

/// The largest LSN of the segments (no change committed after it can be in the snapshot).
pub fn max_lsn(segments: &[Segment]) -> u64 {
    segments.iter().map(|s| s.lsn).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_round_trip_and_order() {
        let s = vec![
            Segment {
                table: String::new(),
                key: None,
                lsn: 10,
            },
            Segment {
                table: "public.b".into(),
                key: Some(vec!["7".into()]),
                lsn: 20,
            },
        ];
        assert_eq!(from_json(Some(&to_json(&s))), s);
        assert_eq!(start_of(&s[0], "public.a"), Start::Before);
        assert_eq!(start_of(&s[1], "public.a"), Start::After);
        assert_eq!(start_of(&s[1], "public.b"), Start::SameTable);
        assert_eq!(start_of(&s[1], "public.c"), Start::Before);
        assert_eq!(max_lsn(&s), 20);
    }
}
