//! `/connectors`: create, read, update and delete connectors; their status, tasks, target
//! states, restarts, active topics and offsets.
//!
//! Each handler parses the request, asks the herder ([`crate::herder::api`]) and answers; when
//! the herder says another worker must serve it (the leader, or the task's owner), the request
//! is forwarded from one place ([`forward::complete_or_forward`]). Every worker (including this
//! one) learns about writes by reading the config topic, so a response never claims a state
//! the cluster has not recorded.

use axum::body::Bytes;
use axum::extract::{Path, Query, RawQuery, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use connect_api::ConfigMap;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::forward::{self, Forwarded, Incoming, Outcome, answer};
use super::{ApiError, RestState, body};
use crate::herder::HerderHandle;
use crate::peer::encode_path;
use crate::storage::{ConnectorState, ConnectorTaskId, RestartRequest, TargetState, TaskStatus};

/// Worker keys (Connect's names) that turn active-topic tracking and its reset off.
pub const TOPIC_TRACKING_ENABLE: &str = "topic.tracking.enable";
pub const TOPIC_TRACKING_ALLOW_RESET: &str = "topic.tracking.allow.reset";

pub(super) fn routes() -> Router<RestState> {
    Router::new()
        .route("/connectors", get(list_connectors).post(create_connector))
        .route(
            "/connectors/{connector}",
            get(get_connector).delete(delete_connector),
        )
        .route(
            "/connectors/{connector}/config",
            get(get_connector_config)
                .put(put_connector_config)
                .patch(patch_connector_config),
        )
        .route("/connectors/{connector}/status", get(get_connector_status))
        .route(
            "/connectors/{connector}/tasks",
            get(get_connector_tasks).post(super::internal::put_task_configs),
        )
        .route(
            "/connectors/{connector}/fence",
            put(super::internal::fence_zombies),
        )
        .route(
            "/connectors/{connector}/tasks/{task}/status",
            get(get_task_status),
        )
        .route(
            "/connectors/{connector}/tasks/{task}/restart",
            post(restart_task),
        )
        .route("/connectors/{connector}/restart", post(restart_connector))
        .route("/connectors/{connector}/pause", put(pause_connector))
        .route("/connectors/{connector}/resume", put(resume_connector))
        .route("/connectors/{connector}/stop", put(stop_connector))
        .route(
            "/connectors/{connector}/topics",
            get(get_connector_active_topics),
        )
        .route(
            "/connectors/{connector}/topics/reset",
            put(reset_connector_active_topics),
        )
}

pub(super) fn internal(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

pub(super) fn not_found(message: String) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, message)
}

/// `ConnectorInfo`.
#[derive(Debug, Serialize)]
struct ConnectorInfo {
    name: String,
    config: ConfigMap,
    tasks: Vec<TaskId>,
    #[serde(rename = "type")]
    connector_type: &'static str,
}

#[derive(Debug, Serialize)]
struct TaskId {
    connector: String,
    task: i32,
}

impl From<crate::herder::ConnectorInfo> for ConnectorInfo {
    fn from(i: crate::herder::ConnectorInfo) -> Self {
        ConnectorInfo {
            name: i.name,
            config: i.config,
            tasks: i
                .tasks
                .into_iter()
                .map(|id| TaskId {
                    connector: id.connector,
                    task: id.task,
                })
                .collect(),
            connector_type: i.connector_type,
        }
    }
}

fn connector_info(h: &HerderHandle, name: &str) -> Option<ConnectorInfo> {
    h.connector_info(name).map(ConnectorInfo::from)
}

