//! Keys of the Postgres connectors (named as in Confluent's JDBC connector where one exists)
//! and their typed forms.

use std::num::NonZeroUsize;
use std::time::Duration;

use connect_api::config::validators::at_least;
use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType, Importance};
use connect_api::error::{ConnectError, Result};

pub const CONNECTION_URL_CONFIG: &str = "connection.url";
pub const CONNECTION_USER_CONFIG: &str = "connection.user";
pub const CONNECTION_PASSWORD_CONFIG: &str = "connection.password";

pub const TABLE_NAME_FORMAT_CONFIG: &str = "table.name.format";
pub const PK_MODE_CONFIG: &str = "pk.mode";
pub const PK_FIELDS_CONFIG: &str = "pk.fields";
pub const DELETE_ENABLED_CONFIG: &str = "delete.enabled";
pub const AUTO_CREATE_CONFIG: &str = "auto.create";
pub const AUTO_EVOLVE_CONFIG: &str = "auto.evolve";
pub const BATCH_SIZE_CONFIG: &str = "batch.size";
pub const OFFSETS_TABLE_CONFIG: &str = "offsets.table.name";
pub const OFFSETS_TABLE_DEFAULT: &str = "connect_sink_offsets";

pub const TABLES_CONFIG: &str = "tables";
pub const MODE_CONFIG: &str = "mode";
pub const INCREMENTING_COLUMN_CONFIG: &str = "incrementing.column.name";
pub const TIMESTAMP_COLUMN_CONFIG: &str = "timestamp.column.name";
pub const TRANSACTION_ID_COLUMN_CONFIG: &str = "transaction.id.column.name";
pub const BATCH_MAX_ROWS_CONFIG: &str = "batch.max.rows";
pub const POLL_INTERVAL_CONFIG: &str = "poll.interval.ms";
pub const TOPIC_PREFIX_CONFIG: &str = "topic.prefix";

/// Source partition and offset keys.
pub const TABLE_FIELD: &str = "table";
pub const INCREMENTING_FIELD: &str = "incrementing";
pub const TIMESTAMP_FIELD: &str = "timestamp";

fn connection_keys(def: ConfigDef) -> ConfigDef {
    def.define(ConfigKey::new(
        CONNECTION_URL_CONFIG,
        ConfigType::String,
        Importance::High,
        "Postgres URL: postgres://user@host:5432/db?sslmode=verify-full&sslrootcert=ca.pem (libpq) or jdbc:postgresql://host:5432/db?user=u (pgJDBC)",
    ))
    .define(
        ConfigKey::new(
            CONNECTION_USER_CONFIG,
            ConfigType::String,
            Importance::High,
            "User (overrides the URL's)",
        )
        .default_null(),
    )
    .define(
        ConfigKey::new(
            CONNECTION_PASSWORD_CONFIG,
            ConfigType::Password,
            Importance::High,
            "Password (overrides the URL's)",
        )
        .default_null(),
    )
}

