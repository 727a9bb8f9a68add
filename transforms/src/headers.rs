//! `InsertHeader`, `DropHeaders` and `HeaderFrom$Key` / `$Value`.

use connect_api::config::validators::{non_null, one_of};
use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance};
use connect_api::data::{Schema, SchemaBuilder, Value};
use connect_api::record::Headers;
use connect_api::{ConnectError, Result};

use crate::insert_field::{REPLACE_NULL_WITH_DEFAULT, replace_null_key};
use crate::mask_field::non_empty_list;
use crate::util::{
    SchemaCache, build_struct, copy_schema_basics, field_value, map_get, require_map,
    require_struct,
};
use crate::{Record, Side, Transformation};

pub const HEADER: &str = "header";
pub const VALUE_LITERAL: &str = "value.literal";
pub const HEADERS: &str = "headers";
pub const FIELDS: &str = "fields";
pub const OPERATION: &str = "operation";

pub fn insert_header_config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(
                HEADER,
                T::String,
                Importance::High,
                "The name of the header.",
            )
            .validator(non_null()),
        )
        .define(
            ConfigKey::new(
                VALUE_LITERAL,
                T::String,
                Importance::High,
                "The literal value that is to be set as the header value on all records.",
            )
            .validator(non_null()),
        )
}

/// A subset of Java's `Values.parseString`: booleans, integers (the narrowest of INT8..INT64),
/// decimals (FLOAT32), anything else a STRING.
pub fn parse_literal(s: &str) -> (Schema, Value) {
    let t = s.trim();
    if t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false") {
        return (
            Schema::boolean(),
            Value::Boolean(t.eq_ignore_ascii_case("true")),
        );
    }
    let numeric = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        && t.chars().any(|c| c.is_ascii_digit());
    if numeric && let Ok(d) = t.parse::<f64>() {
        if d.fract() == 0.0 && d.abs() < 9.2e18 {
            let i = d as i64;
            return if let Ok(v) = i8::try_from(i) {
                (Schema::int8(), Value::Int8(v))
            } else if let Ok(v) = i16::try_from(i) {
                (Schema::int16(), Value::Int16(v))
            } else if let Ok(v) = i32::try_from(i) {
                (Schema::int32(), Value::Int32(v))
            } else {
                (Schema::int64(), Value::Int64(i))
            };
        }
        if (d as f32).is_finite() {
            return (Schema::float32(), Value::Float32(d as f32));
        }
        return (Schema::float64(), Value::Float64(d));
    }
    (Schema::string(), Value::String(s.to_owned()))
}

#[derive(Default)]
pub struct InsertHeader {
    header: String,
    literal: Option<(Schema, Value)>,
}

impl Transformation for InsertHeader {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = insert_header_config_def().parse(props)?;
        self.header = c.string(HEADER).unwrap_or_default().to_owned();
        self.literal = Some(parse_literal(c.string(VALUE_LITERAL).unwrap_or_default()));
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        let (schema, value) = self
            .literal
            .clone()
            .ok_or_else(|| ConnectError::fatal("InsertHeader is not configured"))?;
        record.headers.add(self.header.clone(), Some(schema), value);
        Ok(true)
    }

    fn config_def(&self) -> ConfigDef {
        insert_header_config_def()
    }
}

pub fn drop_headers_config_def() -> ConfigDef {
    ConfigDef::new().define(
        ConfigKey::new(
            HEADERS,
            T::List,
            Importance::High,
            "The name of the headers to be removed.",
        )
        .validator(non_empty_list()),
    )
}

#[derive(Default)]
pub struct DropHeaders {
    headers: Vec<String>,
}

impl Transformation for DropHeaders {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        self.headers = drop_headers_config_def()
            .parse(props)?
            .list(HEADERS)
            .to_vec();
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        if record.headers.iter().any(|h| self.headers.contains(&h.key)) {
            let mut kept = Headers::new();
            for h in record
                .headers
                .iter()
                .filter(|h| !self.headers.contains(&h.key))
            {
                kept.add(h.key.clone(), h.schema.clone(), h.value.clone());
            }
            record.headers = kept;
        }
        Ok(true)
    }

    fn config_def(&self) -> ConfigDef {
        drop_headers_config_def()
    }
}

