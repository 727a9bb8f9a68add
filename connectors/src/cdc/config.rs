//! Keys of the Postgres change-data-capture source, named and defaulted as Debezium 3.6's
//! Postgres connector names them, and their typed form.
//!
//! Debezium keys this connector does not implement are defined too, so that setting one to
//! anything but Debezium's default is a validation error naming it: a Debezium configuration
//! moved here never runs with one of its settings silently dropped.

use std::time::Duration;

use connect_api::config::{
    ConfigDef, ConfigKey, ConfigMap, ConfigType, Importance, ParsedConfig, TypedValue, validators,
};
use connect_api::error::{ConnectError, Result};
use regex::Regex;

pub const HOSTNAME: &str = "database.hostname";
pub const PORT: &str = "database.port";
pub const USER: &str = "database.user";
pub const PASSWORD: &str = "database.password";
pub const DBNAME: &str = "database.dbname";
pub const SSLMODE: &str = "database.sslmode";
pub const SSLROOTCERT: &str = "database.sslrootcert";
pub const CONNECTION_URL: &str = "connection.url";
pub const TOPIC_PREFIX: &str = "topic.prefix";
pub const TABLE_INCLUDE: &str = "table.include.list";
pub const TABLE_EXCLUDE: &str = "table.exclude.list";
pub const COLUMN_INCLUDE: &str = "column.include.list";
pub const COLUMN_EXCLUDE: &str = "column.exclude.list";
pub const SLOT_NAME: &str = "slot.name";
pub const PUBLICATION_NAME: &str = "publication.name";
pub const PUBLICATION_AUTOCREATE: &str = "publication.autocreate.mode";
pub const PLUGIN_NAME: &str = "plugin.name";
pub const SNAPSHOT_MODE: &str = "snapshot.mode";
pub const SNAPSHOT_FETCH_SIZE: &str = "snapshot.fetch.size";
pub const MAX_BATCH_SIZE: &str = "max.batch.size";
pub const HEARTBEAT_INTERVAL: &str = "heartbeat.interval.ms";
pub const HEARTBEAT_ACTION_QUERY: &str = "heartbeat.action.query";
pub const HEARTBEAT_TOPICS_PREFIX: &str = "topic.heartbeat.prefix";
pub const TOMBSTONES_ON_DELETE: &str = "tombstones.on.delete";
pub const DECIMAL_HANDLING: &str = "decimal.handling.mode";
pub const TIME_PRECISION: &str = "time.precision.mode";
pub const INCLUDE_UNKNOWN_DATATYPES: &str = "include.unknown.datatypes";
pub const PROVIDE_TRANSACTION_METADATA: &str = "provide.transaction.metadata";
pub const UNAVAILABLE_PLACEHOLDER: &str = "unavailable.value.placeholder";

/// Debezium keys not implemented here, with Debezium's default: any other value is refused.
#[rustfmt::skip]
const NOT_IMPLEMENTED: &[(&str, &str)] = &[
    ("schema.include.list", ""),
    ("schema.exclude.list", ""),
    ("message.key.columns", ""),
    ("slot.drop.on.stop", "false"),
    ("slot.stream.params", ""),
    ("slot.failover", "false"),
    ("publish.via.partition.root", "false"),
    ("snapshot.select.statement.overrides", ""),
    ("snapshot.include.collection.list", ""),
    ("snapshot.isolation.mode", "serializable"),
    ("snapshot.locking.mode", "none"),
    ("snapshot.delay.ms", "0"),
    ("signal.data.collection", ""),
    ("signal.enabled.channels", "source"),
    ("incremental.snapshot.chunk.size", "1024"),
    ("read.only", "false"),
    ("skipped.operations", "t"),
    ("binary.handling.mode", "bytes"),
    ("hstore.handling.mode", "json"),
    ("interval.handling.mode", "numeric"),
    ("money.fraction.digits", "2"),
    ("converters", ""),
    ("column.propagate.source.type", ""),
    ("datatype.propagate.source.type", ""),
    ("column.mask.hash.v2.hash", ""),
    ("event.processing.failure.handling.mode", "fail"),
    ("table.ignore.builtin", "true"),
    ("include.schema.comments", "false"),
    ("schema.name.adjustment.mode", "none"),
    ("field.name.adjustment.mode", "none"),
    ("flush.lsn.source", "true"),
    ("lsn.flush.timeout.ms", "30000"),
    ("database.initial.statements", ""),
    ("database.sslcert", ""),
    ("database.sslkey", ""),
    ("database.sslpassword", ""),
    ("database.sslfactory", ""),
    ("database.tcpKeepAlive", "true"),
    ("status.update.interval.ms", "10000"),
    ("xmin.fetch.interval.ms", "0"),
    ("topic.naming.strategy", "io.debezium.schema.SchemaTopicNamingStrategy"),
    ("topic.delimiter", "."),
    ("topic.transaction", "transaction"),
    ("custom.metric.tags", ""),
];

