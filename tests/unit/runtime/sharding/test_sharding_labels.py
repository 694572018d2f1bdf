"""The names a ring writes: what ``validate_name`` lets through, the host name made a shard id,
the Lease names and the label selector of a shard's objects."""

from __future__ import annotations

import re
import socket

import pytest

from crdkit.runtime.sharding import (
    RING_LABEL,
    SHARD_ID_LABEL,
    default_shard_id,
    drain_label,
    lease_name,
    shard_label,
    shard_selector,
)
from crdkit.runtime.sharding.labels import validate_name

# Kubernetes' own rules (apimachinery's validation.IsValidLabelValue and IsDNS1123Label).
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@pytest.mark.parametrize("value", ["a", "0", "ring", "my-ring", "x" * 63, "9-a", "web-0"])
def test_a_dns_label_is_accepted_and_returned(value: str) -> None:
    assert validate_name(value, field="sharding.ring") == value
    assert DNS_LABEL.match(value)
    assert LABEL_VALUE.match(value)


@pytest.mark.parametrize(
    "value",
    # Label values that are no DNS label: they would make an invalid Lease name ('_', '.'),
    # or two ids differing only by case would share one Lease.
    [
        *("Shard_1", "a.b", "a-b_c.d", "A9", "Web-0"),
        *("", "-a", "a-", "_a", "a_", ".a", "a.", "Bad Name!", "a/b", "a:b", "ä", "x" * 64),
        "a b",
    ],
)
def test_anything_else_is_refused_naming_the_field(value: str) -> None:
    with pytest.raises(ValueError, match=r"^sharding\.shard_id: ") as raised:
        validate_name(value, field="sharding.shard_id")
    assert repr(value) in str(raised.value)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("web-0", "web-0"),
        ("Pod-A", "pod-a"),
        ("node_1.example.COM", "node-1-example-com"),
        ("--edge--", "edge"),
        ("héllo wörld", "h-llo-w-rld"),
        ("a" * 62 + ".tail", "a" * 62),  # cut at 63, where the dot became a trailing '-'
        ("b" * 100, "b" * 63),
        ("---", "shard"),
        ("", "shard"),
        ("...", "shard"),
    ],
)
def test_the_default_shard_id_is_the_host_name_made_a_label_value(
    monkeypatch: pytest.MonkeyPatch, host: str, expected: str
) -> None:
    monkeypatch.setattr(socket, "gethostname", lambda: host)
    shard = default_shard_id()
    assert shard == expected
    assert LABEL_VALUE.match(shard)
    assert validate_name(shard, field="sharding.shard_id") == shard
    # and it makes a Lease name (lower case, no '_' or '.')
    assert DNS_LABEL.match(shard)


def test_the_lease_name_joins_the_ring_and_the_shard() -> None:
    assert lease_name("ring", "web-0") == "ring-shard-web-0"
    assert DNS_LABEL.match(lease_name("x" * 20, "y" * 20))


def test_labels_and_selector_name_the_ring_and_the_shard() -> None:
    assert shard_label("jobs") == "shard.crdkit.io/jobs"
    assert drain_label("jobs") == "drain.shard.crdkit.io/jobs"
    assert shard_selector("jobs", "web-1") == "shard.crdkit.io/jobs=web-1"
    assert shard_selector("jobs", "web-1") != shard_selector("other", "web-1")
    assert (RING_LABEL, SHARD_ID_LABEL) == ("shard.crdkit.io/ring", "shard.crdkit.io/id")
