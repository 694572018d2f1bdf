"""The pure pieces of the queues bench's live runs (benches/_queues_live.py and queues_bench.py's
live contestant): the partly-bound count that measures crdkit's admitted-but-not-placeable, the
holds an evicted attempt adds, the reason an eviction is counted under, the figures shared by
the simulated and live runs, the live pods of crdkit's jobs (what a real apiserver demands, the
same names as Kueue's), and the targets a run is judged against."""

from __future__ import annotations

from typing import Any

import pytest
from _benches import load_bench

from crdkit.resources import Pod

bench = load_bench("queues_bench")  # first: it puts benches/ on the path the others need
live = load_bench("_queues_live")
stream = load_bench("_queue_stream")


def test_partly_bound_counts_attempts_left_with_some_pods_bound_too_long() -> None:
    attempt = live.Attempt
    whole_soon = attempt(["a"], first_bound=10.0, all_bound=12.0)
    whole_late = attempt(["b"], first_bound=10.0, all_bound=16.0)
    evicted_partly = attempt(["c"], first_bound=10.0, evicted=20.0)
    never_bound = attempt(["d"])
    still_partly = attempt(["e"], first_bound=10.0)
    attempts = [whole_soon, whole_late, evicted_partly, never_bound, still_partly]
    # whole_late (6 s), evicted_partly (10 s), still_partly (20 s at the end): three.
    assert live.partly_bound(attempts, end=30.0) == 3
    # At 14 s, only evicted_partly's 10 s is over the limit; still_partly has 4 s.
    assert live.partly_bound(attempts, end=14.0) == 2
    assert live.partly_bound(attempts, end=30.0, stuck_s=15.0) == 1


def run_of(jobs: list[Any]) -> Any:
    return live.LiveRun("crdkit", 32, 7, 2.0, True, jobs, start=0.0)


def test_held_spans_add_the_evicted_attempts_that_were_bound_whole() -> None:
    done = stream.TeamJob("team-a-j0000", 2, 30.0, team="team-a", all_bound=5.0, ended=35.0)
    again = stream.TeamJob("team-b-j0000", 1, 30.0, team="team-b", all_bound=50.0, ended=80.0)
    run = run_of([done, again])
    run.attempts = {
        "team-a-j0000": [live.Attempt(["x"], all_bound=5.0)],
        "team-b-j0000": [
            live.Attempt(["y"], all_bound=10.0, evicted=40.0),
            live.Attempt(["z"], evicted=45.0),  # never bound whole: held nothing
            live.Attempt(["w"], all_bound=50.0),
        ],
    }
    held = live.held_spans(run)
    assert sorted((s.team, s.gpus, s.start, s.end) for s in held) == [
        ("team-a", 16, 5.0, 35.0),
        ("team-b", 8, 10.0, 40.0),
        ("team-b", 8, 50.0, 80.0),
    ]
    assert run.evictions == {"team-a": 0, "team-b": 2, "team-c": 0}


def test_nominal_is_reached_when_the_teams_whole_holds_add_up_to_it() -> None:
    span = stream.Span
    held = [
        span("team-c", 32, 31.0, 60.0),
        span("team-a", 64, 0.0, 100.0),  # another team's: not counted
        span("team-c", 16, 33.0, 40.0),  # ends before the third starts
        span("team-c", 32, 45.0, 90.0),
    ]
    assert live.nominal_reached_s(held, "team-c", 30.0, 48) == pytest.approx(3.0)
    assert live.nominal_reached_s(held, "team-c", 30.0, 64) == pytest.approx(15.0)
    assert live.nominal_reached_s(held, "team-c", 30.0, 65) is None
    assert live.nominal_reached_s([], "team-c", 30.0, 8) is None


def pod_with(condition: dict[str, Any] | None) -> Pod:
    status = {"conditions": [condition]} if condition else {}
    return Pod.model_validate({"metadata": {"name": "p"}, "spec": {}, "status": status})


def test_an_eviction_is_counted_under_the_reason_its_evicter_wrote() -> None:
    crdkit = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    kueue = {"type": "TerminationTarget", "status": "True", "reason": "WorkloadEvicted"}
    assert live.termination_reason(pod_with(crdkit)) == "PreemptionByScheduler"
    assert live.termination_reason(pod_with(kueue)) == "WorkloadEvicted"
    assert live.termination_reason(pod_with({**kueue, "status": "False"})) == "deleted"
    assert live.termination_reason(pod_with(None)) == "deleted"


