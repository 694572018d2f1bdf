"""The crash-consistency kit on FakeCluster and a virtual clock: each broken operator of
tests/_crash_operators.py is caught by the fault kind that should catch it, and its correct
version passes every kind."""

from __future__ import annotations

from typing import Any

import pytest

from _crash_operators import (
    CacheTrusting,
    CorrectCacheTrusting,
    CorrectDuplicating,
    CorrectUnfinalizing,
    Duplicating,
    Parent,
    Unfinalizing,
    create_parents,
    create_then_delete,
    make_operator,
)
from crdkit.runtime import Reconciler
from crdkit.testing import run_on_virtual_clock
from crdkit.testing.crashes import (
    FAULT_KINDS,
    CrashCase,
    CrashConsistencyError,
    CrashExplorer,
    CrashReport,
    FakeClusterSite,
    FaultKind,
    Scenario,
)


def explore(
    reconciler: type[Reconciler[Any]], workload: Any, *, faults: tuple[FaultKind, ...] = FAULT_KINDS
) -> CrashReport:
    scenario = Scenario(operator=make_operator(reconciler), workload=workload)
    explorer = CrashExplorer(scenario, FakeClusterSite([Parent]), faults=faults, cases=None)
    return run_on_virtual_clock(explorer.explore())


@pytest.fixture(autouse=True)
def _no_case_from_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRDKIT_CRASH_CASE", raising=False)
    monkeypatch.delenv("CRDKIT_CRASH_BUDGET", raising=False)


def test_a_child_made_by_generate_name_until_done_is_duplicated_by_a_crash_after_it() -> None:
    report = explore(Duplicating, create_parents, faults=("kill-after", "lost-response"))
    assert report.failed_kinds() == {"kill-after", "lost-response"}
    failure = report.failures[0]
    assert str(failure.write) == "create configmaps crash/p0-*"
    assert any("duplicate children: 2 live at once" in p for p in failure.problems)


def test_a_cache_trusted_right_after_a_write_is_caught_by_unobserved_and_stale() -> None:
    report = explore(CacheTrusting, create_parents)
    assert report.failed_kinds() == {"unobserved", "stale"}
    assert {str(f.case) for f in report.failures} == {"unobserved:1", "stale:1"}


def test_a_finalizer_left_on_one_path_leaves_the_parent_deleting() -> None:
    report = explore(Unfinalizing, create_then_delete, faults=("kill-after", "lost-response"))
    assert {str(f.case) for f in report.failures} == {"kill-after:5", "lost-response:5"}
    assert '"deletionTimestamp": "<set>"' in report.failures[0].problems[0]


@pytest.mark.parametrize(
    ("reconciler", "workload"),
    [
        (CorrectDuplicating, create_parents),
        (CorrectCacheTrusting, create_parents),
        (CorrectUnfinalizing, create_then_delete),
    ],
)
def test_the_correct_operators_pass_every_fault(reconciler: Any, workload: Any) -> None:
    report = explore(reconciler, workload)
    assert not report.failures, report.summary()
    counts = report.by_kind()
    assert set(counts) == set(FAULT_KINDS)
    # Every case hit its write (an unobserved delete of an object nobody watches aside).
    assert sum(c["passed"] for c in counts.values()) >= len(report.results) - 2
    report.raise_on_failure()


def test_a_failure_names_the_case_the_write_and_how_to_rerun_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/x.py::test_y (call)")
    scenario = Scenario(operator=make_operator(Duplicating), workload=create_parents)
    explorer = CrashExplorer(scenario, FakeClusterSite([Parent]), cases=["kill-after:1"])
    with pytest.raises(CrashConsistencyError) as raised:
        run_on_virtual_clock(explorer.check())
    message = str(raised.value)
    assert "kill-after:1 (kill-after on write 1: create configmaps crash/p0-*)" in message
    assert "rerun: pytest 'tests/x.py::test_y' --crash-case=kill-after:1" in message


