//! The file source: one task reading lines; each record's offset is the byte position after
//! its line terminator.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap, ConfigValue};
use connect_api::connector::{
    ConnectorContext, ExactlyOnceSupport, SourceConnector, SourceOffsets, SourceTask,
    SourceTaskContext,
};
use connect_api::data::{Schema, Value};
use connect_api::error::{ConnectError, Result};
use connect_api::file_access::FileAccess;
use connect_api::record::{SourcePartition, SourceRecord, json_map};

use super::config::*;

/// Wait between polls that found no complete line (Java waits one second too).
const IDLE_POLL: Duration = Duration::from_secs(1);
const READ_CHUNK: usize = 64 * 1024;

#[derive(Debug, Default)]
pub struct FileStreamSourceConnector {
    config: ConfigMap,
}

#[async_trait]
impl SourceConnector for FileStreamSourceConnector {
    type Task = FileStreamSourceTask;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        source_config_def()
    }

    fn validate_with_files(&self, config: &ConfigMap, files: &FileAccess) -> Vec<ConfigValue> {
        check_file_key(
            self.validate(config),
            config,
            files,
            "FileStreamSourceConnector",
        )
    }

    async fn start(&mut self, _ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        FileSourceConfig::parse(&config)?;
        self.config = config;
        Ok(())
    }

    /// Always one task: a file has one reader.
    fn task_configs(&self, _max_tasks: usize) -> Result<Vec<ConfigMap>> {
        Ok(vec![self.config.clone()])
    }

    async fn stop(&mut self) -> Result<()> {
        Ok(())
    }

    fn exactly_once_support(&self, config: &ConfigMap) -> ExactlyOnceSupport {
        // Reading a file is replayable from a byte position; standard input is not.
        match config.get(FILE_CONFIG) {
            Some(f) if !f.trim().is_empty() => ExactlyOnceSupport::Supported,
            _ => ExactlyOnceSupport::Unsupported,
        }
    }

    async fn alter_offsets(&self, _config: &ConfigMap, offsets: &SourceOffsets) -> Result<bool> {
        for (partition, offset) in offsets {
            if !partition.contains_key(FILENAME_FIELD) {
                return Err(ConnectError::config(format!(
                    "Partition objects should contain the key '{FILENAME_FIELD}'"
                )));
            }
            let Some(offset) = offset else { continue };
            match offset.get(POSITION_FIELD) {
                Some(serde_json::Value::Number(n)) if n.as_i64().is_some_and(|p| p >= 0) => {}
                Some(serde_json::Value::Number(_)) => {
                    return Err(ConnectError::config(
                        "The value for the 'position' key in the offset should be a non-negative value",
                    ));
                }
                _ => {
                    return Err(ConnectError::config(format!(
                        "Offset objects should either be null or contain the key '{POSITION_FIELD}' with a long value"
                    )));
                }
            }
        }
        Ok(true)
    }
}

/// Reads lines from `file`, resuming at the stored byte position.
#[derive(Default)]
pub struct FileStreamSourceTask {
    state: Option<ReaderState>,
}

struct ReaderState {
    ctx: SourceTaskContext,
    config: FileSourceConfig,
    partition: SourcePartition,
    /// Opened lazily so a file created after the task started is picked up.
    file: Option<File>,
    /// Byte position in the file of `pending[0]`.
    position: u64,
    pending: Vec<u8>,
}

/// The first complete line in `buf`: `(line, bytes consumed including the terminator)`.
/// A `\r` at the very end is not yet complete: it may be followed by `\n`.
fn extract_line(buf: &[u8]) -> Option<(&[u8], usize)> {
    let i = buf.iter().position(|&b| b == b'\n' || b == b'\r')?;
    if buf[i] == b'\n' {
        return Some((&buf[..i], i + 1));
    }
    match buf.get(i + 1) {
        None => None,
        Some(b'\n') => Some((&buf[..i], i + 2)),
        Some(_) => Some((&buf[..i], i + 1)),
    }
}

