//! The plugin host process and the framed protocol to it.
//!
//! ```text
//!  worker                                   JVM (java/plugin-host)
//!  ──────                                   ──────────────────────
//!  Connection::call ──stdin: [len][json]──> reader thread -> per-instance thread -> plugin
//!  reader thread  <─stdout: [len][json]──── replies; requests: "offsets", "raiseError", ...
//!  stderr thread  <─stderr: log lines────── log4j2, and whatever plugins print
//! ```
//!
//! A frame is a 4-byte big-endian length and a UTF-8 JSON object. Requests carry `id` and `op`
//! (`id` 0: no reply wanted); replies carry `re` and `ok` or `error` (`class`, `message`,
//! `trace`: the Java exception).
//!
//! # Guarantees
//!
//! - The JVM never outlives the worker: it exits when its stdin closes (the worker's end closes
//!   when the worker exits, SIGKILL included) and checks every 500 ms that the worker
//!   (`CONNECT_WORKER_PID`) is still its parent; dropping the [`Connection`] kills it.
//!
//! # Errors
//!
//! - When the JVM dies, every pending and later call on its [`Connection`] fails with
//!   [`HostError::Died`]: the tasks it hosted become FAILED with that message, the worker
//!   keeps running, and the next instance started (a restart) gets a fresh JVM.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use connect_api::record::{SinkRecord, TopicPartition};
use connect_api::{ConnectError, ConnectorContext, SinkTaskContext, SourceTaskContext};
use serde_json::{Value, json};
use tokio::sync::oneshot;

static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

/// A host-side instance name (connector or task), unique in this worker.
pub(super) fn instance_id(kind: &str) -> String {
    format!("{kind}-{}", NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed))
}

/// How to start the host.
#[derive(Debug, Clone)]
pub struct HostSettings {
    /// The `java` executable.
    pub java: PathBuf,
    /// The host's class path (its jar and the Kafka API jars plugins share).
    pub class_path: String,
    /// JVM options (heap first).
    pub jvm_options: Vec<String>,
    /// How long the host may leave a liveness ping unanswered before it is killed.
    pub ping_timeout: std::time::Duration,
}

/// Why a call into the host failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HostError {
    /// The plugin code threw.
    #[error("{class}: {message}")]
    Java {
        class: String,
        message: String,
        trace: String,
    },
    #[error("the Java plugin host exited: {0}")]
    Died(String),
    #[error("failed to start the Java plugin host ({java}): {reason}")]
    Spawn { java: String, reason: String },
}

/// The Java stack trace, kept as the cause of a [`ConnectError`] so it shows in `trace`.
#[derive(Debug)]
struct JavaTrace(String);

impl std::fmt::Display for JavaTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.trim_end())
    }
}

impl std::error::Error for JavaTrace {}

impl HostError {
    /// As a task or connector failure, naming what was called.
    pub fn into_connect(self, what: &str) -> ConnectError {
        match self {
            Self::Java {
                class,
                message,
                trace,
            } => ConnectError::fatal(format!("{what} failed: {class}: {message}"))
                .with_source(JavaTrace(trace)),
            other => ConnectError::fatal(format!("{what} failed: {other}")),
        }
    }

    /// As a failure of one record (a converter, transformation or predicate threw): a data
    /// error, which `errors.tolerance=all` tolerates; a host that is gone stays fatal.
    pub fn into_record_error(self, what: &str) -> ConnectError {
        match self {
            Self::Java {
                class,
                message,
                trace,
            } => ConnectError::data(format!("{what} failed: {class}: {message}"))
                .with_source(JavaTrace(trace)),
            other => ConnectError::fatal(format!("{what} failed: {other}")),
        }
    }
}

/// What the host may ask about an instance it runs.
#[derive(Clone)]
pub(crate) enum Hooks {
    Connector(ConnectorContext),
    Task(SourceTaskContext),
    /// A sink task: its context, and the batch its `put` in flight holds (errant records
    /// are reported by their place in it).
    Sink {
        ctx: SinkTaskContext,
        batch: Arc<Mutex<Vec<SinkRecord>>>,
    },
}

