//! Group membership over the Kafka protocol (placeholder; being written).
