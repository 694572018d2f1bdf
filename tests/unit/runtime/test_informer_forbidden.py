"""An informer whose list is refused with 403: one WARNING that names the resource, namespace and
verb and points at ``gen-rbac --check``, repeated at most every 30 s unless the message changes.
On a virtual clock, so the 30 s are exact; the real apiserver's 403 is in test_runtime_extensions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from crdkit.client import Forbidden
from crdkit.client.codec import codec_for
from crdkit.resources import Pod, resource_info
from crdkit.runtime.informer import FORBIDDEN_LOG_INTERVAL, Backoff, Informer
from crdkit.testing.sim.virtual_time import run_on_virtual_clock


class RefusingClient:
    """Resolves Pods, and refuses every list with ``message``."""

    def __init__(self) -> None:
        self.message = 'pods is forbidden: User "u" cannot list resource "pods"'
        self.lists = 0

    async def resolve(self, resource: Any, *, metadata_only: bool = False) -> Any:
        return SimpleNamespace(info=resource_info(Pod), codec=codec_for(Pod))

    async def list_raw_pages(self, target: Any, **options: Any) -> AsyncIterator[Any]:
        self.lists += 1
        raise Forbidden(self.message, code=403, reason="Forbidden")
        yield  # pragma: no cover


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name == "crdkit.runtime.informer"
    ]


def test_a_refused_list_is_one_warning_per_message_and_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = RefusingClient()

    async def main() -> None:
        informer = Informer(
            fake,  # type: ignore[arg-type]
            Pod,
            namespace="team",
            resync_period=None,
            backoff=Backoff(1.0, 1.0),  # a retry every virtual second
        )
        await informer.start()
        # Virtual time: the loop jumps from retry to retry, so 95 s take no real time.
        await asyncio.sleep(95.5)
        assert fake.lists >= 90
        assert len(warnings_in(caplog)) == 4  # at 0, ~30, ~60, ~90 s
        fake.message = 'pods is forbidden: User "u" cannot list resource "pods" (new role)'
        await asyncio.sleep(1.5)
        await informer.stop()
        assert isinstance(informer.last_error, Forbidden)

    with caplog.at_level(logging.DEBUG, logger="crdkit.runtime.informer"):
        run_on_virtual_clock(main())
    warnings = warnings_in(caplog)
    assert len(warnings) == 5, "a new message is logged at once"
    assert warnings[0].startswith(
        'informer Pod ns=team: forbidden to list pods (group "") in namespace team: '
        '403 Forbidden: pods is forbidden: User "u" cannot list resource "pods"; '
        "check the operator's role (crdkit gen-rbac ... --check ROLE.yaml)"
    )
    assert "(new role)" in warnings[4]
    assert FORBIDDEN_LOG_INTERVAL == 30.0
