//! Panics in connector code become task and connector failures.
//!
//! A connector is third-party code fed with record data; a panic in it (an overflow, an
//! `unwrap` on a value it did not expect) must not leave its task RUNNING while nothing runs,
//! nor take the worker down. Every call into a task or connector goes through a wrapper that
//! catches the panic and returns it as a fatal [`ConnectError`] whose message is the panic's,
//! so the runner takes its ordinary failure path: the open transaction is aborted, the task is
//! stopped and reported FAILED with the message as its `trace`.
//!
//! [`supervise`] and [`supervise_blocking`] are the last line: a panic in a runner itself is
//! reported as the task's failure instead of being seen only when the task is stopped.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use async_trait::async_trait;
use connect_api::connector::{RecordMetadata, SinkOffsets};
use connect_api::{
    ConfigMap, ConnectError, SinkRecord, SinkTask, SinkTaskContext, SourceRecord, SourceTask,
    SourceTaskContext, TopicPartition,
};
use futures::FutureExt;

use super::{ConnectorTaskId, TaskStatusListener};

/// The message of a panic payload (`panic!` with a literal or a formatted string).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_owned()
    }
}

/// The error a panic in `what` (e.g. `SinkTask::put`) becomes.
pub fn panic_error(what: &str, payload: &(dyn Any + Send)) -> ConnectError {
    ConnectError::fatal(format!("{what} panicked: {}", panic_message(payload)))
}

/// Awaits `fut`, turning a panic inside it into a fatal error naming `what`.
pub async fn catch<T>(
    what: &str,
    fut: impl Future<Output = Result<T, ConnectError>>,
) -> Result<T, ConnectError> {
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(r) => r,
        Err(payload) => {
            let e = panic_error(what, payload.as_ref());
            tracing::error!(error = %e, "connector code panicked");
            Err(e)
        }
    }
}

/// [`catch`] for synchronous calls.
pub fn catch_sync<T>(
    what: &str,
    f: impl FnOnce() -> Result<T, ConnectError>,
) -> Result<T, ConnectError> {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let e = panic_error(what, payload.as_ref());
            tracing::error!(error = %e, "connector code panicked");
            Err(e)
        }
    }
}

/// Runs a task's runner; a panic that escapes it reports the task FAILED at once.
pub async fn supervise(
    id: ConnectorTaskId,
    status: Arc<dyn TaskStatusListener>,
    runner: impl Future<Output = ()>,
) {
    if let Err(payload) = AssertUnwindSafe(runner).catch_unwind().await {
        report(&id, status.as_ref(), payload.as_ref());
    }
}

/// [`supervise`] for a runner on a blocking thread.
pub fn supervise_blocking(
    id: ConnectorTaskId,
    status: Arc<dyn TaskStatusListener>,
    runner: impl FnOnce(),
) {
    if let Err(payload) = std::panic::catch_unwind(AssertUnwindSafe(runner)) {
        report(&id, status.as_ref(), payload.as_ref());
    }
}

fn report(id: &ConnectorTaskId, status: &dyn TaskStatusListener, payload: &(dyn Any + Send)) {
    let e = panic_error(&format!("the runner of task {id}"), payload);
    tracing::error!(task = %id, error = %e, "task runner panicked");
    status.on_failure(id, &e);
}

/// A source task whose panics are returned as errors.
pub struct PanicSafeSourceTask(pub Box<dyn SourceTask>);

#[async_trait]
impl SourceTask for PanicSafeSourceTask {
    fn version(&self) -> String {
        self.0.version()
    }
    async fn start(
        &mut self,
        ctx: SourceTaskContext,
        config: ConfigMap,
    ) -> connect_api::Result<()> {
        catch("SourceTask::start", self.0.start(ctx, config)).await
    }
    async fn poll(&mut self) -> connect_api::Result<Vec<SourceRecord>> {
        catch("SourceTask::poll", self.0.poll()).await
    }
    async fn commit(&mut self) -> connect_api::Result<()> {
        catch("SourceTask::commit", self.0.commit()).await
    }
    fn commit_record_reads_data(&self) -> bool {
        self.0.commit_record_reads_data()
    }
    fn commit_record(
        &mut self,
        record: &SourceRecord,
        metadata: Option<&RecordMetadata>,
    ) -> connect_api::Result<()> {
        catch_sync("SourceTask::commit_record", || {
            self.0.commit_record(record, metadata)
        })
    }
    async fn stop(&mut self) -> connect_api::Result<()> {
        catch("SourceTask::stop", self.0.stop()).await
    }
}

