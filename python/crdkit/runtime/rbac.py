"""Least-privilege RBAC for a set of reconcilers, as ``crdkit gen-rbac`` writes it.

What each controller needs follows from its declarations:

=====================  ==========================================================================
primary kind           get, list, watch, patch, update (finalizers); ``/status``: get, patch,
                       update; ``/finalizers``: update (so children may block its deletion)
``owns``               get, list, watch, create, update, patch, delete
``watches``            get, list, watch
``rbac`` attribute     whatever it lists (what ``reconcile`` touches beyond the above)
always                 ``coordination.k8s.io`` leases (leader election), ``events.k8s.io``
                       events (the recorder)
=====================  ==========================================================================

Rules for the same API group and resource are merged; the output is sorted so it diffs well.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from crdkit.resources import resource_info

if TYPE_CHECKING:
    from collections.abc import Iterable

    from crdkit.runtime.reconciler import Reconciler

__all__ = ["cluster_role", "cluster_role_binding", "rbac_rules"]

_READ = ("get", "list", "watch")
_OWN = (*_READ, "create", "update", "patch", "delete")
_LEASE = (*_READ, "create", "update", "patch", "delete")
_VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


def _sorted_verbs(verbs: Iterable[str]) -> list[str]:
    rank = {verb: i for i, verb in enumerate(_VERB_ORDER)}
    return sorted(set(verbs), key=lambda verb: (rank.get(verb, len(rank)), verb))


def rbac_rules(reconcilers: Iterable[type[Reconciler[Any]]]) -> list[dict[str, Any]]:
    """The merged ClusterRole rules the reconcilers need (see the module docstring)."""
    needed: dict[tuple[str, str], set[str]] = defaultdict(set)

    def grant(kind: type[Any], verbs: Iterable[str], subresource: str = "") -> None:
        info = resource_info(kind)
        resource = f"{info.plural}/{subresource}" if subresource else info.plural
        needed[(info.group, resource)].update(verbs)

    count = 0
    for reconciler in reconcilers:
        count += 1
        primary = reconciler.primary_kind()
        grant(primary, (*_READ, "patch", "update"))
        grant(primary, ("get", "patch", "update"), "status")
        grant(primary, ("update",), "finalizers")
        for owned in reconciler.owns:
            grant(owned, _OWN)
        for watched, _ in reconciler.watches:
            grant(watched, _READ)
        for group, resource, verbs in reconciler.rbac:
            if isinstance(verbs, str):
                raise TypeError(
                    f"{reconciler.__qualname__}.rbac: verbs must be a list, got {verbs!r}"
                )
            needed[(group, resource)].update(verbs)
    if count == 0:
        raise ValueError("at least one reconciler is needed")
    needed[("coordination.k8s.io", "leases")].update(_LEASE)
    needed[("events.k8s.io", "events")].update(("create", "patch", "update"))
    return [
        {"apiGroups": [group], "resources": [resource], "verbs": _sorted_verbs(verbs)}
        for (group, resource), verbs in sorted(needed.items())
    ]


def cluster_role(name: str, reconcilers: Iterable[type[Reconciler[Any]]]) -> dict[str, Any]:
    """A ``rbac.authorization.k8s.io/v1`` ClusterRole with :func:`rbac_rules`."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rbac_rules(reconcilers),
    }


def cluster_role_binding(name: str, service_account: str, namespace: str) -> dict[str, Any]:
    """Binds the ClusterRole ``name`` to the operator's service account."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
    }
