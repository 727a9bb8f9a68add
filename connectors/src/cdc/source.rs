//! The connector and its one task: snapshot, then stream.
//!
//! ```text
//!  start: checks (wal_level=logical, REPLICATION, replica identities), publication, offsets
//!   no offsets (snapshot.mode initial, initial_only, when_needed; always every start):
//!     CREATE_REPLICATION_SLOT <slot> LOGICAL pgoutput EXPORT_SNAPSHOT   ──▶ snapshot S, LSN L0
//!     BEGIN REPEATABLE READ; SET TRANSACTION SNAPSHOT S  (a second, ordinary connection)
//!     poll: each captured table's rows (cursor, snapshot.fetch.size at a time) ──▶ op "r",
//!           offset {"snapshot":"INITIAL","last_snapshot_record":false|true,"lsn":L0}
//!   then (or with offsets): START_REPLICATION SLOT <slot> LOGICAL 0/0 (the slot's position)
//!     poll: Begin(xid, commit lsn C) Insert/Update/Delete... Commit ──▶ op "c"/"u"/"d"
//!           (+ tombstone), offset {"lsn_commit":C,"event_serial":n,"lsn":..,"txId":..}
//!  commit(): the slot's confirmed position moves to the end of every PostgreSQL transaction
//!            whose records the runtime has committed (commit_record), never further
//! ```
//!
//! # Exactly-once
//!
//! Records and their offsets commit in one Kafka transaction (the runtime's). The slot is
//! confirmed only up to transactions fully committed to Kafka, so PostgreSQL resends from
//! there after a crash; what it resends that the stored offset says was already sent (an
//! earlier commit LSN, or the first `event_serial` events of the stored transaction) is
//! skipped. The snapshot and the stream meet at the slot's consistent point: the exported
//! snapshot is the database exactly at L0, and the stream starts at L0.
//!
//! Not yet: a snapshot interrupted by a crash starts over (its rows are sent again, as
//! Debezium does); resuming it without duplicates is the next step.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap, ConfigValue};
use connect_api::connector::{
    ConnectorContext, ConnectorTransactionBoundaries, ExactlyOnceSupport, RecordMetadata,
    SourceConnector, SourceTask, SourceTaskContext,
};
use connect_api::data::{Schema, SchemaBuilder, Struct, Value};
use connect_api::error::{ConnectError, Result};
use connect_api::record::{SourceOffset, SourcePartition, SourceRecord, json_map};
use pg_walstream::{
    ChangeEvent, EventType, LogicalReplicationStream, ReplicationSlotOptions,
    ReplicationStreamConfig, RetryConfig, SharedLsnFeedback, StreamingMode,
};
use serde_json::{Value as Json, json};
use sqlx::postgres::PgConnection;
use sqlx::{Connection, PgPool, Row};
use tokio::sync::mpsc;

use super::config::{CdcConfig, PublicationAutocreate, SnapshotMode, config_def};
use super::envelope::{Column, Op, SourceInfo, TableSchema};
use super::segments::{self, Segment, Start};
use super::types::{PgType, builtin};
use crate::jdbc::pg::{db_error, quote};

const SERVER: &str = "server";
const LSN: &str = "lsn";
const LSN_COMMIT: &str = "lsn_commit";
const LSN_PROC: &str = "lsn_proc";
const EVENT_SERIAL: &str = "event_serial";
const TX_ID: &str = "txId";
const TS_USEC: &str = "ts_usec";
const SNAPSHOT: &str = "snapshot";
const LAST_SNAPSHOT_RECORD: &str = "last_snapshot_record";
/// Ours: the snapshot's position (table, last key sent) and its segments ([`segments`]).
const SNAPSHOT_TABLE: &str = "snapshot_table";
const SNAPSHOT_KEY: &str = "snapshot_key";
const SEGMENTS: &str = "snapshot_segments";

#[derive(Debug, Default)]
pub struct PostgresCdcSourceConnector {
    config: ConfigMap,
}

#[async_trait]
impl SourceConnector for PostgresCdcSourceConnector {
    type Task = PostgresCdcSourceTask;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }

    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        let mut values = config_def().validate(config);
        // The connection: database.* or connection.url.
        if config.get(super::config::CONNECTION_URL).is_none() {
            for k in [
                super::config::HOSTNAME,
                super::config::USER,
                super::config::DBNAME,
            ] {
                if config.get(k).is_none_or(|v| v.trim().is_empty())
                    && let Some(v) = values.iter_mut().find(|v| v.name == k)
                {
                    v.errors.push(format!(
                        "Missing required configuration \"{k}\" (or connection.url)"
                    ));
                }
            }
        }
        values
    }

    async fn start(&mut self, _ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        CdcConfig::parse(&config)?;
        self.config = config;
        Ok(())
    }

    /// One task, as Debezium's: one slot is read by one session.
    fn task_configs(&self, _max_tasks: usize) -> Result<Vec<ConfigMap>> {
        Ok(vec![self.config.clone()])
    }

    async fn stop(&mut self) -> Result<()> {
        Ok(())
    }

    fn exactly_once_support(&self, _config: &ConfigMap) -> ExactlyOnceSupport {
        ExactlyOnceSupport::Supported
    }

    /// One Kafka transaction per PostgreSQL transaction.
    fn can_define_transaction_boundaries(
        &self,
        _config: &ConfigMap,
    ) -> ConnectorTransactionBoundaries {
        ConnectorTransactionBoundaries::Supported
    }
}

/// Reads the catalog: captured tables, their columns and types.
struct Catalog {
    pool: PgPool,
    types: HashMap<(u32, i32), PgType>,
    tables: HashMap<(String, String), Arc<TableSchema>>,
}

