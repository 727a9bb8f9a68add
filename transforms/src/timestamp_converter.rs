//! `org.apache.kafka.connect.transforms.TimestampConverter$Key` / `$Value`.

use chrono::NaiveDate;
use connect_api::config::validators::one_of;
use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance};
use connect_api::data::{Schema, SchemaBuilder, SchemaType, Value, logical};
use connect_api::{ConnectError, Result};

use crate::insert_field::{REPLACE_NULL_WITH_DEFAULT, replace_null_key};
use crate::routers::simple_date_format;
use crate::util::{
    SchemaCache, build_struct, copy_schema_basics, field_value, java_class_name, map_get, map_put,
    require_map,
};
use crate::{Record, Side, Transformation};

pub const FIELD: &str = "field";
pub const TARGET_TYPE: &str = "target.type";
pub const FORMAT: &str = "format";
pub const UNIX_PRECISION: &str = "unix.precision";
const PURPOSE: &str = "converting timestamp formats";
const DAY_MS: i64 = 86_400_000;

pub fn config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(FIELD, T::String, Importance::High, "The field containing the timestamp, or empty if the entire value is a timestamp")
                .default_value(""),
        )
        .define(
            ConfigKey::new(TARGET_TYPE, T::String, Importance::High, "The desired timestamp representation: string, unix, Date, Time, or Timestamp")
                .validator(one_of(&["string", "unix", "Date", "Time", "Timestamp"])),
        )
        .define(
            ConfigKey::new(FORMAT, T::String, Importance::Medium, "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string.")
                .default_value(""),
        )
        .define(
            ConfigKey::new(UNIX_PRECISION, T::String, Importance::Low, "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long.Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components.")
                .default_value("milliseconds")
                .validator(one_of(&["nanoseconds", "microseconds", "milliseconds", "seconds"])),
        )
        .define(replace_null_key())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Unix,
    Date,
    Time,
    Timestamp,
}

impl Kind {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "string" => Self::String,
            "unix" => Self::Unix,
            "Date" => Self::Date,
            "Time" => Self::Time,
            "Timestamp" => Self::Timestamp,
            _ => return None,
        })
    }

    fn schema(self, optional: bool) -> Schema {
        let b = match self {
            Self::String => SchemaBuilder::new(SchemaType::String),
            Self::Unix => SchemaBuilder::new(SchemaType::Int64),
            Self::Date => logical::date_builder(),
            Self::Time => logical::time_builder(),
            Self::Timestamp => logical::timestamp_builder(),
        };
        if optional {
            b.optional().build()
        } else {
            b.build()
        }
    }

    fn from_schema(schema: &Schema) -> Result<Self> {
        Ok(match (schema.name(), schema.schema_type()) {
            (Some(logical::TIMESTAMP_NAME), _) => Self::Timestamp,
            (Some(logical::DATE_NAME), _) => Self::Date,
            (Some(logical::TIME_NAME), _) => Self::Time,
            (_, SchemaType::String) => Self::String,
            (_, SchemaType::Int64) => Self::Unix,
            _ => {
                return Err(ConnectError::fatal(format!(
                    "Schema {} does not correspond to a known timestamp type format",
                    crate::util::java_schema_string(schema)
                )));
            }
        })
    }
}

pub struct TimestampConverter {
    side: Side,
    field: String,
    target: Kind,
    format: Option<String>,
    precision: String,
    replace_null_with_default: bool,
    cache: SchemaCache,
}

