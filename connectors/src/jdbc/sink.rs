//! The two Postgres sinks, sharing one writer.
//!
//! - **Upsert** ([`PostgresSinkConnector`], strategy A): `INSERT .. ON CONFLICT (pk) DO UPDATE`,
//!   tombstones become `DELETE`s. Writing a record twice leaves the row as writing it once, so a
//!   replay (crash, rebalance, offset reset) changes nothing: effectively once per key.
//! - **Offsets with data** ([`PostgresOffsetsSinkConnector`], strategy B): plain `INSERT`s and
//!   the next offset of each partition in `offsets.table.name`, in one database transaction.
//!   On `open` the task rewinds the consumer to the stored offsets (overriding the group's) and
//!   skips any record below them, so every record lands exactly once even in append-only tables.
//!
//! ```text
//!  put(records) ── split by table ──> rows (key/value fields as SQL text, cast by Postgres)
//!     per chunk of batch.size:  check each row against the column types
//!        bad row  ──> errant record reporter (dead-letter queue or task failure)
//!        good rows ──> one statement: INSERT .. SELECT .. FROM UNNEST($1::text[], ..)
//!     a data error from Postgres for the chunk ──> probe rows one by one in rolled-back
//!        transactions, report the failing ones, write the rest
//! ```
//!
//! # Guarantees
//!
//! - Upsert: within a chunk only the last operation per key is applied (Postgres refuses to
//!   update one row twice in a statement), which is the outcome of applying them in order.
//! - Offsets with data: `pre_commit` returns only offsets committed in the database; the
//!   group's offsets are a hint the task corrects on `open`. Each transaction first locks the
//!   offsets rows of its partitions and checks they still hold what this task last committed;
//!   if another writer moved them (a zombie task that lost its partitions to a rebalance it has
//!   not seen yet), it writes nothing and rewinds to the stored offsets instead.
//! - A record that cannot be written is never skipped silently: it goes to the errant record
//!   reporter, which fails the task unless `errors.tolerance=all`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap};
use connect_api::connector::{
    ConnectorContext, SinkConnector, SinkOffsets, SinkTask, SinkTaskContext,
};
use connect_api::data::{Schema, Value};
use connect_api::error::{ConnectError, Result};
use connect_api::record::{SinkRecord, TopicPartition};
use sqlx::{PgPool, Postgres, Row, Transaction};

use super::config::{PkMode, SinkConfig, sink_config_def};
use super::pg::{self, Column, quote, quote_table};

macro_rules! sink_connector {
    ($connector:ident, $task:ident, $offsets:expr) => {
        #[derive(Debug, Default)]
        pub struct $connector {
            config: ConfigMap,
        }

        #[async_trait]
        impl SinkConnector for $connector {
            type Task = $task;

            fn version(&self) -> String {
                crate::VERSION.to_owned()
            }

            fn config_def(&self) -> ConfigDef {
                sink_config_def($offsets)
            }

            async fn start(&mut self, _ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
                SinkConfig::parse(&config, $offsets)?;
                self.config = config;
                Ok(())
            }

            fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
                Ok(vec![self.config.clone(); max_tasks])
            }

            async fn stop(&mut self) -> Result<()> {
                Ok(())
            }
        }

        #[derive(Default)]
        pub struct $task {
            writer: Option<Writer>,
        }

        impl $task {
            fn writer(&mut self) -> Result<&mut Writer> {
                self.writer
                    .as_mut()
                    .ok_or_else(|| ConnectError::fatal("the Postgres sink task was not started"))
            }
        }

        #[async_trait]
        impl SinkTask for $task {
            fn version(&self) -> String {
                crate::VERSION.to_owned()
            }

            async fn start(&mut self, ctx: SinkTaskContext, config: ConfigMap) -> Result<()> {
                let config = SinkConfig::parse(&config, $offsets)?;
                self.writer = Some(Writer::start(ctx, config).await?);
                Ok(())
            }

            async fn open(&mut self, partitions: &[TopicPartition]) -> Result<()> {
                self.writer()?.open(partitions).await
            }

            async fn put(&mut self, records: Vec<SinkRecord>) -> Result<()> {
                self.writer()?.put(records).await
            }

            async fn pre_commit(&mut self, offsets: SinkOffsets) -> Result<SinkOffsets> {
                Ok(self.writer()?.pre_commit(offsets))
            }

            async fn close(&mut self, partitions: &[TopicPartition]) -> Result<()> {
                if let Some(w) = self.writer.as_mut() {
                    for tp in partitions {
                        w.expected.remove(tp);
                    }
                }
                Ok(())
            }

            async fn stop(&mut self) -> Result<()> {
                if let Some(w) = self.writer.take() {
                    w.pool.close().await;
                }
                Ok(())
            }
        }
    };
}

