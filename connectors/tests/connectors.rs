//! Drives the built-in connectors through the connect-api traits with the in-crate test doubles
//! (no Kafka): resume from offsets, connector-defined transaction boundaries, file round trips.

use std::collections::BTreeMap;
use std::sync::Arc;

use connect_api::config::ConfigMap;
use connect_api::connector::{ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceTask};
use connect_api::data::Value;
use connect_api::file_access::{ALLOWED_DIRS_CONFIG, FileAccess};
use connect_api::plugin::{ConnectorInstance, TaskInstance};
use connect_api::record::{SinkRecord, json_map};
use connect_connectors::builtin_plugins;
use connect_connectors::testing::{
    InMemoryOffsetReader, RecordingTransactionContext, TransactionRequest, connector_context,
    sink_task_context, source_task_context,
};

fn props(pairs: &[(&str, &str)]) -> ConfigMap {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn temp_path(name: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    std::env::temp_dir().join(format!("connect-rs-{}-{nanos}-{name}", std::process::id()))
}

/// Creates the connector and its first task through the registry, as the runtime would.
async fn start_source(
    class: &str,
    config: ConfigMap,
    offsets: Arc<InMemoryOffsetReader>,
    tx: Option<Arc<RecordingTransactionContext>>,
) -> Box<dyn SourceTask> {
    let registry = builtin_plugins();
    let ConnectorInstance::Source(mut connector) = registry.create_connector(class).unwrap() else {
        panic!("expected a source connector");
    };
    assert_eq!(
        connector.exactly_once_support(&config),
        ExactlyOnceSupport::Supported
    );
    let (ctx, _) = connector_context("test");
    connector.start(ctx, config).await.unwrap();
    let mut task_config = connector.task_configs(1).unwrap().remove(0);
    let (desc, _) = registry.describe(class).unwrap();
    task_config.insert("task.class".into(), desc.task_class.into());
    let TaskInstance::Source(mut task) = registry.create_task(&task_config["task.class"]).unwrap()
    else {
        panic!("expected a source task");
    };
    let ctx = source_task_context("test", 0, offsets, tx).with_file_access(temp_access());
    task.start(ctx, task_config).await.unwrap();
    task
}

/// The worker's grant in these tests: the system's temporary directory.
fn temp_access() -> FileAccess {
    FileAccess::allowing([std::env::temp_dir()]).unwrap()
}

#[tokio::test]
async fn verifiable_resumes_after_stored_seqno() {
    let offsets = Arc::new(InMemoryOffsetReader::new());
    offsets.set(&json_map("id", 0), json_map("seqno", 41));
    let config = props(&[("name", "v"), ("topic", "out"), ("tasks.max", "1")]);
    let mut task = start_source(
        "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        config,
        offsets,
        None,
    )
    .await;

    let batch = task.poll().await.unwrap();
    assert_eq!(batch.len(), 1, "batch.size defaults to 1 as in Kafka");
    let r = &batch[0];
    assert_eq!(r.source_partition, json_map("id", 0));
    assert_eq!(r.source_offset, Some(json_map("seqno", 42)));
    assert_eq!(r.key, Value::Int32(0));
    assert_eq!(r.value, Value::Int64(42));
    assert_eq!(r.topic, "out");
    assert_eq!(task.poll().await.unwrap()[0].value, Value::Int64(43));
    task.stop().await.unwrap();
}

#[tokio::test]
async fn verifiable_starts_at_zero_and_stops_at_max_records() {
    let config = props(&[
        ("name", "v"),
        ("topic", "t"),
        ("batch.size", "4"),
        ("max.records", "6"),
    ]);
    let mut task = start_source(
        "VerifiableSource",
        config,
        Arc::new(InMemoryOffsetReader::new()),
        None,
    )
    .await;
    let first = task.poll().await.unwrap();
    let second = task.poll().await.unwrap();
    let seqnos: Vec<Value> = first
        .iter()
        .chain(&second)
        .map(|r| r.value.clone())
        .collect();
    assert_eq!(seqnos, (0..6).map(Value::Int64).collect::<Vec<_>>());
    assert!(
        task.poll().await.unwrap().is_empty(),
        "exhausted task idles"
    );
}

#[tokio::test]
async fn verifiable_requests_commit_every_transaction_records() {
    let tx = Arc::new(RecordingTransactionContext::default());
    let config = props(&[
        ("name", "v"),
        ("topic", "t"),
        ("batch.size", "4"),
        ("max.records", "10"),
        ("transaction.records", "3"),
        ("transaction.boundary", "connector"),
    ]);
    let registry = builtin_plugins();
    let ConnectorInstance::Source(c) = registry
        .create_connector("VerifiableSourceConnector")
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(
        c.can_define_transaction_boundaries(&config),
        ConnectorTransactionBoundaries::Supported
    );

    let mut task = start_source(
        "VerifiableSourceConnector",
        config,
        Arc::new(InMemoryOffsetReader::new()),
        Some(tx.clone()),
    )
    .await;
    let mut all = Vec::new();
    loop {
        let batch = task.poll().await.unwrap();
        if batch.is_empty() {
            break;
        }
        all.extend(batch);
    }
    assert_eq!(all.len(), 10);
    let committed_at: Vec<Value> = tx
        .requests()
        .into_iter()
        .map(|r| match r {
            TransactionRequest::CommitAt(record) => record.value,
            other => panic!("unexpected request {other:?}"),
        })
        .collect();
    // Every 3 records, and at the last record (9) so no transaction is left open.
    assert_eq!(
        committed_at,
        vec![
            Value::Int64(2),
            Value::Int64(5),
            Value::Int64(8),
            Value::Int64(9)
        ]
    );
}

#[tokio::test]
async fn verifiable_complete_record_data_is_a_struct() {
    let config = props(&[
        ("name", "v"),
        ("topic", "t"),
        ("complete.record.data", "true"),
    ]);
    let mut task = start_source(
        "VerifiableSource",
        config,
        Arc::new(InMemoryOffsetReader::new()),
        None,
    )
    .await;
    let r = task.poll().await.unwrap().remove(0);
    let Value::Struct(s) = &r.value else {
        panic!("{:?}", r.value)
    };
    assert_eq!(s.get("seqno"), Some(&Value::Int64(0)));
    assert_eq!(s.get("task"), Some(&Value::Int32(0)));
    assert_eq!(s.get("name"), Some(&Value::String("v".into())));
}

#[tokio::test]
async fn verifiable_task_configs_number_the_tasks() {
    let registry = builtin_plugins();
    let ConnectorInstance::Source(mut c) = registry.create_connector("VerifiableSource").unwrap()
    else {
        panic!()
    };
    let (ctx, _) = connector_context("v");
    c.start(ctx, props(&[("topic", "t")])).await.unwrap();
    let ids: Vec<String> = c
        .task_configs(3)
        .unwrap()
        .into_iter()
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(ids, ["0", "1", "2"]);
    let (ctx, _) = connector_context("v");
    let err = c.start(ctx, props(&[])).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Missing required configuration \"topic\" which has no default value."
    );
}

