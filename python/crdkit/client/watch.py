"""Incremental parsing of a watch: chunked bytes → JSON lines → typed events.

The apiserver writes one JSON object per line, but chunk boundaries fall anywhere (mid-line,
several lines per chunk), so ``LineBuffer`` reassembles lines before anything is decoded.
``WatchParser`` turns lines into ``WatchEvent``s and keeps ``resource_version`` current —
including from BOOKMARK events, which carry nothing but a newer version — so a watch that
breaks can resume exactly where it stopped. An ERROR event carries a ``metav1.Status`` and is
raised as the matching :class:`~crdkit.client.errors.ApiError` (typically ``Gone``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import msgspec

from crdkit.client.codec import InvalidObject
from crdkit.client.errors import (
    DecodeError,
    TransportError,
    WatchIdle,
    api_error_from_status,
)
from crdkit.client.objects import resource_version_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from crdkit.client.codec import Codec

__all__ = [
    "ADDED",
    "BOOKMARK",
    "DELETED",
    "INITIAL_EVENTS_END",
    "MODIFIED",
    "LineBuffer",
    "WatchEvent",
    "WatchParser",
]

T = TypeVar("T")

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
"""The annotation of the BOOKMARK that ends a watch's initial events (KEP-3157, WatchList)."""

# Go's encoding/json writes struct fields in declaration order, so an event line starts with
# its type. This is only a fast path: a line that does not match is decoded in full.
_BOOKMARK_PREFIX = b'{"type":"BOOKMARK"'
_ERROR_PREFIX = b'{"type":"ERROR"'


@dataclass(frozen=True, slots=True)
class WatchEvent(Generic[T]):
    """One change: ``type`` is ADDED, MODIFIED, DELETED or BOOKMARK (``object`` then None).

    ``raw`` is the object's JSON exactly as the server sent it, when it could be cut out of
    the event line; a compact store keeps it without re-encoding the object. ``invalid`` is
    set (and ``object`` is None) when a lenient parser met an object its type refuses.
    """

    type: str
    object: T | None
    resource_version: str | None
    raw: bytes | None = None
    invalid: InvalidObject | None = None
    initial_events_end: bool = False
    """On a BOOKMARK of a watch asked for its initial events (``sendInitialEvents``): the
    apiserver has sent them all (annotation `INITIAL_EVENTS_END`)."""


class LineBuffer:
    """Splits a byte stream into lines, holding an incomplete last line until the next chunk."""

    def __init__(self, max_line: int = 64 * 1024 * 1024) -> None:
        self._pending = bytearray()
        self.max_line = max_line

    def feed(self, chunk: bytes) -> list[bytes]:
        """The complete, non-blank lines that ``chunk`` finishes (without their newlines)."""
        if b"\n" not in chunk:
            self._pending += chunk
            if len(self._pending) > self.max_line:
                raise DecodeError(f"watch line longer than {self.max_line} bytes")
            return []
        self._pending += chunk
        *lines, rest = bytes(self._pending).split(b"\n")
        self._pending = bytearray(rest)
        return [line for line in lines if line.strip()]

    def flush(self) -> bytes | None:
        """What is left at the end of the stream (a last line without a newline), if anything."""
        rest = bytes(self._pending).strip()
        self._pending.clear()
        return rest or None


class _ChunkSource(Protocol):
    async def readany(self) -> bytes: ...


class _RawEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw


_RAW_EVENT = msgspec.json.Decoder(_RawEvent)


