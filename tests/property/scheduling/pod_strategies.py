"""Hypothesis strategies for Pod JSON as the resource-request tests need it.

Every quantity is a whole number of milli-units, written in the forms real manifests use
(``100m``, ``1.5``, ``2Gi``, ``1e3``, ``2k``, bare JSON numbers), and small enough that a pod's
total stays far from the int64 limit of Go's ``MilliValue``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from factories import pod_json

RESOURCES = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "nvidia.com/gpu",
    "hugepages-2Mi",
    "example.com/widget",
]

_milli_text = st.integers(0, 64_000).map(lambda n: f"{n}m")
_whole = st.integers(0, 4096)
_decimal = st.builds(
    lambda whole, frac: f"{whole}.{frac}",
    st.integers(0, 512),
    st.from_regex(r"[0-9]{1,3}", fullmatch=True),
)
_suffixed = st.builds(
    lambda n, suffix: f"{n}{suffix}",
    st.integers(0, 2048),
    st.sampled_from(["k", "M", "G", "Ki", "Mi", "Gi"]),
)
_exponent = st.builds(lambda n, e: f"{n}e{e}", st.integers(0, 999), st.integers(0, 9))

quantities: st.SearchStrategy[str | int] = st.one_of(
    _milli_text,
    _whole.map(str),
    _decimal,
    _suffixed,
    _exponent,
    _whole,  # a bare JSON number
)

resource_lists = st.dictionaries(st.sampled_from(RESOURCES), quantities, max_size=4)


@st.composite
def containers(draw: st.DrawFn, prefix: str, init: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"name": prefix, "image": "busybox"}
    requests = draw(st.none() | resource_lists)
    if requests is not None:
        body["resources"] = {"requests": requests}
    if init:
        policy = draw(st.sampled_from([None, None, "Always", "Always", "OnFailure"]))
        if policy is not None:
            body["restartPolicy"] = policy
    return body


@st.composite
def pods(draw: st.DrawFn) -> dict[str, Any]:
    """A Pod as the apiserver's JSON: containers, init containers (some of them sidecars),
    sometimes an overhead and pod-level requests (with names pod level does not support)."""
    n = draw(st.integers(0, 4))
    m = draw(st.integers(0, 4))
    spec: dict[str, Any] = {
        "containers": [draw(containers(f"c{i}", init=False)) for i in range(n)],
    }
    if m:
        spec["initContainers"] = [draw(containers(f"i{i}", init=True)) for i in range(m)]
    if draw(st.booleans()):
        spec["overhead"] = draw(resource_lists)
    if draw(st.integers(0, 3)) == 0:
        spec["resources"] = {"requests": draw(resource_lists)}
    return pod_json(namespace="default", container=None, **spec)
