//! Source tasks read and write offsets through the offsets topic store.

use async_trait::async_trait;
use connect_api::{SourceOffset, SourcePartition, SourceRecord};

use super::SourceOffsetBackend;
use crate::storage::ConnectorOffsetBackingStore;

#[async_trait]
impl SourceOffsetBackend for ConnectorOffsetBackingStore {
    async fn read(
        &self,
        connector: &str,
        partitions: &[SourcePartition],
    ) -> Result<Vec<(SourcePartition, Option<SourceOffset>)>, String> {
        self.get(connector, partitions)
            .await
            .map_err(|e| e.to_string())
    }

    async fn write(
        &self,
        connector: &str,
        offsets: Vec<(SourcePartition, Option<SourceOffset>)>,
    ) -> Result<(), String> {
        self.set(connector, &offsets)
            .await
            .map_err(|e| e.to_string())
    }
}

/// The latest source offset per source partition among the records a task handed over since the
/// last offset write (the at-least-once flush or the exactly-once commit), in the order of the
/// partitions' keys (their JSON form). Tasks give many records of one partition in a row: a
/// record of the same partition as the one before updates its entry without serializing the
/// partition again.
#[derive(Default)]
pub(crate) struct LatestOffsets {
    entries: std::collections::BTreeMap<String, (SourcePartition, Option<SourceOffset>)>,
    /// The key of the partition staged last.
    last: Option<String>,
}

impl LatestOffsets {
    pub fn stage(&mut self, partition: &SourcePartition, offset: &Option<SourceOffset>) {
        if let Some(last) = &self.last
            && let Some(entry) = self.entries.get_mut(last)
            && same_partition(&entry.0, partition)
        {
            entry.1.clone_from(offset);
            return;
        }
        let key = partition_key(partition);
        self.entries
            .insert(key.clone(), (partition.clone(), offset.clone()));
        self.last = Some(key);
    }

    /// [`Self::stage`] of each record in order: of a run of records of one source partition,
    /// only the last one's offset is staged (and copied).
    pub fn stage_all(&mut self, records: &[SourceRecord]) {
        for (i, record) in records.iter().enumerate() {
            if let Some(next) = records.get(i + 1)
                && same_partition(&next.source_partition, &record.source_partition)
            {
                continue;
            }
            self.stage(&record.source_partition, &record.source_offset);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The staged offsets, leaving none.
    pub fn take(&mut self) -> Vec<(SourcePartition, Option<SourceOffset>)> {
        self.last = None;
        std::mem::take(&mut self.entries).into_values().collect()
    }

    pub fn clear(&mut self) {
        self.last = None;
        self.entries.clear();
    }
}

/// Whether two source partitions are equal; most often they are the same map built the same
/// way, which is compared entry by entry in order, without hashing its keys.
fn same_partition(a: &SourcePartition, b: &SourcePartition) -> bool {
    a.len() == b.len() && (a.iter().eq(b.iter()) || a == b)
}

/// A source partition's key among the staged offsets: its JSON form. Known difference from
/// Java (which keys by map equality): two equal partitions whose keys come in different orders
/// get two entries, unless their records follow each other; a canonical (sorted-keys) form
/// would merge them.
pub(crate) fn partition_key(p: &SourcePartition) -> String {
    serde_json::to_string(p).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: serde_json::Value) -> SourcePartition {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_latest_offset_of_each_partition_in_key_order() {
        let mut o = LatestOffsets::default();
        let (a, b) = (map(json!({"p": "a"})), map(json!({"p": "b"})));
        o.stage(&b, &Some(map(json!({"n": 1}))));
        o.stage(&b, &Some(map(json!({"n": 2}))));
        o.stage(&a, &Some(map(json!({"n": 7}))));
        o.stage(&b, &None);
        o.stage(&a, &Some(map(json!({"n": 8}))));
        assert_eq!(
            o.take(),
            vec![(a, Some(map(json!({"n": 8})))), (b.clone(), None)]
        );
        assert!(o.is_empty());
        o.stage(&b, &Some(map(json!({"n": 3}))));
        assert_eq!(o.take(), vec![(b, Some(map(json!({"n": 3}))))]);
    }

    #[test]
    fn staging_records_together_keeps_the_latest_offset_of_each_partition() {
        let record = |p: &SourcePartition, n: i64| {
            SourceRecord::new(
                p.clone(),
                map(json!({"n": n})),
                "t",
                None,
                connect_api::Value::Null,
            )
        };
        let a = map(json!({"p": "a", "q": 1}));
        let b = map(json!({"p": "b"}));
        let records = [
            record(&a, 1),
            record(&a, 2),
            record(&b, 3),
            record(&a, 4),
            record(&b, 5),
            record(&b, 6),
        ];
        let mut together = LatestOffsets::default();
        together.stage_all(&records);
        let mut one_by_one = LatestOffsets::default();
        for r in &records {
            one_by_one.stage(&r.source_partition, &r.source_offset);
        }
        let expected = vec![
            (a.clone(), Some(map(json!({"n": 4})))),
            (b.clone(), Some(map(json!({"n": 6})))),
        ];
        assert_eq!(together.take(), expected);
        assert_eq!(one_by_one.take(), expected);
    }
}
