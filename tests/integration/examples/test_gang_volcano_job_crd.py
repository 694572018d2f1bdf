"""The generated Job CRD on the real apiserver: Volcano's own manifests apply unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from examples.gang_scheduler.job_stream import demo_stream
from examples.gang_scheduler.models import Job

from crdkit.client import Client, GroupVersionKind, Invalid
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

EXAMPLE = Path(__file__).parents[3] / "examples" / "gang_scheduler"
JOB_KIND = GroupVersionKind("batch.volcano.sh", "v1alpha1", "Job")


@pytest.mark.parametrize("manifest", ["volcano-basic-job.yaml", "volcano-mpi-job.yaml"])
async def test_volcano_examples_apply_unchanged(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str, manifest: str
) -> None:
    data: dict[str, Any] = yaml.safe_load((EXAMPLE / "manifests" / manifest).read_text())
    async with Client.from_control_plane(control_plane) as client:
        await client.create(dict(data), namespace=namespace)
        stored = await client.get(JOB_KIND, data["metadata"]["name"], namespace=namespace)
    # Every field of the manifest is stored as written, pod templates included; the defaults
    # the schema adds come on top.
    for key, value in data["spec"].items():
        assert stored["spec"][key] == value, key
    assert Job.model_validate(stored).spec.tasks[0].template == data["spec"]["tasks"][0]["template"]


async def test_demo_jobs_apply_and_bad_ones_are_refused_by_the_apiserver(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    async with Client.from_control_plane(control_plane) as client:
        for entry in demo_stream()[:3]:
            await client.create(dict(entry.manifest), namespace=namespace)
        bad = dict(demo_stream()[0].manifest)
        bad["metadata"] = {"name": "bad"}
        bad["spec"] = dict(bad["spec"], networkTopology={"mode": "strict"})
        with pytest.raises(Invalid, match=r"networkTopology\.mode"):
            await client.create(bad, namespace=namespace)
