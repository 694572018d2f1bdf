"""What the generated CRDs make the apiserver do: CEL transition rules, defaulting, several
versions, deprecation warnings, selectable fields, the scale subresource, printer columns."""

from __future__ import annotations

import uuid
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest
from crd_api import BlockingApi, raw_object
from crd_corpus import (
    Cat,
    Defaulted,
    Discriminated,
    Dog,
    GpuPool,
    ImmutableVolume,
    Koi,
    Model,
    ModelV1,
    Pets,
    PetsSpec,
    Ratchet,
    Replicated,
    Schedule,
)
from pydantic import ValidationError

from crdkit.client import Client
from crdkit.resources import CustomResource, ObjectMeta, resource_info

pytestmark = pytest.mark.integration

MERGE = "application/merge-patch+json"


def create(api: BlockingApi, obj: CustomResource, namespace: str | None) -> dict[str, Any]:
    obj.metadata = ObjectMeta(name=f"o-{uuid.uuid4().hex[:10]}", namespace=namespace)
    status, body = api.request("POST", resource_info(obj).path(namespace=namespace), obj.to_dict())
    assert status == 201, body
    return body


def test_immutable_field_cannot_change(api: BlockingApi) -> None:
    ns = api.new_namespace()
    stored = create(api, ImmutableVolume.model_validate({"spec": {"volume": "a"}}), ns)
    path = resource_info(ImmutableVolume).path(namespace=ns, name=stored["metadata"]["name"])
    status, body = api.request("PATCH", path, {"spec": {"volume": "b"}}, MERGE)
    assert status == 422
    assert "volume cannot change" in body["message"]
    status, body = api.request("PATCH", path, {"spec": {"size": 2}}, MERGE)
    assert status == 200, body


def test_optional_old_self_rule_ratchets(api: BlockingApi) -> None:
    ns = api.new_namespace()
    stored = create(api, Ratchet.model_validate({"spec": {"level": 3}}), ns)
    path = resource_info(Ratchet).path(namespace=ns, name=stored["metadata"]["name"])
    status, body = api.request("PATCH", path, {"spec": {"level": 2}}, MERGE)
    assert status == 422
    assert "level never goes down" in body["message"]
    assert api.request("PATCH", path, {"spec": {"level": 4}}, MERGE)[0] == 200


def test_defaults_are_applied_by_the_apiserver(api: BlockingApi) -> None:
    ns = api.new_namespace()
    info = resource_info(Defaulted)
    raw = raw_object(Defaulted, {"name": "d"})
    status, stored = api.request("POST", info.path(namespace=ns), {**raw, "spec": {}})
    assert status == 201, stored
    assert stored["spec"] == {
        "replicas": 1,
        "image": "busybox",
        "args": ["--serve"],
        "env": {"MODE": "prod"},
        "resources": {"cpu": "1", "memory": "1Gi"},
    }
    assert Defaulted.model_validate(stored).spec == Defaulted.model_validate(raw).spec


def test_union_rule_message(api: BlockingApi) -> None:
    ns = api.new_namespace()
    info = resource_info(Discriminated)
    body = raw_object(
        Discriminated,
        {"name": "u"},
        spec={"source": {"type": "s3", "bucket": "abc", "url": "https://x"}},
    )
    status, answer = api.request("POST", info.path(namespace=ns), body)
    assert status == 422
    assert "exactly one of S3Source, GitSource must be given" in answer["message"]


def test_versions_convert_and_deprecation_warns(api: BlockingApi) -> None:
    ns = api.new_namespace()
    old = resource_info(Model)
    body = Model.model_validate({"metadata": {"name": "m"}, "spec": {"size": 2}}).to_dict()
    status, _, headers = api.exchange("POST", old.path(namespace=ns), body)
    assert status == 201
    assert "corpus.crdkit.dev/v1alpha1 Model is deprecated; use v1" in (headers["Warning"] or "")
    status, stored = api.request("GET", resource_info(ModelV1).path(namespace=ns, name="m"))
    assert status == 200
    model = ModelV1.model_validate(stored)
    assert model.api_version == "corpus.crdkit.dev/v1"
    assert model.spec.size == 2


