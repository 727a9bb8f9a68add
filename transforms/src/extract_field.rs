//! `org.apache.kafka.connect.transforms.ExtractField$Key` / `$Value`, with KIP-821 nested paths.

use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance};
use connect_api::data::Value;
use connect_api::{ConnectError, Result};

use crate::field::{FieldSyntaxVersion, SingleFieldPath};
use crate::insert_field::{REPLACE_NULL_WITH_DEFAULT, replace_null_key};
use crate::util::{require_map, require_struct};
use crate::{Record, Side, Transformation};

pub const FIELD: &str = "field";
const PURPOSE: &str = "field extraction";

pub fn config_def() -> ConfigDef {
    FieldSyntaxVersion::append_config_to(
        ConfigDef::new()
            .define(ConfigKey::new(
                FIELD,
                T::String,
                Importance::Medium,
                "Field name to extract.",
            ))
            .define(replace_null_key()),
    )
}

pub struct ExtractField {
    side: Side,
    path: Option<SingleFieldPath>,
    original: String,
    replace_null_with_default: bool,
}

impl ExtractField {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            path: None,
            original: String::new(),
            replace_null_with_default: true,
        }
    }
}

impl Transformation for ExtractField {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = config_def().parse(props)?;
        self.original = c.string(FIELD).unwrap_or_default().to_owned();
        self.path = Some(SingleFieldPath::new(
            &self.original,
            FieldSyntaxVersion::from_config(&c)?,
        )?);
        self.replace_null_with_default = c.boolean(REPLACE_NULL_WITH_DEFAULT).unwrap_or(true);
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        let path = self
            .path
            .as_ref()
            .ok_or_else(|| ConnectError::fatal("ExtractField is not configured"))?;
        let (schema, value) = self.side.take(record);
        match schema {
            None => {
                let extracted = match value {
                    Value::Null => Value::Null,
                    ref v => path.value_from_map(require_map(v, PURPOSE)?)?,
                };
                self.side.set(record, None, extracted);
                Ok(true)
            }
            Some(schema) => {
                let s = match &value {
                    Value::Null => None,
                    v => Some(require_struct(v, PURPOSE)?),
                };
                let field = path.field_from(&schema).ok_or_else(|| {
                    ConnectError::data(format!("Unknown field: {}", self.original))
                })?;
                let extracted = match s {
                    None => Value::Null,
                    Some(s) => path.value_from_struct(s, self.replace_null_with_default)?,
                };
                self.side.set(record, Some(field.schema.clone()), extracted);
                Ok(true)
            }
        }
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }
}
