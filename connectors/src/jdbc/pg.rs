//! Postgres plumbing shared by the `jdbc` source and sinks: connecting, quoting, reading a
//! table's columns, Connect values to SQL text (bound as `text[]` and cast by Postgres, so a
//! whole batch is one statement), and SQLSTATE to [`ConnectError`] kinds.

use std::collections::BTreeMap;

use connect_api::data::logical::{DATE_NAME, TIMESTAMP_NAME, decimal_scale};
use connect_api::data::{Schema, SchemaType, Value};
use connect_api::error::{ConnectError, Result};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{ConnectOptions, Row};

/// Opens a small pool (a task writes from one place at a time) with the URL's TLS
/// ([`super::url`]). A TLS failure (an untrusted or mismatched certificate, a server without
/// TLS under `require`) is a fatal error naming the problem: retrying cannot fix it.
pub async fn connect(url: &str, user: Option<&str>, password: Option<&str>) -> Result<PgPool> {
    let parsed = super::url::parse(url)?;
    let mut opts = parsed.options.clone();
    if let Some(u) = user {
        opts = opts.username(u);
    }
    if let Some(p) = password {
        opts = opts.password(p);
    }
    opts = opts.disable_statement_logging();
    PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(std::time::Duration::from_secs(30))
        .connect_with(opts)
        .await
        .map_err(|e| connect_error(&parsed, e))
}

/// The TLS problem behind a connection error: sqlx reports some as `Error::Tls`, and a
/// certificate rustls refuses during the handshake as an I/O error wrapping `rustls::Error`.
fn tls_failure(e: &sqlx::Error) -> Option<String> {
    if let sqlx::Error::Tls(cause) = e {
        return Some(cause.to_string());
    }
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<rustls::Error>() {
            return Some(r.to_string());
        }
        if let Some(r) = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return Some(r.to_string());
        }
        cur = err.source();
    }
    None
}

fn connect_error(url: &super::url::PgUrl, e: sqlx::Error) -> ConnectError {
    match tls_failure(&e) {
        Some(cause) => {
            let ca = match &url.root_cert {
                Some(p) => format!(", sslrootcert={}", p.display()),
                None => String::new(),
            };
            ConnectError::fatal(format!(
                "failed to connect to Postgres at {} over TLS (sslmode={}{ca}): {cause}",
                url.address(),
                url.ssl_mode_name()
            ))
            .with_source(e)
        }
        None => ConnectError::retriable(format!(
            "failed to connect to Postgres at {}: {e}",
            url.address()
        ))
        .with_source(e),
    }
}

/// Runs one DDL statement (`CREATE TABLE IF NOT EXISTS`, `ADD COLUMN IF NOT EXISTS`) under a
/// transaction-scoped advisory lock on `table`: `IF NOT EXISTS` is not safe against a
/// concurrent twin (two tasks creating one table race on `pg_type` and one fails with a
/// unique violation), and every task of a connector starts at once.
pub async fn ddl(pool: &PgPool, table: &str, sql: &str) -> Result<()> {
    let run = async {
        let mut tx = pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))")
            .bind(table)
            .execute(&mut *tx)
            .await?;
        sqlx::query(sql).execute(&mut *tx).await?;
        tx.commit().await
    };
    run.await
        .map_err(|e| db_error(&format!("failed to run {sql}"), e))
}

/// `"name"` with embedded quotes doubled.
pub fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// A table name as written in config (`schema.table` or `table`), quoted part by part.
pub fn quote_table(name: &str) -> String {
    name.split('.').map(quote).collect::<Vec<_>>().join(".")
}

/// Maps a database error to what the runtime should do: bad data (SQLSTATE classes 22 and 23,
/// datatype mismatch) is a `Data` error for the record; a lost connection is retriable.
pub fn db_error(what: &str, e: sqlx::Error) -> ConnectError {
    let kind = match &e {
        sqlx::Error::Database(d) => {
            let code = d.code().unwrap_or_default();
            if code.starts_with("22") || code.starts_with("23") || code == "42804" {
                "data"
            } else if code.starts_with("08") || code.starts_with("40") || code.starts_with("57") {
                "retriable"
            } else {
                "fatal"
            }
        }
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => "retriable",
        _ => "fatal",
    };
    let message = format!("{what}: {e}");
    match kind {
        "data" => ConnectError::data(message),
        "retriable" => ConnectError::retriable(message),
        _ => ConnectError::fatal(message),
    }
    .with_source(e)
}

/// One column of an existing table.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// `format_type` text, usable in a cast: `bigint`, `character varying(20)`, `jsonb`.
    pub sql_type: String,
    /// `pg_type.typname`: `int8`, `varchar`, `jsonb`.
    pub type_name: String,
    pub not_null: bool,
}

