//! `connect-worker verify`: checks a topic written by the verifiable source.
//!
//! Reads the topic from the beginning with `read_committed` up to its end (last stable offset)
//! and checks, per task (record key), that the seqnos (record values) are exactly 0..n: no gap,
//! no duplicate. Keys and values may be plain JSON numbers (`schemas.enable=false`) or Connect's
//! `{"schema":..,"payload":..}` envelope.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::config::clients::{ClientKind, ClientSettings};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

/// What was found for one task.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TaskCounts {
    pub records: u64,
    pub distinct: u64,
    pub duplicates: u64,
    /// Seqnos missing below the highest one seen.
    pub gaps: u64,
    pub max_seqno: i64,
}

/// The verdict for a topic.
#[derive(Debug, Default)]
pub struct Report {
    pub tasks: BTreeMap<i64, TaskCounts>,
    /// Records whose key or value is not a verifiable-source number.
    pub unparsable: u64,
}

impl Report {
    pub fn is_exact(&self, expected_tasks: Option<usize>) -> bool {
        self.unparsable == 0
            && self
                .tasks
                .values()
                .all(|t| t.duplicates == 0 && t.gaps == 0)
            && expected_tasks.is_none_or(|n| self.tasks.len() == n)
    }
}

fn number(bytes: Option<&[u8]>) -> Option<i64> {
    let v: serde_json::Value = serde_json::from_slice(bytes?).ok()?;
    match v {
        serde_json::Value::Object(m) => m.get("payload")?.as_i64(),
        other => other.as_i64(),
    }
}

/// Tallies (task, seqno) pairs.
pub fn tally(pairs: impl IntoIterator<Item = Option<(i64, i64)>>) -> Report {
    let mut seen: BTreeMap<i64, BTreeMap<i64, u64>> = BTreeMap::new();
    let mut report = Report::default();
    for p in pairs {
        match p {
            Some((task, seqno)) => *seen.entry(task).or_default().entry(seqno).or_insert(0) += 1,
            None => report.unparsable += 1,
        }
    }
    for (task, seqnos) in seen {
        let records: u64 = seqnos.values().sum();
        let distinct = seqnos.len() as u64;
        let max_seqno = seqnos.keys().next_back().copied().unwrap_or(-1);
        report.tasks.insert(
            task,
            TaskCounts {
                records,
                distinct,
                duplicates: records - distinct,
                gaps: (max_seqno + 1).max(0) as u64 - distinct,
                max_seqno,
            },
        );
    }
    report
}

/// The client of `verify`: `bootstrap` and the Java client keys of a `--command-config` file
/// (security keys included), translated as a worker's `consumer.*` keys are.
pub fn verify_client(
    bootstrap: &str,
    command_config: Option<&std::path::Path>,
) -> Result<ClientConfig, VerifyError> {
    client(bootstrap, command_config).map_err(VerifyError)
}

fn client(
    bootstrap: &str,
    command_config: Option<&std::path::Path>,
) -> Result<ClientConfig, String> {
    let props = match command_config {
        Some(path) => crate::config::properties::parse(
            &std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?,
        ),
        None => BTreeMap::new(),
    };
    let settings = ClientSettings::translate(
        ClientKind::Consumer,
        "",
        props.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    )
    .and_then(|s| {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", bootstrap);
        s.apply(&mut c).map(|()| c)
    });
    settings.map_err(|errors| {
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// Reads `topic` to its end with `read_committed` and tallies it.
/// `client` holds `bootstrap.servers` and any security settings.
pub fn verify_topic(
    client: ClientConfig,
    topic: &str,
    timeout: Duration,
) -> Result<Report, VerifyError> {
    read_and_tally(client, topic, timeout).map_err(VerifyError)
}

/// Why `verify` could not read the topic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct VerifyError(pub String);

fn read_and_tally(client: ClientConfig, topic: &str, timeout: Duration) -> Result<Report, String> {
    let mut client = client;
    let consumer: BaseConsumer = client
        .set("group.id", format!("connect-verify-{}", std::process::id()))
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .create()
        .map_err(|e| e.to_string())?;
    let md = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .map_err(|e| format!("failed to read metadata of topic {topic}: {e}"))?;
    let mut tpl = TopicPartitionList::new();
    let mut ends = BTreeMap::new();
    for t in md.topics() {
        if t.partitions().is_empty() {
            return Err(format!("topic {topic} does not exist"));
        }
        for p in t.partitions() {
            let (_, high) = consumer
                .fetch_watermarks(topic, p.id(), Duration::from_secs(10))
                .map_err(|e| e.to_string())?;
            ends.insert(p.id(), high);
            tpl.add_partition_offset(topic, p.id(), Offset::Beginning)
                .map_err(|e| e.to_string())?;
        }
    }
    consumer.assign(&tpl).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + timeout;
    let mut pairs = Vec::new();
    loop {
        let pos = consumer.position().map_err(|e| e.to_string())?;
        let done = ends.iter().all(|(p, end)| {
            *end == 0
                || matches!(pos.find_partition(topic, *p).map(|e| e.offset()), Some(Offset::Offset(o)) if o >= *end)
        });
        if done {
            return Ok(tally(pairs));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "timed out reading topic {topic} to its end (an open transaction?)"
            ));
        }
        if let Some(m) = consumer.poll(Duration::from_millis(200)) {
            let m = m.map_err(|e| e.to_string())?;
            pairs.push(number(m.key()).zip(number(m.payload())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_config_secures_the_verify_client_with_java_keys() {
        let dir = std::env::temp_dir().join(format!("verify-cc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("client.properties");
        std::fs::write(
            &file,
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n\
             sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";\n",
        )
        .unwrap();
        let c = verify_client("b:1", Some(&file)).unwrap();
        assert_eq!(c.get("bootstrap.servers"), Some("b:1"));
        assert_eq!(c.get("security.protocol"), Some("SASL_PLAINTEXT"));
        assert_eq!(c.get("sasl.username"), Some("u"));
        std::fs::write(&file, "sasl.mechanism=GSSAPI\nsecurity.protocol=SASL_SSL\n").unwrap();
        let e = verify_client("b:1", Some(&file)).unwrap_err();
        assert!(e.0.contains("configuration sasl.mechanism"), "{e}");
        assert_eq!(
            verify_client("b:1", None).unwrap().get("security.protocol"),
            Some("PLAINTEXT")
        );
    }

    #[test]
    fn counts_gaps_and_duplicates() {
        let r = tally([
            Some((0, 0)),
            Some((0, 1)),
            Some((0, 1)),
            Some((0, 3)),
            Some((1, 0)),
            None,
        ]);
        assert_eq!(
            r.tasks[&0],
            TaskCounts {
                records: 4,
                distinct: 3,
                duplicates: 1,
                gaps: 1,
                max_seqno: 3
            }
        );
        assert_eq!(r.tasks[&1].duplicates + r.tasks[&1].gaps, 0);
        assert_eq!(r.unparsable, 1);
        assert!(!r.is_exact(None));
        let exact = tally([Some((0, 0)), Some((0, 1)), Some((1, 0))]);
        assert!(exact.is_exact(Some(2)));
        assert!(!exact.is_exact(Some(3)));
    }

    #[test]
    fn numbers_with_and_without_envelopes() {
        assert_eq!(number(Some(b"42")), Some(42));
        assert_eq!(
            number(Some(br#"{"schema":{"type":"int64"},"payload":7}"#)),
            Some(7)
        );
        assert_eq!(number(Some(b"x")), None);
        assert_eq!(number(None), None);
    }
}
