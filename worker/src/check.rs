//! `connect-worker check <worker.properties>`: what an operator runs before moving an Apache
//! Kafka Connect 4.x cluster onto this worker (docs/migrating-from-apache-connect.md).
//!
//! ```text
//!  worker.properties ─┬─ every key: config::key_use ──────────────> IGNORED / UNKNOWN   (warnings)
//!                     └─ WorkerConfig::from_file, REST TLS, REST
//!                        client, the worker's converters ─────────> REFUSED / UNSUPPORTED (failures)
//!  Kafka (unless --no-kafka):
//!    cluster id ─> config topic read to its end by the worker's   ─> per connector:
//!                  own reader (storage::config::read_config_topic)     OK / CANNOT RUN (failure)
//!                                                                  (+ WARNING: stored task
//!                                                                  configs of another task class)
//!               ─> offsets and status topics exist? ──────────────> MISSING (failure)
//! ```
//!
//! Nothing is written to Kafka and no topic is created.
//!
//! A connector can run when every name its tasks are built from resolves here, checked with the
//! functions the runtime builds a task with (`runtime::worker`'s `build_task`): `connector.class`
//! in the plugin registry (Apache's aliases included), the connector's framework keys (typed as a
//! source or sink connector config), its converters ([`RecordConverters::for_connector`], the
//! worker's where it sets none), its transforms and predicates ([`TransformChain::from_config`])
//! and its Kafka clients (`<client>.override.*` over the worker's settings); and when the connector's own validation accepts its config
//! (as `config/validate` would, e.g. a FileStream file outside `file.connector.allowed.dirs`).
//! Config-provider placeholders are resolved with the worker's providers first.
//!
//! # Exit status
//!
//! [`Report::exit_code`]: 0 when nothing would be refused or could not run (ignored and unknown
//! keys are warnings, listed but not failing), 1 otherwise. Usage errors exit 2 (clap).

use std::fmt;
use std::path::Path;
use std::time::Duration;

use connect_api::config::connector::{CONNECTOR_CLASS_CONFIG, NAME_CONFIG, TASK_CLASS_CONFIG};
use connect_api::config::{ConnectorConfig, SinkConnectorConfig, SourceConnectorConfig};
use connect_api::plugin::PluginRegistry;
use connect_api::{ConfigMap, ConnectError, ConnectorInstance};
use connect_transforms::chain::TransformChain;

use crate::app::StartError;
use crate::config::clients::ClientKind;
use crate::config::{self, ClientScope, KeyUse, WorkerConfig};
use crate::runtime::convert::RecordConverters;
use crate::storage::StorageError;

/// How long reading the config topic to its end may take (under `read_committed` an open
/// transaction holds it until the broker aborts it).
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// One of Connect's keys, accepted without effect (a warning).
    Ignored { key: String, reason: &'static str },
    /// Not a Connect worker key (a warning).
    Unknown { key: String },
    /// Start-up would refuse the worker config with this message.
    Refused(String),
    /// The worker's own converters: tasks of connectors that set none cannot be built.
    UnsupportedConverters(String),
    /// Kafka or the config topic could not be read.
    Unreachable(String),
    /// An internal topic the properties name does not exist.
    MissingTopic { key: &'static str, topic: String },
    /// A connector of the config topic this worker can run.
    Runs { connector: String, class: String },
    /// A connector of the config topic this worker cannot run, and why.
    CannotRun { connector: String, reason: String },
    /// A connector this worker runs whose stored task configs name a task class it does not
    /// know (written by a worker whose plugin of that name has another task class): its tasks
    /// fail to start until the connector writes its own task configs (a warning).
    ForeignTaskClass {
        connector: String,
        task_class: String,
    },
}

impl Finding {
    /// Whether this line makes the check fail.
    pub fn is_failure(&self) -> bool {
        !matches!(
            self,
            Finding::Ignored { .. }
                | Finding::Unknown { .. }
                | Finding::Runs { .. }
                | Finding::ForeignTaskClass { .. }
        )
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Ignored { key, reason } => write!(f, "IGNORED {key}: {reason}"),
            Finding::Unknown { key } => {
                write!(f, "UNKNOWN {key}: not a Connect worker key; ignored")
            }
            Finding::Refused(message) => write!(f, "REFUSED {message}"),
            Finding::UnsupportedConverters(message) => write!(
                f,
                "UNSUPPORTED worker converters: {message} (tasks of connectors that do not set their own converters cannot run)"
            ),
            Finding::Unreachable(message) => write!(f, "UNREACHABLE {message}"),
            Finding::MissingTopic { key, topic } => write!(
                f,
                "MISSING {key}: topic '{topic}' does not exist on this Kafka cluster; a worker would create it empty (is it the Apache cluster's topic?)"
            ),
            Finding::Runs { connector, class } => write!(f, "OK {connector} ({class})"),
            Finding::CannotRun { connector, reason } => {
                write!(f, "CANNOT RUN {connector}: {reason}")
            }
            Finding::ForeignTaskClass {
                connector,
                task_class,
            } => write!(
                f,
                "WARNING {connector}: its task configs name task class {task_class}, unknown to this worker; its tasks fail to start until the connector, started here, writes its own task configs (at once when it runs, on resume when it is paused)"
            ),
        }
    }
}

