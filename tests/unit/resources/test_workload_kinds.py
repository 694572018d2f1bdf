"""The built-in kinds operators own (apps, batch, policy, Service, PVC): addressed right, and
imported only when first used."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import crdkit.resources
from crdkit.resources import KubernetesObject, Service, resource_info

LAZY = ("apps", "batch", "policy", "services", "storage")


@pytest.mark.parametrize(
    ("kind", "api_version", "plural"),
    [
        (crdkit.resources.Deployment, "apps/v1", "deployments"),
        (crdkit.resources.StatefulSet, "apps/v1", "statefulsets"),
        (crdkit.resources.DaemonSet, "apps/v1", "daemonsets"),
        (crdkit.resources.ReplicaSet, "apps/v1", "replicasets"),
        (crdkit.resources.Job, "batch/v1", "jobs"),
        (crdkit.resources.CronJob, "batch/v1", "cronjobs"),
        (crdkit.resources.PodDisruptionBudget, "policy/v1", "poddisruptionbudgets"),
        (crdkit.resources.Service, "v1", "services"),
        (crdkit.resources.ServiceAccount, "v1", "serviceaccounts"),
        (crdkit.resources.PersistentVolumeClaim, "v1", "persistentvolumeclaims"),
    ],
)
def test_each_kind_is_addressed_as_the_apiserver_serves_it(
    kind: type[KubernetesObject], api_version: str, plural: str
) -> None:
    info = resource_info(kind)
    assert (info.api_version, info.plural, info.namespaced) == (api_version, plural, True)
    assert kind().to_dict()["apiVersion"] == api_version


def test_acronym_fields_have_the_apiservers_names() -> None:
    service = Service.model_validate({"spec": {"clusterIP": "None", "clusterIPs": ["None"]}})
    assert (service.spec.cluster_ip, service.spec.cluster_ips) == ("None", ["None"])
    assert service.to_dict()["spec"]["clusterIP"] == "None"


def test_the_workload_kinds_load_on_first_use() -> None:
    probe = (
        "import json, sys\nimport crdkit.resources\nbefore = sorted(sys.modules)\n"
        "from crdkit.resources import Deployment\nprint(json.dumps([before, sorted(sys.modules)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    before, after = (set(modules) for modules in json.loads(out))
    assert not {f"crdkit.resources.{m}" for m in LAZY} & before
    assert "crdkit.resources.apps" in after


def test_every_listed_name_resolves() -> None:
    for name in crdkit.resources.__all__:
        assert getattr(crdkit.resources, name) is not None
    assert set(crdkit.resources.__all__) <= set(dir(crdkit.resources))
