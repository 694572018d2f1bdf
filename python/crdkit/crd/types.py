"""Field types of custom resources with a Kubernetes wire form (they live in crdkit.resources)."""

from crdkit.resources.durations import (
    DURATION_KEY,
    Duration,
    IntOrString,
    format_duration,
    parse_duration,
)
from crdkit.resources.scalars import BYTES_KEY, Bytes, Int32, Int64

__all__ = [
    "BYTES_KEY",
    "DURATION_KEY",
    "Bytes",
    "Duration",
    "Int32",
    "Int64",
    "IntOrString",
    "format_duration",
    "parse_duration",
]