type Reply = Result<Value, HostError>;

/// A reply and the binary attachment its frame carried (empty when none).
pub(crate) struct Answer {
    pub json: Value,
    pub attachment: Vec<u8>,
}

type AnswerReply = Result<Answer, HostError>;

/// One running JVM.
pub struct Connection {
    stdin: Mutex<Option<ChildStdin>>,
    pending: Mutex<HashMap<u64, oneshot::Sender<AnswerReply>>>,
    next_id: AtomicU64,
    dead: Mutex<Option<String>>,
    hooks: Mutex<HashMap<String, Hooks>>,
    child: Mutex<Child>,
    runtime: tokio::runtime::Handle,
}

impl Drop for Connection {
    fn drop(&mut self) {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Connection {
    /// Starts the JVM and its reader threads. Needs a tokio runtime (offset reads run on it).
    pub fn spawn(settings: &HostSettings) -> Result<Arc<Self>, HostError> {
        let spawn_error = |reason: String| HostError::Spawn {
            java: settings.java.display().to_string(),
            reason,
        };
        let mut child = Command::new(&settings.java)
            .args(&settings.jvm_options)
            .arg("-cp")
            .arg(&settings.class_path)
            .arg("io.connectrs.pluginhost.PluginHost")
            .env("CONNECT_WORKER_PID", std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| spawn_error(e.to_string()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let stdin = child.stdin.take();
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| spawn_error("no async runtime to serve the host's requests".into()))?;
        let pid = child.id();
        let conn = Arc::new(Self {
            stdin: Mutex::new(stdin),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            dead: Mutex::new(None),
            hooks: Mutex::new(HashMap::new()),
            child: Mutex::new(child),
            runtime,
        });
        tracing::info!(pid, java = %settings.java.display(), "started the Java plugin host");
        std::thread::Builder::new()
            .name("java-host-log".into())
            .spawn(move || forward_log(stderr))
            .map_err(|e| spawn_error(e.to_string()))?;
        let weak = Arc::downgrade(&conn);
        std::thread::Builder::new()
            .name("java-host-read".into())
            .spawn(move || read_loop(weak, stdout))
            .map_err(|e| spawn_error(e.to_string()))?;
        conn.runtime
            .spawn(watch_liveness(Arc::downgrade(&conn), settings.ping_timeout));
        Ok(conn)
    }

    /// `Some(reason)` once the JVM is gone.
    pub fn dead(&self) -> Option<String> {
        self.dead.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn write(&self, frame: &Value) -> Result<(), HostError> {
        self.write_with(frame, None)
    }

    /// Writes `frame`, and `attachment` after it (the length's top bit says one follows).
    fn write_with(&self, frame: &Value, attachment: Option<&[u8]>) -> Result<(), HostError> {
        let bytes = serde_json::to_vec(frame).expect("JSON frames serialise");
        let mut guard = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        let Some(stdin) = guard.as_mut() else {
            return Err(HostError::Died(
                self.dead().unwrap_or_else(|| "closed".into()),
            ));
        };
        let too_big =
            |n: usize| HostError::Died(format!("a frame of {n} bytes is too big to send"));
        let len = u32::try_from(bytes.len())
            .ok()
            .filter(|n| n & ATTACHMENT == 0)
            .ok_or_else(|| too_big(bytes.len()))?;
        let attached = match attachment {
            None => None,
            Some(a) => Some((u32::try_from(a.len()).map_err(|_| too_big(a.len()))?, a)),
        };
        let flagged = if attached.is_some() {
            len | ATTACHMENT
        } else {
            len
        };
        let written = stdin
            .write_all(&flagged.to_be_bytes())
            .and_then(|()| stdin.write_all(&bytes))
            .and_then(|()| match attached {
                Some((n, a)) => stdin
                    .write_all(&n.to_be_bytes())
                    .and_then(|()| stdin.write_all(a)),
                None => Ok(()),
            })
            .and_then(|()| stdin.flush());
        drop(guard);
        written.map_err(|e| {
            // Its input is closed: the JVM is gone, whether or not the reader saw its output
            // end yet. Marked dead now, so the next call starts a new one rather than writing
            // to this one again.
            self.mark_dead(format!("writing to it failed: {e}"));
            HostError::Died(self.dead().unwrap_or_else(|| e.to_string()))
        })
    }

    fn request(&self, op: &str, body: Value) -> Result<oneshot::Receiver<AnswerReply>, HostError> {
        self.request_with(op, body, None)
    }

    fn request_with(
        &self,
        op: &str,
        mut body: Value,
        attachment: Option<&[u8]>,
    ) -> Result<oneshot::Receiver<AnswerReply>, HostError> {
        if let Some(reason) = self.dead() {
            return Err(HostError::Died(reason));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        body["op"] = json!(op);
        body["id"] = json!(id);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, tx);
        if let Err(e) = self.write_with(&body, attachment) {
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
            return Err(e);
        }
        Ok(rx)
    }

    fn died_error(&self) -> HostError {
        HostError::Died(self.dead().unwrap_or_else(|| "no reply".into()))
    }

    /// Calls `op` and waits for the reply without blocking the executor.
    pub async fn call(&self, op: &str, body: Value) -> Reply {
        self.call_for_answer(op, body).await.map(|a| a.json)
    }

    /// [`Self::call`] for a reply that carries a binary attachment (a poll's records).
    pub(crate) async fn call_for_answer(&self, op: &str, body: Value) -> AnswerReply {
        let rx = self.request(op, body)?;
        rx.await.unwrap_or_else(|_| Err(self.died_error()))
    }

    /// [`Self::call`] with a binary attachment after the request (a `put` batch's records).
    pub(crate) async fn call_with_attachment(
        &self,
        op: &str,
        body: Value,
        attachment: Vec<u8>,
    ) -> Reply {
        let rx = self.request_with(op, body, Some(&attachment))?;
        drop(attachment);
        rx.await
            .unwrap_or_else(|_| Err(self.died_error()))
            .map(|a| a.json)
    }

    /// [`Self::call_blocking`] with a binary attachment after the request, answered with the
    /// reply's own attachment (a batch of records each way).
    pub(crate) fn call_blocking_with(
        &self,
        op: &str,
        body: Value,
        attachment: &[u8],
    ) -> AnswerReply {
        let rx = self.request_with(op, body, Some(attachment))?;
        wait_blocking(rx).unwrap_or_else(|| Err(self.died_error()))
    }

    /// Calls `op` from synchronous code (the connector API's sync methods).
    pub fn call_blocking(&self, op: &str, body: Value) -> Reply {
        let rx = self.request(op, body)?;
        wait_blocking(rx)
            .unwrap_or_else(|| Err(self.died_error()))
            .map(|a| a.json)
    }

    /// Sends `op` without waiting for (or wanting) a reply.
    pub fn notify(&self, op: &str, mut body: Value) -> Result<(), HostError> {
        if let Some(reason) = self.dead() {
            return Err(HostError::Died(reason));
        }
        body["op"] = json!(op);
        body["id"] = json!(0);
        self.write(&body)
    }

    pub(crate) fn set_hooks(&self, instance: &str, hooks: Hooks) {
        self.hooks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(instance.to_owned(), hooks);
    }

    pub(crate) fn remove_hooks(&self, instance: &str) {
        self.hooks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(instance);
    }

    fn hooks(&self, instance: &str) -> Option<Hooks> {
        self.hooks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(instance)
            .cloned()
    }

    fn reply(&self, id: u64, result: Result<Value, String>) {
        let frame = match result {
            Ok(v) => json!({"re": id, "ok": v}),
            Err(message) => json!({"re": id, "error": {"message": message}}),
        };
        let _ = self.write(&frame);
    }

    /// A request from the host: what a plugin asks of the worker.
    fn serve(self: &Arc<Self>, frame: Value) {
        let id = frame["id"].as_u64().unwrap_or(0);
        let instance = frame["instance"].as_str().unwrap_or_default().to_owned();
        let hooks = self.hooks(&instance);
        match (frame["op"].as_str().unwrap_or_default(), hooks) {
            ("offsets", Some(Hooks::Task(ctx))) => {
                let conn = Arc::clone(self);
                self.runtime.spawn(async move {
                    let partitions: Vec<connect_api::SourcePartition> = frame["partitions"]
                        .as_array()
                        .map(|ps| {
                            ps.iter()
                                .map(|p| p.as_object().cloned().unwrap_or_default())
                                .collect()
                        })
                        .unwrap_or_default();
                    let answer = ctx
                        .offset_storage_reader()
                        .offsets(&partitions)
                        .await
                        .map(|found| {
                            Value::Array(
                                found
                                    .into_iter()
                                    .map(|(_, o)| o.map_or(Value::Null, Value::Object))
                                    .collect(),
                            )
                        })
                        .map_err(|e| e.to_string());
                    conn.reply(id, answer);
                });
            }
            ("requestTaskReconfiguration", Some(Hooks::Connector(ctx))) => {
                ctx.request_task_reconfiguration();
            }
            ("raiseError", Some(Hooks::Connector(ctx))) => {
                let e = &frame["error"];
                let err = HostError::Java {
                    class: e["class"].as_str().unwrap_or_default().to_owned(),
                    message: e["message"].as_str().unwrap_or_default().to_owned(),
                    trace: e["trace"].as_str().unwrap_or_default().to_owned(),
                };
                ctx.raise_error(err.into_connect("the connector"));
            }
            ("sinkContext", Some(Hooks::Sink { ctx, .. })) => {
                let partitions = |list: &Value| -> Vec<TopicPartition> {
                    list.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|p| {
                            let partition = i32::try_from(p["partition"].as_i64()?).ok()?;
                            Some(TopicPartition::new(p["topic"].as_str()?, partition))
                        })
                        .collect()
                };
                match frame["action"].as_str().unwrap_or_default() {
                    "offset" => {
                        let offsets: Vec<(TopicPartition, i64)> = frame["offsets"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|o| {
                                let partition = i32::try_from(o["partition"].as_i64()?).ok()?;
                                Some((
                                    TopicPartition::new(o["topic"].as_str()?, partition),
                                    o["offset"].as_i64()?,
                                ))
                            })
                            .collect();
                        ctx.reset_offsets(&offsets);
                    }
                    "timeout" => ctx.set_timeout(std::time::Duration::from_millis(
                        frame["ms"].as_u64().unwrap_or(0),
                    )),
                    "pause" => ctx.pause(&partitions(&frame["partitions"])),
                    "resume" => ctx.resume(&partitions(&frame["partitions"])),
                    "requestCommit" => ctx.request_commit(),
                    other => tracing::warn!(action = other, "unknown sink task context request"),
                }
            }
            ("errantRecord", Some(Hooks::Sink { ctx, batch })) => {
                let record = frame["index"]
                    .as_u64()
                    .and_then(|i| usize::try_from(i).ok())
                    .and_then(|i| {
                        batch
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .get(i)
                            .cloned()
                    });
                let e = &frame["error"];
                let error = ConnectError::data(format!(
                    "{}: {}",
                    e["class"].as_str().unwrap_or_default(),
                    e["message"].as_str().unwrap_or_default()
                ))
                .with_source(JavaTrace(
                    e["trace"].as_str().unwrap_or_default().to_owned(),
                ));
                let conn = Arc::clone(self);
                self.runtime.spawn(async move {
                    let outcome = match (record, ctx.errant_record_reporter()) {
                        (Some(record), Some(reporter)) => reporter
                            .report(&record, &error)
                            .await
                            .map(|()| Value::Null)
                            .map_err(|e| e.to_string()),
                        (None, _) => Err("the reported record is not one of the batch".into()),
                        (_, None) => Err("no errant record reporter: errors.tolerance and the dead letter queue are off".into()),
                    };
                    conn.reply(id, outcome);
                });
            }
            (op, _) => {
                tracing::warn!(
                    op,
                    instance,
                    "the Java plugin host asked for what this worker does not serve"
                );
                if id != 0 {
                    self.reply(id, Err(format!("unknown request {op} for {instance}")));
                }
            }
        }
    }

    fn complete(&self, mut frame: Value, attachment: Vec<u8>) {
        let id = frame["re"].as_u64().unwrap_or(0);
        let Some(tx) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
        else {
            return;
        };
        let reply = match frame.get("error") {
            Some(e) => Err(HostError::Java {
                class: e["class"].as_str().unwrap_or_default().to_owned(),
                message: e["message"].as_str().unwrap_or_default().to_owned(),
                trace: e["trace"].as_str().unwrap_or_default().to_owned(),
            }),
            None => Ok(Answer {
                json: frame
                    .as_object_mut()
                    .and_then(|f| f.remove("ok"))
                    .unwrap_or(Value::Null),
                attachment,
            }),
        };
        let _ = tx.send(reply);
    }

    fn mark_dead(&self, why: String) {
        // The first reason wins: the liveness watchdog's kill ends the JVM's output, and the
        // reader's "output ended" must not replace "did not answer" (claimed before the kill).
        {
            let mut dead = self.dead.lock().unwrap_or_else(|e| e.into_inner());
            if dead.is_some() {
                return;
            }
            *dead = Some(why.clone());
        }
        let status = {
            let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
            let _ = child.kill();
            child.wait().ok()
        };
        let reason = match status {
            Some(s) => format!("{why} ({s})"),
            None => why,
        };
        tracing::error!(reason = %reason, "the Java plugin host is gone; the tasks it ran fail");
        *self.dead.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason.clone());
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
        let pending: Vec<_> = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .collect();
        for (_, tx) in pending {
            let _ = tx.send(Err(HostError::Died(reason.clone())));
        }
        // Connectors are called rarely: fail them now (self-healing restarts them in a new
        // JVM). Tasks fail at their next call (a source task's next poll).
        let hooks: Vec<Hooks> = self
            .hooks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, h)| h)
            .collect();
        for h in hooks {
            if let Hooks::Connector(ctx) = h {
                ctx.raise_error(
                    HostError::Died(reason.clone()).into_connect("the Java connector's host"),
                );
            }
        }
    }
}

