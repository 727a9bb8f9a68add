//! Confluent's storage partitioners: where in `<topics.dir>/<topic>/` a record's file goes.
//!
//! - `DefaultPartitioner`: `partition=<kafka partition>`.
//! - `FieldPartitioner`: `<field>=<value>` per `partition.field.name` (a Struct value's
//!   integer, string or boolean field; nested with dots), joined by `directory.delim`.
//! - `TimeBasedPartitioner`: the record's time, floored to `partition.duration.ms` in
//!   `timezone`, formatted with the Joda pattern `path.format` (see [`super::joda`]);
//!   `DailyPartitioner` and `HourlyPartitioner` are it with a fixed duration and pattern.
//!
//! Every partitioner but the wall-clock extractor is a pure function of the record, which is
//! what makes file names repeatable (see the module doc of [`super`]).

use connect_api::data::{Schema, SchemaType, Value};
use connect_api::error::{ConnectError, Result};
use connect_api::record::SinkRecord;

use super::joda::{JodaFormat, Zone};

pub const DEFAULT_PARTITIONER: &str = "io.confluent.connect.storage.partitioner.DefaultPartitioner";
pub const FIELD_PARTITIONER: &str = "io.confluent.connect.storage.partitioner.FieldPartitioner";
pub const TIME_BASED_PARTITIONER: &str =
    "io.confluent.connect.storage.partitioner.TimeBasedPartitioner";
pub const DAILY_PARTITIONER: &str = "io.confluent.connect.storage.partitioner.DailyPartitioner";
pub const HOURLY_PARTITIONER: &str = "io.confluent.connect.storage.partitioner.HourlyPartitioner";

/// Where a time-based partitioner takes a record's time from (`timestamp.extractor`).
#[derive(Debug, Clone, PartialEq)]
pub enum TimestampExtractor {
    /// The time the task handles the record: not repeatable.
    Wallclock,
    /// The Kafka record's timestamp.
    Record,
    /// A field of the value (`timestamp.field`): Timestamp, INT32/INT64 millis, or a string
    /// (digits as millis, else an ISO-8601 date-time).
    RecordField(String),
}

impl TimestampExtractor {
    /// The record's time in ms since the epoch; `now` is the wall clock of this batch.
    pub fn extract(&self, record: &SinkRecord, now: i64) -> Result<i64> {
        match self {
            Self::Wallclock => Ok(now),
            Self::Record => record.timestamp.ok_or_else(|| {
                ConnectError::data(format!(
                    "unable to determine timestamp using timestamp.extractor Record for the record \
                     at {}-{}@{}: it has no timestamp",
                    record.topic, record.kafka_partition, record.kafka_offset
                ))
            }),
            Self::RecordField(field) => {
                let (_, value) = nested(record.value_schema.as_ref(), &record.value, field)?;
                let millis = match value {
                    Value::Int32(v) => Some(i64::from(*v)),
                    Value::Int64(v) => Some(*v),
                    Value::String(s) => Some(parse_timestamp_string(s).ok_or_else(|| {
                        ConnectError::data(format!(
                            "timestamp field '{field}' holds '{s}', neither millis nor an \
                             ISO-8601 date-time"
                        ))
                    })?),
                    _ => None,
                };
                millis.ok_or_else(|| {
                    ConnectError::data(format!(
                        "error extracting timestamp from record field: {field} (a {})",
                        value.type_name()
                    ))
                })
            }
        }
    }
}

/// Joda's `ISODateTimeFormat.dateTimeParser()` for the forms met in practice: digits are
/// millis; else `yyyy-MM-dd['T'HH:mm[:ss[.SSS]]][Z|±HH:mm]` (no zone = UTC).
fn parse_timestamp_string(s: &str) -> Option<i64> {
    let t = s.trim();
    if !t.is_empty()
        && t.len() <= 20
        && t.strip_prefix('-')
            .unwrap_or(t)
            .bytes()
            .all(|b| b.is_ascii_digit())
    {
        return t.parse().ok();
    }
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(t) {
        return Some(dt.timestamp_millis());
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
    ] {
        if let Ok(dt) = chrono::DateTime::parse_from_str(t, f) {
            return Some(dt.timestamp_millis());
        }
    }
    let t = t.strip_suffix('Z').unwrap_or(t);
    for f in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(dt) = chrono::NaiveDateTime::parse_from_str(t, f) {
            return Some(dt.and_utc().timestamp_millis());
        }
    }
    chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|dt| dt.and_utc().timestamp_millis())
}

