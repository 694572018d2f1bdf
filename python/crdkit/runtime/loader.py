"""Finding reconciler (and, for gen-rbac, runnable and client-role) classes from the command line:
``package.module:ClassName``.

As ``kopf run`` does, the current directory is importable, so ``crdkit run
operator:MyReconciler`` works next to ``operator.py``; a path to a ``.py`` file works too.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from crdkit.runtime.client_role import ClientRole
from crdkit.runtime.reconciler import Reconciler
from crdkit.runtime.runnable import Runnable

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType

T = TypeVar("T")

RbacClass = type[Reconciler[Any]] | type[Runnable] | type[ClientRole]
"""A class ``crdkit gen-rbac`` reads declarations from."""

__all__ = [
    "RbacClass",
    "build_rbac_sources",
    "load_rbac_source",
    "load_rbac_sources",
    "load_reconciler_class",
    "load_reconciler_classes",
]


def _import(module_ref: str) -> ModuleType:
    if module_ref.endswith(".py"):
        path = Path(module_ref).resolve()
        if not path.is_file():
            raise ValueError(f"no such file: {module_ref}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ValueError(f"cannot import {module_ref}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[path.stem]  # as the import system does: no half-run module stays
            raise
        return module
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    return importlib.import_module(module_ref)


def _load_attribute(ref: str, expected: str) -> Any:
    """The object ``ref`` (``module:Name`` or ``file.py:Name``) names; ``ValueError`` if none."""
    module_ref, sep, class_name = ref.rpartition(":")
    if not sep or not module_ref or not class_name:
        raise ValueError(f"expected module:{expected}, got {ref!r}")
    try:
        module = _import(module_ref)
    except ImportError as error:
        raise ValueError(f"cannot import {module_ref!r}: {error}") from error
    except Exception as error:  # a syntax error or any import-time bug of the user's module
        raise ValueError(
            f"importing {module_ref!r} failed: {type(error).__name__}: {error}"
        ) from error
    target: Any = module
    for part in class_name.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"{module_ref!r} has no attribute {class_name!r}") from None
    return target


def load_reconciler_class(ref: str) -> type[Reconciler[Any]]:
    """The ``Reconciler`` subclass named by ``ref`` (``module:Class`` or ``file.py:Class``)."""
    target = _load_attribute(ref, "ReconcilerClass")
    if not (isinstance(target, type) and issubclass(target, Reconciler)):
        raise ValueError(f"{ref} is not a Reconciler subclass")
    target.primary_kind()  # a clear TypeError now rather than when the manager starts
    return target


def load_rbac_source(ref: str) -> RbacClass:
    """A ``Reconciler``, ``Runnable`` or ``ClientRole`` subclass named by ``ref``: what
    gen-rbac reads."""
    target = _load_attribute(ref, "Class")
    if isinstance(target, type) and issubclass(target, Runnable | ClientRole):
        return target
    if not (isinstance(target, type) and issubclass(target, Reconciler)):
        raise ValueError(f"{ref} is not a Reconciler, Runnable or ClientRole subclass")
    target.primary_kind()
    return target


def load_reconciler_classes(refs: Sequence[str]) -> list[type[Reconciler[Any]]]:
    """Every ``RECONCILER`` argument of a command, loaded; a bad one is a usage error (exit 2)
    that names it, as ``crdkit run`` and ``crdkit gen-rbac`` report it."""
    return _load_arguments(refs, load_reconciler_class, "RECONCILER")


def load_rbac_sources(refs: Sequence[str]) -> list[RbacClass]:
    """``crdkit gen-rbac``'s arguments: reconciler, runnable or client-role classes; a bad one
    is a usage error (exit 2) that names it."""
    return _load_arguments(refs, load_rbac_source, "CLASS")


def _load_arguments(refs: Sequence[str], load: Callable[[str], T], hint: str) -> list[T]:
    """``load`` of each command-line argument; the first it refuses becomes click's usage
    error, so the command exits 2 naming the argument (``hint``) and why."""
    loaded = []
    for ref in refs:
        try:
            loaded.append(load(ref))
        except (ValueError, TypeError) as error:
            raise click.BadParameter(str(error), param_hint=hint) from None
    return loaded


def build_rbac_sources(
    sources: Sequence[RbacClass],
    options: Sequence[str] = (),
    config: Path | None = None,
) -> tuple[list[RbacClass | Reconciler[Any]], list[str]]:
    """Each reconciler class built as ``crdkit run`` builds it (its ``--option`` and
    ``--config`` values), so gen-rbac can read what its ``setup`` attaches; and one note per
    class that could not be built, which then counts by its declarations alone.

    An option no class takes is an ``OptionError``, as it is for ``crdkit run``.
    """
    from crdkit.runtime.options import reconciler_options

    reconcilers = [s for s in sources if issubclass(s, Reconciler)]
    given = reconciler_options(reconcilers, options, config, require_all=False)
    kwargs = dict(zip(reconcilers, given, strict=True))
    built: list[RbacClass | Reconciler[Any]] = []
    notes: list[str] = []
    for source in sources:
        if not issubclass(source, Reconciler):
            built.append(source)
            continue
        try:
            built.append(source(**kwargs[source]))
        except Exception as error:  # the user's constructor: anything it raises is a note
            said = " ".join(str(error).split())
            notes.append(
                f"{source.__qualname__} could not be built ({type(error).__name__}: {said}), so "
                "what its setup() attaches is not covered; give the --option values crdkit "
                "run gets"
            )
            built.append(source)
    return built, notes
