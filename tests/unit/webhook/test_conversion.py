"""``convert_review``'s answers for what is not a plain success, and ``Conversion``'s checks."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from examples.conversion.boxes import BOX_CONVERSION, BoxV1, BoxV2

from crdkit import CustomResource
from crdkit.runtime import Conversion
from crdkit.webhook.conversion import ConversionError, convert_review


def _review(objects: list[Any], desired: str = "boxes.example.com/v2") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "u", "desiredAPIVersion": desired, "objects": objects},
    }


def _v1(name: str, image: str = "nginx:1") -> dict[str, Any]:
    return {
        "apiVersion": "boxes.example.com/v1",
        "kind": "Box",
        "metadata": {"name": name},
        "spec": {"image": image},
    }


def test_a_same_version_object_comes_back_as_it_was() -> None:
    raw = _v1("a") | {"extra": True}
    answer = convert_review([BOX_CONVERSION], _review([raw], "boxes.example.com/v1"))
    assert answer["response"]["convertedObjects"] == [raw]


@pytest.mark.parametrize(
    ("objects", "desired", "message"),
    [
        ([_v1("a"), _v1("bad", image="UPPER")], "boxes.example.com/v2", "objects[1] (bad)"),
        ([_v1("a")], "boxes.example.com/v9", "Box has no version 'boxes.example.com/v9'"),
        ([{"apiVersion": "other.io/v1", "kind": "Box"}], "other.io/v2", "no conversion for Box"),
        (["x"], "boxes.example.com/v2", "objects[0] to boxes.example.com/v2: ConversionError: not"),
    ],
)
def test_a_failure_names_the_object_and_converts_nothing(
    objects: list[Any], desired: str, message: str
) -> None:
    response = convert_review([BOX_CONVERSION], _review(objects, desired))["response"]
    assert response["convertedObjects"] == []
    assert response["result"]["status"] == "Failure"
    assert message in response["result"]["message"]


class Broken(BoxV2, version="v3"):
    def to_hub(self) -> BoxV1:
        raise KeyError("bug")


def test_a_crash_in_user_code_is_a_failure_and_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    conversion = Conversion(hub=BoxV1, spokes=(Broken,))
    raw = {
        "apiVersion": "boxes.example.com/v3",
        "kind": "Box",
        "metadata": {"name": "b"},
        "spec": {"container": {"repository": "r"}},
    }
    with caplog.at_level(logging.ERROR, logger="crdkit.webhook.conversion"):
        response = convert_review([conversion], _review([raw], "boxes.example.com/v1"))["response"]
    assert response["result"]["message"] == (
        "converting objects[0] (b) to boxes.example.com/v1: KeyError: 'bug'"
    )
    assert len(caplog.records) == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "JSON object"),
        ({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "ConversionReview"}, "apiVersion"),
        (_review([]) | {"request": {"uid": "", "desiredAPIVersion": "a/b", "objects": []}}, "uid"),
        (_review([], desired="v1"), "desiredAPIVersion"),
        (_review([]) | {"request": {"uid": "u", "desiredAPIVersion": "a/b"}}, "objects"),
    ],
)
def test_a_body_that_is_not_a_review(body: Any, message: str) -> None:
    with pytest.raises(ConversionError, match=message):
        convert_review([BOX_CONVERSION], body)


class Other(CustomResource, group="other.example.com", version="v1", kind="Other"):
    pass


class NoMethods(CustomResource, group="boxes.example.com", version="v5", kind="Box"):
    pass


@pytest.mark.parametrize(
    ("spokes", "message"),
    [
        ((), "at least one spoke"),
        ((Other,), "not of the hub's kind"),
        ((BoxV2, BoxV2), "version v2 is given twice"),
        ((NoMethods,), "must define to_hub"),
    ],
)
def test_a_bad_conversion_is_named(spokes: tuple[type[Any], ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Conversion(hub=BoxV1, spokes=spokes)
