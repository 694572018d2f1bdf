"""One rank per node: a pod's required anti-affinity on ``kubernetes.io/hostname``.

Training users write it when a pod asks for less than a node and each rank must still have a
node of its own::

    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
        - topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {training.kubeflow.org/job-name: llama}}

kube-scheduler reads it both ways: the pod goes to no node that holds a pod its selector
matches, and no pod its selector matches goes to its node afterwards. crdkit keeps both:

- among the gang's own pods, the term becomes the placer's per-node limit of one (a task's
  ``maxPerNode`` when it matches just that task's pods, the gang's when it matches all of them);
- every node that already holds a pod the selector matches (a bound pod of the same gang, of
  another gang, of another scheduler) is one the gang's pods avoid (``avoidNodes``);
- a node that holds a pod whose own term matches the gang's pods is avoided too.

What a per-node limit cannot say is refused, naming the field: another topology key (use the
gang's topology instead), a ``namespaceSelector`` or other namespaces, a selector that does not
match the pod carrying it ("keep away from the parameter servers"), or one that matches part of
a gang other than one whole task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crdkit.placer.models import HOSTNAME_LEVEL
from crdkit.resources.meta import LabelSelector
from crdkit.runtime.store import NAMESPACE_INDEX

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from crdkit.resources import Pod
    from crdkit.runtime.store import Store

__all__ = ["RANK_RULES_FIELD", "RankRule", "RankRuleIndex", "clash", "rank_rules"]

RANK_RULES_FIELD = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"


@dataclass(frozen=True)
class RankRule:
    """One required anti-affinity term on the hostname, as it applies to the pod carrying it
    (``matchLabelKeys`` and ``mismatchLabelKeys`` already resolved against its labels)."""

    namespace: str
    key: str
    """The term in a canonical text: equal for terms that match the same pods."""
    selector: LabelSelector = field(compare=False, hash=False)

    def matches(self, pod: Pod) -> bool:
        """Whether the term names ``pod`` (same namespace, labels matched)."""
        return (pod.metadata.namespace or "default") == self.namespace and self.selector.matches(
            pod.metadata.labels
        )


def rank_rules(pod: Pod) -> tuple[RankRule, ...]:
    """The pod's one-rank-per-node terms, sorted by key; ``ValueError`` naming the field for
    a required anti-affinity term a per-node limit cannot keep."""
    terms = _required_terms(pod)
    namespace = pod.metadata.namespace or "default"
    rules: dict[str, RankRule] = {}
    for index, term in enumerate(terms):
        where = f"{RANK_RULES_FIELD}[{index}]"
        rule = _rule(term, pod, namespace, where)
        if rule is not None:
            rules.setdefault(rule.key, rule)
    return tuple(rules[key] for key in sorted(rules))


def _rule(term: Mapping[str, Any], pod: Pod, namespace: str, where: str) -> RankRule | None:
    topology_key = term.get("topologyKey")
    if topology_key != HOSTNAME_LEVEL:
        raise ValueError(
            f"{where}.topologyKey: only {HOSTNAME_LEVEL} (one pod per node) is supported by "
            f"crdkit's gang scheduler, got {topology_key!r}; for a wider domain use the gang's "
            "topology (PodGroup networkTopology or Kueue's annotations)"
        )
    if term.get("namespaceSelector") is not None:
        raise ValueError(
            f"{where}.namespaceSelector: not supported by crdkit's gang scheduler (a rank rule "
            "keeps to the pod's own namespace)"
        )
    namespaces = set(term.get("namespaces") or [])
    if namespaces - {namespace}:
        raise ValueError(
            f"{where}.namespaces: only the pod's own namespace ({namespace}) is supported, got "
            f"{sorted(namespaces)}"
        )
    raw = term.get("labelSelector")
    if raw is None:
        return None  # a null selector matches no pod: the term asks nothing
    try:
        selector = LabelSelector.model_validate(raw)
    except ValueError as error:
        raise ValueError(f"{where}.labelSelector: {error}") from None
    labels = pod.metadata.labels
    extra = [
        {"key": key, "operator": operator, "values": [labels[key]]}
        for keys, operator in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn"))
        for key in term.get(keys) or []
        if key in labels  # a key the pod lacks is ignored, as the apiserver's defaulting does
    ]
    if extra:
        selector = LabelSelector.model_validate(
            {
                "matchLabels": selector.match_labels,
                "matchExpressions": [
                    *(e.model_dump() for e in selector.match_expressions),
                    *extra,
                ],
            }
        )
    if not selector.matches(labels):
        raise ValueError(
            f"{where}.labelSelector: matches not the pod itself; crdkit's gang scheduler keeps "
            "anti-affinity among a gang's own pods (one rank per node), not away from other pods"
        )
    expressions = selector.match_expressions
    key = repr(
        (
            namespace,
            sorted(selector.match_labels.items()),
            sorted((e.key, e.operator, tuple(sorted(e.values))) for e in expressions),
        )
    )
    return RankRule(namespace, key, selector)


CARRIERS_INDEX = "crdkit.io/rank-rule-carriers"
"""The pod store's index of pods that carry a rank rule, by namespace."""
LABELS_INDEX = "crdkit.io/labels-in-namespace"
"""The pod store's index of pods by ``namespace/key=value`` of each label (added on first use:
a cluster whose pods carry no rank rule never pays for it)."""


