"""A PNG picture of the cluster's topology with every GPU coloured by the job that holds it.

Zones sit side by side; inside a zone, spines and then leaf switches are stacked; a leaf is a row of
node boxes, and a node box is a grid of GPU squares. A job's colour is the same on every GPU it
holds, so one glance shows whether a gang stayed under one leaf. The picture is drawn from the data
given (nodes and their usage as the API reports them), never from what the scheduler intended.

Pillow is an optional dependency (the ``examples`` extra); it is imported only when drawing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

FREE_COLOUR = "#e4e7eb"
NODE_OUTLINE = "#8a939e"
TEXT_COLOUR = "#1f2933"
RDMA_COLOUR = "#7b3fa0"
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#393b79", "#ad494a", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
)  # fmt: skip
"""Distinct colours for up to 16 jobs; later jobs reuse them in order."""

GPU_SIZE = 7
GPU_GAP = 1
NODE_GAP = 4
LEAF_LABEL_WIDTH = 150
ROW_GAP = 6
SPINE_GAP = 12
ZONE_GAP = 28
MARGIN = 16
TITLE_HEIGHT = 30
HEADER_HEIGHT = 20
LEGEND_ROW = 18


@dataclass(frozen=True)
class NodeCell:
    """One node as the picture needs it: where it sits and how many GPUs it has."""

    name: str
    zone: str
    spine: str
    leaf: str
    gpus: int
    rdma: bool = False


@dataclass(frozen=True)
class JobUsage:
    """GPUs a job holds on one node."""

    job: str
    gpus: int


def job_colours(jobs: Sequence[str]) -> dict[str, str]:
    """A colour per job, in the order given, cycling through the palette."""
    return {job: PALETTE[index % len(PALETTE)] for index, job in enumerate(jobs)}


def gpu_grid(gpus: int) -> tuple[int, int]:
    """Columns and rows of a node's GPU squares: two rows when there are more than four."""
    rows = 1 if gpus <= 4 else 2
    return math.ceil(gpus / rows), rows


def gpu_owners(node: NodeCell, usage: Sequence[JobUsage]) -> list[str | None]:
    """Which job owns each GPU square of ``node`` (None for free); over-use is an error."""
    owners: list[str | None] = []
    for entry in usage:
        if entry.gpus < 0:
            raise ValueError(f"usage[{node.name}]: job {entry.job} holds a negative GPU count")
        owners.extend([entry.job] * entry.gpus)
    if len(owners) > node.gpus:
        raise ValueError(
            f"usage[{node.name}]: {len(owners)} GPUs used but the node has {node.gpus}"
        )
    return owners + [None] * (node.gpus - len(owners))


def _group(nodes: Sequence[NodeCell]) -> dict[str, dict[str, dict[str, list[NodeCell]]]]:
    zones: dict[str, dict[str, dict[str, list[NodeCell]]]] = {}
    for node in nodes:
        zones.setdefault(node.zone, {}).setdefault(node.spine, {}).setdefault(node.leaf, []).append(
            node
        )
    return zones


