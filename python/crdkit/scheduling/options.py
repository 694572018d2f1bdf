"""What a `GangScheduler` is told, declared once: each option's default, its check, and its
``crdkit scheduler`` flag (the runtime's `Flag`, which the command turns into a click option as
it does the manager's).

::

    GangScheduler("gangs", ["example.com/leaf"], SchedulerOptions(size_credit=0.0))
    GangScheduler("gangs", ["example.com/leaf"], size_credit=0.0)   # the same, as shorthand

Adding an option is adding one field here; the command's flags follow. A bad value is a
``ValueError`` that names the field. Beyond the standard library this module imports only two
declaration modules (the flags' and the placer policies'), so the command and generators read
it without loading the HTTP stack.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crdkit.placer.policies import DEFAULT_POLICY, POLICIES
from crdkit.runtime.manager_options import Flag, FlagType

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = ["SchedulerOptions", "scheduler_flags"]


def _flag(name: str, help: str, type: FlagType = "text", **spelling: Any) -> dict[str, Any]:
    """A field's metadata: its ``crdkit scheduler`` flag, with its default shown in ``--help``."""
    return {"flag": Flag(name, help, type, show_default=True, **spelling)}


@dataclass(frozen=True)
class SchedulerOptions:
    """Everything a gang scheduler is told beyond its name and topology levels."""

    default_topology: Mapping[str, Any] | None = None
    """The contract's ``topology`` for gangs that ask for none (None: unconstrained, packed as
    tightly as it fits). ``crdkit scheduler --topology`` spells it."""
    topology_by_size: tuple[tuple[int, Mapping[str, Any]], ...] = ()
    """Topology by rule for gangs that ask for none: ``(pods, topology)`` pairs, a gang of at
    least ``pods`` pods taking the topology of the largest rule it reaches, a smaller one the
    default ("gangs of 8 pods or more require one leaf, smaller ones prefer one"). A PodGroup's
    or a pod's own topology still wins. ``crdkit scheduler --topology-rule 8:required:LEVEL``
    spells one."""
    pod_groups: tuple[str, ...] | None = None
    """The PodGroup APIs to watch (the cluster must serve them: their CRDs installed, or
    Kubernetes' own turned on); None: every one crdkit ships a CRD of (``coscheduling``,
    ``volcano``), Kubernetes' gated PodGroup only when named."""
    pod_group_discovery: float | None = None
    """Seconds between looks for the PodGroup APIs crdkit serves that `pod_groups` leaves
    out, each watched from the look that finds it served (a CRD installed after the scheduler
    started); None: no looks. ``crdkit scheduler`` without ``--pod-groups`` watches what the
    cluster serves at start and looks for the rest every 30 s."""
    node_selector: str | None = field(
        default=None, metadata=_flag("--node-selector", "Place only on nodes with these labels.")
    )
    policy: str = field(
        default=DEFAULT_POLICY,
        metadata=_flag("--policy", "How the placer packs a gang.", choices=POLICIES),
    )
    assume_ttl: float = field(
        default=30.0,
        metadata=_flag(
            "--assume-ttl",
            "Seconds a bound pod's assumption waits for the pod to show up bound.",
            "seconds",
        ),
    )
    bind_concurrency: int = field(
        default=32,
        metadata=_flag("--bind-concurrency", "Bind calls in flight at once, all gangs.", "count"),
    )
    retry_backoff: tuple[float, float] = (1.0, 60.0)
    """First and longest wait before a gang whose bind the apiserver refused is tried again
    (the runtime's per-item exponential backoff)."""
    shutdown_grace: float = 10.0
    """Seconds binds and writes in flight get to finish when the scheduler stops."""
    explain_refresh: float = field(
        default=10.0,
        metadata=_flag(
            "--explain-refresh",
            "Seconds a waiting gang's explanation is reused while neither its gang nor the "
            "placer's reason changed (its node counts may lag that long).",
            "seconds",
            zero_allowed=True,
        ),
    )
    reservations_per_priority: int = field(
        default=1,
        metadata=_flag(
            "--reservations-per-priority",
            "Gangs of one priority, first in line, that may hold room while they wait (0: none).",
            "whole",
        ),
    )
    max_reservations: int = field(
        default=16,
        metadata=_flag(
            "--max-reservations",
            "Reservations held at once in all; a higher priority displaces the lowest.",
            "whole",
        ),
    )
    settle_seconds: float = field(
        default=2.0,
        metadata=_flag(
            "--settle-seconds",
            "Seconds at most the nodes a gang frees while the rest of it still runs are held "
            "back, so its domain frees whole (0: place on each as it frees).",
            "seconds",
            zero_allowed=True,
        ),
    )
    pass_pause: float = field(
        default=1.0,
        metadata=_flag(
            "--pass-pause",
            "After a scheduling pass, wait this many times its duration before the next, so "
            "the watch events that came meanwhile are applied first (0: no pause).",
            "seconds",
            zero_allowed=True,
        ),
    )
    size_credit: float = field(
        default=10.0,
        metadata=_flag(
            "--size-credit",
            "Seconds a gang moves ahead in its priority's line for each doubling of its pods, "
            "so big gangs start before domains fragment (0: first come, first served).",
            "seconds",
            zero_allowed=True,
        ),
    )
    start_plan: bool = field(
        default=False,
        metadata=_flag(
            "--start-plan",
            "Once gangs declare run-time bounds (activeDeadlineSeconds, Kueue's "
            "max-exec-time-seconds label, crdkit's max-runtime-seconds annotation), promise "
            "each waiting gang a start and backfill only where no promise is delayed (off: "
            "declared bounds serve backfill into reservations only). Promises cost makespan "
            "and pass time on big clusters (docs/performance.md).",
            "on-off",
        ),
    )
    queues: bool = field(
        default=False,
        metadata=_flag(
            "--queues",
            "Admit gangs by the quota of crdkit Queues (scheduling.crdkit.io/v1alpha1): "
            "guaranteed quota per queue, borrowing and reclaim in cohorts, fair share by "
            "weight. Needs the Queue CRD (crdkit scheduler --install-crds).",
            "on-off",
        ),
    )
    default_queue: str = field(
        default="default",
        metadata=_flag(
            "--default-queue",
            "The Queue of a gang that names none (when no Queue of that name exists, such "
            "gangs are not held by quota).",
        ),
    )
    report_backoff: tuple[float, float] = (1.0, 30.0)
    """A waiting gang's first and longest wait between two reports of the same reason with a
    new message (``(0, 0)``: every change is written at once)."""

    def __post_init__(self) -> None:
        for name in ("reservations_per_priority", "max_reservations"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name}: expected a whole number >= 0, got {value!r}")
        if isinstance(self.bind_concurrency, bool) or self.bind_concurrency < 1:
            raise ValueError(f"bind_concurrency: must be at least 1, got {self.bind_concurrency}")
        for name in ("pass_pause", "size_credit", "settle_seconds", "explain_refresh"):
            number = getattr(self, name)
            if not math.isfinite(number) or number < 0:
                raise ValueError(f"{name}: expected a number >= 0, got {number!r}")
        if not (math.isfinite(self.assume_ttl) and self.assume_ttl > 0):
            raise ValueError(f"assume_ttl: expected a number > 0, got {self.assume_ttl!r}")
        for name in ("retry_backoff", "report_backoff"):
            first, longest = getattr(self, name)
            if not (math.isfinite(longest) and 0 <= first <= longest):
                raise ValueError(
                    f"{name}: expected (first, longest) with 0 <= first <= longest, "
                    f"got {getattr(self, name)!r}"
                )
        if not self.default_queue:
            raise ValueError("default_queue: the name of a Queue, not empty")
        if self.pod_groups is not None:
            object.__setattr__(self, "pod_groups", tuple(self.pod_groups))
        discovery = self.pod_group_discovery
        if discovery is not None and not (math.isfinite(discovery) and discovery > 0):
            raise ValueError(
                f"pod_group_discovery: expected a number of seconds > 0 or None, got {discovery!r}"
            )
        if self.policy not in POLICIES:
            raise ValueError(
                f"policy: unknown policy {self.policy!r} (one of {', '.join(POLICIES)})"
            )
        rules = []
        for index, rule in enumerate(self.topology_by_size):
            pods, topology = rule
            if isinstance(pods, bool) or not isinstance(pods, int) or pods < 1:
                raise ValueError(
                    f"topology_by_size[{index}]: expected a number of pods >= 1, got {pods!r}"
                )
            if topology.get("mode") not in ("required", "preferred", "unconstrained"):
                raise ValueError(
                    f"topology_by_size[{index}]: expected a topology mode of required, preferred "
                    f"or unconstrained, got {topology.get('mode')!r}"
                )
            rules.append((pods, dict(topology)))
        if len({pods for pods, _ in rules}) != len(rules):
            raise ValueError("topology_by_size: two rules for the same number of pods")
        object.__setattr__(self, "topology_by_size", tuple(sorted(rules, reverse=True)))
        if self.default_topology is not None:
            object.__setattr__(self, "default_topology", dict(self.default_topology))

    def replace(self, **changes: Any) -> SchedulerOptions:
        """These options with ``changes`` (field names; an unknown one is a ``TypeError``
        naming it)."""
        known = {f.name for f in dataclasses.fields(self)}
        for name in changes:
            if name not in known:
                raise TypeError(f"{name}: not an option of the gang scheduler")
        return dataclasses.replace(self, **changes)


def scheduler_flags() -> Iterator[tuple[str, Flag, Any]]:
    """Each option that has a flag: its field name, its flag and its default."""
    for option in dataclasses.fields(SchedulerOptions):
        flag = option.metadata.get("flag")
        if flag is not None:
            yield option.name, flag, option.default