class RankRuleIndex:
    """The nodes a gang's pods must avoid for the rank rules of pods placed already.

    ``store`` is the scheduler's pod store (for its indexes), ``get`` reads a pod by key (the
    scheduler's decoded reads); ``node_of`` says where a pod is placed (its ``spec.nodeName``,
    or where the scheduler assumed it while its bind is under way); ``finished`` tells the
    pods that hold no node any more."""

    def __init__(
        self,
        store: Store[Pod],
        get: Callable[[str], Pod | None],
        node_of: Callable[[Pod], str | None],
        finished: Callable[[Pod], bool],
    ) -> None:
        self._store = store
        self._get = get
        self._node_of = node_of
        self._finished = finished
        self._labels_indexed = False
        self._parsed: dict[str, tuple[str | None, tuple[RankRule, ...]]] = {}
        store.add_indexer(CARRIERS_INDEX, _carrier_index)

    def has_carriers(self, namespace: str) -> bool:
        """Whether any pod of ``namespace`` carries a rank rule (most clusters': none)."""
        return bool(self._store.index_keys(CARRIERS_INDEX, namespace))

    def _placed(self, keys: Iterable[str], exclude: frozenset[str]) -> Iterable[tuple[Pod, str]]:
        for key in keys:
            if key in exclude:
                continue
            pod = self._get(key)
            if pod is None or self._finished(pod):
                continue
            node = self._node_of(pod)
            if node:
                yield pod, node

    def avoided(
        self, rules: Iterable[RankRule], pods: Iterable[Pod], exclude: frozenset[str]
    ) -> set[str]:
        """Nodes that hold a placed pod (not one of ``exclude``, the gang's pending pods) that
        one of ``rules`` matches, or whose own rank rule matches one of ``pods``."""
        nodes: set[str] = set()
        for rule in rules:
            placed = self._placed(self._candidates(rule), exclude)
            nodes.update(node for pod, node in placed if rule.matches(pod))
        pods = list(pods)
        namespaces = {p.metadata.namespace or "default" for p in pods}
        for namespace in namespaces:
            for carrier, node in self._placed(
                self._store.index_keys(CARRIERS_INDEX, namespace), exclude
            ):
                if node in nodes:
                    continue
                own = self._rules_of(carrier)
                if any(rule.matches(pod) for rule in own for pod in pods):
                    nodes.add(node)
        return nodes

    def _candidates(self, rule: RankRule) -> list[str]:
        """Keys of the pods that may match ``rule``: those with its first exact label, else
        every pod of its namespace (a selector of expressions only)."""
        if not self._labels_indexed:
            self._store.add_indexer(LABELS_INDEX, _labels_index)
            self._labels_indexed = True
        exact = sorted(rule.selector.match_labels.items())
        exact += sorted(
            (e.key, e.values[0])
            for e in rule.selector.match_expressions
            if e.operator == "In" and len(e.values) == 1
        )
        if exact:
            key, value = exact[0]
            return list(self._store.index_keys(LABELS_INDEX, f"{rule.namespace}/{key}={value}"))
        return list(self._store.index_keys(NAMESPACE_INDEX, rule.namespace))

    def _rules_of(self, pod: Pod) -> tuple[RankRule, ...]:
        """A placed pod's rank rules, parsed once per resourceVersion. A rule crdkit refuses
        is none it keeps (such a pod of its own never got placed; another scheduler's is that
        scheduler's to keep)."""
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        version = pod.metadata.resource_version
        kept = self._parsed.get(key)
        if kept is not None and kept[0] == version:
            return kept[1]
        try:
            rules = rank_rules(pod)
        except ValueError:
            rules = ()
        self._parsed[key] = (version, rules)
        return rules

    def forget(self, key: str) -> None:
        """The pod ``key`` is gone: drop what was parsed of it."""
        self._parsed.pop(key, None)


def _required_terms(pod: Pod) -> list[dict[str, Any]]:
    """The pod's required anti-affinity terms, as written."""
    affinity = pod.spec.affinity or {}
    anti = affinity.get("podAntiAffinity") or {}
    return list(anti.get("requiredDuringSchedulingIgnoredDuringExecution") or [])


def _carrier_index(pod: Pod) -> list[str]:
    return [pod.metadata.namespace or "default"] if _required_terms(pod) else []


def _labels_index(pod: Pod) -> list[str]:
    namespace = pod.metadata.namespace or "default"
    return [f"{namespace}/{key}={value}" for key, value in pod.metadata.labels.items()]


def clash(
    first: Mapping[str, Sequence[tuple[Pod, tuple[RankRule, ...]]]],
    second: Mapping[str, Sequence[tuple[Pod, tuple[RankRule, ...]]]],
) -> bool:
    """Whether two gangs placed in one pass would break a rank rule of either: on a node both
    use, a pod of one that a rule of the other matches. Each maps a node to the pods that may
    go there with their rules (every pod of a task the node takes: which of them goes where
    is the binder's choice, so any of them counts)."""
    for node in first.keys() & second.keys():
        for pod, rules in first[node]:
            for other, other_rules in second[node]:
                if any(rule.matches(other) for rule in rules) or any(
                    rule.matches(pod) for rule in other_rules
                ):
                    return True
    return False
