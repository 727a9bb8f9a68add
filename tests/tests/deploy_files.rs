//! The container files of `deploy/` are consistent, checked without Docker (CI has no daemon
//! and no compose plugin): `compose.yaml` and `prometheus.yml` parse; every file a service
//! mounts or builds from exists; Prometheus scrapes every worker service on its REST port at
//! `/metrics`; Grafana is provisioned with the Prometheus datasource and the dashboard folder;
//! the dashboard is valid JSON whose panels all query Prometheus; the image runs as a non-root
//! user with a health check on `/health`. (`tests/metrics.rs` checks the dashboard's metric
//! names against a live worker.)

use std::path::{Path, PathBuf};

use serde_norway::Value;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

fn yaml(file: &str) -> Value {
    let text = std::fs::read_to_string(deploy().join(file)).unwrap();
    let mut v: Value = serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    // `<<: *anchor` merges, as compose applies them.
    v.apply_merge().unwrap();
    v
}

#[test]
fn compose_services_and_their_files() {
    let compose = yaml("compose.yaml");
    let services = compose["services"].as_mapping().expect("services");
    let names: Vec<&str> = services.keys().filter_map(Value::as_str).collect();
    for s in ["kafka", "worker-1", "worker-2", "prometheus", "grafana"] {
        assert!(names.contains(&s), "service {s} missing: {names:?}");
    }
    let workers: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.starts_with("worker"))
        .collect();
    for (name, service) in services {
        let name = name.as_str().unwrap();
        if let Some(build) = service.get("build") {
            let context = deploy().join(build["context"].as_str().unwrap());
            assert!(
                context
                    .join(build["dockerfile"].as_str().unwrap())
                    .is_file(),
                "{name}: the Dockerfile"
            );
        }
        for v in service
            .get("volumes")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
        {
            let host = v.as_str().unwrap().split(':').next().unwrap();
            assert!(
                deploy().join(host).exists(),
                "{name} mounts {host}, which is missing"
            );
        }
    }
    for w in &workers {
        assert_eq!(
            services[*w]["hostname"].as_str(),
            Some(*w),
            "{w}: its worker id"
        );
        assert_eq!(
            services[*w]["environment"]["CONNECT_LOG_FORMAT"].as_str(),
            Some("json")
        );
    }

    let prometheus = yaml("prometheus.yml");
    let job = &prometheus["scrape_configs"][0];
    assert_eq!(job["metrics_path"].as_str(), Some("/metrics"));
    let targets: Vec<&str> = job["static_configs"][0]["targets"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let expected: Vec<String> = workers.iter().map(|w| format!("{w}:8083")).collect();
    assert_eq!(targets, expected, "every worker scraped on its REST port");

    let datasource = yaml("grafana/provisioning/datasources/prometheus.yaml");
    assert_eq!(
        datasource["datasources"][0]["url"].as_str(),
        Some("http://prometheus:9090")
    );
    let uid = datasource["datasources"][0]["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let provider = yaml("grafana/provisioning/dashboards/connect.yaml");
    assert_eq!(
        provider["providers"][0]["options"]["path"].as_str(),
        Some("/var/lib/grafana/dashboards")
    );

    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(deploy().join("grafana/dashboards/connect.json")).unwrap(),
    )
    .unwrap();
    let panels = dashboard["panels"].as_array().unwrap();
    assert!(panels.len() >= 10);
    for p in panels {
        assert_eq!(p["datasource"]["uid"].as_str(), Some(uid.as_str()), "{p}");
        for t in p["targets"].as_array().unwrap() {
            assert!(
                t["expr"]
                    .as_str()
                    .is_some_and(|e| e.contains("kafka_connect_")),
                "{t}"
            );
        }
    }

    let dockerfile = std::fs::read_to_string(deploy().join("Dockerfile")).unwrap();
    assert!(dockerfile.contains("\nUSER 10001"), "non-root user");
    assert!(dockerfile.contains("HEALTHCHECK") && dockerfile.contains("/health"));
}
