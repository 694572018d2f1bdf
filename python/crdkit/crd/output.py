"""CRDs → YAML text and files, deterministically, and drift checks against a folder.

Keys are sorted and long strings (CEL rules) never folded, so the same classes always give
byte-identical files, and a CI drift check compares text.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["crd_file_name", "drift", "render", "render_all", "write_all"]


def render(crd: dict[str, Any]) -> str:
    """One CRD as one YAML document (starting with ``---``)."""
    body = yaml.safe_dump(
        crd, sort_keys=True, default_flow_style=False, allow_unicode=True, width=1_000_000
    )
    return "---\n" + body


def render_all(crds: list[dict[str, Any]]) -> str:
    """Several CRDs as a multi-document YAML stream."""
    return "".join(render(crd) for crd in crds)


def crd_file_name(crd: dict[str, Any]) -> str:
    """``<group>_<plural>.yaml``, controller-gen's file naming."""
    spec = crd["spec"]
    return f"{spec['group']}_{spec['names']['plural']}.yaml"


def write_all(crds: list[dict[str, Any]], directory: Path) -> list[Path]:
    """Write each CRD to its own file in ``directory`` (created if missing); the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for crd in crds:
        path = directory / crd_file_name(crd)
        path.write_text(render(crd), encoding="utf-8")
        written.append(path)
    return written


def drift(crds: list[dict[str, Any]], directory: Path) -> str:
    """A unified diff of ``directory`` against what would be generated ('' when up to date)."""
    chunks: list[str] = []
    for crd in crds:
        path = directory / crd_file_name(crd)
        expected = render(crd)
        actual = path.read_text(encoding="utf-8") if path.is_file() else ""
        if actual != expected:
            chunks.extend(
                difflib.unified_diff(
                    actual.splitlines(keepends=True),
                    expected.splitlines(keepends=True),
                    fromfile=str(path) if actual else "/dev/null",
                    tofile=f"{path} (generated)",
                )
            )
    return "".join(chunks)
