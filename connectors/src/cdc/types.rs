//! PostgreSQL column types as Debezium's Postgres connector maps them to Connect schemas, and
//! their text form (what pgoutput sends and `::text` gives in the snapshot) as Connect values.
//!
//! | PostgreSQL | Connect (default modes) |
//! | --- | --- |
//! | `smallint`, `integer`, `bigint` | INT16, INT32, INT64 |
//! | `real`, `double precision` | FLOAT32, FLOAT64 |
//! | `boolean` | BOOLEAN |
//! | `text`, `varchar`, `char`, `name`, `citext`, ... | STRING |
//! | `bytea` | BYTES |
//! | `uuid` / `json`, `jsonb` | STRING `io.debezium.data.Uuid` / `io.debezium.data.Json` |
//! | `numeric(p,s)` / `numeric` | `Decimal` (scale s, `connect.decimal.precision` p) / `io.debezium.data.VariableScaleDecimal` |
//! | `date` | INT32 `io.debezium.time.Date` (days) |
//! | `time(p)` | INT32 `io.debezium.time.Time` (ms, p <= 3) or INT64 `io.debezium.time.MicroTime` |
//! | `timestamp(p)` | INT64 `io.debezium.time.Timestamp` (ms, p <= 3) or `io.debezium.time.MicroTimestamp` |
//! | `timestamptz`, `timetz` | STRING `io.debezium.time.ZonedTimestamp`, `io.debezium.time.ZonedTime` (UTC) |
//! | `interval` | INT64 `io.debezium.time.MicroDuration` (a month is 30.4375 days) |
//! | enums | STRING `io.debezium.data.Enum` (`allowed`: the labels) |
//! | arrays of the above | ARRAY of the element's (optional) schema |
//!
//! `decimal.handling.mode` (`double`, `string`) and `time.precision.mode`
//! (`adaptive_time_microseconds`, `connect`) change the numeric and time rows as in Debezium.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use connect_api::data::logical::{self, Decimal};
use connect_api::data::{Schema, SchemaBuilder, SchemaType, Struct, Value};
use connect_api::error::{ConnectError, Result};

use super::config::{DecimalMode, TimePrecision};

/// A column's type, resolved from its OID and modifier.
#[derive(Debug, Clone, PartialEq)]
pub enum PgType {
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Bool,
    Text,
    Bytea,
    Uuid,
    Json,
    /// `numeric(p, s)`: `None` without a modifier.
    Numeric(Option<(u32, i32)>),
    Date,
    /// Fractional digits (6 without a modifier).
    Time(u32),
    TimeTz,
    Timestamp(u32),
    /// Fractional digits (6 without a modifier): Debezium prints exactly that many.
    TimestampTz(u32),
    Interval,
    Enum(Vec<String>),
    Array(Box<PgType>),
    /// A type without a mapping: its name.
    Unknown(String),
}

pub const VARIABLE_SCALE_DECIMAL: &str = "io.debezium.data.VariableScaleDecimal";

/// The type of a built-in OID (`None`: look it up in the catalog).
pub fn builtin(oid: u32, typmod: i32) -> Option<PgType> {
    let precision = |default: u32| {
        if typmod < 0 { default } else { typmod as u32 }
    };
    Some(match oid {
        21 => PgType::Int2,
        23 | 26 => PgType::Int4,
        20 => PgType::Int8,
        700 => PgType::Float4,
        701 => PgType::Float8,
        16 => PgType::Bool,
        25 | 1043 | 1042 | 19 | 18 => PgType::Text,
        17 => PgType::Bytea,
        2950 => PgType::Uuid,
        114 | 3802 => PgType::Json,
        1700 => PgType::Numeric((typmod >= 4).then(|| {
            let t = typmod - 4;
            (((t >> 16) & 0xffff) as u32, (t & 0xffff) as i16 as i32)
        })),
        1082 => PgType::Date,
        1083 => PgType::Time(precision(6)),
        1266 => PgType::TimeTz,
        1114 => PgType::Timestamp(precision(6)),
        1184 => PgType::TimestampTz(precision(6)),
        1186 => PgType::Interval,
        _ => return None,
    })
}

