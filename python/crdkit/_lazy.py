"""Lazy package namespaces (PEP 562): each public name is imported from its module on first use.

A package ``__init__`` that re-exports its modules' names would otherwise import every module
(and their dependencies: ssl, prometheus-client) as soon as any one of them is used; with
this, ``from crdkit.runtime import Reconciler`` loads the reconciler module and what it needs,
not the manager, the informers or the HTTP client.

A package names its exports once, in the imports a type checker reads::

    from typing import TYPE_CHECKING

    from crdkit._lazy import lazy_namespace
    from crdkit.room.models import Model as Model  # imported now

    if TYPE_CHECKING:
        from crdkit.room.client import Client as Client  # imported on first use
        __version__: str  # the package's own __getattr__ answers it

    __getattr__, __dir__ = lazy_namespace(__name__, globals())

``from m import Name as Name`` is the re-export spelling of PEP 484 and of mypy's
``--no-implicit-reexport``: a name imported so, at the top of the ``__init__`` or under
``if TYPE_CHECKING:``, is exported; a name imported plainly (``TYPE_CHECKING``,
``lazy_namespace``) is not. A name the ``__init__`` answers itself is declared with an annotation
under ``if TYPE_CHECKING:``. ``__all__`` is derived from these, in the order ruff's RUF022 keeps
a literal list, when it is first asked for. The source is read (with ``ast``) on the first
lookup of a name the package does not hold yet, never at import, so importing a package costs
no parse.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ast
    from collections.abc import Callable, MutableMapping

__all__ = ["Exports", "exports_of", "lazy_namespace"]


class Exports:
    """What a package ``__init__`` exports, read from its source."""

    __slots__ = ("homes", "names")

    def __init__(self, names: list[str], homes: dict[str, str]) -> None:
        self.names = names
        """``__all__``: every exported name, in ruff's isort-style order."""
        self.homes = homes
        """Each name imported on first use (under ``if TYPE_CHECKING:``) and its module."""


def _is_type_checking(test: ast.expr) -> bool:
    import ast

    if isinstance(test, ast.Attribute):  # typing.TYPE_CHECKING
        return test.attr == "TYPE_CHECKING"
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _module_of(package: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module ``node`` imports from, inside ``package``."""
    if not node.level:
        return str(node.module)
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _reexports(node: ast.ImportFrom) -> list[str]:
    """The names ``node`` imports as ``from m import Name as Name``."""
    return [alias.name for alias in node.names if alias.asname == alias.name]


def _natural(name: str) -> list[Any]:
    """``name`` split into text and numbers, so that ``Int8`` sorts before ``Int16``."""
    import itertools

    return [
        int(run) if digits else run
        for digits, chars in itertools.groupby(name, str.isdigit)
        for run in ["".join(chars)]
    ]


def _order(name: str) -> tuple[int, list[Any]]:
    """ruff's isort-style order (RUF022): CONSTANTS, then Classes, then everything else."""
    if len(name) > 1 and name.upper() == name and name.lower() != name:
        return 0, _natural(name)
    return (1 if name[:1].isupper() else 2), _natural(name)


def exports_of(package: str, tree: ast.Module) -> Exports:
    """The exports of ``package``, whose ``__init__`` parses to ``tree``.

    No exported name may be imported on first use from one of the package's own modules
    that shares its name: importing that module (from anywhere) makes the import system set the
    package attribute to the module, so the package's name would silently stop meaning the
    function or class.
    """
    import ast

    names: list[str] = []
    homes: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):  # imported now: already in the namespace
            names += _reexports(node)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom):  # imported on first use
                    module = _module_of(package, inner)
                    homes.update(dict.fromkeys(_reexports(inner), module))
                    names += _reexports(inner)
                elif isinstance(inner, ast.AnnAssign) and isinstance(inner.target, ast.Name):
                    names.append(inner.target.id)  # the package's own
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"{package}: names {twice} are exported twice")
    prefix = f"{package}."
    modules = {
        module[len(prefix) :].partition(".")[0]
        for module in homes.values()
        if module.startswith(prefix)
    }
    shadowed = sorted(modules & homes.keys())
    if shadowed:
        raise ValueError(f"{package}: public names {shadowed} are also names of its modules")
    return Exports(sorted(names, key=_order), homes)


def _source(package: str, namespace: MutableMapping[str, Any]) -> str | bytes:
    """The source of ``package``'s ``__init__``: its file, or what its loader gives (a zip)."""
    file = namespace.get("__file__")
    if isinstance(file, str) and file.endswith(".py"):
        try:
            with open(file, "rb") as source:  # bytes: ast.parse reads the coding cookie
                return source.read()
        except OSError:
            pass  # inside a zip, say: its loader reads it
    loader = getattr(namespace.get("__spec__"), "loader", None)
    get_source = getattr(loader, "get_source", None)
    text = None if get_source is None else get_source(package)
    if text is None:
        raise ImportError(
            f"{package} lists its exports in the source of its __init__, which is not there "
            f"({file}, loaded by {loader!r}): install crdkit with its .py files (a wheel does)",
            name=package,
        )
    return str(text)


def _read_exports(package: str, namespace: MutableMapping[str, Any]) -> Exports:
    import ast

    tree = ast.parse(_source(package, namespace), namespace.get("__file__") or package)
    return exports_of(package, tree)


def lazy_namespace(
    package: str, namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose globals are ``namespace``.

    The exports are read from the package's source on the first lookup of a name it does not
    hold (``__all__`` included), or on ``dir()``; a package whose loader gives no source (a
    zip of compiled files only) raises ``ImportError`` then, rather than export nothing.
    """
    found: list[Exports] = []

    def exports() -> Exports:
        if not found:
            found.append(_read_exports(package, namespace))
        return found[0]

    def __getattr__(name: str) -> Any:
        # Tools probe modules for dunders (``__wrapped__``, ``__test__``): no need to read.
        if name.startswith("__") and name != "__all__":
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if name == "__all__":
            value: Any = list(exports().names)
        else:
            home = exports().homes.get(name)
            if home is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            value = getattr(importlib.import_module(home), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports().names, "__all__"})

    return __getattr__, __dir__
