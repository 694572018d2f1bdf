"""The lazy package namespaces keep meaning what they export, whatever was imported first."""

from __future__ import annotations

import ast
import compileall
import importlib
import pkgutil
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import crdkit
from crdkit._lazy import Exports, _order, exports_of


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


def _exports(source: str, package: str = "pkg") -> Exports:
    return exports_of(package, ast.parse(textwrap.dedent(source)))


def test_the_exports_are_the_names_imported_as_themselves() -> None:
    exports = _exports(
        """
        import typing
        from typing import TYPE_CHECKING

        from pkg._lazy import lazy_namespace
        from pkg.models import Model as Model, helper as _helper

        if TYPE_CHECKING:
            from collections.abc import Mapping

            from pkg.client import Client as Client, make as make
            from .errors import NOT_FOUND as NOT_FOUND

            __version__: str

        if typing.TYPE_CHECKING:
            from pkg.sub.deep import Int16 as Int16, Int8 as Int8

        __getattr__, __dir__ = lazy_namespace(__name__, globals())
        """,
    )
    # ruff's isort-style order (RUF022): constants, classes, then the rest; numbers naturally.
    assert exports.names == [
        "NOT_FOUND",
        "Client",
        "Int8",
        "Int16",
        "Model",
        "__version__",
        "make",
    ]
    # Imported at the top, Model is in the namespace already; __version__ is the package's own.
    assert exports.homes == {
        "Client": "pkg.client",
        "make": "pkg.client",
        "NOT_FOUND": "pkg.errors",
        "Int8": "pkg.sub.deep",
        "Int16": "pkg.sub.deep",
    }


def test_a_public_name_that_is_also_a_module_name_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\['explain'\]"):
        _exports(
            """
            if TYPE_CHECKING:
                from pkg.explain import Explanation as Explanation, explain as explain
            """
        )


def test_a_name_exported_twice_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\['Client'\] are exported twice"):
        _exports(
            """
            from pkg.a import Client as Client

            if TYPE_CHECKING:
                from pkg.b import Client as Client
            """
        )


@pytest.mark.parametrize("name", _packages())
def test_every_package_lists_its_exports_in_rufs_order(name: str) -> None:
    package = importlib.import_module(name)
    exported = getattr(package, "__all__", [])  # a package of modules only has none
    assert exported == sorted(exported, key=_order)
    assert set(exported) <= set(dir(package))


_PACKAGE = """
from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from {name}.inner import Thing as Thing

__getattr__, __dir__ = lazy_namespace(__name__, globals())
"""


@pytest.fixture
def fresh_package(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    """A package name and its folder; sys.path and sys.modules are restored afterwards."""
    name = f"lazy_probe_{request.node.name.split('[')[0][-20:]}"
    folder = tmp_path / "src" / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(_PACKAGE.format(name=name))
    (folder / "inner.py").write_text("Thing = 42\n")
    path = sys.path[:]
    try:
        yield name, folder
    finally:
        sys.path[:] = path
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]


def test_a_package_in_a_zip_reads_its_exports_through_its_loader(
    fresh_package: tuple[str, Path], tmp_path: Path
) -> None:
    name, folder = fresh_package
    archive = tmp_path / "packages.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in folder.iterdir():
            zipped.write(path, f"{name}/{path.name}")
    sys.path.insert(0, str(archive))
    package = importlib.import_module(name)
    assert package.__all__ == ["Thing"]
    assert package.Thing == 42


def test_a_package_without_its_source_fails_loudly(fresh_package: tuple[str, Path]) -> None:
    name, folder = fresh_package
    compileall.compile_dir(folder, legacy=True, quiet=1)  # __init__.pyc beside, no .py
    for path in folder.glob("*.py"):
        path.unlink()
    sys.path.insert(0, str(folder.parent))
    package = importlib.import_module(name)
    with pytest.raises(ImportError, match=f"{name} lists its exports in the source"):
        _ = package.__all__
    with pytest.raises(ImportError, match=r"install crdkit with its \.py files"):
        _ = package.Thing
    # Probes for dunders (hasattr(module, "__wrapped__")) need no source.
    assert not hasattr(package, "__wrapped__")


def test_importing_a_package_reads_no_source() -> None:
    probe = (
        "import builtins, sys\n"
        "opened = []\n"
        "real = builtins.open\n"
        "builtins.open = lambda file, *a, **k: opened.append(str(file)) or real(file, *a, **k)\n"
        "import crdkit, crdkit.runtime, crdkit.client, crdkit.testing, crdkit.scheduling\n"
        "assert not [f for f in opened if f.endswith('__init__.py')], opened\n"
        "assert 'ast' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=60)
