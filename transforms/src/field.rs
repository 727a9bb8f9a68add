//! Field paths (KIP-821): Apache's `SingleFieldPath` and `FieldSyntaxVersion`.

use connect_api::config::validators::one_of_case_insensitive;
use connect_api::config::{ConfigDef, ConfigKey, ConfigType as T, Importance, ParsedConfig};
use connect_api::data::{Field, Schema, Struct, Value};
use connect_api::{ConnectError, Result};

use crate::util::{field_value, map_get};

pub const FIELD_SYNTAX_VERSION_CONFIG: &str = "field.syntax.version";
pub const FIELD_SYNTAX_VERSION_DOC: &str = "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access the elements at the root level of the struct or map. If set to `V2`, the syntax will support accessing nested elements. To access nested elements, dotted notation is used. If dots are already included in the field name, then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield `baz` from a field named \"foo.bar\" in a struct/map the following format can be used to access its elements: \"`foo.bar`.baz\".";

/// `V1`: one top-level field; `V2`: dotted nested paths with backtick quoting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldSyntaxVersion {
    V1,
    V2,
}

impl FieldSyntaxVersion {
    /// Apache's `FieldSyntaxVersion.appendConfigTo`.
    pub fn append_config_to(def: ConfigDef) -> ConfigDef {
        def.define(
            ConfigKey::new(
                FIELD_SYNTAX_VERSION_CONFIG,
                T::String,
                Importance::High,
                FIELD_SYNTAX_VERSION_DOC,
            )
            .default_value("V1")
            .validator(one_of_case_insensitive(&["V1", "V2"])),
        )
    }

    pub fn from_config(c: &ParsedConfig) -> Result<Self> {
        let raw = c.string(FIELD_SYNTAX_VERSION_CONFIG).unwrap_or("V1");
        match raw.to_ascii_uppercase().as_str() {
            "V1" => Ok(Self::V1),
            "V2" => Ok(Self::V2),
            _ => Err(ConnectError::invalid_value(
                FIELD_SYNTAX_VERSION_CONFIG,
                raw,
                "Unrecognized field syntax version",
            )),
        }
    }
}

/// A path to one (possibly nested) field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SingleFieldPath {
    steps: Vec<String>,
}

fn incomplete(path: &str, at: usize) -> ConnectError {
    ConnectError::config(format!(
        "Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick at position {at} to escape it"
    ))
}

impl SingleFieldPath {
    pub fn new(path: &str, version: FieldSyntaxVersion) -> Result<Self> {
        let mut steps = match version {
            FieldSyntaxVersion::V1 => vec![path.to_owned()],
            FieldSyntaxVersion::V2 => parse_v2(path)?,
        };
        if steps.is_empty() {
            // An empty V2 path: Java fails on first use (an index error); one empty step names
            // no field, so the record fails with "Unknown field" (or extracts null) instead.
            steps.push(String::new());
        }
        Ok(Self { steps })
    }

    pub fn steps(&self) -> &[String] {
        &self.steps
    }

    fn split(&self) -> (&[String], &str) {
        let (last, init) = self
            .steps
            .split_last()
            .expect("a path has at least one step");
        (init, last)
    }

    /// The field the path names in `schema`, if every step exists.
    pub fn field_from<'a>(&self, schema: &'a Schema) -> Option<&'a Field> {
        let (init, last) = self.split();
        let mut current = schema;
        for step in init {
            current = &current.field(step)?.schema;
        }
        current.field(last)
    }

    pub fn value_from_struct(&self, s: &Struct, with_default: bool) -> Result<Value> {
        let (init, last) = self.split();
        let mut current = s.clone();
        for step in init {
            if current.schema().field(step).is_none() {
                return Ok(Value::Null);
            }
            match field_value(&current, step, true) {
                Value::Null => return Ok(Value::Null),
                Value::Struct(next) => current = next,
                other => {
                    return Err(ConnectError::data(format!(
                        "Only Struct objects supported for [nested field access], found: {}",
                        crate::util::java_class_name(&other)
                    )));
                }
            }
        }
        Ok(field_value(&current, last, with_default))
    }

    pub fn value_from_map(&self, map: &[(Value, Value)]) -> Result<Value> {
        let (init, last) = self.split();
        let mut current: Vec<(Value, Value)> = map.to_vec();
        for step in init {
            match map_get(&current, step) {
                None | Some(Value::Null) => return Ok(Value::Null),
                Some(Value::Map(next)) => current = next.clone(),
                Some(other) => {
                    return Err(ConnectError::data(format!(
                        "Only Map objects supported in absence of schema for [nested field access], found: {}",
                        crate::util::java_class_name(other)
                    )));
                }
            }
        }
        Ok(map_get(&current, last).cloned().unwrap_or(Value::Null))
    }
}

fn parse_v2(path: &str) -> Result<Vec<String>> {
    let p: Vec<char> = path.chars().collect();
    let find = |from: usize, c: char| {
        p[from.min(p.len())..]
            .iter()
            .position(|x| *x == c)
            .map(|i| i + from)
    };
    let mut steps = Vec::new();
    let mut idx = 0usize;
    while idx < p.len() {
        if p[idx] != '`' {
            let start = idx;
            match find(idx, '.') {
                Some(dot) => {
                    steps.push(p[start..dot].iter().collect());
                    idx = dot + 1;
                }
                None => {
                    steps.push(p[start..].iter().collect());
                    idx = p.len() + 1;
                }
            }
        } else {
            let backtick_at = idx;
            idx += 1;
            let mut field = String::new();
            let mut start = idx;
            loop {
                let Some(found) = find(idx, '`') else {
                    return Err(incomplete(path, backtick_at));
                };
                idx = found;
                let escaped = p[idx - 1] == '\\';
                if idx >= p.len() - 1 {
                    if escaped {
                        return Err(incomplete(path, backtick_at));
                    }
                    field.extend(&p[start..idx]);
                    steps.push(std::mem::take(&mut field));
                    idx += 1;
                    break;
                }
                if p[idx + 1] != '.' {
                    idx += 1;
                    continue;
                }
                if escaped {
                    field.extend(&p[start..idx - 1]);
                    field.push('`');
                    idx += 1;
                    start = idx;
                    continue;
                }
                field.extend(&p[start..idx]);
                steps.push(std::mem::take(&mut field));
                idx += 2;
                break;
            }
        }
    }
    if path.ends_with('.') {
        steps.push(String::new());
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(p: &str) -> Vec<String> {
        SingleFieldPath::new(p, FieldSyntaxVersion::V2)
            .unwrap()
            .steps
    }

    #[test]
    fn v2_paths_as_apache_parses_them() {
        assert_eq!(v2("foo"), ["foo"]);
        assert_eq!(v2("foo.bar"), ["foo", "bar"]);
        assert_eq!(v2("`foo.bar`.baz"), ["foo.bar", "baz"]);
        assert_eq!(v2("foo."), ["foo", ""]);
        assert_eq!(v2("`foo\\`.bar`"), ["foo`.bar"]);
        assert_eq!(
            SingleFieldPath::new("`foo", FieldSyntaxVersion::V2)
                .unwrap_err()
                .to_string(),
            "Incomplete backtick pair in path: [`foo], consider adding a backslash before backtick at position 0 to escape it"
        );
        assert_eq!(
            SingleFieldPath::new("a.b", FieldSyntaxVersion::V1)
                .unwrap()
                .steps,
            ["a.b"]
        );
    }
}
