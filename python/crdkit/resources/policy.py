"""``policy/v1`` PodDisruptionBudget: how many of a gang's pods a drain may evict at once."""

# Annotations are evaluated at class creation (no `from __future__ import annotations`), so the
# names they use are runtime imports to pydantic and to the linter alike.
from pydantic import Field

from crdkit.resources._model import OpenModel, RawObject
from crdkit.resources.durations import IntOrString
from crdkit.resources.meta import LabelSelector
from crdkit.resources.object import KubernetesObject

__all__ = ["PodDisruptionBudget", "PodDisruptionBudgetSpec", "PodDisruptionBudgetStatus"]


class PodDisruptionBudgetSpec(OpenModel):
    """At most one of ``min_available`` and ``max_unavailable``: a count or a percentage."""

    selector: LabelSelector | None = None
    min_available: IntOrString | None = None
    max_unavailable: IntOrString | None = None
    unhealthy_pod_eviction_policy: str | None = None


class PodDisruptionBudgetStatus(OpenModel):
    observed_generation: int | None = None
    current_healthy: int = 0
    desired_healthy: int = 0
    disruptions_allowed: int = 0
    expected_pods: int = 0
    disrupted_pods: dict[str, str] = Field(default_factory=dict)
    conditions: list[RawObject] = Field(default_factory=list)


class PodDisruptionBudget(
    KubernetesObject,
    group="policy",
    version="v1",
    kind="PodDisruptionBudget",
    plural="poddisruptionbudgets",
):
    spec: PodDisruptionBudgetSpec = Field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus | None = None
