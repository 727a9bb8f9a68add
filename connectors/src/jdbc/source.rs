//! The Postgres table source: new rows of each table, in order of a strictly increasing column.
//!
//! ```text
//!  poll: for the next table (round robin)
//!     SELECT .. WHERE inc > $last ORDER BY inc LIMIT batch.max.rows + 1   (incrementing)
//!     SELECT .. WHERE (ts, inc) > ($ts, $inc) ORDER BY ts, inc LIMIT ..   (timestamp+incrementing)
//!   -> records to <topic.prefix><table>, partition {"table": t},
//!      offset {"incrementing": n} (+ "timestamp": ms)
//!   no table had rows -> sleep poll.interval.ms (cancellable), return an empty batch
//! ```
//!
//! # Guarantees
//!
//! - Replayable: the offset names the last row sent, so resuming from any committed offset
//!   yields exactly the rows after it, in the same order. With the exactly-once runtime the
//!   records and offsets commit in one Kafka transaction: each row once, in order per table.
//!
//! # Transaction boundaries (exactly-once workers, `exactly.once.support=requested|required`)
//!
//! All three of KIP-618's `transaction.boundary` values are supported:
//!
//! - `poll` (the default): each non-empty poll, at most `batch.max.rows` rows of one table,
//!   is one Kafka transaction with its offset.
//! - `interval`: the runtime commits every `transaction.boundary.interval.ms`; a transaction
//!   holds the rows of however many polls (and tables of the task) fell in that window.
//! - `connector` with `transaction.id.column.name`: the task asks the runtime to commit after
//!   the last row of each group of consecutive rows sharing that column's value (it reads one
//!   row ahead to know a group ended; a group larger than `batch.max.rows` spans polls and
//!   still commits once), so consumers see a source transaction's rows all at once. Without
//!   the column, `connector` commits once per non-empty poll, as `poll` does.
//!
//! `tests/tests/source_postgres.rs` proves `poll` (incrementing mode) and `interval`
//! (timestamp+incrementing mode) with workers SIGKILLed while rows are inserted: each row once
//! under `read_committed`, in id order per table.
//!
//! # Limits
//!
//! Incrementing mode assumes ids become visible in order. A writer that takes an id and
//! commits after a writer with a higher id was read is missed (as with Confluent's JDBC
//! source); insert from one session or use timestamp+incrementing with commit timestamps.

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap};
use connect_api::connector::{
    ConnectorContext, ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceConnector,
    SourceTask, SourceTaskContext,
};
use connect_api::data::logical::timestamp_builder;
use connect_api::data::{Schema, SchemaBuilder, SchemaType, Struct, Value};
use connect_api::error::{ConnectError, Result};
use connect_api::record::{SourceOffset, SourcePartition, SourceRecord, json_map};
use sqlx::postgres::PgRow;
use sqlx::{PgPool, Row};

use super::config::*;
use super::pg::{self, quote, quote_table};

/// Names of the offset columns appended to the table's own in each SELECT: the table's
/// column of the same name is also selected, so an unaliased `ORDER BY "id"` would be ambiguous.
const INC_ALIAS: &str = "\"__connect_incrementing\"";
const TS_ALIAS: &str = "\"__connect_timestamp\"";

#[derive(Debug, Default)]
pub struct PostgresSourceConnector {
    config: ConfigMap,
    tables: Vec<String>,
}

