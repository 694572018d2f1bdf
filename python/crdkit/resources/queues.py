"""``scheduling.crdkit.io/v1alpha1`` Queue: the quota of a team on a shared GPU cluster.

Queues form a tree through ``spec.parent`` (org → department → team); a queue's parent is its
cohort, the queues whose unused quota it may borrow. Each queue guarantees its gangs a
``nominal`` amount of each resource per *flavor* (a kind of node, picked by node labels), may
borrow up to ``borrowingLimit`` beyond it from its cohort while the cohort has room, and lends
up to ``lendingLimit`` of its nominal to the cohort while it does not use it.

Each rule is written once for both sides: a CEL rule in the CRD, so the apiserver refuses a bad
Queue whoever writes it (``kubectl`` included), and the same check in pydantic, so a bad Queue
fails where it is built. Either way the error names the field. The CRD is generated from these
classes (``crdkit gen-crd crdkit.resources.queues``) and shipped in
``crdkit/scheduling/queues/crds``.

Quantities are kept as the text written (``"512Gi"``; ``64`` becomes ``"64"``). The ``*_milli``
helpers read them as integer milli-units with the placer's parser
(``crdkit._placer.parse_quantity``), the one the scheduler reads pod requests with, so quota
and requests are counted in the same units.
"""

# Annotations are evaluated at class creation (no `from __future__ import annotations`), so the
# names they use are runtime imports to pydantic and to the linter alike.
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, WithJsonSchema

from crdkit._placer import parse_quantity
from crdkit.resources._model import ApiModel, Time
from crdkit.resources.core import Quantity
from crdkit.resources.custom import CustomResource
from crdkit.resources.options import PrinterColumn
from crdkit.resources.scalars import QUANTITY_PATTERN, Int64, quantity_text

__all__ = [
    "MAX_FLAVORS",
    "MAX_MILLI",
    "MAX_RESOURCES",
    "Queue",
    "QueueCondition",
    "QueueFlavor",
    "QueueFlavorUsage",
    "QueuePreemption",
    "QueueQuota",
    "QueueResource",
    "QueueResourceUsage",
    "QueueSpec",
    "QueueStatus",
]

MAX_FLAVORS = 16
"""The most flavors a queue lists (the CRD's ``maxItems``, which also bounds the CEL cost)."""
MAX_RESOURCES = 16
"""The most resources a flavor lists."""

# Kubernetes' own name rules (apimachinery's validation), as patterns the CRD can carry.
_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
# A qualified name (``cpu``, ``nvidia.com/gpu``): an optional DNS subdomain prefix (253
# characters) and a slash, then a name of at most 63; 317 in all.
_QUALIFIED_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"
)
# metav1.Condition's markers, as crdkit.runtime.Condition spells them.
_REASON = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
# The largest quota the scheduler counts: the placer holds milli-units in an int64.
MAX_MILLI = 2**63 - 1
# An int64 has 20 characters at most; 64 leaves room for any quantity a person writes.
_QUOTA_MAX_LENGTH = 64

_MAP_KEYED_BY_NAME = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}
_MAP_KEYED_BY_TYPE = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]}


@dataclass(frozen=True)
class _Rule:
    """A CEL rule on a whole type and its Python twin (a ``crdkit.resources._model.TypeRule``).

    ``crdkit.crd.XValidation`` is the public spelling, but the resources room may not import
    ``crdkit.crd`` (``tests/unit/test_rooms.py``). ``field_path`` makes the apiserver's error
    name the field the rule is about (``spec.flavors[0].resources[0].lendingLimit``), not the
    object holding it.
    """

    rule: str
    message: str
    field_path: str
    check: Callable[[Any], bool] | None = field(default=None, compare=False, repr=False)

    def to_schema(self) -> dict[str, Any]:
        return {"fieldPath": self.field_path, "message": self.message, "rule": self.rule}


def _unique_names(what: str) -> Callable[[list[Any]], list[Any]]:
    """Refuses a list whose entries repeat a name, as the apiserver refuses a map-list with a
    repeated key (pydantic alone would keep both entries)."""

    def check(entries: list[Any]) -> list[Any]:
        seen: set[str] = set()
        for entry in entries:
            if entry.name in seen:
                raise ValueError(f"{what} {entry.name!r} is listed twice")
            seen.add(entry.name)
        return entries

    return check


