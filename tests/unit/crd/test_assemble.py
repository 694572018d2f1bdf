from typing import Annotated

import pytest
from pydantic import Field

from crdkit.crd import AssemblyError, CostError, ExactlyOneOf, MaxItems, build_crd, build_crds
from crdkit.crd.assemble import version_priority
from crdkit.resources import (
    ApiModel,
    CustomResource,
    PrinterColumn,
    ScaleSubresource,
    WebhookConversion,
)


class Spec(ApiModel):
    replicas: int = 1
    pool: str = "a"


class Status(ApiModel):
    replicas: int = 0


class Job(
    CustomResource,
    group="batch.example.com",
    version="v1alpha1",
    short_names=["jb"],
    categories=["all"],
    printer_columns=[PrinterColumn("Replicas", ".spec.replicas", type="integer", priority=1)],
    scale=ScaleSubresource(),
    selectable_fields=[".spec.pool"],
    labels={"team": "ml"},
):
    spec: Spec
    status: Status | None = None


class JobV1(Job, version="v1", storage=True, deprecated=False):
    pass


def test_versions_of_one_kind_make_one_crd() -> None:
    [crd] = build_crds([Job, JobV1])
    assert crd["metadata"] == {"name": "jobs.batch.example.com", "labels": {"team": "ml"}}
    spec = crd["spec"]
    assert spec["names"] == {
        "kind": "Job",
        "listKind": "JobList",
        "plural": "jobs",
        "singular": "job",
        "shortNames": ["jb"],
        "categories": ["all"],
    }
    assert spec["scope"] == "Namespaced"
    assert spec["conversion"] == {"strategy": "None"}
    assert [(v["name"], v["storage"]) for v in spec["versions"]] == [
        ("v1", True),
        ("v1alpha1", False),
    ]
    version = spec["versions"][0]
    assert version["subresources"] == {
        "status": {},
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
    }
    assert version["additionalPrinterColumns"] == [
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas", "priority": 1}
    ]
    assert version["selectableFields"] == [{"jsonPath": ".spec.pool"}]


def test_two_storage_versions_are_refused() -> None:
    class Two(Job, version="v2", storage=True):
        pass

    with pytest.raises(AssemblyError, match=r"exactly one version must have storage=True, found 2"):
        build_crd([JobV1, Two])


def test_no_storage_version_among_several_is_refused() -> None:
    class Three(Job, version="v3"):
        pass

    with pytest.raises(AssemblyError, match="found none"):
        build_crd([Job, Three])


def test_versions_must_agree_on_the_kind() -> None:
    class Other(Job, version="v2", storage=False, short_names=["other"]):
        pass

    with pytest.raises(AssemblyError, match="versions disagree on short_names"):
        build_crd([JobV1, Other])


def test_class_without_group_is_refused() -> None:
    class Abstract(CustomResource):
        pass

    with pytest.raises(AssemblyError, match="Abstract declares no group"):
        build_crds([Abstract])


