//! `org.apache.kafka.connect.transforms.Flatten$Key` / `$Value`.

use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance};
use connect_api::data::{Schema, SchemaBuilder, SchemaType, Struct, Value};
use connect_api::{ConnectError, Result};

use crate::util::{
    SchemaCache, copy_schema_basics, field_value, java_class_name, require_map, require_struct,
};
use crate::{Record, Side, Transformation};

pub const DELIMITER: &str = "delimiter";
const PURPOSE: &str = "flattening";

pub fn config_def() -> ConfigDef {
    ConfigDef::new().define(
        ConfigKey::new(
            DELIMITER,
            T::String,
            Importance::Medium,
            "Delimiter to insert between field names from the input record when generating field names for the output record",
        )
        .default_value("."),
    )
}

pub struct Flatten {
    side: Side,
    delimiter: String,
    cache: SchemaCache,
}

impl Flatten {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            delimiter: ".".to_owned(),
            cache: SchemaCache::default(),
        }
    }

    fn name(&self, prefix: &str, field: &str) -> String {
        if prefix.is_empty() {
            field.to_owned()
        } else {
            format!("{prefix}{}{field}", self.delimiter)
        }
    }

    fn flatten_map(
        &self,
        entries: &[(Value, Value)],
        prefix: &str,
        out: &mut Vec<(Value, Value)>,
    ) -> Result<()> {
        for (k, v) in entries {
            let key = match k {
                Value::String(s) => s.as_str(),
                other => {
                    return Err(ConnectError::data(format!(
                        "class {} cannot be cast to class java.lang.String",
                        java_class_name(other)
                    )));
                }
            };
            let name = self.name(prefix, key);
            match v {
                Value::Map(inner) => self.flatten_map(inner, &name, out)?,
                Value::Struct(_) => {
                    return Err(ConnectError::data(format!(
                        "Flatten transformation does not support class {} for record without schemas (for field {name}).",
                        java_class_name(v)
                    )));
                }
                other => put(out, name, other.clone()),
            }
        }
        Ok(())
    }

    fn flatten_schema(
        &self,
        schema: &Schema,
        prefix: &str,
        mut builder: SchemaBuilder,
        optional: bool,
        parent_default: Option<&Struct>,
    ) -> Result<SchemaBuilder> {
        for f in schema.fields() {
            let name = self.name(prefix, &f.name);
            let field_optional = optional || f.schema.is_optional();
            let default = match f.schema.default_value() {
                Some(d) => Some(d.clone()),
                None => parent_default.map(|p| field_value(p, &f.name, true)),
            }
            .filter(|d| !d.is_null());
            match f.schema.schema_type() {
                SchemaType::Struct => {
                    let d = match &default {
                        Some(Value::Struct(s)) => Some(s.clone()),
                        _ => None,
                    };
                    builder =
                        self.flatten_schema(&f.schema, &name, builder, field_optional, d.as_ref())?;
                }
                SchemaType::Map => {
                    return Err(ConnectError::data(format!(
                        "Flatten transformation does not support MAP for record with schemas (for field {name})."
                    )));
                }
                _ => {
                    let mut b = match f.schema.schema_type() {
                        SchemaType::Array => SchemaBuilder::array(
                            f.schema
                                .value_schema()
                                .cloned()
                                .unwrap_or_else(Schema::string),
                        ),
                        t => SchemaBuilder::new(t),
                    };
                    b = copy_schema_basics(&f.schema, b);
                    if field_optional {
                        b = b.optional();
                    }
                    if let Some(d) = default {
                        b = b.default_value(d);
                    }
                    builder = builder.field(name, b.build());
                }
            }
        }
        Ok(builder)
    }

    fn flatten_struct(&self, s: Option<&Struct>, prefix: &str, out: &mut Struct) -> Result<()> {
        let Some(s) = s else { return Ok(()) };
        for f in s.schema().fields() {
            let name = self.name(prefix, &f.name);
            match f.schema.schema_type() {
                SchemaType::Struct => {
                    let inner = match field_value(s, &f.name, true) {
                        Value::Struct(i) => Some(i),
                        _ => None,
                    };
                    self.flatten_struct(inner.as_ref(), &name, out)?;
                }
                SchemaType::Map => {
                    return Err(ConnectError::data(format!(
                        "Flatten transformation does not support MAP for record with schemas (for field {name})."
                    )));
                }
                _ => {
                    out.put(&name, field_value(s, &f.name, true))?;
                }
            }
        }
        Ok(())
    }
}

fn put(out: &mut Vec<(Value, Value)>, name: String, v: Value) {
    crate::util::map_put(out, &name, v);
}

impl Transformation for Flatten {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = config_def().parse(props)?;
        self.delimiter = c.string(DELIMITER).unwrap_or(".").to_owned();
        self.cache = SchemaCache::default();
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        if self.side.value(record).is_null() {
            return Ok(true);
        }
        let (schema, value) = self.side.take(record);
        match schema {
            None => {
                let entries = require_map(&value, PURPOSE)?;
                let mut out = Vec::with_capacity(entries.len());
                self.flatten_map(entries, "", &mut out)?;
                self.side.set(record, None, Value::Map(out));
                Ok(true)
            }
            Some(schema) => {
                let s = require_struct(&value, PURPOSE)?;
                let updated = self.cache.get_or_try_insert(&schema, || {
                    let default = match schema.default_value() {
                        Some(Value::Struct(d)) => Some(d.clone()),
                        _ => None,
                    };
                    let b = copy_schema_basics(&schema, SchemaBuilder::struct_());
                    Ok(self
                        .flatten_schema(&schema, "", b, schema.is_optional(), default.as_ref())?
                        .build())
                })?;
                let mut out = Struct::new(updated.clone());
                self.flatten_struct(Some(s), "", &mut out)?;
                self.side.set(record, Some(updated), Value::Struct(out));
                Ok(true)
            }
        }
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }
}