def test_live_figures_judge_a_run_as_the_simulated_runs_are() -> None:
    jobs = stream.queue_stream(32, 0.3, 7)
    for index, job in enumerate(jobs):
        job.arrived = job.submit_at_s
        job.all_bound = job.submit_at_s + index
        job.ended = job.all_bound + job.seconds
    run = run_of(jobs)
    row = live.live_figures(run)
    expected = stream.stream_figures(
        32,
        jobs,
        stream.spans(jobs),
        stream.spans(jobs),
        0.0,
        evicted=0,
        admitted_not_placeable=0,
        victim_grace_s=0.0,
    )
    assert {k: row[k] for k in expected} == expected
    assert row["jobs_done"] == row["jobs"] == len(jobs)
    assert row["makespan_s"] == round(max(j.ended for j in jobs), 1)
    # A job that never ended: no makespan.
    jobs[0].ended = None
    assert live.live_figures(run)["makespan_s"] is None
    # A run that never started has only what a run without a start can say.
    unstarted = live.LiveRun("kueue", 32, 7, 2.0, True, jobs, errors=["no Kueue"])
    assert "share_pct" not in live.live_figures(unstarted)


def test_crdkits_live_pods_are_what_an_apiserver_takes_named_as_kueues() -> None:
    job = stream.TeamJob("team-c-j0003", 8, 30.0, team="team-c")
    group, *pods = bench.job_objects(job, 2, True, scheduler="crdkit-gangs", live=True)
    assert group.metadata.name == "team-c-j0003-r2"
    assert group.spec.min_member == 8
    names = [p.metadata.name for p in pods]
    assert names == [live.pod_name(job, 2, i) for i in range(8)]
    for pod in pods:
        assert pod.metadata.labels["scheduling.crdkit.io/queue"] == "team-c"
        assert pod.metadata.annotations == {
            "kueue.x-k8s.io/podset-required-topology": "topology.crdkit.io/leaf"
        }
        assert pod.spec.scheduler_name == "crdkit-gangs"
        [container] = pod.spec.containers
        assert container.image
        assert container.resources.limits == container.resources.requests
        assert pod.spec.model_extra["terminationGracePeriodSeconds"] == bench.LIVE_GRACE_S
    # The simulated runs' pods stay as they were.
    _, plain = bench.job_objects(stream.TeamJob("team-a-j0000", 1, 30.0, team="team-a"), 0, False)
    assert plain.spec.scheduler_name == bench.SCHEDULER
    assert plain.spec.containers[0].image is None
    assert "scheduling.crdkit.io/queue" not in plain.metadata.labels


def figures(**changes: Any) -> dict[str, Any]:
    row = {
        "share_gap_max_pts": 4.0,
        "reclaim_s": {"p50": 1.0, "max": 1.5, "count": 3},
        "victim_grace_s": 0.0,
        "useful_gpu_pct": 90.0,
        "admitted_not_placeable": 0,
        "share_pct": {},
    }
    return row | changes


def test_targets() -> None:
    met = bench.targets(figures(), {"useful_gpu_pct": 94.0}, {"useful_gpu_pct": 80.0})
    assert met == {
        "share_within_5_pts": True,
        "reclaim_within_grace_plus_2_s": True,
        "useful_ge_95pct_of_no_queues": True,  # 90 >= 0.95 * 94
        "useful_ge_kueue": True,
        "zero_admitted_not_placeable": True,
    }
    missed = bench.targets(
        figures(
            share_gap_max_pts=5.1,
            reclaim_s={"p50": 1.0, "max": 2.5, "count": 3},
            admitted_not_placeable=1,
        ),
        {"useful_gpu_pct": 95.0},
        {"useful_gpu_pct": 91.0},
    )
    assert not any(missed.values())
    # The victims' grace period counts: 2.5 s is within 1 s of grace plus 2 s.
    graced = figures(reclaim_s={"max": 2.5}, victim_grace_s=1.0)
    assert bench.targets(graced, None, None)["reclaim_within_grace_plus_2_s"] is True
    assert bench.targets(graced, None, None)["useful_ge_kueue"] is None
    assert bench.targets({"seed": 7}, None, None) == {}


@pytest.mark.parametrize("contestant", ["queues", "crdkit-live", "kueue-live"])
def test_a_table_row_has_every_figure(contestant: str) -> None:
    row = bench.table_row(7, contestant, figures())
    assert list(row)[:2] == ["seed", "contestant"]
    assert set(bench.TABLE_KEYS) <= set(row)
