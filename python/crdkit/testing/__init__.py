"""crdkit's test kit, in rooms; importing this package loads none of them until a name is used.

::

    envtest/   ControlPlane: a real etcd + kube-apiserver (``make envtest`` builds them)
    fake/      FakeCluster: an in-memory apiserver behind a real Client, for unit tests
    crashes/   CrashExplorer: an operator killed between writes, answers lost, caches behind
    faults/    TcpFaultProxy, HttpFaultProxy: network faults between a client and the apiserver
    sim/       simulated Nodes, GPU clusters and kubelets, and a virtual clock
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
    from crdkit.testing.crashes.cases import CrashCase as CrashCase
    from crdkit.testing.crashes.explorer import CrashConsistencyError as CrashConsistencyError
    from crdkit.testing.crashes.explorer import CrashExplorer as CrashExplorer
    from crdkit.testing.crashes.explorer import CrashReport as CrashReport
    from crdkit.testing.crashes.explorer import Scenario as Scenario
    from crdkit.testing.crashes.sites import ControlPlaneSite as ControlPlaneSite
    from crdkit.testing.crashes.sites import FakeClusterSite as FakeClusterSite
    from crdkit.testing.envtest.binaries import Binaries as Binaries
    from crdkit.testing.envtest.binaries import candidate_folders as candidate_folders
    from crdkit.testing.envtest.binaries import find_binaries as find_binaries
    from crdkit.testing.envtest.control_plane import ControlPlane as ControlPlane
    from crdkit.testing.envtest.crds import CrdSource as CrdSource
    from crdkit.testing.envtest.crds import crd_manifest as crd_manifest
    from crdkit.testing.envtest.crds import load_crds as load_crds
    from crdkit.testing.errors import BinariesNotFoundError as BinariesNotFoundError
    from crdkit.testing.errors import ControlPlaneError as ControlPlaneError
    from crdkit.testing.errors import KitError as KitError
    from crdkit.testing.fake.cluster import FakeCluster as FakeCluster
    from crdkit.testing.fake.kinds import FakeKind as FakeKind
    from crdkit.testing.fake.kinds import UnknownKind as UnknownKind
    from crdkit.testing.faults.proxies import FaultMode as FaultMode
    from crdkit.testing.faults.proxies import HttpFaultProxy as HttpFaultProxy
    from crdkit.testing.faults.proxies import InjectedFault as InjectedFault
    from crdkit.testing.faults.proxies import RecordedRequest as RecordedRequest
    from crdkit.testing.faults.proxies import TcpFaultProxy as TcpFaultProxy
    from crdkit.testing.operator import OperatorRunner as OperatorRunner
    from crdkit.testing.polling import eventually as eventually
    from crdkit.testing.reconcile import reconcile_context as reconcile_context
    from crdkit.testing.reconcile import reconcile_once as reconcile_once
    from crdkit.testing.sim.gpu_cluster import GPU_PRODUCT_LABEL as GPU_PRODUCT_LABEL
    from crdkit.testing.sim.gpu_cluster import GPU_RESOURCE as GPU_RESOURCE
    from crdkit.testing.sim.gpu_cluster import LEAF_LABEL as LEAF_LABEL
    from crdkit.testing.sim.gpu_cluster import RDMA_LABEL as RDMA_LABEL
    from crdkit.testing.sim.gpu_cluster import SIMULATED_LABEL as SIMULATED_LABEL
    from crdkit.testing.sim.gpu_cluster import SPINE_LABEL as SPINE_LABEL
    from crdkit.testing.sim.gpu_cluster import ZONE_LABEL as ZONE_LABEL
    from crdkit.testing.sim.gpu_cluster import GpuClusterShape as GpuClusterShape
    from crdkit.testing.sim.gpu_cluster import NodePlace as NodePlace
    from crdkit.testing.sim.gpu_cluster import create_gpu_cluster as create_gpu_cluster
    from crdkit.testing.sim.gpu_cluster import gpu_node as gpu_node
    from crdkit.testing.sim.gpu_cluster import gpu_nodes as gpu_nodes
    from crdkit.testing.sim.gpu_cluster import layout as layout
    from crdkit.testing.sim.kubelet import RUN_SECONDS_ANNOTATION as RUN_SECONDS_ANNOTATION
    from crdkit.testing.sim.kubelet import SimulatedKubelet as SimulatedKubelet
    from crdkit.testing.sim.kubelet import annotated_run_time as annotated_run_time
    from crdkit.testing.sim.managers import running_manager as running_manager
    from crdkit.testing.sim.managers import virtual_clock_manager as virtual_clock_manager
    from crdkit.testing.sim.nodes import create_nodes as create_nodes
    from crdkit.testing.sim.nodes import simulated_node as simulated_node
    from crdkit.testing.sim.virtual_time import VirtualTimeLoop as VirtualTimeLoop
    from crdkit.testing.sim.virtual_time import run_on_virtual_clock as run_on_virtual_clock

__getattr__, __dir__ = lazy_namespace(__name__, globals())
