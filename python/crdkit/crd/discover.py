"""``gen-crd`` TARGETs → custom resource classes.

A TARGET is a module (every concrete ``CustomResource`` it holds, defined or imported there)
or ``module:Class``. Abstract bases (no group) found next to their concrete subclasses are
skipped; found alone they are an error, since their CRD cannot be written.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import TYPE_CHECKING

from crdkit.crd.errors import TargetError
from crdkit.resources import CustomResource

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["find_resources"]


def _import(module_name: str) -> object:
    if os.getcwd() not in sys.path:  # as `python -m` does, so project modules are found
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module_name)
    except ImportError as error:
        raise TargetError(f"cannot import module {module_name!r}: {error}") from error
    except Exception as error:  # a class statement with bad options, or any import-time bug
        raise TargetError(
            f"importing {module_name!r} failed: {type(error).__name__}: {error}"
        ) from error


def _is_resource(value: object) -> bool:
    return (
        inspect.isclass(value) and issubclass(value, CustomResource) and value is not CustomResource
    )


def find_resources(targets: Iterable[str]) -> list[type[CustomResource]]:
    """The classes the TARGETs name, in order, without duplicates."""
    found: list[type[CustomResource]] = []
    for target in targets:
        module_name, _, class_name = target.partition(":")
        if not module_name:
            raise TargetError(f"TARGET {target!r} names no module")
        module = _import(module_name)
        if class_name:
            value = getattr(module, class_name, None)
            if value is None:
                raise TargetError(f"module {module_name!r} has no attribute {class_name!r}")
            if not _is_resource(value):
                raise TargetError(f"{target} is not a CustomResource subclass")
            candidates = [value]
        else:
            candidates = [v for v in vars(module).values() if _is_resource(v)]
            candidates = [
                c
                for c in candidates
                if c.__crd_options__ is not None
                or not any(o is not c and issubclass(o, c) for o in candidates)
            ]
            if not candidates:
                raise TargetError(f"module {module_name!r} holds no CustomResource classes")
        for candidate in candidates:
            if candidate not in found:
                found.append(candidate)
    if not found:
        raise TargetError("no TARGET given")
    return found
