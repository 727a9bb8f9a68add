//! Kafka error codes the producer tells apart.

pub const NONE: i16 = 0;
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
pub const LEADER_NOT_AVAILABLE: i16 = 5;
pub const NOT_LEADER_OR_FOLLOWER: i16 = 6;
pub const REQUEST_TIMED_OUT: i16 = 7;
pub const NETWORK_EXCEPTION: i16 = 13;
pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
pub const COORDINATOR_NOT_AVAILABLE: i16 = 15;
pub const NOT_COORDINATOR: i16 = 16;
pub const NOT_ENOUGH_REPLICAS: i16 = 19;
pub const NOT_ENOUGH_REPLICAS_AFTER_APPEND: i16 = 20;
pub const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
pub const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
pub const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = 45;
pub const DUPLICATE_SEQUENCE_NUMBER: i16 = 46;
pub const INVALID_PRODUCER_EPOCH: i16 = 47;
pub const INVALID_TXN_STATE: i16 = 48;
pub const CONCURRENT_TRANSACTIONS: i16 = 51;
pub const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;
pub const KAFKA_STORAGE_ERROR: i16 = 56;
pub const UNKNOWN_PRODUCER_ID: i16 = 59;
pub const FENCED_LEADER_EPOCH: i16 = 74;
pub const UNKNOWN_LEADER_EPOCH: i16 = 75;
pub const PRODUCER_FENCED: i16 = 90;
pub const THROTTLING_QUOTA_EXCEEDED: i16 = 89;

/// Worth retrying (the same request, after a metadata or coordinator refresh).
pub fn is_retriable(code: i16) -> bool {
    matches!(
        code,
        UNKNOWN_TOPIC_OR_PARTITION
            | LEADER_NOT_AVAILABLE
            | NOT_LEADER_OR_FOLLOWER
            | REQUEST_TIMED_OUT
            | NETWORK_EXCEPTION
            | COORDINATOR_LOAD_IN_PROGRESS
            | COORDINATOR_NOT_AVAILABLE
            | NOT_COORDINATOR
            | NOT_ENOUGH_REPLICAS
            | NOT_ENOUGH_REPLICAS_AFTER_APPEND
            | CONCURRENT_TRANSACTIONS
            | KAFKA_STORAGE_ERROR
            | FENCED_LEADER_EPOCH
            | UNKNOWN_LEADER_EPOCH
            | THROTTLING_QUOTA_EXCEEDED
    )
}

/// The producer can never be used again.
pub fn is_fatal(code: i16) -> bool {
    matches!(
        code,
        PRODUCER_FENCED
            | INVALID_PRODUCER_EPOCH
            | TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            | CLUSTER_AUTHORIZATION_FAILED
            | INVALID_TXN_STATE
            | UNKNOWN_PRODUCER_ID
    )
}

/// What an error says, with Java's explanation of a fencing ("There is a newer producer
/// with the same transactionalId which fences the current one").
pub fn explain(code: i16) -> String {
    match code {
        PRODUCER_FENCED | INVALID_PRODUCER_EPOCH => format!(
            "{}: the producer was fenced (there is a newer producer with the same transactional.id)",
            name(code)
        ),
        c => name(c),
    }
}

/// Java's name of an error code, for messages.
pub fn name(code: i16) -> String {
    match code {
        2 => "CORRUPT_MESSAGE".into(),
        3 => "UNKNOWN_TOPIC_OR_PARTITION".into(),
        5 => "LEADER_NOT_AVAILABLE".into(),
        6 => "NOT_LEADER_OR_FOLLOWER".into(),
        7 => "REQUEST_TIMED_OUT".into(),
        10 => "MESSAGE_TOO_LARGE".into(),
        13 => "NETWORK_EXCEPTION".into(),
        14 => "COORDINATOR_LOAD_IN_PROGRESS".into(),
        15 => "COORDINATOR_NOT_AVAILABLE".into(),
        16 => "NOT_COORDINATOR".into(),
        18 => "RECORD_LIST_TOO_LARGE".into(),
        19 => "NOT_ENOUGH_REPLICAS".into(),
        20 => "NOT_ENOUGH_REPLICAS_AFTER_APPEND".into(),
        29 => "TOPIC_AUTHORIZATION_FAILED".into(),
        31 => "CLUSTER_AUTHORIZATION_FAILED".into(),
        45 => "OUT_OF_ORDER_SEQUENCE_NUMBER".into(),
        46 => "DUPLICATE_SEQUENCE_NUMBER".into(),
        47 => "INVALID_PRODUCER_EPOCH".into(),
        48 => "INVALID_TXN_STATE".into(),
        51 => "CONCURRENT_TRANSACTIONS".into(),
        53 => "TRANSACTIONAL_ID_AUTHORIZATION_FAILED".into(),
        56 => "KAFKA_STORAGE_ERROR".into(),
        59 => "UNKNOWN_PRODUCER_ID".into(),
        87 => "INVALID_RECORD".into(),
        90 => "PRODUCER_FENCED".into(),
        c => format!("error code {c}"),
    }
}
