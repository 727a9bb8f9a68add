//! A Schema Registry client for the Confluent REST API (Confluent Schema Registry, Apicurio's
//! `/apis/ccompat/v7`, Redpanda, Karapace), as Java's `CachedSchemaRegistryClient` uses it:
//! register or look up a schema under a subject, fetch a schema by id, the latest version of a
//! subject, the version of a schema in a subject. Every answer is cached (schemas by id and ids
//! by subject and schema forever, as Java's client; latest versions for
//! `latest.cache.ttl.sec`), so records pay a map lookup, not a request.
//!
//! Converters are synchronous; the requests run on the client's own thread (a small tokio
//! runtime) while the caller waits, in `block_in_place` when it is a runtime worker, so a slow
//! registry holds up the task that needs it and nothing else.
//!
//! # Errors
//!
//! As Java's serdes map them: a registry that cannot be reached, or answers 408/500/502/503/504,
//! is a retriable error; 401/403 and every other error answer (an unknown id, an incompatible
//! schema) a data error whose message has the registry's own message and code.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::time::{Duration, Instant};

use base64::Engine;
use connect_api::{ConnectError, Result};
use serde_json::{Value as Json, json};

/// Java's `SchemaRegistryClientConfig` timeouts (`http.connect.timeout.ms`, `http.read.timeout.ms`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);
const READ_TIMEOUT: Duration = Duration::from_secs(30);
const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// How to reach the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSettings {
    /// `schema.registry.url`, split at commas: tried in turn, as Java's `RestService` does.
    pub urls: Vec<String>,
    /// `user:password` for HTTP basic authentication.
    pub user_info: Option<String>,
    /// PEM certificates to trust instead of the platform's roots.
    pub trust_pem: Option<Vec<u8>>,
    /// PEM certificate chain and key to present.
    pub identity_pem: Option<Vec<u8>>,
    /// `latest.cache.ttl.sec` (`None`: latest versions are cached for good, Java's -1).
    pub latest_ttl: Option<Duration>,
}

/// A schema as the registry keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredSchema {
    pub id: i32,
    /// `AVRO` (the registry omits it then), `JSON` or `PROTOBUF`.
    pub schema_type: String,
    pub text: String,
    /// The version within the subject it was looked up in, when known.
    pub version: Option<i32>,
}

type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

#[derive(Default)]
struct Caches {
    by_id: HashMap<i32, Arc<RegisteredSchema>>,
    /// (subject, schema text) → id.
    ids: HashMap<(String, String), i32>,
    /// (subject, id) → version.
    versions: HashMap<(String, i32), i32>,
    latest: HashMap<String, (Instant, Arc<RegisteredSchema>)>,
}

pub struct RegistryClient {
    settings: ClientSettings,
    http: reqwest::Client,
    auth: Option<String>,
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
    caches: Mutex<Caches>,
}

impl std::fmt::Debug for RegistryClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryClient")
            .field("urls", &self.settings.urls)
            .finish_non_exhaustive()
    }
}

/// An error answer or a failed request.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Not reached (connection refused, timed out, TLS).
    Network(String),
    /// The registry's answer: HTTP status, its `error_code` and `message`.
    Answer {
        status: u16,
        code: i64,
        message: String,
    },
}

impl Failure {
    pub(crate) fn into_error(self, what: &str) -> ConnectError {
        match self {
            Failure::Network(e) => ConnectError::retriable(format!(
                "{what}: the schema registry could not be reached: {e}"
            )),
            Failure::Answer {
                status,
                code,
                message,
            } => {
                let text = format!("{what}: {message}; error code: {code} (HTTP {status})");
                if matches!(status, 408 | 500 | 502 | 503 | 504) {
                    ConnectError::retriable(text)
                } else {
                    ConnectError::data(text)
                }
            }
        }
    }

    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, Failure::Answer { status: 404, .. })
    }
}

