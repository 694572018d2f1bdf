"""``coordination.k8s.io/v1`` Lease: the lock behind leader election."""

from __future__ import annotations

from pydantic import Field

from crdkit.resources._model import MicroTime, OpenModel
from crdkit.resources.object import KubernetesObject

__all__ = ["Lease", "LeaseSpec"]


class LeaseSpec(OpenModel):
    """Who holds the lease and until when; times are MicroTime (six fractional digits)."""

    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: MicroTime | None = None
    renew_time: MicroTime | None = None
    lease_transitions: int | None = None
    strategy: str | None = None
    preferred_holder: str | None = None


class Lease(
    KubernetesObject, group="coordination.k8s.io", version="v1", kind="Lease", plural="leases"
):
    spec: LeaseSpec = Field(default_factory=LeaseSpec)
