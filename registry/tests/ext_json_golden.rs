//! Our `ExtJsonConverter` against Apicurio's, case by case, from
//! `tests/golden/registry/ext-json.jsonl` (recorded by `tests/registry/capture-ext-json-golden.sh`
//! with Apicurio's Java converter on the Connect values of the Avro golden cases), against a real
//! registry (`SCHEMA_REGISTRY_URL`, e.g. `deploy/registry.sh up`; skipped, with a note, when
//! unset). Per case, ours (auto-registering under a topic of its own):
//!
//! - writes Java's record but for the schema id (`{"schemaId":N,"payload":...}` byte for byte
//!   after the id);
//! - registers Java's schema text, byte for byte;
//! - reads its own record back into the Connect schema and value Java reads from Java's;
//! - reads Java's record (its id swapped for the id of the same content: Apicurio 2.6's Java
//!   converter writes the global id, Apicurio 3's the content id, as ours) into the same.

mod common;

use std::time::{SystemTime, UNIX_EPOCH};

use connect_api::converter::JsonConverter;
use connect_api::{ConfigMap, Converter, SchemaAndValue};
use connect_registry::ext_json::ExtJsonConverter;
use serde_json::Value as Json;

struct Case {
    name: String,
    input: SchemaAndValue,
    record: String,
    registered: String,
    read: Json,
}

/// The record after its schema id (`,"payload":...}`), and the id.
fn split_id(record: &str) -> (i64, &str) {
    let rest = record
        .strip_prefix("{\"schemaId\":")
        .unwrap_or_else(|| panic!("not an ExtJsonConverter record: {record}"));
    let end = rest.find(',').expect("a payload after the id");
    (rest[..end].parse().expect("a numeric id"), &rest[end..])
}

fn envelope(sv: &SchemaAndValue) -> Json {
    JsonConverter::new(true)
        .to_json_value(sv.schema.as_ref(), &sv.value)
        .expect("an envelope")
}

fn content(base: &str, id: i64) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        reqwest::get(format!("{base}/apis/registry/v3/ids/contentIds/{id}"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    })
}

#[test]
fn ext_json_converter_writes_registers_and_reads_as_apicurios() {
    let Some(url) = std::env::var("SCHEMA_REGISTRY_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        println!("SCHEMA_REGISTRY_URL is not set: skipped (deploy/registry.sh up)");
        return;
    };
    let base = url.split("/apis/").next().unwrap().to_owned();
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let config: ConfigMap = [
        (
            "apicurio.registry.url".to_owned(),
            format!("{base}/apis/registry/v3"),
        ),
        ("apicurio.registry.auto-register".to_owned(), "true".into()),
    ]
    .into_iter()
    .collect();
    let mut ours = ExtJsonConverter::default();
    ours.configure(&config, false).unwrap();
    let envelopes = JsonConverter::new(true);

    common::run_golden(
        "ext-json.jsonl",
        30,
        |line| {
            let j: Json = serde_json::from_str(line).expect("a JSON line");
            Case {
                name: j["name"].as_str().unwrap().to_owned(),
                input: envelopes.from_json_value(&j["connect"]).expect("connect"),
                record: j["record"].as_str().unwrap().to_owned(),
                registered: j["registered"].as_str().unwrap().to_owned(),
                read: j["connect_read"].clone(),
            }
        },
        |c| &c.name,
        |c| {
            let mut failures = Vec::new();
            let topic = format!("ext-json-golden-{run}-{}", c.name);
            let record =
                match ours.from_connect_data(&topic, c.input.schema.as_ref(), &c.input.value) {
                    Ok(Some(r)) => String::from_utf8(r).expect("UTF-8"),
                    other => return vec![("write", format!("{other:?}"))],
                };
            let (id, after_id) = split_id(&record);
            let (_, java_after_id) = split_id(&c.record);
            if after_id != java_after_id {
                failures.push(("record", common::diff(java_after_id, after_id, true)));
            }
            let registered = content(&base, id);
            if registered != c.registered {
                failures.push(("registered", common::diff(&c.registered, &registered, true)));
            }
            match ours.to_connect_data(&topic, Some(record.as_bytes())) {
                Ok(sv) if envelope(&sv) == c.read => {}
                other => failures.push(("read", format!("java {}\nours {other:?}", c.read))),
            }
            let java_record = format!("{{\"schemaId\":{id}{java_after_id}");
            match ours.to_connect_data(&topic, Some(java_record.as_bytes())) {
                Ok(sv) if envelope(&sv) == c.read => {}
                other => failures.push(("read_java", format!("java {}\nours {other:?}", c.read))),
            }
            failures
        },
        KNOWN_DIFFERENCES,
    );
}

/// Where Java's order is its `HashMap`'s: (case, check, why). A listed check that agrees with
/// Java after all is reported too, so the list stays true.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "optional_maps_of_structs",
        "record",
        "Java writes a map in its HashMap's order (-10 before 10), ours in the value's order",
    ),
    (
        "optional_maps_of_structs",
        "read",
        "the same map read back: the same entries in another order",
    ),
];