/// `ConnectorStateInfo`; tasks are sorted by id.
fn connector_state_info(h: &HerderHandle, name: &str) -> Option<Value> {
    let status = h.statuses().connector_status(name)?;
    let snapshot = h.snapshot();
    let config = snapshot.connector_config(name).cloned().unwrap_or_default();
    // Only tasks of the current task configs: statuses of removed tasks (a stopped connector,
    // a lowered tasks.max) stay in the compacted topic but are no longer the connector's.
    let current = snapshot.task_count(name).max(0);
    let mut tasks: Vec<_> = h
        .statuses()
        .tasks_for(name)
        .into_iter()
        .filter(|t| t.id.task < current)
        .collect();
    tasks.sort_by_key(|t| t.id.task);
    let tasks: Vec<Value> = tasks
        .iter()
        .filter(|t| t.state != ConnectorState::Destroyed)
        .map(task_state)
        .collect();
    let connector = state_object(
        serde_json::Map::new(),
        status.state,
        &status.worker_id,
        status.trace.as_deref(),
        status.version.as_deref(),
    );
    Some(json!({
        "name": name,
        "connector": connector,
        "tasks": tasks,
        "type": h.connector_type(&config),
    }))
}

/// A connector or task state as Connect 4.4 writes it (`AbstractState`, fields in its order):
/// `trace` and `version` are omitted when empty.
fn state_object(
    mut v: serde_json::Map<String, Value>,
    state: ConnectorState,
    worker_id: &str,
    trace: Option<&str>,
    version: Option<&str>,
) -> Value {
    v.insert("state".into(), json!(state.as_str()));
    v.insert("worker_id".into(), json!(worker_id));
    if let Some(t) = trace.filter(|t| !t.is_empty()) {
        v.insert("trace".into(), json!(t));
    }
    if let Some(version) = version.filter(|v| !v.is_empty()) {
        v.insert("version".into(), json!(version));
    }
    Value::Object(v)
}

/// `TaskState`: the task id first, then the state fields.
fn task_state(t: &TaskStatus) -> Value {
    let mut v = serde_json::Map::new();
    v.insert("id".into(), json!(t.id.task));
    state_object(
        v,
        t.state,
        &t.worker_id,
        t.trace.as_deref(),
        t.version.as_deref(),
    )
}

async fn list_connectors(
    State(s): State<RestState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let names = h.snapshot().connectors();
    let expand: Vec<String> = query
        .unwrap_or_default()
        .split('&')
        .filter_map(|kv| kv.strip_prefix("expand="))
        .map(str::to_owned)
        .collect();
    if expand.is_empty() {
        return Ok(Json(names).into_response());
    }
    let mut out = serde_json::Map::new();
    for name in names {
        let mut entry = serde_json::Map::new();
        // A connector whose lookup fails (e.g. no status yet) is omitted, as in Connect.
        let mut complete = true;
        if expand.iter().any(|e| e == "status") {
            match connector_state_info(h, &name) {
                Some(v) => {
                    entry.insert("status".into(), v);
                }
                None => complete = false,
            }
        }
        if expand.iter().any(|e| e == "info") {
            match connector_info(h, &name) {
                Some(v) => {
                    entry.insert("info".into(), serde_json::to_value(v).map_err(internal)?);
                }
                None => complete = false,
            }
        }
        if complete && !entry.is_empty() {
            out.insert(name, Value::Object(entry));
        }
    }
    Ok(Json(Value::Object(out)).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateConnectorRequest {
    name: Option<String>,
    config: Option<Value>,
    initial_state: Option<String>,
}

fn parse_initial_state(s: Option<&str>) -> Result<Option<TargetState>, ApiError> {
    match s.map(str::to_ascii_uppercase).as_deref() {
        None => Ok(None),
        Some("RUNNING") => Ok(Some(TargetState::Started)),
        Some("PAUSED") => Ok(Some(TargetState::Paused)),
        Some("STOPPED") => Ok(Some(TargetState::Stopped)),
        Some(other) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("Invalid initial state {other}; use RUNNING, PAUSED or STOPPED"),
        )),
    }
}

fn location(headers: &HeaderMap, name: &str) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}/connectors/{}", encode_path(name))
}

/// A forwarded create/update answer; 201 gets this worker's `Location`.
fn forwarded_with_location(f: Forwarded, headers: &HeaderMap, name: &str) -> Response {
    if f.status == StatusCode::CREATED {
        let mut res = f.into_response();
        if let Ok(v) = header::HeaderValue::from_str(&location(headers, name)) {
            res.headers_mut().insert(header::LOCATION, v);
        }
        res
    } else {
        f.into_response()
    }
}

