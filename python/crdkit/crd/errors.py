"""Errors of CRD generation, each naming what is wrong and where.

::

    CrdError (ValueError)
      ├── SchemaError       a pydantic type with no structural form; names model and field path
      ├── StructuralError   a generated schema breaks one of the apiserver's structural rules
      ├── CostError         CEL rules over the apiserver's estimated cost budget
      ├── AssemblyError     classes of one kind disagree (two storage versions, names, scope)
      └── TargetError       a gen-crd TARGET names nothing importable or no custom resource
"""

from __future__ import annotations

from crdkit._errors import CrdkitError

__all__ = [
    "AssemblyError",
    "CostError",
    "CrdError",
    "SchemaError",
    "StructuralError",
    "TargetError",
]


class CrdError(CrdkitError, ValueError):
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


class CostError(CrdError):
    """CEL rules the apiserver would refuse as too expensive; lists each with its remedy."""

    def __init__(self, crd_name: str, problems: list[str]) -> None:
        self.crd_name = crd_name
        self.problems = problems
        super().__init__(f"{crd_name}: CEL cost over budget: " + "; ".join(problems))


class AssemblyError(CrdError):
    """Classes that cannot be combined into one CRD."""


class TargetError(CrdError):
    """A TARGET of ``crdkit gen-crd`` that names nothing usable."""
