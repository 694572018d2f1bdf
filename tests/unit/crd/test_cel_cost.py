"""The offline estimate of a rule's cost, in cel-go's and the apiserver's units.

The expected numbers are the apiserver's own: each was confirmed against a real kube-apiserver
1.37 by tests/integration/crd/test_cel_cost_apiserver.py (a rule of cost c accepted under a
list of 10,000,000 // c items and refused with one more).
"""

from __future__ import annotations

from typing import Any

import pytest

from crdkit.crd import AtMostOneOf, ExactlyOneOf
from crdkit.crd.cel_cost import NotEstimated, estimate_rule
from crdkit.crd.cel_types import Decl, decl_type


def obj(max_length: int | None = None) -> Decl:
    text: dict[str, Any] = {"type": "string"} | ({"maxLength": max_length} if max_length else {})
    tags: dict[str, Any] = {"type": "array", "items": text}
    if max_length:
        tags["maxItems"] = 20
    found = decl_type({
        "type": "object",
        "properties": {"a": text, "b": text, "c": text, "n": {"type": "integer"}, "tags": tags,
                       "labels": {"type": "object", "additionalProperties": text},
                       "when": {"type": "string", "format": "date-time"},
                       "any": {"x-kubernetes-int-or-string": True}},
    })  # fmt: skip
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("rule", "unbounded_cost", "bounded_cost"),
    [
        ("[has(self.a), has(self.b)].filter(x, x).size() == 1", 53, 53),
        ("(has(self.a) ? 1 : 0) + (has(self.b) ? 1 : 0) == 1", 4, 4),
        ("[has(self.a) && !has(self.b), has(self.b) && !has(self.a)].exists_one(v, v)", 24, 24),
        ("self.a.startsWith('x')", 3, 3),
        ("self.a.matches('^[a-z]+$')", 629148, 54),
        ("self.a == self.b", 314577, 30),
        ("self.a < self.b", 314577, 30),
        ("self.n > 0 && self.n < 10", 6, 6),
        ("self.tags.all(t, t.size() < 5)", 6291453, 123),
        ("self.tags.exists_one(t, t == 'x')", 4194304, 84),
        ("self.tags.map(t, t.size()).all(x, x < 3)", 19922939, 394),
        ("self.tags.filter(t, t.startsWith('a')).size() <= 1", 15728640, 315),
        ("'x' in self.tags", 1048577, 22),
        ("self.a.lowerAscii() == self.a", 629150, 56),
        ("self.a.contains('--')", 314575, 28),
        ("self.a.split('/').size() <= 3", 629150, 56),
        ("self.tags.join(',').size() < 100", 329853068907, 518),
        ("self.a.replace('-', '') != ''", 629148, 54),
        ("self.a.indexOf('x') >= 0", 314576, 29),
        ("self.tags.isSorted()", 329854432052, 542),
        ("self.labels.exists(k, self.labels[k] == 'v')", 3538938, 3538938),
        ("self.tags + ['x'] == self.tags", 104873, 17),
        ("self.a.matches(self.b)", 247390273540, 1668),
        ("self.tags.all(t, self.tags.exists(u, u == t))", 345882608640773328, 12923),
        ("quantity('1Gi').isGreaterThan(quantity('1Mi'))", 3, 3),
        ("type(self.n) == int", 4, 4),
        ("matches(self.a, '^x')", 314575, 28),
        ("isURL(self.a)", 3, 3),
        ("url(self.a) == url(self.b)", 943723, 82),
        ("quantity(self.a) == quantity('1')", 314577, 30),
        # the library prices only ==; != falls back to sizes a quantity does not have
        ("quantity(self.a) != quantity('1')", 1844674407371269840, 1844674407370955293),
        ("self.when + duration('1h') > self.when", 7, 7),
        ("['a','b'].exists(x, x == self.a)", 25, 25),
        ("self.a.findAll('x').size() < 3", 314577, 30),
        ("self.tags.min() == 'a'", 329854432053, 543),
        ("self.labels.all(k, v, k.size() < 10 && v.startsWith('x'))", 3145723, 3145723),
        ("self.tags.existsOne(i, t, t == self.a)", 329858626354, 624),
        ("self.tags.transformList(i, t, i < 3, t + 'x').exists(u, u == 'ax')", 329874354989, 934),
    ],
)
def test_costs_are_the_apiservers(rule: str, unbounded_cost: int, bounded_cost: int) -> None:
    assert estimate_rule(rule, obj()).cost == unbounded_cost
    assert estimate_rule(rule, obj(64)).cost == bounded_cost