impl TimestampConverter {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            field: String::new(),
            target: Kind::Timestamp,
            format: None,
            precision: "milliseconds".to_owned(),
            replace_null_with_default: true,
            cache: SchemaCache::default(),
        }
    }

    /// Milliseconds since the epoch of a value of kind `from` (physical form).
    fn to_raw(&self, v: &Value, from: Kind) -> Result<i64> {
        match (from, v) {
            (Kind::String, Value::String(s)) => {
                let f = self.format.as_deref().unwrap_or_default();
                parse_simple_date(f, s).ok_or_else(|| {
                    ConnectError::data(format!(
                        "Could not parse timestamp: value ({s}) does not match pattern ({f})"
                    ))
                })
            }
            (Kind::String, other) => Err(ConnectError::data(format!(
                "Expected string timestamp to be a String, but found class {}",
                java_class_name(other)
            ))),
            (Kind::Unix, Value::Int64(t)) => Ok(match self.precision.as_str() {
                "seconds" => t.saturating_mul(1000),
                "microseconds" => t.div_euclid(1000),
                "nanoseconds" => t.div_euclid(1_000_000),
                _ => *t,
            }),
            (Kind::Unix, other) => Err(ConnectError::data(format!(
                "Expected Unix timestamp to be a Long, but found class {}",
                java_class_name(other)
            ))),
            (Kind::Date, Value::Int32(days)) => Ok(i64::from(*days) * DAY_MS),
            (Kind::Time, Value::Int32(ms)) => Ok(i64::from(*ms)),
            (Kind::Timestamp, Value::Int64(ms)) => Ok(*ms),
            (k, other) => Err(ConnectError::data(format!(
                "Expected {k:?} to be a java.util.Date, but found class {}",
                java_class_name(other)
            ))),
        }
    }

    /// The target representation; `schemaless` values of Date/Time/Timestamp stay epoch millis.
    fn to_type(&self, ms: i64, schemaless: bool) -> Result<Value> {
        Ok(match self.target {
            Kind::String => Value::String(
                simple_date_format(self.format.as_deref().unwrap_or_default(), ms)
                    .map_err(ConnectError::data)?,
            ),
            Kind::Unix => Value::Int64(match self.precision.as_str() {
                "seconds" => ms.div_euclid(1000),
                "microseconds" => ms.saturating_mul(1000),
                "nanoseconds" => ms.saturating_mul(1_000_000),
                _ => ms,
            }),
            Kind::Date => {
                let day = ms.div_euclid(DAY_MS);
                if schemaless {
                    Value::Int64(day * DAY_MS)
                } else {
                    Value::Int32(day as i32)
                }
            }
            Kind::Time => {
                let t = ms.rem_euclid(DAY_MS);
                if schemaless {
                    Value::Int64(t)
                } else {
                    Value::Int32(t as i32)
                }
            }
            Kind::Timestamp => Value::Int64(ms),
        })
    }

    fn convert(&self, v: &Value, from: Option<Kind>, schemaless: bool) -> Result<Value> {
        if v.is_null() {
            return Ok(Value::Null);
        }
        let from = match from {
            Some(k) => k,
            None => match v {
                Value::Int64(_) => Kind::Unix,
                Value::String(_) => Kind::String,
                other => {
                    return Err(ConnectError::data(format!(
                        "TimestampConverter does not support class {} objects as timestamps",
                        java_class_name(other)
                    )));
                }
            },
        };
        let raw = self.to_raw(v, from)?;
        self.to_type(raw, schemaless)
    }
}

