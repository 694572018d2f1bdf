"""Crash consistency: does an operator still end right when it dies between two writes, when a
write is applied but its answer lost, or when its cache is behind? (Sieve, OSDI '22; Acto,
SOSP '23.)

::

    writes.py     numbering the operator's writes, the same in every run (Write, WriteLog)
    cases.py      the fault kinds and the ``kind:k`` case names (CrashCase)
    transport.py  CrashTransport: the operator's ApiTransport, injecting one fault
    history.py    a run's changes and end state, watched by a client of its own
    normalise.py  objects as two runs can agree on (no uids, versions, times, name suffixes)
    oracles.py    end state, recreations, orphans, duplicate children, user invariants
    sites.py      a clean FakeCluster or real-apiserver namespace for every run
    explorer.py   Scenario, CrashExplorer, CrashReport

::

    scenario = Scenario(operator=lambda client, ns: my_manager(client, ns), workload=create)
    run_on_virtual_clock(CrashExplorer(scenario, FakeClusterSite([MyKind])).check())
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.testing.crashes.cases import FAULT_KINDS as FAULT_KINDS
    from crdkit.testing.crashes.cases import CrashCase as CrashCase
    from crdkit.testing.crashes.cases import FaultKind as FaultKind
    from crdkit.testing.crashes.explorer import CaseResult as CaseResult
    from crdkit.testing.crashes.explorer import CrashConsistencyError as CrashConsistencyError
    from crdkit.testing.crashes.explorer import CrashExplorer as CrashExplorer
    from crdkit.testing.crashes.explorer import CrashReport as CrashReport
    from crdkit.testing.crashes.explorer import RunRecord as RunRecord
    from crdkit.testing.crashes.explorer import Scenario as Scenario
    from crdkit.testing.crashes.history import History as History
    from crdkit.testing.crashes.history import HistoryEvent as HistoryEvent
    from crdkit.testing.crashes.normalise import normalise_state as normalise_state
    from crdkit.testing.crashes.sites import ControlPlaneSite as ControlPlaneSite
    from crdkit.testing.crashes.sites import FakeClusterSite as FakeClusterSite
    from crdkit.testing.crashes.transport import CrashTransport as CrashTransport
    from crdkit.testing.crashes.transport import OperatorKilled as OperatorKilled
    from crdkit.testing.crashes.writes import Write as Write
    from crdkit.testing.crashes.writes import WriteLog as WriteLog

__getattr__, __dir__ = lazy_namespace(__name__, globals())
