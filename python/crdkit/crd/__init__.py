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

from crdkit._lazy import lazy_namespace
from crdkit.crd.assemble import build_crd as build_crd
from crdkit.crd.assemble import build_crds as build_crds
from crdkit.crd.budget import budget_problems as budget_problems
from crdkit.crd.budget import rule_costs as rule_costs
from crdkit.crd.errors import AssemblyError as AssemblyError
from crdkit.crd.errors import CostError as CostError
from crdkit.crd.errors import CrdError as CrdError
from crdkit.crd.errors import SchemaError as SchemaError
from crdkit.crd.errors import StructuralError as StructuralError
from crdkit.crd.errors import TargetError as TargetError
from crdkit.crd.markers import AtLeastOneOf as AtLeastOneOf
from crdkit.crd.markers import AtMostOneOf as AtMostOneOf
from crdkit.crd.markers import EmbeddedResource as EmbeddedResource
from crdkit.crd.markers import ExactlyOneOf as ExactlyOneOf
from crdkit.crd.markers import ExclusiveMaximum as ExclusiveMaximum
from crdkit.crd.markers import ExclusiveMinimum as ExclusiveMinimum
from crdkit.crd.markers import Format as Format
from crdkit.crd.markers import ListMapKeys as ListMapKeys
from crdkit.crd.markers import ListType as ListType
from crdkit.crd.markers import MapType as MapType
from crdkit.crd.markers import Maximum as Maximum
from crdkit.crd.markers import MaxItems as MaxItems
from crdkit.crd.markers import MaxLength as MaxLength
from crdkit.crd.markers import MaxProperties as MaxProperties
from crdkit.crd.markers import Minimum as Minimum
from crdkit.crd.markers import MinItems as MinItems
from crdkit.crd.markers import MinLength as MinLength
from crdkit.crd.markers import MinProperties as MinProperties
from crdkit.crd.markers import MultipleOf as MultipleOf
from crdkit.crd.markers import Nullable as Nullable
from crdkit.crd.markers import PreserveUnknownFields as PreserveUnknownFields
from crdkit.crd.markers import Schemaless as Schemaless
from crdkit.crd.markers import XValidation as XValidation
from crdkit.crd.markers import immutable as immutable
from crdkit.crd.output import render as render
from crdkit.crd.output import render_all as render_all
from crdkit.crd.schema import crd_schema as crd_schema
from crdkit.crd.schema import structural_schema as structural_schema
from crdkit.crd.structural import schema_violations as schema_violations
from crdkit.crd.types import Bytes as Bytes
from crdkit.crd.types import Duration as Duration
from crdkit.crd.types import Int32 as Int32
from crdkit.crd.types import Int64 as Int64
from crdkit.crd.types import IntOrString as IntOrString
from crdkit.crd.validators import python_only as python_only
from crdkit.crd.validators import unmirrored_validators as unmirrored_validators

# __all__ is the names imported above as `from m import Name as Name` (see crdkit._lazy).
__getattr__, __dir__ = lazy_namespace(__name__, globals())
