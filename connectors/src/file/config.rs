//! Keys of the file connectors and their typed forms.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use connect_api::config::validators::{at_least, non_empty_string};
use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType, ConfigValue, Importance};
use connect_api::error::{ConnectError, Result};
use connect_api::file_access::FileAccess;

pub const FILE_CONFIG: &str = "file";
pub const TOPIC_CONFIG: &str = "topic";
pub const BATCH_SIZE_CONFIG: &str = "batch.size";
pub const DEFAULT_BATCH_SIZE: i32 = 2000;

/// Partition key and offset key, as Java's `FileStreamSourceTask` writes them.
pub const FILENAME_FIELD: &str = "filename";
pub const POSITION_FIELD: &str = "position";

pub fn source_config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(FILE_CONFIG, ConfigType::String, Importance::High, "Source filename. If not specified, the standard input will be used")
                .default_null(),
        )
        .define(
            ConfigKey::new(TOPIC_CONFIG, ConfigType::String, Importance::High, "The topic to publish data to")
                .validator(non_empty_string()),
        )
        .define(
            ConfigKey::new(
                BATCH_SIZE_CONFIG,
                ConfigType::Int,
                Importance::Low,
                "The maximum number of records the source task can read from the file each time it is polled",
            )
            .default_value(DEFAULT_BATCH_SIZE)
            .validator(at_least(1)),
        )
}

pub fn sink_config_def() -> ConfigDef {
    ConfigDef::new().define(
        ConfigKey::new(
            FILE_CONFIG,
            ConfigType::String,
            Importance::High,
            "Destination filename. If not specified, the standard output will be used",
        )
        .default_null(),
    )
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileSourceConfig {
    /// `None`: standard input (not supported by our task).
    pub file: Option<PathBuf>,
    pub topic: String,
    pub batch_size: NonZeroUsize,
}

impl FileSourceConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = source_config_def().parse(props)?;
        Ok(Self {
            file: p
                .string(FILE_CONFIG)
                .filter(|f| !f.is_empty())
                .map(PathBuf::from),
            topic: p
                .string(TOPIC_CONFIG)
                .ok_or_else(|| ConnectError::missing_required(TOPIC_CONFIG))?
                .to_owned(),
            batch_size: p
                .int(BATCH_SIZE_CONFIG)
                .and_then(|v| usize::try_from(v).ok())
                .and_then(NonZeroUsize::new)
                .unwrap_or(NonZeroUsize::MIN),
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileSinkConfig {
    /// `None`: standard output.
    pub file: Option<PathBuf>,
}

impl FileSinkConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = sink_config_def().parse(props)?;
        Ok(Self {
            file: p
                .string(FILE_CONFIG)
                .filter(|f| !f.is_empty())
                .map(PathBuf::from),
        })
    }
}

/// Adds to `values` the error on `file` when the worker's [`FileAccess`] refuses it: any
/// FileStream config when the worker allows no directory; a path outside the allowed ones.
/// No `file` (standard input/output) is not a path and is left to the connector's own rules.
pub(crate) fn check_file_key(
    mut values: Vec<ConfigValue>,
    config: &ConfigMap,
    files: &FileAccess,
    what: &str,
) -> Vec<ConfigValue> {
    let file = config
        .get(FILE_CONFIG)
        .map(|f| f.trim())
        .filter(|f| !f.is_empty());
    let error = match file {
        _ if !files.is_enabled() => Some(FileAccess::disabled_message(what)),
        None => None,
        Some(f) => files.check(what, Path::new(f)).err(),
    };
    if let Some(error) = error {
        match values.iter_mut().find(|v| v.name == FILE_CONFIG) {
            Some(v) => v.add_error(error),
            None => {
                let mut v = ConfigValue::new(FILE_CONFIG);
                v.add_error(error);
                values.push(v);
            }
        }
    }
    values
}

/// `path` as the task may open it (canonical), or a config error naming the worker key.
pub(crate) fn allowed_path(files: &FileAccess, what: &str, path: &Path) -> Result<PathBuf> {
    files.check(what, path).map_err(ConnectError::config)
}
