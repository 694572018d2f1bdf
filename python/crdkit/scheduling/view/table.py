"""The scheduler's queue as a terminal table, in the manner of Slurm's ``squeue --start``: one
row per waiting or running gang of a published snapshot (`crdkit.scheduling.view.format`).

Pure: the snapshot, the reader's clock (``now``) and the terminal's width in, lines out.
Every column but the last (REASON) is as wide as its widest cell; REASON takes what is left
of the width and is cut with an ellipsis (or wrapped, continuation lines indented under it),
so no line is wider than the terminal unless the other columns alone leave REASON less than
`MIN_FLEX` characters: then REASON keeps `MIN_FLEX` and the lines are wider.

Widths are counted in code points: gang names are DNS names and reasons are the scheduler's
own ASCII sentences, so a double-width character is not worth a dependency on wcwidth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from crdkit.scheduling.view.format import GangView, PublishedSnapshot

__all__ = [
    "ELLIPSIS",
    "MIN_FLEX",
    "SEPARATOR",
    "duration_text",
    "flex_table",
    "queue_table",
    "select_gangs",
    "start_text",
    "truncate",
    "wrap_text",
]

ELLIPSIS = "…"
SEPARATOR = "  "
MIN_FLEX = 10
"""The narrowest the flexible last column gets, however wide the others are: a reason cut to
fewer characters says nothing."""


def truncate(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last of them an ellipsis when cut."""
    if len(text) <= width:
        return text
    if width <= 0:
        return ""
    return text[: width - 1] + ELLIPSIS


def wrap_text(text: str, width: int) -> list[str]:
    """``text`` in pieces of at most ``width`` characters that join back into ``text`` (no
    character dropped, spaces included): each piece ends after its last space when it has
    one, else a word longer than ``width`` is cut. ``[""]`` for empty text."""
    width = max(width, 1)
    pieces: list[str] = []
    rest = text
    while len(rest) > width:
        # The break goes after a space, which ends its line (where it is invisible) rather
        # than starting the next; only a word longer than the line is cut.
        cut = rest.rfind(" ", 1, width)
        end = cut + 1 if cut > 0 else width
        pieces.append(rest[:end])
        rest = rest[end:]
    pieces.append(rest)
    return pieces


def duration_text(seconds: float) -> str:
    """``45s``, ``4m12s``, ``2h03m``, ``3d04h``: the two largest units, floored."""
    whole = max(int(seconds), 0)
    days, left = divmod(whole, 86400)
    hours, left = divmod(left, 3600)
    minutes, secs = divmod(left, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def start_text(gang: GangView, *, published: float, now: float) -> str:
    """The START cell: ``running``; ``now`` when the start promised is at the snapshot's time
    or earlier (the next pass) or already past by ``now``; ``in 3m20s``; ``unknown``; ``-``
    for a gang that never fits (it has no start to expect)."""
    if gang["state"] == "running":
        return "running"
    if gang["never_fits"]:
        return "-"
    start = gang["expected_start"]
    if start is None:
        return "unknown"
    if start <= published or start <= now:
        return "now"
    return f"in {duration_text(start - now)}"


def select_gangs(
    gangs: Iterable[GangView],
    *,
    queue: str | None = None,
    state: Literal["waiting", "running"] | None = None,
) -> list[GangView]:
    """The gangs of ``queue`` and in ``state`` (either ``None``: any), in the given order."""
    return [
        g
        for g in gangs
        if (queue is None or g["queue"] == queue) and (state is None or g["state"] == state)
    ]


def _cell(text: str) -> str:
    # A line break or tab inside a cell would break the table's lines apart.
    return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " ")


@dataclass(frozen=True)
class _Layout:
    widths: list[int]
    """Of every column but the last."""
    flex: int
    """The last column's width."""


