"""The event loop of `crdkit run` and `crdkit scheduler`: asyncio's own, or uvloop on request."""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import pytest

from crdkit.runtime import event_loop
from crdkit.runtime.event_loop import loop_factory, run

HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None


def test_asyncio_is_asyncio_own_loop() -> None:
    assert loop_factory("asyncio") is None


def test_asking_for_uvloop_without_it_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "uvloop" else real(name, *args)

    monkeypatch.setattr(event_loop.importlib.util, "find_spec", find_spec)
    with pytest.raises(ValueError, match=r"^--event-loop uvloop: uvloop is not installed"):
        loop_factory("uvloop")


def test_an_unknown_loop_is_refused_naming_the_option() -> None:
    with pytest.raises(ValueError, match=r"^--event-loop: expected one of asyncio, uvloop"):
        loop_factory("trio")


async def _loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_run_uses_the_chosen_loop() -> None:
    assert run(_loop_module(), "asyncio").startswith("asyncio")
    if HAVE_UVLOOP:
        assert run(_loop_module(), "uvloop").startswith("uvloop")
