//! Our `io.apicurio.registry.utils.converter.ProtobufConverter` mapping against Apicurio's Java
//! `ProtobufData` and `FileDescriptorUtils`, case by case, from
//! `tests/golden/registry/apicurio-protobuf-data.jsonl` (recorded by
//! `tests/registry/capture-apicurio-protobuf-golden.sh`; see
//! `tests/registry/apicurio-protobuf-golden/ApicurioProtobufGolden.java` for what each line
//! holds). Per case:
//!
//! - `error`: where Java's converter refuses the value, ours refuses it too;
//! - `proto`: the text we register is Java's, character for character;
//! - `hex`: the bytes after the 5-byte header (the length-delimited `Ref` and the message) are
//!   Java's;
//! - `read`: reading Java's bytes with Java's registered text gives the Connect schema and value
//!   Java's converter gives (for the `produced` cases, records of a producer with generated
//!   classes, this is the only check).
//!
//! Every failing check of every case is reported, with a diff, before the test fails.

mod common;

use std::fmt::Write as _;

use connect_api::converter::JsonConverter;
use connect_api::{Schema, Value};
use connect_registry::apicurio::protobuf::{compile_for_reading, writer_parts};
use connect_registry::apicurio::protobuf_data::{Reader, read_ref, write_ref};
use protox::prost_reflect::DynamicMessage;
use serde_json::Value as Json;

/// Where we differ from Apicurio's Java on purpose: (case, check, why).
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[];

struct Case {
    name: String,
    /// The Connect data written (none for the `produced` cases).
    written: Option<(Schema, Value)>,
    error: Option<String>,
    proto: String,
    hex: String,
    read: Option<(Schema, Value)>,
}

fn parse_case(line: &str) -> Case {
    let json: Json = serde_json::from_str(line).expect("a JSON line");
    let name = json["name"].as_str().expect("name").to_owned();
    let conv = JsonConverter::new(true);
    let written = json.get("connect").map(|c| {
        let c = conv
            .from_json_value(c)
            .unwrap_or_else(|e| panic!("{name}: connect: {e}"));
        (c.schema.expect("a schema"), c.value)
    });
    let read = json.get("read").map(|r| {
        let sv = conv
            .from_json_value(r)
            .unwrap_or_else(|e| panic!("{name}: read: {e}"));
        (sv.schema.expect("a read schema"), sv.value)
    });
    Case {
        written,
        error: json["error"].as_str().map(str::to_owned),
        proto: json["proto"].as_str().unwrap_or_default().to_owned(),
        hex: json["hex"].as_str().unwrap_or_default().to_owned(),
        read,
        name,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn write(schema: &Schema, value: &Value) -> connect_api::Result<(String, Vec<u8>)> {
    let (file, text) = writer_parts(schema)?;
    let mut out = Vec::new();
    write_ref(&mut out, &file.root);
    file.encode(schema, value, &mut out)?;
    Ok((text, out))
}

fn read(case: &Case) -> connect_api::Result<(Schema, Value)> {
    let (_pool, map_entries, messages) = compile_for_reading(&case.proto)?;
    let bytes = unhex(&case.hex);
    let (name, payload) =
        read_ref(&bytes).ok_or_else(|| connect_api::ConnectError::data("no Ref"))?;
    let desc = messages
        .iter()
        .find(|m| m.name() == name)
        .cloned()
        .ok_or_else(|| connect_api::ConnectError::data(format!("no message {name}")))?;
    let reader = Reader {
        map_entries: &map_entries,
    };
    let schema = reader.to_connect_schema(&desc)?;
    let message = DynamicMessage::decode(desc, payload)
        .map_err(|e| connect_api::ConnectError::data(e.to_string()))?;
    let value = reader.to_connect_value(&schema, &message)?;
    Ok((schema, value))
}

fn check(case: &Case) -> Vec<(&'static str, String)> {
    let mut failures = Vec::new();
    let ours = case.written.as_ref().map(|(s, v)| write(s, v));
    if let Some(java) = &case.error {
        if let Some(Ok((text, _))) = ours {
            failures.push((
                "error",
                format!("Java fails ({java}), ours writes:\n{text}"),
            ));
        }
        return failures;
    }
    match ours {
        None => {}
        Some(Err(e)) => failures.push(("proto", format!("ours fails: {e}"))),
        Some(Ok((text, bytes))) => {
            if text != case.proto {
                failures.push(("proto", common::diff(&case.proto, &text, true)));
            }
            let ours = hex(&bytes);
            if ours != case.hex {
                failures.push(("hex", format!(" - {}\n + {ours}", case.hex)));
            }
        }
    }
    let (java_schema, java_value) = case.read.as_ref().expect("a read");
    match read(case) {
        Err(e) => failures.push(("read", format!("ours fails: {e}"))),
        Ok((schema, value)) => {
            if schema != *java_schema {
                failures.push(("read", format!(" - {java_schema:?}\n + {schema:?}")));
            } else if value != *java_value {
                failures.push(("read", format!(" - {java_value:?}\n + {value:?}")));
            }
        }
    }
    failures
}

#[test]
fn apicurio_protobuf_mapping_matches_java() {
    common::run_golden(
        "apicurio-protobuf-data.jsonl",
        27,
        parse_case,
        |c| c.name.as_str(),
        check,
        KNOWN_DIFFERENCES,
    );
}