fn named(b: SchemaBuilder, name: &str) -> SchemaBuilder {
    b.name(name).version(1)
}

impl PgType {
    /// The Connect schema of a column of this type (`optional` for a nullable column).
    pub fn schema(
        &self,
        column: &str,
        optional: bool,
        decimal: DecimalMode,
        time: TimePrecision,
        unknown_as_bytes: bool,
    ) -> Result<Schema> {
        let b = self.builder(column, decimal, time, unknown_as_bytes)?;
        Ok(if optional { b.optional() } else { b }.build())
    }

    fn builder(
        &self,
        column: &str,
        decimal: DecimalMode,
        time: TimePrecision,
        unknown_as_bytes: bool,
    ) -> Result<SchemaBuilder> {
        Ok(match self {
            PgType::Int2 => SchemaBuilder::new(SchemaType::Int16),
            PgType::Int4 => SchemaBuilder::new(SchemaType::Int32),
            PgType::Int8 => SchemaBuilder::new(SchemaType::Int64),
            PgType::Float4 => SchemaBuilder::new(SchemaType::Float32),
            PgType::Float8 => SchemaBuilder::new(SchemaType::Float64),
            PgType::Bool => SchemaBuilder::new(SchemaType::Boolean),
            PgType::Text => SchemaBuilder::new(SchemaType::String),
            PgType::Bytea => SchemaBuilder::new(SchemaType::Bytes),
            PgType::Uuid => named(
                SchemaBuilder::new(SchemaType::String),
                "io.debezium.data.Uuid",
            ),
            PgType::Json => named(
                SchemaBuilder::new(SchemaType::String),
                "io.debezium.data.Json",
            ),
            PgType::Numeric(ps) => match (decimal, ps) {
                (DecimalMode::Double, _) => SchemaBuilder::new(SchemaType::Float64),
                (DecimalMode::String, _) => SchemaBuilder::new(SchemaType::String),
                (DecimalMode::Precise, Some((p, s))) => logical::decimal_builder(*s)
                    .parameter("connect.decimal.precision", p.to_string()),
                (DecimalMode::Precise, None) => {
                    named(SchemaBuilder::struct_(), VARIABLE_SCALE_DECIMAL)
                        .doc("Variable scaled decimal")
                        .field("scale", Schema::int32())
                        .field("value", Schema::bytes())
                }
            },
            PgType::Date => match time {
                TimePrecision::Connect => logical::date_builder(),
                _ => named(
                    SchemaBuilder::new(SchemaType::Int32),
                    "io.debezium.time.Date",
                ),
            },
            PgType::Time(p) => match time {
                TimePrecision::Connect => logical::time_builder(),
                TimePrecision::Adaptive if *p <= 3 => named(
                    SchemaBuilder::new(SchemaType::Int32),
                    "io.debezium.time.Time",
                ),
                _ => named(
                    SchemaBuilder::new(SchemaType::Int64),
                    "io.debezium.time.MicroTime",
                ),
            },
            PgType::Timestamp(p) => match time {
                TimePrecision::Connect => logical::timestamp_builder(),
                _ if *p <= 3 => named(
                    SchemaBuilder::new(SchemaType::Int64),
                    "io.debezium.time.Timestamp",
                ),
                _ => named(
                    SchemaBuilder::new(SchemaType::Int64),
                    "io.debezium.time.MicroTimestamp",
                ),
            },
            PgType::TimestampTz(_) => named(
                SchemaBuilder::new(SchemaType::String),
                "io.debezium.time.ZonedTimestamp",
            ),
            PgType::TimeTz => named(
                SchemaBuilder::new(SchemaType::String),
                "io.debezium.time.ZonedTime",
            ),
            PgType::Interval => named(
                SchemaBuilder::new(SchemaType::Int64),
                "io.debezium.time.MicroDuration",
            ),
            PgType::Enum(labels) => named(
                SchemaBuilder::new(SchemaType::String),
                "io.debezium.data.Enum",
            )
            .parameter("allowed", labels.join(",")),
            PgType::Array(element) => SchemaBuilder::array(element.schema(
                column,
                true,
                decimal,
                time,
                unknown_as_bytes,
            )?),
            PgType::Unknown(name) if unknown_as_bytes => {
                let _ = name;
                SchemaBuilder::new(SchemaType::Bytes)
            }
            PgType::Unknown(name) => {
                return Err(ConnectError::config(format!(
                    "Column {column} is of type {name}, which this connector cannot map; set include.unknown.datatypes=true to send it as bytes of its text, or leave the column out with column.exclude.list"
                )));
            }
        })
    }

