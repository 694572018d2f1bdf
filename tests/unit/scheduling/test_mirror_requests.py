"""`ClusterMirror.requests`: a pod's requests parsed once per version of the pod (uid and
resourceVersion) the mirror sees, by `set_pod` for every pod, counted or pending, and kept
until the pod is removed."""

from __future__ import annotations

from typing import Any

import pytest

import factories
from crdkit.resources import Pod
from crdkit.scheduling import ClusterMirror, pod_requests
from crdkit.scheduling import mirror as mirror_module

GPU = "nvidia.com/gpu"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the pods the mirror parsed the requests of, in order."""
    seen: list[str] = []

    def counting(pod: Pod) -> dict[str, int]:
        seen.append(pod.metadata.name or "")
        return pod_requests(pod)

    monkeypatch.setattr(mirror_module, "pod_requests", counting)
    return seen


def mirror_with_node() -> ClusterMirror:
    mirror = ClusterMirror(["rack"])
    mirror.set_node(factories.node("n1", gpus=16))
    return mirror


def pod(name: str = "a", *, version: str | None = "1", uid: str = "u1", **fields: Any) -> Pod:
    return factories.pod(name, namespace="ns", uid=uid, resource_version=version, **fields)


def test_a_bound_pod_is_parsed_once_by_set_pod_and_not_again(parses: list[str]) -> None:
    mirror = mirror_with_node()
    bound = pod(node="n1", gpus=8, phase="Running")
    mirror.set_pod(bound)
    assert parses == ["a"]  # counting it parsed nothing twice
    mirror.set_pod(bound)  # the same version again (a resync)
    assert mirror.requests(bound) == pod_requests(bound) == {GPU: 8000}
    assert mirror.requests_of("ns/a") == {GPU: 8000}
    assert parses == ["a"]


def test_a_pending_pod_is_parsed_by_set_pod_too(parses: list[str]) -> None:
    mirror = mirror_with_node()
    pending = pod(gpus=2, requests={"cpu": "500m"})
    mirror.set_pod(pending)
    assert not mirror.is_counted("ns/a")
    assert mirror.requests(pending) == {GPU: 2000, "cpu": 500}
    assert parses == ["a"]


def test_a_pod_not_seen_yet_is_parsed_once_by_requests(parses: list[str]) -> None:
    mirror = mirror_with_node()
    assert mirror.requests(pod(gpus=1)) == {GPU: 1000}
    assert mirror.requests(pod(gpus=1)) == {GPU: 1000}
    assert parses == ["a"]


def test_a_new_resource_version_or_uid_is_parsed_again(parses: list[str]) -> None:
    mirror = mirror_with_node()
    mirror.set_pod(pod(gpus=1))
    assert mirror.requests(pod(version="2", gpus=4)) == {GPU: 4000}
    assert mirror.requests(pod(version="2", gpus=4)) == {GPU: 4000}
    assert len(parses) == 2
    assert mirror.requests(pod(version="2", uid="u2", gpus=6)) == {GPU: 6000}
    assert len(parses) == 3


def test_a_new_version_of_a_counted_pod_is_parsed_once_and_counted_as_it_asks(
    parses: list[str],
) -> None:
    mirror = mirror_with_node()
    mirror.set_pod(pod(node="n1", gpus=8, phase="Running"))
    resized = pod(version="2", node="n1", gpus=4, phase="Running")
    mirror.set_pod(resized)
    assert len(parses) == 2
    assert mirror.requests(resized) == {GPU: 4000}
    assert mirror.used("n1")[GPU] == 4000
    assert len(parses) == 2


def test_a_removed_pods_requests_are_gone(parses: list[str]) -> None:
    mirror = mirror_with_node()
    for removal in (pod(), "ns/a"):
        mirror.set_pod(pod(gpus=1))
        mirror.remove_pod(removal)
        before = len(parses)
        assert mirror.requests(pod(gpus=1)) == {GPU: 1000}
        assert len(parses) == before + 1  # nothing was kept to reuse


def test_removing_an_older_pod_of_the_name_keeps_the_newer_ones_requests(
    parses: list[str],
) -> None:
    mirror = mirror_with_node()
    newer = pod(uid="u2", version="5", gpus=2)
    mirror.set_pod(newer)
    mirror.remove_pod(pod(uid="u1", version="3", gpus=1))
    assert mirror.requests(newer) == {GPU: 2000}
    assert parses == ["a"]


def test_a_pod_without_resource_version_is_parsed_every_time(parses: list[str]) -> None:
    # Nothing tells two such versions apart, so none is reused.
    mirror = mirror_with_node()
    mirror.set_pod(pod(version=None, gpus=1))
    assert mirror.requests(pod(version=None, gpus=3)) == {GPU: 3000}
    assert len(parses) == 2


def test_a_malformed_request_of_a_pending_pod_is_raised_by_requests_only() -> None:
    mirror = mirror_with_node()
    bad = pod(gpus=1, overhead={"cpu": "1x"})  # an undeclared field: not validated
    mirror.set_pod(bad)  # an informer event: nothing raised, nothing counted
    assert not mirror.is_counted("ns/a")
    with pytest.raises(ValueError, match="invalid quantity"):
        mirror.requests(bad)