def _milli(text: str) -> int:
    """A quota in milli-units, with the placer's parser; beyond what an int64 holds, the
    largest it holds.

    The apiserver stores any quantity, ``"100E"`` too, so refusing one here would make the
    Queue unreadable to the scheduler rather than keep it out of the cluster; a quota that
    large means "more than any cluster has", which the int64 maximum means as well.
    """
    try:
        return parse_quantity(text, allow_negative=True)
    except ValueError as error:
        if "out of range" not in str(error):
            raise
        return -MAX_MILLI if text.startswith("-") else MAX_MILLI


def _not_negative(text: str) -> str:
    """The Python twin of the CRD's non-negative quantity pattern, ``minimum: 0`` and
    ``maxLength``."""
    if len(text) > _QUOTA_MAX_LENGTH:
        raise ValueError(f"a quota is at most {_QUOTA_MAX_LENGTH} characters long")
    if _milli(text) < 0:
        raise ValueError(f"{text!r}: a quota must not be negative")
    return text


Quota = Annotated[
    str,
    BeforeValidator(quantity_text),
    AfterValidator(_not_negative),
    WithJsonSchema(
        {
            "x-kubernetes-int-or-string": True,
            # The quantity pattern without its minus sign: strings are checked by the pattern,
            # numbers by the minimum (each keyword applies to its own JSON type).
            "pattern": QUANTITY_PATTERN.replace(r"^(\+|-)?", r"^\+?"),
            "minimum": 0,
            # Bounds the strings the lendingLimit rule parses, which the apiserver prices.
            "maxLength": _QUOTA_MAX_LENGTH,
        }
    ),
]
"""A non-negative ``Quantity``: ``64``, ``"64"``, ``"512Gi"``, ``"1500m"``."""


def _lends_at_most_nominal(resource: "QueueResource") -> bool:
    if resource.lending_limit is None:
        return True
    # Compared in whole milli-units, rounded up: two quotas apart by less than a milli-unit
    # compare equal here and not in CEL. No resource is counted that finely.
    return _milli(resource.lending_limit) <= _milli(resource.nominal)


@dataclass(frozen=True)
class QueueQuota:
    """One resource of one flavor of a queue, in integer milli-units."""

    nominal: int
    """Guaranteed to the queue."""
    borrowing_limit: int | None
    """The most the queue may use beyond ``nominal``, borrowed from its cohort; None: no limit."""
    lending_limit: int | None
    """The most of ``nominal`` the cohort may borrow while the queue does not use it; None: all."""

    @property
    def lendable(self) -> int:
        """What of ``nominal`` the queue lends out at most."""
        return self.nominal if self.lending_limit is None else self.lending_limit

    @property
    def ceiling(self) -> int | None:
        """The most the queue may use of this resource; None: no limit but the cohort's room."""
        if self.borrowing_limit is None:
            return None
        return self.nominal + self.borrowing_limit


class QueueResource(
    ApiModel,
    validations=[
        _Rule(
            # quantity() takes a string, and an int-or-string may hold an int: string() reads
            # both. A malformed quantity is refused by the pattern before rules run.
            "!has(self.lendingLimit) || quantity(string(self.lendingLimit))"
            ".compareTo(quantity(string(self.nominal))) <= 0",
            message="lendingLimit must not exceed nominal",
            field_path=".lendingLimit",
            check=_lends_at_most_nominal,
        )
    ],
):
    """The quota of one resource in one flavor."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    name: str = Field(max_length=317, pattern=_QUALIFIED_NAME)
    """The resource, as pods request it: cpu, memory, nvidia.com/gpu."""
    nominal: Quota
    """Guaranteed to this queue."""
    borrowing_limit: Quota | None = None
    """The most this queue may take beyond nominal from its cohort; absent: no limit."""
    lending_limit: Quota | None = None
    """The most of nominal this queue lends to its cohort; absent: all of it."""

    def quota_milli(self) -> QueueQuota:
        """The three quotas in milli-units (``"64"`` → 64000; beyond an int64, ``MAX_MILLI``)."""
        return QueueQuota(
            nominal=_milli(self.nominal),
            borrowing_limit=None if self.borrowing_limit is None else _milli(self.borrowing_limit),
            lending_limit=None if self.lending_limit is None else _milli(self.lending_limit),
        )


class QueueFlavor(ApiModel):
    """A kind of node and what this queue has of it."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    name: str = Field(max_length=63, pattern=_DNS_LABEL)
    """The flavor's name, unique within the queue (h100, a100-80g, cpu)."""
    node_labels: dict[str, Annotated[str, Field(max_length=63)]] | None = Field(
        default=None, max_length=16
    )
    """The labels a node must have to be of this flavor; empty or absent: every node."""
    resources: Annotated[
        list[QueueResource],
        AfterValidator(_unique_names("resource")),
        Field(min_length=1, max_length=MAX_RESOURCES, json_schema_extra=_MAP_KEYED_BY_NAME),
    ]
    """The quota of each resource, each resource once."""

    def quotas_milli(self) -> dict[str, QueueQuota]:
        """Each resource's quotas in milli-units, by resource name."""
        return {resource.name: resource.quota_milli() for resource in self.resources}

    def matches(self, node_labels: Mapping[str, str]) -> bool:
        """Whether a node with these labels is of this flavor."""
        wanted = self.node_labels or {}
        return all(node_labels.get(key) == value for key, value in wanted.items())