impl Transformation for TimestampConverter {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = config_def().parse(props)?;
        self.field = c.string(FIELD).unwrap_or_default().to_owned();
        self.target =
            Kind::parse(c.string(TARGET_TYPE).unwrap_or_default()).unwrap_or(Kind::Timestamp);
        self.precision = c
            .string(UNIX_PRECISION)
            .unwrap_or("milliseconds")
            .to_owned();
        self.replace_null_with_default = c.boolean(REPLACE_NULL_WITH_DEFAULT).unwrap_or(true);
        let format = c.string(FORMAT).unwrap_or_default();
        if self.target == Kind::String && format.trim().is_empty() {
            return Err(ConnectError::config(
                "TimestampConverter requires format option to be specified when using string timestamps",
            ));
        }
        self.format = if format.trim().is_empty() {
            None
        } else {
            simple_date_format(format, 0).map_err(|_| {
                ConnectError::config(format!(
                    "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: {format}"
                ))
            })?;
            Some(format.to_owned())
        };
        self.cache = SchemaCache::default();
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        let (schema, value) = self.side.take(record);
        match schema {
            None => {
                if value.is_null() || self.field.is_empty() {
                    let v = self.convert(&value, None, true)?;
                    self.side.set(record, None, v);
                    return Ok(true);
                }
                let entries = require_map(&value, PURPOSE)?;
                let mut out = entries.to_vec();
                let v = map_get(entries, &self.field)
                    .cloned()
                    .unwrap_or(Value::Null);
                map_put(&mut out, &self.field, self.convert(&v, None, true)?);
                self.side.set(record, None, Value::Map(out));
                Ok(true)
            }
            Some(schema) if self.field.is_empty() => {
                let updated = self.target.schema(schema.is_optional());
                let from = Kind::from_schema(&schema)?;
                let v = self.convert(&value, Some(from), false)?;
                self.side.set(record, Some(updated), v);
                Ok(true)
            }
            Some(schema) => {
                let s = match &value {
                    Value::Null => None,
                    v => Some(crate::util::require_struct(v, PURPOSE)?),
                };
                let updated = self.cache.get_or_try_insert(&schema, || {
                    let mut b = copy_schema_basics(&schema, SchemaBuilder::struct_());
                    for f in schema.fields() {
                        let fs = if f.name == self.field {
                            self.target.schema(f.schema.is_optional())
                        } else {
                            f.schema.clone()
                        };
                        b = b.field(f.name.clone(), fs);
                    }
                    if schema.is_optional() {
                        b = b.optional();
                    }
                    Ok(b.build())
                })?;
                let Some(s) = s else {
                    self.side.set(record, Some(updated), Value::Null);
                    return Ok(true);
                };
                let mut fields = Vec::with_capacity(schema.fields().len());
                for f in s.schema().fields() {
                    let v = field_value(s, &f.name, self.replace_null_with_default);
                    let v = if f.name == self.field {
                        self.convert(&v, Some(Kind::from_schema(&f.schema)?), false)?
                    } else {
                        v
                    };
                    fields.push((f.name.clone(), v));
                }
                let out = build_struct(&updated, fields)?;
                self.side.set(record, Some(updated), Value::Struct(out));
                Ok(true)
            }
        }
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }
}

