"""``CrashTransport``: the operator's HTTP layer, numbering its writes and injecting one fault.

It wraps the real transport (or FakeCluster's) through the
:class:`~crdkit.client.transport.ApiTransport` protocol, so everything above it (the client's
codecs, the informers, the reconcilers) runs unchanged and meets the fault as it would in
production:

- a killed operator's transport fails every later request and watch read without reaching
  the server, so cleanup code in ``finally`` blocks writes nothing, as after ``kill -9``;
- a lost answer raises what the real transport raises when a connection resets after a write
  was sent (a :class:`~crdkit.client.errors.TransportError` caused by
  :class:`~crdkit.client.http1.ConnectionBroken`, which it never retries for writes);
- an unobserved write's watch event is cut out of the operator's watch streams;
- a stale restart's first list of each collection is served at an older resourceVersion
  (``resourceVersionMatch=Exact``), and its watch then replays what came since.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crdkit.client.errors import TransportError
from crdkit.client.http1 import ConnectionBroken
from crdkit.client.transport import JSON
from crdkit.testing.crashes.writes import MUTATING_METHODS, Write, WriteLog, parse_path
from crdkit.testing.errors import KitError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from crdkit.client.config import Timeouts
    from crdkit.client.transport import ApiTransport, ChunkStream, Params
    from crdkit.testing.crashes.cases import CrashCase

__all__ = ["CrashTransport", "OperatorKilled"]


class OperatorKilled(TransportError, KitError):
    """What a killed operator's calls raise: nothing reaches the server any more."""


@dataclass
class _Unobserved:
    """The watch event of one write, to be cut from every stream of the operator."""

    write: Write
    resource: str
    answered: asyncio.Future[dict[str, Any] | None]
    cut_from: set[int] = field(default_factory=set)  # ids of the streams it was cut from

    def matches(self, event: dict[str, Any], answer: dict[str, Any] | None) -> bool:
        if answer is None:
            return False  # the write failed: no event of it to drop
        obj = event.get("object") or {}
        metadata = obj.get("metadata") or {}
        answered = answer.get("metadata") or {}
        if self.write.verb == "delete" and answer.get("kind") == "Status":
            name = (answer.get("details") or {}).get("name")
            return event.get("type") == "DELETED" and metadata.get("name") == name
        if metadata.get("name") != answered.get("name"):
            return False
        if self.write.verb == "delete" and event.get("type") == "DELETED":
            return True
        return bool(metadata.get("resourceVersion") == answered.get("resourceVersion"))


