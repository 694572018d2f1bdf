"""benches/_profile_split.py: a py-spy raw profile charged to kinds of work by stack."""

from __future__ import annotations

from types import ModuleType

import pytest
from _benches import load_bench


@pytest.fixture(scope="module")
def split() -> ModuleType:
    return load_bench("_profile_split")


LOOP = "BaseEventLoop._run_once (asyncio/base_events.py:1877)"
TASK = "Handle._run (asyncio/events.py:80)"


def stack(*frames: str) -> str:
    return ";".join(["<module> (crdkit:8)", LOOP, TASK, *frames])


def test_the_innermost_frame_of_a_kind_decides(split: ModuleType) -> None:
    controller = "Controller._reconcile (crdkit/runtime/controller.py:200)"
    codec = "decode (crdkit/client/codec.py:40)"
    assert split.kind_of(stack(controller).split(";")) == "crdkit (other)"
    assert split.kind_of(stack(controller, codec, "loads (json/__init__.py:346)").split(";")) == (
        "json"
    )
    assert split.kind_of(stack(controller, "validate (pydantic/main.py:5)").split(";")) == (
        "pydantic"
    )
    read = "SSLProtocol._do_read (asyncio/sslproto.py:700)"
    assert split.kind_of(stack(read, "SSLObject.read (ssl.py:917)").split(";")) == "http/tls"
    assert split.kind_of(stack().split(";")) == "event loop"
    # A frame of no listed kind (enum, typing) defers to its callers.
    assert split.kind_of(stack(controller, "__call__ (enum.py:700)").split(";")) == (
        "crdkit (other)"
    )
    assert split.kind_of(["<module> (x.py:1)", "f (enum.py:2)"]) == "other"


def test_anything_under_an_import_is_start_up(split: ModuleType) -> None:
    frames = stack(
        "_find_and_load (<frozen importlib._bootstrap>:1176)", "<module> (aiohttp/client.py:1)"
    )
    assert split.kind_of(frames.split(";")) == "imports"


def test_percentages_add_up_and_skip_partial_lines(split: ModuleType) -> None:
    lines = [
        stack("validate (pydantic/main.py:5)") + " 3",
        stack() + " 1",
        "",
        "a truncated line without a count",
        stack("validate (pydantic/main.py:5)") + " 4",
    ]
    assert split.split(lines) == {"pydantic": 87.5, "event loop": 12.5}
    assert split.total_samples(lines) == 8
    assert split.split([]) == {}
