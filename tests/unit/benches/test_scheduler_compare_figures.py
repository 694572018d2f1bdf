"""benches/scheduler_compare.py's half-idle figure, on hand-made event lists: the longest
stretch with fewer than half the GPUs held while a job waits."""

from __future__ import annotations

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