class CrashTransport:
    """An ``ApiTransport`` around ``inner`` that logs the operator's writes in ``log`` and
    injects ``case`` on the write named ``target``; ``on_death`` is called when the fault
    kills the operator. ``stale_version``: the resourceVersion the first list of every
    collection is served at."""

    def __init__(
        self,
        inner: ApiTransport,
        log: WriteLog,
        *,
        stage: int = 0,
        case: CrashCase | None = None,
        target: tuple[str, str, str | None, str, int] | None = None,
        on_death: Callable[[Write], None] = lambda write: None,
        stale_version: str | None = None,
    ) -> None:
        self.inner = inner
        self.log = log
        self.stage = stage
        self.case = case
        self.target = target
        self.on_death = on_death
        self.stale_version = stale_version
        self.dead = False
        self.injected: Write | None = None
        """The write the fault hit, once it did."""
        self.before_version: str | None = None
        """For ``stale``: the server's resourceVersion just before the faulted write was sent
        (read then, not reckoned from the answer's: the answer to an update that removes a
        deleting object's last finalizer carries an older version than the deletion)."""
        self.cut_events = 0
        self._unobserved: list[_Unobserved] = []
        self._stale_served: set[tuple[str, str]] = set()

    # -- ApiTransport ----------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return self.inner.is_open

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    def _killed(self, method: str, path: str) -> OperatorKilled:
        return OperatorKilled(f"{method} {path}: the operator was killed (crash test)")

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = JSON,
        timeouts: Timeouts | None = None,
    ) -> bytes:
        if self.dead:
            raise self._killed(method, path)
        if method.upper() not in MUTATING_METHODS:
            return await self.inner.request(
                method,
                path,
                params=self._maybe_stale(method, path, params, accept),
                body=body,
                content_type=content_type,
                accept=accept,
                timeouts=timeouts,
            )
        write = self.log.number(method, path, body, stage=self.stage)
        fault = None
        if self.case is not None and self.injected is None and write.identity == self.target:
            fault = self.case.kind
            self.injected = write
        if fault == "kill-before":
            self._die(write)
            raise self._killed(method, path)
        if fault == "stale":
            self.before_version = await self._current_version(path)
        watching: _Unobserved | None = None
        if fault == "unobserved":
            target = parse_path(path)
            resource = target.resource if target is not None else path
            future: asyncio.Future[dict[str, Any] | None] = (
                asyncio.get_running_loop().create_future()
            )
            watching = _Unobserved(write, resource, future)
            self._unobserved.append(watching)
        try:
            answer = await self.inner.request(
                method,
                path,
                params=params,
                body=body,
                content_type=content_type,
                accept=accept,
                timeouts=timeouts,
            )
        except BaseException:
            self.log.answered(write, None)
            if watching is not None and not watching.answered.done():
                watching.answered.set_result(None)
            raise
        self.log.answered(write, answer)
        answered = self.log.answers.get(write.index)
        if watching is not None:
            watching.answered.set_result(answered)
        if fault in ("kill-after", "stale"):
            self._die(write)
            raise self._killed(method, path)
        if fault == "lost-response":
            self.log.answered(write, None)
            broken = ConnectionBroken("the answer broke off: connection reset by peer (crash test)")
            raise TransportError(f"{method} {path}: {broken}") from broken
        return answer

    async def _current_version(self, path: str) -> str | None:
        """The server's resourceVersion now, from a one-item list of the collection ``path``
        writes to (one the operator may list: it writes there)."""
        if parse_path(path) is None:
            return None
        parts = [part for part in path.split("?")[0].split("/") if part]
        cut = 2 if parts[0] == "api" else 3  # /api/v1 or /apis/<group>/<version>
        if parts[cut] == "namespaces" and len(parts) > cut + 2:
            cut += 2
        collection = "/" + "/".join(parts[: cut + 1])
        answer = await self.inner.request("GET", collection, params=[("limit", "1")])
        try:
            version = (json.loads(answer).get("metadata") or {}).get("resourceVersion")
        except (ValueError, AttributeError):
            return None
        return str(version) if version else None

    def _die(self, write: Write) -> None:
        self.dead = True
        self.on_death(write)

    def _maybe_stale(
        self, method: str, path: str, params: Params | None, accept: str
    ) -> Params | None:
        """The first list of each collection (in each shape: full or metadata-only, as
        separate informers list) at ``stale_version``: a cache that starts behind."""
        if self.stale_version is None or method.upper() != "GET":
            return params
        target = parse_path(path)
        if target is None or target.name is not None:
            return params
        given = list(params.items()) if isinstance(params, dict) else list(params or [])
        names = {name for name, _ in given}
        if "watch" in names or "continue" in names or (path, accept) in self._stale_served:
            return params
        self._stale_served.add((path, accept))
        kept = [(k, v) for k, v in given if k not in ("resourceVersion", "resourceVersionMatch")]
        return [*kept, ("resourceVersion", self.stale_version), ("resourceVersionMatch", "Exact")]

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        accept: str = JSON,
        idle_timeout: float | None = None,
        connect_timeout: float | None = None,
    ) -> AsyncIterator[ChunkStream]:
        if self.dead:
            raise self._killed(method, path)
        target = parse_path(path)
        resource = target.resource if target is not None else path
        async with self.inner.stream(
            method,
            path,
            params=params,
            accept=accept,
            idle_timeout=idle_timeout,
            connect_timeout=connect_timeout,
        ) as body:
            yield _CuttingStream(self, body, resource, f"{method} {path}")


class _CuttingStream:
    """A watch body of the operator: dead with it, and without the unobserved write's event."""

    def __init__(self, owner: CrashTransport, inner: ChunkStream, resource: str, what: str):
        self._owner = owner
        self._inner = inner
        self._resource = resource
        self._what = what
        self._buffer = b""

    async def readany(self) -> bytes:
        owner = self._owner
        while True:
            if owner.dead:
                raise OperatorKilled(f"{self._what}: the operator was killed (crash test)")
            chunk = await self._inner.readany()
            if owner.dead:
                raise OperatorKilled(f"{self._what}: the operator was killed (crash test)")
            cutting = [u for u in owner._unobserved if u.resource == self._resource]
            if not cutting and not self._buffer:
                return chunk  # nothing to cut: the bytes as they came
            if not chunk:
                rest, self._buffer = self._buffer, b""
                return rest
            *lines, self._buffer = (self._buffer + chunk).split(b"\n")
            kept = [line for line in lines if not await self._cut(line, cutting)]
            if kept:
                return b"".join(line + b"\n" for line in kept)

    async def _cut(self, line: bytes, cutting: list[_Unobserved]) -> bool:
        if not line.strip():
            return False
        try:
            event = json.loads(line)
        except ValueError:
            return False
        for unobserved in cutting:
            if id(self) in unobserved.cut_from:
                continue
            # The event may come before the write's answer (another connection): wait for the
            # answer to know which event is the write's.
            answer = await unobserved.answered
            if unobserved.matches(event, answer):
                unobserved.cut_from.add(id(self))
                self._owner.cut_events += 1
                return True
        return False
