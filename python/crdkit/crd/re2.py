"""Whether a ``pattern`` is valid for the apiserver, which compiles it with Go's RE2 engine.

RE2 has no backtracking: look-around, back-references, possessive quantifiers, atomic
groups and conditionals do not exist there. Python's ``re`` accepts them, so a pattern that
works in pydantic could make the apiserver refuse the whole CRD; this check catches that at
generation time. The pattern must also compile in Python (pydantic validates with it).
"""

from __future__ import annotations

import re

__all__ = ["re2_problem"]

_UNSUPPORTED: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\(\?[=!]"), "look-ahead (?= / (?! is not supported by RE2"),
    (re.compile(r"\(\?<[=!]"), "look-behind (?<= / (?<! is not supported by RE2"),
    (re.compile(r"\(\?>"), "atomic groups (?> are not supported by RE2"),
    (re.compile(r"\(\?\("), "conditionals (?( are not supported by RE2"),
    (re.compile(r"\\[1-9]"), "back-references such as \\1 are not supported by RE2"),
    (re.compile(r"\(\?P=\w+\)"), "named back-references (?P=name) are not supported by RE2"),
    (re.compile(r"\\k<\w+>"), "named back-references \\k<name> are not supported by RE2"),
    (
        re.compile(r"(?<!\\)[*+?}]\+"),
        "possessive quantifiers (*+, ++, ?+) are not supported by RE2",
    ),
]


def _strip_escaped_backslashes(pattern: str) -> str:
    # "\\1" is a literal backslash then "1", not a back-reference.
    return pattern.replace("\\\\", "")


# RE2 syntax Python's re refuses: flag groups such as (?i) after the start, and \z
_RE2_ONLY = re.compile(r"\(\?[imsU]+\)|\\z")


def re2_problem(pattern: str, *, python: bool = True) -> str | None:
    """Why ``pattern`` would not compile in RE2 (or, with ``python``, in Python), or ``None``.

    Without ``python`` only RE2 counts (a hand-written CRD's pattern never meets pydantic), so
    the RE2-only syntax Python refuses is taken out before Python's compiler checks the rest.
    """
    try:
        re.compile(pattern if python else _RE2_ONLY.sub("", pattern))
    except re.error as error:
        return f"pattern {pattern!r} does not compile: {error}"
    text = _strip_escaped_backslashes(pattern)
    for regex, reason in _UNSUPPORTED:
        if regex.search(text):
            return f"pattern {pattern!r}: {reason}"
    if "\\Z" in text:
        return f"pattern {pattern!r}: \\Z is not supported by RE2 (use $ or \\z)"
    return None
