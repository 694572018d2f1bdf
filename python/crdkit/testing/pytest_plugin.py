"""pytest plugin (entry point ``pytest11: crdkit``): a real control plane for tests.

Fixtures:
    control_plane    session-scoped :class:`~crdkit.testing.ControlPlane`
    namespace        a fresh namespace per test (its name)
    k8s_api_client   a kubernetes-asyncio ``ApiClient`` configured for the control plane
    crdkit_client    an open :class:`crdkit.client.Client` for the control plane
    operator         an :class:`~crdkit.testing.operator.OperatorRunner` on that client:
                     reconcilers in a real Manager for the length of a test

Options:
    --crash-case=kind:k  run only that case in every ``CrashExplorer`` (the rerun line a
                     crash-consistency failure prints, e.g. ``--crash-case=kill-after:7``)
    --crash-budget=N     every ``CrashExplorer`` samples at most N cases, whatever its
                     ``max_cases`` (0: explore every case)

The fixtures are async and need pytest-asyncio (0.24 or newer). The plugin loads in every
pytest run of an environment where crdkit is installed, so it must not break pytest where
pytest-asyncio is absent: then the fixtures exist but fail with a clear message.

A fresh project runs pytest-asyncio in its default ``strict`` mode, where an ``async def``
test without ``@pytest.mark.asyncio`` is not run at all. A coroutine test that asks for one of
crdkit's fixtures is marked here, so the examples in docs/guides/testing.md work as copied;
``asyncio_mode = "auto"`` (or the mark) does the same for every other async test.
"""

from __future__ import annotations

import inspect
import os
import re
from importlib.util import find_spec
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from collections.abc import Generator

__all__ = ["control_plane", "crdkit_client", "k8s_api_client", "namespace", "operator"]

if find_spec("pytest_asyncio") is not None:
    from crdkit.testing.fixtures import (
        control_plane,
        crdkit_client,
        k8s_api_client,
        namespace,
        operator,
    )
else:  # pragma: no cover - exercised only without pytest-asyncio

    def _needs_pytest_asyncio() -> NoReturn:
        pytest.fail("crdkit's control plane fixtures need pytest-asyncio >= 0.24")

    @pytest.fixture(scope="session")
    def control_plane() -> NoReturn:
        _needs_pytest_asyncio()

    @pytest.fixture
    def namespace() -> NoReturn:
        _needs_pytest_asyncio()

    @pytest.fixture
    def k8s_api_client() -> NoReturn:
        _needs_pytest_asyncio()

    @pytest.fixture
    def crdkit_client() -> NoReturn:
        _needs_pytest_asyncio()

    @pytest.fixture
    def operator() -> NoReturn:
        _needs_pytest_asyncio()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--crash-case",
        action="store",
        default=None,
        metavar="KIND:K",
        help="crdkit: run only this crash case (e.g. kill-after:7) in every CrashExplorer",
    )
    parser.addoption(
        "--crash-budget",
        action="store",
        default=None,
        metavar="N",
        help="crdkit: every CrashExplorer samples at most N cases (0: every case)",
    )


def pytest_configure(config: pytest.Config) -> None:
    case = config.getoption("--crash-case", default=None)
    if case:
        # The explorer reads it from the environment, which also reaches a test's subprocess.
        from crdkit.testing.crashes.cases import CrashCase
        from crdkit.testing.crashes.explorer import CASE_ENVIRONMENT

        CrashCase.parse(case)  # a typo fails the run now, not deep in a test
        os.environ[CASE_ENVIRONMENT] = case
    budget = config.getoption("--crash-budget", default=None)
    if budget is not None:
        from crdkit.testing.crashes.explorer import BUDGET_ENVIRONMENT, budget_from_environment

        os.environ[BUDGET_ENVIRONMENT] = budget
        try:
            budget_from_environment()  # a typo fails the run now, not deep in a test
        except ValueError as error:
            raise pytest.UsageError(f"--crash-budget: {error}") from None


# The function-scoped fixtures of crdkit's plugins, which a wider fixture cannot request.
_PER_TEST = ("crdkit_client", "namespace", "k8s_api_client", "operator")
# Every fixture of crdkit's plugins: an async test asking for one is an asyncio test.
_FIXTURES = frozenset({*_PER_TEST, "control_plane"})


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Generator[None, object, object]:
    """Mark an ``async def`` test that uses crdkit's fixtures as an asyncio test, before
    pytest-asyncio looks for the mark (strict mode would otherwise not run it)."""
    if (
        find_spec("pytest_asyncio") is not None
        and inspect.iscoroutinefunction(obj)
        and collector.funcnamefilter(name)
        and not any(mark.name == "asyncio" for mark in getattr(obj, "pytestmark", ()))
    ):
        try:
            parameters = set(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            parameters = set()
        if parameters & _FIXTURES:
            pytest.mark.asyncio(obj)
    return (yield)


_SCOPE_HINT = (
    "crdkit: {fixture} is made anew for every test, so a {scope}-scoped fixture cannot use it. "
    "Open what you need inside your fixture instead, e.g. "
    "`async with Client.from_control_plane(control_plane) as client:` (control_plane is "
    "session-scoped), and give the fixture a loop_scope as wide as its scope: "
    '@pytest_asyncio.fixture(scope="{scope}", loop_scope="{scope}"). A client is bound to '
    "its fixture's event loop, so tests that use it need that loop too: "
    '@pytest.mark.asyncio(loop_scope="{scope}").'
)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Say what to do when a wider fixture asks for one of crdkit's per-test fixtures
    (pytest's own ScopeMismatch names the fixtures but not the way out)."""
    report = yield
    if call.when == "setup" and call.excinfo is not None:
        message = str(call.excinfo.value)
        found = re.search(r"access the function scoped fixture (\w+) with a (\w+) scoped", message)
        if "ScopeMismatch" in message and found and found.group(1) in _PER_TEST:
            hint = _SCOPE_HINT.format(fixture=found.group(1), scope=found.group(2))
            report.sections.append(("crdkit hint", hint))
    return report
