"""``LabelSelector.matches`` (the object form, as PodDisruptionBudgets and workloads carry it)
agrees with the client's parser of the string form for every selector and label set."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from crdkit.client.selectors import LabelSelector as ParsedSelector
from crdkit.resources.meta import LabelSelector, LabelSelectorRequirement

KEYS = st.sampled_from(["app", "role", "tier"])
VALUES = st.sampled_from(["a", "b", "c"])


@st.composite
def selectors(draw: st.DrawFn) -> LabelSelector:
    terms = []
    for _ in range(draw(st.integers(0, 3))):
        operator = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
        values = (
            draw(st.lists(VALUES, min_size=1, max_size=2, unique=True))
            if operator in ("In", "NotIn")
            else []
        )
        terms.append(LabelSelectorRequirement(key=draw(KEYS), operator=operator, values=values))
    return LabelSelector(
        match_labels=draw(st.dictionaries(KEYS, VALUES, max_size=2)), match_expressions=terms
    )


def as_text(selector: LabelSelector) -> str:
    parts = [f"{key}={value}" for key, value in selector.match_labels.items()]
    for term in selector.match_expressions:
        if term.operator == "In":
            parts.append(f"{term.key} in ({','.join(term.values)})")
        elif term.operator == "NotIn":
            parts.append(f"{term.key} notin ({','.join(term.values)})")
        elif term.operator == "Exists":
            parts.append(term.key)
        else:
            parts.append(f"!{term.key}")
    return ",".join(parts)


@given(selectors(), st.dictionaries(KEYS, VALUES))
def test_the_object_form_matches_as_its_string_form_does(
    selector: LabelSelector, labels: dict[str, str]
) -> None:
    assert selector.matches(labels) == ParsedSelector.parse(as_text(selector)).matches(labels)
