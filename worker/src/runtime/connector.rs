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

use crate::storage::{ConnectorState, TargetState};

/// What a connector runner reports (the herder writes it to the status topic).
pub trait ConnectorStatusListener: Send + Sync {
    fn on_connector_state(&self, connector: &str, state: ConnectorState, trace: Option<String>);
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
        self.status.on_connector_state(
            &self.name,
            ConnectorState::Failed,
            Some(super::error_trace(&error)),
        );
    }
}

enum Instance {
    Source(Box<dyn DynSourceConnector>),
    Sink(Box<dyn DynSinkConnector>),
}

impl Instance {
    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> connect_api::Result<()> {
        match self {
            Instance::Source(c) => c.start(ctx, config).await,
            Instance::Sink(c) => c.start(ctx, config).await,
        }
    }
    async fn stop(&mut self) -> connect_api::Result<()> {
        match self {
            Instance::Source(c) => c.stop().await,
            Instance::Sink(c) => c.stop().await,
        }
    }
    fn task_configs(&self, max: usize) -> connect_api::Result<Vec<ConfigMap>> {
        match self {
            Instance::Source(c) => c.task_configs(max),
            Instance::Sink(c) => c.task_configs(max),
        }
    }
}

impl ConnectorHandle {
    /// Starts the connector in the background with its target state.
    pub fn spawn(
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
        tokio::spawn(run(name, config, instance, status, requests, rx, target_rx));
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
                        let trace = super::error_trace(&e);
                        status.on_connector_state(
                            &name,
                            ConnectorState::Failed,
                            Some(trace.clone()),
                        );
                        failed = Some(trace);
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
        tokio::select! {
            changed = target.changed() => {
                if changed.is_err() { break; }
            }
            cmd = commands.recv() => match cmd {
                None => break,
                Some(Command::TaskConfigs(tasks_max, reply)) => {
                    let result = if started && failed.is_none() {
                        match instance.task_configs(tasks_max.max.get()) {
                            Ok(configs) => match tasks_max.check(&name, configs.len()) {
                                Ok(warning) => {
                                    if let Some(w) = warning {
                                        tracing::warn!(connector = %name, "{w}");
                                    }
                                    Ok(configs)
                                }
                                // Apache's `workerConnector.fail(e)`: FAILED with the message.
                                Err(e) => {
                                    tracing::error!(connector = %name, error = %e, "connector generated too many tasks");
                                    let trace = super::error_trace(&e);
                                    status.on_connector_state(
                                        &name,
                                        ConnectorState::Failed,
                                        Some(trace.clone()),
                                    );
                                    failed = Some(trace);
                                    Err(e)
                                }
                            },
                            Err(e) => Err(e),
                        }
                    } else {
                        Err(ConnectError::fatal(match &failed {
                            Some(t) => format!("connector {name} has failed: {t}"),
                            None => format!("connector {name} is not running"),
                        }))
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
    use connect_api::config::ConfigDef;
    use connect_api::connector::{SinkConnector, SinkTask, SinkTaskContext};
    use connect_api::record::SinkRecord;

    use super::*;

    /// Always returns one task config more than it was asked for.
    #[derive(Default)]
    struct TooMany;

    #[derive(Default)]
    struct NoopTask;

    #[async_trait]
    impl SinkTask for NoopTask {
        fn version(&self) -> String {
            "0".into()
        }
        async fn start(&mut self, _: SinkTaskContext, _: ConfigMap) -> connect_api::Result<()> {
            Ok(())
        }
        async fn put(&mut self, _: Vec<SinkRecord>) -> connect_api::Result<()> {
            Ok(())
        }
        async fn stop(&mut self) -> connect_api::Result<()> {
            Ok(())
        }
    }

    #[async_trait]
    impl SinkConnector for TooMany {
        type Task = NoopTask;
        fn version(&self) -> String {
            "0".into()
        }
        fn config_def(&self) -> ConfigDef {
            ConfigDef::new()
        }
        async fn start(&mut self, _: ConnectorContext, _: ConfigMap) -> connect_api::Result<()> {
            Ok(())
        }
        fn task_configs(&self, max_tasks: usize) -> connect_api::Result<Vec<ConfigMap>> {
            Ok(vec![ConfigMap::new(); max_tasks + 1])
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

    #[tokio::test]
    async fn too_many_task_configs_fail_the_connector_unless_enforcement_is_off() {
        let states = Arc::new(States::default());
        let (requests, _rx) = mpsc::unbounded_channel();
        let handle = ConnectorHandle::spawn(
            "c".into(),
            ConfigMap::new(),
            ConnectorInstance::Sink(Box::new(TooMany)),
            TargetState::Started,
            states.clone(),
            requests,
        );
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
