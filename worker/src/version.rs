//! Versions reported by `GET /`.

/// The Apache Kafka Connect REST API level this worker implements. Tools gate features on
/// `GET /`'s `version`, so it reports the Connect version whose API we match rather than
/// our own crate version (which is in [`COMMIT`]).
pub const CONNECT_API_VERSION: &str = "4.0.0";

/// `connect-rs-<crate version>-<git commit>`.
pub const COMMIT: &str = concat!(
    "connect-rs-",
    env!("CARGO_PKG_VERSION"),
    "-",
    env!("CONNECT_GIT_COMMIT")
);