/// `snapshot.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotMode {
    /// Snapshot once (no offsets yet), then stream.
    Initial,
    /// Snapshot once and stop.
    InitialOnly,
    /// Stream only (`never` in Debezium before 2.7).
    NoData,
    /// Snapshot when there are no offsets, or the slot lost the stored position.
    WhenNeeded,
    /// Snapshot at every start, then stream.
    Always,
}

/// `decimal.handling.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecimalMode {
    Precise,
    Double,
    String,
}

/// `time.precision.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimePrecision {
    Adaptive,
    AdaptiveTimeMicroseconds,
    Connect,
}

/// `publication.autocreate.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicationAutocreate {
    AllTables,
    Disabled,
    Filtered,
}

/// A connector's settings.
#[derive(Debug, Clone)]
pub struct CdcConfig {
    /// libpq URL (no `replication` parameter).
    pub url: String,
    pub dbname: String,
    pub topic_prefix: String,
    pub table_include: Vec<Regex>,
    pub table_exclude: Vec<Regex>,
    pub column_include: Vec<Regex>,
    pub column_exclude: Vec<Regex>,
    pub slot_name: String,
    pub publication_name: String,
    pub publication_autocreate: PublicationAutocreate,
    pub snapshot_mode: SnapshotMode,
    pub snapshot_fetch_size: usize,
    pub max_batch_size: usize,
    pub heartbeat_interval: Option<Duration>,
    pub heartbeat_action_query: Option<String>,
    pub heartbeat_topic: String,
    pub tombstones_on_delete: bool,
    pub decimal_mode: DecimalMode,
    pub time_precision: TimePrecision,
    pub include_unknown_datatypes: bool,
    pub provide_transaction_metadata: bool,
    pub unavailable_placeholder: String,
}

fn key(name: &str, t: ConfigType, importance: Importance, doc: &str) -> ConfigKey {
    ConfigKey::new(name, t, importance, doc)
}

fn regex_list(name: &'static str, doc: &str) -> ConfigKey {
    key(name, ConfigType::List, Importance::High, doc)
        .default_value(TypedValue::List(Vec::new()))
        .validator(validators::lambda("regular expressions", move |k, v| {
            if let Some(TypedValue::List(items)) = v {
                for item in items {
                    anchored(item).map_err(|e| ConnectError::invalid_value(k, item, &e))?;
                }
            }
            Ok(())
        }))
}

/// Debezium matches the whole name (`Pattern.matcher(..).matches()`).
fn anchored(pattern: &str) -> std::result::Result<Regex, String> {
    Regex::new(&format!("^(?:{})$", pattern.trim())).map_err(|e| e.to_string())
}