#[tokio::test]
async fn file_source_reads_lines_with_java_positions_and_resumes() {
    let path = temp_path("source.txt");
    std::fs::write(&path, "a\nbb\r\nccc\npartial").unwrap();
    let file = path.to_string_lossy().into_owned();
    let config = props(&[("name", "fs"), ("file", &file), ("topic", "lines")]);

    let mut task = start_source(
        "FileStreamSource",
        config.clone(),
        Arc::new(InMemoryOffsetReader::new()),
        None,
    )
    .await;
    let batch = task.poll().await.unwrap();
    let got: Vec<(Value, serde_json::Value)> = batch
        .iter()
        .map(|r| {
            (
                r.value.clone(),
                r.source_offset.as_ref().unwrap()["position"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (Value::String("a".into()), 2.into()),
            (Value::String("bb".into()), 6.into()),
            (Value::String("ccc".into()), 10.into()),
        ]
    );
    assert_eq!(
        batch[0].source_partition,
        json_map("filename", file.clone())
    );
    assert!(
        task.poll().await.unwrap().is_empty(),
        "an unterminated line waits"
    );

    // Offsets from a (Java or Rust) worker: resume after "bb\r\n".
    let offsets = Arc::new(InMemoryOffsetReader::new());
    offsets.set(&json_map("filename", file.clone()), json_map("position", 6));
    let mut resumed = start_source(
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        config,
        offsets,
        None,
    )
    .await;
    let batch = resumed.poll().await.unwrap();
    assert_eq!(batch.len(), 1);
    assert_eq!(batch[0].value, Value::String("ccc".into()));
    assert_eq!(batch[0].source_offset, Some(json_map("position", 10)));
    std::fs::remove_file(path).ok();
}

#[tokio::test]
async fn file_source_batch_size_limits_each_poll() {
    let path = temp_path("batch.txt");
    std::fs::write(&path, "1\n2\n3\n4\n5\n").unwrap();
    let file = path.to_string_lossy().into_owned();
    let config = props(&[("file", &file), ("topic", "t"), ("batch.size", "2")]);
    let mut task = start_source(
        "FileStreamSource",
        config,
        Arc::new(InMemoryOffsetReader::new()),
        None,
    )
    .await;
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(task.poll().await.unwrap().len());
    }
    assert_eq!(got, [2, 2, 1]);
    std::fs::remove_file(path).ok();
}

#[tokio::test]
async fn file_sink_writes_values_as_lines_and_flushes() {
    let path = temp_path("sink.txt");
    let file = path.to_string_lossy().into_owned();
    let registry = builtin_plugins();
    let ConnectorInstance::Sink(mut c) = registry.create_connector("FileStreamSink").unwrap()
    else {
        panic!()
    };
    let (ctx, _) = connector_context("sink");
    c.start(ctx, props(&[("file", &file), ("topics", "t")]))
        .await
        .unwrap();
    let configs = c.task_configs(2).unwrap();
    assert_eq!(configs.len(), 2);
    let TaskInstance::Sink(mut task) = registry
        .create_task("org.apache.kafka.connect.file.FileStreamSinkTask")
        .unwrap()
    else {
        panic!()
    };
    let (ctx, _) = sink_task_context("sink", 0);
    task.start(ctx.with_file_access(temp_access()), configs[0].clone())
        .await
        .unwrap();
    let rec = |off: i64, v: Value| SinkRecord::new("t", 0, off, None, Value::Null, None, v);
    task.put(vec![
        rec(0, Value::String("hello".into())),
        rec(1, Value::Int64(7)),
    ])
    .await
    .unwrap();
    let offsets = BTreeMap::from([(connect_api::record::TopicPartition::new("t", 0), 2)]);
    let committed = task.pre_commit(offsets.clone()).await.unwrap();
    assert_eq!(committed, offsets);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n7\n");
    task.stop().await.unwrap();
    std::fs::remove_file(path).ok();
}

/// The tasks check their path when they start (and the source again when it opens the file):
/// a config that reached the config topic without our validation cannot escape.
#[cfg(unix)]
#[tokio::test]
async fn file_tasks_refuse_paths_outside_the_allowed_dirs_at_start() {
    let root = temp_path("confined");
    let allowed = root.join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    std::fs::write(root.join("secret"), "s\n").unwrap();
    let access = FileAccess::allowing([&allowed]).unwrap();
    let registry = builtin_plugins();
    let sink_task = || {
        let TaskInstance::Sink(t) = registry
            .create_task("org.apache.kafka.connect.file.FileStreamSinkTask")
            .unwrap()
        else {
            panic!()
        };
        t
    };
    let outside = root.join("out.txt");
    let escape = allowed.join("../out.txt");
    for (file, files) in [
        (outside.clone(), access.clone()),
        (escape, access.clone()),
        (allowed.join("in.txt"), FileAccess::disabled()),
    ] {
        let (ctx, _) = sink_task_context("sink", 0);
        let config = props(&[("file", &file.to_string_lossy()), ("topics", "t")]);
        let err = sink_task()
            .start(ctx.with_file_access(files), config)
            .await
            .unwrap_err();
        assert!(err.to_string().contains(ALLOWED_DIRS_CONFIG), "{err}");
    }
    assert!(!outside.exists(), "the refused sink created its file");

    // Source: a file that does not exist yet is allowed; created later as a link out, the
    // task fails when it tries to open it instead of reading the secret.
    let TaskInstance::Source(mut source) = registry
        .create_task("org.apache.kafka.connect.file.FileStreamSourceTask")
        .unwrap()
    else {
        panic!()
    };
    let later = allowed.join("later.txt");
    let ctx = source_task_context("src", 0, Arc::new(InMemoryOffsetReader::new()), None)
        .with_file_access(access);
    let config = props(&[("file", &later.to_string_lossy()), ("topic", "t")]);
    source.start(ctx, config).await.unwrap();
    assert!(source.poll().await.unwrap().is_empty());
    std::os::unix::fs::symlink(root.join("secret"), &later).unwrap();
    let err = source.poll().await.unwrap_err();
    assert!(err.to_string().contains(ALLOWED_DIRS_CONFIG), "{err}");
    std::fs::remove_dir_all(root).ok();
}

/// Validation reports a refused path as an error on `file`, naming the worker key.
#[tokio::test]
async fn file_connectors_validation_reports_refused_paths_on_file() {
    let registry = builtin_plugins();
    let errors_on_file = |class: &str, config: ConfigMap, files: &FileAccess| -> Vec<String> {
        let values = match registry.create_connector(class).unwrap() {
            ConnectorInstance::Source(c) => c.validate_with_files(&config, files),
            ConnectorInstance::Sink(c) => c.validate_with_files(&config, files),
        };
        values
            .into_iter()
            .filter(|v| v.name == "file")
            .flat_map(|v| v.errors)
            .collect()
    };
    let tmp = temp_access();
    let inside = temp_path("v.txt").to_string_lossy().into_owned();
    for class in ["FileStreamSink", "FileStreamSource"] {
        let config = props(&[("file", &inside), ("topics", "t"), ("topic", "t")]);
        assert!(errors_on_file(class, config.clone(), &tmp).is_empty());
        let errs = errors_on_file(class, config, &FileAccess::disabled());
        assert!(errs[0].contains(ALLOWED_DIRS_CONFIG), "{errs:?}");
        let config = props(&[("file", "/etc/passwd"), ("topics", "t"), ("topic", "t")]);
        let errs = errors_on_file(class, config, &tmp);
        assert!(errs[0].contains("outside"), "{errs:?}");
    }
    // Without `file` (standard output), the sink needs the worker key only.
    let stdout = props(&[("topics", "t")]);
    assert!(errors_on_file("FileStreamSink", stdout.clone(), &tmp).is_empty());
    assert!(!errors_on_file("FileStreamSink", stdout, &FileAccess::disabled()).is_empty());
}
