"""Least-privilege RBAC for a set of reconcilers, as ``crdkit gen-rbac`` writes it.

What each controller needs follows from its declarations:

=====================  ==========================================================================
primary kind           get, list, watch, patch, update (finalizers); ``/status``: get, patch,
                       update; ``/finalizers``: update (so children may block its deletion)
``owns``               get, list, watch, create, update, patch, delete
``watches``            get, list, watch (``(kind, map)`` tuples and ``Watch`` objects alike)
``rbac`` attribute     whatever it lists (what ``reconcile`` touches beyond the above)
``runnables``          the ``rbac`` of each ``Runnable`` class listed (a ``Runnable`` class can
                       also be given on its own, e.g. ``crdkit gen-rbac mod:Binder``)
``ClientRole``         a class given on its own that is no operator (``crdkit queue``'s
                       ``QueueReader``): its ``rbac``, and no Lease or Events unless an
                       operator's class is given with it (``runtime.client_role``)
``setup``              for a reconciler given as an instance (``crdkit gen-rbac`` builds one
                       as ``crdkit run`` does): get, list, watch of every informer its
                       ``setup`` creates (a ``ClusterMirror``'s Nodes and Pods), and the
                       ``rbac`` of every Runnable it adds (``runtime.setup_probe``)
leader election        ``coordination.k8s.io`` leases: create, and get and update of the one
                       Lease by name: exactly what the elector calls (``runtime/leader.py``)
``home_rbac``          a Runnable's rules in the operator's own namespace (the Lease's), in
                       the Lease's Role: a scheduler's published queue
sharding               leases: create, get, update, list, watch, by no name (each shard
                       creates its own Lease, and the sharder watches the ring's)
events                 ``events.k8s.io`` events: create, patch (the recorder: a new Event, then
                       its ``series`` patched); the same on core (``""``) events, which
                       runnables such as a scheduler record with the older API
=====================  ==========================================================================

Where each right is granted follows from where the operator reads and writes:

* Cluster-wide (``crdkit run`` without ``--namespace``): the informers list and watch every
  namespace, so the kinds' rules are one ClusterRole.
* ``namespace=NS`` (``crdkit run --namespace NS``): namespaced kinds are only watched and
  written in NS, so their rules are a Role in NS. Cluster-scoped kinds (Nodes, Namespaces) are
  watched cluster-wide even then, and a Role cannot grant them: they stay in a ClusterRole.
* The Lease is a Role in the Lease's namespace (as kubebuilder grants it), never cluster-wide:
  an operator must not be able to take over other components' Leases in kube-system.
* Events: the recorder files an Event in the namespace of the object it is about (``default``
  for a cluster-scoped one). A namespaced operator's Events therefore go in its Role (plus a
  Role in ``default`` when a primary kind is cluster-scoped). A cluster-wide operator records
  Events in whichever namespace its objects live in, which no set of Roles written in advance
  can cover, so there they are part of the ClusterRole.

An extra ``rbac`` rule is scoped like the kind it names when crdkit knows that kind (any
imported ``KubernetesObject`` class); a resource crdkit has no class for is granted in the
ClusterRole, since a Role could not grant it if it is cluster-scoped.

Rules for the same API group and resource are merged; the output is sorted so it diffs well.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from crdkit.resources import KubernetesObject, resource_info
from crdkit.resources.plural import pluralize
from crdkit.runtime.client_role import ClientRole
from crdkit.runtime.manager_options import default_leader_election_id
from crdkit.runtime.reconciler import Reconciler
from crdkit.runtime.runnable import Runnable
from crdkit.runtime.setup_probe import probe_setup
from crdkit.runtime.watch import declared_watches

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from crdkit.runtime.reconciler import RbacRule

RbacSource = type[Reconciler[Any]] | type[Runnable] | type[ClientRole] | Reconciler[Any]
"""What gen-rbac reads declarations from: a reconciler, runnable or client-role class, or a
reconciler built as ``crdkit run`` builds it, whose ``setup`` is probed as well."""

__all__ = [
    "RbacSource",
    "cluster_role",
    "cluster_role_binding",
    "rbac_documents",
    "rbac_rules",
    "role",
    "role_binding",
    "source_class",
]


def source_class(
    source: RbacSource,
) -> type[Reconciler[Any]] | type[Runnable] | type[ClientRole]:
    """The class of an :data:`RbacSource` (a built reconciler's type)."""
    return type(source) if isinstance(source, Reconciler) else source


RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
_READ = ("get", "list", "watch")
_OWN = (*_READ, "create", "update", "patch", "delete")
_EVENTS = ("create", "patch")
_VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
_CLUSTER = ""  # the key of ClusterRole rules; other keys are namespaces

Rules = dict[tuple[str, str], set[str]]


def _sorted_verbs(verbs: Iterable[str]) -> list[str]:
    rank = {verb: i for i, verb in enumerate(_VERB_ORDER)}
    return sorted(set(verbs), key=lambda verb: (rank.get(verb, len(rank)), verb))


def _known_scopes() -> dict[tuple[str, str], bool]:
    """(group, plural) → namespaced, for every resource class imported so far."""
    scopes: dict[tuple[str, str], bool] = {}
    pending: list[type[KubernetesObject]] = [KubernetesObject]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        info = cls.__resource__
        if info is not None:
            scopes[(info.group, info.plural)] = info.namespaced
    return scopes


def rbac_rules(
    reconcilers: Iterable[RbacSource], *, namespace: str | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The rules the reconcilers' (and runnables') kinds need, by where they are granted
    (Lease aside).

    Keys are namespaces (one Role each) and ``""`` for the ClusterRole; ``namespace`` is the
    one namespace the operator watches, ``None`` for all (see the module docstring).
    """
    needed: dict[str, Rules] = defaultdict(lambda: defaultdict(set))
    scopes = _known_scopes()
    local = namespace if namespace is not None else _CLUSTER

    def grant(
        kind: type[Any], verbs: Iterable[str], subresource: str = "", *, everywhere: bool = False
    ) -> None:
        # ``everywhere``: watched in all namespaces even when the operator's are limited.
        info = resource_info(kind)
        resource = f"{info.plural}/{subresource}" if subresource else info.plural
        scoped = info.namespaced and not everywhere
        needed[local if scoped else _CLUSTER][(info.group, resource)].update(verbs)

    def extra(owner: type[Any], rules: Sequence[RbacRule]) -> None:
        for group, resource, verbs in rules:
            if isinstance(verbs, str):
                raise TypeError(f"{owner.__qualname__}.rbac: verbs must be a list, got {verbs!r}")
            namespaced = scopes.get((group, resource.split("/", 1)[0]), False)
            needed[local if namespaced else _CLUSTER][(group, resource)].update(verbs)

    count = 0
    # Events are recorded by a manager's parts; a ClientRole alone runs none.
    event_namespaces: set[str] = set()
    for source in reconcilers:
        count += 1
        if isinstance(source, type) and issubclass(source, ClientRole):
            extra(source, source.rbac)
            continue
        event_namespaces.add(local)
        if isinstance(source, type) and issubclass(source, Runnable):
            extra(source, source.rbac)
            continue
        if isinstance(source, Reconciler):
            attached = probe_setup(source, namespace=namespace)
            for informer in attached.informers:
                if isinstance(informer.resource, type):
                    grant(informer.resource, _READ, everywhere=not informer.namespaced_watch)
                else:  # an informer of a kind crdkit has no class for
                    gvk = informer.resource
                    where = local if informer.namespaced_watch else _CLUSTER
                    resource = pluralize(gvk.kind).lower()
                    needed[where][(gvk.group, resource)].update(_READ)
            for runnable_class in attached.runnables:
                extra(runnable_class, runnable_class.rbac)
            source = type(source)
        reconciler = source
        primary = reconciler.primary_kind()
        grant(primary, (*_READ, "patch", "update"))
        grant(primary, ("get", "patch", "update"), "status")
        grant(primary, ("update",), "finalizers")
        if namespace is not None and not resource_info(primary).namespaced:
            event_namespaces.add("default")  # where the recorder files their Events
        for owned in reconciler.owns:
            grant(owned, _OWN)
        for watch in declared_watches(reconciler):
            grant(watch.kind, _READ)
        extra(reconciler, reconciler.rbac)
        for runnable in reconciler.runnables:
            if not (isinstance(runnable, type) and issubclass(runnable, Runnable)):
                raise TypeError(
                    f"{reconciler.__qualname__}.runnables: expected Runnable subclasses, "
                    f"got {runnable!r}"
                )
            extra(runnable, runnable.rbac)
    if count == 0:
        raise ValueError("at least one reconciler is needed")
    for where in event_namespaces:
        needed[where][("events.k8s.io", "events")].update(_EVENTS)
        needed[where][("", "events")].update(_EVENTS)
    return {
        where: [
            {"apiGroups": [group], "resources": [resource], "verbs": _sorted_verbs(verbs)}
            for (group, resource), verbs in sorted(rules.items())
        ]
        for where, rules in sorted(needed.items())
        if rules
    }


def _lease_rules(lease_name: str) -> list[dict[str, Any]]:
    # create cannot be limited to a name (the object does not exist yet); get and update can.
    return [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [lease_name],
            "verbs": ["get", "update"],
        },
    ]


def _home_rules(sources: Sequence[RbacSource]) -> list[dict[str, Any]]:
    """The ``home_rbac`` of the runnables given, or listed by the reconcilers given: granted
    in the operator's own namespace, beside its Lease."""
    runnables: list[type[Runnable]] = []
    for source in map(source_class, sources):
        if issubclass(source, Runnable):
            runnables.append(source)
        elif issubclass(source, Reconciler):
            runnables.extend(r for r in source.runnables if issubclass(r, Runnable))
    merged: dict[tuple[str, str], set[str]] = defaultdict(set)
    for runnable in runnables:
        for group, resource, verbs in runnable.home_rbac:
            merged[(group, resource)].update(verbs)
    return [
        {"apiGroups": [group], "resources": [resource], "verbs": _sorted_verbs(verbs)}
        for (group, resource), verbs in sorted(merged.items())
    ]


def _shard_lease_rules() -> list[dict[str, Any]]:
    # A shard's Lease is named by its id, known only when it runs: no resourceNames.
    return [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "verbs": ["create", "get", "list", "update", "watch"],
        }
    ]