class WatchParser(Generic[T]):
    """Decodes event lines with a codec and tracks the newest resourceVersion seen.

    ``lenient``: an event whose object the codec's type refuses is yielded with ``invalid``
    set (and no ``object``) instead of raising, so that the watch goes on past it; its
    resourceVersion still counts as seen.
    """

    def __init__(
        self, codec: Codec[T], resource_version: str | None = None, *, lenient: bool = False
    ) -> None:
        self.codec = codec
        self.resource_version = resource_version
        self.lenient = lenient

    def parse_line(self, line: bytes) -> WatchEvent[T]:
        head = line[:32].lstrip()
        if head.startswith(_BOOKMARK_PREFIX):
            return self._bookmark(_json_object(line))
        if head.startswith(_ERROR_PREFIX):
            raise self._error(_json_object(line))
        try:
            kind, obj = self.codec.decode_event(line)
        except DecodeError:
            # Not the expected shape: perhaps a BOOKMARK or ERROR written in another field
            # order; anything else is a real decode failure.
            value = _json_object(line)
            if value.get("type") == BOOKMARK:
                return self._bookmark(value)
            if value.get("type") == ERROR:
                raise self._error(value) from None
            if self.lenient:
                refused = self._refused(line)
                if refused is not None:
                    return refused
            raise
        version = resource_version_of(obj)
        if version:
            self.resource_version = version
        return WatchEvent(kind, obj, version, _object_bytes(line, kind))

    def _refused(self, line: bytes) -> WatchEvent[T] | None:
        """The event of an object the type refuses; ``None`` if the line is broken otherwise
        (not an event, an object without a name): that still fails the watch."""
        try:
            envelope = _RAW_EVENT.decode(line)
        except msgspec.MsgspecError:
            return None
        raw = bytes(envelope.object)
        decoded = self.codec.try_decode(raw)
        if not isinstance(decoded, InvalidObject) or decoded.key is None:
            return None
        if decoded.resource_version:
            self.resource_version = decoded.resource_version
        return WatchEvent(envelope.type, None, decoded.resource_version, raw, decoded)

    def _bookmark(self, value: dict[str, Any]) -> WatchEvent[T]:
        obj = value.get("object") or {}
        metadata = obj.get("metadata") or {}
        version = metadata.get("resourceVersion")
        if version:
            self.resource_version = str(version)
        ended = (metadata.get("annotations") or {}).get(INITIAL_EVENTS_END) == "true"
        return WatchEvent(BOOKMARK, None, str(version) if version else None, None, None, ended)

    @staticmethod
    def _error(value: dict[str, Any]) -> Exception:
        status = value.get("object")
        if not isinstance(status, dict):
            return DecodeError(f"watch ERROR event without a Status: {value!r:.200}")
        return api_error_from_status(status)

    async def events(
        self, source: _ChunkSource, *, idle_timeout: float | None = None
    ) -> AsyncIterator[WatchEvent[T]]:
        """Events from a chunked body until the server ends the watch.

        A broken connection raises ``TransportError``; silence past the idle timeout (the
        source's to enforce; ``idle_timeout`` only names it in the message) raises
        ``WatchIdle`` (a ``RequestTimeout``). Either way ``resource_version`` says where to resume.
        """
        from crdkit.client.http1 import HttpError  # the HTTP layer's, loaded with it

        lines = LineBuffer()
        while True:
            try:
                chunk = await source.readany()
            except TimeoutError as exc:
                silent = f" for {idle_timeout:g}s" if idle_timeout else ""
                raise WatchIdle(
                    f"watch idle timeout: no bytes from the server{silent}, not even a "
                    f"bookmark (a dead connection, or a quiet resource the apiserver sent no "
                    f"bookmark for); resume from {self.resource_version}"
                ) from exc
            except HttpError as exc:
                raise TransportError(f"watch connection broke: {exc}") from exc
            if not chunk:
                break
            for line in lines.feed(chunk):
                yield self.parse_line(line)
        last = lines.flush()
        if last is not None:
            yield self.parse_line(last)


def _object_bytes(line: bytes, kind: str) -> bytes | None:
    """The ``object`` member of an event line, when the line has the server's exact layout."""
    prefix = b'{"type":"' + kind.encode() + b'","object":'
    if line.startswith(prefix) and line.endswith(b"}"):
        return line[len(prefix) : -1]
    return None


def _json_object(line: bytes) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise DecodeError(f"watch line is not JSON: {line[:200]!r}") from exc
    if not isinstance(value, dict):
        raise DecodeError(f"watch line is not a JSON object: {line[:200]!r}")
    return value