impl Catalog {
    fn pg_error(what: &str) -> impl Fn(sqlx::Error) -> ConnectError + '_ {
        move |e| db_error(what, e)
    }

    async fn pg_type(&mut self, oid: u32, typmod: i32) -> Result<PgType> {
        if let Some(t) = builtin(oid, typmod) {
            return Ok(t);
        }
        if let Some(t) = self.types.get(&(oid, typmod)) {
            return Ok(t.clone());
        }
        let row = sqlx::query(
            "SELECT t.typname::text, t.typtype::text, t.typelem::int8, t.typbasetype::int8, t.typtypmod, \
             (SELECT string_agg(e.enumlabel::text, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid) \
             FROM pg_type t WHERE t.oid = $1::int8::oid",
        )
        .bind(i64::from(oid))
        .fetch_one(&self.pool)
        .await
        .map_err(Self::pg_error("failed to read pg_type"))?;
        let name: String = row.get(0);
        let kind: String = row.get(1);
        let elem: i64 = row.get(2);
        let base: i64 = row.get(3);
        let base_mod: i32 = row.get(4);
        let labels: Option<String> = row.get(5);
        let t = match kind.as_str() {
            "e" => PgType::Enum(
                labels
                    .unwrap_or_default()
                    .split(',')
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
            "d" => {
                Box::pin(self.pg_type(base as u32, if typmod >= 0 { typmod } else { base_mod }))
                    .await?
            }
            _ if elem != 0 && name.starts_with('_') => {
                PgType::Array(Box::new(Box::pin(self.pg_type(elem as u32, typmod)).await?))
            }
            _ if name == "citext" => PgType::Text,
            _ => PgType::Unknown(name),
        };
        self.types.insert((oid, typmod), t.clone());
        Ok(t)
    }

    /// The captured tables, `schema.table`, in name order.
    async fn captured_tables(&self, config: &CdcConfig) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query(
            "SELECT n.nspname::text, c.relname::text, c.relreplident::text, \
             EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary) \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition \
             AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' \
             ORDER BY 1, 2",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(Self::pg_error("failed to list tables"))?;
        let mut out = Vec::new();
        for r in rows {
            let (schema, table, ident, pk): (String, String, String, bool) =
                (r.get(0), r.get(1), r.get(2), r.get(3));
            if !config.captures_table(&schema, &table) {
                continue;
            }
            if ident == "n" || (ident == "d" && !pk) {
                return Err(ConnectError::config(format!(
                    "Table {schema}.{table} has no primary key and REPLICA IDENTITY {}: PostgreSQL cannot publish its updates and deletes. Add a primary key, set REPLICA IDENTITY FULL (or USING INDEX), or leave the table out with table.exclude.list",
                    if ident == "n" { "NOTHING" } else { "DEFAULT" }
                )));
            }
            out.push((schema, table));
        }
        // The snapshot's order, which segments compare with (Rust's, not a collation's).
        out.sort_by_key(|(s, t)| format!("{s}.{t}"));
        Ok(out)
    }

    /// A table's captured columns and event schemas (from the catalog; `relation` gives the
    /// columns' types as a pgoutput Relation message sent them).
    async fn table(
        &mut self,
        config: &CdcConfig,
        schema: &str,
        table: &str,
        relation: Option<&[pg_walstream::RelationColumn]>,
    ) -> Result<Arc<TableSchema>> {
        let key = (schema.to_owned(), table.to_owned());
        if relation.is_none()
            && let Some(t) = self.tables.get(&key)
        {
            return Ok(t.clone());
        }
        let rows = sqlx::query(
            "SELECT a.attname::text, a.atttypid::int8, a.atttypmod, a.attnotnull, \
             COALESCE(a.attnum = ANY(i.indkey), false), format_type(a.atttypid, a.atttypmod), \
             (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d \
              WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.attgenerated = '') \
             FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary \
             WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped \
             ORDER BY a.attnum",
        )
        .bind(schema)
        .bind(table)
        .fetch_all(&self.pool)
        .await
        .map_err(Self::pg_error("failed to read a table's columns"))?;
        let mut columns = Vec::new();
        for r in rows {
            let name: String = r.get(0);
            if !config.captures_column(schema, table, &name) {
                continue;
            }
            let (mut oid, mut typmod) = (r.get::<i64, _>(1) as u32, r.get::<i32, _>(2));
            if let Some(rel) = relation.and_then(|rel| rel.iter().find(|c| *c.name == *name)) {
                (oid, typmod) = (rel.type_id, rel.type_modifier);
            }
            let not_null: bool = r.get(3);
            let primary_key: bool = r.get(4);
            let sql_type: String = r.get(5);
            let default: Option<String> = r.get(6);
            let ty = self.pg_type(oid, typmod).await?;
            let schema_of = ty.schema_with_default(
                &format!("{schema}.{table}.{name}"),
                !not_null && !primary_key,
                default.as_deref(),
                config.decimal_mode,
                config.time_precision,
                config.include_unknown_datatypes,
            )?;
            columns.push(Column {
                name,
                sql_type,
                ty,
                schema: schema_of,
                primary_key,
            });
        }
        let t = Arc::new(TableSchema::new(
            &config.topic_prefix,
            schema,
            table,
            columns,
        ));
        self.tables.insert(key, t.clone());
        Ok(t)
    }
}

/// Where the stream resumes: events of transactions committed before `commit_lsn` were sent,
/// and the first `serial` events of the one at `commit_lsn`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Position {
    commit_lsn: u64,
    serial: u64,
}

struct Snapshot {
    conn: PgConnection,
    tables: VecDeque<(String, String)>,
    /// The table whose cursor is open.
    current: Option<Arc<TableSchema>>,
    /// Resuming: the first table's rows start after this key.
    resume_key: Option<Vec<String>>,
    /// Which snapshot (LSN) read which rows; the last segment is this attempt's.
    segments: Vec<Segment>,
    lsn: u64,
    ts_us: i64,
    tx_id: Option<i64>,
    first: bool,
    /// The last row read, held back until the next shows it was not the snapshot's last.
    held: Option<SourceRecord>,
}

/// The open PostgreSQL transaction being streamed.
struct OpenTx {
    xid: u32,
    commit_lsn: u64,
    ts_us: i64,
    serial: u64,
    /// Per table, for the transaction block.
    per_table: HashMap<String, i64>,
}

struct Stream {
    events: mpsc::Receiver<std::result::Result<ChangeEvent, String>>,
    feedback: Arc<SharedLsnFeedback>,
    cancel: pg_walstream::CancellationToken,
    resume: Position,
    /// The position of the last record returned (where a reconnection resumes).
    emitted_pos: Position,
    tx: Option<OpenTx>,
    last_commit_lsn: u64,
    /// Relations by OID: (schema, table).
    relations: HashMap<u32, (String, String)>,
    /// Whether the relation of an OID is captured (the filters' answer, kept).
    captured: HashMap<u32, bool>,
    /// The server process of this stream's session (the slot's `active_pid` once it started).
    session_pid: Option<i32>,
    last_heartbeat: Instant,
    /// The snapshot's segments: a change committed at or before a row's segment is in the
    /// snapshot already ([`segments`]); empty once the stream is past them.
    segments: Vec<Segment>,
}

enum Phase {
    Snapshot(Box<Snapshot>),
    Streaming(Box<Stream>),
    /// The stream broke: reconnect from this position.
    Reconnect(Position, Vec<Segment>),
    /// `initial_only` after its snapshot.
    Done,
}

#[derive(Default)]
pub struct PostgresCdcSourceTask {
    ctx: Option<SourceTaskContext>,
    /// Shared, so the per-event path takes a reference count, not a copy.
    config: Option<Arc<CdcConfig>>,
    catalog: Option<Catalog>,
    phase: Option<Phase>,
    partition: SourcePartition,
    /// Records returned by poll, and records the runtime has acknowledged (commit_record).
    emitted: u64,
    acked: u64,
    /// (end LSN of a PostgreSQL transaction (or a heartbeat's position), records emitted up to
    /// and including it): confirmed to the slot once `acked` reaches the count.
    durable: VecDeque<(u64, u64)>,
    /// For the task's metrics: snapshot rows read, change events sent, the last lag check.
    snapshot_rows: u64,
    change_events: u64,
    last_lag_check: Option<Instant>,
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros() as i64
}

fn lsn_text(lsn: u64) -> String {
    format!("{:X}/{:X}", lsn >> 32, lsn & 0xffff_ffff)
}

