//! Our Avro mapping against Java's, case by case, from `tests/golden/registry/avro-data.jsonl`
//! (recorded by `tests/registry/capture-avro-golden.sh` with Apicurio's copy of Confluent's
//! `AvroData`; see `tests/registry/AvroGolden.java` for what each line holds). Per case:
//!
//! - `from_connect_schema(connect schema).to_json()` is Java's `fromConnectSchema(..).toString()`;
//! - `encode` writes Java's bytes for the Connect value;
//! - `to_connect_schema(parse(Java's text), Some(1))` and `decode(Java's bytes)` give the Connect
//!   schema and value Java's `toConnectData(.., 1)` gives (compared with parameters and fields
//!   in order; map entries in any order, as Java reads an Avro map into a `HashMap`).
//!
//! Every failing check of every case is reported, with a diff, before the test fails.

mod common;

use std::fmt::Write as _;

use connect_api::converter::JsonConverter;
use connect_api::{Schema, Struct, Value};
use connect_registry::avro::codec::{Reader, decode, encode};
use connect_registry::avro::data::AvroData;
use connect_registry::avro::schema::AvroSchema;
use serde_json::Value as Json;

/// Where we follow current Confluent and Apicurio's older copy does not: (case, check, why).
/// A listed check that agrees with Java after all is reported too, so the list stays true.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "struct_with_parameters_used_twice",
        "avro_schema",
        "Confluent writes connect.parameters on a field naming a type met before (2026-08, #4458)",
    ),
    (
        "same_name_other_parameters",
        "avro_schema",
        "Confluent writes connect.parameters on a field naming a type met before (2026-08, #4458)",
    ),
];

struct Case {
    name: String,
    schema: Schema,
    value: Value,
    avro_schema: String,
    avro_bytes: Vec<u8>,
    read_schema: Schema,
    read_value: Value,
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

fn parse_case(line: &str) -> Case {
    let json: Json = serde_json::from_str(line).expect("a JSON line");
    let converter = JsonConverter::new(true);
    let name = json["name"].as_str().expect("name").to_owned();
    let connect = converter
        .from_json_value(&json["connect"])
        .unwrap_or_else(|e| panic!("{name}: connect: {e}"));
    let read = converter
        .from_json_value(&json["connect_read"])
        .unwrap_or_else(|e| panic!("{name}: connect_read: {e}"));
    Case {
        schema: connect.schema.expect("a schema"),
        value: connect.value,
        avro_schema: json["avro_schema"]
            .as_str()
            .expect("avro_schema")
            .to_owned(),
        avro_bytes: unhex(json["avro_hex"].as_str().expect("avro_hex")),
        read_schema: read.schema.expect("a schema"),
        read_value: read.value,
        name,
    }
}

/// `value` with the entries of every map sorted by key, for comparing maps as Java's `equals`.
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
            s.schema().clone(),
            s.values().iter().map(sorted_maps).collect(),
        )),
        other => other.clone(),
    }
}

/// An Avro schema text one property or type per line, for a readable diff.
fn split_json(text: &str) -> String {
    text.replace(",\"", ",\n\"").replace('{', "{\n")
}

/// Runs the three checks of one case; `Err` names the check and shows what differs.
fn check(case: &Case) -> Vec<(&'static str, String)> {
    let data = AvroData::default();
    let mut failures = Vec::new();

    // fromConnectSchema + toString.
    let ours = data.from_connect_schema(&case.schema);
    match &ours {
        Ok(avro) if avro.to_json() == case.avro_schema => {}
        Ok(avro) => failures.push((
            "avro_schema",
            common::diff(
                &split_json(&case.avro_schema),
                &split_json(&avro.to_json()),
                false,
            ),
        )),
        Err(e) => failures.push(("avro_schema", format!("error: {e}"))),
    }

    // fromConnectData + GenericDatumWriter.
    if let Ok(avro) = &ours {
        let mut out = Vec::new();
        match encode(avro, &case.schema, &case.value, &mut out) {
            Ok(()) if out == case.avro_bytes => {}
            Ok(()) => failures.push((
                "avro_hex",
                format!(" - {}\n + {}\n", hex(&case.avro_bytes), hex(&out)),
            )),
            Err(e) => failures.push(("avro_hex", format!("error: {e}"))),
        }
    }

    // Schema.Parser + GenericDatumReader + toConnectData(.., 1), from Java's text and bytes.
    let read = AvroSchema::parse(&case.avro_schema).and_then(|avro| {
        let schema = data.to_connect_schema(&avro, Some(1))?;
        let mut reader = Reader::new(&case.avro_bytes);
        let value = decode(&avro, &schema, &mut reader)?;
        Ok((schema, value, reader.bytes.len()))
    });
    match read {
        Ok((schema, value, left)) => {
            // Debug text: parameters and fields in order (Schema's == ignores parameter order).
            let java = format!(
                "{:#?}\n{:#?}",
                case.read_schema,
                sorted_maps(&case.read_value)
            );
            let ours = format!("{schema:#?}\n{:#?}", sorted_maps(&value));
            if java != ours {
                failures.push(("connect_read", common::diff(&java, &ours, false)));
            }
            if left != 0 {
                failures.push(("connect_read", format!("{left} bytes left unread")));
            }
        }
        Err(e) => failures.push(("connect_read", format!("error: {e}"))),
    }
    failures
}

#[test]
fn avro_mapping_matches_java() {
    common::run_golden(
        "avro-data.jsonl",
        25,
        parse_case,
        |c| c.name.as_str(),
        check,
        KNOWN_DIFFERENCES,
    );
}