def _layout(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> _Layout:
    widths = [
        max([len(header), *(len(row[i]) for row in rows)]) for i, header in enumerate(headers[:-1])
    ]
    fixed = sum(widths) + len(SEPARATOR) * (len(headers) - 1)
    return _Layout(widths, max(width - fixed, MIN_FLEX))


def flex_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    *,
    wrap: bool = False,
    rule: bool = False,
) -> list[str]:
    """A table whose last column takes what ``width`` leaves it: truncated with an ellipsis,
    or with ``wrap`` continued on lines of their own, indented under it. ``rule`` adds a line
    of dashes under the headers, as wide as each column. A row with a cell count unlike the
    headers' is a ``ValueError`` naming it."""
    for index, row in enumerate(rows):
        if len(row) != len(headers):
            raise ValueError(f"rows[{index}]: {len(row)} cells for {len(headers)} columns")
    cleaned = [[_cell(cell) for cell in row] for row in rows]
    layout = _layout(headers, cleaned, width)
    indent = " " * (sum(layout.widths) + len(SEPARATOR) * len(layout.widths))

    def line(cells: Sequence[str], last: str) -> str:
        padded = [cell.ljust(w) for cell, w in zip(cells, layout.widths, strict=True)]
        text = SEPARATOR.join([*padded, last])
        return text.rstrip() if not last else text

    lines = [line(headers[:-1], truncate(headers[-1], layout.flex))]
    if rule:
        dashes = ["-" * w for w in layout.widths]
        longest = max([len(headers[-1]), *(len(row[-1]) for row in cleaned)])
        lines.append(line(dashes, "-" * min(longest, layout.flex)))
    for row in cleaned:
        if not wrap:
            lines.append(line(row[:-1], truncate(row[-1], layout.flex)))
            continue
        first, *more = wrap_text(row[-1], layout.flex)
        lines.append(line(row[:-1], first))
        lines.extend(indent + piece for piece in more)
    return lines


def _gang_cells(
    gang: GangView, *, published: float, now: float, queues: bool, wide: bool
) -> list[str]:
    waiting = gang["state"] == "waiting"
    placed = waiting and not gang["never_fits"]
    position = gang["position"]
    reason = gang["reason"]
    if wide and waiting and gang["expected_start"] is None and gang["expected_note"]:
        reason = (
            f"{reason}; start unknown: {gang['expected_note']}"
            if reason
            else (f"start unknown: {gang['expected_note']}")
        )
    cells = [gang["queue"] or "-"] if queues else []
    cells += [
        str(gang["priority"]),
        str(position) if placed and position is not None else "-",
        gang["gang"],
        gang["state"],
        str(gang["pods"]),
        str(gang["gpus"]),
        # A running gang's ``since`` is when it was bound: it no longer waits.
        duration_text(now - gang["since"]) if waiting else "-",
        start_text(gang, published=published, now=now),
        (gang["reserved"] or "-") if placed else "-",
    ]
    if wide:
        promised = gang["promised"]
        cells += [
            gang["api"],
            "-" if promised is None else _relative(promised, now),
            duration_text(now - gang["since"]) if not waiting else "-",
        ]
    return [*cells, reason]


def _relative(moment: float, now: float) -> str:
    if moment > now:
        return f"in {duration_text(moment - now)}"
    return f"{duration_text(now - moment)} ago"


def queue_headers(*, queues: bool, wide: bool) -> list[str]:
    """The columns `queue_table` shows."""
    headers = ["QUEUE"] if queues else []
    headers += ["PRIORITY", "POS", "GANG", "STATE", "PODS", "GPUS", "WAITED", "START", "RESERVED"]
    if wide:
        headers += ["API", "PROMISED", "RUNNING"]
    return [*headers, "REASON"]


def queue_table(
    snapshot: PublishedSnapshot,
    *,
    now: float,
    width: int,
    wrap: bool = False,
    wide: bool = False,
    gangs: Sequence[GangView] | None = None,
) -> list[str]:
    """One row per gang of ``snapshot`` (or of ``gangs``, a selection of them), in its order:
    waiting gangs in line order, then running ones; QUEUE only when any gang has a queue.

    ``wide`` adds each gang's PodGroup API, the start first promised to it (PROMISED), how long
    a running one has run, and why an unknown start is unknown. A line under the table counts
    the gangs the scheduler left out of the snapshot (``omitted``)."""
    shown = snapshot["gangs"] if gangs is None else gangs
    queues = any(g["queue"] for g in shown)
    rows = [
        _gang_cells(g, published=snapshot["time"], now=now, queues=queues, wide=wide) for g in shown
    ]
    lines = flex_table(queue_headers(queues=queues, wide=wide), rows, width, wrap=wrap)
    if snapshot["omitted"]:
        note = f"(and {snapshot['omitted']} more gangs the scheduler left out of its view)"
        lines.append(truncate(note, max(width, MIN_FLEX)))
    return lines
