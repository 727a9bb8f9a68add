//! The file sink: appends each record's value as a line; `flush` makes the lines durable.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap, ConfigValue};
use connect_api::connector::{
    ConnectorContext, SinkConnector, SinkOffsets, SinkTask, SinkTaskContext,
};
use connect_api::data::Value;
use connect_api::error::{ConnectError, Result};
use connect_api::file_access::FileAccess;
use connect_api::record::{SinkRecord, TopicPartition};

use super::config::*;

#[derive(Debug, Default)]
pub struct FileStreamSinkConnector {
    config: ConfigMap,
}

#[async_trait]
impl SinkConnector for FileStreamSinkConnector {
    type Task = FileStreamSinkTask;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        sink_config_def()
    }

    fn validate_with_files(&self, config: &ConfigMap, files: &FileAccess) -> Vec<ConfigValue> {
        check_file_key(
            self.validate(config),
            config,
            files,
            "FileStreamSinkConnector",
        )
    }

    async fn start(&mut self, _ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        FileSinkConfig::parse(&config)?;
        self.config = config;
        Ok(())
    }

    /// `max_tasks` identical configs, as Java does.
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
        Ok(vec![self.config.clone(); max_tasks])
    }

    async fn stop(&mut self) -> Result<()> {
        Ok(())
    }

    async fn alter_offsets(
        &self,
        _config: &ConfigMap,
        _offsets: &[(TopicPartition, Option<i64>)],
    ) -> Result<bool> {
        // Offsets live only in the consumer group; nothing external to change.
        Ok(true)
    }
}

enum Output {
    File(BufWriter<File>),
    Stdout(std::io::Stdout),
}

impl Output {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Self::File(w) => w,
            Self::Stdout(s) => s,
        }
    }
}

/// Writes values as lines to `file` (or standard output).
#[derive(Default)]
pub struct FileStreamSinkTask {
    output: Option<Output>,
}

/// The text of a value as Java's `println(record.value())` would print it for simple values;
/// structured values are written as compact JSON.
fn line_of(value: &Value) -> Result<String> {
    Ok(match value {
        Value::Null => "null".to_owned(),
        Value::String(s) => s.clone(),
        Value::Int8(v) => v.to_string(),
        Value::Int16(v) => v.to_string(),
        Value::Int32(v) => v.to_string(),
        Value::Int64(v) => v.to_string(),
        Value::Float32(v) => connect_api::config::java_double_string(f64::from(*v)),
        Value::Float64(v) => connect_api::config::java_double_string(*v),
        Value::Boolean(v) => v.to_string(),
        other => {
            let json =
                connect_api::converter::JsonConverter::new(false).to_json_value(None, other)?;
            json.to_string()
        }
    })
}

#[async_trait]
impl SinkTask for FileStreamSinkTask {
    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    async fn start(&mut self, ctx: SinkTaskContext, config: ConfigMap) -> Result<()> {
        let config = FileSinkConfig::parse(&config)?;
        // Checked again here: a config may reach the config topic without our validation.
        let files = ctx.file_access();
        if !files.is_enabled() {
            return Err(ConnectError::config(FileAccess::disabled_message(
                "FileStreamSinkTask",
            )));
        }
        self.output = Some(match config.file {
            None => Output::Stdout(std::io::stdout()),
            Some(path) => {
                let path = allowed_path(files, "FileStreamSinkTask", &path)?;
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .map_err(|e| {
                        ConnectError::fatal(format!(
                            "Couldn't find or create file '{}' for FileStreamSinkTask",
                            path.display()
                        ))
                        .with_source(e)
                    })?;
                Output::File(BufWriter::new(file))
            }
        });
        Ok(())
    }

    async fn put(&mut self, records: Vec<SinkRecord>) -> Result<()> {
        let out = self.output.as_mut().ok_or_else(|| {
            ConnectError::fatal("FileStreamSinkTask received records before start")
        })?;
        let w = out.writer();
        for record in &records {
            let mut line = line_of(&record.value)?;
            line.push('\n');
            w.write_all(line.as_bytes()).map_err(|e| {
                ConnectError::retriable("failed to write to the sink file").with_source(e)
            })?;
        }
        Ok(())
    }

    async fn flush(&mut self, _offsets: &SinkOffsets) -> Result<()> {
        if let Some(out) = self.output.as_mut() {
            out.writer().flush().map_err(|e| {
                ConnectError::retriable("failed to flush the sink file").with_source(e)
            })?;
        }
        Ok(())
    }

    async fn stop(&mut self) -> Result<()> {
        if let Some(mut out) = self.output.take() {
            out.writer().flush().map_err(|e| {
                ConnectError::retriable("failed to flush the sink file").with_source(e)
            })?;
        }
        Ok(())
    }
}
