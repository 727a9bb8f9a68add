//! What a sink task does with an error its consumer's `poll` returns.
//!
//! Java's consumer throws from `poll` for what it cannot get past — a record batch it cannot
//! decode (an unknown or corrupt codec, a corrupt record), a failed authentication, a topic or
//! group it may not read, no offset under `auto.offset.reset=none` — and Connect fails the task
//! with that exception. `errors.tolerance` does not apply: it covers conversion and
//! transformation of records the consumer did return. librdkafka instead hands such errors to
//! `poll` as events and keeps going, so a runner that only logged them would report RUNNING
//! while consuming nothing from the partition. Everything else (a broker restarting, a topic
//! not created yet, a rebalance) is transient: librdkafka retries by itself.

use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;

/// What to do with one consumer error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsumerErrorAction {
    /// librdkafka recovers by itself: log it and poll on.
    Retry,
    /// `auto.offset.reset=none` and a partition without a usable offset.
    UndefinedOffset,
    /// Nothing later can get past it: the task fails with the error.
    Fail,
}

/// Classifies an error returned by the consumer's `poll`.
pub fn classify(e: &KafkaError) -> ConsumerErrorAction {
    let code = match e {
        KafkaError::MessageConsumption(code) => *code,
        KafkaError::MessageConsumptionFatal(RDKafkaErrorCode::AutoOffsetReset) => {
            return ConsumerErrorAction::UndefinedOffset;
        }
        KafkaError::MessageConsumptionFatal(_) => return ConsumerErrorAction::Fail,
        _ => return ConsumerErrorAction::Retry,
    };
    match code {
        RDKafkaErrorCode::AutoOffsetReset => ConsumerErrorAction::UndefinedOffset,
        // A batch this build cannot decompress (`NotImplemented`: codec not built in), one that
        // does not decompress or decode, a record the broker calls corrupt or invalid.
        RDKafkaErrorCode::NotImplemented
        | RDKafkaErrorCode::BadCompression
        | RDKafkaErrorCode::BadMessage
        | RDKafkaErrorCode::InvalidMessage
        | RDKafkaErrorCode::InvalidRecord
        | RDKafkaErrorCode::UnsupportedCompressionType
        // Credentials and permissions do not fix themselves.
        | RDKafkaErrorCode::Authentication
        | RDKafkaErrorCode::SaslAuthenticationFailed
        | RDKafkaErrorCode::TopicAuthorizationFailed
        | RDKafkaErrorCode::GroupAuthorizationFailed
        | RDKafkaErrorCode::ClusterAuthorizationFailed
        | RDKafkaErrorCode::Fatal => ConsumerErrorAction::Fail,
        _ => ConsumerErrorAction::Retry,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consumption(code: RDKafkaErrorCode) -> ConsumerErrorAction {
        classify(&KafkaError::MessageConsumption(code))
    }

    #[test]
    fn undecodable_batches_and_refused_access_fail_the_task() {
        for code in [
            RDKafkaErrorCode::NotImplemented,
            RDKafkaErrorCode::BadCompression,
            RDKafkaErrorCode::BadMessage,
            RDKafkaErrorCode::InvalidMessage,
            RDKafkaErrorCode::UnsupportedCompressionType,
            RDKafkaErrorCode::Authentication,
            RDKafkaErrorCode::TopicAuthorizationFailed,
            RDKafkaErrorCode::GroupAuthorizationFailed,
        ] {
            assert_eq!(consumption(code), ConsumerErrorAction::Fail, "{code:?}");
        }
        assert_eq!(
            classify(&KafkaError::MessageConsumptionFatal(
                RDKafkaErrorCode::Fatal
            )),
            ConsumerErrorAction::Fail
        );
    }

    #[test]
    fn transient_errors_are_retried_and_reset_none_is_its_own_case() {
        for code in [
            RDKafkaErrorCode::BrokerTransportFailure,
            RDKafkaErrorCode::AllBrokersDown,
            RDKafkaErrorCode::UnknownTopicOrPartition,
            RDKafkaErrorCode::UnknownTopic,
            RDKafkaErrorCode::PartitionEOF,
            RDKafkaErrorCode::NotCoordinator,
            RDKafkaErrorCode::OperationTimedOut,
        ] {
            assert_eq!(consumption(code), ConsumerErrorAction::Retry, "{code:?}");
        }
        assert_eq!(
            consumption(RDKafkaErrorCode::AutoOffsetReset),
            ConsumerErrorAction::UndefinedOffset
        );
        assert_eq!(
            classify(&KafkaError::MessageConsumptionFatal(
                RDKafkaErrorCode::AutoOffsetReset
            )),
            ConsumerErrorAction::UndefinedOffset
        );
    }
}
