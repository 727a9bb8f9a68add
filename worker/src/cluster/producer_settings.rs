//! The settings of the worker's transactional producer ([`super::producer`]) from a librdkafka
//! client config, when every key there is one it applies: the one place that decides whether
//! a producer config can run on it (task producers, zombie fencing, the config topic's writer).

use std::time::Duration;

use rdkafka::ClientConfig;

use super::client::Security;
use super::producer::{ProducerSettings, compression_of};
use crate::config::security::librdkafka_keys;
use crate::security::KafkaSecurity;

/// Keys the native producer applies (besides the security keys, applied by [`Security`]).
pub const NATIVE_KEYS: &[&str] = &[
    "bootstrap.servers",
    "client.id",
    "transactional.id",
    "enable.idempotence",
    "acks",
    "request.required.acks",
    "partitioner",
    "linger.ms",
    "queue.buffering.max.ms",
    "batch.size",
    "compression.type",
    "compression.codec",
    "request.timeout.ms",
    "message.timeout.ms",
    "delivery.timeout.ms",
    "transaction.timeout.ms",
    "retry.backoff.ms",
    "allow.auto.create.topics",
    // Accepted at 5 only, the native producer's window (below).
    "max.in.flight.requests.per.connection",
    "max.in.flight",
];

/// librdkafka's `message.timeout.ms=0`: no delivery timeout (the internal topics' writers).
/// The native producer's retries then stop after this long.
const NO_TIMEOUT: Duration = Duration::from_millis(i32::MAX as u64);

fn millis(config: &ClientConfig, keys: &[&str], default: u64) -> Result<Duration, String> {
    for key in keys {
        if let Some(v) = config.get(key) {
            return v
                .trim()
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| format!("{key}={v}"));
        }
    }
    Ok(Duration::from_millis(default))
}

/// The native producer's settings from `config` (a librdkafka producer config with a
/// `transactional.id`) and the security its keys resolve to, when every key of `config` is one
/// the native producer applies; else why not (the keys, or the value, it does not apply).
pub fn from_librdkafka(
    config: &ClientConfig,
    security: &KafkaSecurity,
) -> Result<ProducerSettings, String> {
    let security_keys: Vec<&'static str> = librdkafka_keys(security)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let others: Vec<&str> = config
        .config_map()
        .keys()
        .copied()
        .filter(|k| !NATIVE_KEYS.contains(k) && !security_keys.contains(k))
        .collect();
    if !others.is_empty() {
        return Err(format!(
            "the producer settings {} are applied by librdkafka's producer only",
            others.join(", ")
        ));
    }
    let value = |k: &str| config.get(k).map(str::trim);
    if value("enable.idempotence").is_some_and(|v| v != "true") {
        return Err("enable.idempotence is not true".into());
    }
    if let Some(acks) = value("acks").or(value("request.required.acks"))
        && !matches!(acks, "all" | "-1")
    {
        return Err(format!("acks={acks}"));
    }
    if let Some(p) = value("partitioner")
        && p != "murmur2_random"
    {
        return Err(format!("partitioner={p}"));
    }
    if let Some(n) = value("max.in.flight.requests.per.connection").or(value("max.in.flight"))
        && n != super::producer::MAX_IN_FLIGHT.to_string()
    {
        return Err(format!("max.in.flight.requests.per.connection={n}"));
    }
    if value("allow.auto.create.topics").is_some_and(|v| v != "true") {
        return Err("allow.auto.create.topics is not true".into());
    }
    let compression = match value("compression.type").or(value("compression.codec")) {
        None => kafka_protocol::records::Compression::None,
        Some(c) => compression_of(c).ok_or_else(|| format!("compression.type={c}"))?,
    };
    let batch_bytes = match value("batch.size") {
        None => 1_000_000,
        Some(b) => b
            .parse::<usize>()
            .ok()
            .filter(|b| *b > 0)
            .ok_or_else(|| format!("batch.size={b}"))?,
    };
    let transactional_id = value("transactional.id")
        .ok_or("no transactional.id")?
        .to_owned();
    Ok(ProducerSettings {
        bootstrap: crate::cluster::client::bootstrap_list(
            value("bootstrap.servers").unwrap_or_default(),
        ),
        client_id: value("client.id")
            .unwrap_or("connector-producer")
            .to_owned(),
        transactional_id,
        security: Security::new(security).map_err(|e| e.to_string())?,
        request_timeout: millis(config, &["request.timeout.ms"], 30_000)?,
        delivery_timeout: match millis(
            config,
            &["delivery.timeout.ms", "message.timeout.ms"],
            120_000,
        )? {
            Duration::ZERO => NO_TIMEOUT,
            d => d,
        },
        transaction_timeout: millis(config, &["transaction.timeout.ms"], 60_000)?,
        batch_bytes,
        compression,
        retry_backoff: millis(config, &["retry.backoff.ms"], 100)?,
    })
}