    /// The schema of a column whose default expression (`pg_get_expr` of `pg_attrdef`) is
    /// `default`: [`Self::schema`] with the default value Debezium's
    /// `PostgresDefaultValueConverter` gives it (none when it gives none).
    #[allow(clippy::too_many_arguments)]
    pub fn schema_with_default(
        &self,
        column: &str,
        optional: bool,
        default: Option<&str>,
        decimal: DecimalMode,
        time: TimePrecision,
        unknown_as_bytes: bool,
    ) -> Result<Schema> {
        let schema = self.schema(column, optional, decimal, time, unknown_as_bytes)?;
        let Some(value) = default
            .and_then(|expr| self.default_text(expr))
            .and_then(|text| self.value(&schema, &text, decimal).ok())
        else {
            return Ok(schema);
        };
        // A struct (VariableScaleDecimal) is no default (Debezium: KAFKA-12694).
        if matches!(value, Value::Struct(_) | Value::Null) {
            return Ok(schema);
        }
        let b = self
            .builder(column, decimal, time, unknown_as_bytes)?
            .default_value(value);
        Ok(if optional { b.optional() } else { b }.build())
    }

    /// The text form of a default expression, as Debezium's `PostgresDefaultValueConverter`
    /// extracts it: a function call (`nextval(...)`, `now()`) or `CURRENT_TIMESTAMP` & co. is
    /// the type's placeholder (`0`, `''`, the epoch, ...), `NULL::type` none, `'text'::type` the
    /// quoted text, anything else the expression itself. Types Debezium has no mapper for
    /// (bytea, arrays, `timetz`, `name`, ...) have no default.
    fn default_text(&self, expr: &str) -> Option<String> {
        let placeholder = match self {
            PgType::Bool => "false",
            PgType::Text | PgType::Enum(_) => "",
            PgType::Numeric(_) | PgType::Float4 | PgType::Float8 => "0.0",
            PgType::Int2 | PgType::Int4 | PgType::Int8 => "0",
            PgType::Json => "{}",
            PgType::Uuid => "00000000-0000-0000-0000-000000000000",
            PgType::Date => "1970-01-01",
            PgType::Time(_) => "00:00:00",
            PgType::Timestamp(_) => "1970-01-01 00:00:00",
            PgType::TimestampTz(_) => "1970-01-01 00:00:00+00",
            // Debezium's placeholder ("epoch") is no interval: no default.
            PgType::Interval => "",
            _ => return None,
        };
        let trimmed = match self {
            PgType::Text | PgType::Json | PgType::Enum(_) => expr,
            _ => expr.trim(),
        };
        let lower = trimmed.to_ascii_lowercase();
        let function = {
            let t = trimmed.strip_prefix('(').unwrap_or(trimmed);
            let name_len = t
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(t.len());
            name_len > 0 && t[name_len..].starts_with('(') && t.contains(')')
        };
        if function
            || [
                "current_timestamp",
                "current_time",
                "current_date",
                "localtime",
                "localtimestamp",
            ]
            .contains(&lower.as_str())
        {
            return (!matches!(self, PgType::Interval)).then(|| placeholder.to_owned());
        }
        if let PgType::Enum(_) = self {
            // Only `'label'::type`.
            let (literal, _) = trimmed.rsplit_once("::")?;
            return literal
                .strip_prefix('\'')
                .and_then(|l| l.strip_suffix('\''))
                .map(str::to_owned);
        }
        if !trimmed.contains('\'') {
            return (!trimmed.starts_with("NULL::")).then(|| trimmed.to_owned());
        }
        // The first quoted text (non-greedy, as Debezium's `'(.*?)'`).
        let start = trimmed.find('\'')? + 1;
        let end = start + trimmed[start..].find('\'')?;
        Some(trimmed[start..end].to_owned())
    }