/// Columns of `table` by name; empty when the table does not exist.
pub async fn table_columns(pool: &PgPool, table: &str) -> Result<BTreeMap<String, Column>> {
    let rows = sqlx::query(
        "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), t.typname::text, a.attnotnull \
         FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid \
         WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped \
         ORDER BY a.attnum",
    )
    .bind(quote_table(table))
    .fetch_all(pool)
    .await
    .map_err(|e| db_error(&format!("failed to read the columns of table {table}"), e))?;
    Ok(rows
        .into_iter()
        .map(|r| {
            (
                r.get::<String, _>(0),
                Column {
                    sql_type: r.get(1),
                    type_name: r.get(2),
                    not_null: r.get(3),
                },
            )
        })
        .collect())
}

/// The SQL type `auto.create` / `auto.evolve` give a field, from its schema or (schemaless)
/// its value.
pub fn sql_type_for(schema: Option<&Schema>, value: &Value) -> &'static str {
    if let Some(s) = schema {
        match s.name() {
            Some(TIMESTAMP_NAME) => return "TIMESTAMPTZ",
            Some(DATE_NAME) => return "DATE",
            _ if decimal_scale(s).is_some() => return "NUMERIC",
            _ => {}
        }
        return match s.schema_type() {
            SchemaType::Int8 | SchemaType::Int16 => "SMALLINT",
            SchemaType::Int32 => "INTEGER",
            SchemaType::Int64 => "BIGINT",
            SchemaType::Float32 => "REAL",
            SchemaType::Float64 => "DOUBLE PRECISION",
            SchemaType::Boolean => "BOOLEAN",
            SchemaType::String => "TEXT",
            SchemaType::Bytes => "BYTEA",
            SchemaType::Array | SchemaType::Map | SchemaType::Struct => "JSONB",
        };
    }
    match value {
        Value::Int8(_) | Value::Int16(_) => "SMALLINT",
        Value::Int32(_) => "INTEGER",
        Value::Int64(_) => "BIGINT",
        Value::Float32(_) => "REAL",
        Value::Float64(_) => "DOUBLE PRECISION",
        Value::Boolean(_) => "BOOLEAN",
        Value::Bytes(_) => "BYTEA",
        Value::Array(_) | Value::Map(_) | Value::Struct(_) => "JSONB",
        Value::String(_) | Value::Null => "TEXT",
    }
}

/// A Connect value as the text Postgres casts to the column type; `None` is SQL NULL.
pub fn to_sql_text(schema: Option<&Schema>, value: &Value) -> Result<Option<String>> {
    let logical = schema.and_then(Schema::name);
    Ok(Some(match value {
        Value::Null => return Ok(None),
        Value::Int64(ms) if logical == Some(TIMESTAMP_NAME) => {
            chrono::DateTime::from_timestamp_millis(*ms)
                .ok_or_else(|| ConnectError::data(format!("timestamp {ms} is out of range")))?
                .to_rfc3339()
        }
        Value::Int32(days) if logical == Some(DATE_NAME) => {
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).expect("valid date");
            // An INT32 day count reaches ±5.8 million years; chrono (and Postgres) stop
            // near ±262,000: a data error, not a panic.
            epoch
                .checked_add_signed(chrono::Duration::days(i64::from(*days)))
                .ok_or_else(|| {
                    ConnectError::data(format!(
                        "date {days} (days since 1970-01-01) is out of range"
                    ))
                })?
                .to_string()
        }
        Value::Bytes(b) if schema.and_then(decimal_scale).is_some() => {
            let scale = schema.and_then(decimal_scale).unwrap_or(0);
            connect_api::data::logical::Decimal::from_bytes(b, scale)?.to_plain_string()
        }
        Value::Int8(v) => v.to_string(),
        Value::Int16(v) => v.to_string(),
        Value::Int32(v) => v.to_string(),
        Value::Int64(v) => v.to_string(),
        Value::Float32(v) => v.to_string(),
        Value::Float64(v) => v.to_string(),
        Value::Boolean(v) => v.to_string(),
        Value::String(s) => s.clone(),
        Value::Bytes(b) => {
            let mut s = String::with_capacity(2 + b.len() * 2);
            s.push_str("\\x");
            for byte in b {
                s.push_str(&format!("{byte:02x}"));
            }
            s
        }
        other => connect_api::converter::JsonConverter::new(false)
            .to_json_value(schema, other)?
            .to_string(),
    }))
}

