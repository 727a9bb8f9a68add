//! Group membership over the Kafka protocol.

pub mod assignor;
pub mod protocol;
