"""What the fake apiserver knows about each kind it serves: REST names and server behaviour.

The behaviour differs per kind in ways a reconciler notices, so each ``FakeKind`` says it
(measured on the local control plane's kube-apiserver v1.37, see
tests/integration/testing/test_fake_differential.py and test_fake_builtin_kinds.py):
whether ``metadata.generation`` is tracked (CRDs, Pods, workloads; not ConfigMaps),
whether ``status`` is a subresource (then the main resource ignores status changes and the
status subresource ignores everything else), whether a delete answers with the deleted object
or a bare ``Status``, whether an update without ``resourceVersion`` is allowed, and which
field selectors beyond ``metadata.name``/``metadata.namespace`` the kind supports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import crdkit.resources as resources
from crdkit.resources import CustomResource, KubernetesObject, ResourceInfo, resource_info
from crdkit.testing.errors import KitError

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["BUILTIN_KINDS", "FakeKind", "KindRegistry", "UnknownKind"]


class UnknownKind(KitError, LookupError):
    """A kind the fake cluster was not told about; the message says how to register it."""


@dataclass(frozen=True)
class FakeKind:
    """One served kind and how the apiserver treats it."""

    info: ResourceInfo
    status_subresource: bool
    tracks_generation: bool
    returns_deleted_object: bool = True
    unconditional_update: bool = True
    strategic_merge_patch: bool = True
    # Built-in lists leave apiVersion and kind out of their items; custom resource lists keep them.
    typed_list_items: bool = False
    # A built-in kind without a status field (ConfigMap) drops a "status" sent to it, as Go's
    # decoding drops any field the type does not have.
    has_status: bool = True
    field_selectors: frozenset[str] = field(default_factory=frozenset)
    # A CRD's status strategy keeps everything of the stored object but its status, so a
    # status patch that changes metadata (its uid, even) is applied as if it did not; a
    # built-in kind's validates the patched metadata, and an immutable field refuses it.
    status_keeps_stored_metadata: bool = False

    @property
    def qualified_resource(self) -> str:
        """``configmaps`` or ``hellos.hello.example.com``: how error messages name the kind."""
        info = self.info
        return f"{info.plural}.{info.group}" if info.group else info.plural

    @classmethod
    def of_custom_resource(cls, resource: type[CustomResource]) -> FakeKind:
        """A CRD's behaviour: generation always; status a subresource as ``gen-crd`` decides."""
        options = resource.__crd_options__
        status = options.status_subresource if options is not None else None
        if status is None:  # as crdkit.crd.assemble: on when the class has a status field
            status = "status" in resource.model_fields
        selectable = options.selectable_fields if options is not None else ()
        return cls.of_crd(
            resource,
            status_subresource=bool(status),
            field_selectors=frozenset(f.lstrip(".") for f in selectable),
        )

    @classmethod
    def of_crd(
        cls,
        model: type[KubernetesObject],
        *,
        status_subresource: bool,
        field_selectors: frozenset[str] = frozenset(),
    ) -> FakeKind:
        """How the apiserver serves any kind a CRD defines, ``model`` included when it is a
        plain ``KubernetesObject`` for another project's CRD (a Volcano or scheduler-plugins
        PodGroup), whose status subresource only that CRD can say."""
        info = resource_info(model)
        return cls(
            info,
            status_subresource=status_subresource,
            tracks_generation=True,
            returns_deleted_object=True,
            # The CRD strategy refuses an update without resourceVersion (422).
            unconditional_update=False,
            strategic_merge_patch=False,  # 415 for custom resources
            typed_list_items=True,
            field_selectors=field_selectors,
            status_keeps_stored_metadata=True,
        )


_POD_FIELDS = frozenset(
    {
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    }
)

