//! A running connector instance (Java's `WorkerConnector`).
//!
//! The instance lives in its own tokio task and is driven by commands, so a slow `start` or
//! `task_configs` never blocks the herder:
//!
//! ```text
//!   spawn ──> start(ctx, config) ──> RUNNING ──┬─ TaskConfigs ─> task_configs(max) ─> reply
//!                  │ error                     ├─ target PAUSED ─> stop(), PAUSED; STARTED ─> start()
//!                  └──> FAILED (trace)         └─ Stop ─> stop() ─> exit
//! ```
//!
//! More task configs than `tasks.max` fail the connector (Apache's `TooManyTasksException`)
//! unless `tasks.max.enforce=false`, which keeps every config and logs a warning (KIP-1004).

use std::sync::Arc;

use connect_api::config::TasksMax;
use connect_api::connector::{ConnectorControl, DynSinkConnector, DynSourceConnector};
use connect_api::{
    CancellationToken, ConfigMap, ConnectError, ConnectorContext, ConnectorInstance,
};
use tokio::sync::{mpsc, oneshot, watch};

use super::panics::{catch, catch_sync};
use crate::storage::{ConnectorState, TargetState};

/// What a connector runner reports (the herder writes it to the status topic).
pub trait ConnectorStatusListener: Send + Sync {
    fn on_connector_state(&self, connector: &str, state: ConnectorState, trace: Option<String>);
    /// The connector failed with `error` (its chain is the status `trace`).
    fn on_connector_failed(&self, connector: &str, error: &ConnectError) {
        self.on_connector_state(
            connector,
            ConnectorState::Failed,
            Some(super::error_trace(error)),
        );
    }
}

/// Requests the connector makes of the herder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectorRequest {
    /// `task_configs` should be called again.
    Reconfigure(String),
}

enum Command {
    TaskConfigs(
        TasksMax,
        oneshot::Sender<Result<Vec<ConfigMap>, ConnectError>>,
    ),
    Stop(oneshot::Sender<()>),
}

/// The herder's handle on a running connector.
pub struct ConnectorHandle {
    commands: mpsc::UnboundedSender<Command>,
    target: watch::Sender<TargetState>,
}

struct Control {
    name: String,
    requests: mpsc::UnboundedSender<ConnectorRequest>,
    status: Arc<dyn ConnectorStatusListener>,
}

impl ConnectorControl for Control {
    fn request_task_reconfiguration(&self) {
        let _ = self
            .requests
            .send(ConnectorRequest::Reconfigure(self.name.clone()));
    }

    fn raise_error(&self, error: ConnectError) {
        tracing::error!(connector = %self.name, error = %error, "connector raised an error");
        report_failed(self.status.as_ref(), &self.name, &error);
    }
}

/// Reports the connector FAILED with `error`'s chain as the trace, and returns that trace.
fn report_failed(status: &dyn ConnectorStatusListener, name: &str, error: &ConnectError) -> String {
    status.on_connector_failed(name, error);
    super::error_trace(error)
}

enum Instance {
    Source(Box<dyn DynSourceConnector>),
    Sink(Box<dyn DynSinkConnector>),
}

/// Calls into the connector; a panic in them is returned as an error (see [`super::panics`]),
/// so a panicking connector becomes FAILED with the panic message as its trace.
impl Instance {
    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> connect_api::Result<()> {
        catch("Connector::start", async {
            match self {
                Instance::Source(c) => c.start(ctx, config).await,
                Instance::Sink(c) => c.start(ctx, config).await,
            }
        })
        .await
    }
    async fn stop(&mut self) -> connect_api::Result<()> {
        catch("Connector::stop", async {
            match self {
                Instance::Source(c) => c.stop().await,
                Instance::Sink(c) => c.stop().await,
            }
        })
        .await
    }
    /// `Err(panic)` when the connector panicked: unlike an error it returns, that fails it.
    fn task_configs(
        &self,
        max: usize,
    ) -> Result<connect_api::Result<Vec<ConfigMap>>, ConnectError> {
        catch_sync("Connector::task_configs", || {
            Ok(match self {
                Instance::Source(c) => c.task_configs(max),
                Instance::Sink(c) => c.task_configs(max),
            })
        })
    }
}