#[async_trait]
impl SourceConnector for PostgresSourceConnector {
    type Task = PostgresSourceTask;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        source_config_def()
    }

    async fn start(&mut self, _ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        self.tables = SourceConfig::parse(&config)?.tables;
        self.config = config;
        Ok(())
    }

    /// Tables spread round robin over at most `max_tasks` tasks.
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
        let n = max_tasks.min(self.tables.len()).max(1);
        let mut groups = vec![Vec::new(); n];
        for (i, t) in self.tables.iter().enumerate() {
            groups[i % n].push(t.clone());
        }
        Ok(groups
            .into_iter()
            .map(|g| {
                let mut c = self.config.clone();
                c.insert(TABLES_CONFIG.to_owned(), g.join(","));
                c
            })
            .collect())
    }

    async fn stop(&mut self) -> Result<()> {
        Ok(())
    }

    /// Offsets name rows of the table, so replaying from any committed offset is exact.
    fn exactly_once_support(&self, _config: &ConfigMap) -> ExactlyOnceSupport {
        ExactlyOnceSupport::Supported
    }

    fn can_define_transaction_boundaries(
        &self,
        _config: &ConfigMap,
    ) -> ConnectorTransactionBoundaries {
        ConnectorTransactionBoundaries::Supported
    }

    async fn alter_offsets(
        &self,
        _config: &ConfigMap,
        offsets: &connect_api::connector::SourceOffsets,
    ) -> Result<bool> {
        for (partition, offset) in offsets {
            if !partition.get(TABLE_FIELD).is_some_and(|t| t.is_string()) {
                return Err(ConnectError::data(format!(
                    "source partitions must have a string \"{TABLE_FIELD}\""
                )));
            }
            if let Some(o) = offset
                && !o.get(INCREMENTING_FIELD).is_some_and(|v| v.is_i64())
            {
                return Err(ConnectError::data(format!(
                    "source offsets must have an integer \"{INCREMENTING_FIELD}\""
                )));
            }
        }
        Ok(true)
    }
}

/// How a column is read and typed.
#[derive(Debug, Clone)]
struct ColumnRead {
    name: String,
    /// The SELECT expression.
    expr: String,
    kind: SchemaType,
}

struct TableState {
    table: String,
    topic: String,
    partition: SourcePartition,
    columns: Vec<ColumnRead>,
    schema: Schema,
    last_inc: i64,
    last_ts: Option<i64>,
}

#[derive(Default)]
pub struct PostgresSourceTask {
    ctx: Option<SourceTaskContext>,
    config: Option<SourceConfig>,
    pool: Option<PgPool>,
    tables: Vec<TableState>,
    next_table: usize,
}

impl PostgresSourceTask {
    async fn load_table(
        &self,
        pool: &PgPool,
        table: &str,
        config: &SourceConfig,
    ) -> Result<TableState> {
        let cols = pg::table_columns(pool, table).await?;
        if cols.is_empty() {
            return Err(ConnectError::fatal(format!("table {table} does not exist")));
        }
        if !cols.contains_key(&config.incrementing_column) {
            return Err(ConnectError::config(format!(
                "table {table} has no column {}",
                config.incrementing_column
            )));
        }
        let mut builder = SchemaBuilder::struct_().name(table);
        let mut reads = Vec::new();
        // Column order as in the table (table_columns is a BTreeMap, so sort by name is not
        // the table's order; ordering by name keeps schemas stable across restarts).
        for (name, col) in &cols {
            let q = quote(name);
            let (kind, expr, timestamp) = match col.type_name.as_str() {
                "int2" => (SchemaType::Int16, q.clone(), false),
                "int4" => (SchemaType::Int32, q.clone(), false),
                "int8" => (SchemaType::Int64, q.clone(), false),
                "float4" => (SchemaType::Float32, q.clone(), false),
                "float8" => (SchemaType::Float64, q.clone(), false),
                "bool" => (SchemaType::Boolean, q.clone(), false),
                "bytea" => (SchemaType::Bytes, q.clone(), false),
                "timestamp" | "timestamptz" => (
                    SchemaType::Int64,
                    format!("(extract(epoch from {q}) * 1000)::bigint"),
                    true,
                ),
                _ => (SchemaType::String, format!("{q}::text"), false),
            };
            let mut fb = if timestamp {
                timestamp_builder()
            } else {
                SchemaBuilder::new(kind)
            };
            if !col.not_null {
                fb = fb.optional();
            }
            builder = builder.field(name.clone(), fb.build());
            reads.push(ColumnRead {
                name: name.clone(),
                expr,
                kind,
            });
        }
        let partition = json_map(TABLE_FIELD, table);
        let ctx = self.ctx.as_ref().expect("started");
        let offset = ctx.offset_storage_reader().offset(&partition).await?;
        let last_inc = offset
            .as_ref()
            .and_then(|o| o.get(INCREMENTING_FIELD))
            .and_then(|v| v.as_i64())
            .unwrap_or(i64::MIN);
        let last_ts = offset
            .as_ref()
            .and_then(|o| o.get(TIMESTAMP_FIELD))
            .and_then(|v| v.as_i64());
        tracing::info!(table, last_inc, ?last_ts, "resuming table");
        Ok(TableState {
            table: table.to_owned(),
            topic: format!("{}{table}", config.topic_prefix),
            partition,
            columns: reads,
            schema: builder.build(),
            last_inc,
            last_ts,
        })
    }

