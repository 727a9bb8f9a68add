//! Plugins that are not compiled into the binary.
//!
//! - [`java`]: the connectors of `plugin.path`, run unchanged in a JVM the worker supervises.

pub mod java;