/// A value's field by a dotted path (`DataUtils.getNestedFieldValue`), with its schema.
fn nested<'a>(
    schema: Option<&'a Schema>,
    value: &'a Value,
    path: &str,
) -> Result<(Option<&'a Schema>, &'a Value)> {
    let mut schema = schema;
    let mut value = value;
    for part in path.split('.') {
        match value {
            Value::Struct(s) => {
                let field = s.schema().field(part).ok_or_else(|| {
                    ConnectError::data(format!("field '{path}' is not present in the schema"))
                })?;
                schema = Some(&field.schema);
                value = s.get(part).unwrap_or(&Value::Null);
            }
            Value::Map(entries) => {
                schema = None;
                value = entries
                    .iter()
                    .find(|(k, _)| matches!(k, Value::String(k) if k == part))
                    .map(|(_, v)| v)
                    .ok_or_else(|| {
                        ConnectError::data(format!("field '{path}' is not present in the value"))
                    })?;
            }
            other => {
                return Err(ConnectError::data(format!(
                    "value is not of Struct or Map type (a {}), so it has no field '{path}'",
                    other.type_name()
                )));
            }
        }
    }
    Ok((schema, value))
}

/// The configured partitioner.
#[derive(Debug, Clone)]
pub enum Partitioner {
    Default,
    Field {
        fields: Vec<String>,
        delim: String,
    },
    TimeBased {
        duration_ms: i64,
        format: JodaFormat,
        zone: Zone,
        extractor: TimestampExtractor,
    },
}

impl Partitioner {
    /// The time extractor, for a time-based partitioner (`rotate.interval.ms` uses it).
    pub fn extractor(&self) -> Option<&TimestampExtractor> {
        match self {
            Self::TimeBased { extractor, .. } => Some(extractor),
            _ => None,
        }
    }

    /// Whether the same record always encodes the same way (no wall clock).
    pub fn is_repeatable(&self) -> bool {
        self.extractor() != Some(&TimestampExtractor::Wallclock)
    }

    /// `encodePartition`: the directory of the record below its topic. A data error names
    /// what the record lacks (the record then goes to the errant-record reporter).
    pub fn encode(&self, record: &SinkRecord, now: i64) -> Result<String> {
        match self {
            Self::Default => Ok(format!("partition={}", record.kafka_partition)),
            Self::Field { fields, delim } => {
                if !matches!(record.value, Value::Struct(_)) {
                    return Err(ConnectError::data(format!(
                        "FieldPartitioner: the value is not a Struct (a {})",
                        record.value.type_name()
                    )));
                }
                let mut out = String::new();
                for field in fields {
                    if !out.is_empty() {
                        out.push_str(delim);
                    }
                    let (schema, value) =
                        nested(record.value_schema.as_ref(), &record.value, field)?;
                    let text = match value {
                        Value::Null => "null".to_owned(),
                        Value::Int8(v) => v.to_string(),
                        Value::Int16(v) => v.to_string(),
                        Value::Int32(v) => v.to_string(),
                        Value::Int64(v) => v.to_string(),
                        Value::String(s) => s.clone(),
                        Value::Boolean(b) => b.to_string(),
                        other => {
                            let ty = schema
                                .map_or(other.type_name(), |s| schema_type_name(s.schema_type()));
                            return Err(ConnectError::data(format!(
                                "FieldPartitioner: type {ty} of field '{field}' is not supported \
                                 as a partition key"
                            )));
                        }
                    };
                    out.push_str(field);
                    out.push('=');
                    out.push_str(&text);
                }
                Ok(out)
            }
            Self::TimeBased {
                duration_ms,
                format,
                zone,
                extractor,
            } => {
                let ts = extractor.extract(record, now)?;
                Ok(format.format(bucket_start(*duration_ms, ts, zone), zone))
            }
        }
    }
}

/// `s3.schema.partition.affix.type`: the value schema's name around the encoded partition
/// (Confluent's `SchemaPartitioner`; a record without a schema or name gives `null`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaAffix {
    Prefix,
    Suffix,
}

impl SchemaAffix {
    pub fn apply(self, encoded: &str, schema: Option<&Schema>) -> String {
        let name = schema.and_then(Schema::name).unwrap_or("null");
        match self {
            Self::Prefix => format!("schema_name={name}/{encoded}"),
            Self::Suffix => format!("{encoded}/schema_name={name}"),
        }
    }
}

fn schema_type_name(t: SchemaType) -> &'static str {
    t.json_name()
}