class QueuePreemption(ApiModel):
    """Whom a gang of this queue may evict to start."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    within_queue: Literal["LowerPriority", "Never"] = "LowerPriority"
    """LowerPriority: a gang may evict gangs of lower priority in its own queue; Never: not."""
    fair_share: bool = False
    """On a queue with queues under it: evict to restore the fair share among them."""


def _max_run_time_is_given(spec: "QueueSpec") -> bool:
    return not spec.enforce_max_run_time or spec.max_run_seconds is not None


class QueueSpec(
    ApiModel,
    validations=[
        _Rule(
            "!self.enforceMaxRunTime || has(self.maxRunSeconds)",
            message="enforceMaxRunTime needs maxRunSeconds",
            field_path=".enforceMaxRunTime",
            check=_max_run_time_is_given,
        )
    ],
):
    """What a queue guarantees, lends and borrows, and how its gangs preempt."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    parent: str | None = Field(default=None, max_length=253, pattern=_DNS_SUBDOMAIN)
    """The Queue this queue is in (its cohort); absent: a root queue."""
    weight: float = Field(default=1, ge=0)
    """The queue's weight in the fair share of its cohort's spare quota."""
    flavors: Annotated[
        list[QueueFlavor],
        AfterValidator(_unique_names("flavor")),
        Field(max_length=MAX_FLAVORS, json_schema_extra=_MAP_KEYED_BY_NAME),
    ] = Field(default_factory=list)
    """The quota per flavor, each flavor once; none: the queue only groups the queues in it."""
    preemption: QueuePreemption = Field(
        default_factory=QueuePreemption, json_schema_extra={"default": {}}
    )
    """Whom the queue's gangs may evict (defaults filled in when absent)."""
    max_run_seconds: Int64 | None = Field(default=None, ge=1)
    """The run time assumed for a gang of this queue that declares none."""
    enforce_max_run_time: bool = False
    """Whether a gang running longer than maxRunSeconds is stopped (needs maxRunSeconds)."""

    def flavor(self, name: str) -> QueueFlavor | None:
        """The flavor named ``name``, or None."""
        return next((flavor for flavor in self.flavors if flavor.name == name), None)

    def quotas_milli(self) -> dict[str, dict[str, QueueQuota]]:
        """Every quota in milli-units: by flavor name, then resource name."""
        return {flavor.name: flavor.quotas_milli() for flavor in self.flavors}

    def nominal_milli(self) -> dict[str, int]:
        """The nominal quota of each resource over all flavors, in milli-units: the queue's
        guaranteed share of the cluster, what its weighted share is measured against."""
        total: dict[str, int] = {}
        for flavor in self.flavors:
            for resource in flavor.resources:
                total[resource.name] = total.get(resource.name, 0) + _milli(resource.nominal)
        return total

    def run_seconds(self, declared: float | None) -> float | None:
        """The run time to plan for a gang of this queue: its own, else ``maxRunSeconds``."""
        if declared is not None:
            return declared
        return None if self.max_run_seconds is None else float(self.max_run_seconds)

    @property
    def enforced_run_seconds(self) -> int | None:
        """The run time after which a gang is stopped; None when none is enforced."""
        return self.max_run_seconds if self.enforce_max_run_time else None


