"""A real local control plane (kube-apiserver + etcd) for tests and demos.

    from crdkit.testing import ControlPlane

    async with ControlPlane() as cp:
        await cp.install_crds(["config/crds"])
        ...  # talk to cp.server_url with cp.kubeconfig_path

The binaries come from ``make envtest`` (built from pinned Go modules into ``.envtest/bin``),
``KUBEBUILDER_ASSETS``, or setup-envtest's store. The pytest fixtures live in
:mod:`crdkit.testing.pytest_plugin`, loaded automatically through the ``pytest11`` entry point.

:mod:`crdkit.testing.faults` puts a proxy between a client and the apiserver that blackholes,
drops, refuses, resets or delays connections, answers chosen requests with 429 or 5xx, and
cuts watches, on demand: ``TcpFaultProxy`` and ``HttpFaultProxy``. ``eventually`` polls a
condition on the live cluster until it holds. ``simulated_node`` and ``create_nodes`` register
Nodes as a kubelet would (Ready, without the not-ready taint the apiserver adds), and
``SimulatedKubelet`` moves the pods bound to them to Running, then Succeeded or Failed.

:class:`FakeCluster` is the opposite end: no processes at all, an in-memory apiserver behind
a real ``Client`` (:mod:`crdkit.testing.fake`), for unit tests of reconcilers.
"""

from __future__ import annotations

from crdkit.testing.binaries import Binaries, candidate_folders, find_binaries
from crdkit.testing.control_plane import ControlPlane
from crdkit.testing.crds import CrdSource, load_crds
from crdkit.testing.errors import BinariesNotFoundError, ControlPlaneError
from crdkit.testing.eventually import eventually
from crdkit.testing.fake import FakeCluster
from crdkit.testing.fake_kinds import FakeKind, UnknownKind
from crdkit.testing.faults import (
    FaultMode,
    HttpFaultProxy,
    InjectedFault,
    RecordedRequest,
    TcpFaultProxy,
)
from crdkit.testing.kubelet import SimulatedKubelet
from crdkit.testing.nodes import create_nodes, simulated_node

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
    "RecordedRequest",
    "SimulatedKubelet",
    "TcpFaultProxy",
    "UnknownKind",
    "candidate_folders",
    "create_nodes",
    "eventually",
    "find_binaries",
    "load_crds",
    "simulated_node",
]
