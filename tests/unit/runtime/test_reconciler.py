"""Unit tests of the Reconciler base class: naming the primary kind, names, finalizers."""

from __future__ import annotations

from typing import Generic, TypeVar

import pytest

from crdkit import Context, Reconciler
from crdkit.resources import ConfigMap, CustomResource, KubernetesObject, Node


class Widget(CustomResource, group="widgets.example.com", version="v1", kind="Widget"):
    pass


class ByTypeParameter(Reconciler[Widget]):
    pass


K = TypeVar("K", bound=KubernetesObject)


class GenericBase(Reconciler[K], Generic[K]):
    """A reusable generic reconciler: the kind is named by its subclasses."""


class ByAttribute(GenericBase[ConfigMap]):
    resource = Node


class Finalizing(Reconciler[ConfigMap]):
    name = "cm-cleaner"

    async def finalize(self, ctx: Context, obj: ConfigMap) -> None:
        return None


def test_kind_from_type_parameter_or_attribute() -> None:
    assert ByTypeParameter.primary_kind() is Widget
    assert ByAttribute.primary_kind() is Node, "an explicit attribute wins"


def test_subclass_of_generic_base_takes_its_argument() -> None:
    class Concrete(GenericBase[ConfigMap]):
        pass

    assert Concrete.primary_kind() is ConfigMap


def test_missing_kind_is_a_clear_error() -> None:
    class Nameless(Reconciler):  # type: ignore[type-arg]
        pass

    with pytest.raises(TypeError, match="Reconciler\\[Kind\\]"):
        Nameless.primary_kind()


def test_names_and_finalizers() -> None:
    assert ByTypeParameter.controller_name() == "widget"
    assert ByTypeParameter.finalizer_name() == "widgets.example.com/widget-finalizer"
    assert Finalizing.controller_name() == "cm-cleaner"
    assert Finalizing.finalizer_name() == "crdkit.io/cm-cleaner-finalizer"
    assert Finalizing.has_finalize()
    assert not ByTypeParameter.has_finalize()


def test_bad_names_are_refused() -> None:
    class BadName(Reconciler[ConfigMap]):
        name = "Not A DNS Name"

    class BadFinalizer(Reconciler[ConfigMap]):
        finalizer = "no-domain"

    with pytest.raises(ValueError, match="name must be a lowercase DNS-style name"):
        BadName.controller_name()
    with pytest.raises(ValueError, match="domain-qualified"):
        BadFinalizer.finalizer_name()


async def test_reconcile_must_be_implemented() -> None:
    with pytest.raises(NotImplementedError, match="ByTypeParameter must implement"):
        await ByTypeParameter().reconcile(None, Widget())  # type: ignore[arg-type]
