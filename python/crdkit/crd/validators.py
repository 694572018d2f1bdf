"""Python validators the CRD cannot see: where a model is stricter than its CRD.

A ``model_validator`` or ``field_validator`` is Python code; gen-crd cannot turn it into a
CEL rule, so the apiserver stores objects it would refuse (written by kubectl, another
controller, an older operator) and crdkit then fails to read them. A rule meant for both
sides is written once as ``XValidation(rule, check=...)`` (pydantic runs ``check``, the
apiserver the rule). A validator that is Python-only on purpose (it normalises input, or
checks what only the operator needs) says so with ``@python_only``; ``gen-crd`` warns about
every other one and ``gen-crd --check`` fails on it.

Validators crdkit defines itself are not listed: its type rules are the CEL rules' twins and
``KubernetesObject``'s apiVersion/kind check repeats what the apiserver checks anyway.
Validators given as ``Annotated`` metadata (``AfterValidator``) are not seen either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, get_args, get_origin

from pydantic import BaseModel

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["PYTHON_ONLY_ATTRIBUTE", "python_only", "unmirrored_validators"]

PYTHON_ONLY_ATTRIBUTE = "__crdkit_python_only__"
_F = TypeVar("_F")


def python_only(validator: _F) -> _F:
    """Mark a pydantic validator as deliberately absent from the CRD (no CEL twin).

    Put it above or below ``@model_validator``/``@field_validator``::

        @model_validator(mode="after")
        @python_only
        def _normalise(self) -> Self: ...
    """
    target: Any = validator
    while True:  # through pydantic's descriptor proxy and classmethod to the function
        if hasattr(target, "wrapped"):
            target = target.wrapped
        elif isinstance(target, classmethod | staticmethod):
            target = target.__func__
        else:
            break
    setattr(target, PYTHON_ONLY_ATTRIBUTE, True)
    return validator


def _models_in(annotation: Any, found: list[type[BaseModel]]) -> None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation not in found:
            found.append(annotation)
            for field in annotation.model_fields.values():
                _models_in(field.annotation, found)
        return
    # list[X], dict[str, X], X | None, Annotated[X, ...]: look inside (metadata is skipped,
    # not being a model class).
    if get_origin(annotation) is not None:
        for argument in get_args(annotation):
            _models_in(argument, found)


def unmirrored_validators(models: Iterable[type[BaseModel]]) -> list[str]:
    """``Model.function (kind)`` for every validator of these models (and the models in their
    fields) that has no CEL twin and is not marked ``@python_only``, in a stable order."""
    reachable: list[type[BaseModel]] = []
    for model in models:
        _models_in(model, reachable)
    seen: dict[str, None] = {}
    for model in reachable:
        decorators = model.__pydantic_decorators__
        groups = (
            ("model_validator", decorators.model_validators),
            ("field_validator", decorators.field_validators),
        )
        for kind, group in groups:
            for decorator in group.values():
                function = decorator.func
                if getattr(function, PYTHON_ONLY_ATTRIBUTE, False):
                    continue
                if str(getattr(function, "__module__", "")).startswith("crdkit."):
                    continue
                seen[f"{function.__qualname__} ({kind})"] = None
    return list(seen)
