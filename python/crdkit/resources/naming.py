"""snake_case attribute names → Kubernetes camelCase JSON names, acronyms included.

Kubernetes spells initialisms in capitals inside a name: ``clusterIP``, ``podCIDR``,
``hostPID``, ``externalIPs``, ``targetCPUUtilizationPercentage``. pydantic's ``to_camel`` makes
``clusterIp`` of ``cluster_ip``, a field the apiserver does not know (and prunes). ``camel_case``
writes a word found in ``ACRONYMS`` (or its plural with a lower-case ``s``) in capitals, except as
the first word, which Kubernetes keeps lower case (``apiVersion``, ``uid``). Every other word is
written exactly as ``to_camel`` writes it, so names without acronyms keep their old spelling.

An explicit ``Field(alias=...)`` always wins over the generated name. A model that needs more
acronyms sets its own generator: ``model_config = ConfigDict(alias_generator=
camel_case_with("GPU"))``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["ACRONYMS", "camel_case", "camel_case_with"]

ACRONYMS: frozenset[str] = frozenset(
    {
        # The initialisms of the Kubernetes API conventions and Go's lint list that occur in
        # Kubernetes field names.
        "ACL",
        "API",
        "CIDR",
        "CPU",
        "CSI",
        "DNS",
        "FQDN",
        "GID",
        "HTTP",
        "HTTPS",
        "ID",
        "IP",
        "IPC",
        "JSON",
        "OIDC",
        "PID",
        "QPS",
        "SSH",
        "TCP",
        "TLS",
        "TTL",
        "UDP",
        "UID",
        "URI",
        "URL",
        "UUID",
    }
)
"""Words ``camel_case`` writes in capitals (matched case-insensitively)."""


def _lookup(acronyms: Iterable[str]) -> dict[str, str]:
    return {word.lower(): word for word in acronyms}


_DEFAULT = _lookup(ACRONYMS)


def _camel(name: str, table: dict[str, str]) -> str:
    words = name.split("_")
    if len(words) < 2:
        return to_camel(name)
    out = [to_camel(words[0])]
    changed = False
    for word in words[1:]:
        key = word.lower()
        if key in table:
            out.append(table[key])
            changed = True
        elif key.endswith("s") and key[:-1] in table:
            out.append(table[key[:-1]] + "s")  # externalIPs, URLs
            changed = True
        else:
            out.append(word)
    if not changed:
        return to_camel(name)
    # Words that are not acronyms are capitalised the way to_camel does it, one at a time:
    # "a_b" → "aB", and an empty word (from "a__b") stays an underscore, as in to_camel.
    text = out[0]
    for original, written in zip(words[1:], out[1:], strict=True):
        text += written if written != original else _pascal_word(original)
    return text


def _pascal_word(word: str) -> str:
    if not word:
        return "_"
    return to_camel("x_" + word)[1:]


def camel_case(name: str) -> str:
    """The Kubernetes JSON name of a snake_case attribute: ``cluster_ip`` → ``clusterIP``."""
    return _camel(name, _DEFAULT)


def camel_case_with(*acronyms: str) -> Callable[[str], str]:
    """An alias generator that also capitalises ``acronyms`` (``"GPU"`` → ``gpuCount`` but
    ``maxGPUs``), for a model's ``ConfigDict(alias_generator=...)``."""
    table = {**_DEFAULT, **_lookup(acronyms)}

    def generate(name: str) -> str:
        return _camel(name, table)

    return generate
