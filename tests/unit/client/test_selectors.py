"""Label and field selectors parsed and matched as the apiserver does."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crdkit.client.selectors import FieldSelector, LabelSelector, SelectorError


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("", {}, True),
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "web"}, True),
        ("app=web", {"app": "db"}, False),
        ("app!=web", {}, True),  # != matches objects without the label
        ("app!=web", {"app": "web"}, False),
        ("app", {"app": ""}, True),
        ("!app", {"app": "x"}, False),
        ("!app", {}, True),
        ("tier in (a, b)", {"tier": "b"}, True),
        ("tier in (a,b)", {}, False),
        ("tier notin (a,b)", {}, True),
        ("tier notin (a,b)", {"tier": "a"}, False),
        ("app=web,tier in (a,b),!canary", {"app": "web", "tier": "a"}, True),
        ("app=web,tier in (a,b),!canary", {"app": "web", "tier": "a", "canary": "1"}, False),
        ("example.com/team=ml", {"example.com/team": "ml"}, True),
    ],
)
def test_matches(selector: str, labels: dict[str, str], expected: bool) -> None:
    assert LabelSelector.parse(selector).matches(labels) is expected


@pytest.mark.parametrize(
    "selector", ["app=", "=x", "tier in ()", "tier in (a", "a)b", "app>3", "a=b,,c=d", "bad key=x"]
)
def test_bad_selectors_name_the_part(selector: str) -> None:
    if selector == "app=":  # an empty value is valid: app=""
        assert LabelSelector.parse(selector).matches({"app": ""})
        return
    with pytest.raises(SelectorError):
        LabelSelector.parse(selector)


def test_field_selector_terms() -> None:
    parsed = FieldSelector.parse("metadata.name=a,spec.nodeName!=n1")
    assert parsed.terms == (("metadata.name", "=", "a"), ("spec.nodeName", "!=", "n1"))
    assert FieldSelector.parse(None).terms == ()
    with pytest.raises(SelectorError):
        FieldSelector.parse("metadata.name")


KEYS = st.sampled_from(["a", "b", "c"])
VALUES = st.sampled_from(["x", "y", "z"])


@given(st.dictionaries(KEYS, VALUES), st.dictionaries(KEYS, VALUES, min_size=1))
def test_equality_selector_is_a_subset_test(labels: dict[str, str], wanted: dict[str, str]) -> None:
    selector = ",".join(f"{k}={v}" for k, v in wanted.items())
    expected = all(labels.get(k) == v for k, v in wanted.items())
    assert LabelSelector.parse(selector).matches(labels) is expected
