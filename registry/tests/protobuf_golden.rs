//! Our Protobuf mapping against Confluent's `ProtobufData`, case by case, from
//! `tests/golden/registry/protobuf-data.jsonl` (recorded by
//! `tests/registry/capture-protobuf-golden.sh` from Confluent's sources; see
//! `tests/registry/protobuf-golden/ProtobufGolden.java` for what each line holds). Per case,
//! with the default `ProtobufDataConfig`:
//!
//! - `proto`: the text our `writer_parts` registers for the Connect schema is Java's
//!   `fromConnectSchema(schema).canonicalString()`;
//! - `hex`: our `from_connect_value` of the Connect value, encoded, is the message Java's
//!   `fromConnectData` gives (the bytes after the header and message indexes).
//!
//! Every failing check of every case is reported, with a diff, before the test fails.

mod common;

use std::fmt::Write as _;

use connect_api::converter::JsonConverter;
use connect_api::{Schema, Value};
use connect_registry::protobuf::converter::writer_parts;
use connect_registry::protobuf::data::{ProtobufData, ProtobufDataConfig};
use protox::prost::Message as _;
use serde_json::Value as Json;

/// Where we differ from Confluent on purpose: (case, check, why). A listed check that agrees
/// with Java after all is reported too, so the list stays true.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[];

struct Case {
    name: String,
    schema: Schema,
    value: Value,
    proto: String,
    hex: String,
}

fn parse_case(line: &str) -> Case {
    let json: Json = serde_json::from_str(line).expect("a JSON line");
    let name = json["name"].as_str().expect("name").to_owned();
    let c = JsonConverter::new(true)
        .from_json_value(&json["connect"])
        .unwrap_or_else(|e| panic!("{name}: connect: {e}"));
    Case {
        schema: c.schema.expect("a schema"),
        value: c.value,
        proto: json["proto"].as_str().expect("proto").to_owned(),
        hex: json["hex"].as_str().expect("hex").to_owned(),
        name,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn check(case: &Case) -> Vec<(&'static str, String)> {
    let config = ProtobufDataConfig::default();
    let mut failures = Vec::new();
    let (text, _, _, desc, _) = match writer_parts(&case.schema, &config) {
        Ok(parts) => parts,
        Err(e) => return vec![("proto", format!("ours fails: {e}"))],
    };
    if text != case.proto {
        failures.push(("proto", common::diff(&case.proto, &text, true)));
    }
    match ProtobufData::new(config).from_connect_value(&case.schema, &case.value, &desc) {
        Ok(msg) => {
            let ours = hex(&msg.encode_to_vec());
            if ours != case.hex {
                failures.push(("hex", format!(" - {}\n + {ours}", case.hex)));
            }
        }
        Err(e) => failures.push(("hex", format!("ours fails: {e}"))),
    }
    failures
}

#[test]
fn protobuf_mapping_matches_java() {
    common::run_golden(
        "protobuf-data.jsonl",
        22,
        parse_case,
        |c| c.name.as_str(),
        check,
        KNOWN_DIFFERENCES,
    );
}