    /// The value of a column from its text form.
    pub fn value(&self, schema: &Schema, text: &str, decimal: DecimalMode) -> Result<Value> {
        let bad = |why: &dyn std::fmt::Display| {
            ConnectError::data(format!("Cannot read {text:?} as {self:?}: {why}"))
        };
        let int = |t: &str| t.parse::<i64>().map_err(|e| bad(&e));
        Ok(match self {
            PgType::Int2 => Value::Int16(int(text)? as i16),
            PgType::Int4 => Value::Int32(int(text)? as i32),
            PgType::Int8 => Value::Int64(int(text)?),
            PgType::Float4 => Value::Float32(parse_float(text).map_err(|e| bad(&e))? as f32),
            PgType::Float8 => Value::Float64(parse_float(text).map_err(|e| bad(&e))?),
            PgType::Bool => Value::Boolean(text == "t" || text == "true"),
            PgType::Text | PgType::Uuid | PgType::Json | PgType::TimeTz | PgType::Enum(_) => {
                match self {
                    PgType::TimeTz => Value::String(zoned_time(text).map_err(|e| bad(&e))?),
                    _ => Value::String(text.to_owned()),
                }
            }
            PgType::Bytea => Value::Bytes(bytea(text).map_err(|e| bad(&e))?),
            PgType::Numeric(ps) => match decimal {
                DecimalMode::Double => Value::Float64(parse_float(text).map_err(|e| bad(&e))?),
                DecimalMode::String => Value::String(text.to_owned()),
                DecimalMode::Precise => {
                    if text == "NaN" {
                        return Err(bad(
                            &"NaN has no precise decimal form (decimal.handling.mode=double or string sends it)",
                        ));
                    }
                    match ps {
                        Some((_, s)) => Value::Bytes(Decimal::parse(text, *s)?.to_bytes()),
                        None => {
                            let scale = text.split_once('.').map_or(0, |(_, f)| f.len()) as i32;
                            let value = Decimal::parse(text, scale)?.to_bytes();
                            Value::Struct(
                                Struct::new(schema.clone())
                                    .with("scale", Value::Int32(scale))?
                                    .with("value", Value::Bytes(value))?,
                            )
                        }
                    }
                }
            },
            PgType::Date => {
                let d = NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|e| bad(&e))?;
                Value::Int32((d - NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()).num_days() as i32)
            }
            PgType::Time(_) => {
                let micros = time_micros(text).map_err(|e| bad(&e))?;
                match schema.schema_type() {
                    SchemaType::Int32 => Value::Int32((micros / 1000) as i32),
                    _ => Value::Int64(micros),
                }
            }
            PgType::Timestamp(_) => {
                let t = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
                    .map_err(|e| bad(&e))?
                    .and_utc();
                let micros = t.timestamp_micros();
                if schema.name() == Some("io.debezium.time.MicroTimestamp") {
                    Value::Int64(micros)
                } else {
                    Value::Int64(micros.div_euclid(1000))
                }
            }
            // Debezium passes PostgreSQL's infinities through as they are.
            PgType::TimestampTz(_) if text == "infinity" || text == "-infinity" => {
                Value::String(text.to_owned())
            }
            PgType::TimestampTz(p) => {
                let t = DateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f%#z")
                    .map_err(|e| bad(&e))?;
                Value::String(iso_utc(t.with_timezone(&chrono::Utc).naive_utc(), *p))
            }
            PgType::Interval => Value::Int64(interval_micros(text).map_err(|e| bad(&e))?),
            PgType::Array(element) => {
                let item_schema = schema
                    .value_schema()
                    .ok_or_else(|| bad(&"array schema without items"))?;
                let items = parse_array(text).map_err(|e| bad(&e))?;
                Value::Array(
                    items
                        .into_iter()
                        .map(|item| match item {
                            None => Ok(Value::Null),
                            Some(t) => element.value(item_schema, &t, decimal),
                        })
                        .collect::<Result<_>>()?,
                )
            }
            PgType::Unknown(_) => Value::Bytes(text.as_bytes().to_vec()),
        })
    }
}

