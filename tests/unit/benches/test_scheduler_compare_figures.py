"""benches/scheduler_compare.py's pure pieces: the half-idle figure on hand-made event lists
(the longest stretch with fewer than half the GPUs held while a job waits), makespan over the
lower bound, and what each contestant is given (Kubernetes' PodGroup per hard and soft job,
pods joining it through ``spec.schedulingGroup``, ``activeDeadlineSeconds`` with ``--hints``)."""

from __future__ import annotations

from typing import Any

from _benches import load_bench

compare = load_bench("scheduler_compare")


def job(name: str, pods: int, all_bound: float | None) -> object:
    made = compare.Job(name, pods, 30.0)
    made.all_bound = all_bound
    return made


def test_the_start_counts_until_half_the_gpus_are_held() -> None:
    # 4 nodes of 8 GPUs: half is 16. Two one-pod jobs bound at 3 s and 5 s, a third at 12 s.
    jobs = [job("a", 1, 3.0), job("b", 1, 5.0), job("c", 1, 12.0)]
    held = [(3.0, 8, 8), (5.0, 8, 8), (12.0, 8, 8)]
    assert compare.half_idle_stretch(held, jobs, 0.0, 32) == 5.0


def test_a_stretch_ends_when_nothing_waits_and_the_longest_is_kept() -> None:
    jobs = [job("a", 2, 1.0), job("b", 1, 20.0)]
    # a's two pods (16 GPUs, half) at 1 s; a ends at 10 s, b waits until 20 s: 10 s idle.
    held = [(1.0, 16, 16), (10.0, -16, -16), (20.0, 8, 8)]
    assert compare.half_idle_stretch(held, jobs, 0.0, 32) == 10.0
    # Once no job waits, free GPUs are no idle stretch.
    assert compare.half_idle_stretch([(1.0, 16, 16)], [job("a", 2, 1.0)], 0.0, 32) == 1.0


def test_after_start_leaves_out_the_stretch_from_submit() -> None:
    jobs = [job("a", 2, 6.0), job("b", 1, 20.0)]
    held = [(6.0, 16, 16), (10.0, -16, -16), (20.0, 8, 8)]
    assert compare.half_idle_stretch(held, jobs, 0.0, 32) == 10.0
    assert compare.half_idle_stretch(held, jobs, 0.0, 32, after_start=True) == 10.0
    short = [(6.0, 16, 16), (10.0, -16, -16), (12.0, 8, 8)]
    jobs[1].all_bound = 12.0
    assert compare.half_idle_stretch(short, jobs, 0.0, 32) == 6.0
    assert compare.half_idle_stretch(short, jobs, 0.0, 32, after_start=True) == 2.0


def test_makespan_over_the_lower_bound_is_a_figure_of_its_own() -> None:
    # 2 nodes (16 GPUs), one 2-pod job of 30 s: the lower bound is 30 s; done at 45 s.
    made = compare.Job("a", 2, 30.0)
    made.first_bound = made.all_bound = 15.0
    made.done = 45.0
    made.nodes = {"a-0": "n0", "a-1": "n1"}
    held = [(15.0, 16, 16), (45.0, -16, -16)]
    row = compare.figures("kube-gang", 2, [made], {"n0": "l0", "n1": "l0"}, held, 0.0, False)
    assert (row["makespan_s"], row["lower_bound_s"], row["lower_bound_ratio"]) == (45.0, 30.0, 1.5)
    stuck = compare.figures("kube-gang", 2, [made], {"n0": "l0", "n1": "l0"}, held, 0.0, True)
    assert stuck["makespan_s"] is None
    assert stuck["lower_bound_ratio"] is None


# -- what each contestant is given ----------------------------------------------------------


def spec_of(obj: Any) -> Any:
    """A manifest's spec as the apiserver is sent it."""
    return obj.model_dump(by_alias=True, exclude_none=True, mode="json")["spec"]


def test_a_hard_job_is_a_kubernetes_gang_of_all_its_pods_in_one_leaf() -> None:
    group = compare.kubernetes_pod_group(compare.Job("j0001", 8, 27.0))
    assert group.metadata.name == "j0001"
    assert group.metadata.namespace == compare.NAMESPACE
    assert spec_of(group) == {
        "schedulingPolicy": {"gang": {"minCount": 8}},
        "schedulingConstraints": {"topology": [{"key": compare.LEAF}]},
    }


def test_a_soft_job_is_a_kubernetes_gang_with_no_topology_and_no_priority_class() -> None:
    # Upstream has no preferred topology; and a class the pods lack would be refused.
    for pods in (1, 2, 4):
        group = compare.kubernetes_pod_group(compare.Job("j0002", pods, 27.0))
        assert spec_of(group) == {"schedulingPolicy": {"gang": {"minCount": pods}}}


def test_kubernetes_gang_pods_join_their_group_through_the_spec() -> None:
    job = compare.Job("j0003", 2, 27.0)
    plain, gang, crdkit_kube = (
        compare.pod_manifests(job, name) for name in ("kube-scheduler", "kube-gang", "crdkit-kube")
    )
    assert [p.metadata.name for p in gang] == ["j0003-0", "j0003-1"]
    for pod in gang:
        assert spec_of(pod)["schedulingGroup"] == {"podGroupName": "j0003"}
        assert pod.spec.scheduler_name is None  # kube-scheduler's default profile
        assert pod.metadata.labels == {"job": "j0003"}
    for pod in crdkit_kube:
        assert spec_of(pod)["schedulingGroup"] == {"podGroupName": "j0003"}
        assert pod.spec.scheduler_name == compare.CRDKIT
        assert pod.metadata.annotations == {}  # no Kueue topology: the PodGroup says it
    # The same pods as the plain contestant's, but for the group and the scheduler's name.
    for mine, theirs in zip(gang, plain, strict=True):
        spec = spec_of(mine)
        del spec["schedulingGroup"]
        assert spec == spec_of(theirs)
    for pod in plain:
        assert pod.spec.scheduling_group is None


def test_hints_give_every_pod_its_jobs_run_time_rounded_up() -> None:
    job = compare.Job("j0004", 2, 27.3)
    for name in ("crdkit", "kube-scheduler", "kube-gang", "crdkit-kube"):
        assert {p.spec.active_deadline_seconds for p in compare.pod_manifests(job, name)} == {None}
        hinted = compare.pod_manifests(job, name, hints=True)
        # The bench deletes the pods at job.seconds, before the deadline could fire.
        assert {p.spec.active_deadline_seconds for p in hinted} == {30}
    template = compare.example_job(job, hints=True)["spec"]["tasks"][0]["template"]
    assert template["spec"]["activeDeadlineSeconds"] == 30
    assert (
        "activeDeadlineSeconds"
        not in compare.example_job(job)["spec"]["tasks"][0]["template"]["spec"]
    )


def test_kube_scheduler_gets_the_gates_the_apiserver_has() -> None:
    assert compare.kube_scheduler_gates() == (
        "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
    )