/// Pings the host (answered by its reader thread, whatever the plugins do) every
/// `timeout / 4`; a host that does not answer within `timeout` (frozen, or its reader blocked)
/// is killed, so the tasks it ran fail and restart in a new JVM instead of waiting forever.
async fn watch_liveness(conn: std::sync::Weak<Connection>, timeout: std::time::Duration) {
    loop {
        tokio::time::sleep(timeout / 4).await;
        let Some(c) = conn.upgrade() else { return };
        if c.dead().is_some() {
            return;
        }
        let Ok(mut rx) = c.request("ping", json!({})) else {
            return;
        };
        drop(c);
        // A second, short chance: after this worker was itself paused (SIGSTOP), the answer
        // may be waiting in the pipe when the first timeout fires.
        if tokio::time::timeout(timeout, &mut rx).await.is_err()
            && tokio::time::timeout(std::time::Duration::from_secs(2), &mut rx)
                .await
                .is_err()
        {
            if let Some(c) = conn.upgrade() {
                c.mark_dead(format!(
                    "it did not answer for {} s and was killed",
                    timeout.as_secs()
                ));
            }
            return;
        }
    }
}

fn wait_blocking(rx: oneshot::Receiver<AnswerReply>) -> Option<AnswerReply> {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| h.block_on(rx).ok())
        }
        Ok(_) => std::thread::scope(|s| s.spawn(|| rx.blocking_recv().ok()).join().ok().flatten()),
        Err(_) => rx.blocking_recv().ok(),
    }
}

