"""The offline CEL cost check against the real apiserver: same verdict on every case.

Each case is one rule placed in a schema (at the top of ``spec``, on the items of bounded and
unbounded lists and maps, in nested lists, on strings with and without ``maxLength``) and sent
as a dry-run CRD create: the apiserver accepts it or refuses it for cost (422 "exceeds
budget"), and ``crdkit.crd.budget`` must say the same. The rules are crdkit's own (ExactlyOneOf,
AtMostOneOf, untagged unions, in the spelling generated now and in the list-building one
generated before) and a set of user rules of the common shapes. A second set pins each user
rule's estimate exactly: under a list of ``maxItems`` = budget // cost the rule must pass and
with one item more it must fail. Tallies print with ``-s`` as ``cel cost ...``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from crd_api import BlockingApi
from pydantic import Field

from crdkit.crd import AtMostOneOf, ExactlyOneOf, build_crds, rule_costs
from crdkit.crd.budget import PER_RULE_LIMIT, budget_problems
from crdkit.crd.errors import SchemaError
from crdkit.crd.unions import merge_variants
from crdkit.resources import ApiModel, CustomResource, resource_info
from crdkit.testing import ControlPlane, crd_manifest

pytestmark = pytest.mark.integration

DRY_RUN_CREATE = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All"
Schema = dict[str, Any]


def _union_rule() -> str:
    def error(where: str, why: str) -> SchemaError:
        return SchemaError("Case", where, why)

    variants = [
        ("ByA", {"properties": {"a": {"type": "string"}}, "required": ["a"]}),
        ("ByB", {"properties": {"b": {"type": "string"}}, "required": ["b"]}),
    ]
    return str(merge_variants(variants, None, error)["x-kubernetes-validations"][0]["rule"])


# crdkit's own rules as generated now, and as generated before the cost fix
GENERATED = {
    "exactly_one": ExactlyOneOf("a", "b").rule,
    "at_most_one": AtMostOneOf("a", "b", "c").rule,
    "union": _union_rule(),
}
OLD_SPELLING = {
    "old_exactly_one": "[has(self.a), has(self.b)].filter(x, x).size() == 1",
    "old_at_most_one": "[has(self.a), has(self.b), has(self.c)].filter(x, x).size() <= 1",
    "old_union": "[has(self.a) && !has(self.b), has(self.b) && !has(self.a)].exists_one(v, v)",
}
USER = {
    "has_and_compare": "!has(self.a) || self.a.endsWith('z')",
    "int_range": "self.n > 0 && self.n < 10",
    "size": "size(self.a) < 10",
    "string_equality": "self.a == self.b",
    "string_order": "self.a < self.b",
    "starts_with": "self.a.startsWith('x')",
    "contains": "self.a.contains('--')",
    "regex": "self.a.matches('^[a-z]+$')",
    "lower_ascii": "self.a.lowerAscii() == self.a",
    "split": "self.a.split('/').size() <= 3",
    "replace": "self.a.replace('-', '') != ''",
    "concat": "self.a + self.b == 'ab'",
    "ternary": "has(self.a) ? self.a.size() > 0 : true",
    "all": "self.tags.all(t, t.size() < 5)",
    "exists": "self.tags.exists(t, t == 'x')",
    "exists_one": "self.tags.exists_one(t, t == 'x')",
    "map_then_all": "self.tags.map(t, t.size()).all(x, x < 3)",
    "filter": "self.tags.filter(t, t.startsWith('a')).size() <= 1",
    "in_list": "'x' in self.tags",
    "join": "self.tags.join(',').size() < 100",
    "nested_macros": "self.tags.all(t, self.tags.exists(u, u == t))",
    "map_keys": "self.labels.all(k, k.size() < 5)",
    "map_lookup": "self.labels.exists(k, self.labels[k] == 'v')",
    "index": "self.tags[0] == 'x'",
    "quantity": "quantity('1Gi').isGreaterThan(quantity('1Mi'))",
}

# more shapes, pinned at the budget edge only (test_the_estimate_is_exact)
MORE_USER = {
    "timestamp_arithmetic": "self.when + duration('1h') > self.when",
    "int_arithmetic": "self.n * 2 + 1 < 10",
    "modulo": "self.n % 2 == 0",
    "double": "double(self.n) / 2.0 < 3.0",
    "time_accessor": "self.when.getHours() < 3",
    "short_circuit_regex": "self.a.size() == 0 || self.a.matches('^x')",
    "global_matches": "matches(self.a, '^x')",
    "regex_on_regex": "matches(self.a, self.b)",
    "map_key_prefix": "self.labels.exists(k, k.startsWith('a'))",
    "list_literal_range": "['a','b'].exists(x, x == self.a)",
    "map_literal_range": "{'a': 1}.exists(k, k == self.a)",
    "map_with_filter": "self.tags.map(t, t.size() > 0, t).size() > 0",
    "char_at": "self.a.charAt(0) == 'x'",
    "trim_upper": "self.a.trim().upperAscii() == 'X'",
    "substring": "self.a.substring(1, 3) == 'ab'",
    "string_of_int": "string(self.n) == '1'",
    "bytes": "bytes(self.a).size() < 10",
    "find_all": "self.a.findAll('x').size() < 3",
    "find": "self.a.find('[0-9]+') == '1'",
    "is_url": "isURL(self.a)",
    "url_host": "url(self.a).getHost() == 'x'",
    "url_equality": "url(self.a) == url(self.b)",
    "quantity_equality": "quantity(self.a) == quantity('1')",
    "last_index_of": "self.a.lastIndexOf('x') > 1",
    "list_index_of": "self.tags.indexOf('x') >= 0",
    "list_min": "self.tags.min() == 'a'",
    "in_map": "self.tags.exists(t, t in self.labels)",
    "split_limit_index": "self.a.split('/', 2)[0] == 'x'",
    "mapped_concat": "self.tags.map(t, t + '-').exists(u, u == self.a + '-')",
    "concat_size": "(self.a + self.b).size() < 10",
    "filter_map_all": "self.tags.filter(t, t != '').map(t, t.size()).all(n, n > 1)",
    "two_var_all_on_map": "self.labels.all(k, v, k.size() < 10 && v.startsWith('x'))",
    "two_var_exists_on_list": "self.tags.exists(i, t, i > 0 && t == 'x')",
    "two_var_exists_one": "self.tags.existsOne(i, t, t == self.a)",
    "two_var_exists_one_on_map": "self.labels.exists_one(k, v, v == k)",
    "transform_list": "self.tags.transformList(i, t, t.size()).all(n, n < 3)",
    "transform_list_filtered": "self.tags.transformList(i, t, i < 3, t + 'x').exists(u, u == 'ax')",
}


def item(rules: list[str], max_length: int | None, required: bool = False) -> Schema:
    """An object with the fields the rules read; strings bounded by ``max_length`` or not."""
    text: Schema = {"type": "string"} | ({"maxLength": max_length} if max_length else {})
    tags: Schema = {"type": "array", "items": text} | ({"maxItems": 20} if max_length else {})
    labels: Schema = {"type": "object", "additionalProperties": text}
    return {
        "type": "object",
        "properties": {"a": text, "b": text, "c": text, "n": {"type": "integer"}, "tags": tags,
                       "labels": labels, "when": {"type": "string", "format": "date-time"}},
        **({"required": ["a"]} if required else {}),
        "x-kubernetes-validations": [{"rule": rule} for rule in rules],
    }  # fmt: skip


def _list(items: Schema, max_items: int | None = None) -> Schema:
    return {"type": "array", "items": items} | ({"maxItems": max_items} if max_items else {})


def _map(values: Schema, max_properties: int | None = None) -> Schema:
    bound = {"maxProperties": max_properties} if max_properties else {}
    return {"type": "object", "additionalProperties": values} | bound


PLACES = {
    "top": lambda i: i,
    "list": _list,
    "list_of_10": lambda i: _list(i, 10),
    "list_of_100000": lambda i: _list(i, 100_000),
    "map": _map,
    "map_of_50": lambda i: _map(i, 50),
    "unbounded_in_bounded_list": lambda i: _list(_list(i), 10),
    "bounded_in_bounded_list": lambda i: _list(_list(i, 100), 100),
}


def spec_schema(value: Schema) -> Schema:
    return {"type": "object", "properties": {"spec": {"type": "object",
                                                      "properties": {"x": value}}}}  # fmt: skip


def crd(schema: Schema) -> Schema:
    return crd_manifest("cost.crdkit.dev", "Probe", schema)


@pytest.fixture(scope="module")
def cost_api(control_plane: ControlPlane) -> BlockingApi:
    return BlockingApi(control_plane)


def apiserver_refuses(api: BlockingApi, schema: Schema) -> bool:
    """True if the apiserver refuses the CRD for cost; any other refusal fails the test."""
    status, body = api.request("POST", DRY_RUN_CREATE, crd(schema))
    if status == 201:
        return False
    message = str(body.get("message", ""))
    assert status == 422, body
    assert "exceeds budget" in message, message
    return True


def offline_refuses(schema: Schema) -> bool:
    assert all(r.cost is not None for r in rule_costs(schema)), rule_costs(schema)
    return bool(budget_problems(schema))


TALLY: Counter[str] = Counter()
RULES = {**GENERATED, **OLD_SPELLING, **USER, **MORE_USER}


@pytest.mark.parametrize("name", sorted({**GENERATED, **OLD_SPELLING, **USER}))
def test_offline_verdict_is_the_apiservers(cost_api: BlockingApi, name: str) -> None:
    mismatches = []
    # a required field changes the shortest item, so the count assumed under unbounded lists
    requirements = (False,) if name in USER else (False, True)
    for place, wrap in PLACES.items():
        for max_length in (None, 64):
            for required in requirements:
                schema = spec_schema(wrap(item([RULES[name]], max_length, required)))
                refused = apiserver_refuses(cost_api, schema)
                if offline_refuses(schema) != refused:
                    mismatches.append((place, max_length, required, refused))
                kind = "old" if name in OLD_SPELLING else "new" if name in GENERATED else "user"
                TALLY[f"{kind} cases"] += 1
                TALLY[f"{kind} refused by the apiserver"] += refused
                TALLY["agree"] += offline_refuses(schema) == refused
                TALLY["cases"] += 1
    print(f"cel cost after {name}: {dict(sorted(TALLY.items()))}")
    assert not mismatches, f"offline and apiserver disagree for {name}: {mismatches}"


def _once(name: str, max_length: int | None) -> int:
    (alone,) = rule_costs(spec_schema(item([RULES[name]], max_length)))
    assert alone.cost is not None
    return alone.cost


# rules over budget even once (a regex on an unbounded string...) cannot be pinned this way
PINNABLE = [
    (name, max_length)
    for name in sorted(USER) + sorted(MORE_USER) + sorted(GENERATED)
    for max_length in (None, 64)
    if _once(name, max_length) <= PER_RULE_LIMIT
]


@pytest.mark.parametrize(("name", "max_length"), PINNABLE)
def test_the_estimate_is_exact(cost_api: BlockingApi, name: str, max_length: int | None) -> None:
    rule = RULES[name]
    cost = _once(name, max_length)
    most = PER_RULE_LIMIT // cost
    just_in = spec_schema(_list(item([rule], max_length), most))
    just_out = spec_schema(_list(item([rule], max_length), most + 1))
    assert not offline_refuses(just_in)
    assert offline_refuses(just_out)
    assert not apiserver_refuses(cost_api, just_in), f"{rule}: estimated {cost}, too high"
    assert apiserver_refuses(cost_api, just_out), f"{rule}: estimated {cost}, too low"


def test_the_schema_total_is_the_apiservers(cost_api: BlockingApi) -> None:
    # each copy costs 3 x 3,166,666 = 9,499,998: under the per-rule budget, ten of them under
    # the 100,000,000 total and eleven over it
    rule = "self.a.startsWith('x')"
    for copies, over in ((10, False), (11, True)):
        schema = spec_schema(_list(item([rule] * copies, None), 3_166_666))
        problems = budget_problems(schema)
        assert bool(problems) is over
        assert all("per schema" in p for p in problems)
        assert apiserver_refuses(cost_api, schema) is over


class Src(ApiModel, validations=[ExactlyOneOf("configMap", "secret")]):
    config_map: str | None = None
    secret: str | None = None


class VolumesSpec(ApiModel):
    volumes: list[Src] = Field(default_factory=list)


class Volumes(CustomResource, group="cost.example.com", version="v1"):
    spec: VolumesSpec


def test_exactly_one_of_on_an_unbounded_list_is_accepted(cost_api: BlockingApi) -> None:
    # issue 11: the apiserver refused this CRD ("exceeds budget by factor of 5.6x")
    (generated,) = build_crds([Volumes])
    status, body = cost_api.request("POST", DRY_RUN_CREATE, generated)
    assert status == 201, body


@pytest.mark.asyncio(loop_scope="session")
async def test_exactly_one_of_on_list_items_keeps_its_meaning(
    control_plane: ControlPlane, cost_api: BlockingApi
) -> None:
    # the cheap spelling, installed for real: each item needs exactly one of the two
    await control_plane.install_crds(build_crds([Volumes]))
    namespace = cost_api.new_namespace()
    collection = resource_info(Volumes).path(namespace=namespace)
    for index, (volumes, valid) in enumerate([
        ([{"configMap": "a"}, {"secret": "b"}], True),
        ([], True),
        ([{"configMap": "a"}, {"configMap": "a", "secret": "b"}], False),
        ([{"secret": "b"}, {}], False),
    ]):  # fmt: skip
        body = {"apiVersion": "cost.example.com/v1", "kind": "Volumes",
                "metadata": {"name": f"v{index}"}, "spec": {"volumes": volumes}}  # fmt: skip
        status, answer = cost_api.request("POST", collection, body)
        assert status == (201 if valid else 422), (volumes, answer)
        if not valid:
            assert "exactly one of configMap, secret must be set" in answer["message"]


def _keyed_list(items: Schema, max_items: int | None = None) -> Schema:
    # transition rules need items the apiserver can pair with their old selves
    keyed = items | {"required": ["a"]}
    return _list(keyed, max_items) | {"x-kubernetes-list-type": "map",
                                      "x-kubernetes-list-map-keys": ["a"]}  # fmt: skip


TRANSITIONS = {
    "immutable": "self == oldSelf",
    "immutable_field": "self.b == oldSelf.b",
    "only_grows": "size(self.tags) >= size(oldSelf.tags)",
    "time_moves_on": "self.n >= oldSelf.n",
}


@pytest.mark.parametrize("name", sorted(TRANSITIONS))
def test_transition_rules_on_keyed_lists_and_maps(cost_api: BlockingApi, name: str) -> None:
    places = {
        "keyed_list": _keyed_list,
        "keyed_list_of_100": lambda i: _keyed_list(i, 100),
        "map": _map,
        "map_of_1000": lambda i: _map(i, 1000),
    }
    mismatches = []
    for place, wrap in places.items():
        for max_length in (None, 64):
            schema = spec_schema(wrap(item([TRANSITIONS[name]], max_length)))
            refused = apiserver_refuses(cost_api, schema)
            if offline_refuses(schema) != refused:
                mismatches.append((place, max_length, refused))
    assert not mismatches, f"offline and apiserver disagree for {name}: {mismatches}"


def test_a_message_expression_has_its_own_budget_and_is_not_multiplied(
    cost_api: BlockingApi,
) -> None:
    cheap, dear = "'bad ' + self.a", "self.tags.all(t, self.tags.exists(u, u == t)) ? 'a' : 'b'"
    for message, over in ((cheap, False), (dear, True)):
        value = item([], None) | {"x-kubernetes-validations": [
            {"rule": "true", "messageExpression": message}]}  # fmt: skip
        for wrap in (PLACES["top"], PLACES["list"]):
            schema = spec_schema(wrap(value))
            assert offline_refuses(schema) is over
            assert apiserver_refuses(cost_api, schema) is over


OPTIONAL_OLD_SELF = {
    "ratchet": "!oldSelf.hasValue() || self.n >= oldSelf.value().n",
    "unchanged_once_set": "!oldSelf.hasValue() || self.a == oldSelf.value().a",
    "or_value": "oldSelf.orValue(self).b == self.b",
    # value() has no schema path: the apiserver sizes .tags as the rule's own object (0 items)
    "path_lost": "!oldSelf.hasValue() || oldSelf.value().tags.all(x, x in self.tags)",
}


@pytest.mark.parametrize("name", sorted(OPTIONAL_OLD_SELF))
@pytest.mark.parametrize("max_length", [None, 64])
def test_optional_old_self_rules_are_pinned(
    cost_api: BlockingApi, name: str, max_length: int | None
) -> None:
    value = item([], max_length) | {"x-kubernetes-validations": [
        {"rule": OPTIONAL_OLD_SELF[name], "optionalOldSelf": True}]}  # fmt: skip
    (alone,) = rule_costs(spec_schema(value))
    assert alone.cost is not None
    most = PER_RULE_LIMIT // alone.cost
    for max_items, over in ((most, False), (most + 1, True)):
        schema = spec_schema(_keyed_list(value, max_items))
        assert offline_refuses(schema) is over
        assert apiserver_refuses(cost_api, schema) is over
