//! Side by side with Apache Kafka Connect 4.4: our REST answers against the bodies Apache's
//! worker gave for the same requests, recorded in `tests/golden/apache-4.4/` by
//! `tests/apache/capture-golden.sh` (see the README there).
//!
//! Compared: the plugin listing (Apache's class names, `version`), the whole validate answers of
//! `VerifiableSourceConnector` and `FileStreamSinkConnector` and the config definitions of the
//! former (every worker-defined definition must equal Apache's, values and errors too), and the status bodies of a running connector (`/status`, `/tasks/0/status`,
//! `?expand=status`, the 202 of a restart). Values that differ by nature are normalized: worker
//! ids, connector and topic names (random here) and plugin versions (ours is the crate's, checked
//! against our plugin listing instead).

use std::collections::BTreeSet;
use std::time::Duration;

use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually, running_tasks};
use serde_json::{Map, Value, json};

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
/// The name and topic capture-golden.sh used.
const GOLDEN_NAME: &str = "golden-src";

pub(crate) fn golden(name: &str) -> Value {
    let path = format!(
        "{}/golden/apache-4.4/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Apache 4.4 definitions we do not have, each a deliberate difference (README,
/// "Compatibility"): none (KIP-891's `*.plugin.version` keys are here since issue 41).
const APACHE_ONLY_KEYS: &[&str] = &[];
/// KIP-891's version keys: their defaults and recommended values are the installed version,
/// Apache's `4.4.0`, ours the plugin's (the connector's `version`, the converters' as
/// `GET /connector-plugins?connectorsOnly=false` lists them).
const VERSION_KEYS: &[&str] = &[
    "connector.plugin.version",
    "key.converter.plugin.version",
    "value.converter.plugin.version",
    "header.converter.plugin.version",
];
/// Apache 4.4 groups we do not have (none: "Topic Creation" is KIP-158's, implemented).
const APACHE_ONLY_GROUPS: &[&str] = &[];
/// Keys whose recommended values are the installed converters: compared with our own
/// installation (`GET /connector-plugins?connectorsOnly=false`), not with Apache's.
pub(crate) const CONVERTER_KEYS: &[&str] =
    &["key.converter", "value.converter", "header.converter"];

async fn one_worker(prefix: &str) -> WorkerProc {
    let w = ClusterSpec::new(prefix).start_worker().await;
    w.wait_healthy().await;
    w
}

/// Replaces `from` with `to` in every string of `v`, object keys included.
fn replace_strings(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::String(s) if s.contains(from) => *s = s.replace(from, to),
        Value::Array(a) => a.iter_mut().for_each(|x| replace_strings(x, from, to)),
        Value::Object(m) => {
            *m = std::mem::take(m)
                .into_iter()
                .map(|(k, mut x)| {
                    replace_strings(&mut x, from, to);
                    (k.replace(from, to), x)
                })
                .collect();
        }
        _ => {}
    }
}

/// Status bodies: worker ids become `<worker>`, versions `<version>` after checking they equal
/// `version`, and `name` becomes the golden name.
fn normalize_status(v: &mut Value, name: &str, version: &str) {
    replace_strings(v, name, GOLDEN_NAME);
    fn walk(v: &mut Value, version: &str) {
        match v {
            Value::Object(m) => {
                if let Some(w) = m.get_mut("worker_id") {
                    assert!(w.as_str().is_some_and(|s| !s.is_empty()), "worker_id {w}");
                    *w = json!("<worker>");
                }
                if let Some(x) = m.get_mut("version") {
                    assert_eq!(x.as_str(), Some(version), "status version");
                    *x = json!("<version>");
                }
                m.values_mut().for_each(|x| walk(x, version));
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, version)),
            _ => {}
        }
    }
    walk(v, version);
}

/// Asserts equal values and the same key order (Connect clients may compare text).
pub(crate) fn assert_same(ours: &Value, apache: &Value, what: &str) {
    assert_eq!(ours, apache, "{what}: ours vs Apache 4.4");
    assert_eq!(
        serde_json::to_string(ours).unwrap(),
        serde_json::to_string(apache).unwrap(),
        "{what}: key order"
    );
}

/// Apache's `4.4.0` in the definitions and values of [`VERSION_KEYS`] (in a validate answer's
/// `configs`, or a list of definitions) becomes our installed version of that plugin.
pub(crate) fn normalize_version_keys(entries: &mut [Value], connector: &str, converters: &str) {
    for e in entries {
        let name = e["definition"]["name"]
            .as_str()
            .or_else(|| e["name"].as_str())
            .unwrap_or_default()
            .to_owned();
        if !VERSION_KEYS.contains(&name.as_str()) {
            continue;
        }
        let ours = if name == "connector.plugin.version" {
            connector
        } else {
            converters
        };
        replace_strings(e, "4.4.0", ours);
    }
}