fn parse_float(text: &str) -> std::result::Result<f64, std::num::ParseFloatError> {
    match text {
        "NaN" => Ok(f64::NAN),
        "Infinity" => Ok(f64::INFINITY),
        "-Infinity" => Ok(f64::NEG_INFINITY),
        t => t.parse(),
    }
}

fn bytea(text: &str) -> std::result::Result<Vec<u8>, String> {
    let hex = text
        .strip_prefix("\\x")
        .ok_or("not bytea's hex form (bytea_output=hex)")?;
    (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| "bad hex".to_owned())
        })
        .collect()
}

/// Microseconds of the day of `HH:MM:SS[.ffffff]` (24:00:00 included).
fn time_micros(text: &str) -> std::result::Result<i64, String> {
    if let Some(frac) = text.strip_prefix("24:00:00") {
        if frac.trim_start_matches(['.', '0']).is_empty() {
            return Ok(86_400_000_000);
        }
    }
    let t = NaiveTime::parse_from_str(text, "%H:%M:%S%.f").map_err(|e| e.to_string())?;
    Ok(i64::from(t.num_seconds_from_midnight()) * 1_000_000 + i64::from(t.nanosecond() / 1000))
}

/// `2024-01-02T03:04:05.123400Z`: ISO-8601 in UTC as Debezium's `ZonedTimestamp` prints a
/// `timestamptz(p)`: exactly `p` fractional digits (zeros included), or for `p` = 0 Java's
/// `ISO_OFFSET_DATE_TIME` (the fraction's significant digits).
fn iso_utc(t: NaiveDateTime, precision: u32) -> String {
    let frac = if (1..=9).contains(&precision) {
        let digits = format!("{:09}", t.nanosecond());
        format!(".{}", &digits[..precision as usize])
    } else {
        fraction(t.nanosecond())
    };
    format!("{}{frac}Z", t.format("%Y-%m-%dT%H:%M:%S"))
}

fn fraction(nanos: u32) -> String {
    if nanos == 0 {
        return String::new();
    }
    let digits = format!("{nanos:09}");
    format!(".{}", digits.trim_end_matches('0'))
}

/// `HH:MM:SS[.ffffff]+TZ` as UTC `HH:MM:SS[.ffffff]Z`.
fn zoned_time(text: &str) -> std::result::Result<String, String> {
    let cut = text
        .rfind(['+', '-'])
        .ok_or("time with time zone without an offset")?;
    let (time, zone) = text.split_at(cut);
    let micros = time_micros(time)?;
    let mut parts = zone[1..].split(':').map(|p| p.parse::<i64>().unwrap_or(0));
    let offset = parts.next().unwrap_or(0) * 3600
        + parts.next().unwrap_or(0) * 60
        + parts.next().unwrap_or(0);
    let offset = if zone.starts_with('-') {
        -offset
    } else {
        offset
    };
    let utc = (micros - offset * 1_000_000).rem_euclid(86_400_000_000);
    let t = NaiveTime::from_num_seconds_from_midnight_opt(
        (utc / 1_000_000) as u32,
        ((utc % 1_000_000) * 1000) as u32,
    )
    .ok_or("time out of range")?;
    Ok(format!(
        "{}{}Z",
        t.format("%H:%M:%S"),
        fraction(t.nanosecond())
    ))
}

