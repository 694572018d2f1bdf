"""A simulated cluster on a real apiserver: Nodes registered as a kubelet would
(``simulated_node``, ``create_nodes``), a ``SimulatedKubelet`` that runs the pods bound to them,
and a virtual clock (``VirtualTimeLoop``, ``run_on_virtual_clock``) for timing without waiting."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.testing.sim.kubelet import SimulatedKubelet, running_status, terminated_status
    from crdkit.testing.sim.nodes import NOT_READY_TAINT, create_nodes, simulated_node
    from crdkit.testing.sim.virtual_time import VirtualTimeLoop, run_on_virtual_clock

_HOMES = {
    "crdkit.testing.sim.kubelet": (
        "SimulatedKubelet",
        "running_status",
        "terminated_status",
    ),
    "crdkit.testing.sim.nodes": (
        "NOT_READY_TAINT",
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
    "NOT_READY_TAINT",
    "SimulatedKubelet",
    "VirtualTimeLoop",
    "create_nodes",
    "run_on_virtual_clock",
    "running_status",
    "simulated_node",
    "terminated_status",
]
