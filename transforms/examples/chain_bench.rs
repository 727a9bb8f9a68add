//! Prices the transformation chain in process (prints figures; not a test): nanoseconds per
//! record for the JSON conversion alone and for each chain (its stages on the record data moved out
//! of the source record, then the JSON conversion of what it gives), on the verifiable source's records (int32 key, int64 value).
//!
//! Run: `cargo run --release -p connect-transforms --example chain_bench -- [records]`

use std::hint::black_box;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use connect_api::config::ConfigMap;
use connect_api::converter::Converter;
use connect_api::converter::JsonConverter;
use connect_api::data::{Schema, SchemaBuilder, Struct, Value};
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
        "rename",
        &[
            (
                "type",
                "org.apache.kafka.connect.transforms.ReplaceField$Value",
            ),
            ("renames", "time_ms:timestamp"),
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
    // `BENCH_RECORD=complete`: the verifiable source's complete records (a struct of five
    // fields), through `InsertField` + `ReplaceField` (a rename) + `RegexRouter`, as eos_bench's.
    let complete = std::env::var("BENCH_RECORD").as_deref() == Ok("complete");
    let partition = json_map("id", 0i64);
    let value_schema = if complete {
        SchemaBuilder::struct_()
            .field("name", Schema::string())
            .field("task", Schema::int32())
            .field("topic", Schema::string())
            .field("time_ms", Schema::int64())
            .field("seqno", Schema::int64())
            .build()
    } else {
        Schema::int64()
    };
    let records: Vec<SourceRecord> = (0..n as i64)
        .map(|i| {
            let value = if complete {
                Value::Struct(
                    Struct::new(value_schema.clone())
                        .with("name", "bench")
                        .and_then(|s| s.with("task", 0i32))
                        .and_then(|s| s.with("topic", "bench-data"))
                        .and_then(|s| s.with("time_ms", 1_764_700_000_000i64 + i))
                        .and_then(|s| s.with("seqno", i))
                        .expect("struct"),
                )
            } else {
                Value::Int64(i)
            };
            SourceRecord::new(
                partition.clone(),
                json_map("seqno", i),
                "bench-data".to_owned(),
                Some(value_schema.clone()),
                value,
            )
            .with_key(Some(Schema::int32()), Value::Int32(0))
        })
        .collect();
    let json = JsonConverter::new(false);
    let names: &[&str] = if complete {
        &["", "ins,rename,route", "ins", "rename", "route"]
    } else {
        &["", "hoist,ins,route", "hoist", "route", "hoist,ins"]
    };
    // `BENCH_CHAINS=a,b;c`: only these chains (`;`-separated), e.g. to profile one.
    let only = std::env::var("BENCH_CHAINS").ok();
    let names: Vec<&str> = match &only {
        Some(list) => std::iter::once("").chain(list.split(';')).collect(),
        None => names.to_vec(),
    };
    let chains: Vec<(&str, TransformChain)> = names
        .iter()
        .copied()
        .map(|aliases| {
            (
                if aliases.is_empty() { "none" } else { aliases },
                chain(aliases),
            )
        })
        .collect();
    let base = run(&records, &chains[0].1, &json);
    println!(
        "{:20} {base:7.1} ns/record (JSON-convert key and value; a chain adds its stages on the data moved out of the record and the conversion of what they give)",
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

/// Best of 3 rounds: each record transformed, converted and dropped in turn, as the runtime does
/// for the built-in sources (whose `commit_record` does not read the record: its data moves
/// into the chain, `Record::take_from_source`). The records are copied before the clock starts.
fn run(records: &[SourceRecord], chain: &TransformChain, json: &JsonConverter) -> f64 {
    (0..3)
        .map(|_| {
            let round = records.to_vec();
            let t = Instant::now();
            let mut bytes = 0usize;
            // Each record is dropped in the loop, with or without a chain, as the runtime does.
            for mut r in round {
                let r = &mut r;
                let mut out = None;
                if !chain.is_empty() {
                    let mut data = connect_transforms::Record::take_from_source(r);
                    if chain.apply_in_place(&mut data).unwrap() {
                        out = Some(data);
                    }
                }
                let (key_schema, key, schema, value) = match &out {
                    Some(o) => (
                        o.key_schema.as_ref(),
                        &o.key,
                        o.value_schema.as_ref(),
                        &o.value,
                    ),
                    None => (
                        r.key_schema.as_ref(),
                        &r.key,
                        r.value_schema.as_ref(),
                        &r.value,
                    ),
                };
                let k = json.from_connect_data("t", key_schema, key).unwrap();
                let v = json.from_connect_data("t", schema, value).unwrap();
                bytes += k.map_or(0, |k| k.len()) + v.map_or(0, |v| v.len());
                black_box(out);
            }
            let ns = t.elapsed().as_nanos() as f64 / records.len() as f64;
            black_box(bytes);
            ns
        })
        .fold(f64::MAX, f64::min)
}
