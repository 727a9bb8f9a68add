//! Stuck transactions (README, "Self-healing"), and the open transactions the admin listener
//! lists (`GET /admin/transactions`).
//!
//! The config writer: the leader writes the config topic in transactions of
//! `connect-cluster-<group.id>`. A leader killed in the middle of one leaves it open, and every
//! `read_committed` reader of the config topic (each worker's config store, a restarting
//! worker's start-up) waits until the broker aborts it: the writer's transaction timeout plus up
//! to the broker's abort check interval (10 s each here; 60 s + 10 s for Apache's writer). From
//! start-up on, every worker asks the transaction coordinator about that id
//! (DescribeTransactions) every [`CHECK_INTERVAL`]; a transaction open longer than
//! `stuck.transaction.timeout.ms` is reported and aborted at once by fencing the id
//! (`InitProducerId` through a producer with it). A live leader whose write was that slow finds
//! its writer fenced and claims it again.
//!
//! A task killed in the middle of a transaction leaves it open on the offsets topic too, and a
//! worker starting reads that topic `read_committed` before it joins the group: until it has,
//! nobody leads, and the leader's scan below cannot run. So while its internal topics are not
//! read yet, a starting worker lists the open transactions every [`SCAN_INTERVAL`] itself: one
//! of this group's task ids, open longer than the threshold, that has written the offsets topic
//! and is still open at the next look, is aborted by fencing the id. (A live task writes its
//! offsets records last, right before it commits: its transaction is on the offsets topic for
//! milliseconds, never across two looks.)
//!
//! The tasks: every [`SCAN_INTERVAL`] the leader lists the cluster's open transactions
//! (ListTransactions on every broker, then DescribeTransactions) older than the threshold. One
//! of a task id of this group (`<group.id>-<connector>-<task>`) whose task the group does not
//! run (its connector was deleted or shrank, or its worker died and the task waits for the
//! scheduled rebalance delay) is reported and aborted by fencing the id; one whose task runs is
//! reported and left to it. A transaction of any other id that writes a topic this cluster uses
//! (its internal topics, or a topic one of its own transactions writes) is reported, never
//! touched.

use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::ClientConfig;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::cluster::LiveWork;
use crate::cluster::client::ClientError;
use crate::cluster::transactions::{TransactionDescription, TransactionsClient, now_ms};
use crate::config::{ClientScope, ExactlyOnceSourceSupport, WorkerConfig};
use crate::runtime::ConnectorTaskId;
use crate::runtime::exactly_once::task_of_transactional_id;
use crate::runtime::txn_producer;
use crate::storage::config::{LEADER_TRANSACTIONAL_ID_PREFIX, leader_writer_config};

/// How often the config writer's transaction is looked at.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(2);
/// How often the leader lists the cluster's open transactions.
pub const SCAN_INTERVAL: Duration = Duration::from_secs(4);
/// How long fencing one id may block.
const FENCE_TIMEOUT: Duration = Duration::from_secs(30);

/// Who an open transaction belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Owner {
    /// The leader's config-topic writer (`connect-cluster-<group.id>`).
    ConfigWriter,
    /// An exactly-once source task of this group. `running`: whether the group runs it, as
    /// the leader last assigned (`null` when asked of a worker that does not lead).
    Task {
        connector: String,
        task: i32,
        running: Option<bool>,
    },
    /// Any other transactional id.
    Foreign,
}

/// One open transaction, as `GET /admin/transactions` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct OpenTransaction {
    pub transactional_id: String,
    pub state: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// When it started (ms since the epoch) and how long it has been open.
    pub start_ms: i64,
    pub open_ms: i64,
    /// `topic-partition` of every partition it wrote.
    pub partitions: Vec<String>,
    pub owner: Owner,
}

