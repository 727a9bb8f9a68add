//! Our JSON Schema mapping against Confluent's `JsonSchemaData`, case by case, from
//! `tests/golden/registry/json-schema-data.jsonl` (recorded by
//! `tests/registry/capture-json-schema-golden.sh` from Confluent's sources; see
//! `tests/registry/json-schema-golden/JsonSchemaGolden.java` for what each line holds; the
//! lines are the same under Java 17 and Java 25). Per case:
//!
//! - written cases: `from_connect_schema(connect schema).to_text()` is the text Java's serializer
//!   registers, and `from_connect_data(..).to_json()` the JSON it writes after the header;
//! - every case: `to_connect_schema(load(text), Some(1))` and `to_connect_data(parse(JSON))`
//!   give the Connect schema and value Java's converter reads (compared with parameters and
//!   fields in order; map entries in any order, as Java reads a map into a `HashMap`).
//!
//! Every failing check of every case is reported, with a diff, before the test fails.

mod common;

use connect_api::converter::JsonConverter;
use connect_api::data::{SchemaBuilder, SchemaType};
use connect_api::{Schema, SchemaAndValue, Struct, Value};
use connect_registry::json_schema::data::{DecimalFormat, JsonSchemaData, JsonSchemaDataConfig};
use connect_registry::json_schema::{json, schema};
use serde_json::Value as Json;

/// Where we differ from Confluent on purpose: (case, check, why). A listed check that agrees
/// with Java after all is reported too, so the list stays true.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[(
    "field_defaults_numeric_decimals",
    "connect_read",
    "a NUMERIC Decimal default of 1.50 is registered as 1.5; Java reads it back with scale 1 into a scale-2 schema (and fails when the schema is used), we rescale it to 1.50",
)];

struct Case {
    name: String,
    config: JsonSchemaDataConfig,
    /// Written cases: the Connect schema and value.
    written: Option<(Schema, Value)>,
    json_schema: String,
    json_payload: Option<String>,
    /// `Err`: Java fails to read.
    read: Result<SchemaAndValue, String>,
}

fn config(json: &Json) -> JsonSchemaDataConfig {
    let mut c = JsonSchemaDataConfig::default();
    let flag = |k: &str| json.get(k).and_then(Json::as_str).map(|v| v == "true");
    if let Some(v) = flag("object.additional.properties") {
        c.allow_additional_properties = v;
    }
    if let Some(v) = flag("use.optional.for.nonrequired") {
        c.use_optional_for_non_required = v;
    }
    if let Some(v) = flag("generalized.sum.type.support") {
        c.generalized_sum_type_support = v;
    }
    if let Some(v) = flag("ignore.default.for.nullables") {
        c.ignore_default_for_nullables = v;
    }
    if json.get("decimal.format").and_then(Json::as_str) == Some("NUMERIC") {
        c.decimal_format = DecimalFormat::Numeric;
    }
    c
}

fn parse_case(line: &str) -> Case {
    let json: Json = serde_json::from_str(line).expect("a JSON line");
    let converter = JsonConverter::new(true);
    let name = json["name"].as_str().expect("name").to_owned();
    let written = json.get("connect").map(|c| {
        let c = converter
            .from_json_value(c)
            .unwrap_or_else(|e| panic!("{name}: connect: {e}"));
        let schema = c.schema.expect("a schema");
        let mut value = c.value;
        // JsonConverter wrote the defaults of the null fields: null them again.
        if let Value::Struct(s) = &mut value {
            for f in json["null_fields"].as_array().into_iter().flatten() {
                let f = f.as_str().expect("a field name");
                let index = schema.field(f).expect("a field").index;
                let mut values = s.values().to_vec();
                values[index] = Value::Null;
                *s = Struct::from_checked_values(schema.clone(), values);
            }
        }
        (schema, value)
    });
    let read = match json["connect_read"].get("error") {
        Some(e) => Err(e.as_str().unwrap_or_default().to_owned()),
        None => Ok(converter
            .from_json_value(&json["connect_read"])
            .unwrap_or_else(|e| panic!("{name}: connect_read: {e}"))),
    };
    Case {
        config: config(&json["config"]),
        written,
        json_schema: json["json_schema"]
            .as_str()
            .expect("json_schema")
            .to_owned(),
        json_payload: json["json_payload"].as_str().map(str::to_owned),
        read,
        name,
    }
}