pub fn config_def() -> ConfigDef {
    let mut def = ConfigDef::new()
        .define(key(HOSTNAME, ConfigType::String, Importance::High, "Resolvable hostname or IP address of the database server (or connection.url).").default_null())
        .define(key(PORT, ConfigType::Int, Importance::High, "Port of the database server.").default_value(5432))
        .define(key(USER, ConfigType::String, Importance::High, "Name of the database user (with the REPLICATION attribute) to connect as.").default_null())
        .define(key(PASSWORD, ConfigType::Password, Importance::High, "Password of the database user.").default_null())
        .define(key(DBNAME, ConfigType::String, Importance::High, "The name of the database to capture changes from.").default_null())
        .define(key(SSLMODE, ConfigType::String, Importance::Medium, "disable, prefer, require, verify-ca or verify-full.").default_value("prefer")
            .validator(validators::one_of(&["disable", "allow", "prefer", "require", "verify-ca", "verify-full"])))
        .define(key(SSLROOTCERT, ConfigType::String, Importance::Medium, "The root certificate(s) the server's certificate is checked against.").default_null())
        .define(key(CONNECTION_URL, ConfigType::String, Importance::High, "Instead of the database.* keys: a libpq or pgJDBC URL, as the project's other Postgres connectors take it.").default_null())
        .define(key(TOPIC_PREFIX, ConfigType::String, Importance::High, "Prefix of every topic name: <prefix>.<schema>.<table>.").validator(validators::non_empty_string()))
        .define(regex_list(TABLE_INCLUDE, "Regular expressions matching <schema>.<table> of the tables to capture."))
        .define(regex_list(TABLE_EXCLUDE, "Regular expressions matching <schema>.<table> of tables not to capture."))
        .define(regex_list(COLUMN_INCLUDE, "Regular expressions matching <schema>.<table>.<column> of the columns to include."))
        .define(regex_list(COLUMN_EXCLUDE, "Regular expressions matching <schema>.<table>.<column> of the columns to leave out."))
        .define(key(SLOT_NAME, ConfigType::String, Importance::Medium, "The logical replication slot.").default_value("debezium")
            .validator(validators::lambda("a slot name", |k, v| {
                let v = v.and_then(TypedValue::as_str).unwrap_or_default();
                if v.is_empty() || v.len() > 63 || !v.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
                    Err(ConnectError::invalid_value(k, v, "PostgreSQL's slot names are 1 to 63 lower-case letters, digits and underscores"))
                } else {
                    Ok(())
                }
            })))
        .define(key(PUBLICATION_NAME, ConfigType::String, Importance::Low, "The publication pgoutput streams.").default_value("dbz_publication"))
        .define(key(PUBLICATION_AUTOCREATE, ConfigType::String, Importance::Low, "all_tables, disabled or filtered.").default_value("all_tables")
            .validator(validators::one_of(&["all_tables", "disabled", "filtered"])))
        .define(key(PLUGIN_NAME, ConfigType::String, Importance::Medium, "The logical decoding plugin: pgoutput.").default_value("pgoutput")
            .validator(validators::lambda("pgoutput", |k, v| match v.and_then(TypedValue::as_str) {
                Some("pgoutput") | None => Ok(()),
                Some(other) => Err(ConnectError::invalid_value(k, other, "this connector reads pgoutput, PostgreSQL's built-in plugin, only")),
            })))
        .define(key(SNAPSHOT_MODE, ConfigType::String, Importance::Medium, "initial, initial_only, no_data (never), when_needed or always.").default_value("initial")
            .validator(validators::one_of(&["initial", "initial_only", "no_data", "never", "when_needed", "always"])))
        .define(key(SNAPSHOT_FETCH_SIZE, ConfigType::Int, Importance::Medium, "Rows fetched at a time while snapshotting.").default_value(10240).validator(validators::at_least(1)))
        .define(key(MAX_BATCH_SIZE, ConfigType::Int, Importance::Medium, "Most records a poll returns.").default_value(2048).validator(validators::at_least(1)))
        .define(key(HEARTBEAT_INTERVAL, ConfigType::Int, Importance::Medium, "Milliseconds between heartbeat records (0: none). Heartbeats let the slot advance while the captured tables are idle.").default_value(0).validator(validators::at_least(0)))
        .define(key(HEARTBEAT_ACTION_QUERY, ConfigType::String, Importance::Low, "A statement run on the database at each heartbeat.").default_null())
        .define(key(HEARTBEAT_TOPICS_PREFIX, ConfigType::String, Importance::Low, "Heartbeats go to <prefix>.<topic.prefix>.").default_value("__debezium-heartbeat"))
        .define(key(TOMBSTONES_ON_DELETE, ConfigType::Boolean, Importance::Medium, "A tombstone after each delete event.").default_value(true))
        .define(key(DECIMAL_HANDLING, ConfigType::String, Importance::Medium, "precise, double or string.").default_value("precise")
            .validator(validators::one_of(&["precise", "double", "string"])))
        .define(key(TIME_PRECISION, ConfigType::String, Importance::Medium, "adaptive, adaptive_time_microseconds or connect.").default_value("adaptive")
            .validator(validators::one_of(&["adaptive", "adaptive_time_microseconds", "connect"])))
        .define(key(INCLUDE_UNKNOWN_DATATYPES, ConfigType::Boolean, Importance::Low, "Columns of types without a mapping are sent as bytes of their text (else a table with one fails the task, naming the column).").default_value(false))
        .define(key(PROVIDE_TRANSACTION_METADATA, ConfigType::Boolean, Importance::Low, "The transaction block in each event.").default_value(false))
        .define(key(UNAVAILABLE_PLACEHOLDER, ConfigType::String, Importance::Low, "Stands for TOASTed values PostgreSQL did not send.").default_value("__debezium_unavailable_value"));
    for (name, default) in NOT_IMPLEMENTED {
        let default: &'static str = default;
        def = def.define(
            key(name, ConfigType::String, Importance::Low, "Debezium's; not implemented here: only its default is accepted.")
                .default_null()
                .validator(validators::lambda(default, move |k, v| {
                    match v.and_then(TypedValue::as_str) {
                        None => Ok(()),
                        Some(s) if s.trim() == default => Ok(()),
                        Some(s) => Err(ConnectError::invalid_value(
                            k,
                            s,
                            &format!("{k} is not implemented by this connector (only Debezium's default, {default:?}, is accepted)"),
                        )),
                    }
                })),
        );
    }
    def
}

