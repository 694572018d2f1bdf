"""The lazy package namespaces keep meaning what they export, whatever was imported first."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

import crdkit
from crdkit._lazy import lazy_namespace


def _packages() -> list[str]:
    found = ["crdkit"]
    for info in pkgutil.walk_packages(crdkit.__path__, "crdkit."):
        if info.ispkg:
            found.append(info.name)
    return found


@pytest.mark.parametrize("name", _packages())
def test_every_public_name_is_its_object_after_all_modules_are_imported(name: str) -> None:
    package = importlib.import_module(name)
    for info in pkgutil.iter_modules(package.__path__, f"{name}."):
        importlib.import_module(info.name)  # the import system sets package.<leaf> = module
    for public in getattr(package, "__all__", ()):
        value = getattr(package, public)
        # a name that is meant as a module says so by being the module of that name
        if isinstance(value, ModuleType):
            assert value.__name__ == f"{name}.{public}", (name, public)


def test_a_public_name_that_is_also_a_module_name_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\['explain'\]"):
        lazy_namespace("pkg", {}, {"pkg.explain": ("explain", "Explanation")})
