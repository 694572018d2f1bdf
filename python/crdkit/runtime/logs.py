"""Structured logs: every line of a reconcile carries controller, namespace, name, reconcileID.

The runtime logs through the standard library with these fields in ``extra``; any handler can
use them. :class:`JsonFormatter` writes one JSON object per line (what log pipelines ingest),
and :func:`configure_logging` is what ``crdkit run`` uses.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import MutableMapping

__all__ = ["LOG_FIELDS", "JsonFormatter", "ReconcileLogger", "configure_logging"]

LOG_FIELDS = ("controller", "namespace", "name", "reconcileID")
"""The context fields the runtime attaches to its log records."""


class ReconcileLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger bound to one reconcile.

    Its fields go into each record's ``fields`` attribute (a dict) rather than straight onto the
    record, because ``name`` is already the record's logger name.
    """

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, Any]:
        extra = dict(kwargs.get("extra") or {})
        extra["fields"] = {**(self.extra or {}), **extra.get("fields", {})}
        kwargs["extra"] = extra
        return msg, kwargs


_RESERVED = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, msg, the context fields, and error."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        extras = {k: v for k, v in record.__dict__.items() if k not in _RESERVED and k[0] != "_"}
        fields = extras.pop("fields", None)
        if isinstance(fields, dict):
            extras.update(fields)
        for key, value in extras.items():
            data[key] = value if isinstance(value, str | int | float | bool) else str(value)
        if record.exc_info:
            data["error"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str)


class _TextFormatter(logging.Formatter):
    """Human-readable lines with the context fields appended as key=value."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = getattr(record, "fields", None) or {}
        text = " ".join(f"{key}={fields[key]}" for key in LOG_FIELDS if fields.get(key) is not None)
        return f"{line} {text}" if text else line


def configure_logging(level: str = "info", fmt: str = "json") -> None:
    """Send the root logger to stderr as JSON lines (``fmt="json"``) or text (``"text"``)."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"log level must be one of debug, info, warning, error; got {level!r}")
    if fmt not in ("json", "text"):
        raise ValueError(f"log format must be 'json' or 'text', got {fmt!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter()
        if fmt == "json"
        else _TextFormatter("%(asctime)s %(levelname)s %(name)s %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
