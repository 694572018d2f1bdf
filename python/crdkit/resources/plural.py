"""English plurals of kind names, for the default ``plural`` of a custom resource.

Only the last word of a CamelCase kind is pluralised (``NetworkPolicy`` → ``NetworkPolicies``).
The rules are the regular English ones plus the irregular and unchanging nouns that plausibly
end a kind name; anything else can be overridden with the ``plural=`` class keyword.
"""

from __future__ import annotations

import re

__all__ = ["pluralize"]

_IRREGULAR = {
    "person": "people",
    "child": "children",
    "man": "men",
    "woman": "women",
    "mouse": "mice",
    "goose": "geese",
    "foot": "feet",
    "tooth": "teeth",
    "ox": "oxen",
    "die": "dice",
    "matrix": "matrices",
    "vertex": "vertices",
    "appendix": "appendices",
    "criterion": "criteria",
    "phenomenon": "phenomena",
    "quiz": "quizzes",
    "leaf": "leaves",
    "knife": "knives",
    "life": "lives",
    "wife": "wives",
    "half": "halves",
    "shelf": "shelves",
    "wolf": "wolves",
    "calf": "calves",
    "self": "selves",
    "elf": "elves",
    "loaf": "loaves",
    "thief": "thieves",
    "potato": "potatoes",
    "tomato": "tomatoes",
    "hero": "heroes",
    "echo": "echoes",
    "veto": "vetoes",
    "torpedo": "torpedoes",
}

_UNCHANGING = frozenset(
    {
        "data",
        "metadata",
        "information",
        "equipment",
        "series",
        "species",
        "news",
        "sheep",
        "fish",
        "deer",
        "aircraft",
        "software",
        "hardware",
        "firmware",
        "middleware",
        "feedback",
        "knowledge",
        "research",
        "traffic",
        "evidence",
        "means",
        "chassis",
    }
)

_LAST_WORD = re.compile(r"([A-Z]?[a-z0-9]+|[A-Z]+(?![a-z]))$")


def _pluralize_word(word: str) -> str:
    lower = word.lower()
    if lower in _UNCHANGING:
        return word
    if lower in _IRREGULAR:
        plural = _IRREGULAR[lower]
        return plural.upper() if word.isupper() and len(word) > 1 else _match_case(word, plural)
    if word.isupper() and len(word) > 1:  # an acronym such as GPU or CIDR: GPUs, CIDRs
        return word + "s"
    if re.search(r"(s|x|z|ch|sh)$", lower):
        if re.search(r"[^aeiou]is$", lower):  # analysis → analyses, basis → bases
            return word[:-2] + "es"
        return word + "es"
    if re.search(r"[^aeiou]y$", lower):
        return word[:-1] + "ies"
    return word + "s"


def _match_case(original: str, plural: str) -> str:
    return plural[0].upper() + plural[1:] if original[:1].isupper() else plural


def pluralize(kind: str) -> str:
    """The plural of a kind or noun, pluralising its last CamelCase word.

    >>> pluralize("NetworkPolicy"), pluralize("IngressClass"), pluralize("Status")
    ('NetworkPolicies', 'IngressClasses', 'Statuses')
    """
    if not kind:
        raise ValueError("cannot pluralise an empty name")
    match = _LAST_WORD.search(kind)
    if match is None:  # ends in a digit or symbol run: append, as for an acronym
        return kind + "s"
    head, last = kind[: match.start()], match.group(1)
    return head + _pluralize_word(last)
