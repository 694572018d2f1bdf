"""``CrashExplorer``: run a scenario once without faults, then once per fault, and judge.

::

    scenario = Scenario(operator=build_manager, workload=create_objects)
    report = run_on_virtual_clock(CrashExplorer(scenario, FakeClusterSite([Parent])).check())

Each run gets a clean site (:mod:`crdkit.testing.crashes.sites`), starts the scenario's
operator on a client whose transport is a :class:`~crdkit.testing.crashes.transport.
CrashTransport`, runs the workload on a client of its own, and waits until the run is quiet:
the workload has returned, neither the operator nor anyone else has changed the watched kinds
for ``settle`` seconds (on the loop's clock), and the scenario's ``quiet`` check, if any,
holds. A fault that kills the operator cancels its Manager and starts a new one from the
scenario's factory on a new client: a restarted pod, with empty caches.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from crdkit.client import Client
from crdkit.resources import resource_info
from crdkit.runtime.manager import Manager
from crdkit.testing.crashes.cases import FAULT_KINDS, CrashCase, FaultKind
from crdkit.testing.crashes.history import History, HistoryRecorder
from crdkit.testing.crashes.oracles import EndView, Invariant, check_run, user_invariants
from crdkit.testing.crashes.rest import behind, busy
from crdkit.testing.crashes.transport import CrashTransport
from crdkit.testing.crashes.writes import Write, WriteLog
from crdkit.testing.errors import KitError
from crdkit.testing.sim.virtual_time import VirtualTimeLoop

if TYPE_CHECKING:
    from crdkit.resources import KubernetesObject
    from crdkit.testing.crashes.sites import CrashSite, CrashTarget

__all__ = [
    "BUDGET_ENVIRONMENT",
    "CASE_ENVIRONMENT",
    "CaseResult",
    "CrashConsistencyError",
    "CrashExplorer",
    "CrashReport",
    "RunRecord",
    "Scenario",
]

CASE_ENVIRONMENT = "CRDKIT_CRASH_CASE"
"""Set by ``pytest --crash-case=kind:k``: explorers run only that case."""

BUDGET_ENVIRONMENT = "CRDKIT_CRASH_BUDGET"
"""Set by ``pytest --crash-budget=N`` (or by hand): every explorer samples at most N cases,
whatever its ``max_cases``; ``0`` explores them all. A CI with little time caps the runs, a
nightly one explores every write, with no change to the tests."""


def budget_from_environment() -> int | Literal[False] | None:
    """The budget `BUDGET_ENVIRONMENT` sets: a number of cases, None (``0``: all of them), or
    False where it is not set."""
    text = os.environ.get(BUDGET_ENVIRONMENT, "").strip()
    if not text:
        return False
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(
            f"{BUDGET_ENVIRONMENT}={text!r}: a number of cases (0 or more; 0 explores them all)"
        )
    return value or None


OperatorFactory = Callable[[Client, str], Manager | Awaitable[Manager]]
Workload = Callable[[Client, str], Coroutine[Any, Any, None]]
QuietCheck = Callable[[Client, str], Awaitable[bool]]

# Writes a crash at is rarely telling, and that a fresh operator makes anyway.
DEFAULT_IGNORED = frozenset({"events", "events.events.k8s.io", "leases.coordination.k8s.io"})


class CrashConsistencyError(KitError, AssertionError):
    """A scenario failed under a fault (or without one); the message says how to rerun it."""


@dataclass
class Scenario:
    """An operator, what its users do, and when they are done.

    ``operator(client, namespace)`` builds the operator (a :class:`Manager`, not yet run) on
    the given client, as its ``main`` would; it is called again after each crash.
    ``workload(client, namespace)`` does what the users do (create objects, wait for them,
    delete them) on a client of its own. ``kinds`` are watched for the history and compared at
    the end (default: the manager's primary and owned kinds). ``settle``: seconds without any
    change that make a run quiet; ``timeout``: the bound within which each part of a run
    (before and after a crash) must come to rest. ``quiet``: a further condition of rest.
    ``invariants``: functions of a run's :class:`History` returning the violations found.
    """

    operator: OperatorFactory
    workload: Workload
    kinds: Sequence[type[KubernetesObject]] = ()
    settle: float = 5.0
    timeout: float = 300.0
    quiet: QuietCheck | None = None
    invariants: Sequence[Invariant] = ()
    ignored: frozenset[str] = DEFAULT_IGNORED
    """Resources (``plural[.group]``) whose writes get no faults."""
    history_only: Sequence[type[KubernetesObject]] = ()
    """Kinds watched into the history for the invariants (a leader's Lease, say) but left out
    of the end state the oracles compare: what they hold differs between runs by design (a
    restarted operator's new identity)."""
    end_view: EndView | None = None
    """What of each end-state object is compared with the fault-free run's (default: all of
    it, normalised): a scenario whose placements may legitimately differ between runs (which
    node a pod lands on) keeps only that a pod is bound, say."""
    recreatable: frozenset[str] = frozenset()
    """Kinds whose objects the operator may delete for their owner to make again under the
    same name (a gang's pods rolled back): the recreation oracle does not judge them."""


@dataclass
class RunRecord:
    """One run: its writes, what the cluster went through, the fault's write if it hit one."""

    case: CrashCase | None
    writes: list[Write]
    history: History
    injected: Write | None = None
    cut_events: int = 0
    problems: list[str] = field(default_factory=list)
    settled_at: float = 0.0
    """Loop time from the run's start until it was quiet."""


Outcome = Literal["passed", "failed", "not reached"]


@dataclass
class CaseResult:
    """A case's verdict: ``write`` is the fault-free run's write it aimed at."""

    case: CrashCase
    write: Write
    outcome: Outcome
    problems: list[str] = field(default_factory=list)
    run: RunRecord | None = None

    def describe(self, rerun: str | None = None) -> str:
        lines = [f"{self.case} ({self.case.kind} on write {self.case.index}: {self.write})"]
        lines += [f"  {problem}".replace("\n", "\n  ") for problem in self.problems]
        if rerun:
            lines.append(f"  rerun: {rerun} --crash-case={self.case}")
        return "\n".join(lines)


@dataclass
class CrashReport:
    """What an exploration found: the fault-free run and each case's verdict."""

    baseline: RunRecord
    results: list[CaseResult]

    @property
    def failures(self) -> list[CaseResult]:
        return [result for result in self.results if result.outcome == "failed"]

    def by_kind(self) -> dict[FaultKind, Counter[Outcome]]:
        """Per fault kind: how many cases passed, failed, or never met their write."""
        counts: dict[FaultKind, Counter[Outcome]] = {}
        for result in self.results:
            counts.setdefault(result.case.kind, Counter())[result.outcome] += 1
        return counts

    def failed_kinds(self) -> set[FaultKind]:
        return {result.case.kind for result in self.failures}

    def summary(self) -> str:
        lines = [f"{len(self.baseline.writes)} writes in the fault-free run"]
        for kind, counts in self.by_kind().items():
            shown = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
            lines.append(f"  {kind}: {shown}")
        return "\n".join(lines)

    def raise_on_failure(self) -> None:
        """Raise :class:`CrashConsistencyError` naming each failed case and how to rerun it."""
        if not self.failures:
            return
        rerun = _rerun_command()
        parts = [f"{len(self.failures)} crash case(s) failed", self.summary()]
        parts += [failure.describe(rerun) for failure in self.failures]
        raise CrashConsistencyError("\n".join(parts))


def _rerun_command() -> str | None:
    current = os.environ.get("PYTEST_CURRENT_TEST")
    if not current:
        return None
    return f"pytest '{current.rsplit(' (', 1)[0]}'"


class _NotQuiet(Exception):
    pass


class CrashExplorer:
    """Explores ``scenario`` on ``target`` (:class:`~crdkit.testing.crashes.sites.
    FakeClusterSite` or :class:`~crdkit.testing.crashes.sites.ControlPlaneSite`).

    ``faults``: the kinds to inject; ``max_cases``: at most this many cases, sampled with
    ``seed`` when there are more (``pytest --crash-budget`` overrides it for every explorer);
    ``cases``: exactly these (``"kill-after:7"`` or :class:`CrashCase`), which ``pytest
    --crash-case`` also sets.
    """

    def __init__(
        self,
        scenario: Scenario,
        target: CrashTarget,
        *,
        faults: Sequence[FaultKind] = FAULT_KINDS,
        max_cases: int | None = None,
        seed: int = 0,
        cases: Sequence[CrashCase | str] | None = None,
    ) -> None:
        self.scenario = scenario
        self.target = target
        self.faults = tuple(faults)
        for kind in self.faults:
            if kind not in FAULT_KINDS:
                raise ValueError(f"no fault kind {kind!r}: one of {', '.join(FAULT_KINDS)}")
        if max_cases is not None and max_cases < 1:
            raise ValueError(f"max_cases must be 1 or more (None: every case), got {max_cases}")
        overridden = budget_from_environment()
        self.max_cases = max_cases if overridden is False else overridden
        self.seed = seed
        chosen = cases
        if chosen is None and os.environ.get(CASE_ENVIRONMENT):
            chosen = os.environ[CASE_ENVIRONMENT].split(",")
        self.cases = (
            None
            if chosen is None
            else [c if isinstance(c, CrashCase) else CrashCase.parse(c) for c in chosen]
        )

    # -- the whole exploration -------------------------------------------------------------

    async def check(self) -> CrashReport:
        """:meth:`explore`, then raise :class:`CrashConsistencyError` if a case failed."""
        report = await self.explore()
        report.raise_on_failure()
        return report

    async def explore(self) -> CrashReport:
        """The fault-free run, then each planned case; raises at once if the fault-free run
        itself fails (it is what the cases are judged against)."""
        baseline = await self.record()
        results = [await self.run_case(case, baseline) for case in self.plan(baseline)]
        return CrashReport(baseline, results)

    async def record(self) -> RunRecord:
        """The fault-free run; :class:`CrashConsistencyError` if it does not come to rest or
        breaks an invariant."""
        run = await self._run(None, None)
        run.problems += user_invariants(run.history, self.scenario.invariants)
        if run.problems:
            raise CrashConsistencyError(
                "the fault-free run failed:\n" + "\n".join(f"  {p}" for p in run.problems)
            )
        return run

    def plan(self, baseline: RunRecord) -> list[CrashCase]:
        """The cases to run: those given, else every fault kind on every write of the
        fault-free run (but the ignored resources'), sampled down to ``max_cases``."""
        if self.cases is not None:
            return list(self.cases)
        targets = [w for w in baseline.writes if w.resource not in self.scenario.ignored]
        planned = [CrashCase(kind, w.index) for kind in self.faults for w in targets]
        if self.max_cases is not None and len(planned) > self.max_cases:
            planned = sorted(random.Random(self.seed).sample(planned, self.max_cases))
        return planned

    async def run_case(self, case: CrashCase, baseline: RunRecord) -> CaseResult:
        if case.index > len(baseline.writes):
            raise ValueError(
                f"{case}: the fault-free run made {len(baseline.writes)} writes, not {case.index}"
            )
        write = baseline.writes[case.index - 1]
        run = await self._run(case, write)
        problems = run.problems + check_run(
            self._compared(baseline.history),
            self._compared(run.history),
            self.scenario.invariants,
            recreatable=self.scenario.recreatable,
            end_view=self.scenario.end_view,
        )
        outcome: Outcome = "failed" if problems else "passed"
        if not problems and (
            run.injected is None or (case.kind == "unobserved" and run.cut_events == 0)
        ):
            outcome = "not reached"
        return CaseResult(case, write, outcome, problems, run)

    def _compared(self, history: History) -> History:
        """``history`` with the end state of the scenario's ``history_only`` kinds left out."""
        if not self.scenario.history_only:
            return history
        left_out = {resource_info(kind).kind for kind in self.scenario.history_only}
        kept = [obj for obj in history.end_state if obj.get("kind") not in left_out]
        return History(history.namespace, history.events, kept)

    # -- one run ---------------------------------------------------------------------------

    async def _run(self, case: CrashCase | None, write: Write | None) -> RunRecord:
        if self.target.virtual_time and not isinstance(asyncio.get_running_loop(), VirtualTimeLoop):
            raise RuntimeError(
                "FakeCluster runs wait on the loop's clock: run the explorer on a virtual "
                "clock, e.g. run_on_virtual_clock(explorer.check())"
            )
        site = await self.target.site()
        try:
            return await self._run_on(site, case, write)
        finally:
            await site.close()

    async def _run_on(
        self, site: CrashSite, case: CrashCase | None, write: Write | None
    ) -> RunRecord:
        loop = asyncio.get_running_loop()
        started = loop.time()
        scenario = self.scenario
        log = WriteLog(namespace=site.namespace)
        died: asyncio.Future[Write] = loop.create_future()

        def on_death(killed: Write) -> None:
            if not died.done():
                died.set_result(killed)

        first = CrashTransport(
            site.client().transport,
            log,
            case=case,
            target=write.identity if write is not None else None,
            on_death=on_death,
        )
        async with site.client() as observer:
            operator = _Operator(scenario, site, first)
            manager = await operator.build()
            kinds = [*(scenario.kinds or _manager_kinds(manager)), *scenario.history_only]
            recorder = HistoryRecorder(observer, kinds, site.namespace)
            await recorder.start()
            problems: list[str] = []
            workload: asyncio.Task[None] | None = None
            try:
                operator.start()
                if not await operator.ready_or(died):
                    problems += operator.failure("the operator did not start")
                workload = asyncio.create_task(scenario.workload(observer, site.namespace))
                if case is not None and case.kills:
                    await self._quiet(observer, site, log, recorder, workload, died, operator)
                if died.done():
                    await operator.kill()
                    stale = None
                    if case is not None and case.kind == "stale":
                        stale = first.before_version
                    second = CrashTransport(
                        site.client().transport, log, stage=1, stale_version=stale
                    )
                    operator = _Operator(scenario, site, second)
                    await operator.build()
                    operator.start()
                    if not await operator.ready_or(None):
                        problems += operator.failure("the restarted operator did not start")
                if not problems:
                    await self._quiet(observer, site, log, recorder, workload, None, operator)
            except _NotQuiet as moving:
                problems.append(str(moving))
            finally:
                problems += await operator.stop()
                if workload is not None:
                    if not workload.done():
                        workload.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        error = await asyncio.gather(workload, return_exceptions=True)
                        if isinstance(error[0], Exception):
                            problems.append(f"the workload failed: {error[0]!r}")
            history = await recorder.finish()
        return RunRecord(
            case,
            list(log.writes),
            history,
            injected=first.injected,
            cut_events=first.cut_events,
            problems=problems,
            settled_at=loop.time() - started,
        )

    async def _quiet(
        self,
        observer: Client,
        site: CrashSite,
        log: WriteLog,
        recorder: HistoryRecorder,
        workload: asyncio.Task[None],
        died: asyncio.Future[Write] | None,
        operator: _Operator,
    ) -> None:
        """Wait until the run is quiet (or, with ``died``, until the operator died, if first);
        :class:`_NotQuiet` past the scenario's timeout, naming what still moved.

        The settling time counts only while the operator is at rest (`rest`: idle, and its
        caches caught up with the recorded changes), so a loaded machine's slow watch or long
        reconcile is waited for rather than judged half done."""
        scenario = self.scenario
        loop = asyncio.get_running_loop()
        started = loop.time()
        tick = scenario.settle / 10
        seen = (len(log.writes), len(recorder.history.events))
        changed = loop.time()
        while True:
            if died is not None and died.done():
                return
            now = loop.time()
            counts = (len(log.writes), len(recorder.history.events))
            if counts != seen or operator.unrest(
                recorder.history, caught_up=operator.transport.cut_events == 0
            ):
                seen, changed = counts, now
            if (
                workload.done()
                and now - changed >= scenario.settle
                and (scenario.quiet is None or await scenario.quiet(observer, site.namespace))
            ):
                return
            if now - started > scenario.timeout:
                raise _NotQuiet(self._still_moving(log, recorder, workload, operator))
            await asyncio.sleep(tick)

    def _still_moving(
        self,
        log: WriteLog,
        recorder: HistoryRecorder,
        workload: asyncio.Task[None],
        operator: _Operator,
    ) -> str:
        parts = [f"did not come to rest within {self.scenario.timeout:g}s:"]
        if not workload.done():
            parts.append("  the workload had not returned")
        caught_up = operator.transport.cut_events == 0
        parts += [f"  {why}" for why in operator.unrest(recorder.history, caught_up=caught_up)]
        recent_writes = [str(w) for w in log.writes[-5:]]
        if recent_writes:
            parts.append(f"  the operator's last writes: {'; '.join(recent_writes)}")
        recent = [f"{e.type} {e.kind} {e.key[2]}" for e in recorder.history.events[-5:]]
        if recent:
            parts.append(f"  the last changes: {'; '.join(recent)}")
        if self.scenario.quiet is not None:
            parts.append("  (or the scenario's quiet check did not hold)")
        return "\n".join(parts)


def _manager_kinds(manager: Manager) -> list[type[KubernetesObject]]:
    kinds: list[type[KubernetesObject]] = []
    for controller in manager.controllers:
        kinds.append(controller.kind)
        kinds.extend(controller.reconciler.owns)
    if not kinds:
        raise ValueError(
            "the scenario's manager has no controllers to take kinds from: give Scenario.kinds"
        )
    return list(dict.fromkeys(kinds))


class _Operator:
    """One incarnation of the operator: its client, its Manager and the task running it."""

    def __init__(self, scenario: Scenario, site: CrashSite, transport: CrashTransport) -> None:
        self.scenario = scenario
        self.site = site
        self.transport = transport
        self.client = Client(site.client().config, transport=transport)
        self.manager: Manager | None = None
        self.task: asyncio.Task[None] | None = None
        self._opened = False

    async def build(self) -> Manager:
        await self.client.transport.open()
        self._opened = True
        built = self.scenario.operator(self.client, self.site.namespace)
        manager = await built if inspect.isawaitable(built) else built
        if not isinstance(manager, Manager):
            raise TypeError(f"the scenario's operator factory must make a Manager, got {manager!r}")
        self.manager = manager
        return manager

    def unrest(self, history: History, *, caught_up: bool) -> list[str]:
        """Why the operator is not at rest (`crdkit.testing.crashes.rest`); ``caught_up``:
        also ask that its caches saw the last change (not where a fault cut events from its
        watches: it never sees those)."""
        manager = self.manager
        if manager is None or self.task is None or self.task.done():
            return []
        found = [f"{name} controller at work" for name in busy(manager)]
        if caught_up:
            found += behind(manager, history)
        return found

    def start(self) -> None:
        assert self.manager is not None
        self.task = asyncio.create_task(self.manager.run(), name="crash-operator")

    async def ready_or(self, died: asyncio.Future[Write] | None) -> bool:
        assert self.manager is not None
        assert self.task is not None
        ready = asyncio.ensure_future(self.manager.wait_ready())
        waits: set[asyncio.Future[Any]] = {ready}
        if died is not None:
            waits.add(died)
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            await asyncio.gather(ready, return_exceptions=True)
            return True  # died while starting: the restart follows
        return ready.exception() is None

    def failure(self, what: str) -> list[str]:
        if self.task is not None and self.task.done() and not self.task.cancelled():
            return [f"{what}: {self.task.exception()!r}"]
        return [what]

    async def kill(self) -> None:
        """Cancel everything the operator runs, as SIGKILL would end it: its transport is
        dead already, so nothing it does on the way out reaches the server."""
        task = self.task
        if task is not None:
            for _ in range(100):
                if task.done():
                    break
                task.cancel()
                await asyncio.wait({task}, timeout=0.5)
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: a dying manager's errors mean nothing
        await self._close()

    async def stop(self) -> list[str]:
        """Stop gracefully; what the operator failed with, if it did."""
        problems: list[str] = []
        task, manager = self.task, self.manager
        if task is not None and manager is not None:
            manager.stop()
            done, _ = await asyncio.wait({task}, timeout=self.scenario.timeout)
            if not done:
                problems.append("the operator did not stop")
                await self.kill()
            elif not task.cancelled() and task.exception() is not None:
                problems.append(f"the operator failed: {task.exception()!r}")
        await self._close()
        return problems

    async def _close(self) -> None:
        if self._opened:
            self._opened = False
            await self.client.transport.close()