pub fn header_from_config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(FIELDS, T::List, Importance::High, "Field names in the record whose values are to be copied or moved to headers.")
                .validator(non_empty_list()),
        )
        .define(
            ConfigKey::new(HEADERS, T::List, Importance::High, "Header names, in the same order as the field names listed in the fields configuration property.")
                .validator(non_empty_list()),
        )
        .define(
            ConfigKey::new(OPERATION, T::String, Importance::High, "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value).")
                .validator(one_of(&["move", "copy"])),
        )
        .define(replace_null_key())
}

pub struct HeaderFrom {
    side: Side,
    fields: Vec<String>,
    headers: Vec<String>,
    is_move: bool,
    replace_null_with_default: bool,
    cache: SchemaCache,
}

impl HeaderFrom {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            fields: Vec::new(),
            headers: Vec::new(),
            is_move: false,
            replace_null_with_default: true,
            cache: SchemaCache::default(),
        }
    }

    fn purpose(&self) -> &'static str {
        if self.is_move {
            "header move"
        } else {
            "header copy"
        }
    }
}

impl Transformation for HeaderFrom {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = header_from_config_def().parse(props)?;
        self.fields = c.list(FIELDS).to_vec();
        self.headers = c.list(HEADERS).to_vec();
        if self.fields.len() != self.headers.len() {
            return Err(ConnectError::config(format!(
                "'{FIELDS}' config must have the same number of elements as '{HEADERS}' config."
            )));
        }
        self.is_move = c.string(OPERATION) == Some("move");
        self.replace_null_with_default = c.boolean(REPLACE_NULL_WITH_DEFAULT).unwrap_or(true);
        self.cache = SchemaCache::default();
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        let (schema, value) = self.side.take(record);
        match schema {
            None => {
                let entries = require_map(&value, self.purpose())?;
                let mut updated = entries.to_vec();
                for (field, header) in self.fields.iter().zip(&self.headers) {
                    let v = map_get(entries, field).cloned().unwrap_or(Value::Null);
                    if self.is_move {
                        updated.retain(|(k, _)| k.as_str() != Some(field));
                    }
                    record.headers.add(header.clone(), None, v);
                }
                self.side.set(record, None, Value::Map(updated));
                Ok(true)
            }
            Some(schema) => {
                let s = require_struct(&value, self.purpose())?;
                let (new_schema, new_value) = if self.is_move {
                    let updated = self.cache.get_or_try_insert(&schema, || {
                        let mut b = copy_schema_basics(&schema, SchemaBuilder::struct_());
                        for f in schema
                            .fields()
                            .iter()
                            .filter(|f| !self.fields.contains(&f.name))
                        {
                            b = b.field(f.name.clone(), f.schema.clone());
                        }
                        Ok(b.build())
                    })?;
                    let values = updated
                        .fields()
                        .iter()
                        .map(|f| {
                            (
                                f.name.clone(),
                                field_value(s, &f.name, self.replace_null_with_default),
                            )
                        })
                        .collect::<Vec<_>>();
                    let v = build_struct(&updated, values)?;
                    (updated, Value::Struct(v))
                } else {
                    (schema.clone(), value.clone())
                };
                for (field, header) in self.fields.iter().zip(&self.headers) {
                    let v = field_value(s, field, self.replace_null_with_default);
                    // Java dereferences the field's schema here: a missing field is an NPE.
                    let fs = schema
                        .field(field)
                        .map(|f| f.schema.clone())
                        .ok_or_else(|| {
                            ConnectError::data(format!("Field does not exist: {field}"))
                        })?;
                    record.headers.add(header.clone(), Some(fs), v);
                }
                self.side.set(record, Some(new_schema), new_value);
                Ok(true)
            }
        }
    }

    fn config_def(&self) -> ConfigDef {
        header_from_config_def()
    }
}