/// The open transactions of this cluster, for the watchdog and the admin listener.
pub struct TransactionWatch {
    client: TransactionsClient,
    group_id: String,
    config_writer_id: String,
    internal_topics: [String; 3],
    live_work: LiveWork,
    /// The worker's internal client settings (fencing a task id uses them with that id).
    internal_client: ClientConfig,
    /// The config writer's producer settings (fencing its id).
    writer_client: ClientConfig,
    /// What the internal client settings resolve to (the fencing producer's security).
    security: crate::security::KafkaSecurity,
    /// `stuck.transaction.timeout.ms`; `None` (-1) turns the watchdog off.
    threshold: Option<Duration>,
    exactly_once: bool,
    /// (id, start) of the transactions already reported, so each is logged once.
    reported: Mutex<HashSet<(String, i64)>>,
}

impl TransactionWatch {
    /// `None` (logged) when the clients cannot be built.
    pub fn new(config: &WorkerConfig) -> Option<Arc<Self>> {
        let built = (|| {
            let client = TransactionsClient::new(
                &config.bootstrap_servers,
                &format!("connect-{}-transactions", config.group_id),
                config.request_timeout,
                &config.kafka_security,
            )
            .map_err(|e| e.to_string())?;
            let internal = config
                .kafka_client(ClientScope::Internal)
                .map_err(|e| e.to_string())?;
            Ok::<_, String>((client, internal))
        })();
        let (client, internal_client) = match built {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch the cluster's transactions");
                return None;
            }
        };
        Some(Arc::new(Self {
            client,
            group_id: config.group_id.clone(),
            config_writer_id: format!("{LEADER_TRANSACTIONAL_ID_PREFIX}{}", config.group_id),
            internal_topics: [
                config.config_storage_topic.clone(),
                config.offset_storage_topic.clone(),
                config.status_storage_topic.clone(),
            ],
            live_work: LiveWork::default(),
            writer_client: leader_writer_config(&internal_client, &config.group_id),
            internal_client,
            security: config.kafka_security.clone(),
            threshold: config.stuck_transaction_timeout,
            exactly_once: config.exactly_once_source_support != ExactlyOnceSourceSupport::Disabled,
            reported: Mutex::new(HashSet::new()),
        }))
    }

    /// Where the group member publishes the tasks the group runs (while it leads).
    pub fn live_work(&self) -> LiveWork {
        self.live_work.clone()
    }

    fn owner(&self, transactional_id: &str, live: Option<&BTreeSet<ConnectorTaskId>>) -> Owner {
        if transactional_id == self.config_writer_id {
            return Owner::ConfigWriter;
        }
        match task_of_transactional_id(&self.group_id, transactional_id) {
            Some(id) => Owner::Task {
                running: live.map(|l| l.contains(&id)),
                connector: id.connector,
                task: id.task,
            },
            None => Owner::Foreign,
        }
    }

    /// The transactions open for at least `min_age` that are this cluster's, or that write a
    /// topic it uses (its internal topics, or one its own open transactions write).
    pub async fn open(&self, min_age: Duration) -> Result<Vec<OpenTransaction>, ClientError> {
        let all = self.client.list_open(min_age).await?;
        let live = self.live_work.tasks();
        let now = now_ms();
        let owned: Vec<(TransactionDescription, Owner)> = all
            .into_iter()
            .map(|d| {
                let owner = self.owner(&d.transactional_id, live.as_ref());
                (d, owner)
            })
            .collect();
        let mut topics: HashSet<&str> = self.internal_topics.iter().map(String::as_str).collect();
        for (d, owner) in &owned {
            if *owner != Owner::Foreign {
                topics.extend(d.topics.iter().map(|(t, _)| t.as_str()));
            }
        }
        let mut open: Vec<OpenTransaction> = owned
            .iter()
            .filter(|(d, owner)| {
                *owner != Owner::Foreign
                    || d.topics.iter().any(|(t, _)| topics.contains(t.as_str()))
            })
            .map(|(d, owner)| {
                let start_ms = d.started_ms.unwrap_or(now);
                OpenTransaction {
                    transactional_id: d.transactional_id.clone(),
                    state: d.state.clone(),
                    producer_id: d.producer_id,
                    producer_epoch: d.producer_epoch,
                    start_ms,
                    open_ms: (now - start_ms).max(0),
                    partitions: partitions(d),
                    owner: owner.clone(),
                }
            })
            .collect();
        open.sort_by_key(|t| std::cmp::Reverse(t.open_ms));
        Ok(open)
    }

    /// Starts the watchdog when the leader writes transactionally (`exactly.once.source.support`
    /// preparing or enabled) and `stuck.transaction.timeout.ms` is not -1; runs until
    /// `shutdown`.
    /// `stores_read` is cancelled once the worker has read its internal topics: until then it
    /// looks for dead tasks' transactions holding that read (see the module doc).
    pub fn spawn(self: &Arc<Self>, shutdown: CancellationToken, stores_read: CancellationToken) {
        let Some(threshold) = self.threshold else {
            return;
        };
        if !self.exactly_once {
            return;
        }
        let watch = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(CHECK_INTERVAL);
            let mut last_scan = tokio::time::Instant::now();
            let mut describes = true;
            let mut suspects = HashSet::new();
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tick.tick() => {}
                }
                if describes {
                    describes = watch.check_config_writer(threshold).await;
                }
                if last_scan.elapsed() < SCAN_INTERVAL {
                    continue;
                }
                if watch.live_work.tasks().is_some() {
                    last_scan = tokio::time::Instant::now();
                    watch.scan(threshold).await;
                } else if describes && !stores_read.is_cancelled() {
                    last_scan = tokio::time::Instant::now();
                    suspects = watch.startup_scan(threshold, &suspects).await;
                }
            }
        });
    }

    /// The config writer's transaction; false when the brokers cannot describe transactions.
    async fn check_config_writer(&self, threshold: Duration) -> bool {
        match self.client.describe(&self.config_writer_id).await {
            Ok(Some(d)) => {
                if let Some(age) = stuck_for(&d, threshold, now_ms()) {
                    tracing::warn!(
                        transactional_id = %d.transactional_id,
                        producer_id = d.producer_id,
                        producer_epoch = d.producer_epoch,
                        open_ms = age.as_millis() as u64,
                        partitions = %partitions(&d).join(","),
                        "the config writer's transaction has been open for {} s; aborting it by fencing {} (stuck.transaction.timeout.ms)",
                        age.as_secs(),
                        d.transactional_id
                    );
                    self.fence(&self.writer_client, &d.transactional_id).await;
                }
                true
            }
            Ok(None) => {
                tracing::info!(
                    "the brokers do not describe transactions (DescribeTransactions); stuck transactions are left to the transaction timeout"
                );
                false
            }
            Err(e) => {
                tracing::debug!(error = %e, transactional_id = %self.config_writer_id, "could not describe the config writer's transaction");
                true
            }
        }
    }

    /// A starting worker's look for dead tasks' transactions on the offsets topic it must read
    /// (module doc): fences those in `suspects` (seen at the last look) and returns the ones to
    /// look at again.
    async fn startup_scan(
        &self,
        threshold: Duration,
        suspects: &HashSet<(String, i64)>,
    ) -> HashSet<(String, i64)> {
        let open = match self.open(threshold).await {
            Ok(o) => o,
            Err(e) => {
                tracing::debug!(error = %e, "could not list the cluster's open transactions");
                return suspects.clone();
            }
        };
        let (fence, next) = holding_start_up(&open, &self.internal_topics[1], suspects);
        for t in fence {
            tracing::warn!(
                transactional_id = %t.transactional_id,
                open_ms = t.open_ms,
                partitions = %t.partitions.join(","),
                "a task's transaction has been open for {} s on the offsets topic this worker reads before it joins the group; aborting it by fencing {} (stuck.transaction.timeout.ms)",
                t.open_ms / 1000,
                t.transactional_id
            );
            self.fence(&self.internal_client, &t.transactional_id).await;
        }
        next
    }

    /// The leader's look at every open transaction older than `threshold`.
    async fn scan(&self, threshold: Duration) {
        let open = match self.open(threshold).await {
            Ok(o) => o,
            Err(e) => {
                tracing::debug!(error = %e, "could not list the cluster's open transactions");
                return;
            }
        };
        let mut seen = HashSet::new();
        for t in open {
            let key = (t.transactional_id.clone(), t.start_ms);
            seen.insert(key.clone());
            let first = self
                .reported
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key);
            let parts = t.partitions.join(",");
            let secs = t.open_ms / 1000;
            match &t.owner {
                // The describe loop handles it every CHECK_INTERVAL.
                Owner::ConfigWriter => {}
                Owner::Task {
                    connector,
                    task,
                    running: Some(false),
                } => {
                    tracing::warn!(
                        transactional_id = %t.transactional_id, connector = %connector, task,
                        open_ms = t.open_ms, partitions = %parts,
                        "the transaction of task {connector}-{task} has been open for {secs} s and the group does not run that task; aborting it by fencing {} (stuck.transaction.timeout.ms)",
                        t.transactional_id
                    );
                    self.fence(&self.internal_client, &t.transactional_id).await;
                }
                Owner::Task {
                    connector, task, ..
                } if first => {
                    // A task with long transactions (interval boundaries) passes the threshold
                    // every time: not worth more than a debug line; GET /admin/transactions
                    // lists it.
                    tracing::debug!(
                        transactional_id = %t.transactional_id, connector = %connector, task,
                        open_ms = t.open_ms, partitions = %parts,
                        "the transaction of task {connector}-{task} has been open for {secs} s; the task runs, so it is left to the task"
                    );
                }
                Owner::Foreign if first => {
                    tracing::warn!(
                        transactional_id = %t.transactional_id, producer_id = t.producer_id,
                        open_ms = t.open_ms, partitions = %parts,
                        "a transaction of {}, which is not this cluster's, has been open for {secs} s on topics this cluster uses; it is not touched (kafka-transactions.sh abort can end it)",
                        t.transactional_id
                    );
                    crate::metrics::global().stuck_transaction_reported();
                }
                _ => {}
            }
        }
        // Forget what is no longer open.
        self.reported
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k| seen.contains(k));
    }

    /// Aborts the open transaction of `transactional_id` by fencing it.
    async fn fence(&self, client: &ClientConfig, transactional_id: &str) {
        let ids = [transactional_id.to_owned()];
        let fenced = txn_producer::fence(client, &self.security, &ids, FENCE_TIMEOUT).await;
        match fenced {
            Ok(()) => {
                crate::metrics::global().stuck_transaction_aborted();
                tracing::info!(transactional_id, "aborted the stuck transaction");
            }
            Err(e) => {
                tracing::warn!(transactional_id, error = %e, "could not fence the stuck transaction's id; will retry")
            }
        }
    }
}

