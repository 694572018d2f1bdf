"""One rank per node: which anti-affinity terms become rank rules, which are refused (naming
the field), what a rule matches, the nodes placed pods keep a gang from, and clashes between
gangs of one pass."""

from __future__ import annotations

import re
from typing import Any

import pytest

import factories
from crdkit.resources import Pod
from crdkit.runtime.store import NAMESPACE_INDEX, Store, index_namespace
from crdkit.scheduling.rank_rules import (
    RANK_RULES_FIELD,
    RankRuleIndex,
    clash,
    rank_rules,
)

HOST = "kubernetes.io/hostname"


def pod(
    name: str,
    labels: dict[str, str] | None = None,
    *terms: dict[str, Any],
    namespace: str = "ml",
    node: str | None = None,
    phase: str | None = None,
) -> Pod:
    spec: dict[str, Any] = {}
    if terms:
        spec["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}
        }
    return factories.pod(
        name,
        namespace=namespace,
        node=node,
        labels=labels or {},
        resource_version="1",
        status={},
        phase=phase,
        **spec,
    )


def term(match: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"topologyKey": HOST, **fields}
    if match is not None:
        out["labelSelector"] = {"matchLabels": match}
    return out


JOB = {"job": "llama"}


def test_a_term_that_names_the_pod_itself_on_the_hostname_is_a_rank_rule() -> None:
    (rule,) = rank_rules(pod("w0", {**JOB, "rank": "0"}, term(JOB)))
    assert rule.namespace == "ml"
    assert rule.matches(pod("w1", {**JOB, "rank": "1"}))
    assert not rule.matches(pod("x", {"job": "other"}))
    assert not rule.matches(pod("w1", JOB, namespace="elsewhere"))
    # The same term written twice, or in another order, is one rule.
    twice = rank_rules(pod("w0", JOB, term(JOB), term(JOB)))
    assert len(twice) == 1
    assert twice[0] == rule


def test_match_label_keys_take_the_pods_own_values_and_a_null_selector_asks_nothing() -> None:
    labels = {**JOB, "revision": "7"}
    (rule,) = rank_rules(pod("w0", labels, term(JOB, matchLabelKeys=["revision", "absent"])))
    assert rule.matches(pod("w1", {**JOB, "revision": "7"}))
    assert not rule.matches(pod("w1", {**JOB, "revision": "8"}))
    (other,) = rank_rules(pod("w0", labels, term(JOB, mismatchLabelKeys=["nothing-here"])))
    assert other.matches(pod("w1", JOB))
    assert rank_rules(pod("w0", JOB, term(None))) == ()


@pytest.mark.parametrize(
    ("the_term", "field"),
    [
        ({"labelSelector": {"matchLabels": JOB}}, "[0].topologyKey"),
        (term(JOB, topologyKey="example.com/rack"), "[0].topologyKey"),
        (term(JOB, namespaceSelector={}), "[0].namespaceSelector"),
        (term(JOB, namespaces=["ml", "prod"]), "[0].namespaces"),
        (term({"role": "ps"}), "[0].labelSelector"),
        (
            term(None, labelSelector={"matchExpressions": [{"key": "job"}]}),
            "[0].labelSelector",
        ),
    ],
)
def test_terms_a_per_node_limit_cannot_keep_are_refused_naming_the_field(
    the_term: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(RANK_RULES_FIELD + field)):
        rank_rules(pod("w0", JOB, the_term))


def test_the_pods_own_namespace_may_be_named() -> None:
    (rule,) = rank_rules(pod("w0", JOB, term(JOB, namespaces=["ml"])))
    assert rule.namespace == "ml"


def store_of(*pods: Pod) -> Store[Pod]:
    store: Store[Pod] = Store({NAMESPACE_INDEX: index_namespace})
    for p in pods:
        store.upsert(p)
    return store


def index(store: Store[Pod], assumed: dict[str, str] | None = None) -> RankRuleIndex:
    assumed = assumed or {}

    def node_of(p: Pod) -> str | None:
        return p.spec.node_name or assumed.get(f"{p.metadata.namespace}/{p.metadata.name}")

    def finished(p: Pod) -> bool:
        return p.status is not None and p.status.phase in ("Succeeded", "Failed")

    return RankRuleIndex(store, store.get, node_of, finished)


def test_placed_pods_a_rule_matches_keep_the_gang_off_their_nodes() -> None:
    pending = [pod(f"w{i}", JOB, term(JOB)) for i in range(2)]
    store = store_of(
        *pending,
        pod("w-bound", JOB, term(JOB), node="n1"),  # a bound pod of the same job
        pod("w-assumed", JOB),  # its bind under way: the scheduler assumed it on n2
        pod("w-done", JOB, node="n3", phase="Succeeded"),  # finished: holds no node
        pod("other", {"job": "other"}, node="n4"),
        pod("elsewhere", JOB, namespace="prod", node="n5"),
    )
    rules = rank_rules(pending[0])
    keys = frozenset(f"ml/{p.metadata.name}" for p in pending)
    found = index(store, {"ml/w-assumed": "n2"}).avoided(rules, pending, keys)
    assert found == {"n1", "n2"}
    # Without rules of its own, a gang still avoids the nodes of pods whose rules name it.
    plain = [pod("p0", JOB)]
    assert index(store).avoided((), plain, frozenset({"ml/p0"})) == {"n1"}
    assert index(store).avoided((), [pod("q", {"job": "q"})], frozenset()) == set()


def test_a_selector_of_expressions_only_is_matched_over_the_namespace() -> None:
    expressions = {"matchExpressions": [{"key": "job", "operator": "Exists"}]}
    pending = pod("w0", JOB, term(None, labelSelector=expressions))
    store = store_of(pending, pod("a", {"job": "x"}, node="n1"), pod("b", {}, node="n2"))
    found = index(store).avoided(rank_rules(pending), [pending], frozenset({"ml/w0"}))
    assert found == {"n1"}


def test_gangs_of_one_pass_clash_only_where_a_rule_meets_a_pod_it_names() -> None:
    ranked = pod("a", JOB, term(JOB))
    rules = rank_rules(ranked)
    same_job = pod("b", JOB)
    other_job = pod("c", {"job": "other"})
    assert clash({"n1": [(ranked, rules)]}, {"n1": [(same_job, ())]})
    assert clash({"n1": [(same_job, ())]}, {"n1": [(ranked, rules)]})  # either way round
    assert not clash({"n1": [(ranked, rules)]}, {"n2": [(same_job, ())]})
    assert not clash({"n1": [(ranked, rules)]}, {"n1": [(other_job, ())]})
