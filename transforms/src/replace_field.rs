//! `org.apache.kafka.connect.transforms.ReplaceField$Key` / `$Value` (`include`, `exclude`,
//! `renames`).

use std::collections::HashMap;

use connect_api::config::validators::lambda;
use connect_api::config::{
    ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance, TypedValue,
};
use connect_api::data::{Schema, SchemaBuilder, Struct, Value};
use connect_api::{ConnectError, Result};

use crate::insert_field::{REPLACE_NULL_WITH_DEFAULT, replace_null_key};
use crate::util::{
    SchemaCache, build_struct, carry_values, copy_schema_basics, require_map, require_struct,
};
use crate::{Record, Side, Transformation};

pub const EXCLUDE: &str = "exclude";
pub const INCLUDE: &str = "include";
pub const RENAMES: &str = "renames";
const PURPOSE: &str = "field replacement";

pub fn config_def() -> ConfigDef {
    let empty = TypedValue::List(Vec::new());
    ConfigDef::new()
        .define(
            ConfigKey::new(
                EXCLUDE,
                T::List,
                Importance::Medium,
                "Fields to exclude. This takes precedence over the fields to include.",
            )
            .default_value(empty.clone()),
        )
        .define(
            ConfigKey::new(
                INCLUDE,
                T::List,
                Importance::Medium,
                "Fields to include. If specified, only these fields will be used.",
            )
            .default_value(empty.clone()),
        )
        .define(
            ConfigKey::new(
                RENAMES,
                T::List,
                Importance::Medium,
                "Field rename mappings.",
            )
            .default_value(empty)
            .validator(lambda(
                "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>",
                |_, v| {
                    if let Some(TypedValue::List(items)) = v {
                        parse_renames(items)?;
                    }
                    Ok(())
                },
            )),
        )
        .define(replace_null_key())
}

fn parse_renames(mappings: &[String]) -> Result<Vec<(String, String)>> {
    mappings
        .iter()
        .map(|m| {
            // Java's String.split drops trailing empty strings.
            let mut parts: Vec<&str> = m.split(':').collect();
            while parts.len() > 1 && parts.last() == Some(&"") {
                parts.pop();
            }
            match parts.as_slice() {
                [a, b] => Ok(((*a).to_owned(), (*b).to_owned())),
                _ => Err(ConnectError::invalid_value(
                    RENAMES,
                    format!("[{}]", mappings.join(", ")),
                    &format!("Invalid rename mapping: {m}"),
                )),
            }
        })
        .collect()
}

pub struct ReplaceField {
    side: Side,
    exclude: Vec<String>,
    include: Vec<String>,
    /// (from, to), one per `from`. A few entries: a scan is cheaper per record than hashing.
    renames: Vec<(String, String)>,
    replace_null_with_default: bool,
    cache: SchemaCache,
}

impl ReplaceField {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            exclude: Vec::new(),
            include: Vec::new(),
            renames: Vec::new(),
            replace_null_with_default: true,
            cache: SchemaCache::default(),
        }
    }

    fn keep(&self, name: &str) -> bool {
        !self.exclude.iter().any(|e| e == name)
            && (self.include.is_empty() || self.include.iter().any(|i| i == name))
    }

    fn renamed<'a>(&'a self, name: &'a str) -> &'a str {
        self.renames
            .iter()
            .find(|(from, _)| from == name)
            .map_or(name, |(_, to)| to.as_str())
    }

    fn updated_schema(&self, schema: &Schema) -> Schema {
        let mut b = copy_schema_basics(schema, SchemaBuilder::struct_());
        for f in schema.fields() {
            if self.keep(&f.name) {
                b = b.field(self.renamed(&f.name).to_owned(), f.schema.clone());
            }
        }
        b.build()
    }
}

