"""What changed between two snapshots, so an open page is sent kilobytes, not the cluster.

At 1,024 nodes a full `Snapshot` is a few hundred kilobytes, and the scheduler makes one a
second while anything moves; a page that received it whole each time would cost the scheduler
the encoding and the browser a re-render of every node. A `Delta` carries only:

- ``nodes``: the `NodeView` of each node whose view changed (the page updates those cells);
- ``gangs``, ``queues``: the lists whole, when they changed at all (they are short, and a
  gang's place in line is what changes most, which is most of the list anyway);
- ``timeline``, ``starts``: `Slide` — the points dropped from the front of the bounded window
  and the ones added at its end;
- ``seq``, ``time``, ``omitted``: always.

`delta` gives ``None`` when the change is not one a delta can say (another node set or order,
other levels, resource or format): the sender then sends the snapshot whole. `apply` is the
reader's side, and ``assets/app.js`` does the same in the browser; the tests check that
applying each delta to the first snapshot gives every later one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, TypeVar

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.scheduling.view.format import GangView, NodeView, QueueView, Snapshot

__all__ = ["Delta", "Slide", "apply", "delta"]

T = TypeVar("T")


class Slide(TypedDict):
    """A bounded, append-only list moved on: drop ``drop`` items from its front, then append
    ``add``."""

    drop: int
    add: list[Any]


class Delta(TypedDict):
    seq: int
    time: float
    omitted: int
    nodes: NotRequired[list[NodeView]]
    gangs: NotRequired[list[GangView]]
    queues: NotRequired[list[QueueView]]
    timeline: NotRequired[Slide]
    starts: NotRequired[Slide]


def delta(old: Snapshot, new: Snapshot) -> Delta | None:
    """What turns ``old`` into ``new``; ``None`` when only the whole of ``new`` can."""
    # What a delta cannot say: a change of any of these is sent as the snapshot whole.
    if (old["format"], old["scheduler"], old["levels"], old["resource"]) != (
        new["format"],
        new["scheduler"],
        new["levels"],
        new["resource"],
    ):
        return None
    old_nodes, new_nodes = old["nodes"], new["nodes"]
    if len(old_nodes) != len(new_nodes) or any(
        a["name"] != b["name"] for a, b in zip(old_nodes, new_nodes, strict=True)
    ):
        return None
    out: Delta = {"seq": new["seq"], "time": new["time"], "omitted": new["omitted"]}
    changed = [b for a, b in zip(old_nodes, new_nodes, strict=True) if a != b]
    if changed:
        out["nodes"] = changed
    if old["gangs"] != new["gangs"]:
        out["gangs"] = new["gangs"]
    if old["queues"] != new["queues"]:
        out["queues"] = new["queues"]
    if old["timeline"] != new["timeline"]:
        out["timeline"] = slide(old["timeline"], new["timeline"])
    if old["starts"] != new["starts"]:
        out["starts"] = slide(old["starts"], new["starts"])
    return out


def slide(old: Sequence[T], new: Sequence[T]) -> Slide:
    """The fewest items to drop from ``old``'s front so that what is left starts ``new``, and
    the rest of ``new``; a list rewritten otherwise is dropped whole and sent whole."""
    for drop in range(len(old) + 1):
        kept = len(old) - drop
        # Points carry their time, so the first candidate is nearly always the answer.
        if kept <= len(new) and (kept == 0 or old[drop] == new[0]) and old[drop:] == new[:kept]:
            return {"drop": drop, "add": list(new[kept:])}
    raise AssertionError("unreachable: dropping everything always matches")


def apply(snapshot: Snapshot, change: Delta) -> Snapshot:
    """``snapshot`` moved on by ``change`` (a new snapshot; the given one is not touched)."""
    out: Snapshot = {**snapshot}
    out["seq"], out["time"], out["omitted"] = change["seq"], change["time"], change["omitted"]
    if "nodes" in change:
        by_name = {node["name"]: node for node in change["nodes"]}
        out["nodes"] = [by_name.get(node["name"], node) for node in snapshot["nodes"]]
    if "gangs" in change:
        out["gangs"] = change["gangs"]
    if "queues" in change:
        out["queues"] = change["queues"]
    if "timeline" in change:
        out["timeline"] = _moved(snapshot["timeline"], change["timeline"])
    if "starts" in change:
        out["starts"] = _moved(snapshot["starts"], change["starts"])
    return out


def _moved(items: list[T], moved: Slide) -> list[T]:
    return [*items[moved["drop"] :], *moved["add"]]