/// 201 with `Location`, as Connect answers a create.
fn created(headers: &HeaderMap, name: &str, info: ConnectorInfo) -> Response {
    (
        StatusCode::CREATED,
        [(header::LOCATION, location(headers, name))],
        Json(info),
    )
        .into_response()
}

async fn create_connector(
    State(s): State<RestState>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let raw: Value = body::parse(&bytes)?;
    let req = Incoming::new(Method::POST, uri, &headers, Some(raw.clone()))?;
    let parsed: CreateConnectorRequest = body::from_value(raw)?;
    let name = parsed.name.unwrap_or_default().trim().to_owned();
    let config =
        body::strict_config_map(parsed.config.unwrap_or(Value::Object(Default::default())))?;
    let initial_state = parse_initial_state(parsed.initial_state.as_deref())?;
    let result = h.create_connector(&name, config, initial_state).await;
    Ok(match forward::complete_or_forward(&req, result).await? {
        Outcome::Done(info) => created(&headers, &name, info.into()),
        Outcome::Forwarded(f) => forwarded_with_location(f, &headers, &name),
    })
}

async fn get_connector(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Json<ConnectorInfo>, ApiError> {
    let h = s.herder()?;
    h.await_rebalance().await?;
    connector_info(h, &name)
        .map(Json)
        .ok_or_else(|| not_found(format!("Connector {name} not found")))
}

async fn get_connector_config(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Json<ConfigMap>, ApiError> {
    let h = s.herder()?;
    h.snapshot()
        .connector_config(&name)
        .cloned()
        .map(Json)
        .ok_or_else(|| not_found(format!("Connector {name} not found")))
}

async fn put_connector_config(
    State(s): State<RestState>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let raw: Value = body::parse(&bytes)?;
    let req = Incoming::new(Method::PUT, uri, &headers, Some(raw.clone()))?;
    let config = body::strict_config_map(raw)?;
    let result = h.put_connector_config(&name, config).await;
    Ok(match forward::complete_or_forward(&req, result).await? {
        Outcome::Done(out) if out.created => created(&headers, &name, out.info.into()),
        Outcome::Done(out) => (StatusCode::OK, Json(ConnectorInfo::from(out.info))).into_response(),
        Outcome::Forwarded(f) => forwarded_with_location(f, &headers, &name),
    })
}

async fn patch_connector_config(
    State(s): State<RestState>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let raw: Value = body::parse(&bytes)?;
    let req = Incoming::new(Method::PATCH, uri, &headers, Some(raw.clone()))?;
    let patch = body::config_map(raw)?.into_iter().collect();
    let result = h.patch_connector_config(&name, patch).await;
    Ok(match forward::complete_or_forward(&req, result).await? {
        Outcome::Done(info) => Json(ConnectorInfo::from(info)).into_response(),
        Outcome::Forwarded(f) => f.into_response(),
    })
}

async fn delete_connector(
    State(s): State<RestState>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let req = Incoming::new(Method::DELETE, uri, &headers, None)?;
    answer(
        &req,
        h.delete_connector(&name).await,
        StatusCode::NO_CONTENT,
    )
    .await
}

async fn get_connector_status(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let h = s.herder()?;
    connector_state_info(h, &name)
        .map(Json)
        .ok_or_else(|| not_found(format!("No status found for connector {name}")))
}

async fn get_connector_tasks(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let h = s.herder()?;
    h.await_rebalance().await?;
    let snapshot = h.snapshot();
    if !snapshot.contains(&name) {
        return Err(not_found(format!("Connector {name} not found")));
    }
    let tasks: Vec<Value> = snapshot
        .tasks(&name)
        .into_iter()
        .map(|id| {
            let config = snapshot.task_config(&id).cloned().unwrap_or_default();
            json!({"id": {"connector": id.connector, "task": id.task}, "config": config})
        })
        .collect();
    Ok(Json(Value::Array(tasks)))
}

async fn get_task_status(
    State(s): State<RestState>,
    Path((name, task)): Path<(String, i32)>,
) -> Result<Json<Value>, ApiError> {
    let h = s.herder()?;
    let id = ConnectorTaskId::new(name.clone(), task);
    let t = h
        .statuses()
        .task_status(&id)
        .filter(|t| t.state != ConnectorState::Destroyed)
        .ok_or_else(|| not_found(format!("No status found for task {id}")))?;
    Ok(Json(task_state(&t)))
}

#[derive(Debug, Deserialize, Default)]
struct RestartParams {
    #[serde(rename = "includeTasks", default)]
    include_tasks: bool,
    #[serde(rename = "onlyFailed", default)]
    only_failed: bool,
}

async fn restart_connector(
    State(s): State<RestState>,
    Path(name): Path<String>,
    Query(params): Query<RestartParams>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let req = Incoming::new(Method::POST, uri, &headers, None)?;
    let result = h
        .restart_connector(RestartRequest {
            connector: name.clone(),
            include_tasks: params.include_tasks,
            only_failed: params.only_failed,
        })
        .await;
    if let Outcome::Forwarded(f) = forward::complete_or_forward(&req, result).await? {
        return Ok(f.into_response());
    }
    if !params.include_tasks && !params.only_failed {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    // 202 with the planned states: what will restart shows RESTARTING.
    let mut info = connector_state_info(h, &name)
        .ok_or_else(|| not_found(format!("Status for connector {name} not found")))?;
    let restarts = |state: &Value| !params.only_failed || state == "FAILED";
    if restarts(&info["connector"]["state"]) {
        info["connector"]["state"] = json!("RESTARTING");
    }
    if params.include_tasks
        && let Some(tasks) = info["tasks"].as_array_mut()
    {
        for t in tasks {
            if restarts(&t["state"]) {
                t["state"] = json!("RESTARTING");
            }
        }
    }
    Ok((StatusCode::ACCEPTED, Json(info)).into_response())
}

async fn restart_task(
    State(s): State<RestState>,
    Path((name, task)): Path<(String, i32)>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let req = Incoming::new(Method::POST, uri, &headers, None)?;
    let result = h.restart_task(ConnectorTaskId::new(name, task)).await;
    answer(&req, result, StatusCode::NO_CONTENT).await
}

async fn pause_connector(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    s.herder()?
        .set_target_state(&name, TargetState::Paused)
        .await?;
    Ok(StatusCode::ACCEPTED)
}

async fn resume_connector(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    s.herder()?
        .set_target_state(&name, TargetState::Started)
        .await?;
    Ok(StatusCode::ACCEPTED)
}

async fn stop_connector(
    State(s): State<RestState>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let req = Incoming::new(Method::PUT, uri, &headers, None)?;
    answer(&req, h.stop_connector(&name).await, StatusCode::NO_CONTENT).await
}

/// `topic.tracking.enable` / `topic.tracking.allow.reset` (both default true).
fn topic_tracking_flag(h: &HerderHandle, key: &str) -> bool {
    h.config()
        .raw
        .get(key)
        .map(|v| !v.trim().eq_ignore_ascii_case("false"))
        .unwrap_or(true)
}

fn check_topic_tracking(h: &HerderHandle, reset: bool) -> Result<(), ApiError> {
    if !topic_tracking_flag(h, TOPIC_TRACKING_ENABLE) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "Topic tracking is disabled.",
        ));
    }
    if reset && !topic_tracking_flag(h, TOPIC_TRACKING_ALLOW_RESET) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "Topic tracking reset is disabled.",
        ));
    }
    Ok(())
}

async fn get_connector_active_topics(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let h = s.herder()?;
    check_topic_tracking(h, false)?;
    let mut topics: Vec<String> = h
        .statuses()
        .topics_for(&name)
        .into_iter()
        .map(|t| t.topic)
        .collect();
    topics.sort();
    topics.dedup();
    Ok(Json(json!({ name: {"topics": topics} })))
}

async fn reset_connector_active_topics(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    let h = s.herder()?;
    check_topic_tracking(h, true)?;
    h.reset_active_topics(&name).await?;
    Ok(StatusCode::ACCEPTED)
}