def test_selectable_field_scale_and_columns(api: BlockingApi) -> None:
    info = resource_info(GpuPool)
    names = []
    for pool in ("train", "serve"):
        stored = create(api, GpuPool.model_validate({"spec": {"pool": pool, "replicas": 2}}), None)
        names.append(stored["metadata"]["name"])
    try:
        status, listed = api.request("GET", info.path() + "?fieldSelector=spec.pool%3Dtrain")
        assert status == 200, listed
        assert {item["metadata"]["name"] for item in listed["items"]} == {names[0]}

        scale_path = info.path(name=names[0], subresource="scale")
        status, scale = api.request("GET", scale_path)
        assert status == 200, scale
        assert scale["spec"]["replicas"] == 2
        scale["spec"]["replicas"] = 5
        assert api.request("PUT", scale_path, scale)[0] == 200
        status, stored = api.request("GET", info.path(name=names[0]))
        assert GpuPool.model_validate(stored).spec.replicas == 5

        table_accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
        status, table, _ = api.exchange("GET", info.path(), accept=table_accept)
        assert status == 200, table
        columns = [c["name"] for c in table["columnDefinitions"]]
        assert columns[:4] == ["Name", "Replicas", "Pool", "Age"]
    finally:
        for name in names:
            api.request("DELETE", info.path(name=name))


def test_scale_and_selectable_fields_through_a_map(api: BlockingApi) -> None:
    ns = api.new_namespace()
    info = resource_info(Replicated)
    specs = {"Master": {"replicas": 1, "image": "m"}, "Worker": {"replicas": 3, "image": "w"}}
    stored = create(api, Replicated.model_validate({"spec": {"replicaSpecs": specs}}), ns)
    name = stored["metadata"]["name"]
    create(api, Replicated.model_validate({"spec": {"replicaSpecs": {"Worker": {}}}}), ns)

    scale_path = info.path(namespace=ns, name=name, subresource="scale")
    status, scale = api.request("GET", scale_path)
    assert status == 200, scale
    assert scale["spec"]["replicas"] == 3
    scale["spec"]["replicas"] = 7
    assert api.request("PUT", scale_path, scale)[0] == 200
    status, body = api.request("GET", info.path(namespace=ns, name=name))
    read = Replicated.model_validate(body)
    assert read.spec.replica_specs["Worker"].replicas == 7
    assert read.spec.replica_specs["Master"].replicas == 1

    status, listed = api.request(
        "GET", info.path(namespace=ns) + "?fieldSelector=spec.replicaSpecs.Worker.image%3Dw"
    )
    assert status == 200, listed
    assert [item["metadata"]["name"] for item in listed["items"]] == [name]


def test_times_with_an_offset_are_stored_and_read_back(api: BlockingApi) -> None:
    ns = api.new_namespace()
    start = datetime(2024, 5, 1, 12, 0, 0, 5, tzinfo=timezone(timedelta(hours=2)))
    spec = {"start": start, "timeout": timedelta(minutes=90), "day": date(2024, 5, 1)}
    stored = create(api, Schedule.model_validate({"spec": spec}), ns)
    assert stored["spec"]["timeout"] == "1h30m0s"
    assert Schedule.model_validate(stored).spec.start == start


def test_times_without_an_offset_are_refused_by_both(api: BlockingApi) -> None:
    ns = api.new_namespace()
    info = resource_info(Schedule)
    raw = raw_object(
        Schedule, {"name": "naive"}, spec={"start": "2024-05-01T12:00:00", "timeout": "1h"}
    )
    with pytest.raises(ValidationError, match="timezone info"):
        Schedule.model_validate(raw)
    status, body = api.request("POST", info.path(namespace=ns), raw)
    assert status == 422, body
    assert "spec.start" in body["message"]


async def test_discriminated_unions_with_defaulted_tags_round_trip_through_the_client(
    crdkit_client: Client, corpus_installed: list[dict[str, Any]], namespace: str
) -> None:
    # The idiomatic pydantic spelling (each variant fixes its tag, defaulted), a numeric tag
    # and a callable Discriminator: created, read, listed and patched as typed objects.
    pets = Pets(
        metadata=ObjectMeta(name="pets", namespace=namespace),
        spec=PetsSpec(pet=Dog(name="rex"), tank=Koi(), chosen=Cat(lives=3)),
    )
    created = await crdkit_client.create(pets)
    assert isinstance(created.spec.pet, Dog)
    assert created.spec.pet.name == "rex"
    assert isinstance(created.spec.tank, Koi)
    assert created.spec.tank.size == 2
    assert isinstance(created.spec.chosen, Cat)
    assert created.spec.chosen.lives == 3
    stored = await crdkit_client.get(Pets, "pets", namespace=namespace)
    assert stored.spec == created.spec
    listed = await crdkit_client.list(Pets, namespace=namespace)
    assert [p.spec for p in listed.items] == [created.spec]
    stored.spec.pet = Cat()
    stored.spec.chosen = Dog(good=False)
    updated = await crdkit_client.replace(stored)
    assert isinstance(updated.spec.pet, Cat)
    assert updated.spec.pet.lives == 9
    assert isinstance(updated.spec.chosen, Dog)
    assert updated.spec.chosen.good is False