impl ConnectorHandle {
    /// Starts the connector in the background with its target state.
    /// Runs the connector inside `span` (its fields go on every line it logs).
    pub fn spawn(
        span: tracing::Span,
        name: String,
        config: ConfigMap,
        instance: ConnectorInstance,
        initial: TargetState,
        status: Arc<dyn ConnectorStatusListener>,
        requests: mpsc::UnboundedSender<ConnectorRequest>,
    ) -> Self {
        let (commands, rx) = mpsc::unbounded_channel();
        let (target, target_rx) = watch::channel(initial);
        let instance = match instance {
            ConnectorInstance::Source(c) => Instance::Source(c),
            ConnectorInstance::Sink(c) => Instance::Sink(c),
        };
        tokio::spawn(tracing::Instrument::instrument(
            run(name, config, instance, status, requests, rx, target_rx),
            span,
        ));
        ConnectorHandle { commands, target }
    }

    pub fn set_target_state(&self, state: TargetState) {
        self.target.send_replace(state);
    }

    /// `task_configs(tasks.max)`, checked against `tasks.max.enforce`; an error if the connector
    /// is not running (failed, paused) or generated too many tasks (it is then FAILED).
    pub async fn task_configs(&self, tasks_max: TasksMax) -> Result<Vec<ConfigMap>, ConnectError> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::TaskConfigs(tasks_max, tx))
            .map_err(|_| ConnectError::fatal("connector is not running"))?;
        rx.await
            .map_err(|_| ConnectError::fatal("connector is not running"))?
    }

    /// Stops the connector and waits for `stop` to return.
    pub async fn stop(&self) {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(Command::Stop(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

async fn run(
    name: String,
    config: ConfigMap,
    mut instance: Instance,
    status: Arc<dyn ConnectorStatusListener>,
    requests: mpsc::UnboundedSender<ConnectorRequest>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    mut target: watch::Receiver<TargetState>,
) {
    let control = Arc::new(Control {
        name: name.clone(),
        requests: requests.clone(),
        status: status.clone(),
    });
    let mut started = false;
    let mut failed: Option<String> = None;
    let mut cancel = CancellationToken::new();
    loop {
        let want = *target.borrow_and_update();
        match (want, started, &failed) {
            (_, _, Some(_)) => {}
            (TargetState::Started, false, None) => {
                cancel = CancellationToken::new();
                let ctx = ConnectorContext::new(name.clone(), control.clone(), cancel.clone());
                match instance.start(ctx, config.clone()).await {
                    Ok(()) => {
                        started = true;
                        tracing::info!(connector = %name, "connector started");
                        status.on_connector_state(&name, ConnectorState::Running, None);
                        // A (re)started connector's tasks may differ from the stored ones.
                        let _ = requests.send(ConnectorRequest::Reconfigure(name.clone()));
                    }
                    Err(e) => {
                        tracing::error!(connector = %name, error = %e, "connector failed to start");
                        failed = Some(report_failed(status.as_ref(), &name, &e));
                    }
                }
            }
            (TargetState::Paused | TargetState::Stopped, true, None) => {
                cancel.cancel();
                if let Err(e) = instance.stop().await {
                    tracing::warn!(connector = %name, error = %e, "connector stop failed");
                }
                started = false;
                let state = if want == TargetState::Paused {
                    ConnectorState::Paused
                } else {
                    ConnectorState::Stopped
                };
                status.on_connector_state(&name, state, None);
            }
            (TargetState::Paused | TargetState::Stopped, false, None) => {
                let state = if want == TargetState::Paused {
                    ConnectorState::Paused
                } else {
                    ConnectorState::Stopped
                };
                status.on_connector_state(&name, state, None);
            }
            (TargetState::Started, true, None) => {}
        }
        // A target change is applied before a queued command (a resume's task-config request
        // then finds the connector started).
        tokio::select! {
            biased;
            changed = target.changed() => {
                if changed.is_err() { break; }
            }
            cmd = commands.recv() => match cmd {
                None => break,
                Some(Command::TaskConfigs(tasks_max, reply)) => {
                    let result = match (&failed, started) {
                        (Some(t), _) => Err(ConnectError::fatal(format!(
                            "connector {name} has failed: {t}"
                        ))),
                        (None, true) => {
                            // A panic (the outer error) and more task configs than an enforced
                            // `tasks.max` (Apache's `workerConnector.fail(e)`) fail the connector;
                            // an error it returns does not.
                            let checked = instance.task_configs(tasks_max.max.get()).and_then(
                                |returned| match returned {
                                    Ok(configs) => tasks_max.check(&name, configs.len()).map(
                                        |warning| {
                                            if let Some(w) = warning {
                                                tracing::warn!(connector = %name, "{w}");
                                            }
                                            Ok(configs)
                                        },
                                    ),
                                    Err(e) => Ok(Err(e)),
                                },
                            );
                            match checked {
                                Ok(r) => r,
                                Err(e) => {
                                    tracing::error!(connector = %name, error = %e, "connector failed generating task configs");
                                    failed = Some(report_failed(status.as_ref(), &name, &e));
                                    Err(e)
                                }
                            }
                        }
                        (None, false) => Err(ConnectError::fatal(format!(
                            "connector {name} is not running"
                        ))),
                    };
                    let _ = reply.send(result);
                }
                Some(Command::Stop(reply)) => {
                    if started {
                        cancel.cancel();
                        if let Err(e) = instance.stop().await {
                            tracing::warn!(connector = %name, error = %e, "connector stop failed");
                        }
                    }
                    tracing::info!(connector = %name, "connector stopped");
                    let _ = reply.send(());
                    return;
                }
            }
        }
    }
    if started {
        cancel.cancel();
        let _ = instance.stop().await;
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;
    use std::sync::Mutex;

    use async_trait::async_trait;
    use connect_api::{ConfigDef, SourceConnector, SourceRecord, SourceTask, SourceTaskContext};

    use super::*;

    /// Panics in `task_configs` when started with `panic=task_configs`, in `start` with
    /// `panic=start`; returns one task config more than asked for with `panic=one_extra`.
    #[derive(Default)]
    struct Panicky(ConfigMap);

    #[derive(Default)]
    struct NoTask;

    #[async_trait]
    impl SourceTask for NoTask {
        fn version(&self) -> String {
            "0".into()
        }
        async fn start(&mut self, _: SourceTaskContext, _: ConfigMap) -> connect_api::Result<()> {
            Ok(())
        }
        async fn poll(&mut self) -> connect_api::Result<Vec<SourceRecord>> {
            Ok(Vec::new())
        }
        async fn stop(&mut self) -> connect_api::Result<()> {
            Ok(())
        }
    }

    #[async_trait]
    impl SourceConnector for Panicky {
        type Task = NoTask;
        fn version(&self) -> String {
            "0".into()
        }
        fn config_def(&self) -> ConfigDef {
            ConfigDef::default()
        }
        async fn start(
            &mut self,
            _: ConnectorContext,
            config: ConfigMap,
        ) -> connect_api::Result<()> {
            if config.get("panic").is_some_and(|p| p == "start") {
                panic!("start: bad config");
            }
            self.0 = config;
            Ok(())
        }
        fn task_configs(&self, max: usize) -> connect_api::Result<Vec<ConfigMap>> {
            if self.0.get("panic").is_some_and(|p| p == "task_configs") {
                let v: Vec<ConfigMap> = Vec::new();
                return Ok(vec![v[max].clone()]);
            }
            let extra = usize::from(self.0.get("panic").is_some_and(|p| p == "one_extra"));
            Ok(vec![ConfigMap::new(); max + extra])
        }
        async fn stop(&mut self) -> connect_api::Result<()> {
            Ok(())
        }
    }

    #[derive(Default)]
    struct States(Mutex<Vec<(ConnectorState, Option<String>)>>);

    impl ConnectorStatusListener for States {
        fn on_connector_state(&self, _: &str, state: ConnectorState, trace: Option<String>) {
            self.0.lock().unwrap().push((state, trace));
        }
    }

    fn tasks_max(max: usize, enforce: bool) -> TasksMax {
        TasksMax {
            max: NonZeroUsize::new(max).unwrap(),
            enforce,
        }
    }

    async fn spawn(panic: &str) -> (ConnectorHandle, Arc<States>) {
        let states = Arc::new(States::default());
        let (requests, _rx) = mpsc::unbounded_channel();
        let config = ConfigMap::from([("panic".to_owned(), panic.to_owned())]);
        let handle = ConnectorHandle::spawn(
            tracing::Span::none(),
            "c".into(),
            config,
            ConnectorInstance::Source(Box::new(Panicky::default())),
            TargetState::Started,
            states.clone(),
            requests,
        );
        (handle, states)
    }

    #[tokio::test]
    async fn a_connector_panicking_in_task_configs_fails_with_the_message() {
        let (handle, states) = spawn("task_configs").await;
        let e = handle.task_configs(tasks_max(2, true)).await.unwrap_err();
        assert!(
            e.to_string().contains("Connector::task_configs panicked"),
            "{e}"
        );
        assert!(e.to_string().contains("index out of bounds"), "{e}");
        let last = states.0.lock().unwrap().last().cloned().unwrap();
        assert_eq!(last.0, ConnectorState::Failed);
        assert!(last.1.unwrap().contains("index out of bounds"));
        // Failed stays failed: no more calls into it, and it still stops.
        assert!(handle.task_configs(tasks_max(1, true)).await.is_err());
        handle.stop().await;
    }

    #[tokio::test]
    async fn a_connector_panicking_in_start_fails_with_the_message() {
        let (handle, states) = spawn("start").await;
        let e = handle.task_configs(tasks_max(1, true)).await.unwrap_err();
        assert!(e.to_string().contains("start: bad config"), "{e}");
        let got = states.0.lock().unwrap().clone();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, ConnectorState::Failed);
        assert!(
            got[0]
                .1
                .as_deref()
                .unwrap()
                .contains("Connector::start panicked: start: bad config")
        );
        handle.stop().await;
    }

    #[tokio::test]
    async fn too_many_task_configs_fail_the_connector_unless_enforcement_is_off() {
        let (handle, states) = spawn("one_extra").await;
        // `tasks.max.enforce=false`: every config is kept (none silently dropped).
        assert_eq!(
            handle
                .task_configs(tasks_max(2, false))
                .await
                .unwrap()
                .len(),
            3
        );
        assert_eq!(
            states.0.lock().unwrap().last().map(|s| s.0),
            Some(ConnectorState::Running)
        );

        let err = handle.task_configs(tasks_max(2, true)).await.unwrap_err();
        assert!(
            err.message().starts_with(
                "The connector c has generated 3 tasks, which is greater than 2, the maximum number of tasks it is configured to create."
            ),
            "{err}"
        );
        let (state, trace) = states.0.lock().unwrap().last().cloned().unwrap();
        assert_eq!(state, ConnectorState::Failed);
        assert!(trace.unwrap().contains("tasks.max.enforce"));
        // A failed connector generates no more task configs until it is restarted.
        assert!(handle.task_configs(tasks_max(5, false)).await.is_err());
        handle.stop().await;
    }
}