impl ReaderState {
    fn open(&mut self) -> Result<bool> {
        if self.file.is_some() {
            return Ok(true);
        }
        let Some(path) = self.config.file.clone() else {
            return Err(ConnectError::config(
                "FileStreamSourceTask needs 'file': reading standard input is not supported",
            ));
        };
        // Checked at each attempt: the file may appear later, e.g. as a link out.
        let path = allowed_path(self.ctx.file_access(), "FileStreamSourceTask", &path)?;
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => {
                return Err(
                    ConnectError::retriable(format!("failed to open {}", path.display()))
                        .with_source(e),
                );
            }
        };
        file.seek(SeekFrom::Start(self.position)).map_err(|e| {
            ConnectError::retriable(format!("failed to seek in {}", path.display())).with_source(e)
        })?;
        self.file = Some(file);
        Ok(true)
    }

    /// Reads what is available; `false` at end of file.
    fn fill(&mut self) -> Result<bool> {
        let Some(file) = self.file.as_mut() else {
            return Ok(false);
        };
        let start = self.pending.len();
        self.pending.resize(start + READ_CHUNK, 0);
        let read = file.read(&mut self.pending[start..]);
        let n = match read {
            Ok(n) => n,
            Err(e) => {
                self.pending.truncate(start);
                return Err(ConnectError::retriable("failed to read file").with_source(e));
            }
        };
        self.pending.truncate(start + n);
        Ok(n > 0)
    }

    fn take_lines(&mut self, max: usize) -> Vec<SourceRecord> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let mut out = Vec::new();
        let mut consumed_total = 0;
        while out.len() < max {
            let Some((line, consumed)) = extract_line(&self.pending[consumed_total..]) else {
                break;
            };
            let text = String::from_utf8_lossy(line).into_owned();
            consumed_total += consumed;
            let position = self.position + consumed_total as u64;
            out.push(
                SourceRecord::new(
                    self.partition.clone(),
                    json_map(POSITION_FIELD, position),
                    self.config.topic.clone(),
                    Some(Schema::string()),
                    Value::String(text),
                )
                .with_timestamp(now),
            );
        }
        self.pending.drain(..consumed_total);
        self.position += consumed_total as u64;
        out
    }
}

#[async_trait]
impl SourceTask for FileStreamSourceTask {
    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    async fn start(&mut self, ctx: SourceTaskContext, config: ConfigMap) -> Result<()> {
        let config = FileSourceConfig::parse(&config)?;
        let Some(path) = &config.file else {
            return Err(ConnectError::config(
                "FileStreamSourceTask needs 'file': reading standard input is not supported",
            ));
        };
        // Checked again here: a config may reach the config topic without our validation.
        allowed_path(ctx.file_access(), "FileStreamSourceTask", path)?;
        let partition = json_map(FILENAME_FIELD, path.to_string_lossy().into_owned());
        let position = match ctx.offset_storage_reader().offset(&partition).await? {
            None => 0,
            Some(offset) => match offset.get(POSITION_FIELD) {
                None | Some(serde_json::Value::Null) => 0,
                Some(v) => v
                    .as_u64()
                    .ok_or_else(|| ConnectError::fatal("Offset position is the incorrect type"))?,
            },
        };
        self.state = Some(ReaderState {
            ctx,
            config,
            partition,
            file: None,
            position,
            pending: Vec::new(),
        });
        Ok(())
    }

    /// `commit_record` is not overridden: the runtime may move the data into the chain.
    fn commit_record_reads_data(&self) -> bool {
        false
    }

    async fn poll(&mut self) -> Result<Vec<SourceRecord>> {
        let state = self
            .state
            .as_mut()
            .ok_or_else(|| ConnectError::fatal("FileStreamSourceTask polled before start"))?;
        let max = state.config.batch_size.get();
        if state.open()? {
            // Read until a full batch of lines is buffered or the file has nothing more.
            while !state.take_lines_ready(max) && state.fill()? {}
        }
        let records = state.take_lines(max);
        if records.is_empty() {
            state.ctx.sleep(IDLE_POLL).await;
        }
        Ok(records)
    }

    async fn stop(&mut self) -> Result<()> {
        self.state = None;
        Ok(())
    }
}

impl ReaderState {
    /// Whether `pending` already holds `max` complete lines.
    fn take_lines_ready(&self, max: usize) -> bool {
        let mut rest = &self.pending[..];
        for _ in 0..max {
            match extract_line(rest) {
                Some((_, consumed)) => rest = &rest[consumed..],
                None => return false,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::extract_line;

    #[test]
    fn line_terminators_like_java() {
        assert_eq!(extract_line(b"ab\ncd"), Some((&b"ab"[..], 3)));
        assert_eq!(extract_line(b"ab\r\ncd"), Some((&b"ab"[..], 4)));
        assert_eq!(extract_line(b"ab\rcd"), Some((&b"ab"[..], 3)));
        assert_eq!(extract_line(b"ab\r"), None);
        assert_eq!(extract_line(b"ab"), None);
    }
}
