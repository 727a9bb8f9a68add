//! Keys of the verifiable source and their typed form.

use std::num::{NonZeroU64, NonZeroUsize};

use connect_api::config::validators::{at_least, non_empty_string};
use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType, Importance, Width};
use connect_api::error::{ConnectError, Result};

pub const TOPIC_CONFIG: &str = "topic";
pub const THROUGHPUT_CONFIG: &str = "throughput";
pub const COMPLETE_RECORD_DATA_CONFIG: &str = "complete.record.data";
pub const BATCH_SIZE_CONFIG: &str = "batch.size";
pub const MAX_RECORDS_CONFIG: &str = "max.records";
pub const TRANSACTION_RECORDS_CONFIG: &str = "transaction.records";
/// Set per task by `task_configs`.
pub const ID_CONFIG: &str = "id";

/// Partition map key (Java's `ID_FIELD`) and offset map key (`SEQNO_FIELD`).
pub const ID_FIELD: &str = "id";
pub const SEQNO_FIELD: &str = "seqno";

const GROUP: &str = "Verifiable";

pub fn config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(TOPIC_CONFIG, ConfigType::String, Importance::High, "The topic to publish data to.")
                .validator(non_empty_string())
                .group(GROUP, 1)
                .width(Width::Long)
                .display_name("Topic"),
        )
        .define(
            ConfigKey::new(
                THROUGHPUT_CONFIG,
                ConfigType::Long,
                Importance::High,
                "Maximum records per second per task; -1 (or any negative value) means unlimited.",
            )
            .default_value(-1i64)
            .group(GROUP, 2)
            .width(Width::Short)
            .display_name("Throughput"),
        )
        .define(
            ConfigKey::new(
                COMPLETE_RECORD_DATA_CONFIG,
                ConfigType::Boolean,
                Importance::Low,
                "If true, the value is a struct {name, task, topic, time_ms, seqno}; else the INT64 seqno.",
            )
            .default_value(false)
            .group(GROUP, 3)
            .width(Width::Short)
            .display_name("Complete record data"),
        )
        .define(
            ConfigKey::new(BATCH_SIZE_CONFIG, ConfigType::Int, Importance::Medium, "Records returned by each poll.")
                .default_value(1)
                .validator(at_least(1))
                .group(GROUP, 4)
                .width(Width::Short)
                .display_name("Batch size"),
        )
        .define(
            ConfigKey::new(
                MAX_RECORDS_CONFIG,
                ConfigType::Long,
                Importance::Medium,
                "Stop producing after this many records per task (counting from seqno 0); -1 means never. Afterwards polls return nothing.",
            )
            .default_value(-1i64)
            .group(GROUP, 5)
            .width(Width::Short)
            .display_name("Max records"),
        )
        .define(
            ConfigKey::new(
                TRANSACTION_RECORDS_CONFIG,
                ConfigType::Long,
                Importance::Medium,
                "With transaction.boundary=connector, request a commit after every record whose seqno + 1 is a multiple of this.",
            )
            .default_value(100i64)
            .validator(at_least(1))
            .group(GROUP, 6)
            .width(Width::Short)
            .display_name("Records per transaction"),
        )
}

/// The connector keys, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiableConfig {
    pub topic: String,
    /// `None` = unlimited.
    pub throughput: Option<NonZeroU64>,
    pub complete_record_data: bool,
    pub batch_size: NonZeroUsize,
    /// `None` = unlimited. Seqnos `0..max_records` are produced.
    pub max_records: Option<u64>,
    pub transaction_records: NonZeroU64,
}

impl VerifiableConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = config_def().parse(props)?;
        let positive = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
        Ok(Self {
            topic: p
                .string(TOPIC_CONFIG)
                .ok_or_else(|| ConnectError::missing_required(TOPIC_CONFIG))?
                .to_owned(),
            throughput: positive(p.long(THROUGHPUT_CONFIG)).and_then(NonZeroU64::new),
            complete_record_data: p.boolean(COMPLETE_RECORD_DATA_CONFIG).unwrap_or(false),
            batch_size: p
                .int(BATCH_SIZE_CONFIG)
                .and_then(|v| usize::try_from(v).ok())
                .and_then(NonZeroUsize::new)
                .unwrap_or(NonZeroUsize::MIN),
            max_records: positive(p.long(MAX_RECORDS_CONFIG)),
            transaction_records: positive(p.long(TRANSACTION_RECORDS_CONFIG))
                .and_then(NonZeroU64::new)
                .unwrap_or(NonZeroU64::MIN),
        })
    }
}

/// The task id from a task config.
pub fn task_id(props: &ConfigMap) -> Result<i32> {
    let raw = props
        .get(ID_CONFIG)
        .ok_or_else(|| ConnectError::missing_required(ID_CONFIG))?;
    raw.trim()
        .parse()
        .map_err(|_| ConnectError::invalid_value(ID_CONFIG, raw, "Not a number of type INT"))
}
