"""String formats: the ones the apiserver knows, and Python checks mirroring its rules.

The apiserver checks formats with go-openapi's strfmt. The checks here follow its rules for
the formats operators commonly use, in ASCII only, so Python is at most stricter than the
apiserver, never laxer; ``byte`` and ``duration`` follow it exactly.
"""

from __future__ import annotations

import ipaddress
import re
import uuid
from typing import TYPE_CHECKING

from crdkit.resources.durations import apiserver_parse_duration
from crdkit.resources.scalars import is_base64

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FORMAT_CHECKS", "KNOWN_FORMATS"]

_HOSTNAME = re.compile(
    r"([a-zA-Z0-9](-?[a-zA-Z0-9]{0,62})?"
    r"|([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,63})"
)
_CIDR_PREFIX = re.compile(r".+/(0|[1-9][0-9]{0,2})")


def _is_hostname(value: str) -> bool:
    # A single label may be digits; a dotted name must end in a top-level label of letters.
    return len(value) <= 255 and _HOSTNAME.fullmatch(value) is not None


def _parses(parse: Callable[[str], object]) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            parse(value)
        except ValueError:
            return False
        return True

    return check


FORMAT_CHECKS: dict[str, Callable[[str], bool]] = {
    "hostname": _is_hostname,
    "ipv4": _parses(ipaddress.IPv4Address),
    "ipv6": _parses(ipaddress.IPv6Address),
    "cidr": lambda v: (
        _CIDR_PREFIX.fullmatch(v) is not None
        and _parses(lambda c: ipaddress.ip_network(c, strict=False))(v)
    ),
    "uuid": lambda v: (
        bool(
            re.fullmatch(
                r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}",
                v,
            )
        )
        and _parses(uuid.UUID)(v)
    ),
    "mac": lambda v: bool(re.fullmatch(r"([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}", v)),
    # These two follow go-openapi exactly (see crdkit.resources.scalars and .durations).
    "byte": is_base64,
    "duration": lambda v: apiserver_parse_duration(v) is not None,
}

KNOWN_FORMATS = frozenset(
    {
        "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
        "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor",
        "rgbcolor", "byte", "password", "date", "duration", "datetime", "date-time", "int32",
        "int64", "float", "double",
    }
)  # fmt: skip