/// Every finding, in the order found, and whether the cluster was looked at.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    /// False with `--no-kafka` or when the properties were refused.
    pub cluster_checked: bool,
}

impl Report {
    pub fn is_pass(&self) -> bool {
        !self.findings.iter().any(Finding::is_failure)
    }

    /// 0 when nothing fails, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.is_pass() { 0 } else { 1 }
    }

    /// The last line: the verdict and the counts.
    pub fn summary(&self) -> String {
        let count = |p: fn(&Finding) -> bool| self.findings.iter().filter(|f| p(f)).count();
        let ok = count(|f| matches!(f, Finding::Runs { .. }));
        let cannot = count(|f| matches!(f, Finding::CannotRun { .. }));
        let ignored = count(|f| matches!(f, Finding::Ignored { .. }));
        let unknown = count(|f| matches!(f, Finding::Unknown { .. }));
        let warnings = count(|f| matches!(f, Finding::ForeignTaskClass { .. }));
        let other = count(Finding::is_failure) - cannot;
        let connectors = if self.cluster_checked {
            format!("{ok} connector(s) OK, {cannot} cannot run")
        } else {
            "connectors not checked".to_owned()
        };
        format!(
            "{}: {connectors}; {other} other problem(s); {warnings} warning(s); {ignored} ignored key(s), {unknown} unknown key(s)",
            if self.is_pass() { "PASS" } else { "FAIL" }
        )
    }

    /// The whole report: one line per finding, then the summary.
    pub fn render(&self) -> String {
        let mut out: String = self.findings.iter().map(|f| format!("{f}\n")).collect();
        out.push_str(&self.summary());
        out.push('\n');
        out
    }
}

/// The whole check; `kafka: false` (`--no-kafka`) stops after the properties file.
pub async fn run(path: &Path, kafka: bool) -> Report {
    let (mut findings, config) = check_properties(path);
    let mut report = Report::default();
    if let (Some(config), true) = (config, kafka) {
        let mut registry = connect_connectors::builtin_plugins();
        // With plugin.path, the Java connectors found there count as start-up would find them
        // (a JVM runs for the check's duration).
        match crate::plugins::java::install(&config.raw, &mut registry).await {
            Ok(_) => {
                findings.extend(check_cluster(&config, &registry).await);
                report.cluster_checked = true;
            }
            Err(e) => findings.push(Finding::Refused(e.to_string())),
        }
    }
    report.findings = findings;
    report
}

/// The properties file alone: its unused keys, then start-up's verdict on it. The config is
/// returned when start-up would accept it.
pub fn check_properties(path: &Path) -> (Vec<Finding>, Option<WorkerConfig>) {
    let mut findings = Vec::new();
    // The keys as written (the verdict below reads the file again, as start-up does).
    if let Ok(text) = std::fs::read_to_string(path) {
        findings.extend(unused_keys(config::properties::parse(&text).keys()));
    }
    match accept(path) {
        Ok(config) => {
            if let Some(f) = check_worker_converters(&config) {
                findings.push(f);
            }
            (findings, Some(config))
        }
        Err(message) => {
            findings.push(Finding::Refused(message));
            (findings, None)
        }
    }
}