/// Checks, before writing, that `text` fits a column of type `column` (so one bad record is
/// reported alone instead of failing its batch): numbers parse, booleans are booleans, JSON
/// is JSON, NOT NULL columns get a value. Other types are left to Postgres.
pub fn check_value(name: &str, column: &Column, text: Option<&str>) -> Result<()> {
    let Some(text) = text else {
        return if column.not_null {
            Err(ConnectError::data(format!(
                "null value for NOT NULL column {name}"
            )))
        } else {
            Ok(())
        };
    };
    let ok = match column.type_name.as_str() {
        "int2" => text.parse::<i16>().is_ok(),
        "int4" => text.parse::<i32>().is_ok(),
        "int8" => text.parse::<i64>().is_ok(),
        "float4" | "float8" | "numeric" => text.parse::<f64>().is_ok(),
        "bool" => matches!(text, "true" | "false"),
        "json" | "jsonb" => serde_json::from_str::<serde_json::Value>(text).is_ok(),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(ConnectError::data(format!(
            "value {text:?} does not fit column {name} of type {}",
            column.sql_type
        )))
    }
}

/// The fields of a record key or value as `(name, schema, value)`: a STRUCT's fields, or a
/// schemaless map's string keys. `Null` (a tombstone) has none.
pub fn fields_of(
    schema: Option<&Schema>,
    value: &Value,
) -> Result<Vec<(String, Option<Schema>, Value)>> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Struct(s) => Ok(s
            .schema()
            .fields()
            .iter()
            .zip(s.values())
            .map(|(f, v)| (f.name.clone(), Some(f.schema.clone()), v.clone()))
            .collect()),
        Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| match k {
                Value::String(k) => Ok((
                    k.clone(),
                    schema.and_then(Schema::value_schema).cloned(),
                    v.clone(),
                )),
                other => Err(ConnectError::data(format!(
                    "map keys must be strings to name columns, got {}",
                    other.type_name()
                ))),
            })
            .collect(),
        other => Err(ConnectError::data(format!(
            "expected a struct or a JSON object, got {}",
            other.type_name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_certificate_is_a_tls_failure_and_a_refused_connection_is_not() {
        let refused_cert = sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        ));
        let m = tls_failure(&refused_cert).expect("a TLS failure");
        assert!(m.contains("invalid peer certificate: UnknownIssuer"), "{m}");
        let no_tls = sqlx::Error::Tls("server does not support TLS".into());
        assert_eq!(
            tls_failure(&no_tls).as_deref(),
            Some("server does not support TLS")
        );
        let refused = sqlx::Error::Io(std::io::ErrorKind::ConnectionRefused.into());
        assert_eq!(tls_failure(&refused), None);
    }

    #[test]
    fn quoting_and_text() {
        assert_eq!(quote_table("public.a\"b"), "\"public\".\"a\"\"b\"");
        assert_eq!(
            to_sql_text(None, &Value::Bytes(vec![1, 255]))
                .unwrap()
                .unwrap(),
            "\\x01ff"
        );
        assert_eq!(to_sql_text(None, &Value::Null).unwrap(), None);
        let col = Column {
            sql_type: "bigint".into(),
            type_name: "int8".into(),
            not_null: true,
        };
        assert!(check_value("n", &col, Some("12")).is_ok());
        assert!(check_value("n", &col, Some("x")).is_err());
        assert!(check_value("n", &col, None).is_err());
    }

    /// Dates and decimals out of range are data errors (the record goes to the error
    /// handler), never a panic of the task.
    #[test]
    fn out_of_range_dates_and_decimal_scales_are_data_errors() {
        use connect_api::data::logical::{date_builder, decimal_builder};
        let date = date_builder().build();
        let text = |days: i32| to_sql_text(Some(&date), &Value::Int32(days));
        assert_eq!(text(0).unwrap().unwrap(), "1970-01-01");
        assert_eq!(text(-1).unwrap().unwrap(), "1969-12-31");
        for days in [i32::MAX, i32::MIN, 100_000_000, -100_000_000] {
            let e = text(days).unwrap_err();
            assert_eq!(e.kind(), connect_api::ErrorKind::Data);
            assert!(e.to_string().contains("out of range"), "{e}");
        }
        for scale in [i32::MAX, i32::MIN] {
            let schema = decimal_builder(scale).build();
            let e = to_sql_text(Some(&schema), &Value::Bytes(vec![1])).unwrap_err();
            assert!(e.to_string().contains("scale"), "{e}");
        }
        let schema = decimal_builder(2).build();
        assert_eq!(
            to_sql_text(Some(&schema), &Value::Bytes(vec![0x04, 0xd2]))
                .unwrap()
                .unwrap(),
            "12.34"
        );
    }
}
