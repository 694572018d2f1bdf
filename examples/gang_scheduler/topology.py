"""Which node labels form the network-topology tiers, from command-line flags or a ConfigMap.

Volcano numbers network tiers from the nodes upwards: tier 1 is the domain whose members talk
fastest (the leaf switch), tier 2 the spine above it, tier 3 the zone. A job's
``networkTopology.highestTierAllowed`` names the widest tier its pods may spread over. The gang
scheduler wants the same labels the other way round (widest first) as its ``levels``; this
module owns that translation.

The ConfigMap form keeps one label key per tier::

    data:
      tier1: topology.crdkit.io/leaf
      tier2: topology.crdkit.io/spine
      tier3: topology.kubernetes.io/zone
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

DEFAULT_TIER_LABELS: tuple[str, ...] = (
    "topology.crdkit.io/leaf",
    "topology.crdkit.io/spine",
    "topology.kubernetes.io/zone",
)
"""Tier 1 (leaf switch), tier 2 (spine), tier 3 (zone): the labels the simulated cluster carries."""

CONFIG_MAP_KEY_PATTERN = re.compile(r"^tier([1-9][0-9]*)$")

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
_LABEL_KEY = re.compile(rf"^(({_DNS_LABEL})(\.{_DNS_LABEL})*/)?{_NAME}$")


@dataclass(frozen=True)
class TopologyConfig:
    """The node label keys of each network tier, tier 1 (narrowest) first."""

    tier_labels: tuple[str, ...] = DEFAULT_TIER_LABELS

    def __post_init__(self) -> None:
        if not self.tier_labels:
            raise ValueError("tier_labels: at least one tier label is required")
        seen: set[str] = set()
        for index, key in enumerate(self.tier_labels):
            field = f"tier_labels[{index}] (tier {index + 1})"
            validate_label_key(key, field)
            if key in seen:
                raise ValueError(f"{field}: label {key!r} is used by two tiers")
            seen.add(key)

    @property
    def tiers(self) -> int:
        """How many tiers there are."""
        return len(self.tier_labels)

    @property
    def placer_levels(self) -> list[str]:
        """The labels widest first, the order of the scheduler's (and placer's) ``levels``."""
        return list(reversed(self.tier_labels))

    def label_for_tier(self, tier: int, field: str = "highestTierAllowed") -> str:
        """The label key of ``tier`` (1-based); a missing tier is an error naming ``field``."""
        if not 1 <= tier <= self.tiers:
            raise ValueError(
                f"{field}: tier {tier} does not exist (this cluster has tiers 1..{self.tiers})"
            )
        return self.tier_labels[tier - 1]

    def tier_of_label(self, label: str) -> int:
        """The tier number of a label key (1-based)."""
        try:
            return self.tier_labels.index(label) + 1
        except ValueError:
            raise ValueError(f"label {label!r} is not a tier of this topology") from None

    def to_config_map_data(self) -> dict[str, str]:
        """The ConfigMap ``data`` that :meth:`from_config_map_data` reads back."""
        return {f"tier{index + 1}": key for index, key in enumerate(self.tier_labels)}

    @classmethod
    def from_flags(cls, tier_labels: Sequence[str]) -> TopologyConfig:
        """From repeated ``--tier-label`` flags, tier 1 first; none given means the defaults."""
        return cls(tuple(tier_labels)) if tier_labels else cls()

    @classmethod
    def from_config_map_data(
        cls, data: Mapping[str, str], source: str = "ConfigMap"
    ) -> TopologyConfig:
        """From a ConfigMap's ``data``: keys ``tier1``, ``tier2``, ... numbered without gaps."""
        by_tier: dict[int, str] = {}
        for key, value in data.items():
            match = CONFIG_MAP_KEY_PATTERN.match(key)
            if match is None:
                raise ValueError(f"{source} data.{key}: unknown key (expected tier1, tier2, ...)")
            if not isinstance(value, str):
                raise ValueError(f"{source} data.{key}: must be a label key string")
            by_tier[int(match.group(1))] = value.strip()
        if not by_tier:
            raise ValueError(f"{source} data: no tier1, tier2, ... keys")
        expected = list(range(1, len(by_tier) + 1))
        if sorted(by_tier) != expected:
            missing = sorted(set(expected) - set(by_tier))
            raise ValueError(
                f"{source} data.tier{missing[0]}: missing (tiers must be numbered 1..N)"
            )
        labels = tuple(by_tier[tier] for tier in expected)
        try:
            return cls(labels)
        except ValueError as error:
            raise ValueError(f"{source} data: {error}") from None


def validate_label_key(key: str, field: str) -> None:
    """Raise ``ValueError`` naming ``field`` unless ``key`` is a valid Kubernetes label key."""
    if not isinstance(key, str) or not key:
        raise ValueError(f"{field}: a label key must be a non-empty string")
    prefix, _, name = key.rpartition("/")
    if len(prefix) > 253 or len(name) > 63 or _LABEL_KEY.match(key) is None:
        raise ValueError(
            f"{field}: {key!r} is not a valid label key "
            "(optional DNS-subdomain prefix and '/', then up to 63 alphanumerics, '-', '_', '.')"
        )
