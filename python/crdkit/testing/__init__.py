"""crdkit's test kit, in rooms; importing this package loads none of them until a name is used.

::

    envtest/   ControlPlane: a real etcd + kube-apiserver (``make envtest`` builds them)
    fake/      FakeCluster: an in-memory apiserver behind a real Client, for unit tests
    faults/    TcpFaultProxy, HttpFaultProxy: network faults between a client and the apiserver
    sim/       simulated Nodes and kubelet, and a virtual clock
    operator   OperatorRunner: reconcilers in a real Manager for the length of a test
    reconcile  reconcile_once: one reconcile, called directly, on any client
    pytest_plugin  the fixtures (control_plane, namespace, crdkit_client, k8s_api_client,
               operator), loaded through the ``pytest11`` entry point

::

    from crdkit.testing import ControlPlane

    async with ControlPlane() as cp:
        await cp.install_crds(["config/crds"])
        ...  # talk to cp.server_url with cp.kubeconfig_path

The kit sits above the client and the runtime it tests; the client does not import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.testing.envtest.binaries import Binaries, candidate_folders, find_binaries
    from crdkit.testing.envtest.control_plane import ControlPlane
    from crdkit.testing.envtest.crds import CrdSource, crd_manifest, load_crds
    from crdkit.testing.errors import BinariesNotFoundError, ControlPlaneError, KitError
    from crdkit.testing.fake.cluster import FakeCluster
    from crdkit.testing.fake.kinds import FakeKind, UnknownKind
    from crdkit.testing.faults.proxies import (
        FaultMode,
        HttpFaultProxy,
        InjectedFault,
        RecordedRequest,
        TcpFaultProxy,
    )
    from crdkit.testing.operator import OperatorRunner
    from crdkit.testing.polling import eventually
    from crdkit.testing.reconcile import reconcile_context, reconcile_once
    from crdkit.testing.sim.kubelet import SimulatedKubelet
    from crdkit.testing.sim.managers import running_manager, virtual_clock_manager
    from crdkit.testing.sim.nodes import create_nodes, simulated_node
    from crdkit.testing.sim.virtual_time import VirtualTimeLoop, run_on_virtual_clock

_HOMES = {
    "crdkit.testing.envtest.binaries": (
        "Binaries",
        "candidate_folders",
        "find_binaries",
    ),
    "crdkit.testing.envtest.control_plane": ("ControlPlane",),
    "crdkit.testing.envtest.crds": (
        "CrdSource",
        "crd_manifest",
        "load_crds",
    ),
    "crdkit.testing.errors": (
        "BinariesNotFoundError",
        "ControlPlaneError",
        "KitError",
    ),
    "crdkit.testing.polling": ("eventually",),
    "crdkit.testing.fake.cluster": ("FakeCluster",),
    "crdkit.testing.fake.kinds": (
        "FakeKind",
        "UnknownKind",
    ),
    "crdkit.testing.faults.proxies": (
        "FaultMode",
        "HttpFaultProxy",
        "InjectedFault",
        "RecordedRequest",
        "TcpFaultProxy",
    ),
    "crdkit.testing.operator": ("OperatorRunner",),
    "crdkit.testing.reconcile": (
        "reconcile_context",
        "reconcile_once",
    ),
    "crdkit.testing.sim.kubelet": ("SimulatedKubelet",),
    "crdkit.testing.sim.managers": (
        "running_manager",
        "virtual_clock_manager",
    ),
    "crdkit.testing.sim.nodes": (
        "create_nodes",
        "simulated_node",
    ),
    "crdkit.testing.sim.virtual_time": (
        "VirtualTimeLoop",
        "run_on_virtual_clock",
    ),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _HOMES)

__all__ = [
    "Binaries",
    "BinariesNotFoundError",
    "ControlPlane",
    "ControlPlaneError",
    "CrdSource",
    "FakeCluster",
    "FakeKind",
    "FaultMode",
    "HttpFaultProxy",
    "InjectedFault",
    "KitError",
    "OperatorRunner",
    "RecordedRequest",
    "SimulatedKubelet",
    "TcpFaultProxy",
    "UnknownKind",
    "VirtualTimeLoop",
    "candidate_folders",
    "crd_manifest",
    "create_nodes",
    "eventually",
    "find_binaries",
    "load_crds",
    "reconcile_context",
    "reconcile_once",
    "run_on_virtual_clock",
    "running_manager",
    "simulated_node",
    "virtual_clock_manager",
]
