"""The checked-in CRD of the Volcano Job is what `crdkit gen-crd` makes of the model today."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from click.testing import CliRunner

from crdkit.crd.cli import gen_crd

CRD_DIR = Path(__file__).parents[4] / "examples" / "gang_scheduler" / "config" / "crd"
TARGET = "examples.gang_scheduler.models"


def test_checked_in_crd_has_not_drifted() -> None:
    result = CliRunner().invoke(gen_crd, [TARGET, "--check", str(CRD_DIR)])
    assert result.exit_code == 0, result.output


def test_a_drifted_copy_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "crd"
    shutil.copytree(CRD_DIR, copy)
    path = copy / "batch.volcano.sh_jobs.yaml"
    crd = yaml.safe_load(path.read_text())
    crd["spec"]["names"]["shortNames"] = ["vcjob"]
    path.write_text(yaml.safe_dump(crd))
    result = CliRunner().invoke(gen_crd, [TARGET, "--check", str(copy)])
    assert result.exit_code == 1


def test_crd_keeps_pod_templates_whole_and_has_the_status_subresource() -> None:
    crd = yaml.safe_load((CRD_DIR / "batch.volcano.sh_jobs.yaml").read_text())
    assert crd["metadata"]["name"] == "jobs.batch.volcano.sh"
    (version,) = crd["spec"]["versions"]
    schema = version["schema"]["openAPIV3Schema"]
    task = schema["properties"]["spec"]["properties"]["tasks"]["items"]
    assert task["properties"]["template"]["x-kubernetes-preserve-unknown-fields"] is True
    assert version["subresources"] == {"status": {}}
    assert version["additionalPrinterColumns"][0]["jsonPath"] == ".status.state.phase"
