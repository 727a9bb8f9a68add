//! Debezium's change event: its key (the primary key's columns), its value (the envelope:
//! `before`, `after`, `source`, `op`, `ts_ms`, `ts_us`, `ts_ns`, `transaction`) and their Connect
//! schemas, named as Debezium 3.6 names them (`<prefix>.<schema>.<table>.Key`, `.Value`,
//! `.Envelope` version 2; `io.debezium.connector.postgresql.Source`; `event.block`).

use std::time::{SystemTime, UNIX_EPOCH};

use connect_api::data::{Schema, SchemaBuilder, Struct, Value};
use connect_api::error::Result;

use super::types::{PgType, fallback};

pub const CONNECTOR_NAME: &str = "postgresql";
const SOURCE_SCHEMA_NAME: &str = "io.debezium.connector.postgresql.Source";
const SNAPSHOT_ALLOWED: &str =
    "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental";

/// What a change event reports about where it came from.
#[derive(Debug, Clone, Default)]
pub struct SourceInfo {
    /// Commit time (snapshot: the snapshot's start), microseconds since the epoch.
    pub ts_us: i64,
    /// `true`, `first`, `last`, ... while snapshotting; `None` streaming (`false`).
    pub snapshot: Option<&'static str>,
    pub tx_id: Option<i64>,
    pub lsn: Option<u64>,
    /// `["<last commit lsn>","<this lsn>"]` (Debezium's `sequence`).
    pub sequence: Option<String>,
}

/// `op` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Create,
    Update,
    Delete,
}

impl Op {
    fn code(self) -> &'static str {
        match self {
            Op::Read => "r",
            Op::Create => "c",
            Op::Update => "u",
            Op::Delete => "d",
        }
    }
}

/// One captured column.
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    /// The type as SQL names it (`format_type`), to cast key values in queries.
    pub sql_type: String,
    pub ty: PgType,
    pub schema: Schema,
    pub primary_key: bool,
}

impl Column {
    /// The column as text in the snapshot's query (`alias.column::text`), in the form pgoutput
    /// streams it: a `char(n)` keeps its padding (`::text` of a `bpchar` trims it; its output
    /// function does not, and Debezium sends the padded value).
    pub fn select_text(&self, alias: &str, quoted: &str) -> String {
        let t = self.sql_type.as_str();
        if t == "bpchar" || t == "character" || t.starts_with("character(") {
            format!("textin(bpcharout({alias}.{quoted}))")
        } else {
            format!("{alias}.{quoted}::text")
        }
    }
}

/// A captured table: its columns and the schemas of its events.
#[derive(Debug, Clone)]
pub struct TableSchema {
    pub schema: String,
    pub table: String,
    pub topic: String,
    pub columns: Vec<Column>,
    pub key_schema: Option<Schema>,
    pub value_schema: Schema,
    pub envelope_schema: Schema,
}

/// `io.debezium.connector.postgresql.Source` (built once).
pub fn source_schema() -> Schema {
    static SCHEMA: std::sync::OnceLock<Schema> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(build_source_schema).clone()
}

fn build_source_schema() -> Schema {
    SchemaBuilder::struct_()
        .name(SOURCE_SCHEMA_NAME)
        .version(1)
        .field("version", Schema::string())
        .field("connector", Schema::string())
        .field("name", Schema::string())
        .field("ts_ms", Schema::int64())
        .field(
            "snapshot",
            SchemaBuilder::new(connect_api::data::SchemaType::String)
                .name("io.debezium.data.Enum")
                .version(1)
                .parameter("allowed", SNAPSHOT_ALLOWED)
                .default_value(Value::String("false".into()))
                .optional()
                .build(),
        )
        .field("db", Schema::string())
        .field("sequence", Schema::optional_string())
        .field("ts_us", Schema::optional_int64())
        .field("ts_ns", Schema::optional_int64())
        .field("schema", Schema::string())
        .field("table", Schema::string())
        .field("txId", Schema::optional_int64())
        .field("lsn", Schema::optional_int64())
        .field("xmin", Schema::optional_int64())
        .field("origin", Schema::optional_string())
        .field("origin_lsn", Schema::optional_int64())
        .build()
}

fn transaction_schema() -> Schema {
    static SCHEMA: std::sync::OnceLock<Schema> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(build_transaction_schema).clone()
}

fn build_transaction_schema() -> Schema {
    SchemaBuilder::struct_()
        .optional()
        .name("event.block")
        .version(1)
        .field("id", Schema::string())
        .field("total_order", Schema::int64())
        .field("data_collection_order", Schema::int64())
        .build()
}

