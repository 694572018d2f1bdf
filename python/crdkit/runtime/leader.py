"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's ``leaderelection``.

Only the holder of the Lease runs controllers; the other replicas keep warm caches and wait.

- **Acquire**: read the Lease; create it if missing. If another identity holds it, it is still
  valid while its record keeps changing: each replica notes *its own* clock time whenever it sees
  the record change, and the lease expires ``lease_duration`` after that (clock skew between
  machines cannot shorten it). An expired or released lease is taken by updating it with our
  identity, guarded by its resourceVersion so two candidates cannot both win.
- **Renew**: the leader rewrites ``renewTime`` every ``retry_period``. If it cannot renew for
  ``renew_deadline`` (shorter than ``lease_duration``), it gives up leadership *before* anyone
  else can take it, and its controllers stop at once. Each attempt (read and write of the
  Lease) has its own timeout, ``attempt_timeout`` (a quarter of the renew deadline by
  default), and a failed attempt is retried every ``retry_period`` until the deadline: one
  request stuck on a dead connection is abandoned (its connection closed) and the next attempt
  goes out on a fresh one, so a partition shorter than the renew deadline (by more than one
  attempt timeout) costs nothing.
- **Release**: on a clean shutdown the leader empties ``holderIdentity`` so a successor takes
  over immediately rather than after ``lease_duration``.

A candidate retries every ``retry_period`` (minus up to 10 % jitter, so replicas do not poll in
lockstep) and also exactly when the lease it watches is due to expire. It notices the dead
leader's last renewal within one retry period, so a dead leader is replaced within
``lease_duration + retry_period`` of the moment it died.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from crdkit.client.errors import AlreadyExists, Conflict, KubernetesError, NotFound
from crdkit.resources import Lease, LeaseSpec, ObjectMeta
from crdkit.runtime.errors import ControllerError
from crdkit.runtime.metrics import runtime_metrics

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from crdkit.client import Client
    from crdkit.runtime.ratelimit import Clock

__all__ = ["LeaderElectionConfig", "LeaderElectionLost", "LeaderElector", "default_identity"]

log = logging.getLogger("crdkit.runtime.leader")

_DEADLINE_SLACK = 1e-6
"""Seconds of renew deadline too few to try once more: the lease counts as lost. A float clock
reading one ulp short of the deadline would otherwise ask for another attempt with no time to
make it, and a sleep of no time (which, on a virtual clock, never lets time move)."""