@pytest.mark.parametrize("count", [2, 3, 5, 8])
def test_generated_presence_rules_cost_two_a_field(count: int) -> None:
    fields = [f"f{i}" for i in range(count)]
    self_type = decl_type({"type": "object", "properties": {f: {"type": "string"} for f in fields}})
    assert self_type is not None
    assert estimate_rule(ExactlyOneOf(*fields).rule, self_type).cost == 2 * count
    assert estimate_rule(AtMostOneOf(*fields).rule, self_type).cost == 2 * count


def test_the_values_read_without_bounds_are_reported() -> None:
    found = estimate_rule("self.tags.all(t, t.startsWith(self.a))", obj())
    # the prefix and the number of tags weigh; each tag's own length does not
    assert set(found.unbounded) == {"self.tags", "self.a"}
    found = estimate_rule("self.tags.all(t, t.lowerAscii() == self.b)", obj())
    assert set(found.unbounded) == {"self.tags", "self.tags[*]", "self.b"}
    found = estimate_rule("self.a.lowerAscii().startsWith('x') && self.c.size() > 0", obj())
    assert found.unbounded == ("self.a",)  # lowerAscii() traverses it; size() is O(1)
    assert estimate_rule("self.tags.all(t, t.startsWith(self.a))", obj(64)).unbounded == ()


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ("cel.bind(x, self.a, x == 'b')", "not read: cel.bind"),
        ("self.any + 1 == 2", r"_\+_ on a value of dynamic type"),
        ("self.nope == 1", "no field 'nope'"),
        ("other.a == 1", "unknown variable 'other'"),
        ("self.a.format([1])", "method format"),
        ("frobnicate(self.a)", "function frobnicate"),
        ("self.n.size() == 1", "size.. of a int"),
        ("self.a + 1 == 'x'", r"\+ between string and int"),
        ("self.when + self.when > self.when", r"\+ between two timestamps"),
    ],
)
def test_what_is_not_modelled_is_not_estimated(rule: str, reason: str) -> None:
    with pytest.raises(NotEstimated, match=reason):
        estimate_rule(rule, obj())


def test_dynamic_values_allowed_where_the_overload_does_not_matter() -> None:
    assert estimate_rule("self.any == 1 || size(self.any) > 2", obj()).cost > 0
    assert estimate_rule("self.when < timestamp('2030-01-01T00:00:00Z')", obj()).cost == 4


def test_string_of_a_string_or_an_int_or_string_is_no_longer_than_the_value() -> None:
    # quantity(string(x)) is how a rule reads an int-or-string quantity (the Queue CRD's
    # lendingLimit rule); kube-apiserver 1.37 accepts it on 256 quotas of at most 64 characters
    # (tests/integration/scheduling/test_queue_crd_live.py), which an unknown size would not.
    direct = estimate_rule("quantity(self.a) == quantity('1')", obj(64)).cost
    assert estimate_rule("quantity(string(self.a)) == quantity('1')", obj(64)).cost == direct + 1
    quotas = decl_type({
        "type": "object",
        "properties": {"q": {"x-kubernetes-int-or-string": True, "maxLength": 64},
                       "n": {"x-kubernetes-int-or-string": True, "maxLength": 64}},
    })  # fmt: skip
    assert quotas is not None
    rule = "quantity(string(self.q)).compareTo(quantity(string(self.n))) <= 0"
    assert estimate_rule(rule, quotas).cost == 60
    # without maxLength the value may be as long as a request, and so may its text
    unbounded = estimate_rule("quantity(string(self.any)) == quantity('1')", obj()).cost
    assert unbounded == estimate_rule("quantity(self.a) == quantity('1')", obj()).cost + 1


def test_an_optional_old_self_is_unwrapped_by_its_methods() -> None:
    rule = "!oldSelf.hasValue() || self.n >= oldSelf.value().n"
    assert estimate_rule(rule, obj(), optional_old_self=True).cost == 9
    with pytest.raises(NotEstimated, match="method hasValue"):
        estimate_rule(rule, obj())
