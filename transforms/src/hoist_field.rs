//! `org.apache.kafka.connect.transforms.HoistField$Key` / `$Value`.

use connect_api::Result;
use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance};
use connect_api::data::{SchemaBuilder, Value};

use crate::util::{SchemaCache, extend_struct};
use crate::{Record, Side, Transformation};

pub const FIELD: &str = "field";

/// Values the hoisted struct has room for (its one field and three more).
const SPARE_FIELDS: usize = 4;

pub fn config_def() -> ConfigDef {
    ConfigDef::new().define(ConfigKey::new(
        FIELD,
        T::String,
        Importance::Medium,
        "Field name for the single field that will be created in the resulting Struct or Map.",
    ))
}

pub struct HoistField {
    side: Side,
    field: String,
    cache: SchemaCache,
}

impl HoistField {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            field: String::new(),
            cache: SchemaCache::default(),
        }
    }
}

impl Transformation for HoistField {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = config_def().parse(props)?;
        self.field = c.string(FIELD).unwrap_or_default().to_owned();
        self.cache = SchemaCache::default();
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        let (schema, value) = self.side.take(record);
        match schema {
            None => {
                let map = vec![(Value::String(self.field.clone()), value)];
                self.side.set(record, None, Value::Map(map));
                Ok(true)
            }
            Some(schema) => {
                let updated = self.cache.get_or_try_insert(&schema, || {
                    Ok(SchemaBuilder::struct_()
                        .field(self.field.clone(), schema.clone())
                        .build())
                })?;
                // Room for the fields a later stage commonly appends (`InsertField`): it then
                // extends this allocation instead of moving the values into a new one.
                let s = extend_struct(
                    &updated,
                    Vec::with_capacity(SPARE_FIELDS),
                    [(self.field.as_str(), value)],
                )?;
                self.side.set(record, Some(updated), Value::Struct(s));
                Ok(true)
            }
        }
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }
}