/// The ignored and unknown keys among `keys`, as start-up logs them ([`config::key_use`]).
pub fn unused_keys<'a>(keys: impl IntoIterator<Item = &'a String>) -> Vec<Finding> {
    keys.into_iter()
        .filter_map(|key| match config::key_use(key) {
            KeyUse::Applied => None,
            KeyUse::Ignored(reason) => Some(Finding::Ignored {
                key: key.clone(),
                reason,
            }),
            KeyUse::Unknown => Some(Finding::Unknown { key: key.clone() }),
        })
        .collect()
}

/// What start-up checks before it reaches Kafka, with start-up's messages: the worker config,
/// the REST listeners' TLS settings, the REST client between workers.
fn accept(path: &Path) -> Result<WorkerConfig, String> {
    let config = WorkerConfig::from_file(path).map_err(|e| e.to_string())?;
    crate::rest::tls_configs(&config).map_err(|e| StartError::from(e).to_string())?;
    crate::peer::configure(&config).map_err(|e| StartError::from(e).to_string())?;
    Ok(config)
}

/// The worker's `key.converter`, `value.converter` and `header.converter`, built as a task of a
/// connector that sets none of its own would build them.
fn check_worker_converters(config: &WorkerConfig) -> Option<Finding> {
    let bare = ConfigMap::from([
        (NAME_CONFIG.to_owned(), "connect-worker-check".to_owned()),
        (CONNECTOR_CLASS_CONFIG.to_owned(), "none".to_owned()),
    ]);
    let connector = ConnectorConfig::parse(&bare).ok()?;
    RecordConverters::for_connector(config, &connector)
        .err()
        .map(|e| Finding::UnsupportedConverters(e.to_string()))
}

/// Whether this worker can run the connector `name` with `props` (as stored in the config
/// topic); see the module docs for what is resolved.
pub fn check_connector(
    worker: &WorkerConfig,
    registry: &PluginRegistry,
    name: &str,
    props: &ConfigMap,
) -> Finding {
    let cannot = |reason: String| Finding::CannotRun {
        connector: name.to_owned(),
        reason,
    };
    let Some(class) = props
        .get(CONNECTOR_CLASS_CONFIG)
        .map(|c| c.trim())
        .filter(|c| !c.is_empty())
    else {
        return cannot(format!("its config has no {CONNECTOR_CLASS_CONFIG}"));
    };
    let Ok(instance) = registry.create_connector(class) else {
        return cannot(format!(
            "connector class {class} is not available on this worker"
        ));
    };
    match buildable(worker, &instance, props) {
        Ok(()) => Finding::Runs {
            connector: name.to_owned(),
            class: class.to_owned(),
        },
        Err(e) => cannot(e.to_string()),
    }
}

/// The parts of a task the runtime builds from the connector config, built here and dropped,
/// after the connector's own validation (what `config/validate` reports on its keys, with the
/// worker's `file.connector.allowed.dirs`).
fn buildable(
    worker: &WorkerConfig,
    instance: &ConnectorInstance,
    props: &ConfigMap,
) -> Result<(), ConnectError> {
    let props = worker
        .config_providers
        .transform(props)
        .map_err(|e| ConnectError::config(e.to_string()))?;
    let own = match instance {
        ConnectorInstance::Source(c) => c.validate_with_files(&props, &worker.file_access),
        ConnectorInstance::Sink(c) => c.validate_with_files(&props, &worker.file_access),
    };
    if let Some(v) = own.iter().find(|v| !v.errors.is_empty()) {
        return Err(ConnectError::config(format!(
            "{}: {}",
            v.name,
            v.errors.join("; ")
        )));
    }
    let common = match instance {
        ConnectorInstance::Source(_) => SourceConnectorConfig::parse(&props)?.common,
        ConnectorInstance::Sink(_) => SinkConnectorConfig::parse(&props)?.common,
    };
    RecordConverters::for_connector(worker, &common)?;
    TransformChain::from_config(&props)?;
    // Its clients: the worker's `<client>.*` under the connector's `<client>.override.*`.
    for kind in [
        ClientKind::Producer,
        ClientKind::Consumer,
        ClientKind::Admin,
    ] {
        let overrides =
            crate::runtime::client_overrides(kind, &props, &worker.client_override_policy)?;
        worker
            .kafka_client_with(
                ClientScope::Worker(kind),
                rdkafka::ClientConfig::new(),
                Some(&overrides),
            )
            .map_err(|e| ConnectError::config(e.to_string()))?;
    }
    Ok(())
}