pub fn sink_config_def(with_offsets_table: bool) -> ConfigDef {
    let def = connection_keys(ConfigDef::new())
        .define(
            ConfigKey::new(TABLE_NAME_FORMAT_CONFIG, ConfigType::String, Importance::Medium,
                "Destination table; ${topic} is replaced by the record's topic")
                .default_value("${topic}"),
        )
        .define(
            ConfigKey::new(PK_MODE_CONFIG, ConfigType::String, Importance::High,
                "Where the primary key comes from: record_key or record_value (upsert sink); none (offsets-with-data sink)")
                .default_value(if with_offsets_table { "none" } else { "record_key" }),
        )
        .define(
            ConfigKey::new(PK_FIELDS_CONFIG, ConfigType::List, Importance::Medium,
                "Primary key fields; for a primitive key, the one column name (default id)")
                .default_value(""),
        )
        .define(
            ConfigKey::new(DELETE_ENABLED_CONFIG, ConfigType::Boolean, Importance::Medium,
                "Tombstones (null values) delete the row with the record key (pk.mode=record_key)")
                .default_value(false),
        )
        .define(
            ConfigKey::new(AUTO_CREATE_CONFIG, ConfigType::Boolean, Importance::Medium,
                "Create the table from the record schema if it does not exist")
                .default_value(false),
        )
        .define(
            ConfigKey::new(AUTO_EVOLVE_CONFIG, ConfigType::Boolean, Importance::Medium,
                "Add nullable columns for record fields the table does not have")
                .default_value(false),
        )
        .define(
            ConfigKey::new(BATCH_SIZE_CONFIG, ConfigType::Int, Importance::Medium,
                "Rows written per statement at most")
                .default_value(3000)
                .validator(at_least(1)),
        );
    if with_offsets_table {
        def.define(
            ConfigKey::new(
                OFFSETS_TABLE_CONFIG,
                ConfigType::String,
                Importance::Medium,
                "Table holding the consumed offsets, written in the same transaction as the rows",
            )
            .default_value(OFFSETS_TABLE_DEFAULT),
        )
    } else {
        def
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PkMode {
    None,
    RecordKey,
    RecordValue,
}

#[derive(Debug, Clone)]
pub struct Connection {
    pub url: String,
    pub user: Option<String>,
    pub password: Option<String>,
}

impl Connection {
    fn parse(p: &connect_api::config::ParsedConfig) -> Result<Self> {
        let url = p
            .string(CONNECTION_URL_CONFIG)
            .ok_or_else(|| ConnectError::missing_required(CONNECTION_URL_CONFIG))?;
        // A bad URL (unknown sslmode, missing root certificate, ...) fails the connector at start.
        super::url::parse(url)?;
        Ok(Self {
            url: url.to_owned(),
            user: p.string(CONNECTION_USER_CONFIG).map(str::to_owned),
            password: p
                .password(CONNECTION_PASSWORD_CONFIG)
                .map(|pw| pw.value().to_owned()),
        })
    }

    pub async fn pool(&self) -> Result<sqlx::PgPool> {
        super::pg::connect(&self.url, self.user.as_deref(), self.password.as_deref()).await
    }
}

#[derive(Debug, Clone)]
pub struct SinkConfig {
    pub connection: Connection,
    pub table_name_format: String,
    pub pk_mode: PkMode,
    pub pk_fields: Vec<String>,
    pub delete_enabled: bool,
    pub auto_create: bool,
    pub auto_evolve: bool,
    pub batch_size: NonZeroUsize,
    /// `Some`: the offsets-with-data sink.
    pub offsets_table: Option<String>,
}

impl SinkConfig {
    pub fn parse(props: &ConfigMap, with_offsets_table: bool) -> Result<Self> {
        let p = sink_config_def(with_offsets_table).parse(props)?;
        let mode = p.string(PK_MODE_CONFIG).unwrap_or("none");
        let pk_mode = match mode {
            "none" => PkMode::None,
            "record_key" => PkMode::RecordKey,
            "record_value" => PkMode::RecordValue,
            other => {
                return Err(ConnectError::invalid_value(
                    PK_MODE_CONFIG,
                    other,
                    "must be one of none, record_key, record_value",
                ));
            }
        };
        if !with_offsets_table && pk_mode == PkMode::None {
            return Err(ConnectError::invalid_value(
                PK_MODE_CONFIG,
                mode,
                "the upsert sink needs record_key or record_value",
            ));
        }
        let delete_enabled = p.boolean(DELETE_ENABLED_CONFIG).unwrap_or(false);
        if delete_enabled && pk_mode != PkMode::RecordKey {
            return Err(ConnectError::invalid_value(
                DELETE_ENABLED_CONFIG,
                "true",
                "deletes need pk.mode=record_key",
            ));
        }
        Ok(Self {
            connection: Connection::parse(&p)?,
            table_name_format: p
                .string(TABLE_NAME_FORMAT_CONFIG)
                .unwrap_or("${topic}")
                .to_owned(),
            pk_mode,
            pk_fields: p
                .list(PK_FIELDS_CONFIG)
                .iter()
                .filter(|f| !f.is_empty())
                .cloned()
                .collect(),
            delete_enabled,
            auto_create: p.boolean(AUTO_CREATE_CONFIG).unwrap_or(false),
            auto_evolve: p.boolean(AUTO_EVOLVE_CONFIG).unwrap_or(false),
            batch_size: p
                .int(BATCH_SIZE_CONFIG)
                .and_then(|v| usize::try_from(v).ok())
                .and_then(NonZeroUsize::new)
                .unwrap_or(NonZeroUsize::MIN),
            offsets_table: with_offsets_table.then(|| {
                p.string(OFFSETS_TABLE_CONFIG)
                    .unwrap_or(OFFSETS_TABLE_DEFAULT)
                    .to_owned()
            }),
        })
    }

    pub fn table_for(&self, topic: &str) -> String {
        self.table_name_format.replace("${topic}", topic)
    }
}

pub fn source_config_def() -> ConfigDef {
    connection_keys(ConfigDef::new())
        .define(ConfigKey::new(TABLES_CONFIG, ConfigType::List, Importance::High,
            "Tables to read, split across tasks"))
        .define(
            ConfigKey::new(MODE_CONFIG, ConfigType::String, Importance::High,
                "incrementing or timestamp+incrementing")
                .default_value("incrementing"),
        )
        .define(ConfigKey::new(INCREMENTING_COLUMN_CONFIG, ConfigType::String, Importance::High,
            "A strictly increasing integer column (e.g. a bigserial id)"))
        .define(
            ConfigKey::new(TIMESTAMP_COLUMN_CONFIG, ConfigType::String, Importance::Medium,
                "The timestamp column of timestamp+incrementing mode")
                .default_null(),
        )
        .define(
            ConfigKey::new(TRANSACTION_ID_COLUMN_CONFIG, ConfigType::String, Importance::Low,
                "With transaction.boundary=connector: rows sharing this column's value are committed in one Kafka transaction")
                .default_null(),
        )
        .define(
            ConfigKey::new(BATCH_MAX_ROWS_CONFIG, ConfigType::Int, Importance::Low,
                "Rows returned by one poll at most")
                .default_value(100)
                .validator(at_least(1)),
        )
        .define(
            ConfigKey::new(POLL_INTERVAL_CONFIG, ConfigType::Int, Importance::High,
                "How long to wait before polling a table again when it had no new rows")
                .default_value(5000)
                .validator(at_least(0)),
        )
        .define(
            ConfigKey::new(TOPIC_PREFIX_CONFIG, ConfigType::String, Importance::High,
                "Records of table T go to topic <prefix>T")
                .default_value(""),
        )
}

#[derive(Debug, Clone)]
pub struct SourceConfig {
    pub connection: Connection,
    pub tables: Vec<String>,
    pub incrementing_column: String,
    /// `Some` in timestamp+incrementing mode.
    pub timestamp_column: Option<String>,
    pub transaction_id_column: Option<String>,
    pub batch_max_rows: NonZeroUsize,
    pub poll_interval: Duration,
    pub topic_prefix: String,
}

impl SourceConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = source_config_def().parse(props)?;
        let mode = p.string(MODE_CONFIG).unwrap_or("incrementing");
        let timestamp_column = p.string(TIMESTAMP_COLUMN_CONFIG).map(str::to_owned);
        match (mode, &timestamp_column) {
            ("incrementing", _) => {}
            ("timestamp+incrementing", Some(_)) => {}
            ("timestamp+incrementing", None) => {
                return Err(ConnectError::missing_required(TIMESTAMP_COLUMN_CONFIG));
            }
            (other, _) => {
                return Err(ConnectError::invalid_value(
                    MODE_CONFIG,
                    other,
                    "must be incrementing or timestamp+incrementing",
                ));
            }
        }
        let tables: Vec<String> = p
            .list(TABLES_CONFIG)
            .iter()
            .filter(|t| !t.is_empty())
            .cloned()
            .collect();
        if tables.is_empty() {
            return Err(ConnectError::invalid_value(
                TABLES_CONFIG,
                "",
                "name at least one table",
            ));
        }
        Ok(Self {
            connection: Connection::parse(&p)?,
            tables,
            incrementing_column: p
                .string(INCREMENTING_COLUMN_CONFIG)
                .ok_or_else(|| ConnectError::missing_required(INCREMENTING_COLUMN_CONFIG))?
                .to_owned(),
            timestamp_column: if mode == "incrementing" {
                None
            } else {
                timestamp_column
            },
            transaction_id_column: p.string(TRANSACTION_ID_COLUMN_CONFIG).map(str::to_owned),
            batch_max_rows: p
                .int(BATCH_MAX_ROWS_CONFIG)
                .and_then(|v| usize::try_from(v).ok())
                .and_then(NonZeroUsize::new)
                .unwrap_or(NonZeroUsize::MIN),
            poll_interval: Duration::from_millis(
                p.int(POLL_INTERVAL_CONFIG).unwrap_or(5000).max(0) as u64,
            ),
            topic_prefix: p.string(TOPIC_PREFIX_CONFIG).unwrap_or("").to_owned(),
        })
    }
}
