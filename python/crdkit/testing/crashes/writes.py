"""Numbering the operator's writes: which mutating call is "the k-th write", in any run.

A write is named by what it does, not by when: its verb, its resource (and subresource), its
object's key and how many times the operator already made that same call. Two runs of one
scenario then name the same write the same way even if unrelated calls interleave
differently (on a real apiserver they do), and a fault planned on the fault-free run's k-th
write finds its target in the faulted run by that identity.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from crdkit.testing.crashes.normalise import NAMESPACE_PLACEHOLDER

__all__ = ["MUTATING_METHODS", "Write", "WriteLog", "WriteTarget", "parse_path"]

MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass(frozen=True)
class WriteTarget:
    """What a request addresses: ``resource`` is ``plural[.group]``, ``name`` is ``None`` for a
    collection."""

    resource: str
    namespace: str | None
    name: str | None
    subresource: str | None


def parse_path(path: str) -> WriteTarget | None:
    """The resource a REST path addresses, or ``None`` for discovery and other paths."""
    parts = [part for part in path.split("?")[0].split("/") if part]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return None
    namespace: str | None = None
    # /namespaces/<ns>/<plural>...: namespaced; /namespaces/<name> alone is a Namespace.
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    plural = rest[0]
    resource = f"{plural}.{group}" if group else plural
    name = rest[1] if len(rest) >= 2 else None
    subresource = "/".join(rest[2:]) or None
    return WriteTarget(resource, namespace, name, subresource)


def _created_name(body: bytes | None) -> str:
    """The name a create asks for; ``generateName*`` when the server will choose it, so the
    write is named alike in every run."""
    try:
        metadata = json.loads(body or b"{}").get("metadata") or {}
    except (ValueError, AttributeError):
        return "?"
    name = metadata.get("name")
    if isinstance(name, str) and name:
        return name
    generate = metadata.get("generateName")
    return f"{generate}*" if isinstance(generate, str) else "?"


@dataclass(frozen=True)
class Write:
    """One mutating API call of the operator: the ``index``-th (from 1) of its run, the
    ``occurrence``-th (from 1) of its identity (verb, resource, key)."""

    index: int
    verb: str
    resource: str
    namespace: str | None
    name: str
    occurrence: int
    stage: int = 0
    """0 for the operator as first started, 1 for the one started after a crash."""
    run_namespace: str | None = field(default=None, compare=False)
    """The run's own namespace (a real apiserver gives every run another one): named
    ``<namespace>`` in the identity, so that the write is named alike in every run."""

    @property
    def identity(self) -> tuple[str, str, str | None, str, int]:
        """What names this write across runs (its index may differ between them)."""
        namespace = self.namespace
        if namespace is not None and namespace == self.run_namespace:
            namespace = NAMESPACE_PLACEHOLDER
        return (self.verb, self.resource, namespace, self.name, self.occurrence)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def __str__(self) -> str:
        again = f" (#{self.occurrence})" if self.occurrence > 1 else ""
        return f"{self.verb} {self.resource} {self.key}{again}"


@dataclass
class WriteLog:
    """The writes of one run, in order, with what the server answered to each."""

    writes: list[Write] = field(default_factory=list)
    answers: dict[int, dict[str, Any] | None] = field(default_factory=dict)
    """Index → the answered object (``None``: the write failed or its answer was lost)."""
    _seen: dict[tuple[str, str, str | None, str], int] = field(default_factory=dict)
    namespace: str | None = None
    """The run's own namespace (see `Write.run_namespace`)."""

    def number(self, method: str, path: str, body: bytes | None, *, stage: int = 0) -> Write:
        """Name the write ``method path`` is about to make, and log it."""
        target = parse_path(path)
        verb = _VERBS.get(method.upper(), method.lower())
        if target is None:
            resource, namespace, name = path, None, "?"
        else:
            namespace = target.namespace
            resource = target.resource
            if target.subresource:
                resource = f"{resource}/{target.subresource}"
            if target.name is None:
                name = _created_name(body) if verb == "create" else "*"
                if verb == "delete":
                    verb = "deletecollection"
            else:
                name = target.name
        identity = (verb, resource, namespace, name)
        occurrence = self._seen.get(identity, 0) + 1
        self._seen[identity] = occurrence
        write = Write(
            len(self.writes) + 1,
            verb,
            resource,
            namespace,
            name,
            occurrence,
            stage,
            run_namespace=self.namespace,
        )
        self.writes.append(write)
        return write

    def answered(self, write: Write, answer: bytes | None) -> None:
        obj: dict[str, Any] | None = None
        if answer is not None:
            try:
                parsed = json.loads(answer)
            except ValueError:
                parsed = None
            obj = parsed if isinstance(parsed, dict) else None
        self.answers[write.index] = obj

    def created_uids(self) -> set[str]:
        """The uids of the objects the operator's creates made (as answered)."""
        uids: set[str] = set()
        for write in self.writes:
            answer = self.answers.get(write.index)
            if write.verb == "create" and answer:
                uid = (answer.get("metadata") or {}).get("uid")
                if isinstance(uid, str):
                    uids.add(uid)
        return uids
