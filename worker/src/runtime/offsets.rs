//! Source tasks read and write offsets through the offsets topic store.

use async_trait::async_trait;
use connect_api::{SourceOffset, SourcePartition};

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