def render(
    nodes: Sequence[NodeCell],
    usage: Mapping[str, Sequence[JobUsage]],
    jobs: Sequence[str],
    path: Path,
    title: str,
) -> Path:
    """Draw the picture to ``path`` (PNG) and return it.

    ``usage`` maps node names to what each job holds there; ``jobs`` orders the legend and fixes
    each job's colour. A job in ``usage`` but not in ``jobs`` is an error, as is a node in
    ``usage`` that is not in ``nodes``.
    """
    from PIL import Image, ImageDraw, ImageFont

    if not nodes:
        raise ValueError("nodes: nothing to draw")
    names = {node.name for node in nodes}
    for node_name, entries in usage.items():
        if node_name not in names:
            raise ValueError(f"usage[{node_name}]: no such node")
        for entry in entries:
            if entry.job not in jobs:
                raise ValueError(f"usage[{node_name}]: job {entry.job} is missing from jobs")
    colours = job_colours(jobs)
    zones = _group(nodes)
    columns, rows = gpu_grid(max(node.gpus for node in nodes))
    node_w = columns * (GPU_SIZE + GPU_GAP) + GPU_GAP
    node_h = rows * (GPU_SIZE + GPU_GAP) + GPU_GAP
    widest_leaf = max(
        len(leaf)
        for spines in zones.values()
        for leaves in spines.values()
        for leaf in leaves.values()
    )
    zone_w = LEAF_LABEL_WIDTH + widest_leaf * (node_w + NODE_GAP)
    zone_heights = [
        HEADER_HEIGHT
        + sum(
            HEADER_HEIGHT + len(leaves) * (node_h + ROW_GAP) + SPINE_GAP
            for leaves in spines.values()
        )
        for spines in zones.values()
    ]
    gpu_totals = {job: 0 for job in jobs}
    for entries in usage.values():
        for entry in entries:
            gpu_totals[entry.job] += entry.gpus
    legend_columns = 3
    legend_h = (math.ceil(len(jobs) / legend_columns) + 1) * LEGEND_ROW
    width = 2 * MARGIN + len(zones) * zone_w + (len(zones) - 1) * ZONE_GAP
    height = 2 * MARGIN + TITLE_HEIGHT + max(zone_heights) + legend_h

    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=12)
    small = ImageFont.load_default(size=10)
    draw.text((MARGIN, MARGIN), title, fill=TEXT_COLOUR, font=ImageFont.load_default(size=16))

    for zone_index, (zone, spines) in enumerate(zones.items()):
        x0 = MARGIN + zone_index * (zone_w + ZONE_GAP)
        y = MARGIN + TITLE_HEIGHT
        draw.text((x0, y), f"zone {zone}", fill=TEXT_COLOUR, font=font)
        y += HEADER_HEIGHT
        for spine, leaves in spines.items():
            draw.text((x0 + 8, y), f"spine {spine}", fill=TEXT_COLOUR, font=font)
            y += HEADER_HEIGHT
            for leaf, leaf_nodes in leaves.items():
                rdma = any(node.rdma for node in leaf_nodes)
                draw.text((x0 + 16, y), f"leaf {leaf}", fill=TEXT_COLOUR, font=small)
                if rdma:
                    draw.text((x0 + 108, y), "RDMA", fill=RDMA_COLOUR, font=small)
                for position, node in enumerate(leaf_nodes):
                    nx = x0 + LEAF_LABEL_WIDTH + position * (node_w + NODE_GAP)
                    draw.rectangle((nx, y, nx + node_w - 1, y + node_h - 1), outline=NODE_OUTLINE)
                    owners = gpu_owners(node, usage.get(node.name, ()))
                    for gpu, owner in enumerate(owners):
                        gx = nx + GPU_GAP + (gpu % columns) * (GPU_SIZE + GPU_GAP)
                        gy = y + GPU_GAP + (gpu // columns) * (GPU_SIZE + GPU_GAP)
                        colour = FREE_COLOUR if owner is None else colours[owner]
                        draw.rectangle((gx, gy, gx + GPU_SIZE - 1, gy + GPU_SIZE - 1), fill=colour)
                y += node_h + ROW_GAP
            y += SPINE_GAP

    legend_y = MARGIN + TITLE_HEIGHT + max(zone_heights)
    column_w = (width - 2 * MARGIN) // legend_columns
    legend = [(colours[job], f"{job} ({gpu_totals[job]} GPUs)") for job in jobs]
    legend.append((FREE_COLOUR, "free GPU"))
    for index, (colour, text) in enumerate(legend):
        lx = MARGIN + (index % legend_columns) * column_w
        ly = legend_y + (index // legend_columns) * LEGEND_ROW
        draw.rectangle((lx, ly + 2, lx + 10, ly + 12), fill=colour, outline=NODE_OUTLINE)
        draw.text((lx + 16, ly), text, fill=TEXT_COLOUR, font=font)

    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG")
    return path