    async fn poll_table(&mut self, index: usize) -> Result<Vec<SourceRecord>> {
        let config = self.config.as_ref().expect("started");
        let pool = self.pool.as_ref().expect("started");
        let t = &self.tables[index];
        let inc = quote(&config.incrementing_column);
        let select: Vec<&str> = t.columns.iter().map(|c| c.expr.as_str()).collect();
        let limit = config.batch_max_rows.get() as i64 + 1;
        let rows: Vec<PgRow> = match &config.timestamp_column {
            None => {
                sqlx::query(&format!(
                    "SELECT {}, {inc}::bigint AS {INC_ALIAS} FROM {} WHERE {inc} > $1 \
                     ORDER BY {INC_ALIAS} LIMIT $2",
                    select.join(", "),
                    quote_table(&t.table)
                ))
                .bind(t.last_inc)
                .bind(limit)
                .fetch_all(pool)
                .await
            }
            Some(ts_col) => {
                let ts = format!("(extract(epoch from {}) * 1000)::bigint", quote(ts_col));
                sqlx::query(&format!(
                    "SELECT {}, {inc}::bigint AS {INC_ALIAS}, {ts} AS {TS_ALIAS} FROM {} \
                     WHERE ({ts}, {inc}::bigint) > ($1, $2) ORDER BY {TS_ALIAS}, {INC_ALIAS} LIMIT $3",
                    select.join(", "),
                    quote_table(&t.table)
                ))
                .bind(t.last_ts.unwrap_or(i64::MIN))
                .bind(t.last_inc)
                .bind(limit)
                .fetch_all(pool)
                .await
            }
        }
        .map_err(|e| pg::db_error(&format!("failed to read table {}", t.table), e))?;

        let n_cols = t.columns.len();
        let txid_index = config
            .transaction_id_column
            .as_ref()
            .and_then(|c| t.columns.iter().position(|r| &r.name == c));
        let txid_of = |row: &PgRow| -> Option<String> {
            txid_index.map(|i| format!("{:?}", decode(row, i, &t.columns[i]).ok()))
        };
        let has_more = rows.len() as i64 == limit;
        let take = if has_more { rows.len() - 1 } else { rows.len() };
        let mut records = Vec::with_capacity(take);
        let mut last = (t.last_inc, t.last_ts);
        let tc = self.ctx.as_ref().and_then(|c| c.transaction_context());
        for (i, row) in rows.iter().take(take).enumerate() {
            let mut value = Struct::new(t.schema.clone());
            for (ci, c) in t.columns.iter().enumerate() {
                let v = decode(row, ci, c)?;
                value.put(&c.name, v).map_err(|e| {
                    ConnectError::data(format!("column {} of table {}: {e}", c.name, t.table))
                })?;
            }
            let inc_value: i64 = row.get(n_cols);
            let ts_value: Option<i64> = config
                .timestamp_column
                .as_ref()
                .map(|_| row.get(n_cols + 1));
            let mut offset: SourceOffset = json_map(INCREMENTING_FIELD, inc_value);
            if let Some(ts) = ts_value {
                offset.insert(TIMESTAMP_FIELD.to_owned(), ts.into());
            }
            last = (inc_value, ts_value);
            let record = SourceRecord::new(
                t.partition.clone(),
                offset,
                t.topic.clone(),
                Some(t.schema.clone()),
                Value::Struct(value),
            )
            .with_key(Some(Schema::int64()), Value::Int64(inc_value));
            if let (Some(tc), Some(_)) = (tc, txid_index) {
                // The group ends here if the next row (in this batch or the peeked one) has
                // another transaction id, or there is no next row yet.
                let ends = match rows.get(i + 1) {
                    Some(next) => txid_of(next) != txid_of(row),
                    None => true,
                };
                if ends {
                    tc.commit_transaction_at(&record);
                }
            }
            records.push(record);
        }
        if let (Some(tc), None, false) = (tc, txid_index, records.is_empty()) {
            tc.commit_transaction();
        }
        let t = &mut self.tables[index];
        t.last_inc = last.0;
        t.last_ts = last.1;
        Ok(records)
    }
}

