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
    # Connect 4.4 status objects carry the running plugin's version.
    assert status["connector"].get("version") and tasks[0].get("version"), status
    expanded = kc.list_connectors(expand="status")
    assert expanded[name]["status"]["connector"]["state"] == "RUNNING", expanded
    assert len(kc.list_connector_tasks(name)) == 1
    plugins = kc.list_connector_plugins()
    # Listed under Apache's class name, as tools that look a plugin up by class expect.
    assert any(
        p["class"] == "org.apache.kafka.connect.tools.VerifiableSourceConnector" for p in plugins
    ), plugins
    validated = requests.put(
        f"{url}/connector-plugins/VerifiableSourceConnector/config/validate",
        json={"connector.class": "VerifiableSourceConnector", "name": "v", "topic": topic},
        timeout=30,
    )
    validated.raise_for_status()
    definition = next(c["definition"] for c in validated.json()["configs"] if c["definition"])
    assert "order_in_group" in definition and "order" not in definition, definition

    kc.delete_connector(name)
    deadline = time.time() + 30
    while name in kc.list_connectors():
        assert time.time() < deadline, "connector still listed after delete"
        time.sleep(0.5)
    print(f"kafka-connect-py: create/list/get/status/tasks/plugins/delete OK against {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
