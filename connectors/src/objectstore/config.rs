//! Keys of the object-store sink and their typed form.

use std::num::NonZeroUsize;
use std::sync::Arc;

use connect_api::config::validators::at_least;
use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType, Importance};
use connect_api::converter::DecimalFormat;
use connect_api::error::{ConnectError, Result};
use object_store::ObjectStore;
use object_store::path::Path;

use super::format::Format;
use super::format::lines::{Compression, JsonOptions};
use super::partitioner::Partitioner;
use super::writer::{NullValues, Rotation, Settings};

pub const STORE_URL_CONFIG: &str = "store.url";
pub const FLUSH_SIZE_CONFIG: &str = "flush.size";
pub const ROTATE_INTERVAL_CONFIG: &str = "rotate.interval.ms";
pub const FORMAT_CONFIG: &str = "format";
pub const S3_ENDPOINT_CONFIG: &str = "s3.endpoint";
pub const S3_REGION_CONFIG: &str = "s3.region";
pub const S3_ACCESS_KEY_CONFIG: &str = "s3.access.key.id";
pub const S3_SECRET_KEY_CONFIG: &str = "s3.secret.access.key";
pub const S3_ALLOW_HTTP_CONFIG: &str = "s3.allow.http";
pub const S3_PATH_STYLE_CONFIG: &str = "s3.path.style.access";

pub fn sink_config_def() -> ConfigDef {
    ConfigDef::new()
        .define(ConfigKey::new(STORE_URL_CONFIG, ConfigType::String, Importance::High,
            "Where files go: file:///dir or s3://bucket/prefix"))
        .define(
            ConfigKey::new(FLUSH_SIZE_CONFIG, ConfigType::Int, Importance::High,
                "Records per file")
                .default_value(1000)
                .validator(at_least(1)),
        )
        .define(
            ConfigKey::new(ROTATE_INTERVAL_CONFIG, ConfigType::Long, Importance::Medium,
                "If > 0, a file also ends when a record's timestamp falls in a later window of this many ms (record time, never wall-clock time)")
                .default_value(0i64),
        )
        .define(
            ConfigKey::new(FORMAT_CONFIG, ConfigType::String, Importance::Medium, "File format: jsonl")
                .default_value("jsonl"),
        )
        .define(ConfigKey::new(S3_ENDPOINT_CONFIG, ConfigType::String, Importance::Medium,
            "S3-compatible endpoint URL (e.g. http://127.0.0.1:9000)").default_null())
        .define(ConfigKey::new(S3_REGION_CONFIG, ConfigType::String, Importance::Low, "S3 region")
            .default_value("us-east-1"))
        .define(ConfigKey::new(S3_ACCESS_KEY_CONFIG, ConfigType::String, Importance::Medium,
            "S3 access key id").default_null())
        .define(ConfigKey::new(S3_SECRET_KEY_CONFIG, ConfigType::Password, Importance::Medium,
            "S3 secret access key").default_null())
        .define(ConfigKey::new(S3_ALLOW_HTTP_CONFIG, ConfigType::Boolean, Importance::Low,
            "Allow a plain-http endpoint").default_value(false))
        .define(ConfigKey::new(S3_PATH_STYLE_CONFIG, ConfigType::Boolean, Importance::Low,
            "Path-style requests (bucket in the path, for S3-compatible servers)").default_value(true))
}

#[derive(Debug, Clone)]
pub struct ObjectStoreSinkConfig {
    pub store_url: String,
    pub flush_size: NonZeroUsize,
    /// `None`: rotate by count only.
    pub rotate_interval_ms: Option<i64>,
    options: Vec<(String, String)>,
}