/// `TimeBasedPartitioner.getPartition`: the start of the `duration_ms` bucket holding `ts`,
/// counted in local time of `zone` (Java's `/` truncates toward zero; so does Rust's).
pub fn bucket_start(duration_ms: i64, ts: i64, zone: &Zone) -> i64 {
    let local = ts + zone.offset_ms(ts);
    let floored = (local / duration_ms) * duration_ms;
    zone.local_to_utc(floored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::data::SchemaBuilder;

    fn record(value_schema: Option<Schema>, value: Value, ts: Option<i64>) -> SinkRecord {
        let mut r = SinkRecord::new("t", 3, 7, None, Value::Null, value_schema, value);
        r.timestamp = ts;
        r
    }

    #[test]
    fn default_and_field() {
        let r = record(None, Value::Null, None);
        assert_eq!(Partitioner::Default.encode(&r, 0).unwrap(), "partition=3");
        let schema = SchemaBuilder::struct_()
            .field("country", Schema::string())
            .field("n", Schema::int32())
            .field("ok", Schema::boolean())
            .field("f", Schema::float64())
            .build();
        let value = connect_api::data::Struct::new(schema.clone())
            .with("country", "fr")
            .unwrap()
            .with("n", 42i32)
            .unwrap()
            .with("ok", true)
            .unwrap()
            .with("f", 1.5f64)
            .unwrap();
        let r = record(Some(schema), Value::Struct(value), None);
        let p = Partitioner::Field {
            fields: vec!["country".into(), "n".into(), "ok".into()],
            delim: "/".into(),
        };
        assert_eq!(p.encode(&r, 0).unwrap(), "country=fr/n=42/ok=true");
        let p = Partitioner::Field {
            fields: vec!["f".into()],
            delim: "/".into(),
        };
        assert!(
            p.encode(&r, 0)
                .unwrap_err()
                .to_string()
                .contains("not supported")
        );
        let p = Partitioner::Field {
            fields: vec!["missing".into()],
            delim: "/".into(),
        };
        assert!(p.encode(&r, 0).is_err());
    }

    #[test]
    fn daily_and_hourly_as_confluent_writes_them() {
        let daily = Partitioner::TimeBased {
            duration_ms: 86_400_000,
            format: JodaFormat::parse("'year'=YYYY/'month'=MM/'day'=dd").unwrap(),
            zone: Zone::parse("UTC").unwrap(),
            extractor: TimestampExtractor::Record,
        };
        // 2024-02-29T23:59:59.999Z
        let r = record(None, Value::Null, Some(1_709_251_199_999));
        assert_eq!(daily.encode(&r, 0).unwrap(), "year=2024/month=02/day=29");
        let hourly = Partitioner::TimeBased {
            duration_ms: 3_600_000,
            format: JodaFormat::parse("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH").unwrap(),
            zone: Zone::parse("+01:00").unwrap(),
            extractor: TimestampExtractor::Record,
        };
        assert_eq!(
            hourly.encode(&r, 0).unwrap(),
            "year=2024/month=03/day=01/hour=00"
        );
        let none = record(None, Value::Null, None);
        assert!(hourly.encode(&none, 0).is_err());
        // Daily in Los Angeles (UTC-8 in winter): 2024-02-29T23:59:59Z is 15:59 local.
        let la = Partitioner::TimeBased {
            duration_ms: 86_400_000,
            format: JodaFormat::parse("'year'=YYYY/'month'=MM/'day'=dd/HH").unwrap(),
            zone: Zone::parse("America/Los_Angeles").unwrap(),
            extractor: TimestampExtractor::Record,
        };
        assert_eq!(la.encode(&r, 0).unwrap(), "year=2024/month=02/day=29/00");
    }

    #[test]
    fn schema_affixes() {
        let named = SchemaBuilder::struct_().name("com.example.Order").build();
        assert_eq!(
            SchemaAffix::Prefix.apply("partition=0", Some(&named)),
            "schema_name=com.example.Order/partition=0"
        );
        assert_eq!(
            SchemaAffix::Suffix.apply("partition=0", None),
            "partition=0/schema_name=null"
        );
    }

    #[test]
    fn record_field_extractor() {
        let schema = SchemaBuilder::struct_()
            .field("ts", Schema::int64())
            .field("iso", Schema::string())
            .build();
        let value = connect_api::data::Struct::new(schema.clone())
            .with("ts", 86_400_000i64 * 2 + 5)
            .unwrap()
            .with("iso", "1970-01-02T10:00:00.000Z")
            .unwrap();
        let r = record(Some(schema), Value::Struct(value), None);
        let ex = TimestampExtractor::RecordField("ts".into());
        assert_eq!(ex.extract(&r, 0).unwrap(), 172_800_005);
        let ex = TimestampExtractor::RecordField("iso".into());
        assert_eq!(ex.extract(&r, 0).unwrap(), 86_400_000 + 36_000_000);
    }
}
