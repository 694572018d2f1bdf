"""Label and field selectors evaluated locally, with the apiserver's syntax.

The cache answers ``list(..., label_selector="app=web,tier in (a,b)")`` without a request, so
it must read selectors exactly as the apiserver does: comma-separated requirements, each one of
``key``, ``!key``, ``key=v`` (or ``==``), ``key!=v``, ``key in (a,b)``, ``key notin (a,b)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crdkit.client.errors import KubernetesError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["FieldSelector", "LabelSelector", "Requirement", "SelectorError"]


class SelectorError(KubernetesError, ValueError):
    """A selector that does not parse; the message quotes the offending part."""


_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_KEY_RE = re.compile(rf"^{_KEY}$")
_VALUE_RE = re.compile(rf"^{_VALUE}$")
_SET_RE = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_EQ_RE = re.compile(r"^(?P<key>[^=!\s]+)\s*(?P<op>==|=|!=)\s*(?P<value>\S*)$")


@dataclass(frozen=True)
class Requirement:
    """One term: ``operator`` is one of exists, !, =, !=, in, notin."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator in ("=", "in"):
            return present and labels[self.key] in self.values
        # != and notin also match objects without the label, as in Kubernetes
        return not present or labels[self.key] not in self.values


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError(f"unbalanced ')' in selector {text!r}")
        if char == "," and depth == 0:
            terms.append(current.strip())
            current = ""
        else:
            current += char
    if depth != 0:
        raise SelectorError(f"unbalanced '(' in selector {text!r}")
    terms.append(current.strip())
    return terms


def _check_key(key: str, term: str) -> str:
    if not _KEY_RE.match(key) or len(key) > 316:
        raise SelectorError(f"invalid label key {key!r} in {term!r}")
    return key


def _check_value(value: str, term: str) -> str:
    if len(value) > 63 or not _VALUE_RE.match(value):
        raise SelectorError(f"invalid label value {value!r} in {term!r}")
    return value


def _parse_term(term: str) -> Requirement:
    if not term:
        raise SelectorError("empty requirement in selector")
    if match := _SET_RE.match(term):
        values = [v.strip() for v in match["values"].split(",")]
        if values == [""]:
            raise SelectorError(f"{match['op']} needs at least one value: {term!r}")
        return Requirement(
            _check_key(match["key"], term),
            match["op"],
            frozenset(_check_value(v, term) for v in values),
        )
    if match := _EQ_RE.match(term):
        operator = "!=" if match["op"] == "!=" else "="
        value = _check_value(match["value"], term)
        return Requirement(_check_key(match["key"], term), operator, frozenset([value]))
    if term.startswith("!"):
        return Requirement(_check_key(term[1:].strip(), term), "!")
    if any(c in term for c in "<>() "):
        raise SelectorError(f"unsupported selector requirement {term!r}")
    return Requirement(_check_key(term, term), "exists")


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> LabelSelector:
        if text is None or not text.strip():
            return cls()
        return cls(tuple(_parse_term(term) for term in _split_terms(text)))

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(requirement.matches(labels) for requirement in self.requirements)


@dataclass(frozen=True)
class FieldSelector:
    """A parsed field selector: ``path=value`` / ``path==value`` / ``path!=value`` terms.

    Only equality exists for fields; which paths work is up to whoever evaluates them.
    """

    terms: tuple[tuple[str, str, str], ...] = ()  # (path, operator "=" or "!=", value)

    @classmethod
    def parse(cls, text: str | None) -> FieldSelector:
        if text is None or not text.strip():
            return cls()
        terms = []
        for term in text.split(","):
            match = _EQ_RE.match(term.strip())
            if match is None:
                raise SelectorError(f"invalid field selector requirement {term!r}")
            operator = "!=" if match["op"] == "!=" else "="
            terms.append((match["key"], operator, match["value"]))
        return cls(tuple(terms))
