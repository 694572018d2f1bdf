"""The values the fake apiserver sets on create: pod phase and QoS class, namespace label."""

from __future__ import annotations

from typing import Any

import pytest

from crdkit.testing.fake.defaults import on_create
from factories import pod_json


def pod(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": f"c{i}", **c} for i, c in enumerate(containers)]
    }
    if init:
        spec["initContainers"] = list(init)
    obj = pod_json(namespace=None, container=None, **spec)
    on_create("", "Pod", obj)
    return obj["status"]


@pytest.mark.parametrize(
    ("resources", "qos"),
    [
        ([{}], "BestEffort"),
        ([{"resources": {"requests": {"ephemeral-storage": "1Gi"}}}], "BestEffort"),
        ([{"resources": {"requests": {"cpu": "1"}}}], "Burstable"),
        ([{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}], "Guaranteed"),
        (
            [
                {
                    "resources": {
                        "limits": {"cpu": "1", "memory": "1Gi"},
                        "requests": {"cpu": "500m", "memory": "1Gi"},
                    }
                }
            ],
            "Burstable",
        ),
        (
            [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}, {}],
            "Burstable",
        ),
    ],
)
def test_pod_qos_class(resources: list[dict[str, Any]], qos: str) -> None:
    assert pod(*resources) == {"phase": "Pending", "qosClass": qos}


def test_an_init_container_counts_too() -> None:
    guaranteed = {"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
    assert pod(guaranteed, init=({"name": "i"},))["qosClass"] == "Burstable"


def test_namespaces_get_their_name_label_and_other_groups_nothing() -> None:
    ns: dict[str, Any] = {"metadata": {"name": "team"}}
    on_create("", "Namespace", ns)
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}
    assert ns["status"] == {"phase": "Active"}
    other: dict[str, Any] = {"metadata": {"name": "p"}}
    on_create("example.com", "Pod", other)
    assert other == {"metadata": {"name": "p"}}
