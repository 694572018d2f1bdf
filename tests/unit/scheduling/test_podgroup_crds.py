"""The PodGroup CRDs crdkit ships: upstream's own files, and ``crdkit scheduler --print-crds``."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from crdkit.cli import main
from crdkit.scheduling.groups.crds import POD_GROUP_CRD_FILES, pod_group_crd_text, pod_group_crds

DATA = Path(__file__).resolve().parents[2] / "data" / "crds"


def test_the_shipped_crds_are_the_upstream_files_the_tests_check() -> None:
    for api, name in POD_GROUP_CRD_FILES.items():
        assert pod_group_crd_text(api) == (DATA / name).read_text()
    names = sorted(crd["metadata"]["name"] for crd in pod_group_crds())
    assert names == ["podgroups.scheduling.volcano.sh", "podgroups.scheduling.x-k8s.io"]


def test_print_crds_writes_what_kubectl_applies_without_a_cluster() -> None:
    result = CliRunner().invoke(main, ["scheduler", "--name", "g", "--print-crds"])
    assert result.exit_code == 0, result.output
    documents = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert [d["spec"]["group"] for d in documents] == [
        "scheduling.x-k8s.io",
        "scheduling.volcano.sh",
    ]
    result = CliRunner().invoke(
        main, ["scheduler", "--name", "g", "--print-crds", "--pod-groups", "volcano"]
    )
    assert [d["spec"]["group"] for d in yaml.safe_load_all(result.stdout) if d] == [
        "scheduling.volcano.sh"
    ]


def test_print_crds_needs_no_scheduler_name_and_running_does() -> None:
    printed = CliRunner().invoke(main, ["scheduler", "--print-crds", "--pod-groups", "volcano"])
    assert printed.exit_code == 0, printed.output
    assert [d["spec"]["group"] for d in yaml.safe_load_all(printed.stdout) if d] == [
        "scheduling.volcano.sh"
    ]
    unnamed = CliRunner().invoke(main, ["scheduler", "--levels", "rack"])
    assert unnamed.exit_code == 2
    assert "Missing option '--name'" in unnamed.output


def test_print_crds_with_queues_adds_the_queue_crd() -> None:
    result = CliRunner().invoke(
        main, ["scheduler", "--print-crds", "--pod-groups", "volcano", "--queues"]
    )
    assert result.exit_code == 0, result.output
    documents = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert [(d["spec"]["group"], d["spec"]["names"]["kind"]) for d in documents] == [
        ("scheduling.volcano.sh", "PodGroup"),
        ("scheduling.crdkit.io", "Queue"),
    ]
