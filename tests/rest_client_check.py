"""A real Apache Kafka Connect client from PyPI (kafka-connect-py) against connect-worker.

Usage: rest_client_check.py <worker URL> <topic>
Creates, lists, inspects and deletes a connector through the client's API; exits non-zero on
any mismatch. tests/run.sh runs it against a worker it starts.
"""

import sys
import time

import requests
from kafka_connect import KafkaConnect


def main() -> int:
    url, topic = sys.argv[1], sys.argv[2]
    kc = KafkaConnect(url=url)
    info = kc.get_cluster_info()
    assert {"version", "commit", "kafka_cluster_id"} <= info.keys(), info

    name = "pypi-client-check"
    created = kc.create_connector(
        {
            "name": name,
            "config": {
                "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
                "tasks.max": "1",
                "topic": topic,
                "throughput": "5",
            },
        }
    )
    assert created["name"] == name and created["type"] == "source", created

    assert name in kc.list_connectors(), kc.list_connectors()
    got = kc.get_connector(name)
    assert got["config"]["topic"] == topic, got
    assert kc.get_connector_config(name)["tasks.max"] == "1"

    deadline = time.time() + 60
    while True:
        try:
            status = kc.get_connector_status(name)
        except requests.HTTPError as e:
            # No status until the connector's owner has started it (404, as in Connect).
            assert e.response.status_code == 404, e
            assert time.time() < deadline, "no status within 60 s"
            time.sleep(0.5)
            continue
        tasks = status.get("tasks", [])
        if status["connector"]["state"] == "RUNNING" and tasks and tasks[0]["state"] == "RUNNING":
            break
        assert time.time() < deadline, f"connector did not run: {status}"
        time.sleep(0.5)
    expanded = kc.list_connectors(expand="status")
    assert expanded[name]["status"]["connector"]["state"] == "RUNNING", expanded
    assert len(kc.list_connector_tasks(name)) == 1
    plugins = kc.list_connector_plugins()
    assert any(p["class"].endswith("VerifiableSourceConnector") for p in plugins), plugins

    kc.delete_connector(name)
    deadline = time.time() + 30
    while name in kc.list_connectors():
        assert time.time() < deadline, "connector still listed after delete"
        time.sleep(0.5)
    print(f"kafka-connect-py: create/list/get/status/tasks/plugins/delete OK against {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
