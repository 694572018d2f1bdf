from typing import Annotated, Any

import pytest
from pydantic import TypeAdapter, ValidationError

from crdkit.crd import (
    AtLeastOneOf,
    AtMostOneOf,
    EmbeddedResource,
    ExactlyOneOf,
    Format,
    ListMapKeys,
    ListType,
    MapType,
    XValidation,
)
from crdkit.resources import ApiModel


def test_xvalidation_check_runs_in_pydantic() -> None:
    positive = TypeAdapter(
        Annotated[int, XValidation("self > 0", message="must be positive", check=lambda v: v > 0)]
    )
    assert positive.validate_python(3) == 3
    with pytest.raises(ValidationError, match="must be positive"):
        positive.validate_python(0)


def test_xvalidation_entry() -> None:
    rule = XValidation(
        "self.a == oldSelf.a",
        message_expression="'a changed'",
        field_path=".a",
        optional_old_self=True,
    )
    assert rule.to_schema() == {
        "rule": "self.a == oldSelf.a",
        "messageExpression": "'a changed'",
        "fieldPath": ".a",
        "optionalOldSelf": True,
    }
    with pytest.raises(ValueError, match="field_path must start"):
        XValidation("true", field_path="a")
    with pytest.raises(ValueError, match="rule must not be empty"):
        XValidation(" ")


def test_type_rules_run_on_the_model() -> None:
    class Range(
        ApiModel, validations=[XValidation("self.lo <= self.hi", check=lambda r: r.lo <= r.hi)]
    ):
        lo: int
        hi: int

    Range(lo=1, hi=2)
    with pytest.raises(ValidationError, match=r"failed rule: self\.lo <= self\.hi"):
        Range(lo=3, hi=2)


def test_set_and_map_lists_refuse_duplicates() -> None:
    sets = TypeAdapter(Annotated[list[str], ListType("set")])
    assert sets.validate_python(["a", "b"]) == ["a", "b"]
    with pytest.raises(ValidationError, match="duplicate entry 'a'"):
        sets.validate_python(["a", "a"])

    class Port(ApiModel):
        name: str
        protocol: str = "TCP"

    ports = TypeAdapter(Annotated[list[Port], ListMapKeys("name", "protocol")])
    ports.validate_python([{"name": "a"}, {"name": "a", "protocol": "UDP"}])
    with pytest.raises(ValidationError, match="duplicate entry with key"):
        ports.validate_python([{"name": "a"}, {"name": "a"}])


def test_bad_marker_arguments() -> None:
    with pytest.raises(ValueError, match="ListType must be"):
        ListType("bag")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="MapType must be"):
        MapType("deep")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs at least one key"):
        ListMapKeys()
    with pytest.raises(ValueError, match="not one the apiserver knows"):
        Format("zipcode")


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("ipv4", "10.0.0.1", "10.0.0.256"),
        ("ipv6", "fe80::1", "fe80:::1"),
        ("cidr", "10.0.0.0/8", "10.0.0.0"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567"),
        ("hostname", "node-1.example.com", "a.b"),
        ("mac", "00:1a:2b:3c:4d:5e", "00:1a:2b"),
    ],
)
def test_formats_are_checked_like_the_apiserver(name: str, good: str, bad: str) -> None:
    adapter = TypeAdapter(Annotated[str, Format(name)])
    assert adapter.validate_python(good) == good
    with pytest.raises(ValidationError, match=f"not a valid {name}"):
        adapter.validate_python(bad)


def test_embedded_resource_needs_api_version_and_kind() -> None:
    adapter = TypeAdapter(Annotated[dict[str, Any], EmbeddedResource()])
    adapter.validate_python({"apiVersion": "v1", "kind": "Pod"})
    with pytest.raises(ValidationError, match="needs kind"):
        adapter.validate_python({"apiVersion": "v1"})


def test_exactly_one_of_and_at_most_one_of() -> None:
    class Pick(
        ApiModel, validations=[ExactlyOneOf("gpus", "cpus"), AtMostOneOf("spot", "onDemand")]
    ):
        gpus: int | None = None
        cpus: int | None = None
        spot: bool | None = None
        on_demand: bool | None = None

    Pick(gpus=1)
    Pick(cpus=1, spot=True)
    with pytest.raises(ValidationError, match="exactly one of gpus, cpus must be set"):
        Pick()
    with pytest.raises(ValidationError, match="exactly one of gpus, cpus must be set"):
        Pick(gpus=1, cpus=2)
    with pytest.raises(ValidationError, match="at most one of spot, onDemand may be set"):
        Pick(gpus=1, spot=True, on_demand=False)
    assert [rule.rule for rule in Pick.__crd_validations__] == [
        "(has(self.gpus) ? 1 : 0) + (has(self.cpus) ? 1 : 0) == 1",
        "(has(self.spot) ? 1 : 0) + (has(self.onDemand) ? 1 : 0) <= 1",
    ]
    with pytest.raises(ValueError, match="at least two fields"):
        ExactlyOneOf("gpus")


def test_at_least_one_of() -> None:
    class Reach(ApiModel, validations=[AtLeastOneOf("email", "pagerDuty")]):
        email: str | None = None
        pager_duty: str | None = None

    Reach(email="a@b")
    Reach(email="a@b", pager_duty="p")
    with pytest.raises(ValidationError, match="at least one of email, pagerDuty must be set"):
        Reach()
    assert [rule.rule for rule in Reach.__crd_validations__] == [
        "has(self.email) || has(self.pagerDuty)"
    ]
    with pytest.raises(ValueError, match="at least two fields"):
        AtLeastOneOf("email")


def test_checks_skip_absent_optional_values() -> None:
    rule = XValidation("self > 0", check=lambda v: v > 0)
    adapter = TypeAdapter(Annotated[int | None, rule])
    assert adapter.validate_python(None) is None
    with pytest.raises(ValidationError, match="failed rule: self > 0"):
        adapter.validate_python(0)
    assert TypeAdapter(Annotated[list[str] | None, ListType("set")]).validate_python(None) is None
