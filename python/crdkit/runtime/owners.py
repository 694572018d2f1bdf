"""Owner references: who controls an object, so that its changes reach the owner's reconcile
and the garbage collector deletes it with its owner."""

from __future__ import annotations

from crdkit.resources import KubernetesObject, OwnerReference, resource_info
from crdkit.runtime.errors import ControllerError

__all__ = [
    "AlreadyOwnedError",
    "controller_of",
    "owner_reference",
    "set_controller_reference",
    "set_owner_reference",
]


class AlreadyOwnedError(ControllerError, ValueError):
    """The object already has a different controlling owner; Kubernetes allows only one."""


def owner_reference(
    owner: KubernetesObject, *, controller: bool = False, block_owner_deletion: bool = True
) -> OwnerReference:
    """A reference to ``owner``, which must have been read from the apiserver (it needs a uid)."""
    name, uid = owner.metadata.name, owner.metadata.uid
    if not name:
        raise ValueError(f"owner {owner.kind} has no metadata.name")
    if not uid:
        raise ValueError(
            f"owner {owner.kind} {name!r} has no metadata.uid: use the object as read from the "
            "apiserver"
        )
    return OwnerReference(
        api_version=owner.api_version,
        kind=owner.kind,
        name=name,
        uid=uid,
        controller=controller or None,
        block_owner_deletion=block_owner_deletion,
    )


def controller_of(obj: KubernetesObject) -> OwnerReference | None:
    """The controlling owner reference of ``obj`` (``controller: true``), if any."""
    return next((ref for ref in obj.metadata.owner_references if ref.controller), None)


def _check_scope(owner: KubernetesObject, owned: KubernetesObject) -> None:
    # A namespaced owner can only own objects in its namespace; cluster-scoped owners any.
    if resource_info(owner).namespaced and owned.metadata.namespace != owner.metadata.namespace:
        raise ValueError(
            f"{owner.kind} {owner.metadata.name!r} in namespace {owner.metadata.namespace!r} "
            f"cannot own an object in namespace {owned.metadata.namespace!r}"
        )


def set_controller_reference(owner: KubernetesObject, owned: KubernetesObject) -> None:
    """Make ``owner`` the controlling owner of ``owned`` (in place).

    Raises :class:`AlreadyOwnedError` if another object already controls ``owned``.
    """
    ref = owner_reference(owner, controller=True)
    _check_scope(owner, owned)
    current = controller_of(owned)
    if current is not None and current.uid != ref.uid:
        raise AlreadyOwnedError(
            f"{owned.kind} {owned.metadata.name!r} is already controlled by {current.kind} "
            f"{current.name!r}"
        )
    _upsert(owned, ref)


def set_owner_reference(owner: KubernetesObject, owned: KubernetesObject) -> None:
    """Add ``owner`` as a non-controlling owner of ``owned`` (in place)."""
    _check_scope(owner, owned)
    _upsert(owned, owner_reference(owner))


def _upsert(owned: KubernetesObject, ref: OwnerReference) -> None:
    refs = [existing for existing in owned.metadata.owner_references if existing.uid != ref.uid]
    at = next(
        (i for i, e in enumerate(owned.metadata.owner_references) if e.uid == ref.uid), len(refs)
    )
    refs.insert(at, ref)
    # Assigning (not mutating in place) marks the field as set, so server-side apply sends it.
    owned.metadata.owner_references = refs
    owned.metadata = owned.metadata
