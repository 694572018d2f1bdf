from datetime import UTC, datetime

from crdkit.resources import ObjectMeta, OwnerReference

RAW = (
    '{"name":"a","namespace":"ns","generateName":"a-","uid":"u1","resourceVersion":"7",'
    '"generation":3,"creationTimestamp":"2024-01-01T00:00:00Z",'
    '"deletionTimestamp":"2024-01-02T00:00:00Z","deletionGracePeriodSeconds":30,'
    '"labels":{"l":"1"},"annotations":{"a":"2"},'
    '"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"o","uid":"u0",'
    '"controller":true,"blockOwnerDeletion":true}],'
    '"finalizers":["f"],"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}],'
    '"futureField":{"x":1}}'
)


def test_every_field_is_read_from_camel_case() -> None:
    meta = ObjectMeta.model_validate_json(RAW)
    assert meta.generate_name == "a-"
    assert meta.resource_version == "7"
    assert meta.generation == 3
    assert meta.creation_timestamp == datetime(2024, 1, 1, tzinfo=UTC)
    assert meta.deletion_timestamp == datetime(2024, 1, 2, tzinfo=UTC)
    assert meta.deletion_grace_period_seconds == 30
    assert meta.owner_references == [
        OwnerReference(
            api_version="v1",
            kind="Pod",
            name="o",
            uid="u0",
            controller=True,
            block_owner_deletion=True,
        )
    ]
    assert meta.finalizers == ["f"]
    assert meta.managed_fields == [{"manager": "m", "fieldsV1": {"f:spec": {}}}]


def test_round_trip_loses_nothing() -> None:
    meta = ObjectMeta.model_validate_json(RAW)
    assert meta.model_dump_json(by_alias=True, exclude_none=True) == RAW


def test_population_by_field_name() -> None:
    meta = ObjectMeta(name="a", resource_version="1", labels={"k": "v"})
    assert meta.model_dump(by_alias=True, exclude_none=True)["resourceVersion"] == "1"


def test_collections_default_to_empty() -> None:
    meta = ObjectMeta()
    assert meta.labels == {}
    assert meta.finalizers == []
    assert meta.owner_references == []
