//! The built-in connector plugins, one folder each.
//!
//! - [`verifiable`]: numbered records for exactly-once tests and benchmarks
//!   (compatible with Kafka's `VerifiableSourceConnector`).
//! - [`file`]: `FileStreamSource` / `FileStreamSink`, offset-compatible with Kafka's.
//! - [`jdbc`]: Postgres table source, upsert sink, offsets-with-data sink.
//! - [`cdc`]: Postgres change data capture (logical replication, Debezium's record format).
//! - [`mirror`]: MirrorMaker 2 (`MirrorSourceConnector`), Apache's keys, topics and formats.
//! - [`objectstore`]: files per topic-partition with deterministic names (local, S3), also as
//!   Confluent's S3 sink (`io.confluent.connect.s3.S3SinkConnector`: JSON, ByteArray, Avro,
//!   Parquet; its partitioners and object names).
//! - [`testing`]: in-memory offset reader, recording transaction context and friends, to drive
//!   connectors through the traits without Kafka.
//!
//! [`builtin_plugins`] lists them all.

pub mod cdc;
pub mod file;
pub mod jdbc;
pub mod mirror;
pub mod objectstore;
pub mod testing;
pub mod verifiable;

use connect_api::plugin::{PluginDesc, PluginRegistry};

/// Version reported by every built-in plugin.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Every built-in connector. A connector that is a twin of an Apache one is registered under
/// Apache's class name (so `GET /connector-plugins` lists what tools look for, and task configs
/// name Apache's task class, as an Apache worker writes them), with its Rust path as an alias.
pub fn builtin_plugins() -> PluginRegistry {
    let mut registry = PluginRegistry::new();
    registry
        .register_source::<verifiable::VerifiableSourceConnector>(PluginDesc {
            class: verifiable::JAVA_CONNECTOR_CLASS,
            aliases: &[verifiable::CONNECTOR_CLASS],
            version: VERSION,
            task_class: verifiable::JAVA_TASK_CLASS,
            task_aliases: &[verifiable::TASK_CLASS],
        })
        .register_source::<file::FileStreamSourceConnector>(PluginDesc {
            class: file::JAVA_SOURCE_CONNECTOR_CLASS,
            aliases: &[file::SOURCE_CONNECTOR_CLASS],
            version: VERSION,
            task_class: file::JAVA_SOURCE_TASK_CLASS,
            task_aliases: &[file::SOURCE_TASK_CLASS],
        })
        .register_sink::<file::FileStreamSinkConnector>(PluginDesc {
            class: file::JAVA_SINK_CONNECTOR_CLASS,
            aliases: &[file::SINK_CONNECTOR_CLASS],
            version: VERSION,
            task_class: file::JAVA_SINK_TASK_CLASS,
            task_aliases: &[file::SINK_TASK_CLASS],
        })
        .register_source::<jdbc::PostgresSourceConnector>(PluginDesc {
            class: jdbc::SOURCE_CONNECTOR_CLASS,
            aliases: &[],
            version: VERSION,
            task_class: jdbc::SOURCE_TASK_CLASS,
            task_aliases: &[],
        })
        .register_source::<cdc::PostgresCdcSourceConnector>(PluginDesc {
            class: cdc::CONNECTOR_CLASS,
            aliases: &[],
            version: VERSION,
            task_class: cdc::TASK_CLASS,
            task_aliases: &[],
        })
        .register_sink::<jdbc::PostgresSinkConnector>(PluginDesc {
            class: jdbc::SINK_CONNECTOR_CLASS,
            aliases: &[],
            version: VERSION,
            task_class: jdbc::SINK_TASK_CLASS,
            task_aliases: &[],
        })
        .register_sink::<jdbc::PostgresOffsetsSinkConnector>(PluginDesc {
            class: jdbc::OFFSETS_SINK_CONNECTOR_CLASS,
            aliases: &[],
            version: VERSION,
            task_class: jdbc::OFFSETS_SINK_TASK_CLASS,
            task_aliases: &[],
        })
        .register_source::<mirror::MirrorSourceConnector>(PluginDesc {
            class: mirror::SOURCE_CONNECTOR_CLASS,
            aliases: &[],
            version: VERSION,
            task_class: mirror::SOURCE_TASK_CLASS,
            task_aliases: &[],
        })
        .register_source::<mirror::MirrorCheckpointConnector>(PluginDesc {
            class: mirror::CHECKPOINT_CONNECTOR_CLASS,
            aliases: &[],
            version: VERSION,
            task_class: mirror::CHECKPOINT_TASK_CLASS,
            task_aliases: &[],
        })
        .register_source::<mirror::MirrorHeartbeatConnector>(PluginDesc {
            class: mirror::HEARTBEAT_CONNECTOR_CLASS,
            aliases: &[],
            version: VERSION,
            task_class: mirror::HEARTBEAT_TASK_CLASS,
            task_aliases: &[],
        })
        .register_sink::<objectstore::ObjectStoreSinkConnector>(PluginDesc {
            class: objectstore::SINK_CONNECTOR_CLASS,
            aliases: &[],
            version: VERSION,
            task_class: objectstore::SINK_TASK_CLASS,
            task_aliases: &[],
        })
        .register_sink::<objectstore::S3SinkConnector>(PluginDesc {
            class: objectstore::S3_SINK_CONNECTOR_CLASS,
            // Connect's aliases: the simple class name, and without `Connector`.
            aliases: &["S3SinkConnector", "S3Sink"],
            version: VERSION,
            task_class: objectstore::S3_SINK_TASK_CLASS,
            task_aliases: &[],
        });
    registry
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::plugin::{ConnectorInstance, PluginType, TaskInstance};

    #[test]
    fn registry_resolves_java_names_and_aliases() {
        let r = builtin_plugins();
        let plugins = r.connector_plugins();
        assert_eq!(plugins.len(), 12);
        let json = serde_json::to_value(&plugins[0]).unwrap();
        assert!(
            json.get("class").is_some()
                && json.get("type").is_some()
                && json.get("version").is_some()
        );
        for name in [
            "org.apache.kafka.connect.tools.VerifiableSourceConnector",
            "VerifiableSourceConnector",
            "VerifiableSource",
            verifiable::CONNECTOR_CLASS,
        ] {
            assert!(
                matches!(r.create_connector(name), Ok(ConnectorInstance::Source(_))),
                "{name}"
            );
        }
        assert!(matches!(
            r.create_connector("FileStreamSink"),
            Ok(ConnectorInstance::Sink(_))
        ));
        for name in [
            "io.confluent.connect.s3.S3SinkConnector",
            "S3SinkConnector",
            "S3Sink",
        ] {
            assert!(
                matches!(r.create_connector(name), Ok(ConnectorInstance::Sink(_))),
                "{name}"
            );
        }
        assert!(matches!(
            r.create_connector("FileStreamSource"),
            Ok(ConnectorInstance::Source(_))
        ));
        assert_eq!(r.describe("FileStreamSink").unwrap().1, PluginType::Sink);
        assert!(r.create_connector("Nope").is_err());
        assert!(matches!(
            r.create_task("org.apache.kafka.connect.file.FileStreamSourceTask"),
            Ok(TaskInstance::Source(_))
        ));
        assert!(matches!(
            r.create_task(file::SINK_TASK_CLASS),
            Ok(TaskInstance::Sink(_))
        ));
    }

    /// Tools look plugins up by Apache's class name: the twins are listed under it, and their
    /// Rust paths still resolve (connector and task).
    #[test]
    fn twins_are_listed_under_apache_class_names() {
        let r = builtin_plugins();
        let listed: Vec<String> = r.connector_plugins().into_iter().map(|p| p.class).collect();
        for (java, rust, java_task, rust_task) in [
            (
                verifiable::JAVA_CONNECTOR_CLASS,
                verifiable::CONNECTOR_CLASS,
                verifiable::JAVA_TASK_CLASS,
                verifiable::TASK_CLASS,
            ),
            (
                file::JAVA_SOURCE_CONNECTOR_CLASS,
                file::SOURCE_CONNECTOR_CLASS,
                file::JAVA_SOURCE_TASK_CLASS,
                file::SOURCE_TASK_CLASS,
            ),
            (
                file::JAVA_SINK_CONNECTOR_CLASS,
                file::SINK_CONNECTOR_CLASS,
                file::JAVA_SINK_TASK_CLASS,
                file::SINK_TASK_CLASS,
            ),
        ] {
            assert!(listed.iter().any(|c| c == java), "{java} not in {listed:?}");
            assert!(
                !listed.iter().any(|c| c == rust),
                "{rust} listed: {listed:?}"
            );
            let (desc, _) = r.describe(rust).unwrap();
            assert_eq!((desc.class, desc.task_class), (java, java_task));
            assert!(r.create_connector(rust).is_ok() && r.create_task(rust_task).is_ok());
        }
        // Plugins without an Apache twin keep their Rust path.
        assert!(listed.iter().any(|c| c == jdbc::SINK_CONNECTOR_CLASS));
    }
}