/// A length's top bit: the JSON is followed by a binary attachment (its own length first).
const ATTACHMENT: u32 = 0x8000_0000;

fn read_len(r: &mut impl Read) -> std::io::Result<u32> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    Ok(u32::from_be_bytes(len))
}

fn read_bytes(r: &mut impl Read, len: u32) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len as usize];
    r.read_exact(&mut buf)?;
    Ok(buf)
}

/// The next frame and its attachment (empty when it has none), or `None` at the end.
fn read_frame(r: &mut impl Read) -> std::io::Result<Option<(Value, Vec<u8>)>> {
    let len = match read_len(r) {
        Ok(len) => len,
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    };
    let buf = read_bytes(r, len & !ATTACHMENT)?;
    let frame = serde_json::from_slice(&buf)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let attachment = if len & ATTACHMENT == 0 {
        Vec::new()
    } else {
        let n = read_len(r)?;
        read_bytes(r, n)?
    };
    Ok(Some((frame, attachment)))
}

fn read_loop(conn: std::sync::Weak<Connection>, stdout: std::process::ChildStdout) {
    let mut r = BufReader::with_capacity(1 << 16, stdout);
    let why = loop {
        match read_frame(&mut r) {
            Ok(Some((frame, attachment))) => {
                let Some(conn) = conn.upgrade() else { return };
                if frame.get("re").is_some() {
                    conn.complete(frame, attachment);
                } else {
                    conn.serve(frame);
                }
            }
            Ok(None) => break "its output ended".to_owned(),
            Err(e) => break format!("unreadable output: {e}"),
        }
    };
    if let Some(conn) = conn.upgrade() {
        conn.mark_dead(why);
    }
}

