"""pydantic custom resources → CustomResourceDefinitions, with controller-gen's markers.

::

    markers (Annotated[...])  ──▶  pydantic JSON schema  ──schema──▶  structural schema
                                                                          │ structural check
    CustomResource classes  ──assemble──▶  CRD dicts (one per kind)  ◀────┘
                                              │
                                   output ──▶ YAML (stdout, files, --check drift)

``schema`` leans on ``unions`` (models of a union merged into one object with a CEL rule),
``formats`` (string formats and their Python checks) and ``re2`` (patterns the apiserver can
compile); ``structural`` is the offline check, ``budget`` the offline CEL cost check
(``cel_parse`` → ``cel_cost``, typed by ``cel_types``, counted in ``cel_ranges``).
``crdkit gen-crd`` (``cli``) drives it all; ``discover`` turns its TARGETs into classes.
"""

from crdkit.crd.assemble import build_crd, build_crds
from crdkit.crd.budget import budget_problems, rule_costs
from crdkit.crd.errors import (
    AssemblyError,
    CostError,
    CrdError,
    SchemaError,
    StructuralError,
    TargetError,
)
from crdkit.crd.markers import (
    AtLeastOneOf,
    AtMostOneOf,
    EmbeddedResource,
    ExactlyOneOf,
    ExclusiveMaximum,
    ExclusiveMinimum,
    Format,
    ListMapKeys,
    ListType,
    MapType,
    Maximum,
    MaxItems,
    MaxLength,
    MaxProperties,
    Minimum,
    MinItems,
    MinLength,
    MinProperties,
    MultipleOf,
    Nullable,
    PreserveUnknownFields,
    Schemaless,
    XValidation,
    immutable,
)
from crdkit.crd.output import render, render_all
from crdkit.crd.schema import crd_schema, structural_schema
from crdkit.crd.structural import schema_violations
from crdkit.crd.types import Bytes, Duration, Int32, Int64, IntOrString
from crdkit.crd.validators import python_only, unmirrored_validators

__all__ = [
    "AssemblyError",
    "AtLeastOneOf",
    "AtMostOneOf",
    "Bytes",
    "CostError",
    "CrdError",
    "Duration",
    "EmbeddedResource",
    "ExactlyOneOf",
    "ExclusiveMaximum",
    "ExclusiveMinimum",
    "Format",
    "Int32",
    "Int64",
    "IntOrString",
    "ListMapKeys",
    "ListType",
    "MapType",
    "MaxItems",
    "MaxLength",
    "MaxProperties",
    "Maximum",
    "MinItems",
    "MinLength",
    "MinProperties",
    "Minimum",
    "MultipleOf",
    "Nullable",
    "PreserveUnknownFields",
    "SchemaError",
    "Schemaless",
    "StructuralError",
    "TargetError",
    "XValidation",
    "budget_problems",
    "build_crd",
    "build_crds",
    "crd_schema",
    "immutable",
    "python_only",
    "render",
    "render_all",
    "rule_costs",
    "schema_violations",
    "structural_schema",
    "unmirrored_validators",
]