/// An interval in PostgreSQL's default output style (`1 year 2 mons -3 days 04:05:06.5`) as
/// Debezium's `MicroDuration`: a month is 365.25 / 12 days.
fn interval_micros(text: &str) -> std::result::Result<i64, String> {
    const DAYS_PER_MONTH: f64 = 365.25 / 12.0;
    let (mut months, mut days, mut micros) = (0f64, 0f64, 0f64);
    let mut tokens = text.split_whitespace().peekable();
    while let Some(tok) = tokens.next() {
        if tok.contains(':') {
            let negative = tok.starts_with('-');
            let t = tok.trim_start_matches(['-', '+']);
            let mut hms = t.split(':');
            let h: f64 = hms
                .next()
                .unwrap_or("0")
                .parse()
                .map_err(|_| format!("bad hours in {text}"))?;
            let m: f64 = hms
                .next()
                .unwrap_or("0")
                .parse()
                .map_err(|_| format!("bad minutes in {text}"))?;
            let s: f64 = hms
                .next()
                .unwrap_or("0")
                .parse()
                .map_err(|_| format!("bad seconds in {text}"))?;
            let v = ((h * 60.0 + m) * 60.0 + s) * 1e6;
            micros += if negative { -v } else { v };
            continue;
        }
        let n: f64 = tok
            .parse()
            .map_err(|_| format!("unexpected {tok:?} in interval {text}"))?;
        let unit = tokens
            .next()
            .ok_or_else(|| format!("no unit after {tok} in {text}"))?;
        match unit.trim_end_matches('s') {
            "year" => months += n * 12.0,
            "mon" => months += n,
            "day" => days += n,
            other => return Err(format!("unknown interval unit {other:?}")),
        }
    }
    Ok(((months * DAYS_PER_MONTH + days) * 86_400e6 + micros).round() as i64)
}

/// The elements of a one-dimensional array literal (`{1,"a b",NULL}`); `None` for NULL.
fn parse_array(text: &str) -> std::result::Result<Vec<Option<String>>, String> {
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| format!("not an array literal: {text}"))?;
    let mut out = Vec::new();
    if inner.is_empty() {
        return Ok(out);
    }
    let mut chars = inner.chars().peekable();
    loop {
        let mut item = String::new();
        let quoted = chars.peek() == Some(&'"');
        if quoted {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => item.extend(chars.next()),
                    Some('"') => break,
                    Some(c) => item.push(c),
                    None => return Err(format!("unterminated quote in {text}")),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                if c == '{' {
                    return Err("multi-dimensional arrays are not supported".into());
                }
                item.push(c);
                chars.next();
            }
        }
        out.push((quoted || item != "NULL").then_some(item));
        match chars.next() {
            Some(',') => continue,
            None => break,
            Some(c) => return Err(format!("unexpected {c:?} in {text}")),
        }
    }
    Ok(out)
}