fn parse_lsn(text: &str) -> Option<u64> {
    let (hi, lo) = text.split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

fn stream_error(e: impl std::fmt::Display) -> ConnectError {
    ConnectError::retriable(format!("logical replication: {e}"))
}

impl PostgresCdcSourceTask {
    fn config(&self) -> &CdcConfig {
        self.config.as_ref().expect("started")
    }

    async fn checks(pool: &PgPool, config: &CdcConfig) -> Result<()> {
        let level: String = sqlx::query_scalar("SHOW wal_level")
            .fetch_one(pool)
            .await
            .map_err(|e| db_error("failed to read wal_level", e))?;
        if level != "logical" {
            return Err(ConnectError::config(format!(
                "The server runs with wal_level={level}; logical decoding needs wal_level=logical (postgresql.conf, then a restart)"
            )));
        }
        let can: bool = sqlx::query_scalar(
            "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user",
        )
        .fetch_one(pool)
        .await
        .map_err(|e| db_error("failed to read the user's attributes", e))?;
        if !can {
            return Err(ConnectError::config(
                "The database user has neither the REPLICATION attribute nor superuser: ALTER ROLE ... REPLICATION (database.user)",
            ));
        }
        let _ = config;
        Ok(())
    }

    async fn ensure_publication(
        pool: &PgPool,
        config: &CdcConfig,
        tables: &[(String, String)],
    ) -> Result<()> {
        let exists: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)")
                .bind(&config.publication_name)
                .fetch_one(pool)
                .await
                .map_err(|e| db_error("failed to read pg_publication", e))?;
        let list = || {
            tables
                .iter()
                .map(|(s, t)| format!("{}.{}", quote(s), quote(t)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let sql = match (config.publication_autocreate, exists) {
            (PublicationAutocreate::Disabled, false) => {
                return Err(ConnectError::config(format!(
                    "Publication {} does not exist and publication.autocreate.mode is disabled",
                    config.publication_name
                )));
            }
            (PublicationAutocreate::AllTables, false) => format!(
                "CREATE PUBLICATION {} FOR ALL TABLES",
                quote(&config.publication_name)
            ),
            (PublicationAutocreate::Filtered, false) if !tables.is_empty() => format!(
                "CREATE PUBLICATION {} FOR TABLE {}",
                quote(&config.publication_name),
                list()
            ),
            (PublicationAutocreate::Filtered, true) if !tables.is_empty() => format!(
                "ALTER PUBLICATION {} SET TABLE {}",
                quote(&config.publication_name),
                list()
            ),
            _ => return Ok(()),
        };
        sqlx::query(&sql)
            .execute(pool)
            .await
            .map_err(|e| db_error(&format!("failed to run {sql}"), e))?;
        Ok(())
    }

    /// The slot's confirmed position (`None`: no such slot).
    async fn slot(pool: &PgPool, slot: &str) -> Result<Option<u64>> {
        let lsn: Option<Option<String>> = sqlx::query_scalar(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()",
        )
        .bind(slot)
        .fetch_optional(pool)
        .await
        .map_err(|e| db_error("failed to read pg_replication_slots", e))?;
        Ok(lsn.map(|l| l.as_deref().and_then(parse_lsn).unwrap_or(0)))
    }

    /// Ends a session still reading the slot (a stopped or frozen predecessor of this task:
    /// the runtime has fenced its Kafka producer, so it cannot commit anything any more).
    async fn take_slot(pool: &PgPool, slot: &str) -> Result<()> {
        for _ in 0..50 {
            let active: Option<i32> = sqlx::query_scalar(
                "SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1 AND active",
            )
            .bind(slot)
            .fetch_optional(pool)
            .await
            .map_err(|e| db_error("failed to read pg_replication_slots", e))?
            .flatten();
            let Some(pid) = active else { return Ok(()) };
            tracing::warn!(
                slot,
                pid,
                "the replication slot is in use by another session (a previous instance of this task); ending it"
            );
            let _ = sqlx::query("SELECT pg_terminate_backend($1)")
                .bind(pid)
                .execute(pool)
                .await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Err(ConnectError::retriable(format!(
            "replication slot {slot} stays in use by another session"
        )))
    }

    fn stream_config(config: &CdcConfig, export: bool) -> ReplicationStreamConfig {
        let mut c = ReplicationStreamConfig::new(
            config.slot_name.clone(),
            config.publication_name.clone(),
            1,
            StreamingMode::Off,
            Duration::from_secs(1),
            Duration::from_secs(30),
            Duration::from_secs(60),
            RetryConfig::default(),
        );
        if export {
            c = c.with_slot_options(ReplicationSlotOptions {
                snapshot: Some("export".into()),
                ..Default::default()
            });
        }
        c
    }

    /// Opens the snapshot's transaction on an ordinary connection, importing an exported
    /// snapshot: the new slot's (a fresh snapshot), or, resuming an interrupted one, a temporary
    /// slot's (a new segment from the last row sent; the slot keeps its position).
    async fn begin_snapshot(
        &mut self,
        tables: Vec<(String, String)>,
        resume: Option<(Vec<Segment>, String, Option<Vec<String>>)>,
    ) -> Result<Phase> {
        let config = self.config.clone().expect("started");
        let pool = &self.catalog.as_ref().expect("started").pool;
        let (slot_name, temporary) = match &resume {
            // Slot names are at most 63 bytes (PostgreSQL truncates longer ones).
            Some(_) => (
                format!(
                    "{}_r{}",
                    config.slot_name.chars().take(40).collect::<String>(),
                    now_us() % 1_000_000_000_000
                ),
                true,
            ),
            None => {
                if Self::slot(pool, &config.slot_name).await?.is_some() {
                    Self::take_slot(pool, &config.slot_name).await?;
                    sqlx::query("SELECT pg_drop_replication_slot($1)")
                        .bind(&config.slot_name)
                        .execute(pool)
                        .await
                        .map_err(|e| {
                            db_error("failed to drop the replication slot to snapshot again", e)
                        })?;
                }
                (config.slot_name.clone(), false)
            }
        };
        let mut stream_config = Self::stream_config(&config, true);
        stream_config.slot_name = slot_name.clone();
        stream_config.slot_options.temporary = temporary;
        let mut repl = LogicalReplicationStream::new(&config.replication_url(), stream_config)
            .await
            .map_err(stream_error)?;
        repl.ensure_replication_slot().await.map_err(stream_error)?;
        let name = repl
            .exported_snapshot_name()
            .ok_or_else(|| ConnectError::fatal("the new replication slot exported no snapshot"))?
            .to_owned();
        let lsn = Self::slot(pool, &slot_name)
            .await?
            .filter(|l| *l > 0)
            .ok_or_else(|| {
                ConnectError::retriable(format!(
                    "replication slot {slot_name} was created but has no consistent point"
                ))
            })?;
        let parsed = crate::jdbc::url::parse(&config.url)?;
        let mut conn = PgConnection::connect_with(&parsed.options)
            .await
            .map_err(|e| db_error("failed to connect for the snapshot", e))?;
        for sql in [
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY".to_owned(),
            format!("SET TRANSACTION SNAPSHOT '{name}'"),
            "SET LOCAL TimeZone = 'UTC'".to_owned(),
            "SET LOCAL IntervalStyle = 'postgres'".to_owned(),
            "SET LOCAL DateStyle = 'ISO, MDY'".to_owned(),
            "SET LOCAL bytea_output = 'hex'".to_owned(),
            "SET LOCAL extra_float_digits = 3".to_owned(),
        ] {
            sqlx::query(&sql)
                .execute(&mut conn)
                .await
                .map_err(|e| db_error(&format!("snapshot: {sql}"), e))?;
        }
        let tx_id: Option<i64> = sqlx::query_scalar("SELECT txid_current_if_assigned()")
            .fetch_one(&mut conn)
            .await
            .ok()
            .flatten();
        // The exported snapshot is imported: the replication session is no longer needed (a
        // temporary slot goes with it).
        drop(repl);
        let (segments, resume_key) = match resume {
            Some((mut segments, table, key)) => {
                tracing::info!(slot = %config.slot_name, %table, ?key, lsn = %lsn_text(lsn), "resuming the interrupted snapshot at a new snapshot");
                segments.push(Segment {
                    table,
                    key: key.clone(),
                    lsn,
                });
                (segments, key)
            }
            None => {
                tracing::info!(slot = %config.slot_name, lsn = %lsn_text(lsn), tables = tables.len(), "snapshot started");
                (
                    vec![Segment {
                        table: String::new(),
                        key: None,
                        lsn,
                    }],
                    None,
                )
            }
        };
        Ok(Phase::Snapshot(Box::new(Snapshot {
            conn,
            tables: tables.into(),
            current: None,
            resume_key,
            lsn: segments[0].lsn,
            segments,
            ts_us: now_us(),
            tx_id,
            first: true,
            held: None,
        })))
    }

    async fn begin_stream(&mut self, resume: Position, segments: Vec<Segment>) -> Result<Phase> {
        let config = self.config.clone().expect("started");
        let pool = &self.catalog.as_ref().expect("started").pool;
        if Self::slot(pool, &config.slot_name).await?.is_none() {
            return Err(ConnectError::config(format!(
                "Replication slot {} does not exist: the changes since this connector's offsets are gone from PostgreSQL. Reset the connector's offsets (DELETE /connectors/<name>/offsets) to snapshot again, or set snapshot.mode=when_needed",
                config.slot_name
            )));
        }
        Self::take_slot(pool, &config.slot_name).await?;
        let publication: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)")
                .bind(&config.publication_name)
                .fetch_one(pool)
                .await
                .map_err(|e| db_error("failed to read pg_publication", e))?;
        if !publication {
            return Err(ConnectError::config(format!(
                "Publication {} does not exist (publication.name): it was dropped while the connector ran; restart the connector to create it again (publication.autocreate.mode), or create it",
                config.publication_name
            )));
        }
        let mut repl = LogicalReplicationStream::new(
            &config.replication_url(),
            Self::stream_config(&config, false).with_messages(true),
        )
        .await
        .map_err(stream_error)?;
        repl.start(None).await.map_err(stream_error)?;
        let feedback = repl.shared_lsn_feedback.clone();
        let session_pid: Option<i32> = sqlx::query_scalar(
            "SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1 AND active",
        )
        .bind(&config.slot_name)
        .fetch_optional(pool)
        .await
        .ok()
        .flatten()
        .flatten();
        let cancel = pg_walstream::CancellationToken::new();
        let mut events = repl.into_stream(cancel.clone());
        let (tx, rx) = mpsc::channel(4096);
        tokio::spawn(async move {
            loop {
                match events.next_event().await {
                    Ok(e) => {
                        if tx.send(Ok(e)).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string())).await;
                        break;
                    }
                }
            }
            // Bounded: dropping the stream closes the connection, which ends the server's
            // session and frees the slot, even if the goodbye is not answered.
            let _ = tokio::time::timeout(Duration::from_secs(5), events.shutdown()).await;
        });
        tracing::info!(slot = %config.slot_name, resume_commit_lsn = %lsn_text(resume.commit_lsn), resume_serial = resume.serial, "streaming started");
        Ok(Phase::Streaming(Box::new(Stream {
            events: rx,
            feedback,
            cancel,
            resume,
            emitted_pos: resume,
            tx: None,
            last_commit_lsn: resume.commit_lsn,
            relations: HashMap::new(),
            captured: HashMap::new(),
            session_pid,
            last_heartbeat: Instant::now(),
            segments,
        })))
    }

    fn gauge(&self, name: &str, help: &str, value: f64) {
        if let Some(m) = self.ctx.as_ref().and_then(|c| c.plugin_metrics()) {
            m.set_gauge(name, help, value);
        }
    }

    /// Every 5 s: how far the stream is behind the server's WAL, and the slot's position.
    async fn stream_metrics(&mut self, s: &Stream) {
        if self
            .last_lag_check
            .is_some_and(|at| at.elapsed() < Duration::from_secs(5))
        {
            return;
        }
        self.last_lag_check = Some(Instant::now());
        let Some(catalog) = self.catalog.as_ref() else {
            return;
        };
        let row: Option<(Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT pg_current_wal_lsn()::text, (SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1)",
        )
        .bind(&self.config().slot_name)
        .fetch_optional(&catalog.pool)
        .await
        .ok()
        .flatten();
        let Some((Some(current), confirmed)) = row else {
            return;
        };
        let current = parse_lsn(&current).unwrap_or(0);
        let processed = s.last_commit_lsn.max(s.emitted_pos.commit_lsn);
        self.gauge(
            "cdc_lag_bytes",
            "Bytes of WAL between the server's current position and the last transaction this task processed",
            current.saturating_sub(processed) as f64,
        );
        if let Some(c) = confirmed.as_deref().and_then(parse_lsn) {
            self.gauge(
                "cdc_slot_retained_bytes",
                "Bytes of WAL between the server's current position and the slot's confirmed position (what the slot keeps)",
                current.saturating_sub(c) as f64,
            );
        }
    }

    fn record(
        &self,
        table: &TableSchema,
        key: Option<Struct>,
        value: Option<Struct>,
        offset: SourceOffset,
    ) -> SourceRecord {
        let mut r = SourceRecord::new(
            self.partition.clone(),
            offset,
            table.topic.clone(),
            value.as_ref().map(|_| table.envelope_schema.clone()),
            value.map_or(Value::Null, Value::Struct),
        );
        if value_is_tombstone(&r) {
            r.value_schema = None;
        }
        r.key_schema = table.key_schema.clone();
        r.key = key.map_or(Value::Null, Value::Struct);
        r
    }

    async fn poll_snapshot(&mut self, snap: &mut Snapshot) -> Result<(Vec<SourceRecord>, bool)> {
        let config = self.config.clone().expect("started");
        let mut out = Vec::new();
        loop {
            let table = match &snap.current {
                Some(t) => t.clone(),
                None => {
                    let Some((schema, table)) = snap.tables.pop_front() else {
                        // The end: the held row is the snapshot's last.
                        if let Some(mut last) = snap.held.take() {
                            mark_last(&mut last);
                            out.push(last);
                        }
                        return Ok((out, true));
                    };
                    let t = self
                        .catalog
                        .as_mut()
                        .expect("started")
                        .table(&config, &schema, &table, None)
                        .await?;
                    // The captured columns, then the primary key's (as text, for the offsets).
                    let pk: Vec<&Column> = t.columns.iter().filter(|c| c.primary_key).collect();
                    let cols = t
                        .columns
                        .iter()
                        .chain(pk.iter().copied())
                        .map(|c| c.select_text("cdc_t", &quote(&c.name)))
                        .collect::<Vec<_>>()
                        .join(", ");
                    // Qualified: an output column of the same name (the text casts above keep
                    // the names) would otherwise be what ORDER BY sorts, as text.
                    let pk_list = pk
                        .iter()
                        .map(|c| format!("cdc_t.{}", quote(&c.name)))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let order = if pk.is_empty() {
                        String::new()
                    } else {
                        format!(" ORDER BY {pk_list}")
                    };
                    // Resuming: the rows after the last one sent (the first table only).
                    let resume_key = snap
                        .resume_key
                        .take()
                        .filter(|k| k.len() == pk.len() && !pk.is_empty());
                    let filter = match &resume_key {
                        Some(_) => format!(
                            " WHERE ({pk_list}) > ({})",
                            pk.iter()
                                .enumerate()
                                .map(|(i, c)| format!("${}::{}", i + 1, c.sql_type))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        None => String::new(),
                    };
                    let sql = format!(
                        "DECLARE cdc_snapshot NO SCROLL CURSOR FOR SELECT {} FROM {}.{} AS cdc_t{filter}{order}",
                        if cols.is_empty() {
                            "NULL".to_owned()
                        } else {
                            cols
                        },
                        quote(&schema),
                        quote(&table)
                    );
                    let mut q = sqlx::query(&sql);
                    for k in resume_key.iter().flatten() {
                        q = q.bind(k);
                    }
                    q.execute(&mut snap.conn)
                        .await
                        .map_err(|e| db_error("snapshot: failed to open a cursor", e))?;
                    snap.current = Some(t.clone());
                    t
                }
            };
            let rows = sqlx::query(&format!(
                "FETCH {} FROM cdc_snapshot",
                config.snapshot_fetch_size.min(config.max_batch_size)
            ))
            .fetch_all(&mut snap.conn)
            .await
            .map_err(|e| db_error("snapshot: failed to read rows", e))?;
            if rows.is_empty() {
                // The held row is its table's last (Debezium: `last_in_data_collection`, unless
                // it is the snapshot's first or, later, last).
                if let Some(held) = snap.held.as_mut()
                    && held.topic == table.topic
                {
                    mark_snapshot(held, "last_in_data_collection");
                }
                sqlx::query("CLOSE cdc_snapshot")
                    .execute(&mut snap.conn)
                    .await
                    .map_err(|e| db_error("snapshot: failed to close the cursor", e))?;
                snap.current = None;
                continue;
            }
            for row in rows {
                let mut values = Vec::with_capacity(table.columns.len());
                for (i, c) in table.columns.iter().enumerate() {
                    let text: Option<String> = row
                        .try_get(i)
                        .map_err(|e| db_error("snapshot: failed to read a column", e))?;
                    values.push(Some(match text {
                        None => Value::Null,
                        Some(t) => {
                            c.ty.value(&c.schema, &t, config.decimal_mode)
                                .map_err(|e| {
                                    ConnectError::data(format!(
                                        "{}.{}.{}: {}",
                                        table.schema,
                                        table.table,
                                        c.name,
                                        e.message()
                                    ))
                                })?
                        }
                    }));
                }
                let pk_texts: Vec<String> = (table.columns.len()..row.len())
                    .map(|i| {
                        row.try_get::<Option<String>, _>(i)
                            .ok()
                            .flatten()
                            .unwrap_or_default()
                    })
                    .collect();
                let after = table.row(values, &config.unavailable_placeholder)?;
                let key = table.key(&after)?;
                let source = SourceInfo {
                    ts_us: snap.ts_us,
                    snapshot: Some(if snap.first {
                        "first"
                    } else if snap.held.as_ref().is_none_or(|h| h.topic != table.topic) {
                        "first_in_data_collection"
                    } else {
                        "true"
                    }),
                    tx_id: snap.tx_id,
                    lsn: Some(snap.lsn),
                    sequence: None,
                };
                snap.first = false;
                let value = table.envelope(
                    Op::Read,
                    None,
                    Some(after),
                    &source,
                    &config.topic_prefix,
                    &config.dbname,
                    None,
                )?;
                let mut offset = SourceOffset::new();
                offset.insert(SNAPSHOT.into(), json!("INITIAL"));
                offset.insert(LAST_SNAPSHOT_RECORD.into(), json!(false));
                offset.insert(LSN.into(), json!(snap.lsn));
                offset.insert(TX_ID.into(), json!(snap.tx_id));
                offset.insert(TS_USEC.into(), json!(snap.ts_us));
                offset.insert(SNAPSHOT_TABLE.into(), json!(table.full_name()));
                // Offsets hold primitives only (Connect's rule): JSON text.
                offset.insert(
                    SNAPSHOT_KEY.into(),
                    if pk_texts.is_empty() {
                        Json::Null
                    } else {
                        json!(json!(pk_texts).to_string())
                    },
                );
                offset.insert(
                    SEGMENTS.into(),
                    json!(segments::to_json(&snap.segments).to_string()),
                );
                let record = self.record(&table, key, Some(value), offset);
                if let Some(prev) = snap.held.replace(record) {
                    out.push(prev);
                }
            }
            if !out.is_empty() {
                return Ok((out, false));
            }
        }
    }

    async fn poll_stream(&mut self, s: &mut Stream) -> Result<Vec<SourceRecord>> {
        let config = self.config.clone().expect("started");
        let cancel = self.ctx.as_ref().expect("started").cancellation.clone();
        let mut out = Vec::new();
        let deadline = Instant::now() + Duration::from_millis(500);
        while out.len() < config.max_batch_size {
            let wait = if out.is_empty() {
                deadline.saturating_duration_since(Instant::now())
            } else {
                Duration::from_millis(5)
            };
            let next = tokio::select! {
                e = s.events.recv() => e,
                _ = tokio::time::sleep(wait) => break,
                _ = cancel.cancelled() => break,
            };
            let event = match next {
                Some(Ok(e)) => e,
                Some(Err(e)) => return Err(stream_error(e)),
                None => return Err(stream_error("the replication stream ended")),
            };
            self.on_event(s, event, &mut out).await?;
        }
        if out.is_empty()
            && s.tx.is_none()
            && let Some(every) = config.heartbeat_interval
            && s.last_heartbeat.elapsed() >= every
        {
            s.last_heartbeat = Instant::now();
            let pool = &self.catalog.as_ref().expect("started").pool;
            if let Some(q) = &config.heartbeat_action_query {
                sqlx::query(q)
                    .execute(pool)
                    .await
                    .map_err(|e| db_error("heartbeat.action.query failed", e))?;
            }
            // A non-transactional logical message: decoded in WAL order, it comes after every
            // transaction committed before it, so once it arrives (no transaction open) and
            // the records before it are committed, the slot may move to it.
            sqlx::query("SELECT pg_logical_emit_message(false, $1, '')")
                .bind(heartbeat_prefix(&config.slot_name))
                .execute(pool)
                .await
                .map_err(|e| db_error("failed to write the heartbeat message", e))?;
        }
        Ok(out)
    }

    fn heartbeat(&self, s: &Stream, lsn: u64) -> Result<SourceRecord> {
        let config = self.config();
        let key_schema = SchemaBuilder::struct_()
            .name("io.debezium.connector.common.ServerNameKey")
            .version(1)
            .field("serverName", Schema::string())
            .build();
        let value_schema = SchemaBuilder::struct_()
            .name("io.debezium.connector.common.Heartbeat")
            .version(1)
            .field("ts_ms", Schema::int64())
            .build();
        let mut offset = SourceOffset::new();
        offset.insert(LSN_COMMIT.into(), json!(s.last_commit_lsn));
        offset.insert(EVENT_SERIAL.into(), json!(u64::MAX));
        offset.insert(LSN.into(), json!(lsn));
        offset.insert(TS_USEC.into(), json!(now_us()));
        let mut r = SourceRecord::new(
            self.partition.clone(),
            offset,
            config.heartbeat_topic.clone(),
            Some(value_schema.clone()),
            Value::Struct(Struct::new(value_schema).with("ts_ms", Value::Int64(now_us() / 1000))?),
        );
        r.key_schema = Some(key_schema.clone());
        r.key = Value::Struct(
            Struct::new(key_schema)
                .with("serverName", Value::String(config.topic_prefix.clone()))?,
        );
        Ok(r)
    }

    /// Values of a row as pgoutput sent them (`None`: not sent).
    fn values(
        table: &TableSchema,
        row: &pg_walstream::RowData,
        config: &CdcConfig,
    ) -> Result<Vec<Option<Value>>> {
        table
            .columns
            .iter()
            .map(|c| {
                let Some(v) = row.get(&c.name) else {
                    return Ok(None);
                };
                if v.is_null() {
                    return Ok(Some(Value::Null));
                }
                let text = v.as_str().ok_or_else(|| {
                    ConnectError::data(format!("{}.{}: not text", table.table, c.name))
                })?;
                c.ty.value(&c.schema, text, config.decimal_mode)
                    .map(Some)
                    .map_err(|e| {
                        ConnectError::data(format!(
                            "{}.{}.{}: {}",
                            table.schema,
                            table.table,
                            c.name,
                            e.message()
                        ))
                    })
            })
            .collect()
    }

    async fn on_event(
        &mut self,
        s: &mut Stream,
        event: ChangeEvent,
        out: &mut Vec<SourceRecord>,
    ) -> Result<()> {
        let config = self.config.clone().expect("started");
        let lsn = event.lsn.value();
        match event.event_type {
            EventType::Begin {
                transaction_id,
                final_lsn,
                commit_timestamp,
            } => {
                s.tx = Some(OpenTx {
                    xid: transaction_id,
                    commit_lsn: final_lsn.value(),
                    ts_us: commit_timestamp.timestamp_micros(),
                    serial: 0,
                    per_table: HashMap::new(),
                });
            }
            EventType::Commit {
                end_lsn,
                commit_lsn,
                ..
            } => {
                let tx = s.tx.take();
                s.last_commit_lsn = commit_lsn.value();
                let end = end_lsn.value();
                self.durable.push_back((end, self.emitted));
                // Connector-defined boundaries: the transaction's last record closes one.
                if let (Some(tc), Some(last)) = (
                    self.ctx.as_ref().and_then(|c| c.transaction_context()),
                    out.last(),
                ) && tx.is_some_and(|t| t.serial > 0)
                {
                    tc.commit_transaction_at(last);
                }
            }
            EventType::Relation {
                relation_id,
                namespace,
                relation_name,
                columns,
                ..
            } => {
                s.captured.remove(&relation_id);
                s.relations.insert(
                    relation_id,
                    (namespace.to_string(), relation_name.to_string()),
                );
                if config.captures_table(&namespace, &relation_name) {
                    self.catalog
                        .as_mut()
                        .expect("started")
                        .table(&config, &namespace, &relation_name, Some(&columns))
                        .await?;
                }
            }
            EventType::Insert {
                schema,
                table,
                data,
                relation_oid,
                ..
            } => {
                self.change(
                    s,
                    &config,
                    Op::Create,
                    &schema,
                    &table,
                    relation_oid,
                    None,
                    Some(&data),
                    lsn,
                    out,
                )
                .await?;
            }
            EventType::Update {
                schema,
                table,
                old_data,
                new_data,
                relation_oid,
                ..
            } => {
                self.change(
                    s,
                    &config,
                    Op::Update,
                    &schema,
                    &table,
                    relation_oid,
                    old_data.as_ref(),
                    Some(&new_data),
                    lsn,
                    out,
                )
                .await?;
            }
            EventType::Delete {
                schema,
                table,
                old_data,
                relation_oid,
                ..
            } => {
                self.change(
                    s,
                    &config,
                    Op::Delete,
                    &schema,
                    &table,
                    relation_oid,
                    Some(&old_data),
                    None,
                    lsn,
                    out,
                )
                .await?;
            }
            EventType::Message {
                prefix,
                message_lsn,
                ..
            } if s.tx.is_none() && *prefix == *heartbeat_prefix(&config.slot_name) => {
                let lsn = message_lsn.value();
                let record = self.heartbeat(s, lsn)?;
                // Connector-defined boundaries: a heartbeat is a transaction of its own.
                if let Some(tc) = self.ctx.as_ref().and_then(|c| c.transaction_context()) {
                    tc.commit_transaction_at(&record);
                }
                out.push(record);
                self.emitted += 1;
                s.emitted_pos = Position {
                    commit_lsn: s.last_commit_lsn,
                    serial: u64::MAX,
                };
                self.durable.push_back((lsn, self.emitted));
            }
            EventType::Truncate(tables) => {
                tracing::warn!(
                    ?tables,
                    "TRUNCATE is not sent as events (Debezium skips it by default too)"
                );
            }
            _ => {}
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    async fn change(
        &mut self,
        s: &mut Stream,
        config: &CdcConfig,
        op: Op,
        schema: &str,
        table: &str,
        relation_oid: u32,
        before: Option<&pg_walstream::RowData>,
        after: Option<&pg_walstream::RowData>,
        lsn: u64,
        out: &mut Vec<SourceRecord>,
    ) -> Result<()> {
        let captured = *s
            .captured
            .entry(relation_oid)
            .or_insert_with(|| config.captures_table(schema, table));
        if !captured {
            return Ok(());
        }
        let Some(tx) = s.tx.as_mut() else {
            return Err(stream_error("a change outside a transaction"));
        };
        tx.serial += 1;
        let serial = tx.serial;
        // Already sent before the restart?
        if tx.commit_lsn < s.resume.commit_lsn
            || (tx.commit_lsn == s.resume.commit_lsn && serial <= s.resume.serial)
        {
            return Ok(());
        }
        let (xid, commit_lsn, ts_us) = (tx.xid, tx.commit_lsn, tx.ts_us);
        let order = {
            let n = tx.per_table.entry(format!("{schema}.{table}")).or_default();
            *n += 1;
            *n
        };
        let t = self
            .catalog
            .as_mut()
            .expect("started")
            .table(config, schema, table, None)
            .await?;
        let pk_of = |row: &pg_walstream::RowData| -> Option<Vec<String>> {
            t.columns
                .iter()
                .filter(|c| c.primary_key)
                .map(|c| row.get(&c.name).and_then(|v| v.as_str()).map(str::to_owned))
                .collect()
        };
        // A primary key change is a delete of the old key and a create of the new one, as
        // Debezium sends it.
        let images: Vec<(
            Op,
            Option<&pg_walstream::RowData>,
            Option<&pg_walstream::RowData>,
        )> = match (op, before, after) {
            (Op::Update, Some(b), Some(a))
                if t.key_schema.is_some() && pk_of(b).is_some() && pk_of(b) != pk_of(a) =>
            {
                vec![(Op::Delete, Some(b), None), (Op::Create, None, Some(a))]
            }
            _ => vec![(op, before, after)],
        };
        if s.segments.is_empty() || commit_lsn > segments::max_lsn(&s.segments) {
            s.segments.clear();
        }
        for (op, before, after) in images {
            let image = after.or(before).expect("a change has a row");
            if self
                .in_snapshot(&s.segments, &t, pk_of(image).as_deref(), commit_lsn)
                .await?
            {
                continue;
            }
            let before = match before {
                Some(row) => Some(t.row(
                    Self::values(&t, row, config)?,
                    &config.unavailable_placeholder,
                )?),
                None => None,
            };
            let after = match after {
                Some(row) => Some(t.row(
                    Self::values(&t, row, config)?,
                    &config.unavailable_placeholder,
                )?),
                None => None,
            };
            let key = match (&after, &before) {
                (Some(a), _) => t.key(a)?,
                (None, Some(b)) => t.key(b)?,
                _ => None,
            };
            let source = SourceInfo {
                ts_us,
                snapshot: None,
                tx_id: Some(i64::from(xid)),
                lsn: Some(lsn),
                sequence: Some(format!("[\"{}\",\"{}\"]", s.last_commit_lsn, lsn)),
            };
            let transaction = config
                .provide_transaction_metadata
                .then(|| (format!("{xid}:{commit_lsn}"), serial as i64, order));
            let value = t.envelope(
                op,
                if op == Op::Create { None } else { before },
                after,
                &source,
                &config.topic_prefix,
                &config.dbname,
                transaction,
            )?;
            let mut offset = SourceOffset::new();
            offset.insert(LSN_COMMIT.into(), json!(commit_lsn));
            offset.insert(EVENT_SERIAL.into(), json!(serial));
            offset.insert(LSN.into(), json!(lsn));
            offset.insert(LSN_PROC.into(), json!(lsn));
            offset.insert(TX_ID.into(), json!(xid));
            offset.insert(TS_USEC.into(), json!(ts_us));
            if !s.segments.is_empty() {
                offset.insert(
                    SEGMENTS.into(),
                    json!(segments::to_json(&s.segments).to_string()),
                );
            }
            let record = self.record(&t, key.clone(), Some(value), offset.clone());
            out.push(record);
            self.emitted += 1;
            s.emitted_pos = Position { commit_lsn, serial };
            if op == Op::Delete && config.tombstones_on_delete {
                out.push(self.record(&t, key, None, offset));
                self.emitted += 1;
            }
        }
        Ok(())
    }

    /// Whether a change committed at `commit_lsn` to the row of primary key `key` is in the
    /// snapshot already: the segment that read the row ([`segments`]) read it at or after
    /// the change.
    async fn in_snapshot(
        &self,
        segs: &[Segment],
        table: &TableSchema,
        key: Option<&[String]>,
        commit_lsn: u64,
    ) -> Result<bool> {
        if segs.is_empty() || commit_lsn > segments::max_lsn(segs) {
            return Ok(false);
        }
        let name = table.full_name();
        for seg in segs.iter().rev() {
            let read_by_it = match segments::start_of(seg, &name) {
                Start::Before => true,
                Start::After => false,
                Start::SameTable => match (key, &seg.key) {
                    (Some(k), Some(start)) => self.key_after(table, k, start).await?,
                    // A table without a primary key is read whole by the segment it starts in.
                    _ => false,
                },
            };
            if read_by_it {
                return Ok(commit_lsn <= seg.lsn);
            }
        }
        Ok(false)
    }

    /// Whether primary key `key` comes after `start` in the table's key order (PostgreSQL's:
    /// collations decide).
    async fn key_after(
        &self,
        table: &TableSchema,
        key: &[String],
        start: &[String],
    ) -> Result<bool> {
        let pk: Vec<&Column> = table.columns.iter().filter(|c| c.primary_key).collect();
        let args = |from: usize| {
            pk.iter()
                .enumerate()
                .map(|(i, c)| format!("${}::{}", from + i, c.sql_type))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let sql = format!("SELECT ({}) > ({})", args(1), args(1 + pk.len()));
        let mut q = sqlx::query_scalar::<_, bool>(&sql);
        for v in key.iter().chain(start) {
            q = q.bind(v);
        }
        q.fetch_one(&self.catalog.as_ref().expect("started").pool)
            .await
            .map_err(|e| db_error("failed to compare primary keys", e))
    }
}

/// The prefix of this slot's heartbeat messages (other connectors' pass by too).
fn heartbeat_prefix(slot: &str) -> String {
    format!("connect-cdc-heartbeat:{slot}")
}

fn value_is_tombstone(r: &SourceRecord) -> bool {
    r.value.is_null()
}

fn mark_last(record: &mut SourceRecord) {
    if let Some(o) = record.source_offset.as_mut() {
        o.insert(LAST_SNAPSHOT_RECORD.into(), json!(true));
    }
    mark_snapshot(record, "last");
}

/// Sets the event's `source.snapshot` marker; `last_in_data_collection` leaves the snapshot's
/// `first` as it is (Debezium's precedence: last, first, last_in_data_collection,
/// first_in_data_collection, true).
fn mark_snapshot(record: &mut SourceRecord, marker: &str) {
    if let Value::Struct(env) = &mut record.value
        && let Some(Value::Struct(src)) = env.get("source").cloned()
    {
        if marker != "last" && src.get("snapshot") == Some(&Value::String("first".into())) {
            return;
        }
        let mut src = src;
        if src.put("snapshot", Value::String(marker.into())).is_ok() {
            let _ = env.put("source", Value::Struct(src));
        }
    }
}

#[async_trait]
impl SourceTask for PostgresCdcSourceTask {
    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    async fn start(&mut self, ctx: SourceTaskContext, props: ConfigMap) -> Result<()> {
        let config = CdcConfig::parse(&props)?;
        let pool = crate::jdbc::pg::connect(&config.url, None, None).await?;
        Self::checks(&pool, &config).await?;
        let mut catalog = Catalog {
            pool,
            types: HashMap::new(),
            tables: HashMap::new(),
        };
        let tables = catalog.captured_tables(&config).await?;
        for (s, t) in &tables {
            catalog.table(&config, s, t, None).await?;
        }
        Self::ensure_publication(&catalog.pool, &config, &tables).await?;
        self.partition = json_map(SERVER, config.topic_prefix.clone());
        let offset = ctx.offset_storage_reader().offset(&self.partition).await?;
        let slot_exists = Self::slot(&catalog.pool, &config.slot_name)
            .await?
            .is_some();
        self.catalog = Some(catalog);
        self.config = Some(Arc::new(config.clone()));
        self.ctx = Some(ctx);
        let snapshot_done = offset.as_ref().is_some_and(|o| {
            o.get(SNAPSHOT).is_none()
                || o.get(LAST_SNAPSHOT_RECORD).and_then(|v| v.as_bool()) == Some(true)
        });
        let resume = offset
            .as_ref()
            .filter(|o| o.get(SNAPSHOT).is_none())
            .map(|o| Position {
                commit_lsn: o.get(LSN_COMMIT).and_then(|v| v.as_u64()).unwrap_or(0),
                serial: o.get(EVENT_SERIAL).and_then(|v| v.as_u64()).unwrap_or(0),
            })
            .unwrap_or_default();
        let snapshot = match config.snapshot_mode {
            SnapshotMode::NoData => false,
            SnapshotMode::Always => true,
            SnapshotMode::WhenNeeded => !snapshot_done || !slot_exists,
            SnapshotMode::Initial | SnapshotMode::InitialOnly => {
                if offset.is_none() && slot_exists {
                    // Nothing committed yet: a slot of this connector's name is one an earlier
                    // attempt of this snapshot created before its first commit (slot.name is
                    // the connector's own). It is dropped and the snapshot starts afresh.
                    tracing::warn!(slot = %self.config().slot_name, "the replication slot exists but nothing was committed: snapshotting afresh (the slot is recreated)");
                }
                !snapshot_done
            }
        };
        let stored_segments = segments::from_json(
            offset
                .as_ref()
                .and_then(|o| o.get(SEGMENTS))
                .and_then(|t| t.as_str())
                .and_then(|t| serde_json::from_str(t).ok())
                .as_ref(),
        );
        // An interrupted snapshot resumes after its last row sent, at a new snapshot, while
        // the slot it began with is still there ([`segments`]); else it starts over.
        let mut tables = tables;
        let snapshot_resume = match &offset {
            Some(o) if snapshot && !snapshot_done && slot_exists && !stored_segments.is_empty() => {
                let table = o
                    .get(SNAPSHOT_TABLE)
                    .and_then(|t| t.as_str())
                    .unwrap_or_default()
                    .to_owned();
                let key: Option<Vec<String>> = o
                    .get(SNAPSHOT_KEY)
                    .and_then(|k| k.as_str())
                    .and_then(|k| serde_json::from_str(k).ok());
                tables.retain(|(s, t)| format!("{s}.{t}") >= table);
                Some((stored_segments.clone(), table, key))
            }
            Some(_) if !snapshot_done => {
                tracing::warn!(
                    "the snapshot was interrupted and its slot is gone: it starts over, and the rows it had sent are sent again"
                );
                None
            }
            _ => None,
        };
        let phase = if snapshot {
            self.begin_snapshot(tables, snapshot_resume).await?
        } else if config.snapshot_mode == SnapshotMode::InitialOnly {
            Phase::Done
        } else {
            if !slot_exists {
                let pool = &self.catalog.as_ref().expect("started").pool;
                if offset.is_none() {
                    // no_data on a fresh slot: stream from now.
                    sqlx::query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')")
                        .bind(&self.config().slot_name)
                        .execute(pool)
                        .await
                        .map_err(|e| db_error("failed to create the replication slot", e))?;
                }
            }
            self.begin_stream(resume, stored_segments).await?
        };
        self.phase = Some(phase);
        Ok(())
    }

    async fn poll(&mut self) -> Result<Vec<SourceRecord>> {
        let Some(phase) = self.phase.take() else {
            return Ok(Vec::new());
        };
        match phase {
            Phase::Snapshot(mut snap) => {
                let result = self.poll_snapshot(&mut snap).await;
                let (records, finished) = match result {
                    Ok(r) => r,
                    Err(e) => {
                        self.phase = Some(Phase::Snapshot(snap));
                        return Err(e);
                    }
                };
                self.emitted += records.len() as u64;
                self.snapshot_rows += records.len() as u64;
                self.gauge(
                    "cdc_snapshot_rows",
                    "Rows the snapshot has read (this task's start)",
                    self.snapshot_rows as f64,
                );
                self.gauge(
                    "cdc_snapshot_running",
                    "1 while the snapshot runs",
                    if finished { 0.0 } else { 1.0 },
                );
                // Connector-defined boundaries: each batch of snapshot rows is a transaction.
                if !records.is_empty()
                    && let Some(tc) = self.ctx.as_ref().and_then(|c| c.transaction_context())
                {
                    tc.commit_transaction();
                }
                if finished {
                    let _ = sqlx::query("COMMIT").execute(&mut snap.conn).await;
                    let lsn = snap.lsn;
                    tracing::info!(lsn = %lsn_text(lsn), "snapshot finished");
                    self.durable.push_back((lsn, self.emitted));
                    self.phase = Some(
                        if self.config().snapshot_mode == SnapshotMode::InitialOnly {
                            Phase::Done
                        } else {
                            match self
                                .begin_stream(Position::default(), snap.segments.clone())
                                .await
                            {
                                Ok(p) => p,
                                Err(e) => {
                                    // Streaming starts at the next start (the offsets say done).
                                    self.phase = None;
                                    return if records.is_empty() {
                                        Err(e)
                                    } else {
                                        Ok(records)
                                    };
                                }
                            }
                        },
                    );
                } else {
                    self.phase = Some(Phase::Snapshot(snap));
                }
                Ok(records)
            }
            Phase::Streaming(mut s) => match self.poll_stream(&mut s).await {
                Ok(records) => {
                    self.change_events += records.len() as u64;
                    self.gauge("cdc_change_events", "Change events (and tombstones, heartbeats) returned since the task started", self.change_events as f64);
                    self.stream_metrics(&s).await;
                    self.phase = Some(Phase::Streaming(s));
                    Ok(records)
                }
                Err(e) if e.kind() == connect_api::ErrorKind::Retriable => {
                    // The replication connection failed: reconnect, resuming after the last
                    // record returned (the runtime commits or the task restarts).
                    tracing::warn!(error = %e, "logical replication failed; reconnecting");
                    s.cancel.cancel();
                    let (resume, segments) = (s.emitted_pos, std::mem::take(&mut s.segments));
                    drop(s);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    match self.begin_stream(resume, segments.clone()).await {
                        Ok(p) => {
                            self.phase = Some(p);
                            Ok(Vec::new())
                        }
                        Err(e2) => {
                            if e2.kind() != connect_api::ErrorKind::Config {
                                // Try again at the next poll.
                                self.phase = Some(Phase::Reconnect(resume, segments));
                            }
                            Err(e2)
                        }
                    }
                }
                Err(e) => {
                    self.phase = Some(Phase::Streaming(s));
                    Err(e)
                }
            },
            Phase::Reconnect(resume, segments) => {
                match self.begin_stream(resume, segments.clone()).await {
                    Ok(p) => {
                        self.phase = Some(p);
                        Ok(Vec::new())
                    }
                    Err(e) => {
                        if e.kind() != connect_api::ErrorKind::Config {
                            self.phase = Some(Phase::Reconnect(resume, segments));
                        }
                        Err(e)
                    }
                }
            }
            Phase::Done => {
                self.phase = Some(Phase::Done);
                let cancel = self.ctx.as_ref().expect("started").cancellation.clone();
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = cancel.cancelled() => {}
                }
                Ok(Vec::new())
            }
        }
    }

    fn commit_record_reads_data(&self) -> bool {
        false
    }

    fn commit_record(
        &mut self,
        _record: &SourceRecord,
        _metadata: Option<&RecordMetadata>,
    ) -> Result<()> {
        self.acked += 1;
        Ok(())
    }

    /// Confirms to the slot the end of every transaction whose records are all committed.
    async fn commit(&mut self) -> Result<()> {
        let mut confirm = None;
        while let Some(&(lsn, count)) = self.durable.front() {
            if count > self.acked {
                break;
            }
            confirm = Some(lsn);
            self.durable.pop_front();
        }
        if let (Some(lsn), Some(Phase::Streaming(s))) = (confirm, self.phase.as_ref()) {
            s.feedback.update_flushed_lsn(lsn);
            s.feedback.update_applied_lsn(lsn);
        }
        Ok(())
    }

    async fn stop(&mut self) -> Result<()> {
        let session = match self.phase.take() {
            Some(Phase::Streaming(s)) => {
                s.cancel.cancel();
                s.session_pid
            }
            _ => None,
        };
        if let Some(c) = self.catalog.take() {
            // The slot is free when this returns: this task's own session (its server process,
            // never a successor's) that does not end by itself within 3 s is ended; the runtime
            // has committed, or will abort, what it sent.
            if let (Some(pid), Some(config)) = (session, self.config.as_ref()) {
                for i in 0..25 {
                    let still: bool = sqlx::query_scalar(
                        "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND active_pid = $2)",
                    )
                    .bind(&config.slot_name)
                    .bind(pid)
                    .fetch_one(&c.pool)
                    .await
                    .unwrap_or(false);
                    if !still {
                        break;
                    }
                    if i >= 15 {
                        let _ = sqlx::query("SELECT pg_terminate_backend($1)")
                            .bind(pid)
                            .execute(&c.pool)
                            .await;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
            c.pool.close().await;
        }
        Ok(())
    }
}