def default_identity() -> str:
    """``<hostname>_<uuid>``, controller-runtime's default: unique even for two pods on a node."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElectionLost(ControllerError):
    """This replica was the leader and could not renew its lease in time."""


@dataclass(frozen=True)
class LeaderElectionConfig:
    """Which Lease to hold and the timings (controller-runtime defaults: 15 s / 10 s / 2 s)."""

    lease_name: str
    lease_namespace: str
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True
    attempt_timeout: float | None = None
    """How long one acquire or renew attempt may take; ``None``: ``renew_deadline / 4``."""
    labels: tuple[tuple[str, str], ...] = ()
    """Labels the Lease carries (a shard's ring and id, so the sharder can list them)."""

    def __post_init__(self) -> None:
        if not self.lease_name:
            raise ValueError("lease_name must not be empty")
        if not self.lease_namespace:
            raise ValueError("lease_namespace must not be empty")
        if not self.identity:
            raise ValueError("identity must not be empty")
        if self.retry_period <= 0:
            raise ValueError(f"retry_period must be positive, got {self.retry_period}")
        if not self.renew_deadline > self.retry_period:
            raise ValueError(
                f"renew_deadline ({self.renew_deadline}) must be greater than retry_period "
                f"({self.retry_period})"
            )
        if not self.lease_duration > self.renew_deadline:
            raise ValueError(
                f"lease_duration ({self.lease_duration}) must be greater than renew_deadline "
                f"({self.renew_deadline})"
            )
        if self.attempt_timeout is not None and not 0 < self.attempt_timeout <= (
            self.renew_deadline
        ):
            raise ValueError(
                f"attempt_timeout ({self.attempt_timeout}) must be positive and at most "
                f"renew_deadline ({self.renew_deadline})"
            )

    @property
    def effective_attempt_timeout(self) -> float:
        """The per-attempt timeout in force: ``attempt_timeout`` or a quarter of the deadline.

        A quarter leaves room for three more attempts after one that hangs, each on a new
        connection, before the deadline runs out.
        """
        return self.attempt_timeout or self.renew_deadline / 4


class LeaderElector:
    """Acquires, renews and releases one Lease for one identity."""

    def __init__(
        self,
        client: Client,
        config: LeaderElectionConfig,
        *,
        registry: CollectorRegistry | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.client = client
        self.config = config
        self._clock = clock
        self._observed_version: str | None = None
        self._observed_holder: str | None = None
        self._observed_duration = config.lease_duration
        self._observed_at = 0.0
        self._last_renew = 0.0
        self._leading = False
        self._status = runtime_metrics(registry).leader_election_master_status.labels(
            config.lease_name
        )
        self._status.set(0)

    @property
    def is_leader(self) -> bool:
        """Whether this replica holds the lease (as of its last successful renewal)."""
        return self._leading

    @property
    def observed_holder(self) -> str | None:
        """The holder identity last seen on the lease."""
        return self._observed_holder

    # -- public loop pieces -----------------------------------------------------------------

    async def acquire(self) -> None:
        """Return once this replica holds the lease (retrying forever; cancellable)."""
        log.info(
            "attempting to acquire leader lease %s/%s",
            self.config.lease_namespace,
            self.config.lease_name,
            extra={"fields": {"identity": self.config.identity}},
        )
        while True:
            if await self._attempt(self.config.effective_attempt_timeout):
                self._set_leading(True)
                log.info(
                    "successfully acquired lease %s/%s",
                    self.config.lease_namespace,
                    self.config.lease_name,
                    extra={"fields": {"identity": self.config.identity}},
                )
                return
            await asyncio.sleep(self._next_attempt_delay())

    async def hold(self) -> None:
        """Renew the lease until that fails for ``renew_deadline``; then raise
        :class:`LeaderElectionLost`. Call after :meth:`acquire`; cancel to stop renewing."""
        if not self._leading:
            raise RuntimeError("hold() needs the lease: call acquire() first")
        cfg = self.config
        while True:
            await asyncio.sleep(cfg.retry_period * (1 - random.random() * 0.1))
            while True:
                started = self._clock()
                remaining = self._deadline_left(started)
                renewed = False
                if remaining > _DEADLINE_SLACK:
                    # Never more than one attempt's share of the deadline: a request that
                    # hangs on a dead connection must leave time for the next ones.
                    renewed = await self._attempt(min(remaining, cfg.effective_attempt_timeout))
                if renewed:
                    break
                now = self._clock()
                deadline_left = self._deadline_left(now)
                if deadline_left <= _DEADLINE_SLACK:
                    self._set_leading(False)
                    log.error(
                        "failed to renew lease %s/%s within %.1fs: leadership lost",
                        cfg.lease_namespace,
                        cfg.lease_name,
                        cfg.renew_deadline,
                    )
                    raise LeaderElectionLost(
                        f"could not renew lease {cfg.lease_namespace}/{cfg.lease_name}"
                    )
                # The next attempt one retry period after this one started (at once if this
                # one took longer), and never past the deadline.
                await asyncio.sleep(min(max(0.0, started + cfg.retry_period - now), deadline_left))

    def _deadline_left(self, now: float) -> float:
        """How long the lease may go unrenewed from ``now``: one expression for both "is there
        time to try" and "is the lease lost", so no clock reading makes both answers no (a
        deadline computed as ``renew + deadline - now`` could be 0 while ``now - renew`` was an
        ulp short of the deadline, and the elector slept 0 s for ever on a virtual clock)."""
        return self.config.renew_deadline - (now - self._last_renew)

    async def release(self) -> bool:
        """Give the lease up now (clean shutdown) so a successor need not wait for it to expire."""
        if not self._leading:
            return False
        self._set_leading(False)
        try:
            # Bounded like any attempt: a shutdown must not hang on a dead connection (the
            # lease then simply expires).
            async with asyncio.timeout(self.config.effective_attempt_timeout):
                lease = await self.client.get(
                    Lease, self.config.lease_name, namespace=self.config.lease_namespace
                )
                if lease.spec.holder_identity != self.config.identity:
                    return False
                now = datetime.now(UTC)
                lease.spec = LeaseSpec(
                    holder_identity=None,
                    lease_duration_seconds=1,
                    acquire_time=now,
                    renew_time=now,
                    lease_transitions=lease.spec.lease_transitions,
                )
                await self.client.replace(lease)
        except (KubernetesError, TimeoutError) as error:
            log.warning(
                "could not release lease %s: %s", self.config.lease_name, str(error) or "timed out"
            )
            return False
        log.info("released lease %s/%s", self.config.lease_namespace, self.config.lease_name)
        return True

    # -- one attempt ------------------------------------------------------------------------

    def _set_leading(self, leading: bool) -> None:
        self._leading = leading
        self._status.set(1 if leading else 0)

    def _next_attempt_delay(self) -> float:
        retry = self.config.retry_period * (1 - random.random() * 0.1)
        if self._observed_holder:
            # Wake up right when the holder's lease runs out, not up to a retry period later.
            expires_in = self._observed_at + self._observed_duration - self._clock()
            if 0 < expires_in < retry:
                return expires_in + 0.01
        return retry

    def _observe(self, lease: Lease, now: float) -> None:
        version = lease.metadata.resource_version
        if version != self._observed_version:
            self._observed_version = version
            self._observed_holder = lease.spec.holder_identity
            self._observed_duration = float(
                lease.spec.lease_duration_seconds or self.config.lease_duration
            )
            self._observed_at = now

    async def _attempt(self, limit: float) -> bool:
        """One acquire-or-renew, abandoned after ``limit`` seconds (then: not renewed).

        Cancelling the stuck request closes its connection, so the next attempt does not
        queue behind it on the same dead socket.
        """
        try:
            async with asyncio.timeout(limit):
                return await self._try_acquire_or_renew()
        except TimeoutError:
            log.warning(
                "lease %s/%s: attempt timed out after %.1fs",
                self.config.lease_namespace,
                self.config.lease_name,
                limit,
            )
            return False

    async def _try_acquire_or_renew(self) -> bool:
        cfg = self.config
        now = self._clock()
        wall = datetime.now(UTC)
        try:
            lease = await self.client.get(Lease, cfg.lease_name, namespace=cfg.lease_namespace)
        except NotFound:
            try:
                created = await self.client.create(
                    Lease(
                        metadata=ObjectMeta(
                            name=cfg.lease_name,
                            namespace=cfg.lease_namespace,
                            labels=dict(cfg.labels),
                        ),
                        spec=LeaseSpec(
                            holder_identity=cfg.identity,
                            lease_duration_seconds=round(cfg.lease_duration),
                            acquire_time=wall,
                            renew_time=wall,
                            lease_transitions=0,
                        ),
                    )
                )
            except (AlreadyExists, Conflict):
                return False
            except KubernetesError as error:
                log.warning("error creating lease %s: %s", cfg.lease_name, error)
                return False
            self._observe(created, now)
            self._last_renew = now
            return True
        except KubernetesError as error:
            log.warning("error retrieving lease %s: %s", cfg.lease_name, error)
            return False

        self._observe(lease, now)
        holder = lease.spec.holder_identity
        is_ours = holder == cfg.identity
        still_valid = self._observed_at + self._observed_duration > now
        if holder and not is_ours and still_valid:
            return False
        spec = lease.spec
        lease.metadata.labels.update(cfg.labels)
        lease.spec = LeaseSpec(
            holder_identity=cfg.identity,
            lease_duration_seconds=round(cfg.lease_duration),
            acquire_time=spec.acquire_time if is_ours and self._leading else wall,
            renew_time=wall,
            lease_transitions=(spec.lease_transitions or 0) + (0 if is_ours else 1),
        )
        try:
            updated = await self.client.replace(lease)
        except KubernetesError as error:
            if not isinstance(error, Conflict):
                log.warning("error updating lease %s: %s", cfg.lease_name, error)
            return False
        self._observe(updated, now)
        self._last_renew = now
        return True