/// Of `open`, this group's task transactions that wrote `offsets_topic`: those already in
/// `suspects` (the last look) to fence, and all of them, the suspects of the next look.
fn holding_start_up<'a>(
    open: &'a [OpenTransaction],
    offsets_topic: &str,
    suspects: &HashSet<(String, i64)>,
) -> (Vec<&'a OpenTransaction>, HashSet<(String, i64)>) {
    let on_offsets = |t: &OpenTransaction| {
        t.partitions.iter().any(|p| {
            p.rsplit_once('-')
                .is_some_and(|(topic, n)| topic == offsets_topic && n.parse::<i32>().is_ok())
        })
    };
    let mut fence = Vec::new();
    let mut next = HashSet::new();
    for t in open {
        if !matches!(t.owner, Owner::Task { .. }) || !on_offsets(t) {
            continue;
        }
        let key = (t.transactional_id.clone(), t.start_ms);
        if suspects.contains(&key) {
            fence.push(t);
        } else {
            next.insert(key);
        }
    }
    (fence, next)
}

fn partitions(d: &TransactionDescription) -> Vec<String> {
    d.topics
        .iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| format!("{t}-{p}")))
        .collect()
}

/// How long `d`'s transaction has been open, when that is past `threshold`.
pub fn stuck_for(d: &TransactionDescription, threshold: Duration, now_ms: i64) -> Option<Duration> {
    if d.state != "Ongoing" {
        // Prepare* states are being completed by the coordinator already.
        return None;
    }
    let age = Duration::from_millis(u64::try_from(now_ms - d.started_ms?).unwrap_or(0));
    (age > threshold).then_some(age)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(state: &str, started_ms: Option<i64>) -> TransactionDescription {
        TransactionDescription {
            transactional_id: "connect-cluster-g".into(),
            state: state.into(),
            started_ms,
            producer_id: 7,
            producer_epoch: 1,
            topics: vec![("g-configs".into(), vec![0])],
        }
    }

    #[test]
    fn task_transactional_ids_parse_back_to_their_task() {
        use crate::runtime::exactly_once::task_transactional_id;
        let id = ConnectorTaskId::new("my-conn-2", 11);
        let txn = task_transactional_id("connect-cluster", &id);
        assert_eq!(task_of_transactional_id("connect-cluster", &txn), Some(id));
        assert_eq!(
            task_of_transactional_id("connect-cluster", "connect-cluster-x"),
            None
        );
        assert_eq!(
            task_of_transactional_id("connect-cluster", "other-c-0"),
            None
        );
        assert_eq!(
            task_of_transactional_id("connect-cluster", "connect-cluster--0"),
            None
        );
        assert_eq!(
            task_of_transactional_id("connect", "connect-cluster-g"),
            None
        );
    }

    #[test]
    fn a_starting_worker_fences_a_task_transaction_seen_twice_on_its_offsets_topic() {
        let txn = |id: &str, owner: Owner, partitions: &[&str]| OpenTransaction {
            transactional_id: id.into(),
            state: "Ongoing".into(),
            producer_id: 1,
            producer_epoch: 0,
            start_ms: 100,
            open_ms: 6000,
            partitions: partitions.iter().map(|p| p.to_string()).collect(),
            owner,
        };
        let task = || Owner::Task {
            connector: "vs".into(),
            task: 0,
            running: None,
        };
        let open = [
            txn("g-vs-0", task(), &["data-0", "g-offsets-3"]),
            // Not (yet) on the offsets topic: a live task between polls, or one that died early.
            txn("g-vs-1", task(), &["data-1"]),
            // Another topic whose name starts like the offsets topic's.
            txn("g-vs-2", task(), &["g-offsets-x-1"]),
            txn("g-cluster", Owner::ConfigWriter, &["g-offsets-1"]),
            txn("other", Owner::Foreign, &["g-offsets-2"]),
        ];
        let (fence, next) = holding_start_up(&open, "g-offsets", &HashSet::new());
        assert!(fence.is_empty(), "nothing fenced at the first look");
        assert_eq!(next, HashSet::from([("g-vs-0".to_owned(), 100)]));
        let (fence, next) = holding_start_up(&open, "g-offsets", &next);
        assert_eq!(
            fence
                .iter()
                .map(|t| t.transactional_id.as_str())
                .collect::<Vec<_>>(),
            ["g-vs-0"]
        );
        assert!(next.is_empty());
        // A new transaction of the same id (another start) is a new suspect, not fenced.
        let mut later = open[0].clone();
        later.start_ms = 200;
        let (fence, _) = holding_start_up(
            std::slice::from_ref(&later),
            "g-offsets",
            &HashSet::from([("g-vs-0".to_owned(), 100)]),
        );
        assert!(fence.is_empty());
    }

    #[test]
    fn only_ongoing_transactions_past_the_threshold_are_stuck() {
        let t = Duration::from_secs(10);
        assert_eq!(
            stuck_for(&open("Ongoing", Some(1_000)), t, 12_000),
            Some(Duration::from_secs(11))
        );
        assert_eq!(stuck_for(&open("Ongoing", Some(1_000)), t, 5_000), None);
        assert_eq!(stuck_for(&open("PrepareCommit", Some(0)), t, 60_000), None);
        assert_eq!(stuck_for(&open("Empty", None), t, 60_000), None);
    }
}
