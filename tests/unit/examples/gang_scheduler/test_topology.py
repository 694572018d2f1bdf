from __future__ import annotations

import pytest
from examples.gang_scheduler.topology import DEFAULT_TIER_LABELS, TopologyConfig


def test_defaults_are_leaf_spine_zone_and_placer_levels_are_widest_first() -> None:
    topology = TopologyConfig()
    assert topology.tier_labels == DEFAULT_TIER_LABELS
    assert topology.tiers == 3
    assert topology.placer_levels == [
        "topology.kubernetes.io/zone",
        "topology.crdkit.io/spine",
        "topology.crdkit.io/leaf",
    ]


def test_label_for_tier_counts_from_one_at_the_leaf() -> None:
    topology = TopologyConfig(("rack", "block"))
    assert topology.label_for_tier(1) == "rack"
    assert topology.label_for_tier(2) == "block"
    assert topology.tier_of_label("block") == 2


@pytest.mark.parametrize("tier", [0, 4, -1])
def test_a_tier_outside_the_topology_names_the_field(tier: int) -> None:
    with pytest.raises(
        ValueError, match=r"spec\.x: tier .* does not exist \(this cluster has tiers 1\.\.3\)"
    ):
        TopologyConfig().label_for_tier(tier, "spec.x")


def test_from_flags_keeps_order_and_falls_back_to_defaults() -> None:
    assert TopologyConfig.from_flags(["a/leaf", "a/spine"]).tier_labels == ("a/leaf", "a/spine")
    assert TopologyConfig.from_flags([]) == TopologyConfig()


def test_config_map_round_trip() -> None:
    topology = TopologyConfig(("example.com/tor", "example.com/spine", "example.com/pod"))
    data = topology.to_config_map_data()
    assert data == {
        "tier1": "example.com/tor",
        "tier2": "example.com/spine",
        "tier3": "example.com/pod",
    }
    assert TopologyConfig.from_config_map_data(data) == topology


def test_config_map_keys_are_read_by_number_not_by_order() -> None:
    data = {"tier2": "b", "tier1": "a", "tier10": "j"}
    data.update({f"tier{n}": f"l{n}" for n in range(3, 10)})
    topology = TopologyConfig.from_config_map_data(data)
    assert topology.tier_labels[:2] == ("a", "b")
    assert topology.tier_labels[-1] == "j"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, r"cm data: no tier1"),
        ({"tier1": "a", "tier3": "c"}, r"cm data\.tier2: missing"),
        ({"tier1": "a", "leaf": "b"}, r"cm data\.leaf: unknown key"),
        ({"tier0": "a"}, r"cm data\.tier0: unknown key"),
        (
            {"tier1": "a", "tier2": "a"},
            r"cm data: tier_labels\[1\] \(tier 2\): label 'a' is used by two tiers",
        ),
        (
            {"tier1": "not a label"},
            r"cm data: tier_labels\[0\] \(tier 1\): 'not a label' is not a valid label key",
        ),
    ],
)
def test_bad_config_map_data_names_the_key(data: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TopologyConfig.from_config_map_data(data, source="cm")


@pytest.mark.parametrize(
    "key",
    ["", "-a", "a-", "UPPER.example.com/x", "a/" + "x" * 64, "a//b", "/name", "x" * 254 + "/y"],
)
def test_invalid_label_keys_are_refused(key: str) -> None:
    with pytest.raises(ValueError, match=r"tier_labels\[0\] \(tier 1\)"):
        TopologyConfig((key,))


@pytest.mark.parametrize("key", ["leaf", "topology.kubernetes.io/zone", "a.b-c/x_y.z", "x" * 63])
def test_valid_label_keys_are_accepted(key: str) -> None:
    assert TopologyConfig((key,)).tier_labels == (key,)


def test_no_tiers_is_an_error() -> None:
    with pytest.raises(ValueError, match="tier_labels: at least one"):
        TopologyConfig(())
