"""What a faulted run is judged by, against the fault-free run of the same scenario.

1. its normalised end state is the fault-free run's;
2. its history keeps the invariants a crash is known to break: no object deleted and made
   again under the same key (more often than without the fault), no owned object orphaned, no
   more live children of one owner (of one kind, under one normalised name) than the
   fault-free run ever had at once; and the user's own invariants;
3. it came to rest within the bound (checked by the explorer while it runs).

Every check returns the problems it found as sentences; none means it holds.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from crdkit.testing.crashes.history import History
from crdkit.testing.crashes.normalise import (
    generated_names,
    normalise_state,
)

__all__ = [
    "EndView",
    "Invariant",
    "check_run",
    "duplicates",
    "end_state_differences",
    "orphans",
    "peak_children",
    "recreations",
    "user_invariants",
]

Invariant = Callable[[History], Iterable[str] | None]
"""A user's invariant: the history of one run → the violations found (none, or ``None``)."""

EndView = Callable[[dict[str, Any]], dict[str, Any]]
"""What of an end-state object a scenario compares: the object → the part that counts."""

_MAX_SHOWN = 6


def _describe(text: str) -> str:
    obj = json.loads(text)
    metadata = obj.get("metadata") or {}
    name = metadata.get("name", "?")
    return f"{obj.get('kind', '?')} {name}: {text}"


def end_state_differences(
    expected: History, actual: History, view: EndView | None = None
) -> list[str]:
    """How ``actual``'s normalised end state (each object seen through ``view``) differs from
    ``expected``'s."""
    want = normalise_state(_seen(expected.end_state, view), namespace=expected.namespace)
    got = normalise_state(_seen(actual.end_state, view), namespace=actual.namespace)
    if want == got:
        return []
    missing = list((want - got).elements())
    extra = list((got - want).elements())
    lines = ["the end state differs from the fault-free run's:"]
    lines += [f"  missing {_describe(text)}" for text in missing[:_MAX_SHOWN]]
    lines += [f"  extra   {_describe(text)}" for text in extra[:_MAX_SHOWN]]
    hidden = len(missing) + len(extra) - 2 * _MAX_SHOWN
    if hidden > 0:
        lines.append(f"  ... and {hidden} more")
    return ["\n".join(lines)]


def _seen(objects: list[dict[str, Any]], view: EndView | None) -> list[dict[str, Any]]:
    if view is None:
        return objects
    return [view(json.loads(json.dumps(obj))) for obj in objects]  # a copy the view may change


def _normal_key(obj: dict[str, Any], names: dict[str, str]) -> str:
    metadata = obj.get("metadata") or {}
    name = str(metadata.get("name"))
    return f"{obj.get('kind', '?')} {names.get(name, name)}"


def _recreated_counts(history: History) -> Counter[str]:
    names = generated_names(event.obj for event in history.events)
    uids: dict[tuple[str, str | None, str], str] = {}
    deleted: set[tuple[str, str | None, str]] = set()
    gone: set[str] = set()  # the uids of the objects deleted so far
    counts: Counter[str] = Counter()
    for event in history.events:
        if event.type == "DELETED":
            deleted.add(event.key)
            gone.add(event.uid)
            continue
        previous = uids.get(event.key)
        owner = _controller(event.obj)
        # Made again for an owner already gone (a reconcile that read its owner just before
        # the owner's deletion): garbage the collector removes, carrying nothing to lose.
        dangling = owner is not None and str(owner.get("uid")) in gone
        if previous is not None and previous != event.uid and event.key in deleted and not dangling:
            counts[_normal_key(event.obj, names)] += 1
        uids[event.key] = event.uid
    return counts


