"""The root package: lazy, so that importing one layer loads only that layer and what it needs.

Each check runs in a fresh interpreter, since this one has imported everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import crdkit

HEAVY = ("aiohttp", "kubernetes_asyncio", "prometheus_client")


def loaded_after(statement: str) -> tuple[set[str], set[str]]:
    """The crdkit layers and the heavy third-party packages loaded by `statement`."""
    probe = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    modules = set(json.loads(out))
    # The root package's own small modules are not layers.
    own = {"_addresses", "_errors", "_lazy", "_pki", "_version", "_yaml"}
    layers = {m.split(".")[1] for m in modules if m.startswith("crdkit.")} - own
    return layers, {m for m in HEAVY if m in modules}


@pytest.mark.parametrize(
    ("statement", "layers"),
    [
        ("import crdkit", set()),
        ("import crdkit.resources", {"resources"}),
        ("import crdkit.crd", {"crd", "resources"}),
        ("import crdkit.placer", {"placer"}),
        ("from crdkit import ObjectMeta", {"resources"}),
        ("import crdkit.scheduling", {"scheduling"}),
        ("import crdkit.webhook", {"webhook"}),
        ("import crdkit.testing", {"testing"}),
        ("import crdkit.deploy", {"deploy"}),
        # What an operator needs to size its pods: no client, no runtime.
        (
            "from crdkit.scheduling import pod_requests",
            {"scheduling", "resources", "placer", "_placer"},
        ),
    ],
)
def test_a_layer_loads_only_what_it_needs(statement: str, layers: set[str]) -> None:
    found, heavy = loaded_after(statement)
    assert found == layers
    assert heavy == set()


def test_the_test_kit_loads_a_room_on_use() -> None:
    # The fake cluster needs the client (and so its HTTP stack: it is a real Client), not the
    # control plane, the fault proxies or the runtime.
    found, _ = loaded_after("from crdkit.testing import FakeCluster")
    assert found == {"testing", "client", "resources"}


def test_every_scheduling_name_resolves() -> None:
    import crdkit.scheduling

    for name in crdkit.scheduling.__all__:
        assert getattr(crdkit.scheduling, name) is not None


def test_the_client_layer_does_not_load_the_runtime() -> None:
    found, _ = loaded_after("import crdkit.client")
    assert "runtime" not in found


def test_an_operator_process_loads_no_third_party_http_client() -> None:
    # The client speaks HTTP/1.1 itself: aiohttp (about 12 MB and two TLS contexts at import)
    # is the test kit's alone.
    _, heavy = loaded_after(
        "import crdkit.runtime.cli, crdkit.runtime.manager, crdkit.client.transport"
    )
    assert "aiohttp" not in heavy


@pytest.mark.parametrize(
    "statement",
    [
        # What a module of models and reconcilers imports: `crdkit gen-crd` loads it too.
        "from crdkit import Context, CustomResource, Reconciler, Result",
        "from crdkit.runtime import Condition, GenerationChanged, Reconciler, set_condition",
        "from crdkit.client import NotFound, Conflict",
        # Options are plain data: building them loads neither the manager nor its servers.
        "from crdkit import ManagerOptions, LeaderElectionOptions, MetricsOptions",
        # The generators read declarations and write files: no HTTP stack.
        "import crdkit.deploy.cli.rbac, crdkit.deploy.cli.webhooks, crdkit.deploy.cli.manifests",
    ],
)
def test_declaring_an_operator_loads_no_http_client(statement: str) -> None:
    _, heavy = loaded_after(statement)
    assert heavy == set()


def test_every_public_name_resolves_and_is_listed() -> None:
    for name in crdkit.__all__:
        assert getattr(crdkit, name) is not None
    assert set(crdkit.__all__) <= set(dir(crdkit))
    assert crdkit.Client.__module__.startswith("crdkit.client")


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = crdkit.Nope  # type: ignore[attr-defined]


def test_the_version_literal_is_the_projects_and_the_installed_one() -> None:
    import tomllib
    from importlib.metadata import version
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text())["project"]["version"]
    assert crdkit.__version__ == declared == version("crdkit")


def test_importing_crdkit_reads_no_distribution_metadata() -> None:
    probe = (
        "import sys, crdkit\n"
        "crdkit.__version__\n"
        "assert 'importlib.metadata' not in sys.modules, 'the version cost a metadata read'\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=60)
