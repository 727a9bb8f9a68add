//! What every log backend reads and writes: a Kafka topic ([`super::log`]) or the standalone
//! worker's in-process log ([`super::local_log`]).

/// One record consumed from a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumedRecord {
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    /// `None` is a tombstone.
    pub value: Option<Vec<u8>>,
}

/// A record to write: key bytes and value bytes (`None` = tombstone).
pub type RawRecord = (Vec<u8>, Option<Vec<u8>>);

/// Called on the consumer thread for every record, in offset order per partition.
pub type RecordCallback = Box<dyn FnMut(&ConsumedRecord) + Send + 'static>;