def test_the_command_line_case_is_the_only_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRDKIT_CRASH_CASE", "lost-response:1")
    scenario = Scenario(operator=make_operator(CorrectDuplicating), workload=create_parents)
    report = run_on_virtual_clock(CrashExplorer(scenario, FakeClusterSite([Parent])).explore())
    assert [r.case for r in report.results] == [CrashCase("lost-response", 1)]


def test_cases_are_sampled_down_to_the_budget_with_a_seed() -> None:
    scenario = Scenario(operator=make_operator(CorrectUnfinalizing), workload=create_then_delete)

    def plan(seed: int) -> list[CrashCase]:
        explorer = CrashExplorer(scenario, FakeClusterSite([Parent]), max_cases=4, seed=seed)

        async def main() -> list[CrashCase]:
            return explorer.plan(await explorer.record())

        return run_on_virtual_clock(main())

    assert len(plan(1)) == 4
    assert plan(1) == plan(1)


@pytest.mark.parametrize(("budget", "planned"), [("2", 2), ("0", None)])
def test_the_budget_from_the_environment_overrides_max_cases(
    monkeypatch: pytest.MonkeyPatch, budget: str, planned: int | None
) -> None:
    scenario = Scenario(operator=make_operator(CorrectUnfinalizing), workload=create_then_delete)

    async def main() -> tuple[int, int]:
        explorer = CrashExplorer(scenario, FakeClusterSite([Parent]), max_cases=4)
        baseline = await explorer.record()
        return len(explorer.plan(baseline)), len(baseline.writes) * len(FAULT_KINDS)

    monkeypatch.setenv("CRDKIT_CRASH_BUDGET", budget)
    cases, every_case = run_on_virtual_clock(main())
    assert every_case > 4
    assert cases == (every_case if planned is None else planned)


@pytest.mark.parametrize("budget", ["many", "-1", "2.5"])
def test_a_budget_that_is_not_a_count_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, budget: str
) -> None:
    monkeypatch.setenv("CRDKIT_CRASH_BUDGET", budget)
    scenario = Scenario(operator=make_operator(CorrectUnfinalizing), workload=create_then_delete)
    with pytest.raises(ValueError, match=f"CRDKIT_CRASH_BUDGET='{budget}'"):
        CrashExplorer(scenario, FakeClusterSite([Parent]))


def test_max_cases_below_one_is_refused() -> None:
    scenario = Scenario(operator=make_operator(CorrectUnfinalizing), workload=create_then_delete)
    with pytest.raises(ValueError, match="max_cases must be 1 or more"):
        CrashExplorer(scenario, FakeClusterSite([Parent]), max_cases=0)


def test_a_fault_free_run_that_never_rests_fails_with_what_still_moved() -> None:
    async def never_done(client: Any, namespace: str) -> None:
        await create_parents(client, namespace)
        await __import__("asyncio").sleep(10_000)

    scenario = Scenario(operator=make_operator(CorrectDuplicating), workload=never_done, timeout=60)
    with pytest.raises(CrashConsistencyError, match="the workload had not returned"):
        run_on_virtual_clock(CrashExplorer(scenario, FakeClusterSite([Parent])).record())


def test_explorer_on_a_fake_cluster_needs_the_virtual_clock() -> None:
    import asyncio

    scenario = Scenario(operator=make_operator(CorrectDuplicating), workload=create_parents)
    with pytest.raises(RuntimeError, match="virtual clock"):
        asyncio.run(CrashExplorer(scenario, FakeClusterSite([Parent])).record())


def test_history_events_carry_the_loop_time_they_were_seen_at() -> None:
    scenario = Scenario(operator=make_operator(CorrectDuplicating), workload=create_parents)
    explorer = CrashExplorer(scenario, FakeClusterSite([Parent]), cases=[])

    async def main() -> tuple[float, list[float]]:
        asyncio = __import__("asyncio")
        await asyncio.sleep(100)  # so that a time of 0 would stand out
        started = asyncio.get_running_loop().time()
        run = await explorer.record()
        return started, [event.at for event in run.history.events]

    started, times = run_on_virtual_clock(main())
    assert times  # the Parent, its child, its status
    assert times == sorted(times)
    assert started >= 100
    assert all(started <= at <= started + 60 for at in times)