impl ObjectStoreSinkConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = sink_config_def().parse(props)?;
        let format = p.string(FORMAT_CONFIG).unwrap_or("jsonl");
        if format != "jsonl" {
            return Err(ConnectError::invalid_value(
                FORMAT_CONFIG,
                format,
                "only jsonl is supported",
            ));
        }
        let mut options = vec![
            (
                "region".to_owned(),
                p.string(S3_REGION_CONFIG).unwrap_or("us-east-1").to_owned(),
            ),
            (
                "allow_http".to_owned(),
                p.boolean(S3_ALLOW_HTTP_CONFIG).unwrap_or(false).to_string(),
            ),
            (
                "virtual_hosted_style_request".to_owned(),
                (!p.boolean(S3_PATH_STYLE_CONFIG).unwrap_or(true)).to_string(),
            ),
        ];
        if let Some(e) = p.string(S3_ENDPOINT_CONFIG) {
            options.push(("endpoint".to_owned(), e.to_owned()));
        }
        if let Some(k) = p.string(S3_ACCESS_KEY_CONFIG) {
            options.push(("access_key_id".to_owned(), k.to_owned()));
        }
        if let Some(s) = p.password(S3_SECRET_KEY_CONFIG) {
            options.push(("secret_access_key".to_owned(), s.value().to_owned()));
        }
        Ok(Self {
            store_url: p
                .string(STORE_URL_CONFIG)
                .ok_or_else(|| ConnectError::missing_required(STORE_URL_CONFIG))?
                .to_owned(),
            flush_size: p
                .int(FLUSH_SIZE_CONFIG)
                .and_then(|v| usize::try_from(v).ok())
                .and_then(NonZeroUsize::new)
                .unwrap_or(NonZeroUsize::MIN),
            rotate_interval_ms: p.long(ROTATE_INTERVAL_CONFIG).filter(|v| *v > 0),
            options,
        })
    }

    /// How this sink's own keys write: JSON lines under `<prefix>/<topic>/partition=<p>/`,
    /// offsets zero-padded to 20, null values as `null` lines, whole files in one PUT.
    pub fn settings(&self, prefix: &Path) -> Settings {
        Settings {
            topics_dir: prefix.parts().map(|p| p.as_ref().to_owned()).collect(),
            partitioner: Partitioner::Default,
            schema_affix: None,
            format: Format::Json(JsonOptions {
                extension: ".jsonl".to_owned(),
                decimal_format: DecimalFormat::Base64,
                compression: Compression::None,
            }),
            keys: None,
            headers: None,
            flush_size: self.flush_size.get(),
            rotation: self
                .rotate_interval_ms
                .map_or(Rotation::None, Rotation::Window),
            schedule: None,
            zero_pad: 20,
            file_delim: "+".to_owned(),
            nulls: NullValues::Write,
            part_size: usize::MAX,
            rotate_on_schema_change: false,
            max_open_files: None,
            retry_backoff: None,
            tagging: None,
        }
    }

    /// The store and the prefix inside it.
    pub fn open(&self) -> Result<(Arc<dyn ObjectStore>, Path)> {
        let url = url::Url::parse(&self.store_url).map_err(|e| {
            ConnectError::invalid_value(STORE_URL_CONFIG, &self.store_url, &e.to_string())
        })?;
        if url.scheme() == "file" {
            let dir = url.to_file_path().map_err(|_| {
                ConnectError::invalid_value(STORE_URL_CONFIG, &self.store_url, "not a local path")
            })?;
            std::fs::create_dir_all(&dir).map_err(|e| {
                ConnectError::fatal(format!("failed to create directory {}", dir.display()))
                    .with_source(e)
            })?;
            let store =
                object_store::local::LocalFileSystem::new_with_prefix(&dir).map_err(|e| {
                    ConnectError::fatal("failed to open the local store").with_source(e)
                })?;
            return Ok((Arc::new(store), Path::default()));
        }
        let opts = if url.scheme() == "s3" {
            self.options.clone()
        } else {
            Vec::new()
        };
        let (store, prefix) = object_store::parse_url_opts(&url, opts).map_err(|e| {
            ConnectError::invalid_value(STORE_URL_CONFIG, &self.store_url, &e.to_string())
        })?;
        Ok((Arc::from(store), prefix))
    }
}
