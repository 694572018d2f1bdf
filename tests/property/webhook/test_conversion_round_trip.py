"""Hub and spoke conversion loses nothing: every version → hub → version gives the object back,
also through a ConversionReview, whose answer keeps each object's metadata as it came."""

from __future__ import annotations

from typing import Any

from examples.conversion.boxes import BOX_CONVERSION, BoxV1, BoxV2
from hypothesis import given
from hypothesis import strategies as st

from crdkit.webhook.conversion import convert_review

_NAMES = st.from_regex(r"\A[a-z0-9]([a-z0-9./-]{0,8}[a-z0-9])?\Z")
_TAGS = st.from_regex(r"\A[a-z0-9]([a-z0-9.-]{0,6}[a-z0-9])?\Z")
_METADATA = st.fixed_dictionaries(
    {"name": st.from_regex(r"\A[a-z][a-z0-9-]{0,10}\Z"), "namespace": st.just("ns")},
    optional={
        "labels": st.dictionaries(st.sampled_from(["a", "b"]), st.text(max_size=3), max_size=2),
        "resourceVersion": st.integers(1, 10**6).map(str),
        "uid": st.uuids().map(str),
    },
)
_REPLICAS = st.integers(0, 1000)


@st.composite
def v1_boxes(draw: st.DrawFn) -> dict[str, Any]:
    tag = draw(st.none() | _TAGS)
    image = draw(_NAMES) + (f":{tag}" if tag else "")
    return {
        "apiVersion": "boxes.example.com/v1",
        "kind": "Box",
        "metadata": draw(_METADATA),
        "spec": {"image": image, "replicas": draw(_REPLICAS)},
    }


@st.composite
def v2_boxes(draw: st.DrawFn) -> dict[str, Any]:
    container: dict[str, Any] = {"repository": draw(_NAMES)}
    tag = draw(st.none() | _TAGS)
    if tag is not None:
        container["tag"] = tag
    return {
        "apiVersion": "boxes.example.com/v2",
        "kind": "Box",
        "metadata": draw(_METADATA),
        "spec": {"container": container, "scale": {"replicas": draw(_REPLICAS)}},
    }


@given(v1_boxes())
def test_the_hub_through_the_spoke_and_back(raw: dict[str, Any]) -> None:
    box = BoxV1.model_validate(raw)
    assert BOX_CONVERSION.convert(BOX_CONVERSION.convert(box, BoxV2), BoxV1) == box


@given(v2_boxes())
def test_the_spoke_through_the_hub_and_back(raw: dict[str, Any]) -> None:
    box = BoxV2.model_validate(raw)
    assert BOX_CONVERSION.round_trip(box) == box


def _review(objects: list[dict[str, Any]], desired: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "u", "desiredAPIVersion": desired, "objects": objects},
    }


@given(st.lists(v1_boxes() | v2_boxes(), max_size=4), st.sampled_from(["v1", "v2"]))
def test_a_review_round_trip_gives_the_objects_back(objects: list[dict[str, Any]], to: str) -> None:
    desired = f"boxes.example.com/{to}"
    there = convert_review([BOX_CONVERSION], _review(objects, desired))["response"]
    assert there["result"] == {"status": "Success"}
    assert [o["apiVersion"] for o in there["convertedObjects"]] == [desired] * len(objects)
    assert [o["metadata"] for o in there["convertedObjects"]] == [o["metadata"] for o in objects]
    back = []
    for original, converted in zip(objects, there["convertedObjects"], strict=True):
        answer = convert_review([BOX_CONVERSION], _review([converted], original["apiVersion"]))
        back.extend(answer["response"]["convertedObjects"])
    cls = {"boxes.example.com/v1": BoxV1, "boxes.example.com/v2": BoxV2}
    assert [cls[o["apiVersion"]].model_validate(o) for o in back] == [
        cls[o["apiVersion"]].model_validate(o) for o in objects
    ]
