"""The effective resource request of a pod, as kube-scheduler fits it onto a node.

The rules are those of ``PodRequests`` in k8s.io/component-helpers/resource, called the way
kube-scheduler's NodeResourcesFit plugin calls it on Kubernetes v1.34 and v1.35:

- the requests of the regular containers are summed;
- init containers run one after another, so the pod needs the largest of them, not their sum;
- a restartable init container (a sidecar: ``restartPolicy: Always``) keeps running, so its
  requests are added to the sum, and every init container after it needs room for it as well:
  init container *i* needs its own requests plus those of the sidecars before it, a sidecar the
  sidecars up to and including itself; the pod needs the larger of the sum and the largest of
  these, per resource;
- pod-level ``spec.resources.requests`` (feature gate ``PodLevelResources``, beta and on by
  default since v1.34) replace that result for the resources they name and pod-level resources
  support (``cpu``, ``memory``, ``hugepages-*``); other names there are ignored, as upstream;
- ``spec.overhead`` (the RuntimeClass's pod overhead) is added last.

A pending pod has no status resources, so in-place resize (``InPlacePodVerticalScaling``) plays
no part. Every resource name counts, not only cpu and memory, and a name that appears with a
zero request is kept with 0, as upstream keeps it.

Values are integer milli-units, parsed by the placer's quantity parser
(``crdkit._placer.parse_quantity``). Each quantity is rounded up to a milli-unit before it is
added, where upstream adds exact quantities and rounds the total: the two agree for every
quantity that is a whole number of milli-units (all real requests) and this one can only
overstate a sum of sub-milli quantities, never understate it.

This runs on every pod event of a large cluster, so it reads models by attribute and dicts by
key, never re-validating through pydantic, and caches the few distinct quantity strings a
cluster uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crdkit._placer import parse_quantity
from crdkit.placer.quantity import format_quantity
from crdkit.resources.core import Container, Pod, PodSpec

__all__ = ["format_quantity", "pod_requests", "requests_as_quantities"]

_POD_LEVEL = frozenset(("cpu", "memory"))
_HUGEPAGES = "hugepages-"

# Quantity text to milli-units. A cluster writes a few hundred distinct strings at most; the
# bound keeps a stream of odd ones (generated tests, a misbehaving client) from growing it.
_PARSED: dict[str, int] = {}
_PARSED_MAX = 4096

# One container's requests as the aggregation sees them: its list ("containers" or
# "initContainers") and index, which name it in an error message only when there is one, its
# resource name to quantity mapping, and whether it is a sidecar.
_Entry = tuple[str, int, Any, bool]


class _Refused(Exception):
    """A requests mapping that is not one, or a quantity the parser refused (``name`` set)."""

    def __init__(self, name: str | None, message: str) -> None:
        super().__init__(name, message)
        self.name = name
        self.message = message


def pod_requests(pod: Pod | PodSpec | Mapping[str, Any]) -> dict[str, int]:
    """The pod's effective resource requests, resource name to milli-units.

    ``pod`` is a ``Pod``, a ``PodSpec``, or the API's camelCase JSON of either. A malformed
    quantity raises ``ValueError`` naming its path from the argument
    (``spec.containers[1].resources.requests.cpu: invalid quantity ...``; without the ``spec.``
    for a ``PodSpec``); a field of the wrong JSON type raises ``ValueError`` naming it too.
    """
    if isinstance(pod, Pod):
        return _from_model(pod.spec, "spec.")
    if isinstance(pod, PodSpec):
        return _from_model(pod, "")
    if isinstance(pod, Mapping):
        # A Pod has these keys and a PodSpec none of them.
        if "spec" in pod or "metadata" in pod or "kind" in pod or "apiVersion" in pod:
            spec = pod.get("spec")
            if spec is None:
                spec = {}
            return _from_json(_mapping(spec, "spec"), "spec.")
        return _from_json(pod, "")
    raise TypeError(f"pod_requests: expected a Pod, a PodSpec or a mapping, got {type(pod)!r}")


def requests_as_quantities(milli: Mapping[str, int]) -> dict[str, str]:
    """Milli-unit requests as quantity strings (``{"cpu": "500m"}``), for a placer gang dict."""
    return {name: format_quantity(value) for name, value in milli.items()}


# -- reading the two input forms -------------------------------------------------------------


def _from_model(spec: PodSpec, prefix: str) -> dict[str, int]:
    containers: list[_Entry] = [
        ("containers", i, c.resources.requests, False) for i, c in enumerate(spec.containers)
    ]
    inits: list[_Entry] = [
        ("initContainers", i, c.resources.requests, _is_sidecar_model(c))
        for i, c in enumerate(spec.init_containers)
    ]
    # Pod-level resources and overhead are not declared on PodSpec: pydantic keeps them, as
    # the JSON had them, in the model's extras.
    extra = spec.model_extra or {}
    return _aggregate(containers, inits, _pod_level(extra, prefix), extra.get("overhead"), prefix)


def _is_sidecar_model(container: Container) -> bool:
    extra = container.model_extra
    if not extra:
        return False
    # The apiserver's spelling, or the Python one when the model was built in code.
    policy = extra.get("restartPolicy", extra.get("restart_policy"))
    return policy == "Always"


def _from_json(spec: Mapping[str, Any], prefix: str) -> dict[str, int]:
    containers = _json_containers(spec, "containers", prefix)
    inits = _json_containers(spec, "initContainers", prefix)
    return _aggregate(containers, inits, _pod_level(spec, prefix), spec.get("overhead"), prefix)


def _pod_level(spec: Mapping[str, Any], prefix: str) -> Any:
    resources = spec.get("resources")
    if resources is None:
        return None
    return _mapping(resources, f"{prefix}resources").get("requests")


def _json_containers(spec: Mapping[str, Any], key: str, prefix: str) -> list[_Entry]:
    items = spec.get(key)
    if not items:
        return []
    if not isinstance(items, list | tuple):
        raise ValueError(f"{prefix}{key}: expected a list, got {type(items).__name__}")
    entries: list[_Entry] = []
    for i, item in enumerate(items):
        if type(item) is not dict and not isinstance(item, Mapping):
            raise ValueError(f"{prefix}{key}[{i}]: expected an object, got {type(item).__name__}")
        requests: Any = None
        resources = item.get("resources")
        if resources is not None:
            requests = _mapping(resources, f"{prefix}{key}[{i}].resources").get("requests")
        entries.append((key, i, requests, item.get("restartPolicy") == "Always"))
    return entries


def _mapping(value: Any, path: str) -> Mapping[str, Any]:
    # isinstance against an ABC is slow; JSON gives plain dicts.
    if type(value) is not dict and not isinstance(value, Mapping):
        raise ValueError(f"{path}: expected an object, got {type(value).__name__}")
    return value


# -- the rules -------------------------------------------------------------------------------


def _aggregate(
    containers: list[_Entry],
    inits: list[_Entry],
    pod_level: Any,
    overhead: Any,
    prefix: str,
) -> dict[str, int]:
    # Where the quantities being read are: a path is only built for an error message, as on
    # the happy path it would cost more than the arithmetic.
    at: tuple[str, int] | str = ""
    try:
        total: dict[str, int] = {}
        for key, i, requests, _ in containers:
            if requests:
                at = (key, i)
                _add(total, requests)

        if inits:
            sidecars: dict[str, int] = {}  # the sidecars started so far
            init_peak: dict[str, int] = {}  # the most any init container needs while it runs
            for key, i, requests, sidecar in inits:
                at = (key, i)
                if sidecar:
                    if requests:
                        _add(total, requests)
                        _add(sidecars, requests)
                    needs = sidecars
                else:
                    needs = dict(sidecars)
                    if requests:
                        _add(needs, requests)
                for name, value in needs.items():
                    if name not in init_peak or value > init_peak[name]:
                        init_peak[name] = value
            for name, value in init_peak.items():
                if name not in total or value > total[name]:
                    total[name] = value

        if pod_level:
            at = "resources.requests"
            replaced: dict[str, int] = {}
            _add(replaced, pod_level)
            for name, value in replaced.items():
                if name in _POD_LEVEL or name.startswith(_HUGEPAGES):
                    total[name] = value

        if overhead:
            at = "overhead"
            _add(total, overhead)
    except _Refused as refused:
        path = (
            f"{prefix}{at}"
            if isinstance(at, str)
            else f"{prefix}{at[0]}[{at[1]}].resources.requests"
        )
        if refused.name is not None:
            path = f"{path}.{refused.name}"
        raise ValueError(f"{path}: {refused.message}") from None
    return total


def _add(total: dict[str, int], requests: Any) -> None:
    """Add ``requests`` into ``total``; ``_Refused`` says what is wrong, not where."""
    if type(requests) is not dict and not isinstance(requests, Mapping):
        raise _Refused(None, f"expected an object, got {type(requests).__name__}")
    for name, text in requests.items():
        value = _PARSED.get(text) if type(text) is str else None
        if value is None:
            try:
                value = parse_quantity(text)
            except (ValueError, TypeError) as err:
                raise _Refused(name, str(err)) from None
            if type(text) is str and len(_PARSED) < _PARSED_MAX:
                _PARSED[text] = value
        total[name] = total.get(name, 0) + value
