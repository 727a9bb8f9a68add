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

/// A line diff (longest common subsequence) of two texts: `-` Java's, `+` ours.
fn diff(java: &str, ours: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (java.lines().collect(), ours.lines().collect());
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            let _ = writeln!(out, "   {:?}", a[i]);
            (i, j) = (i + 1, j + 1);
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            let _ = writeln!(out, " + {:?}", b[j]);
            j += 1;
        } else {
            let _ = writeln!(out, " - {:?}", a[i]);
            i += 1;
        }
    }
    out
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
        failures.push(("proto", diff(&case.proto, &text)));
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
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/golden/registry/protobuf-data.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(parse_case)
        .collect();
    assert!(cases.len() >= 22, "only {} cases in {path}", cases.len());

    let mut report = String::new();
    let mut failed = 0;
    for case in &cases {
        let failures = check(case);
        for (check, detail) in &failures {
            if KNOWN_DIFFERENCES
                .iter()
                .any(|(c, k, _)| *c == case.name && k == check)
            {
                continue;
            }
            failed += 1;
            let _ = writeln!(report, "\n=== {} / {check}\n{detail}", case.name);
        }
        for (c, k, why) in KNOWN_DIFFERENCES {
            if *c == case.name && !failures.iter().any(|(check, _)| check == k) {
                failed += 1;
                let _ = writeln!(
                    report,
                    "\n=== {c} / {k}: listed as a known difference ({why}) but agrees with Java"
                );
            }
        }
    }
    for (c, k, _) in KNOWN_DIFFERENCES {
        assert!(
            cases.iter().any(|case| case.name == *c),
            "known difference {c} / {k} names no case"
        );
    }
    assert!(
        failed == 0,
        "{failed} check(s) of {} cases disagree with Java:\n{report}",
        cases.len()
    );
}
