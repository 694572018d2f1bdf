"""Feature gates, runtime config and admission plugins of the local kube-apiserver: what an API
that is off by default needs to be served (`ApiserverGates`), and the set that turns on
Kubernetes' own gang API (`WORKLOAD_API`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["WORKLOAD_API", "ApiserverGates", "parse_pairs"]

_GATE = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_RUNTIME_KEY = re.compile(r"^[a-z0-9.\-/]+$")
_VALUE = re.compile(r"^[A-Za-z0-9.\-]+$")
ALWAYS_DISABLED = ("ServiceAccount",)
"""No controller-manager creates the default ServiceAccount, so pods would be refused."""


@dataclass(frozen=True)
class ApiserverGates:
    """``--feature-gates``, ``--runtime-config`` and more ``--disable-admission-plugins``."""

    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    runtime_config: Mapping[str, str] = field(default_factory=dict)
    """``scheduling.k8s.io/v1beta1`` → ``"true"``: an API group version, or ``api/all``."""
    disabled_admission_plugins: Sequence[str] = ()

    def __post_init__(self) -> None:
        # Refused here, naming the option, rather than by a kube-apiserver that will not start.
        for gate, on in self.feature_gates.items():
            if not _GATE.match(gate) or not isinstance(on, bool):
                raise ValueError(f"feature_gates: expected Name: bool, got {gate!r}: {on!r}")
        for key, value in self.runtime_config.items():
            if not _RUNTIME_KEY.match(key) or not _VALUE.match(value):
                raise ValueError(f"runtime_config: expected group/version=value, got {key}={value}")
        for plugin in self.disabled_admission_plugins:
            if not _GATE.match(plugin):
                raise ValueError(f"disabled_admission_plugins: not a plugin name: {plugin!r}")

    def merged(self, other: ApiserverGates) -> ApiserverGates:
        """These and ``other``'s, ``other`` winning a gate or key set in both."""
        return ApiserverGates(
            {**self.feature_gates, **other.feature_gates},
            {**self.runtime_config, **other.runtime_config},
            tuple(
                dict.fromkeys([*self.disabled_admission_plugins, *other.disabled_admission_plugins])
            ),
        )

    def argv(self) -> list[str]:
        """kube-apiserver's flags for these (the plugins it always disables included)."""
        args = []
        if self.feature_gates:
            gates = ",".join(f"{k}={str(v).lower()}" for k, v in self.feature_gates.items())
            args.append(f"--feature-gates={gates}")
        if self.runtime_config:
            config = ",".join(f"{k}={v}" for k, v in self.runtime_config.items())
            args.append(f"--runtime-config={config}")
        plugins = dict.fromkeys([*ALWAYS_DISABLED, *self.disabled_admission_plugins])
        args.append(f"--disable-admission-plugins={','.join(plugins)}")
        return args


WORKLOAD_API = ApiserverGates(
    feature_gates={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True},
    runtime_config={"scheduling.k8s.io/v1beta1": "true"},
    # Its finalizer is removed by kube-controller-manager, which the local control plane does
    # not run: a deleted PodGroup would stay Terminating for good.
    disabled_admission_plugins=("PodGroupProtection",),
)
"""Kubernetes' gang API, ``scheduling.k8s.io/v1beta1`` PodGroup and Workload with pods'
``spec.schedulingGroup`` and PodGroups' ``schedulingConstraints`` (kube-apiserver v1.37)."""


def parse_pairs(text: str, option: str) -> dict[str, str]:
    """``A=x,B=y`` as a dict (``ValueError`` naming ``option`` for a pair without ``=``)."""
    pairs: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"{option}: expected KEY=VALUE[,KEY=VALUE...], got {item!r}")
        pairs[key] = value
    return pairs
