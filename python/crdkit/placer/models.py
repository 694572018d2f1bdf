"""The placement contract (docs/reference/placement-io.md) as pydantic models, and their validation.

Two layers, so that every refusal names the field that caused it:

- The models (`ClusterSnapshot`, `NodeSpec`, `Gang`, `Task`, ... and the result `Placement`)
  mirror the JSON with camelCase aliases. They check shapes and simple bounds.
- `compile_snapshot`, `compile_node` and `compile_gang` check what needs the whole document or
  the cluster (known levels, quantities, `minAvailable <= replicas`, duplicate names, slices)
  and build the binding's frozen records (`crdkit._placer.Node`, `Gang`, `Task`, ...) with
  quantities in integer milli-units and levels as indexes. This is the only place a request is
  compiled: the Rust record keeps the converted spec, so placing it extracts nothing more, and
  the pure-Python reference engine takes the same records (it copies what it reads once, at
  its boundary).

Every error is a `ValueError` whose single line starts with the field path, for example
``gang.tasks[1].requests.cpu: invalid quantity "abc": not a Kubernetes quantity``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from crdkit import _placer  # noqa: TC001 - pydantic resolves Placement's annotations at run time
from crdkit.placer.compiler import (
    COUNT_MAX,
    HOSTNAME_LEVEL,
    QuantityParser,
    compile_gang,
    compile_node,
    compile_snapshot,
    effective_levels,
)
from crdkit.placer.documents import load_document

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "HOSTNAME_LEVEL",
    "Assignment",
    "ClusterSnapshot",
    "Fit",
    "Gang",
    "NodeSpec",
    "Placement",
    "QuantityParser",
    "Slice",
    "Taint",
    "Task",
    "Toleration",
    "Topology",
    "compile_gang",
    "compile_node",
    "compile_snapshot",
    "effective_levels",
    "load_document",
    "validated",
]


Mode = Literal["required", "preferred", "unconstrained"]
Effect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
Quantity = Annotated[StrictStr | StrictInt | StrictFloat, Field(union_mode="left_to_right")]
M = TypeVar("M", bound=BaseModel)


class _Model(BaseModel):
    # Unknown fields are refused: a typo such as `minavailable` must not be silently ignored.
    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)


class Taint(_Model):
    """A node taint; `NoSchedule` and `NoExecute` repel, `PreferNoSchedule` lowers preference."""

    key: str
    value: str = ""
    effect: Effect


class NodeSpec(_Model):
    """One node of a cluster snapshot."""

    name: str = Field(min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)
    allocatable: dict[str, Quantity] = Field(default_factory=dict)
    used: dict[str, Quantity] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=list)
    unschedulable: bool = False
    ready: bool = True


class ClusterSnapshot(_Model):
    """The `--cluster` document: topology levels (widest first) and nodes."""

    levels: list[str]
    nodes: list[NodeSpec] = Field(default_factory=list)


class Topology(_Model):
    """Where the pods of a gang (or of one task) must or should lie together."""

    mode: Mode = "unconstrained"
    level: str | None = None

    @model_validator(mode="after")
    def _level_matches_mode(self) -> Topology:
        if self.mode != "unconstrained" and self.level is None:
            raise ValueError(f"mode {self.mode} needs a level")
        return self


class Toleration(_Model):
    """Kubernetes toleration rules: `Equal` (default) or `Exists`; no effect matches all."""

    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: Effect | None = None


class Slice(_Model):
    """Groups of `size` pods, each group wholly inside one domain of `level`."""

    level: str
    size: int = Field(ge=1, le=COUNT_MAX)


class Task(_Model):
    """A set of identical pods of a gang."""

    name: str = Field(min_length=1)
    replicas: int = Field(ge=1, le=COUNT_MAX)
    min_available: int | None = Field(default=None, alias="minAvailable", ge=1, le=COUNT_MAX)
    requests: dict[str, Quantity] = Field(default_factory=dict)
    node_selector: dict[str, str] = Field(default_factory=dict, alias="nodeSelector")
    tolerations: list[Toleration] = Field(default_factory=list)
    slice_: Slice | None = Field(default=None, alias="slice")
    topology: Topology | None = None
    max_per_node: int | None = Field(default=None, alias="maxPerNode", ge=1, le=COUNT_MAX)
    """At most this many of the task's pods on one node (1: one rank per node)."""
    avoid_nodes: list[str] = Field(default_factory=list, alias="avoidNodes")
    """Nodes the task's pods must not go to, by name (a name no node has is ignored)."""


class Gang(_Model):
    """An all-or-nothing request: every pod of every task is placed, or none is."""

    name: str = Field(min_length=1)
    priority: int = 0
    topology: Topology = Field(default_factory=Topology)
    tasks: list[Task] = Field(min_length=1)
    max_per_node: int | None = Field(default=None, alias="maxPerNode", ge=1, le=COUNT_MAX)
    """At most this many of the gang's pods, of all its tasks together, on one node."""


class Fit(_Model):
    """The numbers behind an `unschedulable` reason. `best_domain` is None for the whole cluster."""

    best_domain: str | None = Field(alias="bestDomain")
    fits: int
    wants: int
    unit: Literal["pods", "slices"]


class Assignment(_Model):
    """`count` pods of `task` on `node`."""

    task: str
    node: str
    count: int = Field(ge=1)


class Placement(_Model):
    """The placer's answer for one gang, in contract form via `to_dict()`."""

    gang: str
    status: Literal["placed", "minimal", "unschedulable"]
    level: str | None
    domain: dict[str, str]
    placed: dict[str, int]
    assignments: list[Assignment]
    reason: str | None = None
    fit: Fit | None = None
    # The compiled gang this answers, so `Cluster.assume(placement)` needs nothing else.
    _gang: _placer.Gang | None = PrivateAttr(default=None)

    def to_dict(self) -> dict[str, Any]:
        """The contract's JSON object (camelCase; `reason` and `fit` only when present)."""
        data = self.model_dump(by_alias=True, mode="json")
        for optional in ("reason", "fit"):
            if data[optional] is None:
                del data[optional]
        return data

    @property
    def requests(self) -> dict[str, dict[str, int]]:
        """Per task, the per-pod requests in milli-units (empty when loaded from JSON)."""
        if self._gang is None:
            return {}
        return {task.name: task.requests for task in self._gang.tasks}


# --- validation ------------------------------------------------------------------------------


def _format_loc(prefix: str, loc: Sequence[int | str]) -> str:
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part in ("str", "int", "float", "function-after[_level_matches_mode()]"):
            continue  # pydantic's union-member and validator markers, not fields
        else:
            path += f".{part}" if path else str(part)
    return path


def validated(model: type[M], data: Any, prefix: str) -> M:
    """`model.model_validate(data)`, with the first error as one line naming the field path."""
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        raise ValueError(f"{_format_loc(prefix, first['loc'])}: {first['msg']}") from None
