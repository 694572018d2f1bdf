"""Errors of CRD generation, each naming what is wrong and where.

::

    CrdError (ValueError)
      ├── SchemaError       a pydantic type with no structural form; names model and field path
      ├── StructuralError   a generated schema breaks one of the apiserver's structural rules
      ├── AssemblyError     classes of one kind disagree (two storage versions, names, scope)
      └── TargetError       a gen-crd TARGET names nothing importable or no custom resource
"""

from __future__ import annotations

__all__ = ["AssemblyError", "CrdError", "SchemaError", "StructuralError", "TargetError"]


class CrdError(ValueError):
    """Base of every error crdkit.crd raises for bad input."""


class SchemaError(CrdError):
    """A model or field that cannot be expressed as a structural OpenAPI schema."""

    def __init__(self, model: str, path: str, reason: str) -> None:
        self.model = model
        self.path = path
        self.reason = reason
        super().__init__(f"{model}: field {path or '.'}: {reason}")


class StructuralError(CrdError):
    """A generated schema the apiserver would refuse; lists every violation found."""

    def __init__(self, crd_name: str, violations: list[str]) -> None:
        self.crd_name = crd_name
        self.violations = violations
        super().__init__(f"{crd_name}: schema is not structural: " + "; ".join(violations))


class AssemblyError(CrdError):
    """Classes that cannot be combined into one CRD."""


class TargetError(CrdError):
    """A TARGET of ``crdkit gen-crd`` that names nothing usable."""
