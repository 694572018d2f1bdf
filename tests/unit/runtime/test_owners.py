"""Unit tests of the owner-reference helpers."""

from __future__ import annotations

import pytest

from crdkit.resources import ConfigMap, Node, ObjectMeta
from crdkit.runtime.owners import (
    AlreadyOwnedError,
    controller_of,
    owner_reference,
    set_controller_reference,
    set_owner_reference,
)


def cm(name: str, uid: str | None = None, namespace: str = "ns") -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=namespace, uid=uid))


def test_controller_reference_is_set_once_and_idempotent() -> None:
    owner, owned = cm("owner", "u1"), cm("child")
    set_controller_reference(owner, owned)
    set_controller_reference(owner, owned)
    assert len(owned.metadata.owner_references) == 1
    ref = controller_of(owned)
    assert ref is not None
    assert (ref.api_version, ref.kind, ref.name, ref.uid) == ("v1", "ConfigMap", "owner", "u1")
    assert ref.controller is True
    assert ref.block_owner_deletion is True


def test_second_controller_is_refused_but_plain_owners_add_up() -> None:
    owned = cm("child")
    set_controller_reference(cm("a", "u1"), owned)
    with pytest.raises(AlreadyOwnedError, match="already controlled by ConfigMap 'a'"):
        set_controller_reference(cm("b", "u2"), owned)
    set_owner_reference(cm("b", "u2"), owned)
    assert [r.uid for r in owned.metadata.owner_references] == ["u1", "u2"]
    assert owned.metadata.owner_references[1].controller is None


def test_owner_needs_uid_and_same_namespace() -> None:
    with pytest.raises(ValueError, match=r"no metadata\.uid"):
        owner_reference(cm("owner"))
    with pytest.raises(ValueError, match="cannot own an object in namespace 'other'"):
        set_controller_reference(cm("owner", "u1"), cm("child", namespace="other"))


def test_cluster_scoped_owner_may_own_namespaced_objects() -> None:
    node = Node(metadata=ObjectMeta(name="n1", uid="nu"))
    owned = cm("child")
    set_controller_reference(node, owned)
    assert controller_of(owned) is not None