/// The host's log lines (`LEVEL logger - message`) into the worker's log.
fn forward_log(stderr: std::process::ChildStderr) {
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { return };
        let level = line.split(' ').next().unwrap_or_default();
        match level {
            "ERROR" | "FATAL" => tracing::error!(target: "java_plugin_host", "{line}"),
            "WARN" => tracing::warn!(target: "java_plugin_host", "{line}"),
            "DEBUG" | "TRACE" => tracing::debug!(target: "java_plugin_host", "{line}"),
            _ => tracing::info!(target: "java_plugin_host", "{line}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_length_prefixed_json() {
        let mut bytes = Vec::new();
        for v in [json!({"re": 1, "ok": [1, 2]}), json!({"id": 2, "op": "x"})] {
            let body = serde_json::to_vec(&v).unwrap();
            bytes.extend_from_slice(&u32::try_from(body.len()).unwrap().to_be_bytes());
            bytes.extend_from_slice(&body);
        }
        let body = serde_json::to_vec(&json!({"re": 3, "ok": 1})).unwrap();
        bytes.extend_from_slice(&(u32::try_from(body.len()).unwrap() | ATTACHMENT).to_be_bytes());
        bytes.extend_from_slice(&body);
        bytes.extend_from_slice(&3u32.to_be_bytes());
        bytes.extend_from_slice(b"abc");
        let mut r = std::io::Cursor::new(bytes);
        assert_eq!(
            read_frame(&mut r).unwrap(),
            Some((json!({"re": 1, "ok": [1, 2]}), Vec::new()))
        );
        assert_eq!(
            read_frame(&mut r).unwrap(),
            Some((json!({"id": 2, "op": "x"}), Vec::new()))
        );
        assert_eq!(
            read_frame(&mut r).unwrap(),
            Some((json!({"re": 3, "ok": 1}), b"abc".to_vec())),
            "a frame with an attachment"
        );
        assert_eq!(read_frame(&mut r).unwrap(), None, "end of input");
        let mut cut = std::io::Cursor::new(vec![0, 0, 0, 9, b'{']);
        assert!(read_frame(&mut cut).is_err(), "a frame cut short");
    }

    #[test]
    fn a_java_exception_becomes_a_fatal_error_with_its_trace() {
        let e = HostError::Java {
            class: "java.lang.IllegalStateException".into(),
            message: "boom".into(),
            trace: "java.lang.IllegalStateException: boom\n\tat X.poll(X.java:1)\n".into(),
        }
        .into_connect("poll of Java task X");
        assert_eq!(e.kind(), connect_api::ErrorKind::Fatal);
        assert_eq!(
            e.message(),
            "poll of Java task X failed: java.lang.IllegalStateException: boom"
        );
        let source = std::error::Error::source(&e).map(ToString::to_string);
        assert!(
            source.is_some_and(|s| s.contains("at X.poll(X.java:1)")),
            "the stack trace is the cause"
        );
    }
}