pub(crate) fn plugin_version(plugins: &Value, class: &str) -> String {
    plugins
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["class"] == class)
        .and_then(|p| p["version"].as_str())
        .unwrap_or_else(|| panic!("{class} with a version in {plugins}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn connector_plugins_list_apache_class_names() {
    let w = one_worker("golden-plugins").await;
    let ours = w.get("/connector-plugins").await.unwrap();
    let apache = golden("connector-plugins");
    for a in apache.as_array().unwrap() {
        let o = ours
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["class"] == a["class"])
            .unwrap_or_else(|| panic!("{} missing from our listing {ours}", a["class"]));
        assert_eq!(
            o.as_object().unwrap().keys().collect::<Vec<_>>(),
            a.as_object().unwrap().keys().collect::<Vec<_>>(),
            "{o}"
        );
        assert_eq!(o["type"], a["type"], "{o}");
        assert!(o["version"].as_str().is_some_and(|v| !v.is_empty()), "{o}");
    }
    // No Rust path for a plugin that has an Apache name.
    assert!(
        !ours.to_string().contains("connect_connectors::verifiable")
            && !ours.to_string().contains("connect_connectors::file"),
        "{ours}"
    );
    // Sorted by class, as Connect lists them.
    let classes: Vec<&str> = ours
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["class"].as_str().unwrap())
        .collect();
    let mut sorted = classes.clone();
    sorted.sort();
    assert_eq!(classes, sorted);

    // With connectorsOnly=false, Apache 4.4 lists after the connectors the transformations,
    // predicates, converters and header converters, each kind by class; SimpleHeaderConverter
    // is a header converter only.
    let all = w
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap();
    let all = all.as_array().unwrap();
    let mut kinds: Vec<&str> = Vec::new();
    for p in all {
        let t = p["type"].as_str().unwrap();
        if kinds.last() != Some(&t) {
            kinds.push(t);
        }
    }
    let kinds: Vec<&str> = kinds
        .into_iter()
        .filter(|k| *k != "source" && *k != "sink")
        .collect();
    assert_eq!(
        kinds,
        [
            "transformation",
            "predicate",
            "converter",
            "header_converter"
        ],
        "{all:?}"
    );
    for kind in kinds {
        let of_kind: Vec<&str> = all
            .iter()
            .filter(|p| p["type"] == kind)
            .map(|p| p["class"].as_str().unwrap())
            .collect();
        let mut sorted = of_kind.clone();
        sorted.sort_unstable();
        assert_eq!(of_kind, sorted, "{kind}s by class");
    }
    let simple = "org.apache.kafka.connect.storage.SimpleHeaderConverter";
    assert!(
        !all.iter()
            .any(|p| p["class"] == simple && p["type"] == "converter"),
        "{all:?}"
    );
}

/// The worker-defined definitions of a list of config infos (or of `ConfigKeyInfo`s), by name.
fn definitions_by_name(entries: &[Value], pick: impl Fn(&Value) -> &Value) -> Map<String, Value> {
    entries
        .iter()
        .map(&pick)
        .filter(|d| !d.is_null())
        .map(|d| (d["name"].as_str().unwrap().to_owned(), d.clone()))
        .collect()
}

/// Every Apache definition but [`APACHE_ONLY_KEYS`] equals ours; ours has no other
/// worker-defined key (ours' extra keys are the connector's own, in none of Apache's groups).
fn assert_definitions_match(ours: &Map<String, Value>, apache: &Map<String, Value>, what: &str) {
    let apache_groups: BTreeSet<&str> = apache
        .values()
        .filter_map(|d| d["group"].as_str())
        .collect();
    for (name, a) in apache {
        if APACHE_ONLY_KEYS.contains(&name.as_str()) {
            assert!(
                !ours.contains_key(name),
                "{what}: {name} is listed as Apache-only"
            );
            continue;
        }
        let o = ours
            .get(name)
            .unwrap_or_else(|| panic!("{what}: no definition of {name}"));
        assert_same(o, a, &format!("{what}: definition of {name}"));
    }
    for (name, o) in ours {
        if !apache.contains_key(name) {
            let group = o["group"].as_str().unwrap_or_default();
            assert!(
                !apache_groups.contains(group),
                "{what}: {name} is in worker group {group:?} but Apache has no such key: {o}"
            );
        }
    }
}

/// Our converter classes, sorted (header converters too for `header.converter`).
pub(crate) async fn installed_converters(w: &WorkerProc, header: bool) -> Value {
    let all = w
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap();
    let classes: BTreeSet<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "converter" || (header && p["type"] == "header_converter"))
        .map(|p| p["class"].as_str().unwrap())
        .collect();
    assert!(!classes.is_empty());
    json!(classes)
}