# kind: (status subresource, tracks generation, delete returns the object, extra field selectors)
# Measured on the local control plane: tests/integration/testing/test_fake_builtin_kinds.py.
_BUILTIN_TRAITS: dict[str, tuple[bool, bool, bool, frozenset[str]]] = {
    "ConfigMap": (False, False, False, frozenset()),
    "Secret": (False, False, False, frozenset({"type"})),
    "ServiceAccount": (False, False, True, frozenset()),
    "Lease": (False, False, False, frozenset()),
    "Event": (False, False, False, frozenset()),
    "Pod": (True, True, True, _POD_FIELDS),
    "Node": (True, False, False, frozenset({"spec.unschedulable"})),
    "Namespace": (True, False, True, frozenset({"status.phase"})),
    "Service": (True, False, True, frozenset()),
    "PersistentVolumeClaim": (True, False, True, frozenset()),
    "Deployment": (True, True, False, frozenset()),
    "StatefulSet": (True, True, False, frozenset()),
    "DaemonSet": (True, True, False, frozenset()),
    "ReplicaSet": (True, True, False, frozenset({"status.replicas"})),
    "Job": (True, True, True, frozenset({"status.successful"})),
    "CronJob": (True, True, False, frozenset()),
    "PodDisruptionBudget": (True, True, False, frozenset()),
}

BUILTIN_KINDS: tuple[str, ...] = tuple(_BUILTIN_TRAITS)
"""The built-in kinds of :mod:`crdkit.resources` a ``FakeCluster`` serves without being told."""


def _builtin(kind: str) -> FakeKind:
    status, generation, returns_object, fields = _BUILTIN_TRAITS[kind]
    cls = getattr(resources, kind)
    return FakeKind(
        resource_info(cls),
        status_subresource=status,
        tracks_generation=generation,
        returns_deleted_object=returns_object,
        field_selectors=fields,
        has_status=status,
    )


class KindRegistry:
    """The kinds one fake cluster serves, by REST path and by group/version/kind."""

    def __init__(self) -> None:
        self._by_resource: dict[tuple[str, str, str], FakeKind] = {}
        self._by_kind: dict[tuple[str, str, str], FakeKind] = {}
        for kind in BUILTIN_KINDS:
            self.add(_builtin(kind))

    def add(self, kind: FakeKind) -> None:
        info = kind.info
        self._by_resource[(info.group, info.version, info.plural)] = kind
        self._by_kind[(info.group, info.version, info.kind)] = kind

    def register(self, resources_: Iterable[type[KubernetesObject] | FakeKind]) -> None:
        """Serve these kinds: ``CustomResource`` classes (their CRD behaviour) or ``FakeKind``s."""
        for resource in resources_:
            if isinstance(resource, FakeKind):
                self.add(resource)
            elif isinstance(resource, type) and issubclass(resource, CustomResource):
                self.add(FakeKind.of_custom_resource(resource))
            elif isinstance(resource, type) and issubclass(resource, KubernetesObject):
                info = resource_info(resource)
                if self.by_kind(info.group, info.version, info.kind) is None:
                    raise UnknownKind(
                        f"kinds: {info.kind} ({info.api_version}) is not a built-in kind the "
                        f"fake knows ({', '.join(BUILTIN_KINDS)}); describe it with a "
                        "crdkit.testing.FakeKind(...) instead"
                    )
            else:
                raise TypeError(
                    f"kinds: expected CustomResource classes or FakeKind, got {resource!r}"
                )

    def by_resource(self, group: str, version: str, plural: str) -> FakeKind | None:
        return self._by_resource.get((group, version, plural))

    def by_kind(self, group: str, version: str, kind: str) -> FakeKind | None:
        return self._by_kind.get((group, version, kind))

    def for_kind(self, api_version: str, kind: str) -> FakeKind:
        """The kind of a seeded object, or ``UnknownKind`` naming it and how to register it."""
        group, _, version = api_version.rpartition("/")
        found = self.by_kind(group, version, kind)
        if found is None:
            raise UnknownKind(_unknown_message(kind, api_version))
        return found

    def served(self) -> list[FakeKind]:
        return list(self._by_kind.values())


def _unknown_message(kind: str, api_version: str) -> str:
    return (
        f"the fake cluster does not serve {kind} ({api_version}): register its class with "
        f"FakeCluster(kinds=[{kind}]) (a CustomResource), or describe it with "
        "crdkit.testing.FakeKind"
    )


def unknown_resource_message(group: str, version: str, plural: str) -> str:
    """For a request to an unregistered resource: the 404 message says how to register it."""
    api_version = f"{group}/{version}" if group else version
    return (
        f"the fake cluster serves no resource {plural!r} in {api_version}: register the "
        "kind's class with FakeCluster(kinds=[MyResource]) (a CustomResource), or describe "
        "it with crdkit.testing.FakeKind"
    )
