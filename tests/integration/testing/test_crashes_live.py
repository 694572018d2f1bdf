"""The crash-consistency kit on the real apiserver of the local control plane: the broken
operators of tests/_crash_operators.py are caught there by the same fault kinds as on
FakeCluster (`tests/unit/testing/crashes/test_crash_explorer.py`), ``stale`` included (a list
at an exact older resourceVersion, which etcd serves), and their correct versions pass.

``Duplicating`` is left to FakeCluster: on a real apiserver its fault-free run is not one run
(whether its cache shows its own status write before the next reconcile is a race, so it
sometimes duplicates with no fault at all), and the explorer compares against that run."""

from __future__ import annotations

from typing import Any

import pytest

from _crash_operators import (
    CacheTrusting,
    CorrectCacheTrusting,
    CorrectUnfinalizing,
    Parent,
    Unfinalizing,
    create_parents,
    create_then_delete,
    make_operator,
)
from crdkit.crd import build_crd
from crdkit.runtime import Reconciler
from crdkit.testing import ControlPlane
from crdkit.testing.crashes import (
    FAULT_KINDS,
    ControlPlaneSite,
    CrashExplorer,
    CrashReport,
    FaultKind,
    Scenario,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


@pytest.fixture(autouse=True)
def _no_case_from_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRDKIT_CRASH_CASE", raising=False)


async def explore(
    plane: ControlPlane,
    reconciler: type[Reconciler[Any]],
    workload: Any,
    faults: tuple[FaultKind, ...],
) -> CrashReport:
    await plane.install_crds([build_crd([Parent])])
    # A real apiserver's runs cost real seconds: a short settle (it counts only while the
    # operator's queues are idle), as these operators wait on no timer.
    scenario = Scenario(operator=make_operator(reconciler), workload=workload, settle=2.0)
    explorer = CrashExplorer(scenario, ControlPlaneSite(plane), faults=faults, cases=None)
    return await explorer.explore()


def _told(report: CrashReport) -> str:
    return "\n".join([report.summary(), *(f"{f.case}: {f.problems}" for f in report.failures)])


async def test_a_cache_trusting_operator_is_caught_by_a_stale_list(
    control_plane: ControlPlane,
) -> None:
    report = await explore(control_plane, CacheTrusting, create_parents, ("stale", "kill-after"))
    assert report.failed_kinds() == {"stale"}, report.summary()


async def test_an_unfinalizing_operator_leaves_its_parent_deleting(
    control_plane: ControlPlane,
) -> None:
    report = await explore(control_plane, Unfinalizing, create_then_delete, ("kill-after",))
    assert report.failed_kinds() == {"kill-after"}, report.summary()
    assert any('"deletionTimestamp": "<set>"' in f.problems[0] for f in report.failures)


@pytest.mark.parametrize(
    ("reconciler", "workload"),
    [(CorrectCacheTrusting, create_parents), (CorrectUnfinalizing, create_then_delete)],
)
async def test_the_correct_operators_pass_every_fault_on_the_real_apiserver(
    control_plane: ControlPlane, reconciler: Any, workload: Any
) -> None:
    report = await explore(control_plane, reconciler, workload, FAULT_KINDS)
    assert not report.failures, _told(report)
    assert report.by_kind(), "no case ran"
