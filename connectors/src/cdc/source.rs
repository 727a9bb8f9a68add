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
use serde_json::json;
use sqlx::postgres::PgConnection;
use sqlx::{Connection, PgPool, Row};
use tokio::sync::mpsc;

use super::config::{CdcConfig, PublicationAutocreate, SnapshotMode, config_def};
use super::envelope::{Column, Op, SourceInfo, TableSchema};
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
             COALESCE(a.attnum = ANY(i.indkey), false) \
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
            let ty = self.pg_type(oid, typmod).await?;
            let schema_of = ty.schema(
                &format!("{schema}.{table}.{name}"),
                !not_null && !primary_key,
                config.decimal_mode,
                config.time_precision,
                config.include_unknown_datatypes,
            )?;
            columns.push(Column {
                name,
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
    tx: Option<OpenTx>,
    last_commit_lsn: u64,
    /// Relations by OID: (schema, table).
    relations: HashMap<u32, (String, String)>,
    last_heartbeat: Instant,
}

enum Phase {
    Snapshot(Box<Snapshot>),
    Streaming(Box<Stream>),
    /// `initial_only` after its snapshot.
    Done,
}

#[derive(Default)]
pub struct PostgresCdcSourceTask {
    ctx: Option<SourceTaskContext>,
    config: Option<CdcConfig>,
    catalog: Option<Catalog>,
    phase: Option<Phase>,
    partition: SourcePartition,
    /// Records returned by poll, and records the runtime has acknowledged (commit_record).
    emitted: u64,
    acked: u64,
    /// (end LSN of a PostgreSQL transaction (or a heartbeat's position), records emitted up to
    /// and including it): confirmed to the slot once `acked` reaches the count.
    durable: VecDeque<(u64, u64)>,
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

    /// Creates the slot with an exported snapshot and opens the snapshot's transaction on an
    /// ordinary connection.
    async fn begin_snapshot(&mut self, tables: Vec<(String, String)>) -> Result<Phase> {
        let config = self.config().clone();
        let pool = &self.catalog.as_ref().expect("started").pool;
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
        let mut repl = LogicalReplicationStream::new(
            &config.replication_url(),
            Self::stream_config(&config, true),
        )
        .await
        .map_err(stream_error)?;
        repl.ensure_replication_slot().await.map_err(stream_error)?;
        let name = repl
            .exported_snapshot_name()
            .ok_or_else(|| ConnectError::fatal("the new replication slot exported no snapshot"))?
            .to_owned();
        let lsn = Self::slot(pool, &config.slot_name).await?.unwrap_or(0);
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
        // The exported snapshot is imported: the replication session is no longer needed.
        drop(repl);
        tracing::info!(slot = %config.slot_name, lsn = %lsn_text(lsn), tables = tables.len(), "snapshot started");
        Ok(Phase::Snapshot(Box::new(Snapshot {
            conn,
            tables: tables.into(),
            current: None,
            lsn,
            ts_us: now_us(),
            tx_id,
            first: true,
            held: None,
        })))
    }

    async fn begin_stream(&mut self, resume: Position) -> Result<Phase> {
        let config = self.config().clone();
        let pool = &self.catalog.as_ref().expect("started").pool;
        if Self::slot(pool, &config.slot_name).await?.is_none() {
            return Err(ConnectError::config(format!(
                "Replication slot {} does not exist: the changes since this connector's offsets are gone from PostgreSQL. Reset the connector's offsets (DELETE /connectors/<name>/offsets) to snapshot again, or set snapshot.mode=when_needed",
                config.slot_name
            )));
        }
        Self::take_slot(pool, &config.slot_name).await?;
        let mut repl = LogicalReplicationStream::new(
            &config.replication_url(),
            Self::stream_config(&config, false),
        )
        .await
        .map_err(stream_error)?;
        repl.start(None).await.map_err(stream_error)?;
        let feedback = repl.shared_lsn_feedback.clone();
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
            let _ = events.shutdown().await;
        });
        tracing::info!(slot = %config.slot_name, resume_commit_lsn = %lsn_text(resume.commit_lsn), resume_serial = resume.serial, "streaming started");
        Ok(Phase::Streaming(Box::new(Stream {
            events: rx,
            feedback,
            cancel,
            resume,
            tx: None,
            last_commit_lsn: resume.commit_lsn,
            relations: HashMap::new(),
            last_heartbeat: Instant::now(),
        })))
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
        let config = self.config().clone();
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
                    let cols = t
                        .columns
                        .iter()
                        .map(|c| format!("{}::text", quote(&c.name)))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let order = t
                        .columns
                        .iter()
                        .filter(|c| c.primary_key)
                        .map(|c| quote(&c.name))
                        .collect::<Vec<_>>();
                    let order = if order.is_empty() {
                        String::new()
                    } else {
                        format!(" ORDER BY {}", order.join(", "))
                    };
                    let sql = format!(
                        "DECLARE cdc_snapshot NO SCROLL CURSOR FOR SELECT {} FROM {}.{}{order}",
                        if cols.is_empty() {
                            "NULL".to_owned()
                        } else {
                            cols
                        },
                        quote(&schema),
                        quote(&table)
                    );
                    sqlx::query(&sql)
                        .execute(&mut snap.conn)
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
                let after = table.row(values, &config.unavailable_placeholder)?;
                let key = table.key(&after)?;
                let source = SourceInfo {
                    ts_us: snap.ts_us,
                    snapshot: Some(if snap.first { "first" } else { "true" }),
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
        let config = self.config().clone();
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
            if let Some(q) = &config.heartbeat_action_query {
                let pool = &self.catalog.as_ref().expect("started").pool;
                sqlx::query(q)
                    .execute(pool)
                    .await
                    .map_err(|e| db_error("heartbeat.action.query failed", e))?;
            }
            out.push(self.heartbeat(s)?);
            self.emitted += 1;
        }
        Ok(out)
    }

    fn heartbeat(&self, s: &Stream) -> Result<SourceRecord> {
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
        offset.insert(LSN.into(), json!(s.last_commit_lsn));
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
        let config = self.config().clone();
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
                ..
            } => {
                self.change(
                    s,
                    &config,
                    Op::Create,
                    &schema,
                    &table,
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
                ..
            } => {
                self.change(
                    s,
                    &config,
                    Op::Update,
                    &schema,
                    &table,
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
                ..
            } => {
                self.change(
                    s,
                    &config,
                    Op::Delete,
                    &schema,
                    &table,
                    Some(&old_data),
                    None,
                    lsn,
                    out,
                )
                .await?;
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
        before: Option<&pg_walstream::RowData>,
        after: Option<&pg_walstream::RowData>,
        lsn: u64,
        out: &mut Vec<SourceRecord>,
    ) -> Result<()> {
        if !config.captures_table(schema, table) {
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
        let record = self.record(&t, key.clone(), Some(value), offset.clone());
        out.push(record);
        self.emitted += 1;
        if op == Op::Delete && config.tombstones_on_delete {
            out.push(self.record(&t, key, None, offset));
            self.emitted += 1;
        }
        Ok(())
    }
}

fn value_is_tombstone(r: &SourceRecord) -> bool {
    r.value.is_null()
}

fn mark_last(record: &mut SourceRecord) {
    if let Some(o) = record.source_offset.as_mut() {
        o.insert(LAST_SNAPSHOT_RECORD.into(), json!(true));
    }
    if let Value::Struct(env) = &mut record.value
        && let Some(Value::Struct(src)) = env.get("source").cloned()
    {
        let mut src = src;
        if src.put("snapshot", Value::String("last".into())).is_ok() {
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
        self.config = Some(config.clone());
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
                    return Err(ConnectError::config(format!(
                        "Replication slot {} exists but this connector has no offsets: drop the slot (SELECT pg_drop_replication_slot('{}')) to snapshot, or set snapshot.mode=no_data to stream from it",
                        self.config().slot_name,
                        self.config().slot_name
                    )));
                }
                !snapshot_done
            }
        };
        if offset.is_some() && !snapshot_done {
            tracing::warn!(
                "the snapshot was interrupted: it starts over, and the rows it had sent are sent again"
            );
        }
        let phase = if snapshot {
            self.begin_snapshot(tables).await?
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
            self.begin_stream(resume).await?
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
                if finished {
                    let _ = sqlx::query("COMMIT").execute(&mut snap.conn).await;
                    let lsn = snap.lsn;
                    tracing::info!(lsn = %lsn_text(lsn), "snapshot finished");
                    self.durable.push_back((lsn, self.emitted));
                    self.phase = Some(
                        if self.config().snapshot_mode == SnapshotMode::InitialOnly {
                            Phase::Done
                        } else {
                            match self.begin_stream(Position::default()).await {
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
            Phase::Streaming(mut s) => {
                let result = self.poll_stream(&mut s).await;
                self.phase = Some(Phase::Streaming(s));
                result
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
        if let Some(Phase::Streaming(s)) = self.phase.take() {
            s.cancel.cancel();
        }
        if let Some(c) = self.catalog.take() {
            c.pool.close().await;
        }
        Ok(())
    }
}