fn decode(row: &PgRow, i: usize, c: &ColumnRead) -> Result<Value> {
    let err = |e: sqlx::Error| ConnectError::data(format!("failed to read column {}: {e}", c.name));
    Ok(match c.kind {
        SchemaType::Int16 => row
            .try_get::<Option<i16>, _>(i)
            .map_err(err)?
            .map(Value::Int16),
        SchemaType::Int32 => row
            .try_get::<Option<i32>, _>(i)
            .map_err(err)?
            .map(Value::Int32),
        SchemaType::Int64 => row
            .try_get::<Option<i64>, _>(i)
            .map_err(err)?
            .map(Value::Int64),
        SchemaType::Float32 => row
            .try_get::<Option<f32>, _>(i)
            .map_err(err)?
            .map(Value::Float32),
        SchemaType::Float64 => row
            .try_get::<Option<f64>, _>(i)
            .map_err(err)?
            .map(Value::Float64),
        SchemaType::Boolean => row
            .try_get::<Option<bool>, _>(i)
            .map_err(err)?
            .map(Value::Boolean),
        SchemaType::Bytes => row
            .try_get::<Option<Vec<u8>>, _>(i)
            .map_err(err)?
            .map(Value::Bytes),
        _ => row
            .try_get::<Option<String>, _>(i)
            .map_err(err)?
            .map(Value::String),
    }
    .unwrap_or(Value::Null))
}

#[async_trait]
impl SourceTask for PostgresSourceTask {
    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    async fn start(&mut self, ctx: SourceTaskContext, config: ConfigMap) -> Result<()> {
        let config = SourceConfig::parse(&config)?;
        let pool = config.connection.pool().await?;
        self.ctx = Some(ctx);
        let mut tables = Vec::new();
        for t in &config.tables {
            tables.push(self.load_table(&pool, t, &config).await?);
        }
        self.tables = tables;
        self.pool = Some(pool);
        self.config = Some(config);
        Ok(())
    }

    /// `commit_record` is not overridden: the runtime may move the data into the chain.
    fn commit_record_reads_data(&self) -> bool {
        false
    }

    async fn poll(&mut self) -> Result<Vec<SourceRecord>> {
        for _ in 0..self.tables.len() {
            let i = self.next_table % self.tables.len();
            self.next_table = self.next_table.wrapping_add(1);
            let records = self.poll_table(i).await?;
            if !records.is_empty() {
                return Ok(records);
            }
        }
        let interval = self
            .config
            .as_ref()
            .map(|c| c.poll_interval)
            .unwrap_or_default();
        if let Some(ctx) = &self.ctx {
            ctx.sleep(interval).await;
        }
        Ok(Vec::new())
    }

    async fn stop(&mut self) -> Result<()> {
        if let Some(pool) = self.pool.take() {
            pool.close().await;
        }
        Ok(())
    }
}