class QueueCondition(ApiModel):
    """One aspect of the queue's state, as a metav1.Condition."""

    # The schema of crdkit.runtime.Condition (which this room may not import): the same fields,
    # patterns and bounds, so one converts to the other with
    # QueueCondition.model_validate(condition.model_dump()) and back.

    model_config = ConfigDict(use_attribute_docstrings=True)

    type: str = Field(max_length=316, pattern=_QUALIFIED_NAME)
    """The aspect the condition is about (Ready)."""
    status: Literal["True", "False", "Unknown"]
    """True, False or Unknown."""
    observed_generation: Int64 | None = Field(default=None, ge=0)
    """The .metadata.generation the condition was set for."""
    last_transition_time: Time
    """When the status last changed (not the reason or message)."""
    reason: str = Field(min_length=1, max_length=1024, pattern=_REASON)
    """Why the condition is as it is, as one CamelCase word."""
    message: str = Field(max_length=32768)
    """Details for people; may be empty."""


class QueueResourceUsage(ApiModel):
    """One resource of one flavor as the scheduler last counted it."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    name: str = Field(max_length=317, pattern=_QUALIFIED_NAME)
    """The resource."""
    nominal: Quantity = "0"
    """The queue's nominal quota."""
    used: Quantity = "0"
    """What the queue's admitted gangs hold."""
    borrowed: Quantity = "0"
    """What of used lies beyond nominal, taken from the cohort."""
    lent: Quantity = "0"
    """What of the nominal other queues of the cohort use."""


class QueueFlavorUsage(ApiModel):
    """One flavor as the scheduler last counted it."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    name: str = Field(max_length=63, pattern=_DNS_LABEL)
    """The flavor."""
    resources: Annotated[
        list[QueueResourceUsage],
        AfterValidator(_unique_names("resource")),
        Field(max_length=MAX_RESOURCES, json_schema_extra=_MAP_KEYED_BY_NAME),
    ] = Field(default_factory=list)
    """Each resource of the flavor."""


class QueueStatus(ApiModel):
    """What the scheduler last saw of the queue."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    observed_generation: Int64 | None = Field(default=None, ge=0)
    """The .metadata.generation of the spec this status is about."""
    conditions: Annotated[
        list[QueueCondition],
        Field(max_length=16, json_schema_extra=_MAP_KEYED_BY_TYPE),
    ] = Field(default_factory=list)
    """The queue's conditions (Ready: the scheduler accepted the spec and the tree it is in)."""
    flavors: Annotated[
        list[QueueFlavorUsage],
        AfterValidator(_unique_names("flavor")),
        Field(max_length=MAX_FLAVORS, json_schema_extra=_MAP_KEYED_BY_NAME),
    ] = Field(default_factory=list)
    """Per flavor and resource: nominal, used, borrowed and lent."""
    weighted_share: float | None = Field(default=None, ge=0)
    """What the queue uses beyond its nominal quota, divided by its weight: the fair-share
    order (the lowest share borrows first)."""
    pending_gangs: Int64 = Field(default=0, ge=0)
    """Gangs of the queue waiting to be admitted."""
    admitted_gangs: Int64 = Field(default=0, ge=0)
    """Gangs of the queue admitted and holding quota."""


def _not_its_own_parent(queue: "Queue") -> bool:
    return queue.spec.parent is None or queue.spec.parent != queue.metadata.name


class Queue(
    CustomResource,
    group="scheduling.crdkit.io",
    version="v1alpha1",
    kind="Queue",
    plural="queues",
    scope="Cluster",
    printer_columns=[
        PrinterColumn("Parent", ".spec.parent"),
        PrinterColumn("Weight", ".spec.weight", type="number"),
        PrinterColumn("Pending", ".status.pendingGangs", type="integer"),
        PrinterColumn("Admitted", ".status.admittedGangs", type="integer"),
        PrinterColumn("Share", ".status.weightedShare", type="number"),
        PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
    ],
    validations=[
        _Rule(
            "!has(self.spec.parent) || self.spec.parent != self.metadata.name",
            message="a queue cannot be its own parent",
            field_path=".spec.parent",
            check=_not_its_own_parent,
        )
    ],
):
    """A queue of gangs with a quota per flavor, in a tree of queues sharing what they do not
    use. Cluster-scoped: teams in several namespaces may share one queue."""

    spec: QueueSpec = Field(default_factory=QueueSpec)
    status: QueueStatus | None = None