/// Parses `text` with a `SimpleDateFormat` pattern in UTC (numeric fields, `MMM`/`MMMM` month
/// names, `a`, `Z`/`X` offsets, quoted literals); `None` when it does not match.
pub fn parse_simple_date(pattern: &str, text: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut year, mut month, mut day, mut hour, mut min, mut sec, mut milli) =
        (1970i64, 1u32, 1u32, 0i64, 0i64, 0i64, 0i64);
    let (mut pm, mut offset_min) = (None::<bool>, 0i64);
    let (mut i, mut j) = (0usize, 0usize);
    while i < p.len() {
        let c = p[i];
        if c == '\'' {
            if p.get(i + 1) == Some(&'\'') {
                (t.get(j) == Some(&'\'')).then_some(())?;
                i += 2;
                j += 1;
                continue;
            }
            let end = p[i + 1..].iter().position(|x| *x == '\'')? + i + 1;
            for &lc in &p[i + 1..end] {
                (t.get(j) == Some(&lc)).then_some(())?;
                j += 1;
            }
            i = end + 1;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            (t.get(j) == Some(&c)).then_some(())?;
            i += 1;
            j += 1;
            continue;
        }
        let mut n = 1;
        while p.get(i + n) == Some(&c) {
            n += 1;
        }
        let next_numeric = p.get(i + n).is_some_and(|x| "yMdHhkKmsSD".contains(*x));
        let number = |j: &mut usize| -> Option<i64> {
            let neg = t.get(*j) == Some(&'-');
            if neg {
                *j += 1;
            }
            let max = if next_numeric { n } else { usize::MAX };
            let digits_start = *j;
            while *j < t.len() && t[*j].is_ascii_digit() && *j - digits_start < max {
                *j += 1;
            }
            (*j > digits_start).then_some(())?;
            let v: i64 = t[digits_start..*j]
                .iter()
                .collect::<String>()
                .parse()
                .ok()?;
            Some(if neg { -v } else { v })
        };
        match c {
            'y' => {
                let before = j;
                let v = number(&mut j)?;
                year = if n == 2 && j - before == 2 {
                    2000 + v
                } else {
                    v
                };
            }
            'M' if n >= 3 => {
                let rest: String = t[j..].iter().collect::<String>().to_ascii_lowercase();
                let idx = MONTHS.iter().position(|m| rest.starts_with(m))?;
                let full = [
                    "january",
                    "february",
                    "march",
                    "april",
                    "may",
                    "june",
                    "july",
                    "august",
                    "september",
                    "october",
                    "november",
                    "december",
                ][idx];
                j += if rest.starts_with(full) {
                    full.len()
                } else {
                    3
                };
                month = idx as u32 + 1;
            }
            'M' => month = u32::try_from(number(&mut j)?).ok()?,
            'd' => day = u32::try_from(number(&mut j)?).ok()?,
            'H' | 'k' => hour = number(&mut j)? % 24,
            'h' | 'K' => hour = number(&mut j)? % 12,
            'm' => min = number(&mut j)?,
            's' => sec = number(&mut j)?,
            'S' => milli = number(&mut j)?,
            'a' => {
                let rest: String = t[j..]
                    .iter()
                    .take(2)
                    .collect::<String>()
                    .to_ascii_uppercase();
                pm = Some(match rest.as_str() {
                    "AM" => false,
                    "PM" => true,
                    _ => return None,
                });
                j += 2;
            }
            'E' => {
                while j < t.len() && t[j].is_ascii_alphabetic() {
                    j += 1;
                }
            }
            'Z' | 'X' => {
                if t.get(j) == Some(&'Z') {
                    j += 1;
                } else {
                    let sign = match t.get(j)? {
                        '+' => 1,
                        '-' => -1,
                        _ => return None,
                    };
                    j += 1;
                    let digits: String = t[j..].iter().filter(|c| **c != ':').take(4).collect();
                    let consumed = t[j..]
                        .iter()
                        .take_while(|c| c.is_ascii_digit() || **c == ':')
                        .count();
                    j += consumed;
                    let (h, m) = digits.split_at(2.min(digits.len()));
                    offset_min =
                        sign * (h.parse::<i64>().ok()? * 60 + m.parse::<i64>().unwrap_or(0));
                }
            }
            _ => return None,
        }
        i += n;
    }
    // Like `SimpleDateFormat.parse(String)`, text after the pattern is ignored.
    if pm == Some(true) {
        hour += 12;
    }
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    let base = date.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis();
    Some(base + ((hour * 60 + min) * 60 + sec) * 1000 + milli - offset_min * 60_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_simple_date_formats() {
        assert_eq!(
            parse_simple_date("yyyy-MM-dd", "2024-03-05"),
            Some(1_709_596_800_000)
        );
        assert_eq!(
            parse_simple_date("yyyy-MM-dd'T'HH:mm:ss.SSS", "2024-03-05T07:08:09.012"),
            Some(1_709_622_489_012)
        );
        assert_eq!(
            parse_simple_date("yyyyMMddHHmm", "202403050708"),
            Some(1_709_622_480_000)
        );
        assert_eq!(
            parse_simple_date("dd MMM yyyy", "05 Mar 2024"),
            Some(1_709_596_800_000)
        );
        assert_eq!(parse_simple_date("yyyy-MM-dd", "nope"), None);
    }
}
