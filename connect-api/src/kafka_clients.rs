//! Kafka client settings written as Java client properties, turned into librdkafka's by the
//! runtime, for connectors that open their own Kafka clients (MirrorMaker 2 reads a source
//! cluster and administers a target one).
//!
//! The translation (key renames, security: JAAS, key stores, ...) lives in the worker, which
//! this crate cannot depend on; the worker installs it once at start-up with [`install`], as the
//! schema registry converters are installed. Without an installed translator (unit tests of a
//! connector), keys are passed to librdkafka unchanged.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Which Java client a set of keys configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    Producer,
    Consumer,
    Admin,
}

/// One key that cannot be used, named as the user wrote it (with its prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientKeyError {
    pub key: String,
    pub reason: String,
}

/// Java client keys to librdkafka keys.
pub trait ClientTranslator: Send + Sync {
    /// `pairs` are keys without `prefix`; `prefix` only names keys in errors. Files named by
    /// security keys (key stores, trust stores) are read here.
    fn librdkafka(
        &self,
        kind: ClientKind,
        prefix: &str,
        pairs: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, Vec<ClientKeyError>>;
}

static TRANSLATOR: OnceLock<Box<dyn ClientTranslator>> = OnceLock::new();

/// Installs the runtime's translator for the life of the process; the first call wins.
pub fn install(translator: Box<dyn ClientTranslator>) {
    let _ = TRANSLATOR.set(translator);
}

/// `pairs` (Java keys without `prefix`) as librdkafka keys.
pub fn librdkafka(
    kind: ClientKind,
    prefix: &str,
    pairs: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, Vec<ClientKeyError>> {
    match TRANSLATOR.get() {
        Some(t) => t.librdkafka(kind, prefix, pairs),
        None => Ok(pairs.clone()),
    }
}
