import pytest

from crdkit.resources import (
    ApiModel,
    CustomResource,
    ObjectMeta,
    PrinterColumn,
    ScaleSubresource,
    resource_info,
)


class JobSpec(ApiModel):
    replicas: int
    image_name: str


class JobStatus(ApiModel):
    ready_replicas: int = 0


class TrainingJob(
    CustomResource,
    group="batch.example.com",
    version="v1alpha1",
    kind="TrainingJob",
    scope="Namespaced",
    short_names=["tj"],
    categories=["ml"],
    printer_columns=[PrinterColumn("Replicas", ".spec.replicas", type="integer")],
    scale=ScaleSubresource(),
):
    spec: JobSpec
    status: JobStatus | None = None


def test_options_and_resource_info() -> None:
    options = TrainingJob.__crd_options__
    assert options is not None
    assert options.plural == "trainingjobs"
    assert options.singular == "trainingjob"
    assert options.short_names == ("tj",)
    assert options.categories == ("ml",)
    assert options.crd_name == "trainingjobs.batch.example.com"
    info = resource_info(TrainingJob)
    assert info.api_version == "batch.example.com/v1alpha1"
    assert info.namespaced


def test_type_meta_is_fixed_and_spec_is_typed() -> None:
    job = TrainingJob(metadata=ObjectMeta(name="j"), spec=JobSpec(replicas=2, image_name="x"))
    assert job.to_dict() == {
        "apiVersion": "batch.example.com/v1alpha1",
        "kind": "TrainingJob",
        "metadata": {
            "name": "j",
            "labels": {},
            "annotations": {},
            "ownerReferences": [],
            "finalizers": [],
        },
        "spec": {"replicas": 2, "imageName": "x"},
    }


def test_validates_straight_from_apiserver_bytes() -> None:
    raw = (
        b'{"apiVersion":"batch.example.com/v1alpha1","kind":"TrainingJob",'
        b'"metadata":{"name":"j","generation":2},"spec":{"replicas":3,"imageName":"i"},'
        b'"status":{"readyReplicas":1}}'
    )
    job = TrainingJob.model_validate_json(raw)
    assert job.spec.replicas == 3
    assert job.status == JobStatus(ready_replicas=1)
    assert job.metadata.generation == 2


def test_default_plural_is_english() -> None:
    class NetworkPolicy(CustomResource, group="net.example.com", version="v1"):
        pass

    class StorageClass(CustomResource, group="net.example.com", version="v1", plural="sclasses"):
        pass

    assert resource_info(NetworkPolicy).plural == "networkpolicies"
    assert resource_info(StorageClass).plural == "sclasses"


def test_a_new_version_inherits_the_kind_but_not_version_local_options() -> None:
    class Widget(CustomResource, group="w.example.com", version="v1", storage=True):
        pass

    class WidgetV2(Widget, version="v2"):
        pass

    options = WidgetV2.__crd_options__
    assert options is not None
    assert (options.kind, options.version, options.storage) == ("Widget", "v2", None)
    assert WidgetV2.__type_meta__ == ("w.example.com/v2", "Widget")


def test_renaming_the_kind_recomputes_derived_names() -> None:
    class Gadget(CustomResource, group="w.example.com", version="v1"):
        pass

    class Policy(Gadget, kind="Policy"):
        pass

    assert resource_info(Policy).plural == "policies"


def test_a_class_without_group_is_abstract() -> None:
    class Base(CustomResource, scope="Cluster"):
        pass

    assert Base.__crd_options__ is None
    with pytest.raises(TypeError, match="not an addressable resource"):
        resource_info(Base)

    class Concrete(Base, group="c.example.com", version="v1"):
        pass

    assert not resource_info(Concrete).namespaced


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"group": "nodots", "version": "v1"}, "group must be a DNS subdomain"),
        ({"group": "a.example.com", "version": "V1"}, "version must be a lowercase DNS label"),
        ({"group": "a.example.com", "version": "v1", "kind": "lower"}, "kind must be CamelCase"),
        ({"group": "a.example.com", "version": "v1", "short_names": "x"}, "must be a list"),
        ({"group": "a.example.com", "version": "v1", "short_names": ["X"]}, r"short_names\[0\]"),
        ({"group": "a.example.com", "version": "v1", "scope": "Global"}, "scope must be"),
        ({"group": "a.example.com"}, "needs version"),
        (
            {"group": "a.example.com", "version": "v1", "deprecation_warning": "old"},
            "needs deprecated=True",
        ),
        (
            {"group": "a.example.com", "version": "v1", "storage": True, "served": False},
            "storage version must be served",
        ),
    ],
)
def test_bad_options_name_the_class_and_option(keywords: dict[str, object], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        type("Bad", (CustomResource,), {}, **keywords)


def test_printer_column_path_must_be_json_path() -> None:
    with pytest.raises(ValueError, match=r"json_path must start with '\.'"):
        PrinterColumn("Age", "metadata.creationTimestamp")
