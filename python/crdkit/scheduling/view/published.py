"""Reading what a scheduler publishes (`format.PUBLISHED_KEY` of its `format.published_name`
ConfigMap) back into a `table.PublishedSnapshot`, checked field by field.

The reader is strict about what it shows (a wrong type would print as nonsense in a table or
break a script reading ``crdkit queue -o json``) and lenient about what it does not know: a
field added later in the same format is ignored. Every refusal is a `PublishedError` naming
the field (``gangs[3].priority: expected an integer, got 'high'``).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, cast

from crdkit.scheduling.errors import SchedulingError
from crdkit.scheduling.view.format import FORMAT, PUBLISHED_KEY

if TYPE_CHECKING:
    from crdkit.scheduling.view.format import PublishedSnapshot

__all__ = ["PublishedError", "WrongFormat", "parse_published", "read_config_map_data"]


class PublishedError(SchedulingError, ValueError):
    """The published view cannot be read; the message names the field."""


class WrongFormat(PublishedError):
    """The view is in a format this reader does not read (a newer or older scheduler)."""


# What each field may hold: "int" (not a bool), "number", "str", "bool", "list", "object",
# and a trailing "?" for "or null".
_TOP = {
    "format": "int",
    "seq": "int",
    "scheduler": "str",
    "time": "number",
    "levels": "list",
    "resource": "str",
    "gangs": "list",
    "queues": "list",
    "starts": "list",
    "omitted": "int",
}
_GANG = {
    "gang": "str",
    "api": "str",
    "state": "str",
    "queue": "str?",
    "priority": "int",
    "position": "int?",
    "pods": "int",
    "gpus": "int",
    "since": "number",
    "expected_start": "number?",
    "expected_note": "str",
    "promised": "number?",
    "reserved": "str?",
    "reason": "str",
    "never_fits": "bool",
}
_QUEUE = {
    "name": "str",
    "parent": "str?",
    "weight": "number",
    "share": "number?",
    "pending": "int",
    "admitted": "int",
    "resources": "list",
}
_QUEUE_RESOURCE = {
    "flavor": "str",
    "resource": "str",
    "nominal": "int",
    "used": "int",
    "borrowed": "int",
}
_START = {"gang": "str", "promised": "number", "actual": "number"}

_WORDS = {
    "int": "an integer",
    "number": "a finite number",
    "str": "a string",
    "bool": "true or false",
    "list": "a list",
    "object": "an object",
}


def _fits(value: object, kind: str) -> bool:
    if kind.endswith("?"):
        return value is None or _fits(value, kind[:-1])
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        # Python's JSON reads NaN and Infinity, which no time or duration can be.
        finite = not isinstance(value, float) or math.isfinite(value)
        return isinstance(value, int | float) and not isinstance(value, bool) and finite
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "list":
        return isinstance(value, list)
    return isinstance(value, dict)


def _check(value: object, fields: dict[str, str], where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PublishedError(f"{where or 'the view'}: expected an object, got {_shown(value)}")
    for name, kind in fields.items():
        path = f"{where}.{name}" if where else name
        if name not in value:
            raise PublishedError(f"{path}: missing")
        if not _fits(value[name], kind):
            word = _WORDS[kind.rstrip("?")] + (" or null" if kind.endswith("?") else "")
            raise PublishedError(f"{path}: expected {word}, got {_shown(value[name])}")
    return value


def _shown(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def parse_published(text: str | bytes) -> PublishedSnapshot:
    """The published view in ``text`` (JSON), checked: `WrongFormat` for another format,
    `PublishedError` naming the first field that is wrong."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise PublishedError(f"not JSON ({error})") from None
    if not isinstance(data, dict):
        raise PublishedError(f"expected an object, got {_shown(data)}")
    given = data.get("format")
    if given != FORMAT:
        # Said first and on its own: a scheduler of another version is the likely cause, not
        # a broken document, and which side to upgrade follows from the two numbers.
        raise WrongFormat(
            f"format: the view is in format {_shown(given)}, this crdkit reads format {FORMAT} "
            "(run a crdkit queue of the scheduler's version)"
        )
    _check(data, _TOP, "")
    for index, gang in enumerate(data["gangs"]):
        _check(gang, _GANG, f"gangs[{index}]")
        if gang["state"] not in ("waiting", "running"):
            raise PublishedError(
                f"gangs[{index}].state: expected waiting or running, got {_shown(gang['state'])}"
            )
    for index, queue in enumerate(data["queues"]):
        _check(queue, _QUEUE, f"queues[{index}]")
        for at, resource in enumerate(queue["resources"]):
            _check(resource, _QUEUE_RESOURCE, f"queues[{index}].resources[{at}]")
    for index, start in enumerate(data["starts"]):
        _check(start, _START, f"starts[{index}]")
    for index, level in enumerate(data["levels"]):
        if not isinstance(level, str):
            raise PublishedError(f"levels[{index}]: expected a string, got {_shown(level)}")
    return cast("PublishedSnapshot", data)


def read_config_map_data(data: dict[str, str] | None, where: str) -> PublishedSnapshot:
    """The view in a ConfigMap's ``data`` (``where`` names the ConfigMap in errors)."""
    text = (data or {}).get(PUBLISHED_KEY)
    if text is None:
        raise PublishedError(f"{where}: data.{PUBLISHED_KEY}: missing")
    try:
        return parse_published(text)
    except PublishedError as error:
        raise type(error)(f"{where}: data.{PUBLISHED_KEY}: {error}") from None