sink_connector!(PostgresSinkConnector, PostgresSinkTask, false);
sink_connector!(PostgresOffsetsSinkConnector, PostgresOffsetsSinkTask, true);

/// One operation on a table.
#[derive(Debug, Clone)]
enum Op {
    /// Columns (name, text) with the schema/value used for auto-create.
    Write(Vec<Cell>),
    /// Primary key cells of the row to delete.
    Delete(Vec<Cell>),
}

#[derive(Debug, Clone)]
struct Cell {
    name: String,
    sql_type: &'static str,
    text: Option<String>,
}

/// A record turned into an operation, with the record kept for error reports.
struct Pending {
    record: SinkRecord,
    op: Op,
}

struct Writer {
    ctx: SinkTaskContext,
    config: SinkConfig,
    pool: PgPool,
    tables: HashMap<String, BTreeMap<String, Column>>,
    /// Offsets-with-data: next offset per partition as committed in the database.
    expected: BTreeMap<TopicPartition, i64>,
}

impl Writer {
    async fn start(ctx: SinkTaskContext, config: SinkConfig) -> Result<Self> {
        let pool = config.connection.pool().await?;
        if let Some(t) = &config.offsets_table {
            let sql = format!(
                "CREATE TABLE IF NOT EXISTS {} (connector TEXT NOT NULL, topic TEXT NOT NULL, \
                 kafka_partition INTEGER NOT NULL, next_offset BIGINT NOT NULL, \
                 PRIMARY KEY (connector, topic, kafka_partition))",
                quote_table(t)
            );
            pg::ddl(&pool, t, &sql).await?;
        }
        Ok(Self {
            ctx,
            config,
            pool,
            tables: HashMap::new(),
            expected: BTreeMap::new(),
        })
    }

