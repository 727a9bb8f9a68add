//! Kafka-backed internal topics (placeholder; being written).
