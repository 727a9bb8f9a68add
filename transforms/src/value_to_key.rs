//! `org.apache.kafka.connect.transforms.ValueToKey`.

use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance};
use connect_api::data::{SchemaBuilder, Value};
use connect_api::{ConnectError, Result};

use crate::insert_field::{REPLACE_NULL_WITH_DEFAULT, replace_null_key};
use crate::mask_field::non_empty_list;
use crate::util::{SchemaCache, build_struct, field_value, map_get, require_map, require_struct};
use crate::{Record, Transformation};

pub const FIELDS: &str = "fields";
const PURPOSE: &str = "copying fields from value to key";

pub fn config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(
                FIELDS,
                T::List,
                Importance::High,
                "Field names on the record value to extract as the record key.",
            )
            .validator(non_empty_list()),
        )
        .define(replace_null_key())
}

#[derive(Default)]
pub struct ValueToKey {
    fields: Vec<String>,
    replace_null_with_default: bool,
    cache: SchemaCache,
}

impl Transformation for ValueToKey {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = config_def().parse(props)?;
        self.fields = c.list(FIELDS).to_vec();
        self.replace_null_with_default = c.boolean(REPLACE_NULL_WITH_DEFAULT).unwrap_or(true);
        self.cache = SchemaCache::default();
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        if record.value_schema.is_none() {
            let value = require_map(&record.value, PURPOSE)?;
            let mut key: Vec<(Value, Value)> = Vec::with_capacity(self.fields.len());
            for f in &self.fields {
                let v = map_get(value, f).cloned().unwrap_or(Value::Null);
                crate::util::map_put(&mut key, f, v);
            }
            record.key_schema = None;
            record.key = Value::Map(key);
            return Ok(true);
        }
        let value = require_struct(&record.value, PURPOSE)?;
        let key_schema = self.cache.get_or_try_insert(value.schema(), || {
            let mut b = SchemaBuilder::struct_();
            for f in &self.fields {
                let field = value
                    .schema()
                    .field(f)
                    .ok_or_else(|| ConnectError::data(format!("Field does not exist: {f}")))?;
                b = b.field(f.clone(), field.schema.clone());
            }
            Ok(b.build())
        })?;
        let key = build_struct(
            &key_schema,
            self.fields
                .iter()
                .map(|f| {
                    (
                        f.clone(),
                        field_value(value, f, self.replace_null_with_default),
                    )
                })
                .collect::<Vec<_>>(),
        )?;
        record.key_schema = Some(key_schema);
        record.key = Value::Struct(key);
        Ok(true)
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }
}