impl RegistryClient {
    pub fn new(settings: ClientSettings) -> Result<Self> {
        if settings.urls.is_empty() {
            return Err(ConnectError::config(
                "Missing required configuration \"schema.registry.url\" which has no default value.",
            ));
        }
        let mut b = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(READ_TIMEOUT);
        if let Some(pem) = &settings.trust_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| {
                ConnectError::config(format!("schema.registry.ssl.truststore: {e}"))
            })?;
            b = b.tls_certs_only(certs);
        }
        if let Some(pem) = &settings.identity_pem {
            b =
                b.identity(reqwest::Identity::from_pem(pem).map_err(|e| {
                    ConnectError::config(format!("schema.registry.ssl.keystore: {e}"))
                })?);
        }
        let http = b
            .build()
            .map_err(|e| ConnectError::config(format!("schema registry client: {e}")))?;
        let auth = settings.user_info.as_ref().map(|u| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(u.as_bytes())
            )
        });
        let (jobs, mut rx) = tokio::sync::mpsc::unbounded_channel::<Job>();
        std::thread::Builder::new()
            .name("schema-registry".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime");
                rt.block_on(async move {
                    while let Some(job) = rx.recv().await {
                        tokio::spawn(job);
                    }
                });
            })
            .map_err(|e| ConnectError::fatal(format!("schema registry thread: {e}")))?;
        Ok(RegistryClient {
            settings,
            http,
            auth,
            jobs,
            caches: Mutex::default(),
        })
    }

    /// The client of these settings that converters of this process already use, or a new
    /// one: the tasks of a worker share one thread and one cache per registry (Java gives each
    /// converter its own), so a hundred tasks cost one client, and a schema is fetched once.
    pub fn shared(settings: ClientSettings) -> Result<Arc<Self>> {
        static CLIENTS: Mutex<Vec<(ClientSettings, std::sync::Weak<RegistryClient>)>> =
            Mutex::new(Vec::new());
        let mut clients = CLIENTS.lock().unwrap_or_else(|p| p.into_inner());
        clients.retain(|(_, c)| c.strong_count() > 0);
        if let Some(c) = clients
            .iter()
            .find(|(s, _)| *s == settings)
            .and_then(|(_, c)| c.upgrade())
        {
            return Ok(c);
        }
        let client = Arc::new(RegistryClient::new(settings.clone())?);
        clients.push((settings, Arc::downgrade(&client)));
        Ok(client)
    }

    pub fn urls(&self) -> &[String] {
        &self.settings.urls
    }

    fn caches(&self) -> std::sync::MutexGuard<'_, Caches> {
        self.caches.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs one Confluent API request on the client's thread and waits for it.
    fn call(
        &self,
        method: reqwest::Method,
        path: String,
        body: Option<Json>,
    ) -> std::result::Result<Json, Failure> {
        self.call_with(
            method,
            path,
            CONTENT_TYPE,
            body.map(|b| (CONTENT_TYPE, b.to_string())),
        )
    }

    /// Runs one request (`path` after each URL; the answer as JSON, or as a JSON string when
    /// it is not JSON) on the client's thread and waits for it.
    pub(crate) fn call_with(
        &self,
        method: reqwest::Method,
        path: String,
        accept: &'static str,
        body: Option<(&'static str, String)>,
    ) -> std::result::Result<Json, Failure> {
        let (tx, rx) = std_mpsc::sync_channel(1);
        let (http, urls, auth) = (
            self.http.clone(),
            self.settings.urls.clone(),
            self.auth.clone(),
        );
        let job: Job = Box::pin(async move {
            let req = Request {
                method,
                path: &path,
                accept,
                body,
            };
            let _ = tx.send(request(&http, &urls, auth.as_deref(), req).await);
        });
        if self.jobs.send(job).is_err() {
            return Err(Failure::Network(
                "the registry client thread stopped".into(),
            ));
        }
        let wait = || {
            rx.recv()
                .unwrap_or_else(|_| Err(Failure::Network("the request was dropped".into())))
        };
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        }
    }

    /// `POST /subjects/{subject}/versions`: registers (or finds) the schema; its id.
    pub fn register(&self, subject: &str, schema_type: &str, text: &str) -> Result<i32> {
        self.subject_id(subject, schema_type, text, true)
    }

    /// `POST /subjects/{subject}`: the id of a schema already registered under the subject.
    pub fn lookup(&self, subject: &str, schema_type: &str, text: &str) -> Result<i32> {
        self.subject_id(subject, schema_type, text, false)
    }

    /// The id of `text` under `subject`, registering it first when `register`.
    fn subject_id(
        &self,
        subject: &str,
        schema_type: &str,
        text: &str,
        register: bool,
    ) -> Result<i32> {
        let key = (subject.to_owned(), text.to_owned());
        if let Some(id) = self.caches().ids.get(&key) {
            return Ok(*id);
        }
        let (path, what) = if register {
            (
                format!("/subjects/{}/versions", encode(subject)),
                "Error registering",
            )
        } else {
            (format!("/subjects/{}", encode(subject)), "Error retrieving")
        };
        let answer = self
            .call(
                reqwest::Method::POST,
                path,
                Some(schema_body(schema_type, text)),
            )
            .map_err(|f| f.into_error(&format!("{what} {schema_type} schema")))?;
        let id = answer_id(&answer)?;
        if let Some(v) = answer.get("version").and_then(Json::as_i64) {
            self.caches()
                .versions
                .insert((subject.to_owned(), id), v as i32);
        }
        self.remember(key, id, schema_type, text);
        Ok(id)
    }

    fn remember(&self, key: (String, String), id: i32, schema_type: &str, text: &str) {
        let mut c = self.caches();
        c.by_id.entry(id).or_insert_with(|| {
            Arc::new(RegisteredSchema {
                id,
                schema_type: schema_type.to_owned(),
                text: text.to_owned(),
                version: None,
            })
        });
        c.ids.insert(key, id);
    }

    /// `GET /schemas/ids/{id}`.
    pub fn by_id(&self, id: i32) -> Result<Arc<RegisteredSchema>> {
        if let Some(s) = self.caches().by_id.get(&id) {
            return Ok(s.clone());
        }
        let answer = self
            .call(reqwest::Method::GET, format!("/schemas/ids/{id}"), None)
            .map_err(|f| f.into_error(&format!("Error retrieving schema for id {id}")))?;
        let s = Arc::new(RegisteredSchema {
            id,
            schema_type: answer
                .get("schemaType")
                .and_then(Json::as_str)
                .unwrap_or("AVRO")
                .to_owned(),
            text: answer
                .get("schema")
                .and_then(Json::as_str)
                .ok_or_else(|| {
                    ConnectError::data(format!("The registry's answer for id {id} has no schema"))
                })?
                .to_owned(),
            version: None,
        });
        self.caches().by_id.insert(id, s.clone());
        Ok(s)
    }

    /// The version of schema `id` within `subject` (`None` when it is not registered there).
    pub fn version(&self, subject: &str, id: i32) -> Result<Option<i32>> {
        if let Some(v) = self.caches().versions.get(&(subject.to_owned(), id)) {
            return Ok(Some(*v));
        }
        let schema = self.by_id(id)?;
        match self.call(
            reqwest::Method::POST,
            format!("/subjects/{}", encode(subject)),
            Some(schema_body(&schema.schema_type, &schema.text)),
        ) {
            Ok(answer) => {
                let v = answer
                    .get("version")
                    .and_then(Json::as_i64)
                    .map(|v| v as i32);
                if let Some(v) = v {
                    self.caches().versions.insert((subject.to_owned(), id), v);
                }
                Ok(v)
            }
            Err(f) if f.is_not_found() => Ok(None),
            Err(f) => Err(f.into_error(&format!(
                "Error retrieving the version of schema id {id} in subject {subject}"
            ))),
        }
    }

    /// `GET /subjects/{subject}/versions/latest`.
    pub fn latest(&self, subject: &str) -> Result<Arc<RegisteredSchema>> {
        if let Some((at, s)) = self.caches().latest.get(subject) {
            if self
                .settings
                .latest_ttl
                .is_none_or(|ttl| at.elapsed() < ttl)
            {
                return Ok(s.clone());
            }
        }
        let answer = self
            .call(
                reqwest::Method::GET,
                format!("/subjects/{}/versions/latest", encode(subject)),
                None,
            )
            .map_err(|f| {
                f.into_error(&format!(
                    "Error retrieving the latest version of subject {subject}"
                ))
            })?;
        let s = Arc::new(RegisteredSchema {
            id: answer_id(&answer)?,
            schema_type: answer
                .get("schemaType")
                .and_then(Json::as_str)
                .unwrap_or("AVRO")
                .to_owned(),
            text: answer
                .get("schema")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_owned(),
            version: answer
                .get("version")
                .and_then(Json::as_i64)
                .map(|v| v as i32),
        });
        self.caches()
            .latest
            .insert(subject.to_owned(), (Instant::now(), s.clone()));
        Ok(s)
    }
}

