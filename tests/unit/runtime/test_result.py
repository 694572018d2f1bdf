"""Unit tests of Request and Result."""

from __future__ import annotations

import pytest

from crdkit.runtime.result import Request, Result


def test_request_str_and_ordering() -> None:
    assert str(Request("ns", "a")) == "ns/a"
    assert str(Request(None, "node-1")) == "node-1"
    assert Request("ns", "a") == Request("ns", "a")
    assert len({Request("ns", "a"), Request("ns", "a")}) == 1


@pytest.mark.parametrize(
    ("namespace", "name", "field"), [("ns", "", "name"), ("", "x", "namespace")]
)
def test_request_rejects_empty_parts(namespace: str, name: str, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Request(namespace, name)


def test_result_rejects_negative_delay() -> None:
    assert Result(requeue_after=1.5).requeue_after == 1.5
    with pytest.raises(ValueError, match="requeue_after"):
        Result(requeue_after=-1)


def test_a_scoped_request_drops_the_namespace_of_a_cluster_scoped_kind() -> None:
    assert Request.scoped("ml", "job", namespaced=True) == Request("ml", "job")
    assert Request.scoped("ml", "node-1", namespaced=False) == Request(None, "node-1")
    assert Request.scoped(None, "node-1", namespaced=False) == Request(None, "node-1")