#[tokio::test(flavor = "multi_thread")]
async fn validate_answer_matches_apache() {
    let w = one_worker("golden-validate").await;
    let topic = unique("golden-verifiable");
    let apache_topic = {
        let created = golden("create-connector");
        created["config"]["topic"].as_str().unwrap().to_owned()
    };
    let source = "/connector-plugins/VerifiableSourceConnector/config/validate";
    let plugins = w
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap();
    let converter_version = plugin_version(&plugins, "org.apache.kafka.connect.json.JsonConverter");
    let sink = "/connector-plugins/FileStreamSinkConnector/config/validate";

    for (golden_name, path, config) in [
        (
            "validate-verifiable-source",
            source,
            json!({"connector.class": VERIFIABLE, "name": GOLDEN_NAME, "tasks.max": "1", "topic": topic, "throughput": "10"}),
        ),
        (
            "validate-verifiable-source-invalid",
            source,
            json!({"connector.class": VERIFIABLE, "name": GOLDEN_NAME, "tasks.max": "many", "topic": topic}),
        ),
        (
            "validate-file-sink",
            sink,
            json!({"connector.class": FILE_SINK, "name": "golden-sink", "topics": topic}),
        ),
    ] {
        let (status, mut ours) = w.send("PUT", path, Some(config.clone())).await;
        assert_eq!(status, 200, "{ours}");
        replace_strings(&mut ours, &topic, &apache_topic);
        let mut apache = golden(golden_name);
        let connector_version =
            plugin_version(&plugins, config["connector.class"].as_str().unwrap());
        normalize_version_keys(
            apache["configs"].as_array_mut().unwrap(),
            &connector_version,
            &converter_version,
        );
        let top: Vec<&String> = ours.as_object().unwrap().keys().collect();
        assert_eq!(top, ["name", "error_count", "groups", "configs"], "{ours}");
        assert_eq!(ours["name"], apache["name"]);
        assert_eq!(
            ours["error_count"], apache["error_count"],
            "{golden_name}: {ours}"
        );
        // Apache's groups, in Apache's order, then the connector's own.
        let groups: Vec<&Value> = ours["groups"].as_array().unwrap().iter().collect();
        let apache_groups: Vec<&Value> = apache["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| !APACHE_ONLY_GROUPS.iter().any(|x| *g == x))
            .collect();
        assert_eq!(
            &groups[..apache_groups.len()],
            &apache_groups[..],
            "{golden_name}: groups"
        );

        let (oc, ac) = (
            ours["configs"].as_array().unwrap(),
            apache["configs"].as_array().unwrap(),
        );
        assert_definitions_match(
            &definitions_by_name(oc, |c| &c["definition"]),
            &definitions_by_name(ac, |c| &c["definition"]),
            golden_name,
        );
        // The values Apache gave for its keys, errors included.
        for a in ac {
            let name = a["value"]["name"].as_str().unwrap();
            if APACHE_ONLY_KEYS.contains(&name) {
                continue;
            }
            let o = oc
                .iter()
                .find(|o| o["value"]["name"] == name)
                .unwrap_or_else(|| panic!("{golden_name}: no value for {name}"));
            let mut expected = a["value"].clone();
            if CONVERTER_KEYS.contains(&name) {
                expected["recommended_values"] =
                    installed_converters(&w, name == "header.converter").await;
            }
            assert_same(
                &o["value"],
                &expected,
                &format!("{golden_name}: value of {name}"),
            );
            assert_eq!(
                o.as_object().unwrap().keys().collect::<Vec<_>>(),
                ["definition", "value"]
            );
        }
    }

    let ours = w
        .get("/connector-plugins/VerifiableSourceConnector/config")
        .await
        .unwrap();
    let mut apache = golden("config-def-verifiable-source");
    normalize_version_keys(
        apache.as_array_mut().unwrap(),
        &plugin_version(&plugins, VERIFIABLE),
        &converter_version,
    );
    assert_definitions_match(
        &definitions_by_name(ours.as_array().unwrap(), |d| d),
        &definitions_by_name(apache.as_array().unwrap(), |d| d),
        "GET config",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn status_bodies_match_apache() {
    let w = one_worker("golden-status").await;
    let name = unique("golden-src");
    let topic = unique("golden-verifiable");
    let version = plugin_version(&w.get("/connector-plugins").await.unwrap(), VERIFIABLE);
    let config = json!({"connector.class": VERIFIABLE, "name": name, "tasks.max": "1", "topic": topic, "throughput": "10"});
    let (status, created) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": name, "config": config})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    eventually(Duration::from_secs(60), "the task running", || {
        running_tasks(&w, &name, 1)
    })
    .await;
    let connector_running = || async {
        let s = w.get(&format!("/connectors/{name}/status")).await.ok()?;
        (s["connector"]["state"] == "RUNNING" && s["tasks"][0]["state"] == "RUNNING").then_some(s)
    };
    eventually(
        Duration::from_secs(60),
        "connector and task RUNNING",
        connector_running,
    )
    .await;

    for (golden_name, path) in [
        ("status-connector", format!("/connectors/{name}/status")),
        ("status-task", format!("/connectors/{name}/tasks/0/status")),
        (
            "connectors-expand-status",
            "/connectors?expand=status".to_owned(),
        ),
    ] {
        let mut ours = w.get(&path).await.unwrap();
        normalize_status(&mut ours, &name, &version);
        let mut apache = golden(golden_name);
        normalize_status(&mut apache, GOLDEN_NAME, "4.4.0");
        assert_same(&ours, &apache, golden_name);
    }

    let (status, mut ours) = w
        .send(
            "POST",
            &format!("/connectors/{name}/restart?includeTasks=true"),
            None,
        )
        .await;
    assert_eq!(status, 202, "{ours}");
    normalize_status(&mut ours, &name, &version);
    let mut apache = golden("restart-202");
    normalize_status(&mut apache, GOLDEN_NAME, "4.4.0");
    assert_same(&ours, &apache, "restart-202");

    let mut ours = eventually(
        Duration::from_secs(60),
        "RUNNING again after the restart",
        connector_running,
    )
    .await;
    normalize_status(&mut ours, &name, &version);
    let mut apache = golden("status-after-restart");
    normalize_status(&mut apache, GOLDEN_NAME, "4.4.0");
    assert_same(&ours, &apache, "status-after-restart");
}

/// A golden request body of capture-golden-parity.sh.
fn golden_request(name: &str) -> Value {
    golden(&format!("{name}.request"))
}

/// Issue 41 (Apache 4.2-4.4 parity), against Apache's answers recorded by
/// tests/apache/capture-golden-parity.sh for the same request bodies: a connector's own
/// JsonConverter with `schema.content` (KIP-1054: Apache 4.4 lists the converter's keys under
/// `value.converter.*`), and the Allowlist override policy (KIP-1188) allowing `linger.ms`
/// only. Every entry Apache gives for a `value.converter*` key is ours too, definition and
/// value; every `producer.override.*` key Apache finds an error on has our entry with the same
/// value and errors, and the error counts agree. (Apache also lists each override key with
/// the client's own definition, errors or not; ours lists only the keys in error, without a
/// definition: docs/compatibility.md.)
#[tokio::test(flavor = "multi_thread")]
async fn parity_answers_match_apache() {
    let plain = one_worker("golden-parity").await;
    let spec = ClusterSpec::new("golden-parity-allowlist")
        .set("connector.client.config.override.policy", "Allowlist")
        .set("connector.client.config.override.allowlist", "linger.ms");
    let allowlist = spec.start_worker().await;
    allowlist.wait_healthy().await;
    let path = "/connector-plugins/VerifiableSourceConnector/config/validate";
    for (w, name) in [
        (&plain, "validate-schema-content"),
        (&allowlist, "validate-allowlist"),
    ] {
        let plugins = w
            .get("/connector-plugins?connectorsOnly=false")
            .await
            .unwrap();
        let converter_version =
            plugin_version(&plugins, "org.apache.kafka.connect.json.JsonConverter");
        let (status, ours) = w.send("PUT", path, Some(golden_request(name))).await;
        assert_eq!(status, 200, "{name}: {ours}");
        let mut apache = golden(name);
        normalize_version_keys(
            apache["configs"].as_array_mut().unwrap(),
            &plugin_version(&plugins, VERIFIABLE),
            &converter_version,
        );
        assert_eq!(ours["error_count"], apache["error_count"], "{name}: {ours}");
        let compared: Vec<&Value> = apache["configs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| {
                let key = a["definition"]["name"].as_str().unwrap();
                key.starts_with("value.converter")
                    || (key.starts_with("producer.override.")
                        && !a["value"]["errors"].as_array().unwrap().is_empty())
            })
            .collect();
        assert!(
            !compared.is_empty(),
            "{name}: nothing to compare in Apache's answer"
        );
        for a in compared {
            let key = a["definition"]["name"].as_str().unwrap();
            let o = ours["configs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["definition"]["name"] == key)
                .or_else(|| {
                    ours["configs"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|o| o["value"]["name"] == key && o["definition"].is_null())
                })
                .unwrap_or_else(|| panic!("{name}: no entry for {key} in {ours}"));
            if !key.starts_with("producer.override.") {
                assert_same(
                    &o["definition"],
                    &a["definition"],
                    &format!("{name}: definition of {key}"),
                );
            }
            let mut expected = a["value"].clone();
            if CONVERTER_KEYS.contains(&key) {
                expected["recommended_values"] = installed_converters(w, false).await;
            }
            assert_same(&o["value"], &expected, &format!("{name}: value of {key}"));
        }
    }
}
