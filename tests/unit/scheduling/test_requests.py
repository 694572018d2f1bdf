"""crdkit.scheduling.requests: the effective request of a pod, on the cases the Kubernetes
documentation works through (init containers, sidecars, pod overhead, pod-level resources)."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from crdkit.resources import Container, Pod, PodSpec
from crdkit.scheduling.requests import format_quantity, pod_requests, requests_as_quantities
from factories import pod_json

GI = 2**30 * 1000
MI = 2**20 * 1000


def container(name: str, restart_policy: str | None = None, **requests: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "image": "busybox"}
    if requests:
        body["resources"] = {"requests": dict(requests)}
    if restart_policy is not None:
        body["restartPolicy"] = restart_policy
    return body


pod = partial(pod_json, namespace="default", container=None)


def all_forms(body: dict[str, Any]) -> list[dict[str, int]]:
    """The answer for the Pod JSON, the PodSpec JSON, a Pod model and a PodSpec model."""
    model = Pod.model_validate(body)
    return [
        pod_requests(body),
        pod_requests(body["spec"]),
        pod_requests(model),
        pod_requests(model.spec),
    ]


def check(body: dict[str, Any], expected: dict[str, int]) -> None:
    for answer in all_forms(body):
        assert answer == expected


def test_regular_containers_are_summed_for_every_resource() -> None:
    body = pod(
        containers=[
            container("a", cpu="500m", memory="1Gi"),
            container("b", cpu="1.5", memory="256Mi", **{"nvidia.com/gpu": "2"}),
        ]
    )
    check(body, {"cpu": 2000, "memory": GI + 256 * MI, "nvidia.com/gpu": 2000})


def test_the_largest_init_container_is_the_effective_init_request() -> None:
    # Init containers run one at a time: the pod needs the largest, per resource, or the sum
    # of the app containers when that is larger.
    body = pod(
        initContainers=[
            container("migrate", cpu="2", memory="128Mi"),
            container("warm-cache", cpu="500m", memory="2Gi"),
        ],
        containers=[container("app", cpu="1", memory="1Gi"), container("log", cpu="100m")],
    )
    check(body, {"cpu": 2000, "memory": 2 * GI})


def test_app_containers_win_when_their_sum_is_larger() -> None:
    body = pod(
        initContainers=[container("setup", cpu="300m")],
        containers=[container("a", cpu="200m"), container("b", cpu="200m")],
    )
    check(body, {"cpu": 400})


def test_a_sidecar_adds_to_the_sum_and_to_every_later_init_container() -> None:
    # The sidecar (restartPolicy: Always) keeps running beside what starts after it: the
    # regular init container after it needs 2 + 1 CPU, more than the app containers' 1 + 1.
    body = pod(
        initContainers=[
            container("proxy", "Always", cpu="1", memory="64Mi"),
            container("migrate", cpu="2"),
        ],
        containers=[container("app", cpu="1", memory="1Gi")],
    )
    check(body, {"cpu": 3000, "memory": GI + 64 * MI})


def test_an_init_container_before_a_sidecar_does_not_need_room_for_it() -> None:
    body = pod(
        initContainers=[
            container("migrate", cpu="2"),
            container("proxy", "Always", cpu="1"),
        ],
        containers=[container("app", cpu="500m")],
    )
    # max(500m + 1 (sum with the sidecar), 2 (migrate alone), 1 (the sidecar starting)).
    check(body, {"cpu": 2000})


def test_sidecars_accumulate() -> None:
    body = pod(
        initContainers=[
            container("s1", "Always", cpu="1"),
            container("s2", "Always", cpu="1"),
            container("late", cpu="3"),
        ],
        containers=[container("app", cpu="1")],
    )
    # late runs with both sidecars: 3 + 2 = 5, more than app + sidecars = 3.
    check(body, {"cpu": 5000})


def test_other_restart_policies_are_regular_init_containers() -> None:
    body = pod(
        initContainers=[container("once", "OnFailure", cpu="1")],
        containers=[container("app", cpu="1")],
    )
    check(body, {"cpu": 1000})


def test_pod_overhead_is_added_to_the_total() -> None:
    # The Pod Overhead page's example: a RuntimeClass with 250m CPU and 120Mi overhead and two
    # containers asking 500m/100Mi and 1500m/100Mi need 2250m and 320Mi.
    body = pod(
        runtimeClassName="kata-fc",
        overhead={"cpu": "250m", "memory": "120Mi"},
        containers=[
            container("busybox-ctr", cpu="500m", memory="100Mi"),
            container("nginx-ctr", cpu="1500m", memory="100Mi"),
        ],
    )
    check(body, {"cpu": 2250, "memory": 320 * MI})


def test_overhead_is_added_after_the_init_container_maximum() -> None:
    body = pod(
        overhead={"cpu": "100m"},
        initContainers=[container("setup", cpu="2")],
        containers=[container("app", cpu="1")],
    )
    check(body, {"cpu": 2100})


def test_pod_level_requests_replace_cpu_memory_and_hugepages_only() -> None:
    body = pod(
        resources={
            "requests": {
                "cpu": "1",
                "memory": "100Mi",
                "hugepages-2Mi": "4Mi",
                "example.com/x": "9",
            }
        },
        overhead={"cpu": "10m"},
        containers=[
            container("a", cpu="500m", memory="50Mi", **{"example.com/x": "1"}),
            container("b", memory="20Mi", **{"nvidia.com/gpu": "1"}),
        ],
    )
    check(
        body,
        {
            "cpu": 1010,
            "memory": 100 * MI,
            "hugepages-2Mi": 4 * MI,
            "example.com/x": 1000,  # not a pod-level resource: the containers' sum stands
            "nvidia.com/gpu": 1000,
        },
    )


def test_zero_requests_are_kept_and_no_requests_is_empty() -> None:
    check(pod(containers=[container("a", cpu="0")]), {"cpu": 0})
    check(pod(containers=[container("a")]), {})
    assert pod_requests({}) == {}
    assert pod_requests(Pod()) == {}


def test_json_numbers_and_exponents_are_quantities() -> None:
    body = pod(containers=[container("a", cpu=2, memory="1e3"), container("b", cpu=0.25)])
    assert pod_requests(body) == {"cpu": 2250, "memory": 1_000_000}


def test_a_sidecar_built_in_python_counts() -> None:
    spec = PodSpec(
        init_containers=[
            Container(name="proxy", resources={"requests": {"cpu": "1"}}, restart_policy="Always")
        ],
        containers=[Container(name="app", resources={"requests": {"cpu": "1"}})],
    )
    assert pod_requests(spec) == {"cpu": 2000}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            pod(containers=[container("a"), container("b", cpu="lots")]),
            'spec.containers[1].resources.requests.cpu: invalid quantity "lots"',
        ),
        (
            pod(initContainers=[container("i", memory="-1Gi")]),
            "spec.initContainers[0].resources.requests.memory: invalid quantity",
        ),
        (pod(overhead={"cpu": "1x"}), "spec.overhead.cpu: invalid quantity"),
        (pod(resources={"requests": {"cpu": True}}), "spec.resources.requests.cpu: invalid"),
        (pod(overhead=3), "spec.overhead: expected an object, got int"),
        (pod(containers={"a": 1}), "spec.containers: expected a list, got dict"),
        (pod(containers=["a"]), "spec.containers[0]: expected an object, got str"),
        (
            pod(containers=[{"name": "a", "resources": {"requests": ["cpu"]}}]),
            "spec.containers[0].resources.requests: expected an object, got list",
        ),
    ],
)
def test_bad_input_names_the_field(body: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("[", r"\[").replace("]", r"\]")):
        pod_requests(body)


def test_a_pod_spec_error_is_relative_to_the_spec() -> None:
    with pytest.raises(ValueError, match=r"^containers\[0\]\.resources\.requests\.cpu: "):
        pod_requests({"containers": [container("a", cpu="?")]})
    # Pod validation refuses "?" itself (the CRD-equal Quantity), so it is put in afterwards.
    model = Pod.model_validate(pod(containers=[container("a", cpu="1")]))
    model.spec.containers[0].resources.requests["cpu"] = "?"
    with pytest.raises(ValueError, match=r"^spec\.containers\[0\]\.resources\.requests\.cpu: "):
        pod_requests(model)
    with pytest.raises(ValueError, match=r"^containers\[0\]\.resources\.requests\.cpu: "):
        pod_requests(model.spec)


def test_a_pod_spec_without_containers_is_still_a_spec() -> None:
    assert pod_requests({"overhead": {"cpu": "250m"}}) == {"cpu": 250}
    assert pod_requests({"metadata": {"name": "p"}}) == {}


def test_other_types_are_refused() -> None:
    with pytest.raises(TypeError, match="expected a Pod, a PodSpec or a mapping"):
        pod_requests([])  # type: ignore[arg-type]


def test_formatting_for_the_placer() -> None:
    assert format_quantity(8000) == "8"
    assert format_quantity(500) == "500m"
    assert format_quantity(0) == "0"
    assert requests_as_quantities({"cpu": 2250, "memory": 320 * MI}) == {
        "cpu": "2250m",
        "memory": str(320 * 2**20),
    }