def test_webhook_conversion_and_deprecation() -> None:
    class Conv(
        CustomResource,
        group="c.example.com",
        version="v1",
        deprecated=True,
        deprecation_warning="use v2",
        conversion=WebhookConversion("svc", "ns", ca_bundle="Q0E="),
    ):
        spec: Spec

    crd = build_crd([Conv])
    assert crd["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {"name": "svc", "namespace": "ns", "path": "/convert", "port": 443},
                "caBundle": "Q0E=",
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    version = crd["spec"]["versions"][0]
    assert version["deprecated"] is True
    assert version["deprecationWarning"] == "use v2"
    assert "subresources" not in version  # no status field, no status subresource


def test_selectable_field_must_exist() -> None:
    class Sel(CustomResource, group="s.example.com", version="v1", selectable_fields=[".spec.x"]):
        spec: Spec

    with pytest.raises(AssemblyError, match=r"selectable field \.spec\.x is not a field"):
        build_crd([Sel])


def test_version_priority_orders_like_kubernetes() -> None:
    versions = ["v1alpha1", "v2", "foo", "v1beta2", "v1", "v1beta1", "v10"]
    assert sorted(versions, key=version_priority) == [
        "v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"
    ]  # fmt: skip


class Replica(ApiModel):
    replicas: int = 1
    image: str = ""


class MapSpec(ApiModel):
    replica_specs: dict[str, Replica] = Field(default_factory=dict)
    items: list[Replica] = Field(default_factory=list)
    free: dict[str, object] = Field(default_factory=dict)


class MapStatus(ApiModel):
    active: dict[str, int] = Field(default_factory=dict)
    selector: str = ""


def _mapped(
    scale: ScaleSubresource | None, selectable: tuple[str, ...] = ()
) -> type[CustomResource]:
    class Mapped(
        CustomResource,
        group="map.example.com",
        version="v1",
        scale=scale,
        selectable_fields=list(selectable),
    ):
        spec: MapSpec
        status: MapStatus | None = None

    return Mapped


def test_scale_and_selectable_paths_go_through_maps() -> None:
    resource = _mapped(
        ScaleSubresource(
            ".spec.replicaSpecs.Worker.replicas", ".status.active.Worker", ".status.selector"
        ),
        (".spec.replicaSpecs.Worker.image",),
    )
    version = build_crd([resource])["spec"]["versions"][0]
    assert version["subresources"]["scale"] == {
        "specReplicasPath": ".spec.replicaSpecs.Worker.replicas",
        "statusReplicasPath": ".status.active.Worker",
        "labelSelectorPath": ".status.selector",
    }
    assert version["selectableFields"] == [{"jsonPath": ".spec.replicaSpecs.Worker.image"}]


def test_a_scale_path_into_free_form_data_is_taken_unchecked() -> None:
    build_crd([_mapped(ScaleSubresource(".spec.free.n", ".status.active.x"))])


@pytest.mark.parametrize(
    ("scale", "selectable", "message"),
    [
        (
            ScaleSubresource(".status.active.a", ".status.active.a"),
            (),
            r"specReplicasPath \.status\.active\.a must be a field path under \.spec$",
        ),
        (
            ScaleSubresource(".spec.replicaSpecs.W.replicas", ".spec.replicaSpecs.W.replicas"),
            (),
            r"statusReplicasPath \.spec\.replicaSpecs\.W\.replicas must be a field path under "
            r"\.status$",
        ),
        (
            ScaleSubresource(".spec.replicaSpecs.W.image", ".status.active.a"),
            (),
            r"specReplicasPath \.spec\.replicaSpecs\.W\.image must be of type integer",
        ),
        (
            ScaleSubresource(".spec.items.replicas", ".status.active.a"),
            (),
            r"goes into the list \.spec\.items, which it cannot index",
        ),
        (
            ScaleSubresource(".spec.replicaSpecs.W.replicas", ".status.active.a", ".metadata.x"),
            (),
            r"labelSelectorPath \.metadata\.x must be a field path under \.spec or \.status",
        ),
        (
            ScaleSubresource(".spec.replicaSpecs.W.replicas", ".status.active.a", ".spec.free"),
            (),
            r"labelSelectorPath \.spec\.free must be of type string",
        ),
        (
            None,
            (".spec.free.a",),
            r"selectable field \.spec\.free\.a goes into a preserve-unknown-fields object",
        ),
        (None, (".spec.nope",), r"selectable field \.spec\.nope is not a field of the schema"),
    ],
)
def test_paths_the_apiserver_or_the_subresource_would_refuse(
    scale: ScaleSubresource | None, selectable: tuple[str, ...], message: str
) -> None:
    refused = _mapped(scale, selectable)  # defining the kind is fine; assembling it is not
    with pytest.raises(AssemblyError, match=message):
        build_crd([refused])


def _volumes_crd(max_items: int | None) -> type[CustomResource]:
    class Source(ApiModel, validations=[ExactlyOneOf("a", "b", "c", "d", "e")]):
        a: str | None = None
        b: str | None = None
        c: str | None = None
        d: str | None = None
        e: str | None = None

    items = list[Source] if max_items is None else Annotated[list[Source], MaxItems(max_items)]

    class Spec(ApiModel):
        sources: items = Field(default_factory=list)  # type: ignore[valid-type]

    class Sourced(CustomResource, group="cost.example.com", version="v1"):
        spec: Spec

    return Sourced


def test_a_rule_over_the_cost_budget_is_refused_naming_field_and_remedy() -> None:
    # five fields cost 10 each time; about a million objects fit a request
    with pytest.raises(CostError) as caught:
        build_crd([_volumes_crd(None)])
    message = str(caught.value)
    assert message.startswith("sourceds.cost.example.com v1: CEL cost over budget: ")
    assert ".spec.sources[*]: x-kubernetes-validations[0].rule" in message
    assert "by 1.048576x" in message  # worded as the apiserver words it
    assert "bound the list/map around it (.spec.sources) with MaxItems" in message
    assert build_crd([_volumes_crd(1000)])["spec"]["versions"][0]["name"] == "v1"