/// A sink task whose panics are returned as errors.
pub struct PanicSafeSinkTask(pub Box<dyn SinkTask>);

#[async_trait]
impl SinkTask for PanicSafeSinkTask {
    fn version(&self) -> String {
        self.0.version()
    }
    async fn start(&mut self, ctx: SinkTaskContext, config: ConfigMap) -> connect_api::Result<()> {
        catch("SinkTask::start", self.0.start(ctx, config)).await
    }
    async fn open(&mut self, partitions: &[TopicPartition]) -> connect_api::Result<()> {
        catch("SinkTask::open", self.0.open(partitions)).await
    }
    async fn put(&mut self, records: Vec<SinkRecord>) -> connect_api::Result<()> {
        catch("SinkTask::put", self.0.put(records)).await
    }
    async fn flush(&mut self, offsets: &SinkOffsets) -> connect_api::Result<()> {
        catch("SinkTask::flush", self.0.flush(offsets)).await
    }
    async fn pre_commit(&mut self, offsets: SinkOffsets) -> connect_api::Result<SinkOffsets> {
        catch("SinkTask::pre_commit", self.0.pre_commit(offsets)).await
    }
    async fn close(&mut self, partitions: &[TopicPartition]) -> connect_api::Result<()> {
        catch("SinkTask::close", self.0.close(partitions)).await
    }
    async fn stop(&mut self) -> connect_api::Result<()> {
        catch("SinkTask::stop", self.0.stop()).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    struct Panicking;

    #[async_trait]
    impl SinkTask for Panicking {
        fn version(&self) -> String {
            "0".into()
        }
        async fn start(&mut self, _: SinkTaskContext, _: ConfigMap) -> connect_api::Result<()> {
            Ok(())
        }
        async fn put(&mut self, records: Vec<SinkRecord>) -> connect_api::Result<()> {
            let days: i32 = records.len() as i32;
            panic!("day {} is out of range", days + 1);
        }
        async fn stop(&mut self) -> connect_api::Result<()> {
            panic!("stop panics too");
        }
    }

    #[tokio::test]
    async fn a_panic_in_a_task_method_is_a_fatal_error_with_its_message() {
        let mut t = PanicSafeSinkTask(Box::new(Panicking));
        let e = t.put(Vec::new()).await.unwrap_err();
        assert!(!e.is_retriable());
        assert_eq!(
            e.to_string(),
            "SinkTask::put panicked: day 1 is out of range"
        );
        // The task can still be stopped (and panics there are caught the same way).
        let e = t.stop().await.unwrap_err();
        assert!(e.to_string().contains("stop panics too"), "{e}");
    }

    #[derive(Default)]
    struct Statuses(Mutex<Vec<(ConnectorTaskId, String)>>);

    impl TaskStatusListener for Statuses {
        fn on_running(&self, _: &ConnectorTaskId) {}
        fn on_paused(&self, _: &ConnectorTaskId) {}
        fn on_failure(&self, id: &ConnectorTaskId, error: &ConnectError) {
            self.0
                .lock()
                .unwrap()
                .push((id.clone(), crate::runtime::error_trace(error)));
        }
        fn on_shutdown(&self, _: &ConnectorTaskId) {}
    }

    #[tokio::test]
    async fn a_panicking_runner_reports_its_task_failed() {
        let statuses = Arc::new(Statuses::default());
        let id = ConnectorTaskId::new("c", 3);
        supervise(id.clone(), statuses.clone(), async { panic!("boom") }).await;
        let s = statuses.clone();
        let id2 = id.clone();
        tokio::task::spawn_blocking(move || {
            supervise_blocking(id2, s, || panic!("{} blocking", "boom"))
        })
        .await
        .unwrap();
        let got = statuses.0.lock().unwrap().clone();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, id);
        assert!(got[0].1.ends_with("panicked: boom"), "{}", got[0].1);
        assert!(
            got[1].1.ends_with("panicked: boom blocking"),
            "{}",
            got[1].1
        );
    }
}
