//! `org.apache.kafka.connect.transforms.SetSchemaMetadata$Key` / `$Value`.

use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance};
use connect_api::data::{Schema, SchemaBuilder, SchemaType, Value};
use connect_api::{ConnectError, Result};

use crate::insert_field::{REPLACE_NULL_WITH_DEFAULT, replace_null_key};
use crate::util::{build_struct, field_value, require_schema};
use crate::{Record, Side, Transformation};

pub const SCHEMA_NAME: &str = "schema.name";
pub const SCHEMA_VERSION: &str = "schema.version";

pub fn config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(
                SCHEMA_NAME,
                T::String,
                Importance::High,
                "Schema name to set.",
            )
            .default_null(),
        )
        .define(
            ConfigKey::new(
                SCHEMA_VERSION,
                T::Int,
                Importance::High,
                "Schema version to set.",
            )
            .default_null(),
        )
        .define(replace_null_key())
}

pub struct SetSchemaMetadata {
    side: Side,
    name: Option<String>,
    version: Option<i32>,
    replace_null_with_default: bool,
}

impl SetSchemaMetadata {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            name: None,
            version: None,
            replace_null_with_default: true,
        }
    }

    fn updated(&self, schema: &Schema) -> Schema {
        let mut b = match schema.schema_type() {
            SchemaType::Array => SchemaBuilder::array(
                schema
                    .value_schema()
                    .cloned()
                    .unwrap_or_else(Schema::string),
            ),
            SchemaType::Map => SchemaBuilder::map(
                schema.key_schema().cloned().unwrap_or_else(Schema::string),
                schema
                    .value_schema()
                    .cloned()
                    .unwrap_or_else(Schema::string),
            ),
            t => SchemaBuilder::new(t),
        };
        if schema.is_optional() {
            b = b.optional();
        }
        if let Some(d) = schema.default_value() {
            b = b.default_value(d.clone());
        }
        if let Some(n) = self.name.as_deref().or(schema.name()) {
            b = b.name(n);
        }
        if let Some(v) = self.version.or(schema.version()) {
            b = b.version(v);
        }
        if let Some(d) = schema.doc() {
            b = b.doc(d);
        }
        for (k, v) in schema.parameters() {
            b = b.parameter(k.clone(), v.clone());
        }
        for f in schema.fields() {
            b = b.field(f.name.clone(), f.schema.clone());
        }
        b.build()
    }
}

impl Transformation for SetSchemaMetadata {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = config_def().parse(props)?;
        self.name = c.string(SCHEMA_NAME).map(str::to_owned);
        self.version = c.int(SCHEMA_VERSION);
        self.replace_null_with_default = c.boolean(REPLACE_NULL_WITH_DEFAULT).unwrap_or(true);
        if self.name.is_none() && self.version.is_none() {
            return Err(ConnectError::config(
                "Neither schema name nor version configured",
            ));
        }
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        if self.side.value(record).is_null() && self.side.schema(record).is_none() {
            return Ok(true);
        }
        let schema = require_schema(self.side.schema(record), "updating schema metadata")?;
        if schema.schema_type() != SchemaType::Struct {
            // Apache rebuilds the schema with `schema.fields()`, which throws for non-structs.
            return Err(ConnectError::data("Cannot list fields on non-struct type"));
        }
        let updated = self.updated(schema);
        let (_, value) = self.side.take(record);
        let value = match value {
            Value::Struct(s) => {
                let fields = updated
                    .fields()
                    .iter()
                    .map(|f| {
                        (
                            f.name.clone(),
                            field_value(&s, &f.name, self.replace_null_with_default),
                        )
                    })
                    .collect::<Vec<_>>();
                Value::Struct(build_struct(&updated, fields)?)
            }
            other => other,
        };
        self.side.set(record, Some(updated), value);
        Ok(true)
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }
}