/// The value a required column gets when PostgreSQL did not send it (a delete's before image
/// without REPLICA IDENTITY FULL), as Debezium's converters fall back: the schema's default
/// (the column's), else the type's zero.
pub fn fallback(schema: &Schema) -> Value {
    use SchemaType as T;
    if let Some(default) = schema.default_value() {
        return default.clone();
    }
    match schema.schema_type() {
        T::Int8 => Value::Int8(0),
        T::Int16 => Value::Int16(0),
        T::Int32 => Value::Int32(0),
        T::Int64 => Value::Int64(0),
        T::Float32 => Value::Float32(0.0),
        T::Float64 => Value::Float64(0.0),
        T::Boolean => Value::Boolean(false),
        T::String => Value::String(String::new()),
        T::Bytes if logical::decimal_scale(schema).is_some() => Value::Bytes(vec![0]),
        T::Bytes => Value::Bytes(Vec::new()),
        T::Array => Value::Array(Vec::new()),
        T::Map => Value::Map(Vec::new()),
        T::Struct => Value::Struct(Struct::new(schema.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms_read_as_debezium_writes_them() {
        assert_eq!(
            interval_micros("1 year 2 mons 3 days 04:05:06.5").unwrap(),
            (((14.0f64 * 365.25 / 12.0 + 3.0) * 86_400e6) + ((4.0 * 60.0 + 5.0) * 60.0 + 6.5) * 1e6)
                .round() as i64
        );
        assert_eq!(
            interval_micros("-1 days +02:00:00").unwrap(),
            -86_400_000_000 + 7_200_000_000
        );
        assert_eq!(interval_micros("00:00:01").unwrap(), 1_000_000);
        assert_eq!(
            parse_array("{1,\"a b\",NULL,\"NULL\"}").unwrap(),
            vec![
                Some("1".into()),
                Some("a b".into()),
                None,
                Some("NULL".into())
            ]
        );
        assert_eq!(zoned_time("10:15:30.25+02").unwrap(), "08:15:30.25Z");
        assert_eq!(time_micros("24:00:00").unwrap(), 86_400_000_000);
        assert_eq!(bytea("\\x00ff").unwrap(), vec![0, 255]);
        let tz = PgType::TimestampTz(4);
        let s = tz
            .schema(
                "c",
                false,
                DecimalMode::Precise,
                TimePrecision::Adaptive,
                false,
            )
            .unwrap();
        assert_eq!(
            tz.value(&s, "2024-01-02 03:04:05.1234+01", DecimalMode::Precise)
                .unwrap(),
            Value::String("2024-01-02T02:04:05.1234Z".into())
        );
        let n = PgType::Numeric(None);
        let s = n
            .schema(
                "c",
                false,
                DecimalMode::Precise,
                TimePrecision::Adaptive,
                false,
            )
            .unwrap();
        let Value::Struct(v) = n.value(&s, "-12.345", DecimalMode::Precise).unwrap() else {
            panic!()
        };
        assert_eq!(v.get("scale").unwrap(), &Value::Int32(3));
        assert_eq!(
            builtin(1700, (10 << 16 | 2) + 4),
            Some(PgType::Numeric(Some((10, 2))))
        );
    }

    #[test]
    fn zoned_timestamps_have_the_columns_fraction_digits() {
        let at = |p: u32, text: &str| {
            let ty = PgType::TimestampTz(p);
            let s = ty
                .schema(
                    "c",
                    true,
                    DecimalMode::Precise,
                    TimePrecision::Adaptive,
                    false,
                )
                .unwrap();
            ty.value(&s, text, DecimalMode::Precise).unwrap()
        };
        let s = |v: &str| Value::String(v.into());
        assert_eq!(
            at(6, "2020-05-05 05:05:05+00"),
            s("2020-05-05T05:05:05.000000Z")
        );
        assert_eq!(
            at(3, "2020-05-05 05:05:05.5+00"),
            s("2020-05-05T05:05:05.500Z")
        );
        assert_eq!(at(0, "2020-05-05 05:05:05-01"), s("2020-05-05T06:05:05Z"));
        assert_eq!(at(6, "infinity"), s("infinity"));
    }

    #[test]
    fn column_defaults_as_debezium_parses_them() {
        let d = |ty: PgType, expr: &str| {
            ty.schema_with_default(
                "c",
                true,
                Some(expr),
                DecimalMode::Precise,
                TimePrecision::Adaptive,
                false,
            )
            .unwrap()
            .default_value()
            .cloned()
        };
        assert_eq!(d(PgType::Int4, "42"), Some(Value::Int32(42)));
        assert_eq!(d(PgType::Int4, "'-7'::integer"), Some(Value::Int32(-7)));
        assert_eq!(
            d(PgType::Int8, "nextval('t_id_seq'::regclass)"),
            Some(Value::Int64(0))
        );
        assert_eq!(
            d(PgType::Text, "'dflt'::text"),
            Some(Value::String("dflt".into()))
        );
        assert_eq!(d(PgType::Text, "NULL::text"), None);
        assert_eq!(d(PgType::Bool, "true"), Some(Value::Boolean(true)));
        assert_eq!(d(PgType::Timestamp(6), "now()"), Some(Value::Int64(0)));
        assert_eq!(
            d(PgType::Enum(vec!["a".into()]), "'a'::mood"),
            Some(Value::String("a".into()))
        );
        assert_eq!(d(PgType::Numeric(None), "1.5"), None);
        assert_eq!(d(PgType::Bytea, "'\\x00'::bytea"), None);
        assert_eq!(d(PgType::Interval, "now()"), None);
    }
}