/// `value` with the entries of every map (in it and in its structs' schema defaults) sorted by
/// key, for comparing maps as Java's `equals` (Java reads them into `HashMap`s).
fn sorted_maps(value: &Value) -> Value {
    match value {
        Value::Map(entries) => {
            let mut entries: Vec<(Value, Value)> = entries
                .iter()
                .map(|(k, v)| (sorted_maps(k), sorted_maps(v)))
                .collect();
            entries.sort_by_cached_key(|(k, _)| format!("{k:?}"));
            Value::Map(entries)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_maps).collect()),
        Value::Struct(s) => Value::Struct(Struct::from_checked_values(
            sorted_defaults(s.schema()),
            s.values().iter().map(sorted_maps).collect(),
        )),
        other => other.clone(),
    }
}

/// `schema` with the map entries of its defaults (and its fields' defaults) sorted by key.
fn sorted_defaults(schema: &Schema) -> Schema {
    let mut b = match schema.schema_type() {
        SchemaType::Array => SchemaBuilder::array(sorted_defaults(schema.value_schema().unwrap())),
        SchemaType::Map => SchemaBuilder::map(
            sorted_defaults(schema.key_schema().unwrap()),
            sorted_defaults(schema.value_schema().unwrap()),
        ),
        t => SchemaBuilder::new(t),
    };
    for f in schema.fields() {
        b = b.field(f.name.clone(), sorted_defaults(&f.schema));
    }
    if let Some(n) = schema.name() {
        b = b.name(n);
    }
    if let Some(v) = schema.version() {
        b = b.version(v);
    }
    if let Some(d) = schema.doc() {
        b = b.doc(d);
    }
    for (k, v) in schema.parameters() {
        b = b.parameter(k.clone(), v.clone());
    }
    if let Some(d) = schema.default_value() {
        b = b.default_value(sorted_maps(d));
    }
    if schema.is_optional() {
        b = b.optional();
    }
    b.build()
}

/// A JSON text one key per line, for a readable diff.
fn split_json(text: &str) -> String {
    text.replace(",\"", ",\n\"").replace('{', "{\n")
}

fn check(case: &Case) -> Vec<(&'static str, String)> {
    let data = JsonSchemaData::new(case.config.clone());
    let mut failures = Vec::new();

    if let Some((connect, value)) = &case.written {
        match data.from_connect_schema(connect) {
            Ok(js) if js.to_text() == case.json_schema => {}
            Ok(js) => failures.push((
                "json_schema",
                common::diff(
                    &split_json(&case.json_schema),
                    &split_json(&js.to_text()),
                    false,
                ),
            )),
            Err(e) => failures.push(("json_schema", format!("error: {e}"))),
        }
        match data.from_connect_data(connect, value) {
            Ok(node) => {
                let ours = node.map(|n| n.to_json());
                if ours != case.json_payload {
                    failures.push((
                        "json_payload",
                        common::diff(
                            &split_json(case.json_payload.as_deref().unwrap_or("(none)")),
                            &split_json(ours.as_deref().unwrap_or("(none)")),
                            false,
                        ),
                    ));
                }
            }
            Err(e) => failures.push(("json_payload", format!("error: {e}"))),
        }
    }

    let Some(payload) = &case.json_payload else {
        return failures;
    };
    let ours = schema::load(&case.json_schema).and_then(|js| {
        let connect = data.to_connect_schema(&js, Some(1))?;
        let value = data.to_connect_data(&connect, Some(&json::parse(payload.as_bytes())?))?;
        Ok((connect, value))
    });
    match (&case.read, ours) {
        (Ok(java), Ok((schema, value))) => {
            // Debug text: parameters and fields in order (Schema's == ignores parameter order).
            let java = format!(
                "{:#?}\n{:#?}",
                sorted_defaults(java.schema.as_ref().expect("a schema")),
                sorted_maps(&java.value)
            );
            let ours = format!(
                "{:#?}\n{:#?}",
                sorted_defaults(&schema),
                sorted_maps(&value)
            );
            if java != ours {
                failures.push(("connect_read", common::diff(&java, &ours, false)));
            }
        }
        (Ok(_), Err(e)) => failures.push(("connect_read", format!("error: {e}"))),
        (Err(java), Ok(_)) => failures.push(("connect_read", format!("Java fails: {java}"))),
        (Err(_), Err(_)) => {}
    }
    failures
}

#[test]
fn json_schema_mapping_matches_java() {
    common::run_golden(
        "json-schema-data.jsonl",
        50,
        parse_case,
        |c| c.name.as_str(),
        check,
        KNOWN_DIFFERENCES,
    );
}