impl Transformation for ReplaceField {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = config_def().parse(props)?;
        self.exclude = c.list(EXCLUDE).to_vec();
        self.include = c.list(INCLUDE).to_vec();
        // Through a map, as Java's: a repeated `from` keeps its last mapping.
        let renames: HashMap<String, String> =
            parse_renames(c.list(RENAMES))?.into_iter().collect();
        self.renames = renames.into_iter().collect();
        self.replace_null_with_default = c.boolean(REPLACE_NULL_WITH_DEFAULT).unwrap_or(true);
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
                let mut out: Vec<(Value, Value)> = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    // A non-string key is kept under its own name (Java casts; names are strings).
                    let name = k.as_str().unwrap_or_default();
                    if self.keep(name) {
                        let key = Value::String(self.renamed(name).to_owned());
                        match out.iter_mut().find(|(ok, _)| *ok == key) {
                            Some(e) => e.1 = v.clone(),
                            None => out.push((key, v.clone())),
                        }
                    }
                }
                self.side.set(record, None, Value::Map(out));
                Ok(true)
            }
            Some(_) => {
                require_struct(&value, PURPOSE)?;
                let Value::Struct(value) = value else {
                    unreachable!("require_struct checked the type")
                };
                let updated = self.cache.get_or_try_insert(value.schema(), || {
                    Ok(self.updated_schema(value.schema()))
                })?;
                // The struct is ours: each kept value moves to its (renamed) field.
                let (original, mut values) = value.into_parts();
                let take_default = |of: &connect_api::data::Field, v: Value| {
                    if v.is_null() && self.replace_null_with_default {
                        of.schema.default_value().cloned().unwrap_or(Value::Null)
                    } else {
                        v
                    }
                };
                let kept = original
                    .fields()
                    .iter()
                    .filter(|of| self.keep(&of.name))
                    .count();
                let s = if kept == updated.fields().len() {
                    // The output schema has the kept input fields in input order, with their
                    // schemas (`updated_schema`): the kept values are the output's, in order.
                    let mut values = if kept == original.fields().len() {
                        values
                    } else {
                        original
                            .fields()
                            .iter()
                            .zip(values)
                            .filter(|(of, _)| self.keep(&of.name))
                            .map(|(_, v)| v)
                            .collect()
                    };
                    carry_values(
                        updated.fields(),
                        &mut values,
                        self.replace_null_with_default,
                    )?;
                    Struct::from_checked_values(updated.clone(), values)
                } else {
                    // A rename onto a kept field's name: the schema kept the first field of that
                    // name. Each output field takes the value of the input field it comes from.
                    let fields = updated.fields().iter().map(|f| {
                        let from = self
                            .renames
                            .iter()
                            .find(|(_, to)| *to == f.name)
                            .map_or(f.name.as_str(), |(from, _)| from.as_str());
                        let v = match original.field(from) {
                            None => Value::Null,
                            Some(of) => take_default(
                                of,
                                std::mem::replace(&mut values[of.index], Value::Null),
                            ),
                        };
                        (f.name.as_str(), v)
                    });
                    build_struct(&updated, fields)?
                };
                self.side.set(record, Some(updated), Value::Struct(s));
                Ok(true)
            }
        }
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::data::{Schema, Struct};

    fn rename(renames: &str, value: Struct) -> Struct {
        let mut t = ReplaceField::new(Side::Value);
        let mut props = ConfigMap::new();
        props.insert(RENAMES.to_owned(), renames.to_owned());
        t.configure(&props).unwrap();
        let mut r = Record::new("t", Some(value.schema().clone()), Value::Struct(value));
        assert!(t.apply(&mut r).unwrap());
        let Value::Struct(s) = r.value else {
            panic!("struct expected")
        };
        s
    }

    #[test]
    fn struct_values_follow_their_fields_by_position_and_after_a_name_collision() {
        let schema = SchemaBuilder::struct_()
            .field("a", Schema::int32())
            .field("b", Schema::string())
            .field("c", Schema::int64())
            .build();
        let value = || {
            Struct::new(schema.clone())
                .with("a", 1i32)
                .and_then(|s| s.with("b", "two"))
                .and_then(|s| s.with("c", 3i64))
                .unwrap()
        };
        // Renamed in place: each value keeps its position.
        let s = rename("a:x,c:z", value());
        let names: Vec<&str> = s
            .schema()
            .fields()
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["x", "b", "z"]);
        assert_eq!(s.get("x"), Some(&Value::Int32(1)));
        assert_eq!(s.get("b"), Some(&Value::String("two".into())));
        assert_eq!(s.get("z"), Some(&Value::Int64(3)));
        // `a` renamed onto `b`: the schema keeps one `b` (from `a`), and `c` keeps its value.
        let s = rename("a:b", value());
        let names: Vec<&str> = s
            .schema()
            .fields()
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["b", "c"]);
        assert_eq!(s.get("b"), Some(&Value::Int32(1)));
        assert_eq!(s.get("c"), Some(&Value::Int64(3)));
    }

    /// The values move without a second check, except a null: it takes its field's default
    /// (`replace.null.with.default`, true by default) or, in a required field, fails as Java's
    /// `Struct.put` does; an excluded field's value is dropped.
    #[test]
    fn carried_nulls_take_defaults_or_fail_in_required_fields() {
        let schema = SchemaBuilder::struct_()
            .field("a", Schema::int32())
            .field(
                "d",
                SchemaBuilder::new(connect_api::data::SchemaType::Int64)
                    .default_value(Value::Int64(7))
                    .build(),
            )
            .field("x", Schema::string())
            .build();
        let apply = |props: &[(&str, &str)], value: Struct| {
            let mut t = ReplaceField::new(Side::Value);
            let props: ConfigMap = props
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            t.configure(&props).unwrap();
            let mut r = Record::new("t", Some(value.schema().clone()), Value::Struct(value));
            t.apply(&mut r).map(|_| r.value)
        };
        let partial = Struct::new(schema.clone()).with("x", "kept").unwrap();
        let err = apply(&[(EXCLUDE, "x")], partial.clone()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("Invalid value: null used for required field"),
            "{err}"
        );
        let full = partial.with("a", 1i32).unwrap();
        let Value::Struct(s) = apply(&[(EXCLUDE, "x"), (RENAMES, "d:e")], full.clone()).unwrap()
        else {
            panic!("struct expected")
        };
        assert_eq!(s.schema().fields().len(), 2);
        assert_eq!(s.get("a"), Some(&Value::Int32(1)));
        assert_eq!(s.get("e"), Some(&Value::Int64(7)), "the default");
        let Value::Struct(s) = apply(&[(REPLACE_NULL_WITH_DEFAULT, "false")], full).unwrap() else {
            panic!("struct expected")
        };
        assert_eq!(s.get("d"), Some(&Value::Null));
        assert_eq!(s.get("x"), Some(&Value::String("kept".into())));
    }
}
