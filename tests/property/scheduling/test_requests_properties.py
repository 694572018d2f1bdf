"""Hypothesis: pod_requests against the sidecar KEP's formula, stated another way, and the
same answer for every input form."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from pod_strategies import pods

from crdkit.placer.quantity import parse_quantity
from crdkit.resources import Pod
from crdkit.scheduling.requests import pod_requests, requests_as_quantities


def _requests(container: dict[str, Any]) -> dict[str, int]:
    found = container.get("resources", {}).get("requests", {})
    return {name: parse_quantity(text) for name, text in found.items()}


def _plus(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {name: a.get(name, 0) + b.get(name, 0) for name in a.keys() | b.keys()}


def _highest(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {name: max(a.get(name, 0), b.get(name, 0)) for name in a.keys() | b.keys()}


def kep_formula(body: dict[str, Any]) -> dict[str, int]:
    """max(sum(app containers) + sum(sidecars), max over init containers i of
    InitContainerUse(i)), with InitContainerUse(i) = the sidecars before i, plus i itself;
    then pod-level cpu/memory/hugepages replace, then overhead adds. Written with the pure
    Python quantity parser and whole-dict operations, unlike the module."""
    spec = body["spec"]
    inits = spec.get("initContainers", [])
    total: dict[str, int] = {}
    for c in spec["containers"]:
        total = _plus(total, _requests(c))
    sidecars = [c for c in inits if c.get("restartPolicy") == "Always"]
    for c in sidecars:
        total = _plus(total, _requests(c))
    for i, c in enumerate(inits):
        before = {}
        for earlier in inits[:i]:
            if earlier.get("restartPolicy") == "Always":
                before = _plus(before, _requests(earlier))
        total = _highest(total, _plus(before, _requests(c)))
    for name, text in spec.get("resources", {}).get("requests", {}).items():
        if name in ("cpu", "memory") or name.startswith("hugepages-"):
            total[name] = parse_quantity(text)
    overhead = {name: parse_quantity(text) for name, text in spec.get("overhead", {}).items()}
    return _plus(total, overhead)


@given(pods())
def test_the_kep_formula(body: dict[str, Any]) -> None:
    assert pod_requests(body) == kep_formula(body)


@given(pods())
def test_every_input_form_agrees(body: dict[str, Any]) -> None:
    model = Pod.model_validate(body)
    expected = pod_requests(body)
    assert pod_requests(body["spec"]) == expected
    assert pod_requests(model) == expected
    assert pod_requests(model.spec) == expected
    # A read-modify-write through the model keeps what the answer depends on.
    assert pod_requests(model.to_dict()) == expected


@given(pods())
def test_quantities_round_trip_through_the_placer_form(body: dict[str, Any]) -> None:
    milli = pod_requests(body)
    again = {name: parse_quantity(text) for name, text in requests_as_quantities(milli).items()}
    assert again == milli
