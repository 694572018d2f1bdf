"""What a :class:`~crdkit.runtime.manager.Manager` is told, as grouped objects in the manner of
controller-runtime's ``manager.Options{LeaderElection, Metrics, WebhookServer, ...}``::

    Manager(client, ManagerOptions(
        namespace="demo",
        leader_election=LeaderElectionOptions(enabled=True),
        metrics=MetricsOptions(secure=True),
    ))

Each option is declared once, here: its default, its command-line flag (:class:`Flag`, which
``crdkit run`` and ``crdkit scheduler`` turn into click options, see
``crdkit.runtime.cli_common``) and its keyword shorthand (``Manager(client,
leader_election=True)`` is ``Manager(client, ManagerOptions(leader_election=
LeaderElectionOptions(enabled=True)))``). Adding an option is adding one field; the commands,
the shorthand and the tests that walk the fields follow.

This module imports nothing beyond the standard library, so generators (``crdkit gen-rbac``
names the default Lease) read the defaults without loading the HTTP stack.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from pathlib import Path

__all__ = [
    "METRICS_ADDRESS",
    "SECURE_METRICS_ADDRESS",
    "SHARD_ROLES",
    "Flag",
    "LeaderElectionOptions",
    "ManagerOptions",
    "MetricsOptions",
    "OptionField",
    "ShardingOptions",
    "WebhookServerOptions",
    "default_leader_election_id",
    "default_metrics_address",
    "option_fields",
]

METRICS_ADDRESS = "127.0.0.1:8080"
"""Where plain-HTTP ``/metrics`` is served unless told: loopback only, so metrics are never
open to the network by default (``--metrics-bind-address :8080`` opens them, with a warning)."""

SECURE_METRICS_ADDRESS = ":8443"
"""Where ``/metrics`` is served over HTTPS, to tokens RBAC allows, unless told (kubebuilder's)."""


def default_metrics_address(secure: bool) -> str:
    """The metrics address when none is given: HTTPS on every interface, plain on loopback."""
    return SECURE_METRICS_ADDRESS if secure else METRICS_ADDRESS


def default_leader_election_id(controller_names: Iterable[str]) -> str:
    """The Lease name when none is given: the controllers' names, then ``-leader``.

    ``crdkit gen-rbac`` grants get and update on exactly this Lease, so both use this function.
    """
    # A manager of runnables only has no controller names to build one from.
    return ("-".join(sorted(controller_names))[:50] or "crdkit") + "-leader"


FlagType = Literal["text", "switch", "on-off", "seconds", "count", "whole", "port", "directory"]
"""How a flag's value is read: ``switch`` is ``--flag`` alone, ``on-off`` ``--flag/--no-flag``,
``seconds`` a positive number, ``count`` an integer of at least 1, ``whole`` an integer of at
least 0, ``port`` 1 to 65535, ``directory`` a path to a directory."""


@dataclass(frozen=True)
class Flag:
    """An option's spelling on the command line."""

    name: str
    """``--metrics-secure``; an ``on-off`` flag also takes ``--no-metrics-secure``."""
    help: str
    type: FlagType = "text"
    short: str | None = None
    controllers_only: bool = False
    """Only on commands that run reconcilers (``crdkit run``), not on ``crdkit scheduler``."""
    to_option: Callable[[Any], Any] | None = None
    """The option's value from the flag's, where they differ (``--webhook-port 9443`` is the
    bind address ``:9443``)."""
    zero_allowed: bool = False
    """``seconds`` that may be 0 (a grace period), where others must be positive."""
    choices: tuple[str, ...] | None = None
    """The values a ``text`` flag may take (``--policy best-fit``), where it is one of a few."""
    show_default: bool = False
    """Whether ``--help`` shows the default (where the help text does not say it)."""

    @property
    def parameter(self) -> str:
        """The click parameter name (``--leader-elect`` -> ``leader_elect``)."""
        return self.name.lstrip("-").replace("-", "_")


def _meta(shorthand: str, flag: Flag | None = None) -> dict[str, Any]:
    """A field's metadata: its keyword shorthand and its command-line flag."""
    return {"shorthand": shorthand, "flag": flag}


@dataclass(frozen=True)
class LeaderElectionOptions:
    """Run the controllers only while holding a Lease (``coordination.k8s.io``)."""

    enabled: bool = field(
        default=False,
        metadata=_meta(
            "leader_election", Flag("--leader-elect", "Run only while holding a Lease.", "switch")
        ),
    )
    id: str | None = field(
        default=None,
        metadata=_meta(
            "leader_election_id",
            Flag("--leader-election-id", "Name of the Lease (default: the controllers' names)."),
        ),
    )
    namespace: str | None = field(
        default=None,
        metadata=_meta(
            "leader_election_namespace",
            Flag("--leader-election-namespace", "Namespace of the Lease (default: own)."),
        ),
    )
    lease_duration: float = field(
        default=15.0,
        metadata=_meta(
            "lease_duration",
            Flag(
                "--leader-elect-lease-duration",
                "Seconds a standby waits before taking a Lease its holder stopped renewing.",
                "seconds",
            ),
        ),
    )
    renew_deadline: float = field(
        default=10.0,
        metadata=_meta(
            "renew_deadline",
            Flag(
                "--leader-elect-renew-deadline",
                "Seconds the leader keeps trying to renew before it gives the Lease up.",
                "seconds",
            ),
        ),
    )
    retry_period: float = field(
        default=2.0,
        metadata=_meta(
            "retry_period",
            Flag(
                "--leader-elect-retry-period",
                "Seconds between attempts to take or renew the Lease.",
                "seconds",
            ),
        ),
    )
    warm_standby: bool = field(
        default=True,
        metadata=_meta(
            "warm_standby",
            Flag(
                "--warm-standby",
                "A standby lists and watches before it holds the Lease, so it reconciles as "
                "soon as it takes over (default); --no-warm-standby: it starts its caches only "
                "then (less memory on standbys, a full list on each takeover).",
                "on-off",
            ),
        ),
    )
    identity: str | None = field(default=None, metadata=_meta("identity"))
    """The holder's name in the Lease (default: the host name and a random suffix)."""


SHARD_ROLES = ("both", "shard", "sharder")
"""What a replica of a ring does: be a shard and stand for the sharder, or one of the two."""


@dataclass(frozen=True)
class ShardingOptions:
    """Run as one shard of a ring: each replica reconciles the objects labelled for it
    (:mod:`crdkit.runtime.sharding`). The Leases go where the leader Lease would, with its
    timings."""

    enabled: bool = field(
        default=False,
        metadata=_meta(
            "sharding",
            Flag(
                "--shards",
                "Run as one shard of a ring: every replica reconciles the objects the elected "
                "sharder labels for it (consistent hashing, moved with a drain handshake). "
                "Replaces --leader-elect.",
                "switch",
                controllers_only=True,
            ),
        ),
    )
    ring: str | None = field(
        default=None,
        metadata=_meta(
            "shard_ring",
            Flag(
                "--shard-ring",
                "Name of the ring (default: the first controller's name).",
                controllers_only=True,
            ),
        ),
    )
    shard_id: str | None = field(
        default=None,
        metadata=_meta(
            "shard_id",
            Flag(
                "--shard-id",
                "This replica's shard (default: the host name, a pod's name).",
                controllers_only=True,
            ),
        ),
    )
    role: str = field(
        default="both",
        metadata=_meta(
            "shard_role",
            Flag(
                "--shard-role",
                "both: a shard that also stands for the sharder (default); shard: a shard "
                "only; sharder: only stands for the sharder (a small Deployment of its own, so "
                "that no shard carries the ring's metadata).",
                controllers_only=True,
            ),
        ),
    )

    def __post_init__(self) -> None:
        from crdkit.runtime.sharding.labels import validate_name  # the standard library only

        if self.ring is not None:
            validate_name(self.ring, field="sharding.ring")
        if self.shard_id is not None:
            validate_name(self.shard_id, field="sharding.shard_id")
        if self.role not in SHARD_ROLES:
            raise ValueError(
                f"sharding.role: expected one of {', '.join(SHARD_ROLES)}, got {self.role!r}"
            )


@dataclass(frozen=True)
class MetricsOptions:
    """``/metrics``: plain HTTP on loopback unless told, or HTTPS to tokens RBAC allows."""

    bind_address: str | None = field(
        default=None,
        metadata=_meta(
            "metrics_bind_address",
            Flag(
                "--metrics-bind-address",
                "Address of /metrics; '0' turns it off (default: 127.0.0.1:8080, loopback only; "
                ":8443 with --metrics-secure). Plain HTTP on another interface is open to anyone "
                "who reaches it: a warning says so.",
            ),
        ),
    )
    secure: bool = field(
        default=False,
        metadata=_meta(
            "metrics_secure",
            Flag(
                "--metrics-secure",
                "Serve /metrics over HTTPS to bearer tokens RBAC allows 'get /metrics' (checked "
                "with TokenReview and SubjectAccessReview).",
                "on-off",
            ),
        ),
    )
    cert_dir: Path | None = field(
        default=None,
        metadata=_meta(
            "metrics_cert_dir",
            Flag(
                "--metrics-cert-dir",
                "tls.crt and tls.key for --metrics-secure, reloaded when renewed (default: a "
                "self-signed pair).",
                "directory",
            ),
        ),
    )

    @property
    def address(self) -> str:
        """The address served: :attr:`bind_address`, else the default for :attr:`secure`."""
        return (
            default_metrics_address(self.secure) if self.bind_address is None else self.bind_address
        )


@dataclass(frozen=True)
class WebhookServerOptions:
    """The HTTPS server of the admission and conversion webhooks, started if any are added."""

    bind_address: str = field(
        default=":9443",
        metadata=_meta(
            "webhook_bind_address",
            Flag(
                "--webhook-port",
                "Port of the admission webhooks (HTTPS), served if the reconcilers declare any "
                "(default: 9443).",
                "port",
                controllers_only=True,
                to_option=lambda port: f":{port}",
            ),
        ),
    )
    cert_dir: Path | None = field(
        default=None,
        metadata=_meta(
            "webhook_cert_dir",
            Flag(
                "--webhook-cert-dir",
                "Directory of the webhooks' tls.crt and tls.key (cert-manager's Secret), reloaded "
                "when they change (default: a self-signed pair, for development).",
                "directory",
                controllers_only=True,
            ),
        ),
    )
    hosts: tuple[str, ...] = field(
        default=("127.0.0.1", "localhost"), metadata=_meta("webhook_hosts")
    )
    """The names of the self-signed pair made when there is no :attr:`cert_dir`."""
    install: str | None = field(
        default=None,
        metadata=_meta(
            "webhook_install",
            Flag(
                "--webhook-install",
                "Development: apply the webhook configurations NAME, calling this machine "
                "(https://127.0.0.1:PORT) with the self-signed CA.",
                controllers_only=True,
            ),
        ),
    )
    url: str | None = field(default=None, metadata=_meta("webhook_url"))
    """Where the installed configurations call (default ``https://127.0.0.1:<port>``)."""


@dataclass(frozen=True)
class ManagerOptions:
    """Everything a manager is told; see the module docstring."""

    namespace: str | None = field(
        default=None,
        metadata=_meta(
            "namespace",
            Flag(
                "--namespace",
                "Watch only this namespace (default: all).",
                short="-n",
                controllers_only=True,
            ),
        ),
    )
    leader_election: LeaderElectionOptions = field(
        default_factory=LeaderElectionOptions, metadata=_meta("")
    )
    sharding: ShardingOptions = field(default_factory=ShardingOptions, metadata=_meta(""))
    metrics: MetricsOptions = field(default_factory=MetricsOptions, metadata=_meta(""))
    webhook: WebhookServerOptions = field(default_factory=WebhookServerOptions, metadata=_meta(""))
    health_probe_bind_address: str = field(
        default=":8081",
        metadata=_meta(
            "health_probe_bind_address",
            Flag(
                "--health-probe-bind-address",
                "Address of /healthz and /readyz; '0' turns it off (default: :8081).",
            ),
        ),
    )
    max_concurrent_reconciles: int = field(
        default=1,
        metadata=_meta(
            "max_concurrent_reconciles",
            Flag(
                "--max-concurrent-reconciles",
                "Workers per controller, unless the reconciler sets its own (default: 1).",
                "count",
                controllers_only=True,
            ),
        ),
    )
    watch_list: bool = field(
        default=False,
        metadata=_meta(
            "watch_list",
            Flag(
                "--watch-list",
                "Start every informer from a streamed list (sendInitialEvents; WatchList), not "
                "a paged one; an apiserver that refuses it is listed.",
                "switch",
            ),
        ),
    )
    queue_max_wait: float = field(
        default=30.0,
        metadata=_meta(
            "queue_max_wait",
            Flag(
                "--queue-max-wait",
                "Seconds a queued object may wait behind fresher changes (the initial list and "
                "resyncs go behind them) before it is served next; 0: no bound (default: 30).",
                "seconds",
                controllers_only=True,
                zero_allowed=True,
            ),
        ),
    )
    graceful_shutdown_timeout: float = field(
        default=30.0,
        metadata=_meta(
            "graceful_shutdown_timeout",
            Flag(
                "--graceful-shutdown-timeout",
                "Seconds in-flight reconciles get to finish on SIGTERM/SIGINT (default: 30).",
                "seconds",
                controllers_only=True,
                zero_allowed=True,
            ),
        ),
    )
    cache_sync_timeout: float = field(
        default=120.0,
        metadata=_meta(
            "cache_sync_timeout",
            Flag(
                "--cache-sync-timeout",
                "Seconds the caches may take to list everything before giving up (a role that "
                "lacks list or watch is the usual reason: see crdkit gen-rbac --check; default: "
                "120).",
                "seconds",
            ),
        ),
    )

    def __post_init__(self) -> None:
        if self.max_concurrent_reconciles < 1:
            raise ValueError(
                "max_concurrent_reconciles must be at least 1, got "
                f"{self.max_concurrent_reconciles}"
            )
        if self.graceful_shutdown_timeout < 0:
            raise ValueError("graceful_shutdown_timeout must not be negative")
        if self.queue_max_wait < 0:
            raise ValueError("queue_max_wait must not be negative (0: no bound)")
        if self.sharding.enabled and self.leader_election.enabled:
            raise ValueError(
                "sharding and leader_election: a ring elects its own sharder, whose replica "
                "also runs the runnables that need a leader; turn leader_election off"
            )

    @classmethod
    def from_shorthand(cls, shorthand: Mapping[str, Any]) -> ManagerOptions:
        """The options the keyword shorthand names (``leader_election_id="x"``, ...).

        ``TypeError`` for a keyword that is no option, as for any unexpected keyword.
        """
        by_name = {option.shorthand: option for option in option_fields()}
        unknown = sorted(set(shorthand) - set(by_name))
        if unknown:
            raise TypeError(f"Manager() got an unexpected keyword argument {unknown[0]!r}")
        return cls._build({by_name[key].path: value for key, value in shorthand.items()})

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any], *, controllers: bool = True) -> ManagerOptions:
        """The options a command's parsed flags give (click's parameter names to values).

        Only the flags a command with (or, ``controllers=False``, without) reconcilers has
        are read; other keys in ``flags`` are the command's own and are ignored. A flag that
        is absent or ``None`` leaves its option at the default.
        """
        values = {}
        for option in option_fields():
            flag = option.flag
            if flag is None or (flag.controllers_only and not controllers):
                continue
            value = flags.get(flag.parameter)
            if value is None:
                continue  # not given: the option keeps its default
            values[option.path] = flag.to_option(value) if flag.to_option else value
        return cls._build(values)

    @classmethod
    def _build(cls, values: Mapping[tuple[str, ...], Any]) -> ManagerOptions:
        groups: dict[str, dict[str, Any]] = {}
        top: dict[str, Any] = {}
        for path, value in values.items():
            if len(path) == 1:
                top[path[0]] = value
            else:
                groups.setdefault(path[0], {})[path[1]] = value
        for name, fields in groups.items():
            group_type = _GROUPS[name]
            top[name] = group_type(**fields)
        return cls(**top)


_GROUPS: dict[str, type[Any]] = {
    "leader_election": LeaderElectionOptions,
    "sharding": ShardingOptions,
    "metrics": MetricsOptions,
    "webhook": WebhookServerOptions,
}


@dataclass(frozen=True)
class OptionField:
    """One option: where it lives in :class:`ManagerOptions`, its shorthand and its flag."""

    path: tuple[str, ...]
    """``("leader_election", "id")``; a top-level option has one name."""
    shorthand: str
    flag: Flag | None
    default: Any

    def value(self, options: ManagerOptions) -> Any:
        """This option's value in ``options``."""
        value: Any = options
        for name in self.path:
            value = getattr(value, name)
        return value


def _fields(owner: type[Any], prefix: tuple[str, ...]) -> Iterator[OptionField]:
    for item in dataclasses.fields(owner):
        if item.name in _GROUPS and not prefix:
            yield from _fields(_GROUPS[item.name], (item.name,))
            continue
        default = item.default if item.default is not dataclasses.MISSING else None
        yield OptionField(
            (*prefix, item.name), item.metadata["shorthand"], item.metadata["flag"], default
        )


def option_fields() -> list[OptionField]:
    """Every option, groups flattened, in declaration order."""
    return list(_fields(ManagerOptions, ()))