fn schema_body(schema_type: &str, text: &str) -> Json {
    if schema_type == "AVRO" {
        json!({ "schema": text })
    } else {
        json!({ "schemaType": schema_type, "schema": text })
    }
}

fn answer_id(answer: &Json) -> Result<i32> {
    answer
        .get("id")
        .and_then(Json::as_i64)
        .and_then(|i| i32::try_from(i).ok())
        .ok_or_else(|| ConnectError::data(format!("The registry answered without an id: {answer}")))
}

/// A subject as one path segment.
pub(crate) fn encode(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// One request: method, path after the base URL, accepted media type and body.
struct Request<'a> {
    method: reqwest::Method,
    path: &'a str,
    accept: &'static str,
    /// Media type and text.
    body: Option<(&'static str, String)>,
}

/// One request, tried against each URL in turn until one answers (Java's `RestService`).
async fn request(
    http: &reqwest::Client,
    urls: &[String],
    auth: Option<&str>,
    r: Request<'_>,
) -> std::result::Result<Json, Failure> {
    let mut last = Failure::Network("no schema.registry.url".into());
    for base in urls {
        let mut req = http
            .request(
                r.method.clone(),
                format!("{}{}", base.trim_end_matches('/'), r.path),
            )
            .header(reqwest::header::ACCEPT, r.accept);
        if let Some(a) = auth {
            req = req.header(reqwest::header::AUTHORIZATION, a);
        }
        if let Some((content_type, text)) = &r.body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, *content_type)
                .body(text.clone());
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                last = Failure::Network(error_chain(&e));
                continue;
            }
        };
        let status = resp.status().as_u16();
        let text = match resp.text().await {
            Ok(t) => t,
            Err(e) => {
                last = Failure::Network(error_chain(&e));
                continue;
            }
        };
        let json: Json = serde_json::from_str(&text).unwrap_or(Json::String(text.clone()));
        if (200..300).contains(&status) {
            return Ok(json);
        }
        // Confluent's error body has `error_code` and `message`; Apicurio's own API answers
        // RFC 7807 problems (`status`, `title`, `detail`).
        return Err(Failure::Answer {
            status,
            code: json
                .get("error_code")
                .and_then(Json::as_i64)
                .unwrap_or(i64::from(status)),
            message: ["message", "detail", "title"]
                .iter()
                .find_map(|k| json.get(k).and_then(Json::as_str))
                .map(str::to_owned)
                .unwrap_or(text),
        });
    }
    Err(last)
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str) -> ClientSettings {
        ClientSettings {
            urls: vec![url.to_owned()],
            user_info: None,
            trust_pem: None,
            identity_pem: None,
            latest_ttl: None,
        }
    }

    #[test]
    fn converters_of_one_registry_share_a_client_while_they_live() {
        let a = RegistryClient::shared(settings("http://r1:1")).unwrap();
        let b = RegistryClient::shared(settings("http://r1:1")).unwrap();
        let c = RegistryClient::shared(settings("http://r2:1")).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        let weak = Arc::downgrade(&a);
        drop((a, b));
        assert!(weak.upgrade().is_none(), "dropped with its last converter");
    }
}
