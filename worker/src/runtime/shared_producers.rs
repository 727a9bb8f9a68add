//! At-least-once source tasks share librdkafka producers (issue 15, item 5: density).
//!
//! Every librdkafka producer has its own threads (a main thread, one per broker), timers and
//! connections; a worker carrying a hundred trickling tasks spent most of its CPU keeping a
//! hundred producers alive. Tasks whose effective producer config is the same (the worker's
//! `producer.*` under the connector's `producer.override.*`, security included) share one
//! producer. Delivery accounting stays per task: each record's delivery future is the task's own,
//! so a task commits the offsets of its own acknowledged records, never another's.
//!
//! The client id: Apache gives each task producer `connector-producer-<connector>-<task>`. A
//! producer shared under that default gets `connector-producer-shared-<n>` instead; a configured
//! `client.id` (e.g. `producer.override.client.id`, for quotas) is part of the config, so only
//! tasks that configured the same id share. A producer that turned fatal is not handed out again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rdkafka::ClientConfig;
use rdkafka::error::KafkaResult;
use rdkafka::producer::{FutureProducer, Producer};

/// The worker's shared at-least-once producers, keyed by their effective config.
#[derive(Default)]
pub struct SharedProducers {
    producers: Mutex<HashMap<String, Weak<FutureProducer>>>,
    created: AtomicUsize,
}

impl SharedProducers {
    /// The producer for `config`: a live one of the same config, else a new one. `task_client_id`
    /// is the per-task client id the worker defaulted; a config that still has it shares under a
    /// worker-wide id.
    pub fn get(
        &self,
        mut config: ClientConfig,
        task_client_id: &str,
    ) -> KafkaResult<Arc<FutureProducer>> {
        let defaulted_id = config.get("client.id") == Some(task_client_id);
        if defaulted_id {
            config.remove("client.id");
        }
        let key = fingerprint(&config);
        let mut producers = self.producers.lock().expect("shared producers lock");
        if let Some(p) = producers.get(&key).and_then(Weak::upgrade)
            && p.client().fatal_error().is_none()
        {
            return Ok(p);
        }
        if defaulted_id {
            let n = self.created.fetch_add(1, Ordering::Relaxed);
            config.set("client.id", format!("connector-producer-shared-{n}"));
        }
        let producer = Arc::new(config.create::<FutureProducer>()?);
        producers.retain(|_, p| p.strong_count() > 0);
        producers.insert(key, Arc::downgrade(&producer));
        tracing::debug!(
            client_id = config.get("client.id").unwrap_or_default(),
            "created a shared task producer"
        );
        Ok(producer)
    }

    /// How many shared producers are alive (for tests and diagnostics).
    pub fn live(&self) -> usize {
        let producers = self.producers.lock().expect("shared producers lock");
        producers.values().filter(|p| p.strong_count() > 0).count()
    }
}

/// The config's settings, sorted, one `key=value` per line (the log level too: it is not in
/// the map but changes what the client does). The values are the real ones: `config_map` masks
/// secrets, and two tasks with other passwords must not share a producer.
fn fingerprint(config: &ClientConfig) -> String {
    let mut out = format!("log_level={:?}\n", config.log_level);
    for k in config.config_map().keys() {
        out.push_str(k);
        out.push('=');
        out.push_str(config.get(k).unwrap_or_default());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(extra: &[(&str, &str)]) -> ClientConfig {
        let mut c = ClientConfig::new();
        // Nothing listens there: creating a producer does not connect.
        c.set("bootstrap.servers", "127.0.0.1:1");
        for (k, v) in extra {
            c.set(*k, *v);
        }
        c
    }

    #[test]
    fn tasks_with_the_same_config_share_one_producer() {
        let shared = SharedProducers::default();
        let a = shared
            .get(
                config(&[("client.id", "connector-producer-c-0")]),
                "connector-producer-c-0",
            )
            .unwrap();
        let b = shared
            .get(
                config(&[("client.id", "connector-producer-c-1")]),
                "connector-producer-c-1",
            )
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(shared.live(), 1);
        // Another setting, another producer.
        let c = shared
            .get(
                config(&[("client.id", "connector-producer-d-0"), ("linger.ms", "50")]),
                "connector-producer-d-0",
            )
            .unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(shared.live(), 2);
    }

    #[test]
    fn a_configured_client_id_is_part_of_the_config() {
        let shared = SharedProducers::default();
        let a = shared
            .get(
                config(&[("client.id", "quota-a")]),
                "connector-producer-c-0",
            )
            .unwrap();
        let b = shared
            .get(
                config(&[("client.id", "quota-a")]),
                "connector-producer-c-1",
            )
            .unwrap();
        let c = shared
            .get(
                config(&[("client.id", "quota-b")]),
                "connector-producer-d-0",
            )
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
    }

    #[test]
    fn tasks_with_other_secrets_do_not_share() {
        let shared = SharedProducers::default();
        let a = shared
            .get(
                config(&[("sasl.password", "one")]),
                "connector-producer-c-0",
            )
            .unwrap();
        let b = shared
            .get(
                config(&[("sasl.password", "two")]),
                "connector-producer-c-1",
            )
            .unwrap();
        assert!(!Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn a_producer_nobody_holds_is_not_kept() {
        let shared = SharedProducers::default();
        let a = shared
            .get(
                config(&[("client.id", "connector-producer-c-0")]),
                "connector-producer-c-0",
            )
            .unwrap();
        drop(a);
        assert_eq!(shared.live(), 0);
        let _b = shared
            .get(
                config(&[("client.id", "connector-producer-c-0")]),
                "connector-producer-c-0",
            )
            .unwrap();
        assert_eq!(shared.live(), 1);
    }
}
