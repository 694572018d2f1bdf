from __future__ import annotations

from pathlib import Path

import pytest
from examples.gang_scheduler.picture import (
    FREE_COLOUR,
    GPU_SIZE,
    PALETTE,
    JobUsage,
    NodeCell,
    gpu_grid,
    gpu_owners,
    job_colours,
    render,
)
from PIL import Image

NODES = [
    NodeCell(
        f"n{zone}{leaf}{index}", f"z{zone}", f"z{zone}-s0", f"z{zone}-s0-l{leaf}", 8, rdma=leaf == 0
    )
    for zone in range(2)
    for leaf in range(2)
    for index in range(4)
]


def _hex(colour: str) -> tuple[int, int, int]:
    return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))


def test_colours_are_stable_and_cycle() -> None:
    jobs = [f"j{i}" for i in range(len(PALETTE) + 1)]
    colours = job_colours(jobs)
    assert colours["j0"] == PALETTE[0]
    assert colours[f"j{len(PALETTE)}"] == PALETTE[0]
    assert len(set(list(colours.values())[: len(PALETTE)])) == len(PALETTE)


def test_gpu_grid_and_owners() -> None:
    assert gpu_grid(8) == (4, 2)
    assert gpu_grid(4) == (4, 1)
    node = NODES[0]
    assert gpu_owners(node, [JobUsage("a", 3), JobUsage("b", 4)]) == ["a"] * 3 + ["b"] * 4 + [None]
    with pytest.raises(ValueError, match=r"usage\[n000\]: 9 GPUs used but the node has 8"):
        gpu_owners(node, [JobUsage("a", 9)])


def test_render_draws_each_gpu_in_its_jobs_colour(tmp_path: Path) -> None:
    usage = {node.name: [JobUsage("big", 8)] for node in NODES[:4]}
    usage[NODES[8].name] = [JobUsage("small", 2)]
    path = render(NODES, usage, ["big", "small"], tmp_path / "out" / "topology.png", "test")
    with Image.open(path) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
        assert colours is not None
        counts = {colour: count for count, colour in colours}
    gpu = GPU_SIZE * GPU_SIZE
    swatch = 9 * 9  # the legend square's inside
    assert counts[_hex(PALETTE[0])] == 32 * gpu + swatch
    assert counts[_hex(PALETTE[1])] == 2 * gpu + swatch
    assert counts[_hex(FREE_COLOUR)] == (len(NODES) * 8 - 34) * gpu + swatch


@pytest.mark.parametrize(
    ("usage", "jobs", "message"),
    [
        ({"nope": [JobUsage("a", 1)]}, ["a"], r"usage\[nope\]: no such node"),
        ({"n000": [JobUsage("a", 1)]}, [], r"usage\[n000\]: job a is missing from jobs"),
    ],
)
def test_render_rejects_inconsistent_input(
    tmp_path: Path, usage: dict[str, list[JobUsage]], jobs: list[str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        render(NODES, usage, jobs, tmp_path / "x.png", "t")


def test_render_needs_nodes(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="nodes: nothing to draw"):
        render([], {}, [], tmp_path / "x.png", "t")