def recreations(expected: History, actual: History, recreatable: Collection[str] = ()) -> list[str]:
    """Objects deleted and created again under the same key more often than without the
    fault (a delete-and-recreate loses what the object carried: its uid, its status, what
    others knew of it); but objects of the kinds in ``recreatable``."""
    want, got = _recreated_counts(expected), _recreated_counts(actual)
    return [
        f"{key} was deleted and created again {count} time(s) (the fault-free run: {want[key]})"
        for key, count in sorted(got.items())
        if count > want[key] and key.split(" ", 1)[0] not in recreatable
    ]


def _controller(obj: dict[str, Any]) -> dict[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def orphans(actual: History) -> list[str]:
    """Live objects whose controller is gone while their owner's key lives on under another
    uid, or whose controller never existed: no garbage collector will ever take them."""
    live = actual.end_state
    live_uids = {str((obj.get("metadata") or {}).get("uid")) for obj in live}
    live_owner_keys = {
        (obj.get("kind"), (obj.get("metadata") or {}).get("name")): obj for obj in live
    }
    kinds = {event.kind for event in actual.events}
    ever = actual.uids()
    found = []
    for obj in live:
        ref = _controller(obj)
        if ref is None or ref.get("kind") not in kinds or str(ref.get("uid")) in live_uids:
            continue
        owner_key = (ref.get("kind"), ref.get("name"))
        label = f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')}"
        if owner_key in live_owner_keys:
            found.append(
                f"{label} is orphaned: its controller {ref.get('kind')} {ref.get('name')} "
                f"lives on with another uid than {ref.get('uid')}"
            )
        elif str(ref.get("uid")) not in ever:
            found.append(
                f"{label} is orphaned: its controller {ref.get('kind')} {ref.get('name')} "
                f"(uid {ref.get('uid')}) never existed"
            )
    return found


def peak_children(history: History) -> Counter[str]:
    """For each owner, child kind and normalised child name: the most such children that
    were alive at once during the run."""
    names = generated_names(event.obj for event in history.events)
    live: dict[tuple[str, str | None, str], dict[str, Any]] = {}
    peak: Counter[str] = Counter()
    for event in history.events:
        if event.type == "DELETED":
            live.pop(event.key, None)
            continue
        live[event.key] = event.obj
        ref = _controller(event.obj)
        if ref is None:
            continue
        group = (
            f"{event.kind} {names.get(event.key[2], event.key[2])} "
            f"of {ref.get('kind')} {names.get(str(ref.get('name')), ref.get('name'))}"
        )
        count = 0
        for obj in live.values():
            other = _controller(obj)
            if other is None or other.get("uid") != ref.get("uid"):
                continue
            name = str((obj.get("metadata") or {}).get("name"))
            if obj.get("kind") == event.kind and names.get(name, name) == names.get(
                event.key[2], event.key[2]
            ):
                count += 1
        peak[group] = max(peak[group], count)
    return peak


def duplicates(expected: History, actual: History) -> list[str]:
    """More live children of one owner (kind, normalised name) than the fault-free run had."""
    want, got = peak_children(expected), peak_children(actual)
    return [
        f"duplicate children: {count} live at once of {group} (the fault-free run: {want[group]})"
        for group, count in sorted(got.items())
        if count > max(want[group], 1)
    ]


def user_invariants(history: History, invariants: Sequence[Invariant]) -> list[str]:
    found: list[str] = []
    for invariant in invariants:
        name = getattr(invariant, "__name__", repr(invariant))
        found += [f"invariant {name}: {problem}" for problem in invariant(history) or ()]
    return found


def check_run(
    expected: History,
    actual: History,
    invariants: Sequence[Invariant],
    *,
    recreatable: Collection[str] = (),
    end_view: EndView | None = None,
) -> list[str]:
    """Every problem of ``actual`` against ``expected`` (the fault-free run); objects of the
    kinds in ``recreatable`` may be deleted and made again; ``end_view``: what of each
    end-state object is compared."""
    return [
        *end_state_differences(expected, actual, end_view),
        *recreations(expected, actual, recreatable),
        *orphans(actual),
        *duplicates(expected, actual),
        *user_invariants(actual, invariants),
    ]