/// The first `task.class` among a runnable connector's stored task configs that this worker
/// cannot build a task from (the runtime builds a task from its config's `task.class`).
pub fn foreign_task_class<'a>(
    registry: &PluginRegistry,
    connector: &str,
    task_configs: impl IntoIterator<Item = &'a ConfigMap>,
) -> Option<Finding> {
    task_configs
        .into_iter()
        .filter_map(|c| c.get(TASK_CLASS_CONFIG))
        .find(|class| registry.create_task(class).is_err())
        .map(|class| Finding::ForeignTaskClass {
            connector: connector.to_owned(),
            task_class: class.clone(),
        })
}

/// Kafka: reachable, the config topic's connectors, the other internal topics present.
pub async fn check_cluster(worker: &WorkerConfig, registry: &PluginRegistry) -> Vec<Finding> {
    if let Err(source) = crate::startup::fetch_cluster_id(worker).await {
        let e = StartError::Kafka {
            bootstrap_servers: worker.bootstrap_servers.clone(),
            source,
        };
        return vec![Finding::Unreachable(e.to_string())];
    }
    let settings = match crate::app::config_store_settings(worker) {
        Ok(s) => s,
        Err(e) => return vec![Finding::Refused(e.to_string())],
    };
    let topic = &worker.config_storage_topic;
    let read = tokio::time::timeout(
        READ_TIMEOUT,
        crate::storage::config::read_config_topic(&settings),
    )
    .await;
    let state = match read {
        Ok(Ok(state)) => state,
        Ok(Err(StorageError::TopicMissing(topic))) => {
            return vec![Finding::MissingTopic {
                key: config::CONFIG_STORAGE_TOPIC,
                topic,
            }];
        }
        Ok(Err(e)) => {
            return vec![Finding::Unreachable(format!(
                "failed to read the config topic '{topic}': {e}"
            ))];
        }
        Err(_) => {
            return vec![Finding::Unreachable(format!(
                "timed out after {READ_TIMEOUT:?} reading the config topic '{topic}' to its end"
            ))];
        }
    };
    let mut findings = Vec::new();
    for name in state.connectors() {
        let Some(props) = state.connector_config(&name) else {
            continue;
        };
        let verdict = check_connector(worker, registry, &name, props);
        let runs = !verdict.is_failure();
        findings.push(verdict);
        if runs {
            let tasks = state.tasks(&name);
            let configs = tasks.iter().filter_map(|id| state.task_config(id));
            findings.extend(foreign_task_class(registry, &name, configs));
        }
    }
    // A wrong name here would start every source connector from scratch (offsets) or lose the
    // statuses; the worker would create the topic silently.
    for (key, topic) in [
        (config::OFFSET_STORAGE_TOPIC, &worker.offset_storage_topic),
        (config::STATUS_STORAGE_TOPIC, &worker.status_storage_topic),
    ] {
        match crate::storage::topics::partition_count(&settings.client, topic).await {
            Ok(_) => {}
            Err(StorageError::TopicMissing(topic)) => {
                findings.push(Finding::MissingTopic { key, topic });
            }
            Err(e) => findings.push(Finding::Unreachable(format!(
                "failed to describe the topic '{topic}' ({key}): {e}"
            ))),
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(extra: &str) -> WorkerConfig {
        WorkerConfig::from_props(config::properties::parse(&format!(
            "bootstrap.servers=localhost:9092\ngroup.id=g\n\
             key.converter=org.apache.kafka.connect.json.JsonConverter\n\
             value.converter=org.apache.kafka.connect.json.JsonConverter\n\
             config.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n{extra}"
        )))
        .unwrap()
    }

    fn connector(pairs: &[(&str, &str)]) -> ConfigMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn check(props: &[(&str, &str)]) -> Finding {
        check_connector(
            &worker(""),
            &connect_connectors::builtin_plugins(),
            "c1",
            &connector(props),
        )
    }

    #[test]
    fn unused_keys_are_listed_with_what_happens_to_them() {
        let raw = config::properties::parse(
            "group.id=g\nmetric.reporters=x.Y\nfoo.bar=1\nproducer.linger.ms=5\n",
        );
        let found = unused_keys(raw.keys());
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[0].to_string(),
            "UNKNOWN foo.bar: not a Connect worker key; ignored"
        );
        assert!(
            found[1]
                .to_string()
                .starts_with("IGNORED metric.reporters: Java metrics reporters do not exist"),
            "{}",
            found[1]
        );
        assert!(found.iter().all(|f| !f.is_failure()));
    }

    /// Stored configs (written by Apache) a task here would refuse: a converter version range
    /// the built-in converters do not meet (KIP-891), an override the policy forbids.
    #[test]
    fn stored_version_ranges_and_forbidden_overrides_cannot_run() {
        let f = check(&[
            ("name", "c1"),
            ("connector.class", "VerifiableSource"),
            ("topic", "t"),
            ("value.converter.plugin.version", "[1.0,2.0)"),
        ]);
        assert!(
            f.is_failure()
                && f.to_string()
                    .contains("which does not match the required version range [1.0,2.0)"),
            "{f}"
        );
        let f = check_connector(
            &worker("connector.client.config.override.policy=None\n"),
            &connect_connectors::builtin_plugins(),
            "c1",
            &connector(&[
                ("name", "c1"),
                ("connector.class", "VerifiableSource"),
                ("topic", "t"),
                ("producer.override.linger.ms", "5"),
            ]),
        );
        assert!(
            f.is_failure()
                && f.to_string().contains("Client Config Overrides not allowed [[linger.ms,5,[],[The 'None' policy does not allow 'linger.ms' to be overridden in the connector configuration.],true]]"),
            "{f}"
        );
    }

    #[test]
    fn builtin_connectors_run_under_apache_names_and_aliases() {
        for class in [
            "org.apache.kafka.connect.tools.VerifiableSourceConnector",
            "VerifiableSource",
            "VerifiableSourceConnector",
        ] {
            assert_eq!(
                check(&[
                    ("name", "c1"),
                    ("connector.class", class),
                    ("topic", "t"),
                    ("transforms", "r"),
                    (
                        "transforms.r.type",
                        "org.apache.kafka.connect.transforms.RegexRouter"
                    ),
                    ("transforms.r.regex", "(.*)"),
                    ("transforms.r.replacement", "x-$1"),
                    (
                        "value.converter",
                        "org.apache.kafka.connect.storage.StringConverter"
                    ),
                ]),
                Finding::Runs {
                    connector: "c1".into(),
                    class: class.into()
                }
            );
        }
        // The FileStream connectors need our file.connector.allowed.dirs, which Apache's files
        // do not have: their own validation says so.
        let dir = std::env::temp_dir();
        let file = dir.join("check-sink.txt").display().to_string();
        let sink = [
            ("name", "c1"),
            (
                "connector.class",
                "org.apache.kafka.connect.file.FileStreamSinkConnector",
            ),
            ("topics", "t"),
            ("file", &file),
        ];
        let f = check(&sink);
        assert!(
            f.is_failure() && f.to_string().contains("file.connector.allowed.dirs"),
            "{f}"
        );
        let allowed = worker(&format!("file.connector.allowed.dirs={}\n", dir.display()));
        let f = check_connector(
            &allowed,
            &connect_connectors::builtin_plugins(),
            "c1",
            &connector(&sink),
        );
        assert!(!f.is_failure(), "{f}");
    }

    #[test]
    fn unknown_plugins_cannot_run() {
        let f = check(&[
            ("name", "c1"),
            (
                "connector.class",
                "io.debezium.connector.mysql.MySqlConnector",
            ),
        ]);
        assert_eq!(
            f.to_string(),
            "CANNOT RUN c1: connector class io.debezium.connector.mysql.MySqlConnector is not available on this worker"
        );
        assert!(f.is_failure());
        // A connector we have with a converter, a transform or a predicate we do not.
        let base = [
            ("name", "c1"),
            ("connector.class", "VerifiableSource"),
            ("topic", "t"),
        ];
        for (extra, named) in [
            (
                vec![("value.converter", "io.confluent.connect.avro.AvroConverter")],
                "io.confluent.connect.avro.AvroConverter",
            ),
            (
                vec![("transforms", "x"), ("transforms.x.type", "com.acme.Mask")],
                "com.acme.Mask",
            ),
            (
                vec![
                    ("transforms", "x"),
                    (
                        "transforms.x.type",
                        "org.apache.kafka.connect.transforms.Filter",
                    ),
                    ("transforms.x.predicate", "p"),
                    ("predicates", "p"),
                    ("predicates.p.type", "com.acme.IsBig"),
                ],
                "com.acme.IsBig",
            ),
        ] {
            let props: Vec<_> = base.iter().copied().chain(extra).collect();
            let f = check(&props);
            assert!(
                matches!(&f, Finding::CannotRun { reason, .. } if reason.contains(named)),
                "{f}"
            );
        }
        assert!(check(&[("name", "c1")]).is_failure());
        // A client override no client here can use.
        let props: Vec<_> = base
            .iter()
            .copied()
            .chain([("producer.override.no.such.key", "1")])
            .collect();
        let f = check(&props);
        assert!(
            matches!(&f, Finding::CannotRun { reason, .. } if reason.contains("producer.override.no.such.key")),
            "{f}"
        );
    }

    /// Task configs written by Apache for a plugin whose task class has another name than ours
    /// (the migration test's stand-in for Apache's verifiable source) are a warning.
    #[test]
    fn foreign_task_classes_are_a_warning() {
        let registry = connect_connectors::builtin_plugins();
        let ours = connector(&[(
            "task.class",
            "org.apache.kafka.connect.tools.VerifiableSourceTask",
        )]);
        assert_eq!(foreign_task_class(&registry, "vs", [&ours]), None);
        let apache = connector(&[("task.class", "connectrs.bench.VerifiableSourceTask")]);
        let f = foreign_task_class(&registry, "vs", [&ours, &apache]).unwrap();
        assert!(!f.is_failure());
        assert!(
            f.to_string().starts_with(
                "WARNING vs: its task configs name task class connectrs.bench.VerifiableSourceTask, unknown to this worker"
            ),
            "{f}"
        );
    }

    #[test]
    fn worker_converters_are_checked() {
        assert_eq!(check_worker_converters(&worker("")), None);
        let f = check_worker_converters(&worker(
            "header.converter=io.confluent.connect.avro.AvroConverter\n",
        ))
        .unwrap();
        assert!(
            f.is_failure() && f.to_string().contains("AvroConverter"),
            "{f}"
        );
    }

    #[test]
    fn the_verdict_fails_on_failures_only() {
        let mut r = Report {
            findings: vec![
                Finding::Ignored {
                    key: "plugin.path".into(),
                    reason: "r",
                },
                Finding::Unknown { key: "x".into() },
                Finding::Runs {
                    connector: "a".into(),
                    class: "VerifiableSource".into(),
                },
            ],
            cluster_checked: true,
        };
        assert_eq!(r.exit_code(), 0);
        assert_eq!(
            r.summary(),
            "PASS: 1 connector(s) OK, 0 cannot run; 0 other problem(s); 0 warning(s); 1 ignored key(s), 1 unknown key(s)"
        );
        r.findings.push(Finding::CannotRun {
            connector: "b".into(),
            reason: "r".into(),
        });
        assert_eq!(r.exit_code(), 1);
        assert!(
            r.summary()
                .starts_with("FAIL: 1 connector(s) OK, 1 cannot run")
        );
        assert!(r.render().lines().count() == 5);
    }

    #[test]
    fn a_refused_file_says_what_start_up_says() {
        let dir = std::env::temp_dir().join(format!("check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("w.properties");
        std::fs::write(
            &path,
            "bootstrap.servers=localhost:9092\ngroup.id=g\nmetric.reporters=x.Y\n\
             key.converter=org.apache.kafka.connect.json.JsonConverter\n\
             value.converter=org.apache.kafka.connect.json.JsonConverter\n\
             config.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n\
             exactly.once.source.support=maybe\n",
        )
        .unwrap();
        let (findings, config) = check_properties(&path);
        assert!(config.is_none());
        let start_up = WorkerConfig::from_file(&path).unwrap_err().to_string();
        assert_eq!(
            findings,
            vec![
                Finding::Ignored {
                    key: "metric.reporters".into(),
                    reason: match config::key_use("metric.reporters") {
                        KeyUse::Ignored(r) => r,
                        other => panic!("{other:?}"),
                    },
                },
                Finding::Refused(start_up),
            ]
        );
        let (findings, _) = check_properties(&dir.join("absent.properties"));
        assert!(
            matches!(&findings[..], [Finding::Refused(m)] if m.contains("absent.properties")),
            "{findings:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
