"""The corpus of custom resources every schema mapping of crdkit.crd is exercised on.

Each class is one CRD in group ``corpus.crdkit.dev``. ``test_corpus_crds`` installs them all in
the real apiserver; ``test_crd_differential`` checks pydantic and the apiserver agree on them.
Python ``check=`` predicates mirror the CEL rules, so pydantic rejects what CEL rejects.
"""

# ruff: noqa: RUF012 - pydantic copies mutable defaults, so list and dict defaults are safe
from __future__ import annotations

import enum
from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, Tag

from crdkit.crd import (
    AtMostOneOf,
    Bytes,
    Duration,
    EmbeddedResource,
    ExactlyOneOf,
    ExclusiveMaximum,
    ExclusiveMinimum,
    Format,
    Int32,
    Int64,
    IntOrString,
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
from crdkit.resources import (
    ApiModel,
    CustomResource,
    ObjectMeta,
    PrinterColumn,
    Quantity,
    ScaleSubresource,
    WebhookConversion,
)
from crdkit.runtime import Condition

GROUP = "corpus.crdkit.dev"


# -- scalars, bounds, strings ---------------------------------------------------------------------


class ScalarsSpec(ApiModel):
    name: str
    count: int
    ratio: float
    enabled: bool


class Scalar(CustomResource, group=GROUP, version="v1"):
    spec: ScalarsSpec


class BoundsSpec(ApiModel):
    replicas: Annotated[int, Minimum(1), Maximum(64)]
    priority: Annotated[int, Field(ge=-10, le=10)] = 0


class Bounded(CustomResource, group=GROUP, version="v1"):
    spec: BoundsSpec


class ExclusiveSpec(ApiModel):
    fraction: Annotated[float, ExclusiveMinimum(0), ExclusiveMaximum(1)]
    temperature: Annotated[float, Field(gt=-273.15)] = 20.0


class Exclusive(CustomResource, group=GROUP, version="v1"):
    spec: ExclusiveSpec


class MultiplesSpec(ApiModel):
    gpus: Annotated[int, MultipleOf(8), Minimum(0)]
    step: Annotated[int, Field(multiple_of=5)] = 5


class Multiple(CustomResource, group=GROUP, version="v1"):
    spec: MultiplesSpec


class StringsSpec(ApiModel):
    short: Annotated[str, MinLength(1), MaxLength(8)]
    label: Annotated[str, Field(min_length=3, max_length=20)] = "abc"


class Text(CustomResource, group=GROUP, version="v1"):
    spec: StringsSpec


class PatternsSpec(ApiModel):
    dns_label: Annotated[str, Field(pattern=r"^[a-z]([-a-z0-9]{0,14}[a-z0-9])?$")]
    version: Annotated[str, Field(pattern=r"^v[0-9]+(\.[0-9]+){0,2}$")] = "v1"


class Patterned(CustomResource, group=GROUP, version="v1"):
    spec: PatternsSpec


class FormatsSpec(ApiModel):
    address: Annotated[str, Format("ipv4")]
    subnet: Annotated[str, Format("cidr")] | None = None
    host: Annotated[str, Format("hostname"), MaxLength(63)] | None = None
    uid: Annotated[str, Format("uuid")] | None = None


class Formatted(CustomResource, group=GROUP, version="v1"):
    spec: FormatsSpec


# -- enums ----------------------------------------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 3


class EnumsSpec(ApiModel):
    mode: Literal["train", "eval", "serve"]
    colour: Colour = Colour.RED
    level: Level = Level.LOW
    fixed: Literal["only"] = "only"


class Enumerated(CustomResource, group=GROUP, version="v1"):
    spec: EnumsSpec


# -- lists, maps, sets ----------------------------------------------------------------------------


class ListsSpec(ApiModel):
    ports: Annotated[list[Annotated[int, Minimum(1), Maximum(65535)]], MinItems(1), MaxItems(4)]
    names: list[Annotated[str, MaxLength(10)]] = []


class ListHolder(CustomResource, group=GROUP, version="v1"):
    spec: ListsSpec


class MapsSpec(ApiModel):
    limits: Annotated[dict[str, Annotated[int, Minimum(0)]], MinProperties(1), MaxProperties(3)]
    labels: dict[str, Annotated[str, MaxLength(12)]] = {}


class MapHolder(CustomResource, group=GROUP, version="v1"):
    spec: MapsSpec


class SetsSpec(ApiModel):
    zones: Annotated[list[str], ListType("set"), MaxItems(5)]
    tags: set[Annotated[str, MaxLength(6)]] = set()


class SetHolder(CustomResource, group=GROUP, version="v1"):
    spec: SetsSpec


class Port(ApiModel):
    name: Annotated[str, MaxLength(15)]
    protocol: Literal["TCP", "UDP"] = "TCP"
    number: Annotated[int, Minimum(1), Maximum(65535)]


class ListMapsSpec(ApiModel):
    ports: Annotated[list[Port], ListMapKeys("name", "protocol"), MaxItems(6)]


class ListMapHolder(CustomResource, group=GROUP, version="v1"):
    spec: ListMapsSpec


class Selector(ApiModel):
    match_labels: Annotated[dict[str, str], MapType("atomic")] = {}


class MergeTypesSpec(ApiModel):
    args: Annotated[list[str], ListType("atomic")] = []
    selector: Annotated[Selector, MapType("granular")] = Selector()


class MergeStrategy(CustomResource, group=GROUP, version="v1"):
    spec: MergeTypesSpec


class TuplesSpec(ApiModel):
    shape: tuple[Annotated[int, Minimum(1)], Annotated[int, Minimum(1)]]
    sizes: tuple[int, ...] = ()


class Shape(CustomResource, group=GROUP, version="v1"):
    spec: TuplesSpec


# -- optional, nullable, defaults -----------------------------------------------------------------


class OptionalsSpec(ApiModel):
    note: str | None = None
    limit: Annotated[int, Minimum(0)] | None = None
    cleared: Annotated[str | None, Nullable()] = None
    nullable_count: Annotated[int | None, Nullable(), Minimum(0)] = None


class OptionalHolder(CustomResource, group=GROUP, version="v1"):
    spec: OptionalsSpec


class Span(ApiModel):
    start: int
    end: int | None


class MeaningfulNullsSpec(ApiModel):
    """Fields where null and absent differ to pydantic: the CRD keeps their nulls."""

    count: int | None  # required, but may be null
    limit: Annotated[int, Minimum(0)] | None = 5  # null is None, absent is 5
    sizes: list[int | None] = []
    labels: dict[str, str | None] = {}
    span: Span | None


class MeaningfulNulls(CustomResource, group=GROUP, version="v1"):
    spec: MeaningfulNullsSpec


class Resources(ApiModel):
    cpu: str = "1"
    memory: str = "1Gi"


class DefaultsSpec(ApiModel):
    replicas: int = 1
    image: str = "busybox"
    args: list[str] = ["--serve"]
    env: dict[str, str] = {"MODE": "prod"}
    resources: Resources = Resources()


class Defaulted(CustomResource, group=GROUP, version="v1"):
    spec: DefaultsSpec = DefaultsSpec()


# -- unknown fields, embedded, int-or-string ------------------------------------------------------


class AnySpec(ApiModel):
    anything: Any = None
    config: dict[str, Any] = {}


class Anything(CustomResource, group=GROUP, version="v1"):
    spec: AnySpec


class Open(ApiModel):
    model_config = ConfigDict(extra="allow")
    known: int = 0


class OpenObjectsSpec(ApiModel):
    open: Open = Open()
    kept: Annotated[Resources, PreserveUnknownFields()] = Resources()


class OpenObject(CustomResource, group=GROUP, version="v1"):
    spec: OpenObjectsSpec


class PodTemplate(ApiModel):
    api_version: str
    kind: str
    metadata: ObjectMeta = ObjectMeta()
    spec: dict[str, Any] = {}


class EmbeddedSpec(ApiModel):
    template: Annotated[PodTemplate, EmbeddedResource()]
    raw: Annotated[dict[str, Any], EmbeddedResource()] | None = None


class Embedded(CustomResource, group=GROUP, version="v1"):
    spec: EmbeddedSpec


class IntOrStringsSpec(ApiModel):
    max_unavailable: IntOrString = 1
    port: int | str = "http"


class IntOrStringHolder(CustomResource, group=GROUP, version="v1"):
    spec: IntOrStringsSpec


# -- unions ---------------------------------------------------------------------------------------


class S3Source(ApiModel):
    type: Literal["s3"]
    bucket: Annotated[str, MinLength(3)]
    prefix: str = ""


class GitSource(ApiModel):
    type: Literal["git"]
    url: str
    revision: str | None = None


class DiscriminatedSpec(ApiModel):
    source: Annotated[S3Source | GitSource, Field(discriminator="type")]


class Discriminated(CustomResource, group=GROUP, version="v1"):
    spec: DiscriminatedSpec


class ByName(ApiModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class ByLabels(ApiModel):
    model_config = ConfigDict(extra="forbid")
    labels: dict[str, str]


class UnionsSpec(ApiModel):
    target: ByName | ByLabels


class Targeted(CustomResource, group=GROUP, version="v1"):
    spec: UnionsSpec


# -- CEL ------------------------------------------------------------------------------------------


class FieldRulesSpec(ApiModel):
    name: Annotated[
        str,
        XValidation(
            "self.startsWith('job-')",
            message="name must start with job-",
            check=lambda v: v.startswith("job-"),
        ),
    ]
    workers: Annotated[
        list[str],
        XValidation(
            "self.all(w, w.size() <= 6)",
            message="worker names are short",
            reason="FieldValueInvalid",
            check=lambda ws: all(len(w) <= 6 for w in ws),
        ),
        MaxItems(8),
    ] = []


class FieldRule(CustomResource, group=GROUP, version="v1"):
    spec: FieldRulesSpec


class Window(
    ApiModel,
    validations=[
        XValidation(
            "self.start <= self.end",
            message="start must not be after end",
            field_path=".start",
            check=lambda w: w.start <= w.end,
        )
    ],
):
    start: int
    end: int


class TypeRulesSpec(ApiModel):
    window: Window
    retries: int = 0


class TypeRule(
    CustomResource,
    group=GROUP,
    version="v1",
    validations=[
        XValidation(
            "self.spec.retries <= 5",
            message_expression="'retries must be at most 5'",
            check=lambda r: r.spec.retries <= 5,
        )
    ],
):
    spec: TypeRulesSpec


class ChoiceSpec(
    ApiModel, validations=[ExactlyOneOf("gpus", "cpus"), AtMostOneOf("spot", "reserved")]
):
    gpus: Annotated[int, Minimum(1)] | None = None
    cpus: Annotated[int, Minimum(1)] | None = None
    spot: bool | None = None
    reserved: bool | None = None


class Choice(CustomResource, group=GROUP, version="v1"):
    spec: ChoiceSpec


class ImmutableSpec(ApiModel):
    volume: Annotated[str, immutable("volume cannot change")]
    size: int = 1


class ImmutableVolume(CustomResource, group=GROUP, version="v1"):
    spec: ImmutableSpec


class OldSelfSpec(ApiModel):
    level: Annotated[
        int,
        XValidation(
            "!oldSelf.hasValue() || self >= oldSelf.value()",
            message="level never goes down",
            optional_old_self=True,
        ),
    ] = 0


class Ratchet(CustomResource, group=GROUP, version="v1"):
    spec: OldSelfSpec


# -- time -----------------------------------------------------------------------------------------


class TimesSpec(ApiModel):
    start: datetime
    day: date | None = None
    timeout: Duration
    grace: timedelta | None = None  # ApiModel writes a plain timedelta as a Go duration


class Schedule(CustomResource, group=GROUP, version="v1"):
    spec: TimesSpec


# -- structure ------------------------------------------------------------------------------------


class Container(ApiModel):
    name: str
    image: str
    resources: Resources = Resources()


class Role(ApiModel):
    replicas: Annotated[int, Minimum(0)] = 1
    template: Container


class NestedSpec(ApiModel):
    master: Role
    worker: Role
    sidecars: list[Container] = []


class Nested(CustomResource, group=GROUP, version="v1"):
    spec: NestedSpec


class TreeNode(ApiModel):
    value: int
    children: list[TreeNode] = []


class RecursiveSpec(ApiModel):
    tree: Annotated[TreeNode, Schemaless()]


class Recursive(CustomResource, group=GROUP, version="v1"):
    spec: RecursiveSpec


class DocumentedSpec(ApiModel):
    """The spec, described."""

    size: int = Field(1, description="How many.", title="Size", examples=[3])
    renamed: str = Field("x", alias="customName", description="A custom wire name.")


class Documented(CustomResource, group=GROUP, version="v1"):
    """A resource whose docstrings and descriptions reach the CRD."""

    spec: DocumentedSpec


class ReservedSpec(ApiModel):
    namespace: str = "default"
    in_: Annotated[int, Field(alias="in")] = 0


class ReservedWord(CustomResource, group=GROUP, version="v1"):
    spec: Annotated[
        ReservedSpec,
        XValidation(
            "self.__namespace__ != 'kube-system' || self.__in__ == 0",
            message="kube-system takes no in",
            check=lambda s: s.namespace != "kube-system" or s.in_ == 0,
        ),
    ]


# -- class options --------------------------------------------------------------------------------


class ClusterSpec(ApiModel):
    replicas: Annotated[int, Minimum(0)] = 1
    pool: str = "default"


class ClusterStatus(ApiModel):
    replicas: int = 0
    selector: str = ""


class GpuPool(
    CustomResource,
    group=GROUP,
    version="v1",
    scope="Cluster",
    short_names=["gp"],
    categories=["crdkit-corpus"],
    printer_columns=[
        PrinterColumn("Replicas", ".spec.replicas", type="integer", description="wanted"),
        PrinterColumn("Pool", ".spec.pool", priority=1),
        PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
    ],
    scale=ScaleSubresource(label_selector_path=".status.selector"),
    selectable_fields=[".spec.pool"],
    labels={"crdkit.dev/corpus": "true"},
    annotations={"crdkit.dev/note": "cluster scoped"},
):
    spec: ClusterSpec
    status: ClusterStatus | None = None


class ReplicaSpec(ApiModel):
    replicas: Annotated[int, Minimum(0)] = 1
    image: str = "trainer"


class ReplicaStatus(ApiModel):
    active: int = 0


class ReplicatedSpec(ApiModel):
    replica_specs: dict[str, ReplicaSpec] = {}


class ReplicatedStatus(ApiModel):
    replica_statuses: dict[str, ReplicaStatus] = {}
    selector: str = ""


class Replicated(
    CustomResource,
    group=GROUP,
    version="v1",
    # PyTorchJob's shape: the scale and selectable-field paths go through a map at one key.
    scale=ScaleSubresource(
        spec_replicas_path=".spec.replicaSpecs.Worker.replicas",
        status_replicas_path=".status.replicaStatuses.Worker.active",
        label_selector_path=".status.selector",
    ),
    selectable_fields=[".spec.replicaSpecs.Worker.image"],
):
    spec: ReplicatedSpec
    status: ReplicatedStatus | None = None


class StatusSpec(ApiModel):
    wanted: int = 1


class StatusStatus(ApiModel):
    phase: Literal["Pending", "Running", "Done"] = "Pending"


class NoStatusSubresource(
    CustomResource, group=GROUP, version="v1", status_subresource=False, plural="nostatuses"
):
    spec: StatusSpec
    status: StatusStatus | None = None


class ModelV1Alpha1Spec(ApiModel):
    size: Annotated[int, Minimum(1)]


class Model(
    CustomResource,
    group=GROUP,
    version="v1alpha1",
    deprecated=True,
    deprecation_warning="corpus.crdkit.dev/v1alpha1 Model is deprecated; use v1",
):
    spec: ModelV1Alpha1Spec


class ModelV1Beta1(Model, version="v1beta1", served=True, deprecated=True):
    pass


class ModelV1(Model, version="v1", storage=True):
    pass


class ConvertedSpec(ApiModel):
    size: int = 1


class Converted(
    CustomResource,
    group=GROUP,
    version="v1",
    storage=True,
    conversion=WebhookConversion(
        service_name="converter", service_namespace="default", path="/convert", port=8443
    ),
):
    spec: ConvertedSpec


class ConvertedV2(Converted, version="v2", storage=False):
    pass


# -- scalar types whose CRD form is more than a JSON type (issue 11, scalar parity) ----------------
# Kept in one block: other corpus additions go elsewhere.


class QuantitiesSpec(ApiModel):
    memory: Quantity
    limits: dict[str, Quantity] = {}
    burst: Quantity | None = None


class Quantities(CustomResource, group=GROUP, version="v1"):
    spec: QuantitiesSpec


class IntegersSpec(ApiModel):
    small: Int32
    large: Int64 = 0
    marked: Annotated[int, Format("int32")] = 0
    counts: list[Int32] = []


class SizedInteger(CustomResource, group=GROUP, version="v1"):
    spec: IntegersSpec


class BlobSpec(ApiModel):
    data: bytes
    typed: Bytes | None = None
    chunks: list[bytes] = []
    text: Annotated[str, Format("byte")] | None = None


class Blob(CustomResource, group=GROUP, version="v1"):
    spec: BlobSpec


class DurationsSpec(ApiModel):
    every: Duration
    grace: timedelta = timedelta(seconds=30)
    loose: Annotated[str, Format("duration")] | None = None


class Cadence(CustomResource, group=GROUP, version="v1"):
    spec: DurationsSpec


def _positive_or_percent(value: int | str) -> bool:
    return value > 0 if isinstance(value, int) else value.endswith("%")


_SURGE_RULE = XValidation(
    "type(self) == int ? self > 0 : self.endsWith('%')",
    message="a positive count or a percentage",
    check=_positive_or_percent,
)


class SurgeSpec(ApiModel):
    max_surge: Annotated[IntOrString, _SURGE_RULE] = 1
    port: Annotated[
        int | str,
        XValidation(
            "type(self) == string || self < 65536",
            message="a port number below 65536",
            check=lambda value: isinstance(value, str) or value < 65536,
        ),
    ] = 80


class Surge(CustomResource, group=GROUP, version="v1"):
    spec: SurgeSpec


class ScalarEdgesSpec(ApiModel):
    """One optional field per scalar type, for test_scalar_parity's table of edge values."""

    memory: Quantity | None = None
    small: Int32 | None = None
    marked: Annotated[int, Format("int32")] | None = None
    large: Int64 | None = None
    data: Bytes | None = None
    every: Duration | None = None
    surge: Annotated[IntOrString, _SURGE_RULE] | None = None
    positive: Annotated[int, XValidation("self > 0", check=lambda v: v > 0)] | None = None
    plain: int | None = None
    either: IntOrString | None = None


class ScalarEdges(CustomResource, group=GROUP, version="v1", scope="Cluster"):
    spec: ScalarEdgesSpec = ScalarEdgesSpec()


SCALAR_PARITY: list[type[CustomResource]] = [
    Quantities,
    SizedInteger,
    Blob,
    Cadence,
    Surge,
    ScalarEdges,
]


# Every class of the corpus; the versions of one kind appear together.
CORPUS: list[type[CustomResource]] = [
    Scalar,
    Bounded,
    Exclusive,
    Multiple,
    Text,
    Patterned,
    Formatted,
    Enumerated,
    ListHolder,
    MapHolder,
    SetHolder,
    ListMapHolder,
    MergeStrategy,
    Shape,
    OptionalHolder,
    MeaningfulNulls,
    Defaulted,
    Anything,
    OpenObject,
    Embedded,
    IntOrStringHolder,
    Discriminated,
    Targeted,
    FieldRule,
    TypeRule,
    Choice,
    ImmutableVolume,
    Ratchet,
    Schedule,
    Nested,
    Recursive,
    Documented,
    ReservedWord,
    GpuPool,
    Replicated,
    NoStatusSubresource,
    Model,
    ModelV1Beta1,
    ModelV1,
    Converted,
    ConvertedV2,
    *SCALAR_PARITY,
]


# -- the wire: strict scalars, nulls, acronym names, metav1.Condition -----------------------------
# pydantic's lax conversions ("3" for an int), nulls the apiserver prunes and then defaults, JSON
# names with acronyms, and the Condition list every status carries.


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


class StrictScalarsSpec(ApiModel):
    count: int
    ratio: float
    enabled: bool
    name: Annotated[str, MaxLength(20)]
    size: Size = Size.SMALL
    ways: Literal[1, 2, 4] = 1
    since: datetime | None = None
    ports: list[Annotated[int, Minimum(1)]] = []
    weights: dict[str, float] = {}


class StrictScalars(CustomResource, group=GROUP, version="v1"):
    spec: StrictScalarsSpec


class Knob(ApiModel):
    name: Annotated[str, MaxLength(10)]
    value: int = 0


class DefaultedNullsSpec(ApiModel):
    replicas: int = 1
    image: str = "busybox"
    knob: Knob = Knob(name="default")
    args: list[str] = ["--serve"]
    limits: dict[str, int] = {}
    knobs: Annotated[list[Knob], MaxItems(3)] = []
    by_name: dict[str, Knob] = {}
    note: str | None = None  # null and absent are both None
    kept: Annotated[int, Minimum(0)] | None = 3  # nullable: a null stays null
    labels: dict[str, str | None] = {}  # nullable values: kept
    sizes: list[int | None] = []


class DefaultedNulls(CustomResource, group=GROUP, version="v1"):
    spec: DefaultedNullsSpec = DefaultedNullsSpec()


class NetworkSpec(ApiModel):
    cluster_ip: Annotated[str, Format("ipv4")] | None = None
    external_ips: Annotated[list[Annotated[str, Format("ipv4")]], MaxItems(3)] = []
    pod_cidr: Annotated[str, Format("cidr")] | None = None
    host_pid: bool = False
    target_cpu_utilization_percentage: Annotated[int, Minimum(1), Maximum(100)] = 80
    callback_url: Annotated[str, MaxLength(30)] | None = None
    legacy_id: str | None = Field(default=None, alias="legacyId")  # an explicit alias wins


class Network(CustomResource, group=GROUP, version="v1"):
    spec: NetworkSpec


class ConditionedSpec(ApiModel):
    # In the spec, not the status: the differential test writes the spec (status is a
    # subresource), and the schema is the same.
    conditions: Annotated[list[Condition], ListMapKeys("type"), MaxItems(3)] = []


class Conditioned(CustomResource, group=GROUP, version="v1"):
    spec: ConditionedSpec


# -- discriminated unions whose tags have defaults, named and callable -----------------------------
# The idiomatic pydantic spelling: each variant fixes its own tag, defaulted. pydantic forbids a
# before-validator on a tag, so the wire checks must guard it from the model instead.


class Cat(ApiModel):
    kind: Literal["cat"] = "cat"
    lives: Annotated[int, Minimum(1), Maximum(9)] = 9


class Dog(ApiModel):
    kind: Literal["dog"] = "dog"
    good: bool = True
    name: Annotated[str, MaxLength(12)] | None = None


class Guppy(ApiModel):
    size: Literal[1] = 1  # a non-string tag: its JSON type is checked from the model
    fins: int = 2


class Koi(ApiModel):
    size: Literal[2] = 2
    colour: Annotated[str, MaxLength(8)] = "gold"


def _pet_kind(value: Any) -> Any:
    return value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)


class PetsSpec(ApiModel):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]
    tank: Annotated[Guppy | Koi, Field(discriminator="size")] | None = None
    chosen: (
        Annotated[Annotated[Cat, Tag("cat")] | Annotated[Dog, Tag("dog")], Discriminator(_pet_kind)]
        | None
    ) = None


class Pets(CustomResource, group=GROUP, version="v1"):
    spec: PetsSpec


WIRE = [StrictScalars, DefaultedNulls, Network, Conditioned, Pets]
CORPUS.extend(WIRE)
