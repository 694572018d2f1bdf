"""Field types of custom resources with a Kubernetes wire form (they live in crdkit.resources)."""

from crdkit.resources.durations import (
    DURATION_KEY,
    Duration,
    IntOrString,
    format_duration,
    parse_duration,
)

__all__ = ["DURATION_KEY", "Duration", "IntOrString", "format_duration", "parse_duration"]