impl TableSchema {
    /// `schema.table`: the table's place in the snapshot's order.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.schema, self.table)
    }

    pub fn new(prefix: &str, schema: &str, table: &str, columns: Vec<Column>) -> Self {
        let topic = format!("{prefix}.{schema}.{table}");
        let mut value = SchemaBuilder::struct_()
            .name(format!("{topic}.Value"))
            .optional();
        for c in &columns {
            value = value.field(c.name.clone(), c.schema.clone());
        }
        let value_schema = value.build();
        let key_schema = columns.iter().any(|c| c.primary_key).then(|| {
            let mut key = SchemaBuilder::struct_().name(format!("{topic}.Key"));
            for c in columns.iter().filter(|c| c.primary_key) {
                key = key.field(c.name.clone(), c.schema.clone());
            }
            key.build()
        });
        let envelope_schema = SchemaBuilder::struct_()
            .name(format!("{topic}.Envelope"))
            .version(2)
            .field("before", value_schema.clone())
            .field("after", value_schema.clone())
            .field("source", source_schema())
            // Debezium's order: `transaction` before `op` (SchemaFactory.datatypeEnvelopeSchema).
            .field("transaction", transaction_schema())
            .field("op", Schema::string())
            .field("ts_ms", Schema::optional_int64())
            .field("ts_us", Schema::optional_int64())
            .field("ts_ns", Schema::optional_int64())
            .build();
        TableSchema {
            schema: schema.to_owned(),
            table: table.to_owned(),
            topic,
            columns,
            key_schema,
            value_schema,
            envelope_schema,
        }
    }

    /// A row as the `Value` struct; `values[i]` is column `i`'s, `None` when PostgreSQL did not
    /// send it (an unchanged TOASTed value), which becomes `placeholder` for text and bytes
    /// columns, else null or the type's fallback; a null in a required column (the non-key
    /// columns of a delete without REPLICA IDENTITY FULL) is the type's fallback, as Debezium
    /// sends it.
    pub fn row(&self, values: Vec<Option<Value>>, placeholder: &str) -> Result<Struct> {
        let mut row = Struct::new(self.value_schema.clone());
        for (c, v) in self.columns.iter().zip(values) {
            let v = match v {
                // A delete's old key tuple sends the other columns as nulls.
                Some(Value::Null) if !c.schema.is_optional() => fallback(&c.schema),
                Some(v) => v,
                None => match c.schema.schema_type() {
                    connect_api::data::SchemaType::String => Value::String(placeholder.into()),
                    connect_api::data::SchemaType::Bytes
                        if connect_api::data::logical::decimal_scale(&c.schema).is_none() =>
                    {
                        Value::Bytes(placeholder.as_bytes().to_vec())
                    }
                    _ if c.schema.is_optional() => Value::Null,
                    _ => fallback(&c.schema),
                },
            };
            row.put(&c.name, v)?;
        }
        Ok(row)
    }

    /// The key of a row (`None`: the table has no primary key).
    pub fn key(&self, row: &Struct) -> Result<Option<Struct>> {
        let Some(schema) = &self.key_schema else {
            return Ok(None);
        };
        let mut key = Struct::new(schema.clone());
        for c in self.columns.iter().filter(|c| c.primary_key) {
            let v = row.get(&c.name).cloned().unwrap_or(Value::Null);
            key.put(&c.name, v)?;
        }
        Ok(Some(key))
    }

    #[allow(clippy::too_many_arguments)]
    pub fn envelope(
        &self,
        op: Op,
        before: Option<Struct>,
        after: Option<Struct>,
        source: &SourceInfo,
        server: &str,
        db: &str,
        transaction: Option<(String, i64, i64)>,
    ) -> Result<Struct> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let mut src = Struct::new(source_schema());
        src.put("version", Value::String(crate::VERSION.to_owned()))?;
        src.put("connector", Value::String(CONNECTOR_NAME.into()))?;
        src.put("name", Value::String(server.to_owned()))?;
        src.put("ts_ms", Value::Int64(source.ts_us.div_euclid(1000)))?;
        src.put(
            "snapshot",
            Value::String(source.snapshot.unwrap_or("false").to_owned()),
        )?;
        src.put("db", Value::String(db.to_owned()))?;
        if let Some(seq) = &source.sequence {
            src.put("sequence", Value::String(seq.clone()))?;
        }
        src.put("ts_us", Value::Int64(source.ts_us))?;
        src.put("ts_ns", Value::Int64(source.ts_us.saturating_mul(1000)))?;
        src.put("schema", Value::String(self.schema.clone()))?;
        src.put("table", Value::String(self.table.clone()))?;
        if let Some(tx) = source.tx_id {
            src.put("txId", Value::Int64(tx))?;
        }
        if let Some(lsn) = source.lsn {
            src.put("lsn", Value::Int64(lsn as i64))?;
        }
        let mut env = Struct::new(self.envelope_schema.clone());
        env.put("before", before.map_or(Value::Null, Value::Struct))?;
        env.put("after", after.map_or(Value::Null, Value::Struct))?;
        env.put("source", Value::Struct(src))?;
        env.put("op", Value::String(op.code().into()))?;
        env.put("ts_ms", Value::Int64(now.as_millis() as i64))?;
        env.put("ts_us", Value::Int64(now.as_micros() as i64))?;
        env.put("ts_ns", Value::Int64(now.as_nanos() as i64))?;
        if let Some((id, total, data_collection)) = transaction {
            let mut block = Struct::new(transaction_schema());
            block.put("id", Value::String(id))?;
            block.put("total_order", Value::Int64(total))?;
            block.put("data_collection_order", Value::Int64(data_collection))?;
            env.put("transaction", Value::Struct(block))?;
        }
        Ok(env)
    }
}