fn regexes(parsed: &ParsedConfig, key: &str) -> Result<Vec<Regex>> {
    parsed
        .list(key)
        .iter()
        .map(|p| anchored(p).map_err(|e| ConnectError::invalid_value(key, p, &e)))
        .collect()
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

impl CdcConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let parsed = config_def().parse(props)?;
        let url = match parsed.string(CONNECTION_URL) {
            // The replication connection reads libpq URLs.
            Some(url) if url.starts_with("jdbc:") => {
                return Err(ConnectError::invalid_value(
                    CONNECTION_URL,
                    url,
                    "the change data capture source takes a libpq URL (postgres://user@host:5432/db?sslmode=...) or the database.* keys",
                ));
            }
            Some(url) => url.to_owned(),
            None => {
                let missing = |k: &str| ConnectError::missing_required(k);
                let host = parsed.string(HOSTNAME).ok_or_else(|| missing(HOSTNAME))?;
                let user = parsed.string(USER).ok_or_else(|| missing(USER))?;
                let db = parsed.string(DBNAME).ok_or_else(|| missing(DBNAME))?;
                let port = parsed.int(PORT).unwrap_or(5432);
                let auth = match parsed.password(PASSWORD) {
                    Some(p) => format!("{}:{}", enc(user), enc(p.value())),
                    None => enc(user),
                };
                let mut url = format!(
                    "postgresql://{auth}@{host}:{port}/{}?sslmode={}",
                    enc(db),
                    parsed.string(SSLMODE).unwrap_or("prefer")
                );
                if let Some(root) = parsed.string(SSLROOTCERT) {
                    url.push_str(&format!("&sslrootcert={}", enc(root)));
                }
                url
            }
        };
        let dbname = crate::jdbc::url::parse(&url)?
            .options
            .get_database()
            .unwrap_or("postgres")
            .to_owned();
        let prefix = parsed.string(TOPIC_PREFIX).unwrap_or_default().to_owned();
        let heartbeat = parsed.int(HEARTBEAT_INTERVAL).unwrap_or(0);
        Ok(CdcConfig {
            url,
            dbname,
            table_include: regexes(&parsed, TABLE_INCLUDE)?,
            table_exclude: regexes(&parsed, TABLE_EXCLUDE)?,
            column_include: regexes(&parsed, COLUMN_INCLUDE)?,
            column_exclude: regexes(&parsed, COLUMN_EXCLUDE)?,
            slot_name: parsed.string(SLOT_NAME).unwrap_or("debezium").to_owned(),
            publication_name: parsed
                .string(PUBLICATION_NAME)
                .unwrap_or("dbz_publication")
                .to_owned(),
            publication_autocreate: match parsed.string(PUBLICATION_AUTOCREATE) {
                Some("disabled") => PublicationAutocreate::Disabled,
                Some("filtered") => PublicationAutocreate::Filtered,
                _ => PublicationAutocreate::AllTables,
            },
            snapshot_mode: match parsed.string(SNAPSHOT_MODE) {
                Some("initial_only") => SnapshotMode::InitialOnly,
                Some("no_data" | "never") => SnapshotMode::NoData,
                Some("when_needed") => SnapshotMode::WhenNeeded,
                Some("always") => SnapshotMode::Always,
                _ => SnapshotMode::Initial,
            },
            snapshot_fetch_size: parsed.int(SNAPSHOT_FETCH_SIZE).unwrap_or(10240).max(1) as usize,
            max_batch_size: parsed.int(MAX_BATCH_SIZE).unwrap_or(2048).max(1) as usize,
            heartbeat_interval: (heartbeat > 0).then(|| Duration::from_millis(heartbeat as u64)),
            heartbeat_action_query: parsed.string(HEARTBEAT_ACTION_QUERY).map(str::to_owned),
            heartbeat_topic: format!(
                "{}.{prefix}",
                parsed
                    .string(HEARTBEAT_TOPICS_PREFIX)
                    .unwrap_or("__debezium-heartbeat")
            ),
            topic_prefix: prefix,
            tombstones_on_delete: parsed.boolean(TOMBSTONES_ON_DELETE).unwrap_or(true),
            decimal_mode: match parsed.string(DECIMAL_HANDLING) {
                Some("double") => DecimalMode::Double,
                Some("string") => DecimalMode::String,
                _ => DecimalMode::Precise,
            },
            time_precision: match parsed.string(TIME_PRECISION) {
                Some("adaptive_time_microseconds") => TimePrecision::AdaptiveTimeMicroseconds,
                Some("connect") => TimePrecision::Connect,
                _ => TimePrecision::Adaptive,
            },
            include_unknown_datatypes: parsed.boolean(INCLUDE_UNKNOWN_DATATYPES).unwrap_or(false),
            provide_transaction_metadata: parsed
                .boolean(PROVIDE_TRANSACTION_METADATA)
                .unwrap_or(false),
            unavailable_placeholder: parsed
                .string(UNAVAILABLE_PLACEHOLDER)
                .unwrap_or("__debezium_unavailable_value")
                .to_owned(),
        })
    }

    /// Whether `<schema>.<table>` is captured.
    pub fn captures_table(&self, schema: &str, table: &str) -> bool {
        let name = format!("{schema}.{table}");
        if schema == "pg_catalog" || schema == "information_schema" {
            return false;
        }
        (self.table_include.is_empty() || self.table_include.iter().any(|r| r.is_match(&name)))
            && !self.table_exclude.iter().any(|r| r.is_match(&name))
    }

    /// Whether `<schema>.<table>.<column>` is captured.
    pub fn captures_column(&self, schema: &str, table: &str, column: &str) -> bool {
        let name = format!("{schema}.{table}.{column}");
        (self.column_include.is_empty() || self.column_include.iter().any(|r| r.is_match(&name)))
            && !self.column_exclude.iter().any(|r| r.is_match(&name))
    }

    /// The URL of a replication connection (`replication=database`).
    pub fn replication_url(&self) -> String {
        let sep = if self.url.contains('?') { '&' } else { '?' };
        format!("{}{sep}replication=database", self.url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> ConfigMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn debeziums_keys_build_the_url_and_filters() {
        let c = CdcConfig::parse(&props(&[
            (HOSTNAME, "db"),
            (USER, "u s"),
            (PASSWORD, "p@ss"),
            (DBNAME, "shop"),
            (TOPIC_PREFIX, "dbserver1"),
            (TABLE_INCLUDE, "public.orders,inventory\\..*"),
            (SNAPSHOT_MODE, "never"),
        ]))
        .unwrap();
        assert_eq!(c.url, "postgresql://u+s:p%40ss@db:5432/shop?sslmode=prefer");
        assert_eq!(c.dbname, "shop");
        assert!(c.captures_table("public", "orders"));
        assert!(c.captures_table("inventory", "items"));
        assert!(!c.captures_table("public", "orders2"));
        assert_eq!(c.snapshot_mode, SnapshotMode::NoData);
        assert_eq!(c.heartbeat_topic, "__debezium-heartbeat.dbserver1");
    }

    #[test]
    fn a_debezium_key_not_implemented_is_an_error_naming_it() {
        let base = [(CONNECTION_URL, "postgres://u@h/db"), (TOPIC_PREFIX, "p")];
        let mut p = props(&base);
        p.insert("binary.handling.mode".into(), "base64".into());
        let e = CdcConfig::parse(&p).unwrap_err();
        assert!(e.to_string().contains("binary.handling.mode"), "{e}");
        let mut p = props(&base);
        p.insert("binary.handling.mode".into(), "bytes".into());
        CdcConfig::parse(&p).unwrap();
        let mut p = props(&base);
        p.insert(PLUGIN_NAME.into(), "decoderbufs".into());
        assert!(
            CdcConfig::parse(&p)
                .unwrap_err()
                .to_string()
                .contains(PLUGIN_NAME)
        );
    }
}
