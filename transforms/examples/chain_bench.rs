//! Prices the transformation chain in process (prints figures; not a test): nanoseconds per
//! record for the source runtime's copy of the record, each chain, and the JSON conversion of
//! the records each chain gives, on the verifiable source's records (int32 key, int64 value).
//!
//! Run: `cargo run --release -p connect-transforms --example chain_bench -- [records]`

use std::hint::black_box;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use connect_api::config::ConfigMap;
use connect_api::converter::Converter;
use connect_api::converter::JsonConverter;
use connect_api::data::{Schema, Value};
use connect_api::record::{SourceRecord, json_map};
use connect_transforms::TransformChain;

/// Each stage's config: `HoistField$Value` of the int64 into a struct, `InsertField$Value` of a
/// static string field, `RegexRouter` onto the same topic.
const STAGES: &[(&str, &[(&str, &str)])] = &[
    (
        "hoist",
        &[
            (
                "type",
                "org.apache.kafka.connect.transforms.HoistField$Value",
            ),
            ("field", "seqno"),
        ],
    ),
    (
        "ins",
        &[
            (
                "type",
                "org.apache.kafka.connect.transforms.InsertField$Value",
            ),
            ("static.field", "source"),
            ("static.value", "bench"),
        ],
    ),
    (
        "route",
        &[
            ("type", "org.apache.kafka.connect.transforms.RegexRouter"),
            ("regex", "(.*)"),
            ("replacement", "$1"),
        ],
    ),
];

/// The chain of the comma-separated stage aliases (empty: no chain).
fn chain(aliases: &str) -> TransformChain {
    let mut props = ConfigMap::new();
    if !aliases.is_empty() {
        props.insert("transforms".to_owned(), aliases.to_owned());
        for alias in aliases.split(',') {
            let (_, keys) = STAGES.iter().find(|(a, _)| *a == alias).expect("stage");
            for (k, v) in *keys {
                props.insert(format!("transforms.{alias}.{k}"), (*v).to_owned());
            }
        }
    }
    TransformChain::from_config(&props).expect("chain")
}

#[allow(clippy::print_stdout)]
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let partition = json_map("id", 0i64);
    let value_schema = Schema::int64();
    let records: Vec<SourceRecord> = (0..n as i64)
        .map(|i| {
            SourceRecord::new(
                partition.clone(),
                json_map("seqno", i),
                "bench-data".to_owned(),
                Some(value_schema.clone()),
                Value::Int64(i),
            )
            .with_key(Some(Schema::int32()), Value::Int32(0))
        })
        .collect();
    let json = JsonConverter::new(false);
    let chains: Vec<(&str, TransformChain)> =
        ["", "hoist,ins,route", "hoist", "route", "hoist,ins"]
            .into_iter()
            .map(|aliases| {
                (
                    if aliases.is_empty() { "none" } else { aliases },
                    chain(aliases),
                )
            })
            .collect();
    let base = run(&records, &chains[0].1, &json);
    println!(
        "{:20} {base:7.1} ns/record (JSON-convert key and value; a chain adds the copy of the record it works on, its stages, the conversion of what they give)",
        chains[0].0
    );
    for (name, chain) in &chains[1..] {
        let ns = run(&records, chain, &json);
        println!(
            "{name:20} {ns:7.1} ns/record  chain +{:6.1} ns/record",
            ns - base
        );
    }
}

/// Best of 3 rounds: each record transformed, converted and dropped in turn, as the runtime does.
fn run(records: &[SourceRecord], chain: &TransformChain, json: &JsonConverter) -> f64 {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            let mut bytes = 0usize;
            for r in records {
                let out = if chain.is_empty() {
                    None
                } else {
                    chain.apply_source_data(r).unwrap()
                };
                let (schema, value) = match &out {
                    Some(o) => (o.value_schema.as_ref(), &o.value),
                    None => (r.value_schema.as_ref(), &r.value),
                };
                let k = json
                    .from_connect_data("t", r.key_schema.as_ref(), &r.key)
                    .unwrap();
                let v = json.from_connect_data("t", schema, value).unwrap();
                bytes += k.map_or(0, |k| k.len()) + v.map_or(0, |v| v.len());
                black_box(out);
            }
            black_box(bytes);
            t.elapsed().as_nanos() as f64 / records.len() as f64
        })
        .fold(f64::MAX, f64::min)
}
