"""The event loop of `crdkit run` and `crdkit scheduler`: uvloop when installed and no webhooks
are served (``auto``), or the one named."""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import pytest

from crdkit.runtime import event_loop
from crdkit.runtime.event_loop import choose, loop_factory, run

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
    with pytest.raises(ValueError, match=r"^--event-loop: expected one of auto, asyncio, uvloop"):
        loop_factory("trio")


def _without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "uvloop" else real(name, *args)

    monkeypatch.setattr(event_loop.importlib.util, "find_spec", find_spec)


@pytest.mark.skipif(not HAVE_UVLOOP, reason="needs crdkit[fast]")
def test_auto_is_uvloop_when_installed_unless_webhooks_are_served() -> None:
    assert choose("auto") == "uvloop"
    assert choose("auto", serves_webhooks=True) == "asyncio"
    assert loop_factory("auto", serves_webhooks=True) is None


def test_auto_is_asyncio_without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_uvloop(monkeypatch)
    assert choose("auto") == "asyncio"
    assert loop_factory("auto") is None  # no error: auto falls back quietly


def test_a_named_loop_is_kept_whatever_is_served() -> None:
    assert choose("asyncio") == "asyncio"
    assert choose("uvloop", serves_webhooks=True) == "uvloop"  # refused later, in one line


async def _loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_run_uses_the_chosen_loop() -> None:
    assert run(_loop_module(), "asyncio").startswith("asyncio")
    if HAVE_UVLOOP:
        assert run(_loop_module(), "uvloop").startswith("uvloop")
