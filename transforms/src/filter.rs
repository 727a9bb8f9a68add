//! `org.apache.kafka.connect.transforms.Filter`: drops every record (used with a predicate).

use connect_api::Result;
use connect_api::config::{ConfigDef, ConfigMap};

use crate::{Record, Transformation};

#[derive(Default)]
pub struct Filter;

impl Transformation for Filter {
    fn configure(&mut self, _props: &ConfigMap) -> Result<()> {
        Ok(())
    }

    fn apply(&self, _record: &mut Record) -> Result<bool> {
        Ok(false)
    }

    fn config_def(&self) -> ConfigDef {
        ConfigDef::new()
    }
}
