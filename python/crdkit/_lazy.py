"""Lazy package namespaces (PEP 562): each public name is imported from its module on first use.

A package ``__init__`` that re-exports its modules' names would otherwise import every module
(and their dependencies: ssl, prometheus-client) as soon as any one of them is used; with
this, ``from crdkit.runtime import Reconciler`` loads the reconciler module and what it needs,
not the manager, the informers or the HTTP client. The package still lists the names in
``__all__`` and imports them under ``TYPE_CHECKING`` for type checkers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, MutableMapping

__all__ = ["lazy_namespace"]


def lazy_namespace(
    package: str, namespace: MutableMapping[str, Any], homes: Mapping[str, Iterable[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose globals are ``namespace``.

    ``homes`` maps each module to the public names it defines. No public name may be the name of
    one of the package's own modules: importing that module (from anywhere) makes the import
    system set the package attribute to the module, so the package's name would silently stop
    meaning the function or class.
    """
    home_of = {name: module for module, names in homes.items() for name in names}
    prefix = f"{package}."
    modules = {
        module[len(prefix) :].partition(".")[0] for module in homes if module.startswith(prefix)
    }
    shadowed = sorted(modules & home_of.keys())
    if shadowed:
        raise ValueError(f"{package}: public names {shadowed} are also names of its modules")

    def __getattr__(name: str) -> Any:
        home = home_of.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *home_of})

    return __getattr__, __dir__