    /// Offsets-with-data: reads the stored offsets of `partitions` and rewinds the consumer.
    async fn open(&mut self, partitions: &[TopicPartition]) -> Result<()> {
        let Some(table) = &self.config.offsets_table else {
            return Ok(());
        };
        let rows = sqlx::query(&format!(
            "SELECT topic, kafka_partition, next_offset FROM {} WHERE connector = $1",
            quote_table(table)
        ))
        .bind(&self.ctx.connector_name)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| pg::db_error("failed to read stored offsets", e))?;
        let stored = stored_offsets(&rows);
        let mut rewinds = Vec::new();
        for tp in partitions {
            // No stored offset: nothing of this partition was written yet; start at 0 so the
            // group's offset (possibly ahead after a reset) cannot skip records.
            let next = stored.get(tp).copied().unwrap_or(0);
            self.expected.insert(tp.clone(), next);
            rewinds.push((tp.clone(), next));
        }
        tracing::info!(connector = %self.ctx.connector_name, offsets = ?rewinds, "rewinding to offsets stored with the data");
        self.ctx.reset_offsets(&rewinds);
        Ok(())
    }

    fn pre_commit(&self, offsets: SinkOffsets) -> SinkOffsets {
        if self.config.offsets_table.is_none() {
            return offsets;
        }
        offsets
            .into_keys()
            .filter_map(|tp| self.expected.get(&tp).map(|o| (tp, *o)))
            .collect()
    }

    async fn report(&self, record: &SinkRecord, error: ConnectError) -> Result<()> {
        match self.ctx.errant_record_reporter() {
            Some(r) => r.report(record, &error).await,
            None => Err(error),
        }
    }

    async fn put(&mut self, records: Vec<SinkRecord>) -> Result<()> {
        let offsets_mode = self.config.offsets_table.is_some();
        let mut by_table: BTreeMap<String, Vec<Pending>> = BTreeMap::new();
        let mut next_offsets: BTreeMap<TopicPartition, i64> = BTreeMap::new();
        for record in records {
            // Offsets are the consumed partition's (KIP-793): a transform may have renamed
            // the topic (RegexRouter, TimestampRouter), which names the table instead.
            let tp = record.original_topic_partition();
            if offsets_mode {
                // Below the database's offset: already written (the consumer has not yet
                // been rewound, or the group's offsets lag behind ours).
                let expected = self.expected.get(&tp).copied().unwrap_or(0);
                if record.original_kafka_offset < expected {
                    continue;
                }
            }
            next_offsets.insert(tp, record.original_kafka_offset + 1);
            match self.operation(&record) {
                Ok(Some(op)) => by_table
                    .entry(self.config.table_for(&record.topic))
                    .or_default()
                    .push(Pending { record, op }),
                Ok(None) => {}
                Err(e) => self.report(&record, e).await?,
            }
        }
        if offsets_mode {
            let mut tx = self.begin().await?;
            if let Some(stored) = self.claim_offsets(&mut tx, &next_offsets).await? {
                // Another writer moved these partitions on (this task is a zombie that lost
                // them, or the table was edited): write nothing, go back to what the database
                // holds. The rollback happens when `tx` drops.
                let rewinds: Vec<_> = next_offsets
                    .keys()
                    .map(|tp| (tp.clone(), stored.get(tp).copied().unwrap_or(0)))
                    .collect();
                tracing::warn!(connector = %self.ctx.connector_name, offsets = ?rewinds,
                    "stored offsets changed under this task; rewinding instead of writing");
                self.expected.extend(rewinds.iter().cloned());
                self.ctx.reset_offsets(&rewinds);
                return Ok(());
            }
            for (table, pending) in by_table {
                self.write_table(&mut tx, &table, pending).await?;
            }
            self.store_offsets(&mut tx, &next_offsets).await?;
            tx.commit()
                .await
                .map_err(|e| pg::db_error("failed to commit the sink transaction", e))?;
            self.expected.extend(next_offsets);
        } else {
            for (table, pending) in by_table {
                let mut tx = self.begin().await?;
                self.write_table(&mut tx, &table, pending).await?;
                tx.commit()
                    .await
                    .map_err(|e| pg::db_error("failed to commit the sink transaction", e))?;
            }
        }
        Ok(())
    }

    async fn begin(&self) -> Result<Transaction<'static, Postgres>> {
        self.pool
            .begin()
            .await
            .map_err(|e| pg::db_error("failed to begin a transaction", e))
    }

    /// Locks the offsets rows of `partitions` for this transaction and checks they still hold
    /// what this task last committed (`expected`). Returns the stored offsets when they do not:
    /// a concurrent writer of the same partitions then commits nothing twice, whichever of the
    /// two reaches the database second. Missing rows are created first (at the expected
    /// offset), so even the very first write of a partition is serialised by the row lock.
    async fn claim_offsets(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        partitions: &BTreeMap<TopicPartition, i64>,
    ) -> Result<Option<BTreeMap<TopicPartition, i64>>> {
        let table = quote_table(self.config.offsets_table.as_deref().expect("offsets mode"));
        let topics: Vec<String> = partitions.keys().map(|tp| tp.topic.clone()).collect();
        let parts: Vec<i32> = partitions.keys().map(|tp| tp.partition).collect();
        let expected: Vec<i64> = partitions
            .keys()
            .map(|tp| self.expected.get(tp).copied().unwrap_or(0))
            .collect();
        sqlx::query(&format!(
            "INSERT INTO {table} (connector, topic, kafka_partition, next_offset) \
             SELECT $1, t, p, o FROM UNNEST($2::text[], $3::int[], $4::bigint[]) AS u(t, p, o) \
             ON CONFLICT (connector, topic, kafka_partition) DO NOTHING"
        ))
        .bind(&self.ctx.connector_name)
        .bind(&topics)
        .bind(&parts)
        .bind(&expected)
        .execute(&mut **tx)
        .await
        .map_err(|e| pg::db_error("failed to claim offsets", e))?;
        let rows = sqlx::query(&format!(
            "SELECT topic, kafka_partition, next_offset FROM {table} WHERE connector = $1 \
             AND (topic, kafka_partition) IN (SELECT * FROM UNNEST($2::text[], $3::int[])) \
             FOR UPDATE"
        ))
        .bind(&self.ctx.connector_name)
        .bind(&topics)
        .bind(&parts)
        .fetch_all(&mut **tx)
        .await
        .map_err(|e| pg::db_error("failed to lock stored offsets", e))?;
        let stored = stored_offsets(&rows);
        let unchanged = partitions
            .keys()
            .zip(&expected)
            .all(|(tp, e)| stored.get(tp) == Some(e));
        Ok((!unchanged).then_some(stored))
    }

    async fn store_offsets(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<()> {
        let table = self.config.offsets_table.as_deref().expect("offsets mode");
        let topics: Vec<String> = offsets.keys().map(|tp| tp.topic.clone()).collect();
        let partitions: Vec<i32> = offsets.keys().map(|tp| tp.partition).collect();
        let next: Vec<i64> = offsets.values().copied().collect();
        sqlx::query(&format!(
            "INSERT INTO {} (connector, topic, kafka_partition, next_offset) \
             SELECT $1, t, p, o FROM UNNEST($2::text[], $3::int[], $4::bigint[]) AS u(t, p, o) \
             ON CONFLICT (connector, topic, kafka_partition) DO UPDATE SET next_offset = EXCLUDED.next_offset",
            quote_table(table)
        ))
        .bind(&self.ctx.connector_name)
        .bind(topics)
        .bind(partitions)
        .bind(next)
        .execute(&mut **tx)
        .await
        .map_err(|e| pg::db_error("failed to store offsets", e))?;
        Ok(())
    }

    /// The operation for one record; `None` for a tombstone when deletes are off.
    fn operation(&self, record: &SinkRecord) -> Result<Option<Op>> {
        let cells = |schema: Option<&Schema>, value: &Value| -> Result<Vec<Cell>> {
            pg::fields_of(schema, value)?
                .into_iter()
                .map(|(name, s, v)| {
                    Ok(Cell {
                        sql_type: pg::sql_type_for(s.as_ref(), &v),
                        text: pg::to_sql_text(s.as_ref(), &v)?,
                        name,
                    })
                })
                .collect()
        };
        let key_cells = || -> Result<Vec<Cell>> {
            match &record.key {
                Value::Struct(_) | Value::Map(_) => {
                    let all = cells(record.key_schema.as_ref(), &record.key)?;
                    if self.config.pk_fields.is_empty() {
                        Ok(all)
                    } else {
                        Ok(all
                            .into_iter()
                            .filter(|c| self.config.pk_fields.contains(&c.name))
                            .collect())
                    }
                }
                Value::Null => Err(ConnectError::data(
                    "pk.mode=record_key needs a record key, the record has none",
                )),
                primitive => Ok(vec![Cell {
                    name: self
                        .config
                        .pk_fields
                        .first()
                        .cloned()
                        .unwrap_or_else(|| "id".to_owned()),
                    sql_type: pg::sql_type_for(record.key_schema.as_ref(), primitive),
                    text: pg::to_sql_text(record.key_schema.as_ref(), primitive)?,
                }]),
            }
        };
        if record.value.is_null() {
            return if self.config.delete_enabled {
                Ok(Some(Op::Delete(key_cells()?)))
            } else if self.config.pk_mode == PkMode::RecordKey {
                Ok(None)
            } else {
                Err(ConnectError::data(
                    "a null value (tombstone) with delete.enabled=false",
                ))
            };
        }
        let mut row = cells(record.value_schema.as_ref(), &record.value)?;
        match self.config.pk_mode {
            PkMode::RecordKey => {
                let key = key_cells()?;
                row.retain(|c| !key.iter().any(|k| k.name == c.name));
                let mut all = key;
                all.extend(row);
                Ok(Some(Op::Write(all)))
            }
            PkMode::RecordValue => {
                for f in &self.config.pk_fields {
                    if !row.iter().any(|c| &c.name == f && c.text.is_some()) {
                        return Err(ConnectError::data(format!(
                            "the record value has no primary key field {f}"
                        )));
                    }
                }
                Ok(Some(Op::Write(row)))
            }
            PkMode::None => Ok(Some(Op::Write(row))),
        }
    }

    fn pk_columns(&self, first: &Op) -> Vec<String> {
        match self.config.pk_mode {
            PkMode::None => Vec::new(),
            PkMode::RecordValue => self.config.pk_fields.clone(),
            PkMode::RecordKey => match first {
                Op::Delete(k) => k.iter().map(|c| c.name.clone()).collect(),
                Op::Write(_) => Vec::new(),
            },
        }
    }

    /// Creates or evolves `table` so it has every column of `pending`.
    async fn ensure_table(
        &mut self,
        table: &str,
        pending: &[Pending],
        pk: &[String],
    ) -> Result<()> {
        if !self.tables.contains_key(table) {
            let cols = pg::table_columns(&self.pool, table).await?;
            self.tables.insert(table.to_owned(), cols);
        }
        let mut wanted: Vec<(&str, &'static str)> = Vec::new();
        for p in pending {
            let (Op::Write(cells) | Op::Delete(cells)) = &p.op;
            for c in cells {
                if !wanted.iter().any(|(n, _)| *n == c.name) {
                    wanted.push((&c.name, c.sql_type));
                }
            }
        }
        let existing = &self.tables[table];
        let exec = |sql: String| {
            let pool = self.pool.clone();
            async move { pg::ddl(&pool, table, &sql).await }
        };
        if existing.is_empty() {
            if !self.config.auto_create {
                return Err(ConnectError::fatal(format!(
                    "table {table} does not exist and auto.create is false"
                )));
            }
            let mut defs: Vec<String> = wanted
                .iter()
                .map(|(n, t)| {
                    let not_null = if pk.iter().any(|k| k == n) {
                        " NOT NULL"
                    } else {
                        ""
                    };
                    format!("{} {t}{not_null}", quote(n))
                })
                .collect();
            if !pk.is_empty() {
                defs.push(format!(
                    "PRIMARY KEY ({})",
                    pk.iter().map(|k| quote(k)).collect::<Vec<_>>().join(", ")
                ));
            }
            exec(format!(
                "CREATE TABLE IF NOT EXISTS {} ({})",
                quote_table(table),
                defs.join(", ")
            ))
            .await?;
        } else {
            let missing: Vec<_> = wanted
                .iter()
                .filter(|(n, _)| !existing.contains_key(*n))
                .collect();
            if missing.is_empty() {
                return Ok(());
            }
            if !self.config.auto_evolve {
                // The rows naming unknown columns are reported one by one by the caller.
                return Ok(());
            }
            for (n, t) in missing {
                exec(format!(
                    "ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} {t}",
                    quote_table(table),
                    quote(n)
                ))
                .await?;
            }
        }
        let cols = pg::table_columns(&self.pool, table).await?;
        self.tables.insert(table.to_owned(), cols);
        Ok(())
    }

    async fn write_table(
        &mut self,
        tx: &mut Transaction<'static, Postgres>,
        table: &str,
        pending: Vec<Pending>,
    ) -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let pk = match self.config.pk_mode {
            PkMode::RecordKey => {
                // The key columns are the first cells of every write/delete.
                self.key_names(&pending)
            }
            _ => self.pk_columns(&pending[0].op),
        };
        if let Err(e) = self.ensure_table(table, &pending, &pk).await {
            if e.kind() != connect_api::ErrorKind::Data {
                return Err(e);
            }
            for p in &pending {
                self.report(&p.record, ConnectError::data(e.message().to_owned()))
                    .await?;
            }
            return Ok(());
        }
        // Check each row against the column types; report the ones that cannot fit.
        let columns = self.tables[table].clone();
        let mut good = Vec::with_capacity(pending.len());
        for p in pending {
            let (Op::Write(cells) | Op::Delete(cells)) = &p.op;
            let mut problem = None;
            for c in cells {
                match columns.get(&c.name) {
                    None => {
                        problem = Some(ConnectError::data(format!(
                            "table {table} has no column {}",
                            c.name
                        )))
                    }
                    Some(col) => {
                        if let Err(e) = pg::check_value(&c.name, col, c.text.as_deref())
                            && matches!(p.op, Op::Write(_))
                        {
                            problem = Some(e);
                        }
                    }
                }
                if problem.is_some() {
                    break;
                }
            }
            match problem {
                Some(e) => self.report(&p.record, e).await?,
                None => good.push(p),
            }
        }
        let chunk = self.config.batch_size.get();
        let mut rest = good;
        while !rest.is_empty() {
            let tail = rest.split_off(rest.len().min(chunk));
            let batch = std::mem::replace(&mut rest, tail);
            self.write_chunk(tx, table, &columns, &pk, batch).await?;
        }
        Ok(())
    }

    fn key_names(&self, pending: &[Pending]) -> Vec<String> {
        // Key cells come first in every op; their count is the key width of the first record.
        let p = &pending[0];
        let key_len = match &p.op {
            Op::Delete(k) => k.len(),
            Op::Write(_) => self.operation_key_len(&p.record).unwrap_or_default(),
        };
        let (Op::Write(cells) | Op::Delete(cells)) = &p.op;
        cells.iter().take(key_len).map(|c| c.name.clone()).collect()
    }

    fn operation_key_len(&self, record: &SinkRecord) -> Option<usize> {
        match &record.key {
            Value::Struct(_) | Value::Map(_) => {
                let fields = pg::fields_of(record.key_schema.as_ref(), &record.key).ok()?;
                Some(if self.config.pk_fields.is_empty() {
                    fields.len()
                } else {
                    fields
                        .iter()
                        .filter(|(n, _, _)| self.config.pk_fields.contains(n))
                        .count()
                })
            }
            Value::Null => None,
            _ => Some(1),
        }
    }

    /// Writes one chunk; on a data error from Postgres, isolates the failing rows.
    async fn write_chunk(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        table: &str,
        columns: &BTreeMap<String, Column>,
        pk: &[String],
        batch: Vec<Pending>,
    ) -> Result<()> {
        let ops: Vec<&Op> = batch.iter().map(|p| &p.op).collect();
        sqlx::query("SAVEPOINT chunk")
            .execute(&mut **tx)
            .await
            .map_err(|e| pg::db_error("failed to set a savepoint", e))?;
        match execute_ops(tx, table, columns, pk, &ops).await {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == connect_api::ErrorKind::Data => {
                sqlx::query("ROLLBACK TO SAVEPOINT chunk")
                    .execute(&mut **tx)
                    .await
                    .map_err(|e| pg::db_error("failed to roll back to the savepoint", e))?;
                tracing::warn!(table, error = %e, "a batch failed with a data error; writing its rows one by one");
            }
            Err(e) => return Err(e),
        }
        for p in &batch {
            sqlx::query("SAVEPOINT row")
                .execute(&mut **tx)
                .await
                .map_err(|e| pg::db_error("failed to set a savepoint", e))?;
            match execute_ops(tx, table, columns, pk, &[&p.op]).await {
                Ok(()) => {}
                Err(e) if e.kind() == connect_api::ErrorKind::Data => {
                    sqlx::query("ROLLBACK TO SAVEPOINT row")
                        .execute(&mut **tx)
                        .await
                        .map_err(|e| pg::db_error("failed to roll back to the savepoint", e))?;
                    self.report(&p.record, e).await?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Runs the writes and deletes of one chunk as (at most) two statements. With a primary key,
/// only the last operation per key counts.
/// `(topic, kafka_partition, next_offset)` rows of an offsets table, by partition.
fn stored_offsets(rows: &[sqlx::postgres::PgRow]) -> BTreeMap<TopicPartition, i64> {
    rows.iter()
        .map(|r| {
            (
                TopicPartition::new(r.get::<String, _>(0), r.get::<i32, _>(1)),
                r.get::<i64, _>(2),
            )
        })
        .collect()
}

async fn execute_ops(
    tx: &mut Transaction<'static, Postgres>,
    table: &str,
    columns: &BTreeMap<String, Column>,
    pk: &[String],
    ops: &[&Op],
) -> Result<()> {
    let key_of = |cells: &[Cell]| -> Vec<Option<String>> {
        pk.iter()
            .map(|k| {
                cells
                    .iter()
                    .find(|c| &c.name == k)
                    .and_then(|c| c.text.clone())
            })
            .collect()
    };
    let mut last: Vec<&Op> = Vec::with_capacity(ops.len());
    if pk.is_empty() {
        last.extend(ops.iter().copied());
    } else {
        let mut seen = BTreeSet::new();
        for op in ops.iter().rev() {
            let (Op::Write(cells) | Op::Delete(cells)) = op;
            if seen.insert(key_of(cells)) {
                last.push(op);
            }
        }
        last.reverse();
    }
    let writes: Vec<&Vec<Cell>> = last
        .iter()
        .filter_map(|op| match op {
            Op::Write(c) => Some(c),
            Op::Delete(_) => None,
        })
        .collect();
    let deletes: Vec<&Vec<Cell>> = last
        .iter()
        .filter_map(|op| match op {
            Op::Delete(c) => Some(c),
            Op::Write(_) => None,
        })
        .collect();
    if !writes.is_empty() {
        let mut names: Vec<&str> = Vec::new();
        for cells in &writes {
            for c in cells.iter() {
                if !names.contains(&c.name.as_str()) {
                    names.push(&c.name);
                }
            }
        }
        let arrays: Vec<Vec<Option<String>>> = names
            .iter()
            .map(|n| {
                writes
                    .iter()
                    .map(|cells| {
                        cells
                            .iter()
                            .find(|c| c.name == *n)
                            .and_then(|c| c.text.clone())
                    })
                    .collect()
            })
            .collect();
        let sql = insert_sql(table, columns, pk, &names);
        let mut q = sqlx::query(&sql);
        for a in arrays {
            q = q.bind(a);
        }
        q.execute(&mut **tx)
            .await
            .map_err(|e| pg::db_error(&format!("failed to write to table {table}"), e))?;
    }
    if !deletes.is_empty() && !pk.is_empty() {
        let placeholders: Vec<String> = (1..=pk.len()).map(|i| format!("${i}::text[]")).collect();
        let cond: Vec<String> = pk
            .iter()
            .map(|k| format!("d.{q} = u.{q}::{}", cast_type(columns, k), q = quote(k)))
            .collect();
        let sql = format!(
            "DELETE FROM {} AS d USING UNNEST({}) AS u({}) WHERE {}",
            quote_table(table),
            placeholders.join(", "),
            pk.iter().map(|k| quote(k)).collect::<Vec<_>>().join(", "),
            cond.join(" AND ")
        );
        let mut q = sqlx::query(&sql);
        for k in pk {
            let col: Vec<Option<String>> = deletes
                .iter()
                .map(|cells| {
                    cells
                        .iter()
                        .find(|c| &c.name == k)
                        .and_then(|c| c.text.clone())
                })
                .collect();
            q = q.bind(col);
        }
        q.execute(&mut **tx)
            .await
            .map_err(|e| pg::db_error(&format!("failed to delete from table {table}"), e))?;
    }
    Ok(())
}

fn cast_type(columns: &BTreeMap<String, Column>, name: &str) -> String {
    columns
        .get(name)
        .map(|c| c.sql_type.clone())
        .unwrap_or_else(|| "text".to_owned())
}

/// `INSERT INTO t (a, b) SELECT u.a::T, u.b::T FROM UNNEST($1::text[], $2::text[]) AS u(a, b)`
/// plus `ON CONFLICT (pk) DO UPDATE SET` the other columns when there is a key.
fn insert_sql(
    table: &str,
    columns: &BTreeMap<String, Column>,
    pk: &[String],
    names: &[&str],
) -> String {
    let quoted: Vec<String> = names.iter().map(|n| quote(n)).collect();
    let casts: Vec<String> = names
        .iter()
        .map(|n| format!("u.{}::{}", quote(n), cast_type(columns, n)))
        .collect();
    let params: Vec<String> = (1..=names.len()).map(|i| format!("${i}::text[]")).collect();
    let mut sql = format!(
        "INSERT INTO {} ({}) SELECT {} FROM UNNEST({}) AS u({})",
        quote_table(table),
        quoted.join(", "),
        casts.join(", "),
        params.join(", "),
        quoted.join(", ")
    );
    if !pk.is_empty() {
        let updates: Vec<String> = names
            .iter()
            .filter(|n| !pk.iter().any(|k| k == *n))
            .map(|n| format!("{q} = EXCLUDED.{q}", q = quote(n)))
            .collect();
        let conflict = pk.iter().map(|k| quote(k)).collect::<Vec<_>>().join(", ");
        if updates.is_empty() {
            sql.push_str(&format!(" ON CONFLICT ({conflict}) DO NOTHING"));
        } else {
            sql.push_str(&format!(
                " ON CONFLICT ({conflict}) DO UPDATE SET {}",
                updates.join(", ")
            ));
        }
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsert_sql_shape() {
        let cols = BTreeMap::from([
            (
                "id".to_owned(),
                Column {
                    sql_type: "bigint".into(),
                    type_name: "int8".into(),
                    not_null: true,
                },
            ),
            (
                "v".to_owned(),
                Column {
                    sql_type: "text".into(),
                    type_name: "text".into(),
                    not_null: false,
                },
            ),
        ]);
        assert_eq!(
            insert_sql("t", &cols, &["id".to_owned()], &["id", "v"]),
            "INSERT INTO \"t\" (\"id\", \"v\") SELECT u.\"id\"::bigint, u.\"v\"::text FROM UNNEST($1::text[], $2::text[]) AS u(\"id\", \"v\") ON CONFLICT (\"id\") DO UPDATE SET \"v\" = EXCLUDED.\"v\""
        );
    }
}