def cluster_role(name: str, reconcilers: Iterable[RbacSource]) -> dict[str, Any]:
    """The ClusterRole of a cluster-wide operator: :func:`rbac_rules`, the Lease aside."""
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rbac_rules(reconcilers).get(_CLUSTER, []),
    }


def cluster_role_binding(name: str, service_account: str, namespace: str) -> dict[str, Any]:
    """Binds the ClusterRole ``name`` to the operator's service account."""
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
    }


def role(name: str, namespace: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    """A Role in ``namespace``."""
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "Role",
        "metadata": {"name": name, "namespace": namespace},
        "rules": rules,
    }


def role_binding(
    name: str, namespace: str, service_account: str, service_account_namespace: str
) -> dict[str, Any]:
    """Binds the Role ``name`` of ``namespace`` to the operator's service account."""
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [
            {
                "kind": "ServiceAccount",
                "name": service_account,
                "namespace": service_account_namespace,
            }
        ],
    }


def rbac_documents(
    reconcilers: Iterable[RbacSource],
    *,
    name: str = "crdkit-operator",
    namespace: str | None = None,
    service_account: str | None = None,
    service_account_namespace: str = "default",
    leader_election_id: str | None = None,
    leader_election_namespace: str | None = None,
    sharding: bool = False,
) -> list[dict[str, Any]]:
    """Every role (and, with ``service_account``, binding) the operator needs, in apply order.

    ``namespace``, ``leader_election_id`` and ``leader_election_namespace`` mean what they mean
    to ``crdkit run``; the Lease's namespace defaults as the manager's does in a pod: the watched
    namespace, else the service account's. Each role is followed by its binding: a ClusterRole
    ``name`` (when anything is cluster-wide), a Role ``name`` per namespace, and the Role
    ``<name>-leader-election``. ``sharding`` (``crdkit run --shards``) grants that Role the
    ring's Leases instead of the one leader Lease.
    """
    classes = list(reconcilers)
    rules = rbac_rules(classes, namespace=namespace)
    # A ClientRole elects no leader: alone, it needs no Lease.
    operator = not all(issubclass(source_class(s), ClientRole) for s in classes)
    documents: list[dict[str, Any]] = []
    cluster_rules = rules.pop(_CLUSTER, [])
    if cluster_rules:
        documents.append(
            {
                "apiVersion": RBAC_API_VERSION,
                "kind": "ClusterRole",
                "metadata": {"name": name},
                "rules": cluster_rules,
            }
        )
        if service_account:
            documents.append(cluster_role_binding(name, service_account, service_account_namespace))
    lease_name = leader_election_id or default_leader_election_id(
        cls.controller_name() for cls in map(source_class, classes) if issubclass(cls, Reconciler)
    )
    lease_namespace = leader_election_namespace or namespace or service_account_namespace
    roles = [(name, where, namespaced) for where, namespaced in rules.items()]
    lease_rules = _shard_lease_rules() if sharding else _lease_rules(lease_name)
    lease_rules += _home_rules(classes)
    if operator:
        roles.append((f"{name}-leader-election", lease_namespace, lease_rules))
    for role_name, where, role_rules in roles:
        documents.append(role(role_name, where, role_rules))
        if service_account:
            documents.append(
                role_binding(role_name, where, service_account, service_account_namespace)
            )
    return documents
