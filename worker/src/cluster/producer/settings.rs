//! [`ProducerSettings`]: how to reach the cluster and behave (built from a librdkafka config by
//! `cluster/producer_settings.rs`), and `compression.type` as a batch compression.

use std::time::Duration;

use kafka_protocol::records::Compression;

use crate::cluster::client::Security;

/// How to reach the cluster and behave, from the task's producer settings.
#[derive(Debug, Clone)]
pub struct ProducerSettings {
    pub bootstrap: Vec<String>,
    pub client_id: String,
    pub transactional_id: String,
    pub security: Security,
    /// `request.timeout.ms`.
    pub request_timeout: Duration,
    /// `delivery.timeout.ms` (librdkafka's `message.timeout.ms`): how long a flush or a
    /// transactional call retries.
    pub delivery_timeout: Duration,
    /// `transaction.timeout.ms`, given to the coordinator.
    pub transaction_timeout: Duration,
    /// `batch.size`: the largest batch per partition per request, in bytes of record data.
    pub batch_bytes: usize,
    /// `compression.type`.
    pub compression: Compression,
    /// `retry.backoff.ms`.
    pub retry_backoff: Duration,
}

/// `compression.type` (or librdkafka's `compression.codec`) as a batch compression.
pub fn compression_of(name: &str) -> Option<Compression> {
    match name.trim().to_ascii_lowercase().as_str() {
        "none" => Some(Compression::None),
        "gzip" => Some(Compression::Gzip),
        "snappy" => Some(Compression::Snappy),
        "lz4" => Some(Compression::Lz4),
        "zstd" => Some(Compression::Zstd),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_names() {
        assert_eq!(compression_of("zstd"), Some(Compression::Zstd));
        assert_eq!(compression_of("None"), Some(Compression::None));
        assert_eq!(compression_of("brotli"), None);
    }
}
